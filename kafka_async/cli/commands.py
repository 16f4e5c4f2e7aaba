"""The ``kafka-async`` sub-commands. Each is ``async def cmd_x(args, out) -> exit code``.

Runtime failures are raised as exceptions and turned into one line on stderr by
``main.main``; argument problems raise :class:`~kafka_async.cli.parsing.UsageError` (exit 2).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Mapping, Sequence
from typing import IO, Any

import anyio

from ..admin import (
    AdminClient,
    AlterConfigOp,
    ConfigResource,
    NewPartitions,
    NewTopic,
    OffsetSpec,
)
from ..errors import (
    KafkaError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)
from ..structs import TopicPartition
from . import client_config
from .output import Output, Progress
from .parsing import (
    StartPosition,
    UsageError,
    compile_template,
    parse_header,
    parse_kv,
    parse_partitions,
    parse_rate,
    parse_start,
    record_json,
    split_key,
)

__all__ = [
    "cmd_bench_consume",
    "cmd_bench_produce",
    "cmd_broker",
    "cmd_consume",
    "cmd_groups_delete",
    "cmd_groups_describe",
    "cmd_groups_list",
    "cmd_groups_reset",
    "cmd_offsets",
    "cmd_produce",
    "cmd_topics_alter",
    "cmd_topics_create",
    "cmd_topics_delete",
    "cmd_topics_describe",
    "cmd_topics_list",
]

_DEFAULT_TIMEOUT_MS = 10_000
#: What Tansu answers to ListOffsets(latest) (the notes of the commands that use it).
_BENT_LATEST = (
    "its ListOffsets(latest) is the last batch's base offset + 1, not the partition's end"
)


def _bootstrap(args: argparse.Namespace) -> str:
    from .main import bootstrap_of

    return bootstrap_of(args)


def _timeout_ms(args: argparse.Namespace) -> int:
    t = getattr(args, "timeout", None)
    if t is None:
        return _DEFAULT_TIMEOUT_MS
    if t <= 0:
        raise UsageError(f"--timeout must be positive, got {t}")
    return max(1, int(t * 1000))


def _overrides(args: argparse.Namespace) -> client_config.ClientOverrides:
    """The settings of --command-config and -X (the file first; -X wins)."""
    parts = []
    path = getattr(args, "command_config", None)
    if path:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as exc:
            raise UsageError(f"--command-config: cannot read {path}: {exc.strerror}") from None
        parts.append(client_config.to_settings(client_config.parse_properties(text), source=path))
    assignments = getattr(args, "client_config", None) or []
    if assignments:
        parts.append(
            client_config.to_settings(client_config.from_assignments(assignments), source="-X")
        )
    merged = client_config.merge(*parts)
    for key in merged.ignored:
        print(f"kafka-async: ignoring {key}: not a setting this client uses", file=sys.stderr)
    return merged


def _client_settings(args: argparse.Namespace) -> dict[str, Any]:
    timeout_ms = _timeout_ms(args)
    settings: dict[str, Any] = {
        "client_id": "kafka-async-cli",
        # A CLI should fail fast on an unreachable broker rather than wait out long defaults.
        "request_timeout_ms": min(timeout_ms, 30_000),
        "connect_timeout_ms": min(timeout_ms, 10_000),
    }
    settings.update(_overrides(args).settings)
    # -b (or $KAFKA_BOOTSTRAP_SERVERS) wins over bootstrap.servers of the file.
    if getattr(args, "bootstrap_servers", None) or "bootstrap_servers" not in settings:
        settings["bootstrap_servers"] = _bootstrap(args)
    return settings


@contextlib.asynccontextmanager
async def open_admin(args: argparse.Namespace) -> AsyncIterator[AdminClient]:
    """An admin client on the command line's connection settings, closed on exit."""
    async with AdminClient(
        default_api_timeout_ms=_timeout_ms(args), **_client_settings(args)
    ) as admin:
        yield admin


def _missing_topic(topic: str) -> UnknownTopicOrPartitionError:
    return UnknownTopicOrPartitionError(f"topic '{topic}' does not exist")


async def partitions_of(admin: AdminClient, topic: str) -> list[int]:
    """The partition ids of ``topic``; a missing topic is the usual one-line error."""
    desc = (await admin.describe_topics([topic]))[topic]
    if isinstance(desc.error, UnknownTopicOrPartitionError):
        raise _missing_topic(topic)
    if desc.error is not None:
        raise desc.error
    return [p.partition for p in desc.partitions]


def selected_partitions(available: Sequence[int], wanted: str | None, topic: str) -> list[int]:
    """The partitions a ``--partitions`` value names (all of ``available`` for None); one
    that ``topic`` lacks is an error."""
    if wanted is None:
        return list(available)
    chosen = parse_partitions(wanted)
    missing = [p for p in chosen if p not in available]
    if missing:
        raise UnknownTopicOrPartitionError(
            f"topic '{topic}' has no partition {', '.join(map(str, missing))} "
            f"(it has {len(available)})"
        )
    return chosen


def _configs(pairs: Sequence[str]) -> dict[str, str]:
    return dict(parse_kv(p) for p in pairs)


#: Tansu's default cluster id (``kafka-async broker`` and ``EmbeddedBroker`` keep it).
_TANSU_CLUSTER_ID = "tansu_cluster"


#: LeaderAndIsr: an Apache Kafka broker in ZooKeeper mode advertises it in ApiVersions (its
#: controller sends it to brokers); KRaft brokers and Tansu do not.
_LEADER_AND_ISR = 4


def broker_is_tansu(
    cluster_id: str | None,
    supported_features: Mapping[str, Any],
    api_keys: Collection[int] = (),
) -> bool:
    """Whether a broker's own answers say it is Tansu: its default cluster id, or neither
    mark of Apache Kafka in ApiVersions: every KRaft Apache Kafka supports features
    (``metadata.version``), and one in ZooKeeper mode, which may report no feature at all,
    advertises LeaderAndIsr (``api_keys``: the keys the broker advertised)."""
    if (cluster_id or "").startswith("tansu"):
        return True
    return not supported_features and _LEADER_AND_ISR not in api_keys


async def note_if_tansu(admin: AdminClient, out: Output, what: str) -> None:
    """Print one note on stderr when the broker is Tansu, whose answer ``what`` is bent.

    Detection asks the broker (DescribeCluster, ApiVersions); a failure to ask says nothing.
    """
    try:
        cluster = await admin.describe_cluster()
        features = await admin.describe_features()
        connection = await admin.router.cluster.connection(features.broker)
    except KafkaError:
        return
    if broker_is_tansu(cluster.cluster_id, features.supported, connection.api_versions):
        out.info(
            f"note: this broker is Tansu (cluster id {cluster.cluster_id!r}): {what}; "
            "Apache Kafka answers truly (kafka-async broker runs it where Java 17+ is found)"
        )


# --------------------------------------------------------------------------------------------
# broker
# --------------------------------------------------------------------------------------------


#: The port ``kafka-async broker`` listens on when it is free (what every README snippet
#: bootstraps from: localhost:9092).
DEFAULT_BROKER_PORT = 9092


def _port_is_free(host: str, port: int) -> bool:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        # As a listener binds: a closed connection in TIME_WAIT does not make it busy.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def _broker_port(args: argparse.Namespace, host: str) -> tuple[int | None, str | None]:
    """The port to listen on and, when 9092 was taken, the line that says so."""
    if args.port is not None:
        return args.port, None
    if _port_is_free(host, DEFAULT_BROKER_PORT):
        return DEFAULT_BROKER_PORT, None
    return None, f"port {DEFAULT_BROKER_PORT} is in use on {host}; listening on a free port instead"


async def cmd_broker(args: argparse.Namespace, out: Output) -> int:
    """Run a development broker until SIGINT/SIGTERM: Apache Kafka when a Java 17+ is found
    (or with ``--kind apache``), else the embedded Tansu, which says what answers it bends.

    The first line on stdout is the bootstrap servers (for scripts); the first line on stderr
    names the broker's kind, version and address; for Tansu the next one says which answers
    it bends. Imports nothing of pytest (a user's ``[broker]`` install has none).
    """
    from ..testing.apache import choose_broker_kind

    if args.port is not None and not 0 < args.port < 65536:
        raise UsageError(f"--port must be 1-65535, got {args.port}")
    kind = args.kind
    fallback: str | None = None
    if kind == "auto":
        if args.durable:
            kind = "tansu"  # durable storage (S3) is Tansu's
        elif args.nodes != 1 or args.kafka_version or args.security:
            kind = "apache"
        else:
            kind, fallback = await anyio.to_thread.run_sync(choose_broker_kind)
    if kind == "apache":
        return await _run_apache(args, out)
    if args.nodes != 1 or args.kafka_version or args.security:
        raise UsageError("--nodes, --kafka-version and --security need --kind apache")
    from ..testing.broker import TANSU_BENDS, EmbeddedBroker, tansu_version

    port, moved = _broker_port(args, args.host)
    broker = EmbeddedBroker(port=port, host=args.host, durable=args.durable)

    async def describe() -> str:
        mode = "durable (S3)" if args.durable else "in-memory"
        version = await anyio.to_thread.run_sync(tansu_version)
        why = "no Java 17+ for Apache Kafka, so " if fallback else ""
        lines = [
            f"Tansu {version}, {mode}, listening on {broker.bootstrap_servers} "
            f"(pid {broker.pid}); Ctrl-C to stop",
            f"{why}{TANSU_BENDS}",
        ]
        if moved:
            lines.append(moved)
        return "\n".join(lines)

    await _serve(broker, describe, out)
    return 0


async def _run_apache(args: argparse.Namespace, out: Output) -> int:
    from ..testing.apache import ApacheKafka, KafkaPrerequisiteError, cache_root, is_fetched

    if args.durable:
        raise UsageError("--durable is Tansu's; Apache Kafka always keeps its log on disk")
    if args.host != "127.0.0.1":
        raise UsageError("Apache Kafka listens on 127.0.0.1 only here")
    if args.nodes < 1:
        raise UsageError(f"--nodes must be >= 1, got {args.nodes}")
    port, moved = _broker_port(args, "127.0.0.1")
    kafka = ApacheKafka(
        nodes=args.nodes, version=args.kafka_version, security=args.security, port=port
    )
    # At a terminal the first run would otherwise sit silent while the jars download (about
    # 25 s); scripts reading stderr keep "kind, version, address" as its first line.
    if out.err.isatty() and not is_fetched(kafka.version, cache_dir=kafka.cache_dir):
        out.info(
            f"fetching Apache Kafka {kafka.version} from Maven Central into "
            f"{kafka.cache_dir or cache_root()} (first run only, about 60 MB)..."
        )

    async def describe() -> str:
        pids = ", ".join(str(kafka.pid(i)) for i in kafka.node_ids)
        plural = "s" if args.nodes > 1 else ""
        shape = (
            f"KRaft, {args.nodes} combined node{plural}"
            if kafka.mode == "kraft"
            else f"ZooKeeper mode, {args.nodes} broker{plural} and 1 ZooKeeper"
        )
        lines = [
            f"Apache Kafka {kafka.version} ({shape}) listening on {kafka.bootstrap_servers} "
            f"(pid {pids}); Ctrl-C to stop"
        ]
        if moved:
            lines.append(moved)
        if args.security:
            assert kafka.tls is not None
            lines += [f"  {name}: {kafka.bootstrap(name)}" for name in kafka.listeners]
            lines.append(f"  CA certificate: {kafka.tls.ca}")
            lines.append(
                f"  client certificate: {kafka.tls.client_cert} key {kafka.tls.client_key}"
            )
            lines.append("  SASL users: admin/admin-secret, alice/alice-secret, bob/bob-secret")
        return "\n".join(lines)

    try:
        await _serve(kafka, describe, out)
    except KafkaPrerequisiteError as exc:
        out.error(str(exc))
        return 1
    return 0


async def _serve(broker: Any, describe: Callable[[], Awaitable[str]], out: Output) -> None:
    """Start ``broker``, print where it listens, wait for Ctrl-C, stop it (shielded)."""
    import signal

    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        await broker.astart()
        try:
            out.line(broker.bootstrap_servers)
            out.flush()
            out.info(await describe())
            async for _ in signals:
                break
        finally:
            with anyio.CancelScope(shield=True):
                await broker.astop()
    out.info("broker stopped")


# --------------------------------------------------------------------------------------------
# topics
# --------------------------------------------------------------------------------------------


async def cmd_topics_list(args: argparse.Namespace, out: Output) -> int:
    async with open_admin(args) as admin:
        topics = await admin.list_topics(include_internal=args.internal)
    if out.rich and out.colour:
        out.table(["TOPIC", "PARTITIONS"], [(t.name, t.num_partitions) for t in topics.values()])
    else:
        for name in topics:
            out.line(name)
    return 0


async def cmd_topics_describe(args: argparse.Namespace, out: Output) -> int:
    async with open_admin(args) as admin:
        descs = await admin.describe_topics(args.topics or None)
        missing = [n for n, d in descs.items() if isinstance(d.error, UnknownTopicOrPartitionError)]
        if missing:
            raise _missing_topic(missing[0])
        descs.raise_first()
        configs: dict[str, Mapping[str, Any]] = {}
        if args.configs and descs:
            res = await admin.describe_configs([ConfigResource.topic(n) for n in descs])
            for r, d in res.items():
                if d.error is None:
                    configs[r.name] = {k: e.value for k, e in d.entries.items() if not e.is_default}
    for name, td in descs.items():
        out.line(
            f"Topic: {name}  id: {td.topic_id or '-'}  partitions: {len(td.partitions)}"
            + (f"  replication: {len(td.partitions[0].replicas)}" if td.partitions else "")
        )
        if configs.get(name):
            out.line(
                "  configs: " + ", ".join(f"{k}={v}" for k, v in sorted(configs[name].items()))
            )
        out.table(
            ["PARTITION", "LEADER", "EPOCH", "REPLICAS", "ISR"],
            [
                (
                    p.partition,
                    p.leader,
                    p.leader_epoch,
                    ",".join(map(str, p.replicas)),
                    ",".join(map(str, p.isr)),
                )
                for p in td.partitions
            ],
        )
    return 0


async def cmd_topics_create(args: argparse.Namespace, out: Output) -> int:
    configs = _configs(args.config)
    try:
        new = [
            NewTopic(
                t,
                num_partitions=args.partitions,
                replication_factor=args.replication_factor,
                config=configs,
            )
            for t in args.topics
        ]
    except KafkaError as exc:  # ConfigError: a bad name or count is a usage problem
        raise UsageError(str(exc)) from None
    async with open_admin(args) as admin:
        results = await admin.create_topics(new)
    failed = 0
    for name, r in results.items():
        if r.error is None:
            out.success(f"created topic {name}")
        elif isinstance(r.error, TopicAlreadyExistsError) and args.if_not_exists:
            out.info(f"topic {name} already exists")
        else:
            failed += 1
            out.error(f"topic {name}: {r.error}")
    return 1 if failed else 0


async def cmd_topics_delete(args: argparse.Namespace, out: Output) -> int:
    async with open_admin(args) as admin:
        results = await admin.delete_topics(args.topics)
    failed = 0
    for name, r in results.items():
        if r.error is None:
            out.success(f"deleted topic {name}")
        elif isinstance(r.error, UnknownTopicOrPartitionError):
            if args.if_exists:
                out.info(f"topic {name} does not exist")
            else:
                failed += 1
                out.error(f"topic '{name}' does not exist")
        else:
            failed += 1
            out.error(f"topic {name}: {r.error}")
    return 1 if failed else 0


async def cmd_topics_alter(args: argparse.Namespace, out: Output) -> int:
    sets = _configs(args.config)
    if args.partitions is None and not sets and not args.delete_config:
        raise UsageError("nothing to change: give --partitions, --config or --delete-config")
    if args.partitions is not None and args.partitions < 1:
        raise UsageError("--partitions must be >= 1")
    async with open_admin(args) as admin:
        current = await partitions_of(admin, args.topic)
        if args.partitions is not None:
            if args.partitions < len(current):
                raise UsageError(
                    f"topic '{args.topic}' has {len(current)} partitions; Kafka cannot reduce "
                    "the count"
                )
            if args.partitions > len(current):
                res = await admin.create_partitions({args.topic: NewPartitions(args.partitions)})
                res.raise_first()
                out.success(f"topic {args.topic}: {len(current)} -> {args.partitions} partitions")
        if sets or args.delete_config:
            ops = [AlterConfigOp.set(k, v) for k, v in sets.items()] + [
                AlterConfigOp.delete(k) for k in args.delete_config
            ]
            res2 = await admin.incremental_alter_configs({ConfigResource.topic(args.topic): ops})
            res2.raise_first()
            out.success(f"topic {args.topic}: configs updated")
    return 0


# --------------------------------------------------------------------------------------------
# offsets
# --------------------------------------------------------------------------------------------


async def _earliest_latest(
    admin: AdminClient, tps: Sequence[TopicPartition]
) -> tuple[dict[TopicPartition, int], dict[TopicPartition, int]]:
    async with anyio.create_task_group() as tg:
        found: dict[str, Any] = {}

        async def get(kind: str) -> None:
            spec = OffsetSpec.earliest() if kind == "earliest" else OffsetSpec.latest()
            found[kind] = await admin.list_offsets(dict.fromkeys(tps, spec), raise_on_error=True)

        tg.start_soon(get, "earliest")
        tg.start_soon(get, "latest")
    return (
        {tp: r.offset for tp, r in found["earliest"].items()},
        {tp: r.offset for tp, r in found["latest"].items()},
    )


async def cmd_offsets(args: argparse.Namespace, out: Output) -> int:
    async with open_admin(args) as admin:
        parts = await partitions_of(admin, args.topic)
        tps = [TopicPartition(args.topic, p) for p in parts]
        earliest, latest = await _earliest_latest(admin, tps)
        await note_if_tansu(admin, out, _BENT_LATEST)
    rows = [(tp.partition, earliest[tp], latest[tp], latest[tp] - earliest[tp]) for tp in tps]
    out.table(["PARTITION", "EARLIEST", "LATEST", "RECORDS"], rows)
    return 0


# --------------------------------------------------------------------------------------------
# groups
# --------------------------------------------------------------------------------------------


async def cmd_groups_list(args: argparse.Namespace, out: Output) -> int:
    async with open_admin(args) as admin:
        groups = await admin.list_groups(states=args.state or None, types=args.type or None)
    if out.rich and out.colour:
        out.table(
            ["GROUP", "TYPE", "STATE", "PROTOCOL TYPE"],
            [(g.group_id, g.type or "-", g.state or "", g.protocol_type) for g in groups],
        )
    else:
        for g in groups:
            out.line(g.group_id)
    return 0


async def cmd_groups_describe(args: argparse.Namespace, out: Output) -> int:
    async with open_admin(args) as admin:
        # Either protocol: ConsumerGroupDescribe for consumer groups (KIP-848), DescribeGroups
        # for classic ones.
        descs = await admin.describe_consumer_groups(args.groups)
        descs.raise_first()
        await note_if_tansu(admin, out, f"LAG comes from ListOffsets(latest), and {_BENT_LATEST}")
        for gid, d in descs.items():
            offsets = await admin.list_consumer_group_offsets(gid)
            committed = {tp: o.offset for tp, o in offsets.items() if o.error is None}
            latest: dict[TopicPartition, int] = {}
            if committed:
                res = await admin.list_offsets({tp: OffsetSpec.latest() for tp in committed})
                latest = {tp: r.offset for tp, r in res.items() if r.error is None}
            owner = {tp: m.member_id for m in d.members for tp in m.assignment}
            modern = d.group_type == "consumer"
            epoch = f"  epoch: {d.group_epoch}" if modern else ""
            out.line(
                f"Group: {gid}  type: {d.group_type or '-'}  state: {d.state or '-'}  "
                f"assignor: {d.assignor or '-'}{epoch}  members: {len(d.members)}  "
                f"coordinator: {d.coordinator}"
            )
            if d.members:

                def parts(tps: Sequence[TopicPartition]) -> str:
                    return ",".join(f"{tp.topic}[{tp.partition}]" for tp in tps) or "-"

                head = ["MEMBER", "INSTANCE", "CLIENT ID", "HOST", "PARTITIONS"]
                if modern:
                    head += ["EPOCH", "TYPE", "TARGET"]
                rows = []
                for mem in d.members:
                    row: list[object] = [
                        mem.member_id,
                        mem.group_instance_id or "-",
                        mem.client_id or "-",
                        mem.client_host or "-",
                        parts(mem.assignment),
                    ]
                    if modern:
                        row += [
                            mem.member_epoch,
                            mem.member_type or "-",
                            parts(mem.target_assignment),
                        ]
                    rows.append(tuple(row))
                out.table(head, rows)
            tps = sorted(set(committed) | set(owner))
            out.table(
                ["TOPIC", "PARTITION", "COMMITTED", "LATEST", "LAG", "MEMBER"],
                [
                    (
                        tp.topic,
                        tp.partition,
                        committed.get(tp, "-"),
                        latest.get(tp, "-"),
                        (
                            max(0, latest[tp] - committed[tp])
                            if tp in latest and committed.get(tp, -1) >= 0
                            else "-"
                        ),
                        owner.get(tp, "-"),
                    )
                    for tp in tps
                ],
            )
    return 0


async def cmd_groups_delete(args: argparse.Namespace, out: Output) -> int:
    async with open_admin(args) as admin:
        results = await admin.delete_groups(args.groups)
    failed = 0
    for gid, r in results.items():
        if r.error is None:
            out.success(f"deleted group {gid}")
        else:
            failed += 1
            out.error(f"group {gid}: {r.error}")
    return 1 if failed else 0


async def resolve_positions(
    admin: AdminClient, tps: Sequence[TopicPartition], start: StartPosition
) -> dict[TopicPartition, int]:
    """Absolute offsets for ``start`` on each partition (clamped to the log's range)."""
    earliest, latest = await _earliest_latest(admin, tps)
    if start.kind == "beginning":
        return dict(earliest)
    if start.kind == "end":
        return dict(latest)
    if start.kind == "offset":
        # Not clamped to the end: ListOffsets' end can lag behind (see _EndTracker), and
        # an offset past the real end is handled by the consumer's offset reset.
        return {tp: max(start.value, earliest[tp]) for tp in tps}
    if start.kind == "relative":
        return {tp: max(earliest[tp], latest[tp] - start.value) for tp in tps}
    if start.kind == "timestamp":
        res = await admin.list_offsets(
            {tp: OffsetSpec.for_timestamp(start.value) for tp in tps}, raise_on_error=True
        )
        # No record at or after the timestamp: start at the end.
        return {tp: (r.offset if r.offset >= 0 else latest[tp]) for tp, r in res.items()}
    raise UsageError(f"--from {start.kind} is not possible here")


async def cmd_groups_reset(args: argparse.Namespace, out: Output) -> int:
    start = parse_start(args.to)
    if start.kind == "stored":
        raise UsageError("--to stored makes no sense for a reset")
    async with open_admin(args) as admin:
        parts = selected_partitions(
            await partitions_of(admin, args.topic), args.partitions, args.topic
        )
        tps = [TopicPartition(args.topic, p) for p in parts]
        targets = await resolve_positions(admin, tps, start)
        if start.kind in ("end", "relative"):
            await note_if_tansu(admin, out, f"targets come from ListOffsets, and {_BENT_LATEST}")
        current = await admin.list_consumer_group_offsets(args.group, tps)
        out.table(
            ["TOPIC", "PARTITION", "CURRENT", "NEW"],
            [
                (tp.topic, tp.partition, current[tp].offset if tp in current else -1, targets[tp])
                for tp in tps
            ],
        )
        if not args.execute:
            out.info("dry run: add --execute to apply")
            return 0
        res = await admin.alter_consumer_group_offsets(args.group, targets)
    failed = {tp: r.error for tp, r in res.items() if r.error is not None}
    for tp, err in failed.items():
        out.error(f"{tp.topic}[{tp.partition}]: {err}")
    if not failed:
        out.success(f"group {args.group}: offsets reset on {len(targets)} partition(s)")
    return 1 if failed else 0


# --------------------------------------------------------------------------------------------
# produce
# --------------------------------------------------------------------------------------------


class _FdReader:
    """Reads a file descriptor (stdin, or ``--file``) in a daemon thread with ``os.read``.

    A read of stdin blocks until the person at the terminal presses Enter, or forever on a
    pipe left open, and that must not hold up Ctrl-C. An anyio worker thread cannot be left
    behind (the interpreter joins it at exit: the command hangs until Enter), and a daemon
    thread blocked inside ``sys.stdin.buffer`` holds the buffer's lock, which kills the
    interpreter at exit (``Fatal Python error: _enter_buffered_busy``, exit 134). A daemon
    thread in ``read(2)`` holds no Python lock and simply ends with the process. Chunks reach
    the event loop through a blocking portal; an empty chunk is the end of the input.
    """

    def __init__(self, fd: int, portal: anyio.from_thread.BlockingPortal) -> None:
        self._fd = fd
        self._portal = portal
        self._send, self._receive = anyio.create_memory_object_stream[bytes | OSError](1)

    def start(self) -> None:
        import threading

        threading.Thread(target=self._pump, name="kafka-async input", daemon=True).start()

    def _pump(self) -> None:
        import os

        while True:
            item: bytes | OSError
            try:
                item = os.read(self._fd, 1 << 16)
            except OSError as exc:
                item = exc
            try:
                self._portal.call(self._send.send, item)
            except Exception:  # the portal stopped: the command is over, nobody reads
                return
            if not isinstance(item, bytes) or not item:
                return

    async def read(self) -> bytes:
        """The next chunk; ``b""`` at the end of the input."""
        item = await self._receive.receive()
        if isinstance(item, OSError):
            raise item
        return item


async def _read_lines(
    read: Callable[[], Awaitable[bytes]], on_bytes: Callable[[int], None] | None = None
) -> AsyncIterator[list[bytes]]:
    """Yield batches of lines (without the newline); ``read`` gives chunks, ``b""`` at the
    end. A fast input costs one hop from the reading thread per 64 KiB."""
    pending = b""
    while True:
        chunk = await read()
        if not chunk:
            break
        if on_bytes is not None:
            on_bytes(len(chunk))
        data = pending + chunk
        lines = data.split(b"\n")
        pending = lines.pop()
        if lines:
            yield lines
    if pending:
        yield [pending]


def _producer_settings(args: argparse.Namespace, **extra: Any) -> dict[str, Any]:
    settings = _client_settings(args)
    settings.update(extra)
    return settings


async def cmd_produce(args: argparse.Namespace, out: Output) -> int:
    """Send lines of stdin (or ``--file``) as records.

    Ctrl-C (or SIGTERM) stops reading at once: the records already read (complete lines) are
    still sent and acknowledged, within ``--timeout``, then the command exits 130 (143 for
    SIGTERM); a line not ended by Enter is dropped. A second Ctrl-C drops the unsent records
    too and exits at once.
    """
    from ..producer import Producer

    headers = [parse_header(h) for h in args.header]
    separator = args.key_separator.encode() if args.key_separator else None
    if args.key_separator == "":
        raise UsageError("--key-separator must not be empty")
    rate = parse_rate(args.rate) if args.rate is not None else None
    if args.partition is not None and args.partition < 0:
        raise UsageError("--partition must be >= 0")
    if args.partition is not None:
        # Only an explicit partition is checked up front; a missing topic is the broker's
        # to create (auto.create.topics.enable) or refuse, as for kcat and the Java producer.
        async with open_admin(args) as admin:
            desc = (await admin.describe_topics([args.topic]))[args.topic]
        if desc.error is None and args.partition not in [p.partition for p in desc.partitions]:
            raise UnknownTopicOrPartitionError(
                f"topic '{args.topic}' has no partition {args.partition} "
                f"(it has {len(desc.partitions)})"
            )
    acks: int | str = "all" if args.acks == "all" else int(args.acks)
    # Opened before the event loop reads it; reads happen in a daemon thread (_FdReader).
    stream: IO[bytes] = open(args.file, "rb") if args.file else sys.stdin.buffer  # noqa: ASYNC230, SIM115
    sent = 0
    stopped: int | None = None
    settled = True  # False when records read were dropped unacknowledged
    started = time.perf_counter()
    try:
        async with anyio.from_thread.BlockingPortal() as portal:
            reader = _FdReader(stream.fileno(), portal)
            reader.start()
            try:
                async with Producer(
                    **_producer_settings(
                        args,
                        acks=acks,
                        compression_type=None if args.compression == "none" else args.compression,
                        linger_ms=args.linger_ms,
                    )
                ) as producer:
                    pending: list[Any] = []

                    async def send_all() -> None:
                        nonlocal sent
                        # A bar (by bytes read) only for files: stdin may be a person typing.
                        total = (await anyio.Path(args.file).stat()).st_size if args.file else None
                        bar_cm: contextlib.AbstractContextManager[Progress] = (
                            out.progress("producing", total)
                            if args.file
                            else contextlib.nullcontext(Progress())
                        )
                        with bar_cm as bar:
                            async for lines in _read_lines(reader.read, bar.advance):
                                for line in lines:
                                    if line.endswith(b"\r"):
                                        line = line[:-1]
                                    key, value = split_key(line, separator)
                                    delivery = await producer.enqueue(
                                        args.topic,
                                        value=value,
                                        key=key,
                                        partition=args.partition,
                                        headers=list(headers),
                                    )
                                    sent += 1
                                    if rate is not None:
                                        # Trickle mode: each record is acknowledged before the
                                        # next is sent, so records never share a batch and the
                                        # rate is exact (an upper bound when the broker's round
                                        # trip is slower). flush() skips the linger wait.
                                        await producer.flush()
                                        await delivery
                                        delay = started + sent / rate - time.perf_counter()
                                        if delay > 0:
                                            await anyio.sleep(delay)
                                        continue
                                    pending.append(delivery)
                                    if len(pending) >= 10_000:
                                        for d in pending:
                                            await d
                                        pending.clear()

                    async def settle() -> None:
                        await producer.flush()
                        for d in pending:
                            await d

                    stopped = await _until_signal(send_all)
                    if stopped is None:
                        await settle()
                    else:
                        out.info(
                            f"interrupted: sending the {sent} record(s) read so far "
                            "(Ctrl-C again to drop them)"
                        )
                        with anyio.move_on_after(_timeout_ms(args) / 1000):
                            settled = await _until_signal(settle) is None
                        if not settled:
                            # A second Ctrl-C, or the deadline: stop without waiting.
                            await producer.close(timeout=0)
            finally:
                # The reading thread may be waiting to hand over a chunk nobody will read.
                await portal.stop(cancel_remaining=True)
    finally:
        if args.file:
            stream.close()
    elapsed = time.perf_counter() - started
    if settled:
        out.info(f"produced {sent} record(s) to {args.topic} in {elapsed:.2f} s")
    else:
        out.info(f"read {sent} record(s); those not yet acknowledged were dropped")
    return 0 if stopped is None else 128 + stopped


# --------------------------------------------------------------------------------------------
# consume
# --------------------------------------------------------------------------------------------


class _Printer:
    """Writes records in the chosen format; value-only output keeps bytes exact."""

    def __init__(self, args: argparse.Namespace, out: Output) -> None:
        self.out = out
        self.json = bool(args.json)
        self.template = compile_template(args.format) if args.format is not None else None
        self.binary = getattr(out.out, "buffer", None) if not (self.json or self.template) else None

    def __call__(self, r: Any) -> None:
        if self.json:
            self.out.line(
                record_json(
                    topic=r.topic,
                    partition=r.partition,
                    offset=r.offset,
                    timestamp=r.timestamp,
                    timestamp_type=r.timestamp_type,
                    key=r.key,
                    value=r.value,
                    headers=r.headers,
                )
            )
        elif self.template is not None:
            self.out.write_raw(
                self.template.format_map(
                    {
                        "topic": r.topic,
                        "partition": r.partition,
                        "offset": r.offset,
                        "timestamp": r.timestamp,
                        "timestamp_type": r.timestamp_type,
                        "key": _text(r.key),
                        "value": _text(r.value),
                        "headers": ",".join(f"{k}={_text(v)}" for k, v in r.headers),
                        "key_size": len(r.key) if r.key is not None else -1,
                        "value_size": len(r.value) if r.value is not None else -1,
                    }
                )
                + ("" if self.template.endswith("\n") else "\n")
            )
        elif self.binary is not None:
            self.out.out.flush()
            self.binary.write((r.value or b"") + b"\n")
        else:
            self.out.line(_text(r.value))

    def flush(self) -> None:
        if self.binary is not None:
            self.binary.flush()
        self.out.flush()


def _text(data: bytes | None) -> str:
    return "" if data is None else data.decode("utf-8", errors="replace")


async def _until_signal(body: Callable[[], Awaitable[None]]) -> int | None:
    """Run ``body`` until it returns or SIGINT/SIGTERM arrives; the signal's number if one
    stopped it (the command then exits 128 + that number: 130 for Ctrl-C)."""
    import signal

    stopped: int | None = None
    async with anyio.create_task_group() as tg:

        async def watch() -> None:
            nonlocal stopped
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for signum in signals:
                    stopped = int(signum)
                    tg.cancel_scope.cancel()
                    return

        async def run_body() -> None:
            await body()
            tg.cancel_scope.cancel()

        tg.start_soon(watch)
        tg.start_soon(run_body)
    return stopped


class _EndTracker:
    """Decides when ``--exit-at-end`` is reached: every assigned partition's position is at
    its high watermark.

    The high watermark comes from the consumer's own Fetch responses when it has one
    (exact), else from the ListOffsets taken at start. The fallback only counts after a
    grace period, because some brokers (Tansu) report the end of a partition as the last
    batch's base offset + 1 in ListOffsets, which would stop the command early.
    """

    GRACE = 3.0

    def __init__(self, consumer: Any, ends: Mapping[TopicPartition, int]) -> None:
        self.consumer = consumer
        self.ends = ends
        self.started = anyio.current_time()

    async def reached(self) -> bool:
        assigned = self.consumer.assignment()
        if not assigned:
            return False
        grace_over = anyio.current_time() - self.started >= self.GRACE
        for tp in assigned:
            end = self.consumer.highwater(tp)
            if end is None:
                if not grace_over or tp not in self.ends:
                    return False
                end = self.ends[tp]
            try:
                position = await self.consumer.position(tp, timeout_ms=1)
            except KafkaError:
                return False
            if position < end:
                return False
        return True


async def cmd_consume(args: argparse.Namespace, out: Output) -> int:
    from ..consumer import Consumer

    if args.count is not None and args.count < 1:
        raise UsageError("--count must be >= 1")
    printer = _Printer(args, out)
    group = args.group
    start = parse_start(args.start) if args.start else None
    if (
        group is not None
        and args.partitions is None
        and start is not None
        and start.kind not in ("beginning", "end", "stored")
    ):
        raise UsageError(
            "with --group (subscribe mode) --from takes beginning, end or stored; "
            "use --partitions to start at an offset or time"
        )
    async with open_admin(args) as admin:
        parts = selected_partitions(
            await partitions_of(admin, args.topic), args.partitions, args.topic
        )
        tps = [TopicPartition(args.topic, p) for p in parts]
        subscribe = group is not None and args.partitions is None
        positions: dict[TopicPartition, int] = {}
        if not subscribe:
            eff = start or StartPosition("stored" if group else "beginning")
            if eff.kind == "stored":
                committed = await admin.list_consumer_group_offsets(group, tps) if group else {}
                fallback = await resolve_positions(admin, tps, StartPosition("beginning"))
                positions = {
                    tp: (
                        committed[tp].offset
                        if tp in committed and committed[tp].offset >= 0
                        else fallback[tp]
                    )
                    for tp in tps
                }
            else:
                positions = await resolve_positions(admin, tps, eff)
        ends: dict[TopicPartition, int] = {}
        if args.exit_at_end:
            _, ends = await _earliest_latest(admin, tps)
        bent = []
        if args.exit_at_end or (start is not None and start.kind in ("end", "relative")):
            bent.append(_BENT_LATEST)
        if subscribe:
            bent.append("a new group waits 5 s for its first assignment")
        if bent:
            await note_if_tansu(admin, out, "; ".join(bent))

    settings = _client_settings(args)
    reset = "latest" if start is not None and start.kind == "end" else "earliest"
    consumer_kw: dict[str, Any] = {"auto_offset_reset": reset}
    if group is not None:
        consumer_kw.update(group_id=group, enable_auto_commit=True)
    else:
        consumer_kw.update(enable_auto_commit=False)
    topics = (args.topic,) if subscribe else ()
    seen = 0
    consumer: Consumer[bytes, bytes] = Consumer(*topics, **settings, **consumer_kw)
    async with consumer:
        if not subscribe:
            consumer.assign(tps)
            for tp, off in positions.items():
                consumer.seek(tp, off)
        at_end = _EndTracker(consumer, ends) if args.exit_at_end else None

        async def loop() -> None:
            nonlocal seen
            last_record = anyio.current_time()
            while True:
                want = None if args.count is None else args.count - seen
                # max_records never exceeds what --count still allows, so the consumed
                # (and auto-committed) position is exactly what was printed.
                batch = await consumer.getmany(
                    timeout_ms=200, max_records=min(want, 10_000) if want else 10_000
                )
                for records in batch.values():
                    for r in records:
                        printer(r)
                    seen += len(records)
                printer.flush()
                if args.count is not None and seen >= args.count:
                    return
                if batch:
                    last_record = anyio.current_time()
                elif (
                    args.idle_timeout is not None
                    and anyio.current_time() - last_record >= args.idle_timeout
                ):
                    return
                if at_end is not None and await at_end.reached():
                    return

        # Ctrl-C (or SIGTERM) ends an open-ended consume at once: stop reading, commit
        # what was printed, leave the group, exit 130 (143 for SIGTERM).
        stopped = await _until_signal(loop)
        if group is not None:
            with contextlib.suppress(KafkaError):
                await consumer.commit()
    printer.flush()
    out.info(f"consumed {seen} record(s)")
    return 0 if stopped is None else 128 + stopped


# --------------------------------------------------------------------------------------------
# bench
# --------------------------------------------------------------------------------------------


def _rate_line(what: str, n: int, nbytes: int, seconds: float) -> str:
    seconds = max(seconds, 1e-9)
    return (
        f"{what}: {n} records in {seconds:.2f} s = {n / seconds:,.0f} records/s, "
        f"{nbytes / seconds / 1e6:.1f} MB/s"
    )


async def cmd_bench_produce(args: argparse.Namespace, out: Output) -> int:
    from ..producer import Producer

    if args.count < 1 or args.size < 0 or args.partitions < 1:
        raise UsageError("--count and --partitions must be >= 1, --size >= 0")
    async with open_admin(args) as admin:
        res = await admin.create_topics(
            [NewTopic(args.topic, num_partitions=args.partitions, replication_factor=1)]
        )
        err = res[args.topic].error
        if err is not None and not isinstance(err, TopicAlreadyExistsError):
            raise err
    value = b"x" * args.size
    started = time.perf_counter()
    async with Producer(
        **_producer_settings(
            args,
            compression_type=None if args.compression == "none" else args.compression,
            linger_ms=args.linger_ms,
        )
    ) as producer:
        pending: list[Any] = []
        with out.progress("producing", args.count) as bar:
            for _ in range(args.count):
                pending.append(await producer.enqueue(args.topic, value=value))
                if len(pending) >= 10_000:
                    for d in pending:
                        await d
                    bar.advance(len(pending))
                    pending.clear()
            for d in pending:
                await d
            bar.advance(len(pending))
            await producer.flush()
    elapsed = time.perf_counter() - started
    out.line(_rate_line("produce", args.count, args.count * args.size, elapsed))
    return 0


async def cmd_bench_consume(args: argparse.Namespace, out: Output) -> int:
    from ..consumer import Consumer

    if args.count < 1:
        raise UsageError("--count must be >= 1")
    async with open_admin(args) as admin:
        parts = await partitions_of(admin, args.topic)
    tps = [TopicPartition(args.topic, p) for p in parts]
    seen = 0
    nbytes = 0
    consumer: Consumer[bytes, bytes] = Consumer(
        **_client_settings(args), enable_auto_commit=False, auto_offset_reset="earliest"
    )
    async with consumer:
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        started = time.perf_counter()
        idle_since = anyio.current_time()
        with out.progress("consuming", args.count) as bar:
            while seen < args.count:
                batch = await consumer.getmany(timeout_ms=500, max_records=50_000)
                if not batch:
                    if anyio.current_time() - idle_since > 10:
                        break
                    continue
                idle_since = anyio.current_time()
                n = 0
                for records in batch.values():
                    n += len(records)
                    nbytes += sum(len(r.value or b"") for r in records)
                seen += n
                bar.advance(n)
        elapsed = time.perf_counter() - started
    out.line(_rate_line("consume", seen, nbytes, elapsed))
    if seen < args.count:
        out.info(f"only {seen} of {args.count} records arrived within 10 s of idleness")
        return 1
    return 0
