"""Jepsen-style network faults on a three-node Apache Kafka cluster (issue 29): ``make chaos``.

``python -m tests.harness.chaos --faults 20 --seed 7`` builds the rig of
:mod:`tests.harness.netns` (each node and the client in its own network namespace, on a
private subnet that exists only inside the rig), moves this process into the client's
namespace (every socket, thread and child process it opens lives there), starts the
cluster and runs each workload under the same seeded nemesis schedule, printed first:

* ``ours``: our idempotent producer (acks=all; topic RF 3, min.insync.replicas 2) and two
  consumers of one group committing what they processed;
* ``java``: Apache Kafka's VerifiableProducer (idempotent, acks=all) and two
  VerifiableConsumers of one group (committing after every poll) on the same schedule.
* ``tx-ours``: consume-transform-produce with our client: an input topic copied into an
  output topic in transactions carrying the input offsets (one in ten aborted on purpose; a
  transaction that fails is aborted and a new producer fences the old and restarts from the
  committed offsets); a read_committed reader must see every input record exactly once, in
  order per partition, and nothing of a transaction aborted on purpose.
* ``tx-java`` (not in the default list): the same copy with Apache Kafka's
  TransactionalMessageCopier, in rounds (the tool copies up to the input's end at its start).

Each fault holds for ``--fault-s`` seconds and heals, then the cluster gets ``--heal-s``
seconds before the next. After the last, an independent read-back (librdkafka, assign mode)
is checked against the producer's ledger (:mod:`tests.harness.ledger`): acknowledged records
lost, duplicated, reordered (per partition), phantoms; for the group: records acknowledged
but never consumed, consumer positions that went backwards without a rebalance, committed
offsets ahead of what was processed. Each anomaly is printed with the fault that preceded it.
The table: workload, client, records, lost, duplicated, reordered, other anomalies, longest
unavailability (longest time without an acknowledgement while producing). ``--json PATH``
appends one JSON line per workload. Exit status 1 on any anomaly, 2 if the rig could not run.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Fault", "Outcome", "main", "schedule"]

KINDS = (
    "partition-majority",  # one node alone; the client stays with the other two
    "partition-minority",  # the client and one node against the other two
    "isolate-leader",  # the leader of partition 0 cut from the other nodes, not the client
    "bridge",  # two nodes cut from each other; the third (and the client) sees both
    "client-cut-leader",  # the client cut from the leader of partition 0 only
    "loss",  # 10-40 % packet loss on one node's link
    "link-down",  # one node's link down
    "slow",  # one node's link at 256 kbit/s
    "kill",  # SIGKILL one node, restarted at heal
    "stop",  # SIGSTOP one node, SIGCONT at heal
)


@dataclass
class Fault:
    """One step of the schedule: ``kind`` on ``node`` (``"leader"``: partition 0's leader
    when the fault starts), ``percent`` for loss."""

    index: int
    kind: str
    node: str
    percent: int = 0
    #: Filled in when run: what was done, and when (monotonic).
    applied: str = ""
    started: float = 0.0
    healed: float = 0.0

    def __str__(self) -> str:
        extra = f" {self.percent}%" if self.kind == "loss" else ""
        return f"#{self.index:02d} {self.kind} {self.node}{extra}"


def schedule(faults: int, seed: int, nodes: Sequence[str] = ("n1", "n2", "n3")) -> list[Fault]:
    """A seeded schedule: every kind once before any repeats, then random kinds."""
    rng = random.Random(seed)
    kinds: list[str] = []
    while len(kinds) < faults:
        batch = list(KINDS)
        rng.shuffle(batch)
        kinds += batch
    out: list[Fault] = []
    for i, kind in enumerate(kinds[:faults]):
        leader_kinds = ("isolate-leader", "client-cut-leader")
        node = "leader" if kind in leader_kinds else rng.choice(list(nodes))
        percent = rng.randrange(10, 41) if kind == "loss" else 0
        out.append(Fault(i + 1, kind, node, percent))
    return out


@dataclass
class Outcome:
    """One workload's result (one table row)."""

    workload: str
    client: str
    records: int = 0
    acked: int = 0
    lost: int = 0
    duplicated: int = 0
    reordered: int = 0
    other: dict[str, int] = field(default_factory=dict)
    unavailable_s: float = 0.0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def anomalies(self) -> int:
        """Everything counted as wrong (a run that acknowledged nothing counts as one)."""
        found = self.lost + self.duplicated + self.reordered + sum(self.other.values())
        return found + (1 if self.acked == 0 else 0)


def format_table(rows: Sequence[Outcome]) -> str:
    """The results table (plain text)."""
    head = [
        "workload",
        "client",
        "records",
        "acked",
        "lost",
        "dup",
        "reord",
        "other anomalies",
        "longest unavail.",
    ]
    body = [
        [
            r.workload,
            r.client,
            str(r.records),
            str(r.acked),
            str(r.lost),
            str(r.duplicated),
            str(r.reordered),
            ", ".join(f"{k} {v}" for k, v in sorted(r.other.items()) if v) or "none",
            f"{r.unavailable_s:.1f} s",
        ]
        for r in rows
    ]
    widths = [max(len(x) for x in col) for col in zip(head, *body, strict=False)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in [head]]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in body]
    return "\n".join(lines)


def _longest_gap(times: Sequence[float], start: float, end: float) -> float:
    points = sorted(t for t in times if start <= t <= end)
    edges = [start, *points, end]
    return max((b - a for a, b in itertools.pairwise(edges)), default=0.0)


def _fault_before(faults: Sequence[Fault], at: float) -> str:
    before = [f for f in faults if f.started and f.started <= at]
    if not before:
        return "before any fault"
    f = before[-1]
    state = "during" if at <= f.healed or not f.healed else "after"
    return f"{state} {f} ({f.applied})"


# ---------------------------------------------------------------------------------------------
# The run (inside the client namespace)
# ---------------------------------------------------------------------------------------------


class Nemesis:
    """Applies and heals faults on the rig and the cluster."""

    def __init__(self, rig: Any, kafka: Any, topic_of: Any) -> None:
        self.rig = rig
        self.kafka = kafka
        self.topic_of = topic_of  # () -> the workload's topic (for "leader")
        self.dead: list[int] = []
        self.stopped: list[int] = []

    async def _leader(self) -> str:
        import anyio

        try:
            leader = await anyio.to_thread.run_sync(self.kafka.leader_of, self.topic_of(), 0)
        except Exception:  # any node will do when metadata is not there
            return "n1"
        return f"n{leader}"

    async def apply(self, fault: Fault) -> None:
        rig = self.rig
        node = await self._leader() if fault.node == "leader" else fault.node
        others = [n for n in rig.nodes if n != node]
        kind = fault.kind
        if kind == "partition-majority":
            rig.partition([node], [*others, "c1"])
            done = f"{node} | {'+'.join(others)}+c1"
        elif kind == "partition-minority":
            rig.partition([node, "c1"], others)
            done = f"{node}+c1 | {'+'.join(others)}"
        elif kind == "isolate-leader":
            rig.partition([node], others)
            done = f"leader {node} | {'+'.join(others)} (client sees all)"
        elif kind == "bridge":
            rig.cut(others[0], others[1])
            done = f"{others[0]} x {others[1]}, {node} bridges"
        elif kind == "client-cut-leader":
            rig.cut("c1", node)
            done = f"c1 x leader {node}"
        elif kind == "loss":
            rig.loss(node, fault.percent)
            done = f"{node} loses {fault.percent}%"
        elif kind == "link-down":
            rig.link_down(node)
            done = f"{node} link down"
        elif kind == "slow":
            rig.slow(node)
            done = f"{node} at 256kbit"
        elif kind == "kill":
            node_id = int(node[1:])
            await self.kafka.akill_node(node_id)
            self.dead.append(node_id)
            done = f"SIGKILL {node}"
        elif kind == "stop":
            node_id = int(node[1:])
            self.kafka.pause_node(node_id)
            self.stopped.append(node_id)
            done = f"SIGSTOP {node}"
        else:
            raise ValueError(kind)
        fault.applied = done
        fault.started = time.monotonic()

    async def heal(self, fault: Fault | None = None) -> None:
        self.rig.heal()
        for node_id in self.stopped:
            self.kafka.resume_node(node_id)
        self.stopped.clear()
        for node_id in self.dead:
            await self.kafka.astart_node(node_id)
        self.dead.clear()
        if fault is not None:
            fault.healed = time.monotonic()

    async def run(self, faults: Sequence[Fault], fault_s: float, heal_s: float) -> None:
        import anyio

        for fault in faults:
            try:
                await self.apply(fault)
                print(f"  {time.strftime('%H:%M:%S')} {fault}: {fault.applied}", flush=True)
                await anyio.sleep(fault_s)
            finally:
                with anyio.CancelScope(shield=True):
                    await self.heal(fault)
            await anyio.sleep(heal_s)


async def _committed_ahead(
    bootstrap: str, group: str, topic: str, parts: int, processed_max: dict[int, int], out: Outcome
) -> int:
    """Partitions whose committed offset (as the broker has it, read with a fresh member of
    no subscription) is past the last offset the group processed + 1."""
    from kafka_async import Consumer
    from kafka_async.structs import TopicPartition

    async with Consumer(bootstrap_servers=bootstrap, group_id=group) as probe:
        tps = [TopicPartition(topic, p) for p in range(parts)]
        committed = await probe.committed(tps, timeout_ms=30_000)
    ahead = 0
    for tp, om in committed.items():
        if om is not None and om.offset > processed_max.get(tp.partition, -1) + 1:
            ahead += 1
            out.notes.append(
                f"committed offset {om.offset} of p{tp.partition} is ahead of the last "
                f"processed {processed_max.get(tp.partition, -1)}"
            )
    return ahead


async def _ours(args: Any, kafka: Any, rig: Any, faults: list[Fault]) -> Outcome:
    import anyio

    from kafka_async import Consumer, Producer
    from kafka_async.consumer import ConsumerRebalanceListener
    from kafka_async.errors import KafkaError
    from kafka_async.structs import TopicPartition
    from tests.harness.ledger import Ledger, parse_value, read_back_confluent

    parts = 3
    topic = f"chaos-ours-{uuid.uuid4().hex[:6]}"
    group = f"chaos-group-{uuid.uuid4().hex[:6]}"
    await kafka.acreate_topic(topic, partitions=parts, configs={"min.insync.replicas": "2"})
    bootstrap = kafka.bootstrap_servers
    ledger = Ledger(parts)
    out = Outcome("producer+group", "ours")
    enqueued_at: dict[tuple[int, int], float] = {}
    ack_times: list[float] = []
    pending: list[tuple[int, int, Any]] = []
    stop_producing = anyio.Event()
    errors: dict[str, int] = {}
    # Group state
    seen: dict[tuple[int, int], int] = {}  # (partition, seq) -> times consumed
    processed_max: dict[int, int] = {}
    last: dict[tuple[str, int], int] = {}
    regressions: list[str] = []
    commit_errors: dict[str, int] = {}
    committed_by_us: dict[int, int] = {}
    stop_consuming = anyio.Event()

    def settle() -> None:
        still = []
        for p, seq, d in pending:
            if not d.done():
                still.append((p, seq, d))
                continue
            exc = d.exception()
            if exc is None:
                ledger.acked(p, seq, d.result().offset)
                ack_times.append(time.monotonic())
            else:
                ledger.failed(p, seq, exc)
                errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
        pending[:] = still

    async def produce(producer: Any) -> None:
        i = 0
        start = time.monotonic()
        while not stop_producing.is_set():
            p = i % parts
            seq, value = ledger.next_record(p, 100)
            enqueued_at[(p, seq)] = time.monotonic()
            try:
                pending.append((p, seq, await producer.enqueue(topic, value, partition=p)))
            except KafkaError as exc:
                ledger.failed(p, seq, exc)
                errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
            i += 1
            ahead = start + i / args.rate - time.monotonic()
            if ahead > 0:
                await anyio.sleep(ahead)

    async def settler() -> None:
        while True:
            settle()
            await anyio.sleep(0.02)

    def listener(name: str) -> ConsumerRebalanceListener:
        class Listener(ConsumerRebalanceListener):
            async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
                for tp in assigned:
                    last.pop((name, tp.partition), None)

            async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
                for tp in revoked:
                    last.pop((name, tp.partition), None)

            async def on_partitions_lost(self, lost: set[TopicPartition]) -> None:
                for tp in lost:
                    last.pop((name, tp.partition), None)

        return Listener()

    async def member(name: str) -> None:
        async with Consumer(
            topic,
            bootstrap_servers=bootstrap,
            group_id=group,
            listener=listener(name),
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            session_timeout_ms=10_000,
            request_timeout_ms=10_000,
        ) as c:
            while not stop_consuming.is_set():
                try:
                    batch = await c.getmany(timeout_ms=200, max_records=200)
                except KafkaError as exc:
                    commit_errors[f"poll {type(exc).__name__}"] = (
                        commit_errors.get(f"poll {type(exc).__name__}", 0) + 1
                    )
                    await anyio.sleep(0.2)
                    continue
                offsets: dict[TopicPartition, int] = {}
                for tp, recs in batch.items():
                    for r in recs:
                        prev = last.get((name, tp.partition))
                        if prev is not None and r.offset <= prev:
                            regressions.append(
                                f"{name} p{tp.partition}: offset {r.offset} after {prev} "
                                f"(no rebalance), {_fault_before(faults, time.monotonic())}"
                            )
                        last[(name, tp.partition)] = r.offset
                        tag = parse_value(r.value)
                        if tag is not None and tag.run_id == ledger.run_id:
                            key = (tag.partition, tag.seq)
                            seen[key] = seen.get(key, 0) + 1
                        processed_max[tp.partition] = max(
                            processed_max.get(tp.partition, -1), r.offset
                        )
                    if recs:
                        offsets[tp] = recs[-1].offset + 1
                if offsets:
                    try:
                        await c.commit(offsets, timeout_ms=10_000)
                        for tp, o in offsets.items():
                            committed_by_us[tp.partition] = max(
                                committed_by_us.get(tp.partition, 0), o
                            )
                    except KafkaError as exc:
                        commit_errors[type(exc).__name__] = (
                            commit_errors.get(type(exc).__name__, 0) + 1
                        )

    started = time.monotonic()
    nemesis = Nemesis(rig, kafka, lambda: topic)
    async with (
        Producer(
            bootstrap_servers=bootstrap,
            enable_idempotence=True,
            acks="all",
            linger_ms=5,
            request_timeout_ms=5_000,
            delivery_timeout_ms=120_000,
            retry_backoff_ms=100,
            reconnect_backoff_max_ms=1_000,
        ) as producer,
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(settler)
        tg.start_soon(member, "a")
        tg.start_soon(member, "b")
        tg.start_soon(produce, producer)
        await anyio.sleep(args.heal_s)
        await nemesis.run(faults, args.fault_s, args.heal_s)
        stop_producing.set()
        produced_until = time.monotonic()
        with anyio.move_on_after(150):
            await producer.flush(140)
        settle()
        # Let the group catch up with every acknowledged record (or give up).
        acked_keys = {(p, s) for p, seqs in ledger.expected_present().items() for s in seqs}
        with anyio.move_on_after(90):
            while not acked_keys <= set(seen):  # noqa: ASYNC110 - polling counters
                await anyio.sleep(0.2)
        stop_consuming.set()
        tg.cancel_scope.cancel()
    out.unavailable_s = _longest_gap(ack_times, started + args.heal_s, produced_until)
    ahead = await _committed_ahead(bootstrap, group, topic, parts, processed_max, out)
    observed = await anyio.to_thread.run_sync(
        lambda: read_back_confluent(bootstrap, topic, parts, expect=ledger.expected_present())
    )
    report = ledger.check(observed)
    counts = ledger.counts()
    out.records = sum(counts.values())
    out.acked = report.acked
    out.lost, out.duplicated, out.reordered = report.lost, report.duplicated, report.reordered
    unconsumed = sorted(
        (p, s) for p, seqs in ledger.expected_present().items() for s in seqs if (p, s) not in seen
    )
    out.other = {
        "phantom": report.phantom,
        "misrouted": report.misrouted,
        "unknown": report.unknown,
        "offset_mismatch": report.offset_mismatch,
        "unconsumed": len(unconsumed),
        "position_regressions": len(regressions),
        "committed_ahead": ahead,
    }
    for kind, examples in report.examples.items():
        for p, seq in examples[:5]:
            at = enqueued_at.get((p, seq), 0.0)
            out.notes.append(f"{kind} p{p} seq {seq}: sent {_fault_before(faults, at)}")
    for p, s in unconsumed[:5]:
        at = enqueued_at.get((p, s), 0.0)
        out.notes.append(f"unconsumed p{p} seq {s}: sent {_fault_before(faults, at)}")
    out.notes += regressions[:5]
    out.notes.append(f"producer errors (retriable ones end in acks): {errors or 'none'}")
    out.notes.append(f"consumer errors: {commit_errors or 'none'}")
    out.notes.append(f"failed (reported to the app): {report.failed}")
    out.seconds = time.monotonic() - started
    return out


async def _java(args: Any, kafka: Any, rig: Any, faults: list[Fault]) -> Outcome:
    import anyio

    from tests.harness.java_peers import (
        VerifiableConsumer,
        VerifiableProducer,
        _value_n,
        java_ledger,
    )
    from tests.harness.ledger import read_back_confluent

    parts = 3
    topic = f"chaos-java-{uuid.uuid4().hex[:6]}"
    group = f"chaos-jgroup-{uuid.uuid4().hex[:6]}"
    await kafka.acreate_topic(topic, partitions=parts, configs={"min.insync.replicas": "2"})
    bootstrap = kafka.bootstrap_servers
    out = Outcome("producer+group", "java")
    total_s = args.heal_s + len(faults) * (args.fault_s + args.heal_s) + 5
    started = time.monotonic()
    producer = VerifiableProducer(
        kafka.distribution,
        bootstrap,
        topic,
        # More than it can send: like ours, it produces until the schedule ends.
        max_messages=int(args.rate * total_s * 4),
        throughput=int(args.rate),
        config={
            "enable.idempotence": "true",
            "retries": "2147483647",  # the tool's default is 0, which idempotence refuses
            "request.timeout.ms": "5000",
            "delivery.timeout.ms": "120000",
            "retry.backoff.ms": "100",
            "reconnect.backoff.max.ms": "1000",
            "linger.ms": "5",
        },
    )
    members = [
        VerifiableConsumer(
            kafka.distribution,
            bootstrap,
            topic,
            group,
            session_timeout_ms=10_000,
            config={"request.timeout.ms": "10000"},
            name=f"verifiable-consumer-{x}",
        )
        for x in "ab"
    ]
    nemesis = Nemesis(rig, kafka, lambda: topic)
    # Entering starts the JVMs.
    async with producer, members[0], members[1]:
        await anyio.sleep(args.heal_s)
        await nemesis.run(faults, args.fault_s, args.heal_s)
        produced_until = time.monotonic()
        # SIGTERM: the tool closes its producer (which sends what it holds) and exits.
        exit_code = await producer.stop(grace=150)
        acked_ns = {r.n for r in producer.outcomes() if r.error is None}

        def seen() -> set[int]:
            got: set[int] = set()
            for m in members:
                m.poll()
                got.update(
                    n
                    for _p, _o, _k, v in m.records
                    if (n := _value_n(v, producer.prefix)) is not None
                )
            return got

        with anyio.move_on_after(90):
            while not acked_ns <= seen():  # noqa: ASYNC110 - polling the tools' output
                await anyio.sleep(0.5)
        consumed = seen()
        for m in members:
            await m.stop()
    outcomes = producer.outcomes()
    times = [t for ts in producer.ack_times.values() for t in ts]
    out.unavailable_s = _longest_gap(times, started + args.heal_s + 3, produced_until)
    # Positions: within one assignment, a member's offsets of a partition only go up.
    regressions: list[str] = []
    processed_max: dict[int, int] = {}
    for m in members:
        last: dict[int, int] = {}
        for e in m.events:
            name = e.get("name")
            if name in ("partitions_assigned", "partitions_revoked"):
                for p in e.get("partitions", []):
                    last.pop(int(p["partition"]), None)
            elif name == "record_data":
                p, o = int(e["partition"]), int(e["offset"])
                if p in last and o <= last[p]:
                    regressions.append(f"{m.name} p{p}: offset {o} after {last[p]} (no rebalance)")
                last[p] = o
                processed_max[p] = max(processed_max.get(p, -1), o)
    ahead = await _committed_ahead(bootstrap, group, topic, parts, processed_max, out)
    observed = await anyio.to_thread.run_sync(lambda: read_back_confluent(bootstrap, topic, parts))
    ledger, translate = java_ledger(outcomes, parts, producer.prefix, observed)
    report = ledger.check(translate(observed))
    out.records = len(outcomes)
    out.acked = report.acked
    out.lost, out.duplicated, out.reordered = report.lost, report.duplicated, report.reordered
    unconsumed = sorted(acked_ns - consumed)
    out.other = {
        "phantom": report.phantom,
        "misrouted": report.misrouted,
        "unknown": report.unknown,
        "offset_mismatch": report.offset_mismatch,
        "unconsumed": len(unconsumed),
        "position_regressions": len(regressions),
        "committed_ahead": ahead,
    }
    for kind, examples in report.examples.items():
        out.notes += [f"{kind} p{p} seq {s}" for p, s in examples[:5]]
    out.notes += [f"unconsumed {producer.prefix}.{n}" for n in unconsumed[:5]]
    out.notes += regressions[:5]
    if exit_code not in (0, 143, -15):
        out.other["tool_failed"] = 1
        out.notes.append(f"VerifiableProducer exited {exit_code}; log {producer.log_path}")
    out.notes.append(f"producer errors: {producer.errors or 'none'}")
    out.notes.append(f"rebalances seen by the members: {[m.rebalances for m in members]}")
    out.seconds = time.monotonic() - started
    return out


def _read_committed(bootstrap: str, topic: str, parts: int, timeout: float = 90.0) -> list[Any]:
    """Every record of ``topic`` a read_committed librdkafka reader sees (assign mode, from
    the beginning, until it has passed every partition's high watermark). Blocking."""
    import confluent_kafka

    from tests.harness.ledger import Observed

    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"chaos-rc-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
        }
    )
    out: list[Observed] = []
    try:
        tps = [confluent_kafka.TopicPartition(topic, p, 0) for p in range(parts)]
        ends = {p: consumer.get_watermark_offsets(tps[p], timeout=10.0)[1] for p in range(parts)}
        consumer.assign(tps)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                out.append(Observed(msg.partition() or 0, msg.offset() or 0, msg.value()))
            positions = consumer.position(tps)
            if all(tp.offset >= ends[tp.partition] for tp in positions):
                break
    finally:
        consumer.close()
    return out


async def _tx_ours(args: Any, kafka: Any, rig: Any, faults: list[Fault]) -> Outcome:
    """Consume-transform-produce with our client: copy an input topic into an output topic
    in transactions of up to 50 records with the input offsets (one in ten aborted on
    purpose), under the faults; a read_committed reader must then see every input record in
    the output exactly once, in input order per partition, and no record of an aborted
    transaction."""
    import anyio

    from kafka_async import Consumer, Producer
    from kafka_async.errors import KafkaError
    from kafka_async.structs import TopicPartition
    from tests.harness.ledger import encode_value, parse_value, read_back_confluent

    parts = 3
    tag = uuid.uuid4().hex[:6]
    src, dst, group = f"chaos-in-{tag}", f"chaos-out-{tag}", f"chaos-tx-{tag}"
    for topic in (src, dst):
        await kafka.acreate_topic(topic, partitions=parts, configs={"min.insync.replicas": "2"})
    bootstrap = kafka.bootstrap_servers
    out = Outcome("copy in transactions", "ours")
    total_s = args.heal_s + len(faults) * (args.fault_s + args.heal_s)
    per_part = int(args.rate * total_s / parts)
    run = uuid.uuid4().hex[:8]
    async with Producer(bootstrap_servers=bootstrap, enable_idempotence=True) as feeder:
        for seq in range(per_part):
            for p in range(parts):
                await feeder.enqueue(src, encode_value(run, p, seq, 60), partition=p)
        await feeder.flush(60)
    rng = random.Random(args.seed)
    attempt = 0
    aborted: set[int] = set()  # attempts aborted (on purpose or by a failure)
    on_purpose: set[int] = set()  # attempts aborted on purpose (surely aborted)
    commit_times: list[float] = []
    errors: dict[str, int] = {}
    tps = [TopicPartition(src, p) for p in range(parts)]
    done = anyio.Event()

    def marked(value: bytes, n: int) -> bytes:
        return value + f"|a{n}".encode()

    async def copier() -> None:
        nonlocal attempt
        async with Consumer(
            bootstrap_servers=bootstrap,
            group_id=group,
            isolation_level="read_committed",
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            request_timeout_ms=10_000,
        ) as consumer:
            consumer.assign(tps)
            producer: Any = None
            # Input offsets committed with a transaction (the input has per_part records a
            # partition and no transactions: offsets are 0..per_part-1).
            progress = dict.fromkeys(tps, 0)
            paced_from = time.monotonic()
            while min(progress.values()) < per_part:
                if producer is None:
                    producer = Producer(
                        bootstrap_servers=bootstrap,
                        transactional_id=f"chaos-tx-{tag}",
                        request_timeout_ms=5_000,
                        delivery_timeout_ms=60_000,
                        transaction_timeout_ms=30_000,
                    )
                    try:
                        await producer.start()
                    except KafkaError as exc:
                        errors[f"start {type(exc).__name__}"] = (
                            errors.get(f"start {type(exc).__name__}", 0) + 1
                        )
                        await producer.close()
                        producer = None
                        await anyio.sleep(1)
                        continue
                    # Start from what the group committed (transactionally).
                    committed = await consumer.committed(tps, timeout_ms=30_000)
                    for tp in tps:
                        om = committed.get(tp)
                        progress[tp] = om.offset if om is not None else 0
                        consumer.seek(tp, progress[tp])
                try:
                    batch = await consumer.getmany(timeout_ms=500, max_records=50)
                except KafkaError as exc:
                    errors[f"poll {type(exc).__name__}"] = (
                        errors.get(f"poll {type(exc).__name__}", 0) + 1
                    )
                    continue
                if not batch:
                    continue
                attempt += 1
                n = attempt
                offsets = {tp: recs[-1].offset + 1 for tp, recs in batch.items() if recs}
                try:
                    producer.begin_transaction()
                    for tp, recs in batch.items():
                        for r in recs:
                            await producer.enqueue(
                                dst, marked(r.value or b"", n), partition=tp.partition
                            )
                    await producer.send_offsets_to_transaction(offsets, group)
                    if rng.random() < 0.1:
                        aborted.add(n)
                        on_purpose.add(n)
                        await producer.abort_transaction()
                        restart = True
                    else:
                        await producer.commit_transaction()
                        commit_times.append(time.monotonic())
                        progress.update(offsets)
                        # Paced to --rate, so the copy lasts as long as the schedule.
                        ahead = paced_from + sum(progress.values()) / args.rate - time.monotonic()
                        await anyio.sleep(max(0.0, ahead))
                        restart = False
                except (KafkaError, TimeoutError) as exc:
                    aborted.add(n)  # unless it committed after all: the check tells
                    errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
                    with anyio.move_on_after(30):
                        try:
                            await producer.abort_transaction()
                        except (KafkaError, TimeoutError):
                            pass
                    await producer.close()
                    producer = None  # a new one fences this one and re-reads the offsets
                    continue
                if restart:  # aborted on purpose: read the batch again
                    for tp, recs in batch.items():
                        if recs:
                            consumer.seek(tp, recs[0].offset)
            if producer is not None:
                await producer.close()
        done.set()

    started = time.monotonic()
    nemesis = Nemesis(rig, kafka, lambda: dst)
    async with anyio.create_task_group() as tg:
        tg.start_soon(copier)
        await anyio.sleep(args.heal_s)
        await nemesis.run(faults, args.fault_s, args.heal_s)
        ended = time.monotonic()
        with anyio.move_on_after(240):
            await done.wait()
        if not done.is_set():
            out.notes.append("the copier did not finish within 240 s of the last heal")
        tg.cancel_scope.cancel()
    out.unavailable_s = _longest_gap(commit_times, started + args.heal_s, ended)
    seen = await anyio.to_thread.run_sync(lambda: _read_committed(bootstrap, dst, parts))
    everything = await anyio.to_thread.run_sync(lambda: read_back_confluent(bootstrap, dst, parts))
    copies: dict[tuple[int, int], int] = {}
    last_seq: dict[int, int] = {}
    visible_aborted = reordered = misrouted = 0
    for obs in seen:
        raw = bytes(obs.value or b"")
        head, _, mark = raw.rpartition(b"|a")
        tag_ = parse_value(head)
        if tag_ is None or tag_.run_id != run:
            continue
        if int(mark) in on_purpose:
            # (A transaction whose commit failed may have committed after all: only the
            # ones aborted on purpose are surely aborted.)
            visible_aborted += 1
        if tag_.partition != obs.partition:
            misrouted += 1
        key = (tag_.partition, tag_.seq)
        copies[key] = copies.get(key, 0) + 1
        if copies[key] == 1:
            if tag_.seq < last_seq.get(obs.partition, -1):
                reordered += 1
            last_seq[obs.partition] = max(last_seq.get(obs.partition, -1), tag_.seq)
    expected = {(p, s) for p in range(parts) for s in range(per_part)}
    out.records = len(expected)
    out.acked = len(copies)
    out.lost = len(expected - set(copies))
    out.duplicated = sum(c - 1 for c in copies.values())
    out.reordered = reordered
    out.other = {"aborted_visible": visible_aborted, "misrouted": misrouted}
    out.notes.append(
        f"{attempt} transactions, {len(aborted)} aborted (on purpose or after an error); "
        f"{len(everything)} records in the output log, {len(seen)} committed"
    )
    out.notes.append(f"copier errors: {errors or 'none'}")
    for p, s_ in sorted(expected - set(copies))[:5]:
        out.notes.append(f"lost p{p} seq {s_}")
    out.seconds = time.monotonic() - started
    return out


async def _tx_java(args: Any, kafka: Any, rig: Any, faults: list[Fault]) -> Outcome:
    """The copy of ``tx-ours`` with Apache Kafka's TransactionalMessageCopier (one per input
    partition, transactions of 50, random aborts). The tool copies up to the input's end at
    its start, so it runs in rounds while the schedule runs: feed 3 s of records, copy,
    again; a copier that fails is simply started again next round (it resumes from the
    offsets committed in its transactions). Checked like ``tx-ours``."""
    import anyio

    from kafka_async import Producer
    from tests.harness.java_peers import JavaToolError, TransactionalMessageCopier
    from tests.harness.ledger import encode_value, parse_value

    parts = 3
    tag = uuid.uuid4().hex[:6]
    src, dst, group = f"chaos-jin-{tag}", f"chaos-jout-{tag}", f"chaos-jtx-{tag}"
    for topic in (src, dst):
        await kafka.acreate_topic(topic, partitions=parts, configs={"min.insync.replicas": "2"})
    bootstrap = kafka.bootstrap_servers
    out = Outcome("copy in transactions", "java")
    run = uuid.uuid4().hex[:8]
    chunk = max(1, int(args.rate * 3 / parts))
    fed = 0
    failures: dict[str, int] = {}
    progress_times: list[float] = []
    rounds = 0
    schedule_done = anyio.Event()
    nemesis = Nemesis(rig, kafka, lambda: dst)

    async def faults_then_done() -> None:
        await anyio.sleep(args.heal_s)
        await nemesis.run(faults, args.fault_s, args.heal_s)
        schedule_done.set()

    async def copy_round() -> bool:
        nonlocal rounds
        rounds += 1
        copiers = [
            TransactionalMessageCopier(
                kafka.distribution,
                bootstrap,
                input_topic=src,
                input_partition=p,
                output_topic=dst,
                transactional_id=f"chaos-jtx-{tag}-{p}",
                group_id=group,
                transaction_size=50,
                random_aborts=True,
                name=f"txn-copier-{p}",
            )
            for p in range(parts)
        ]
        ok = True
        for c in copiers:
            c.start()
        for c in copiers:
            try:
                code = await c.wait_exit(180)
            except JavaToolError:
                code = -1
                await c.kill()
            progress_times.extend(t for t, _n in c.progress)
            if code != 0:
                ok = False
                failures[f"exit {code}"] = failures.get(f"exit {code}", 0) + 1
        return ok

    started = time.monotonic()
    async with (
        Producer(bootstrap_servers=bootstrap, enable_idempotence=True) as feeder,
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(faults_then_done)
        while not schedule_done.is_set():
            for seq in range(fed, fed + chunk):
                for p in range(parts):
                    await feeder.enqueue(src, encode_value(run, p, seq, 60), partition=p)
            await feeder.flush(150)
            fed += chunk
            await copy_round()
        ended = time.monotonic()
        for _ in range(3):  # after the last heal: until every copier finishes cleanly
            if await copy_round():
                break
        else:
            out.notes.append("the copiers did not finish cleanly in 3 rounds after the faults")
    out.unavailable_s = _longest_gap(progress_times, started + args.heal_s + 5, ended)
    seen = await anyio.to_thread.run_sync(lambda: _read_committed(bootstrap, dst, parts))
    copies: dict[tuple[int, int], int] = {}
    last_seq: dict[int, int] = {}
    reordered = misrouted = 0
    for obs in seen:
        tag_ = parse_value(obs.value)
        if tag_ is None or tag_.run_id != run:
            continue
        if tag_.partition != obs.partition:
            misrouted += 1
        key = (tag_.partition, tag_.seq)
        copies[key] = copies.get(key, 0) + 1
        if copies[key] == 1:
            if tag_.seq < last_seq.get(obs.partition, -1):
                reordered += 1
            last_seq[obs.partition] = max(last_seq.get(obs.partition, -1), tag_.seq)
    expected = {(p, s_) for p in range(parts) for s_ in range(fed)}
    out.records = len(expected)
    out.acked = len(copies)
    out.lost = len(expected - set(copies))
    out.duplicated = sum(c - 1 for c in copies.values())
    out.reordered = reordered
    out.other = {"misrouted": misrouted}
    out.notes.append(
        f"{rounds} rounds of 3 copiers; copier failures (restarted): {failures or 'none'}"
    )
    for p, s_ in sorted(expected - set(copies))[:5]:
        out.notes.append(f"lost p{p} seq {s_}")
    out.seconds = time.monotonic() - started
    return out


def _append(path: str, text: str) -> None:
    with open(path, "a") as fh:
        fh.write(text)


async def _run(args: Any, rig: Any) -> list[Outcome]:
    from kafka_async.testing.apache import ApacheKafka

    faults = schedule(args.faults, args.seed)
    print(f"nemesis schedule (seed {args.seed}, {args.fault_s} s each, {args.heal_s} s heal):")
    for f in faults:
        print(f"  {f}")
    for n in rig.nodes:
        rig.check_here(rig.address(n))
    kafka = ApacheKafka(
        nodes=3,
        heap=args.heap,
        node_hosts={int(n[1:]): rig.address(n) for n in rig.nodes},
        node_prefix={int(n[1:]): rig.exec_prefix(n) for n in rig.nodes},
        broker_config={"min.insync.replicas": "2", "replica.lag.time.max.ms": "10000"},
    )
    rows: list[Outcome] = []
    t0 = time.monotonic()
    await kafka.astart()
    print(f"cluster up in {time.monotonic() - t0:.1f} s: {kafka.bootstrap_servers}", flush=True)
    try:
        for workload in args.workloads.split(","):
            run = {
                "ours": _ours,
                "java": _java,
                "tx-ours": _tx_ours,
                "tx-java": _tx_java,
            }[workload]
            fresh = [Fault(f.index, f.kind, f.node, f.percent) for f in faults]
            print(f"workload {workload}:", flush=True)
            row = await run(args, kafka, rig, fresh)
            rows.append(row)
            print(format_table([row]), flush=True)
            for note in row.notes:
                print(f"    {note}")
            if args.json:
                record = asdict(row) | {"seed": args.seed, "faults": len(faults)}
                _append(args.json, json.dumps(record) + "\n")
    finally:
        await kafka.astop()
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """Build the rig, run the workloads, tear everything down; see the module docstring."""
    parser = argparse.ArgumentParser(prog="python -m tests.harness.chaos", description=__doc__)
    parser.add_argument("--faults", type=int, default=20)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--fault-s", type=float, default=6.0)
    parser.add_argument("--heal-s", type=float, default=6.0)
    parser.add_argument("--rate", type=float, default=100.0, help="records per second")
    parser.add_argument("--workloads", default="ours,java,tx-ours")
    parser.add_argument("--heap", default="384m")
    parser.add_argument("--json", default=None)
    parser.add_argument("--cleanup", action="store_true", help="only remove leftover rigs")
    args = parser.parse_args(argv)
    from tests.harness.netns import Rig, RigError, cleanup, rig_available

    if args.cleanup:
        print("removed:", cleanup() or "nothing")
        return 0
    why = rig_available()
    if why:
        print(f"chaos: cannot run: {why}", file=sys.stderr)
        return 2
    if args.seed is None:
        args.seed = random.randrange(1, 10_000)
    import anyio

    rig = Rig(nodes=3, clients=1)
    started = time.monotonic()
    try:
        rig.build()
        print(f"rig {rig.tag}: " + ", ".join(f"{m} {rig.address(m)}" for m in rig.members))
        with rig.inside("c1"):
            rows = anyio.run(_run, args, rig)
    except RigError as exc:
        print(f"chaos: refused: {exc}", file=sys.stderr)
        return 2
    finally:
        rig.teardown()
    print(
        f"\nchaos results (seed {args.seed}, {args.faults} faults per workload, "
        f"{time.monotonic() - started:.0f} s):"
    )
    print(format_table(rows))
    return 1 if any(r.anomalies for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
