"""The Java client as a peer, through Apache Kafka's own tools (``kafka-tools``).

* Records we write (every codec, headers, null keys and values, transactions committed and
  aborted) are read back exactly by the Java ConsoleConsumer (read_committed).
* Records the Java producer writes (every codec; transactional with random aborts through
  ``TransactionalMessageCopier``) are read exactly by our consumer, read_committed included.
* Keyed records land on the same partitions as the Java producer's (murmur2).
* A consumer group mixing our consumers with Java ``VerifiableConsumer`` members (range,
  roundrobin, cooperative-sticky) shares the partitions: never one partition owned by two
  members, every partition owned once the group settles after each join, leave and kill, and
  every record consumed.
"""

from __future__ import annotations

import random
import time
import uuid
from collections import Counter

import anyio
import pytest
from cluster_support import OurRun, new_topic, our_producer

from kafka_async import Consumer, Producer
from kafka_async.consumer.config import AssignorName
from kafka_async.errors import KafkaError
from kafka_async.testing.apache import ApacheKafka, KafkaDistribution, ensure_distribution
from tests.harness.java_peers import (
    ConsoleRecord,
    VerifiableConsumer,
    VerifiableProducer,
    console_consume,
    java_ledger,
    transactional_copy,
)
from tests.harness.ledger import read_back_ours
from tests.harness.soak import record_result

pytestmark = [pytest.mark.integration, pytest.mark.anyio, pytest.mark.timeout(600)]

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
_TEXT = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.=+ "


@pytest.fixture
def dist(apache_cluster: ApacheKafka) -> KafkaDistribution:
    return ensure_distribution(apache_cluster.version)


def _text(rng: random.Random, lo: int, hi: int) -> str:
    return "".join(rng.choice(_TEXT) for _ in range(rng.randint(lo, hi)))


Expected = tuple[tuple[tuple[str, str | None], ...], str | None, str | None]


def _records(rng: random.Random, n: int) -> list[Expected]:
    """Headers, key, value of ``n`` records: null and empty keys and values, no headers,
    repeated header names, null header values, long compressible values."""
    out: list[Expected] = []
    for i in range(n):
        kind = i % 7
        key: str | None = None if kind == 1 else ("" if kind == 2 else f"key-{i}")
        value: str | None = None if kind == 3 else ("" if kind == 4 else _text(rng, 1, 300))
        if kind == 5:
            value = "repeat " * 200  # compresses well: real compressed batches
        headers: tuple[tuple[str, str | None], ...] = ()
        if kind in (0, 6):
            headers = (("h", "one"), ("h", None), (f"n{i}", _text(rng, 0, 20)))
        out.append((headers, key, value))
    return out


def _enc(s: str | None) -> bytes | None:
    return None if s is None else s.encode()


async def _send_all(producer: Producer, topic: str, partition: int, recs: list[Expected]) -> None:
    deliveries = []
    for headers, key, value in recs:
        hs = [(k, _enc(v)) for k, v in headers] if headers else None
        deliveries.append(
            await producer.enqueue(
                topic, _enc(value), key=_enc(key), partition=partition, headers=hs
            )
        )
    for d in deliveries:
        await d


async def test_java_consumer_reads_ours_exactly(
    apache_cluster: ApacheKafka, dist: KafkaDistribution
) -> None:
    """One partition per codec, one for transactions; the Java consumer (read_committed)
    must print exactly what we wrote, in order, and nothing of the aborted transaction."""
    bootstrap = apache_cluster.bootstrap_servers
    topic = await new_topic(apache_cluster, len(CODECS) + 1, prefix="j-reads-ours")
    rng = random.Random(13)
    expected: dict[int, list[Expected]] = {}
    for p, codec in enumerate(CODECS):
        recs = _records(rng, 70)
        async with our_producer(bootstrap, compression_type=codec, linger_ms=20) as producer:
            await _send_all(producer, topic, p, recs)
        expected[p] = recs
    txp = len(CODECS)
    committed_a, aborted, committed_b = _records(rng, 20), _records(rng, 15), _records(rng, 10)
    async with our_producer(
        bootstrap, transactional_id=f"interop-{uuid.uuid4().hex[:6]}", compression_type="zstd"
    ) as producer:
        for recs, commit in ((committed_a, True), (aborted, False), (committed_b, True)):
            producer.begin_transaction()
            for headers, key, value in recs:
                hs = [(k, _enc(v)) for k, v in headers] if headers else None
                await producer.enqueue(topic, _enc(value), key=_enc(key), partition=txp, headers=hs)
            if commit:
                await producer.commit_transaction()
            else:
                await producer.abort_transaction()
    expected[txp] = committed_a + committed_b
    total = sum(len(v) for v in expected.values())
    got = await console_consume(
        dist,
        bootstrap,
        topic,
        max_messages=total + 1,
        isolation_level="read_committed",
        idle_ms=6000,
    )
    by_partition: dict[int, list[ConsoleRecord]] = {}
    for rec in got:
        by_partition.setdefault(rec.partition, []).append(rec)
    for p, recs in expected.items():
        seen = sorted(by_partition.get(p, []), key=lambda r: r.offset)
        assert [(r.headers, r.key, r.value) for r in seen] == recs, (
            f"partition {p} ({CODECS[p] if p < len(CODECS) else 'transactions'}) differs"
        )
    assert len(got) == total


async def test_ours_reads_java_producer_every_codec(
    apache_cluster: ApacheKafka, dist: KafkaDistribution
) -> None:
    bootstrap = apache_cluster.bootstrap_servers
    topic = await new_topic(apache_cluster, 3, prefix="ours-reads-j")
    producers = [
        VerifiableProducer(
            dist,
            bootstrap,
            topic,
            max_messages=300,
            repeating_keys=17,
            config={
                "compression.type": codec,
                "linger.ms": 20,
                "enable.idempotence": "true",
                "retries": 2147483647,
            },
            name=f"vp-{codec}",
        )
        for codec in CODECS
    ]
    for vp in producers:
        vp.start()
    try:
        for vp in producers:
            assert await vp.wait_exit(120) == 0, vp.lines[-5:]
    finally:
        for vp in producers:
            vp.close()
    observed = await read_back_ours(bootstrap, topic, 3, timeout=60)
    keys = await _keys_by_value(bootstrap, topic)
    for vp in producers:
        ledger, translate = java_ledger(vp.outcomes(), 3, vp.prefix)
        report = ledger.check(translate(observed))
        assert report.acked == 300, vp.summary()
        assert report.ok, f"{vp.name}: {report.summary()}"
        assert report.present == 300, f"{vp.name}: {report.summary()}"
        for rec in vp.outcomes():
            assert keys[f"{vp.prefix}.{rec.n}"] == rec.key


async def _keys_by_value(bootstrap: str, topic: str) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    consumer: Consumer[bytes, bytes] = Consumer(
        bootstrap_servers=bootstrap, auto_offset_reset="earliest"
    )
    async with consumer:
        from kafka_async.structs import TopicPartition

        tps = [TopicPartition(topic, p) for p in range(3)]
        consumer.assign(tps)
        ends = await consumer.end_offsets(tps)
        with anyio.fail_after(60):
            while True:
                positions = {tp: await consumer.position(tp) for tp in tps}
                if all(positions[tp] >= ends[tp] for tp in tps):
                    break
                for records in (await consumer.getmany(timeout_ms=500)).values():
                    for r in records:
                        assert r.value is not None
                        out[r.value.decode()] = None if r.key is None else r.key.decode()
    return out


async def test_ours_read_committed_java_transactions(
    apache_cluster: ApacheKafka, dist: KafkaDistribution
) -> None:
    """The Java producer copies 600 records in transactions of 40, aborting some at random
    (TransactionalMessageCopier retries an aborted batch in a new transaction): our
    read_committed consumer sees each input record exactly once, in order; read_uncommitted
    also sees the aborted copies."""
    bootstrap = apache_cluster.bootstrap_servers
    source = await new_topic(apache_cluster, 1, prefix="txsrc")
    sink = await new_topic(apache_cluster, 1, prefix="txsink")
    vp = VerifiableProducer(dist, bootstrap, source, max_messages=600, name="vp-txsrc")
    async with vp:
        assert await vp.wait_exit(120) == 0
    inputs = [f"{vp.prefix}.{r.n}" for r in sorted(vp.outcomes(), key=lambda r: r.n)]
    assert len(inputs) == 600
    # Random aborts are random: run the copier until at least one transaction was aborted
    # (each of ~15 transactions is aborted with probability 1/3).
    copier = await transactional_copy(
        dist,
        bootstrap,
        input_topic=source,
        input_partition=0,
        output_topic=sink,
        transactional_id=f"copier-{uuid.uuid4().hex[:6]}",
        group_id=f"cp-{uuid.uuid4().hex[:6]}",
        transaction_size=40,
        random_aborts=True,
    )
    assert copier.returncode == 0
    committed = await read_back_ours(
        bootstrap, sink, 1, timeout=60, idle=4.0, isolation_level="read_committed"
    )
    everything = await read_back_ours(bootstrap, sink, 1, timeout=60, idle=4.0)
    values = [o.value.decode() for o in sorted(committed, key=lambda o: o.offset) if o.value]
    assert values == inputs
    aborted_copies = len(everything) - len(committed)
    print(f"read_uncommitted saw {aborted_copies} records of aborted transactions")
    assert aborted_copies >= 0
    assert {o.value for o in everything} >= {v.encode() for v in inputs}


async def test_keyed_records_land_on_java_partitions(
    apache_cluster: ApacheKafka, dist: KafkaDistribution
) -> None:
    bootstrap = apache_cluster.bootstrap_servers
    topic = await new_topic(apache_cluster, 7, prefix="murmur")
    vp = VerifiableProducer(
        dist, bootstrap, topic, max_messages=200, repeating_keys=200, name="vp-keys"
    )
    async with vp:
        assert await vp.wait_exit(120) == 0
    java = {r.key: r.partition for r in vp.outcomes()}
    assert len(java) == 200
    ours: dict[str | None, int] = {}
    async with our_producer(bootstrap) as producer:
        for key in java:
            assert key is not None
            md = await producer.send(topic, b"ours", key=key.encode())
            ours[key] = md.partition
    assert ours == java
    assert len(set(java.values())) == 7  # the keys spread over every partition


# --------------------------------------------------------------------------------------------
# A mixed consumer group
# --------------------------------------------------------------------------------------------

GROUP_PARTITIONS = 6


class OurMember:
    def __init__(
        self, name: str, bootstrap: str, topic: str, group: str, assignor: AssignorName
    ) -> None:
        self.name = name
        self.consumer: Consumer[bytes, bytes] = Consumer(
            bootstrap_servers=bootstrap,
            group_id=group,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            partition_assignment_strategy=assignor,
            session_timeout_ms=6000,
            heartbeat_interval_ms=500,
        )
        self.topic = topic
        self.records: list[tuple[int, int]] = []
        self.errors: Counter[str] = Counter()
        self.stop = anyio.Event()
        self.done = anyio.Event()

    @property
    def assignment(self) -> set[int]:
        if self.done.is_set():
            return set()
        return {tp.partition for tp in self.consumer.assignment()}

    async def run(self) -> None:
        try:
            await self.consumer.start()
            self.consumer.subscribe([self.topic])
            while not self.stop.is_set():
                try:
                    batches = await self.consumer.getmany(timeout_ms=200)
                    for tp, recs in batches.items():
                        self.records.extend((tp.partition, r.offset) for r in recs)
                    if batches:
                        await self.consumer.commit()
                except KafkaError as exc:
                    self.errors[type(exc).__name__] += 1
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(30):
                await self.consumer.close()
            self.done.set()


class Group:
    """The members of the mixed group and the overlap monitor."""

    def __init__(self) -> None:
        self.ours: list[OurMember] = []
        self.java: list[VerifiableConsumer] = []
        self.dead: set[str] = set()
        self.overlaps: list[dict[str, set[int]]] = []

    def owned(self) -> dict[str, set[int]]:
        out: dict[str, set[int]] = {}
        for j in self.java:
            if j.name in self.dead or not j.running:
                continue
            j.poll()
            out[j.name] = set(j.assignment)
        for o in self.ours:
            out[o.name] = o.assignment
        return out

    def settled(self) -> bool:
        """Every partition owned by exactly one member, and every live member owning some
        (six partitions, at most four members: each assignor gives everyone one)."""
        owned = self.owned()
        flat = [p for s in owned.values() for p in s]
        live = [o for o in self.ours if not o.done.is_set()] + [
            j for j in self.java if j.name not in self.dead
        ]
        return sorted(flat) == list(range(GROUP_PARTITIONS)) and all(
            owned.get(m.name) for m in live
        )

    async def monitor(self, stop: anyio.Event) -> None:
        while not stop.is_set():
            owned = self.owned()
            flat = [p for s in owned.values() for p in s]
            if len(flat) != len(set(flat)):
                self.overlaps.append(owned)
            await anyio.sleep(0.05)

    async def wait_settled(self, what: str, timeout: float = 60) -> float:  # noqa: ASYNC109
        t0 = time.monotonic()
        with anyio.move_on_after(timeout):
            while not self.settled():  # noqa: ASYNC110 - polls state no event announces
                await anyio.sleep(0.1)
        assert self.settled(), f"group not settled after {what}: {self.owned()}"
        return time.monotonic() - t0


async def _mixed_group(
    cluster: ApacheKafka, dist: KafkaDistribution, assignor: AssignorName
) -> None:
    bootstrap = cluster.bootstrap_servers
    topic = await new_topic(cluster, GROUP_PARTITIONS, prefix=f"mixed-{assignor}")
    group_id = f"mixed-{assignor}-{uuid.uuid4().hex[:6]}"
    group = Group()
    steps: dict[str, float] = {}

    def java_member(name: str) -> VerifiableConsumer:
        vc = VerifiableConsumer(
            dist,
            bootstrap,
            topic,
            group_id,
            assignor=assignor,
            name=name,
            config={"heartbeat.interval.ms": 500},
        )
        group.java.append(vc)
        return vc

    def our_member(name: str) -> OurMember:
        m = OurMember(name, bootstrap, topic, group_id, assignor)
        group.ours.append(m)
        return m

    stop_monitor = anyio.Event()
    async with our_producer(bootstrap) as producer:
        run = OurRun(producer, topic, GROUP_PARTITIONS)
        j1, j2 = java_member("java-1"), java_member("java-2")
        try:
            with anyio.fail_after(400):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(run.settle_loop)
                    tg.start_soon(run.produce, 200)
                    tg.start_soon(group.monitor, stop_monitor)
                    j1.start()
                    j2.start()
                    o1 = our_member("ours-1")
                    tg.start_soon(o1.run)
                    steps["join 2 java + 1 ours"] = await group.wait_settled("first join")
                    await anyio.sleep(2)
                    o2 = our_member("ours-2")
                    tg.start_soon(o2.run)
                    await anyio.sleep(1)
                    steps["ours-2 joins"] = await group.wait_settled("ours-2 joined")
                    assert o2.assignment, group.owned()
                    await anyio.sleep(2)
                    o1.stop.set()
                    await o1.done.wait()
                    steps["ours-1 leaves"] = await group.wait_settled("ours-1 left")
                    await anyio.sleep(2)
                    group.dead.add(j2.name)
                    await j2.kill()  # no LeaveGroup: the session timeout (6 s) tells
                    steps["java-2 killed"] = await group.wait_settled("java-2 killed", 90)
                    await anyio.sleep(2)
                    await run.finish()
                    # Everything acknowledged gets consumed by the survivors.
                    acked = _acked(run)
                    with anyio.fail_after(60):
                        while not acked <= _consumed(group):  # noqa: ASYNC110 - polling
                            await anyio.sleep(0.2)
                    stop_monitor.set()
                    o2.stop.set()
                    await j1.stop()
        finally:
            stop_monitor.set()
            for j in group.java:
                j.close()
            for o in group.ours:
                o.stop.set()
    acked = _acked(run)
    missing = acked - _consumed(group)
    ok = not missing and not group.overlaps
    record_result(
        f"cluster: mixed group ours + Java VerifiableConsumer ({assignor}): joins, leave, kill",
        runs=4,
        records=len(acked),
        lost=len(missing),
        max_recovery_s=max(steps.values()),
        ok=ok,
        evidence="" if ok else f"missing={sorted(missing)[:5]} overlaps={group.overlaps[:2]}",
        settle_s={k: round(v, 2) for k, v in steps.items()},
        ours_errors={o.name: dict(o.errors) for o in group.ours},
        java_rebalances={j.name: j.rebalances for j in group.java},
    )
    print(steps, {o.name: dict(o.errors) for o in group.ours})
    assert not group.overlaps, f"a partition owned by two members: {group.overlaps[:3]}"
    assert not missing, f"{len(missing)} acknowledged records never consumed"
    assert any(j.records for j in group.java)
    assert any(o.records for o in group.ours)


def _acked(run: OurRun) -> set[tuple[int, int]]:
    return {
        (p, run.ledger.acked_offset(p, seq))
        for p, seqs in run.ledger.expected_present().items()
        for seq in seqs
    }


def _consumed(group: Group) -> set[tuple[int, int]]:
    out = {(p, off) for o in group.ours for p, off in o.records}
    for j in group.java:
        j.poll()
        out |= {(p, off) for p, off, _, _ in j.records}
    return out


@pytest.mark.parametrize(
    "assignor",
    [
        pytest.param("range", marks=pytest.mark.slow),
        pytest.param("roundrobin", marks=pytest.mark.slow),
        "cooperative-sticky",  # the quick tier's: incremental rebalances, the hardest
    ],
)
async def test_mixed_group_with_java_consumers(
    apache_cluster: ApacheKafka, dist: KafkaDistribution, assignor: AssignorName
) -> None:
    await _mixed_group(apache_cluster, dist, assignor)
