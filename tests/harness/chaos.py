"""Jepsen-style network faults on a three-node Apache Kafka cluster (issue 29): ``make chaos``.

``python -m tests.harness.chaos --faults 20 --seed 7`` builds the rig of
:mod:`tests.harness.netns` (each node and the client in its own network namespace, on a
private subnet that exists only inside the rig), moves this process into the client's
namespace (every socket, thread and child process it opens lives there), starts the
cluster and runs each workload under the same seeded nemesis schedule, printed first:

* ``ours``: our idempotent producer (acks=all; topic RF 3, min.insync.replicas 2) and two
  consumers of one group committing what they processed;
* ``java``: Apache Kafka's VerifiableProducer (idempotent, acks=all) on the same schedule.

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
        return self.lost + self.duplicated + self.reordered + sum(self.other.values())


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
    # Committed offsets, as the broker has them, against what was processed.
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

    from tests.harness.java_peers import VerifiableProducer, java_ledger
    from tests.harness.ledger import read_back_confluent

    parts = 3
    topic = f"chaos-java-{uuid.uuid4().hex[:6]}"
    await kafka.acreate_topic(topic, partitions=parts, configs={"min.insync.replicas": "2"})
    bootstrap = kafka.bootstrap_servers
    out = Outcome("producer", "java")
    total_s = args.heal_s + len(faults) * (args.fault_s + args.heal_s) + 5
    started = time.monotonic()
    producer = VerifiableProducer(
        kafka.distribution,
        bootstrap,
        topic,
        max_messages=int(args.rate * total_s),
        throughput=int(args.rate),
        config={
            "enable.idempotence": "true",
            "request.timeout.ms": "5000",
            "delivery.timeout.ms": "120000",
            "retry.backoff.ms": "100",
            "reconnect.backoff.max.ms": "1000",
            "linger.ms": "5",
        },
    )
    nemesis = Nemesis(rig, kafka, lambda: topic)
    async with producer:  # starts the JVM
        await anyio.sleep(args.heal_s)
        await nemesis.run(faults, args.fault_s, args.heal_s)
        produced_until = time.monotonic()
        await producer.wait_exit(200)
    outcomes = producer.outcomes()
    times = [t for ts in producer.ack_times.values() for t in ts]
    out.unavailable_s = _longest_gap(times, started + args.heal_s + 3, produced_until)
    observed = await anyio.to_thread.run_sync(lambda: read_back_confluent(bootstrap, topic, parts))
    ledger, translate = java_ledger(outcomes, parts, producer.prefix, observed)
    report = ledger.check(translate(observed))
    out.records = len(outcomes)
    out.acked = report.acked
    out.lost, out.duplicated, out.reordered = report.lost, report.duplicated, report.reordered
    out.other = {
        "phantom": report.phantom,
        "misrouted": report.misrouted,
        "unknown": report.unknown,
        "offset_mismatch": report.offset_mismatch,
    }
    for kind, examples in report.examples.items():
        out.notes += [f"{kind} p{p} seq {s}" for p, s in examples[:5]]
    out.notes.append(f"producer errors: {producer.errors or 'none'}")
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
            run = {"ours": _ours, "java": _java}[workload]
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
    parser.add_argument("--workloads", default="ours,java")
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

    cleanup()
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
