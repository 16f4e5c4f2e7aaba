"""Shared pieces of the three-node cluster scenarios: topics, ledger-tracked producing with
our client and with the Java client, the independent read-back, and result recording.

Imported by the scenario tests as ``cluster_support`` (pytest puts this directory on
``sys.path``).
"""

from __future__ import annotations

import contextlib
import itertools
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

import anyio

from kafka_async import Producer
from kafka_async.errors import KafkaError
from kafka_async.producer import Delivery
from kafka_async.testing.apache import ApacheKafka, ensure_distribution
from tests.harness.java_peers import (
    JavaToolError,
    VerifiableConsumer,
    VerifiableProducer,
    java_ledger,
)
from tests.harness.ledger import (
    Ledger,
    LedgerReport,
    Observed,
    read_back_confluent,
    read_back_ours,
)
from tests.harness.soak import record_result

#: Every scenario topic: replication factor 3, and acks=all needs two in-sync replicas.
MIN_ISR = {"min.insync.replicas": "2"}
#: Records per second each producer writes during a scenario.
RATE = 400
#: Producer settings shared by our client and the Java client (same names where they exist).
DELIVERY_TIMEOUT_MS = 60_000
REQUEST_TIMEOUT_MS = 5_000


def our_producer(bootstrap: str, **overrides: Any) -> Producer:
    """Our producer as the scenarios run it: idempotent, acks=all."""
    settings: dict[str, Any] = {
        "enable_idempotence": True,
        "acks": "all",
        "linger_ms": 5,
        "request_timeout_ms": REQUEST_TIMEOUT_MS,
        "delivery_timeout_ms": DELIVERY_TIMEOUT_MS,
        "retry_backoff_ms": 100,
        "reconnect_backoff_max_ms": 500,
        "metadata_max_age_ms": 5_000,
    }
    settings.update(overrides)
    return Producer(bootstrap, **settings)


def java_config(**overrides: object) -> dict[str, object]:
    """The Java producer's settings for the same scenarios."""
    config: dict[str, object] = {
        "enable.idempotence": "true",
        # VerifiableProducer sets retries=0 unless told otherwise.
        "retries": 2147483647,
        "linger.ms": 5,
        "request.timeout.ms": REQUEST_TIMEOUT_MS,
        "delivery.timeout.ms": DELIVERY_TIMEOUT_MS,
        "retry.backoff.ms": 100,
        "reconnect.backoff.max.ms": 500,
        "metadata.max.age.ms": 5_000,
    }
    config.update(overrides)
    return config


async def new_topic(
    cluster: ApacheKafka,
    partitions: int,
    prefix: str = "fo",
    assignment: Mapping[int, Sequence[int]] | None = None,
) -> str:
    """A fresh topic (replication factor 3, or the replicas ``assignment`` names per
    partition; min.insync.replicas=2), fully in sync."""
    name = f"{prefix}-{uuid.uuid4().hex[:10]}"
    if assignment is None:
        await cluster.acreate_topic(name, partitions, configs=MIN_ISR)
    else:
        from kafka_async import AdminClient, NewTopic

        assert sorted(assignment) == list(range(partitions)), assignment
        async with AdminClient(cluster.bootstrap_servers) as admin:
            await admin.create_topics(
                [NewTopic(name, replica_assignment=assignment, config=MIN_ISR)],
                raise_on_error=True,
            )
    await cluster.await_in_sync(name, timeout=60)
    return name


class LiveConsumer:
    """Our consumer (group mode, auto-commit) reading the scenario's topic while it runs:
    what it delivered, in delivery order, and any error it raised to the application."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.bootstrap = bootstrap
        self.topic = topic
        self.observed: list[Observed] = []
        self.errors: list[str] = []
        #: Deliveries of an offset at or below one already delivered (must stay empty).
        self.backwards: list[tuple[int, int]] = []
        self._next: dict[int, int] = {}
        self.stop = anyio.Event()

    async def run(self) -> None:
        """Consume until :attr:`stop` is set; errors are recorded, not raised."""
        from kafka_async import Consumer

        try:
            consumer: Consumer[bytes, bytes] = Consumer(
                self.topic,
                bootstrap_servers=self.bootstrap,
                group_id=f"live-{uuid.uuid4().hex[:8]}",
                auto_offset_reset="earliest",
                metadata_max_age_ms=5_000,
                request_timeout_ms=REQUEST_TIMEOUT_MS,
            )
            async with consumer:
                while not self.stop.is_set():
                    for tp, records in (await consumer.getmany(timeout_ms=200)).items():
                        for rec in records:
                            if rec.offset < self._next.get(tp.partition, 0):
                                self.backwards.append((tp.partition, rec.offset))
                            self._next[tp.partition] = rec.offset + 1
                            self.observed.append(Observed(tp.partition, rec.offset, rec.value))
        except Exception as exc:  # the scenario reports every error
            self.errors.append(f"{type(exc).__name__}: {exc}")

    async def caught_up(self, expect: Mapping[int, set[int]], timeout: float) -> bool:  # noqa: ASYNC109
        """Wait until every acknowledged record (``expect``: partition -> seqs) was
        delivered; False if ``timeout`` passed first."""
        from tests.harness.ledger import parse_value

        want = {(p, s) for p, seqs in expect.items() for s in seqs}
        with anyio.move_on_after(timeout):
            while True:
                got = {
                    (t.partition, t.seq)
                    for t in (parse_value(o.value) for o in self.observed)
                    if t is not None
                }
                if want <= got or self.errors:
                    return want <= got
                await anyio.sleep(0.2)
        return False


# --------------------------------------------------------------------------------------------
# Producing with a ledger: ours and Java's behind one interface
# --------------------------------------------------------------------------------------------


@dataclass
class _Pending:
    partition: int
    seq: int
    delivery: Delivery


@dataclass
class ProduceRun:
    """What a scenario needs of a producer: acknowledgement times per partition, errors."""

    client: str
    partitions: int
    #: monotonic time of the latest acknowledgement, per partition.
    last_ack_at: dict[int, float] = field(default_factory=dict)
    #: monotonic times acknowledgements were seen, per partition (in order).
    ack_times: dict[int, list[float]] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    #: Errors by the broker's typed reason (the cause of a delivery timeout, if any).
    reasons: dict[str, int] = field(default_factory=dict)

    def acked_since(self, partition: int, when: float) -> bool:
        """True once ``partition`` had an acknowledgement after ``when``."""
        return self.last_ack_at.get(partition, -1.0) > when

    def longest_gap(self, partition: int, start: float, end: float) -> float:
        """The longest time ``partition`` went without an acknowledgement between the last
        one before ``start`` and ``end`` (the outage a disruption caused, as the
        application saw it)."""
        times = self.ack_times.get(partition, [])
        before = [t for t in times if t < start]
        inside = [t for t in times if start <= t <= end]
        points = ([before[-1]] if before else [start]) + inside
        if not inside:
            return end - points[0]
        return max(b - a for a, b in itertools.pairwise(points))


class OurRun(ProduceRun):
    """Ledger-tracked producing with our client, round-robin over the partitions."""

    def __init__(self, producer: Producer, topic: str, partitions: int) -> None:
        super().__init__("ours", partitions)
        self.producer = producer
        self.topic = topic
        self.ledger = Ledger(partitions)
        self._pending: list[_Pending] = []
        self.stop = anyio.Event()
        self.done = False

    async def produce(self, rate: float = RATE, limit: int | None = None) -> None:
        """Enqueue records at ``rate`` per second until :attr:`stop` is set (or ``limit``)."""
        start = anyio.current_time()
        i = 0
        try:
            while not self.stop.is_set() and (limit is None or i < limit):
                p = i % self.partitions
                seq, value = self.ledger.next_record(p, 100)
                try:
                    d = await self.producer.enqueue(self.topic, value, partition=p)
                except KafkaError as exc:
                    self.ledger.failed(p, seq, exc)
                    self._count(exc)
                else:
                    self._pending.append(_Pending(p, seq, d))
                i += 1
                ahead = start + i / rate - anyio.current_time()
                if ahead > 0:
                    await anyio.sleep(ahead)
        finally:
            self.done = True

    def _count(self, exc: BaseException) -> None:
        name = type(exc).__name__
        self.errors[name] = self.errors.get(name, 0) + 1
        reason = broker_reason(exc)
        self.reasons[reason] = self.reasons.get(reason, 0) + 1

    def settle_now(self) -> int:
        """Move resolved deliveries into the ledger; returns how many are pending."""
        now = time.monotonic()
        still: list[_Pending] = []
        for t in self._pending:
            if not t.delivery.done():
                still.append(t)
                continue
            exc = t.delivery.exception()
            if exc is None:
                self.ledger.acked(t.partition, t.seq, t.delivery.result().offset)
                if self.last_ack_at.get(t.partition) != now:
                    self.ack_times.setdefault(t.partition, []).append(now)
                self.last_ack_at[t.partition] = now
            else:
                self.ledger.failed(t.partition, t.seq, exc)
                self._count(exc)
        self._pending = still
        return len(still)

    async def settle_loop(self) -> None:
        """Settle every 20 ms until producing stopped and nothing is pending."""
        while not self.done or self.settle_now():
            self.settle_now()
            await anyio.sleep(0.02)

    async def finish(self, timeout: float = DELIVERY_TIMEOUT_MS / 1000 + 10) -> None:  # noqa: ASYNC109
        """Stop producing, flush, settle everything."""
        self.stop.set()
        with anyio.move_on_after(timeout):
            await self.producer.flush(timeout)
        self.settle_now()


def broker_reason(exc: BaseException) -> str:
    """The class name of the broker's error behind ``exc`` (following ``__cause__``)."""
    seen: BaseException | None = exc
    while seen is not None:
        if getattr(seen, "code", None) is not None:
            return type(seen).__name__
        seen = seen.__cause__
    return type(exc).__name__


class JavaRun(ProduceRun):
    """The Java producer (VerifiableProducer) on the same schedule."""

    def __init__(self, vp: VerifiableProducer, partitions: int) -> None:
        super().__init__("java", partitions)
        self.vp = vp
        self.last_ack_at = vp.last_ack_at
        self.ack_times = vp.ack_times
        self.errors = vp.errors
        self.reasons = vp.errors

    def poll(self) -> None:
        self.vp.poll()


async def read_back(
    bootstrap: str, topic: str, partitions: int, expect: dict[int, set[int]] | None = None
) -> list[Observed]:
    """librdkafka's read-back of the whole topic (the independent reader)."""
    observed: list[Observed] = await anyio.to_thread.run_sync(
        lambda: read_back_confluent(bootstrap, topic, partitions, expect=expect, timeout=60)
    )
    return observed


async def check_ours(
    run: OurRun, bootstrap: str, phantoms: dict[str, int] | None = None
) -> LedgerReport:
    """Check our run's ledger with librdkafka's read-back, and our Consumer's agreeing
    (``phantoms``, if given, receives :meth:`Ledger.phantom_errors`)."""
    expect = run.ledger.expected_present()
    observed = await read_back(bootstrap, run.topic, run.partitions, expect)
    theirs = run.ledger.check(observed)
    if phantoms is not None:
        phantoms.update(run.ledger.phantom_errors(observed))
    ours = run.ledger.check(
        await read_back_ours(bootstrap, run.topic, run.partitions, expect=expect, timeout=60)
    )
    assert (ours.lost, ours.duplicated, ours.reordered, ours.present) == (
        theirs.lost,
        theirs.duplicated,
        theirs.reordered,
        theirs.present,
    ), f"readers disagree:\n librdkafka: {theirs.summary()}\n ours: {ours.summary()}"
    return theirs


async def check_java(
    vp: VerifiableProducer,
    bootstrap: str,
    partitions: int,
    phantoms: dict[str, int] | None = None,
) -> LedgerReport:
    """Check the Java producer's reported outcomes against librdkafka's read-back."""
    outcomes = vp.outcomes()
    expect, _ = java_ledger(outcomes, partitions, vp.prefix)
    raw = await read_back(bootstrap, vp.topic, partitions, expect.expected_present())
    ledger, translate = java_ledger(outcomes, partitions, vp.prefix, raw)
    observed = translate(raw)
    if phantoms is not None:
        phantoms.update(ledger.phantom_errors(observed))
    return ledger.check(observed)


async def wait_acked_since(run: ProduceRun, partition: int, when: float, timeout: float) -> float:  # noqa: ASYNC109
    """Seconds from ``when`` until ``partition`` had a new acknowledgement (``timeout`` if
    none came)."""
    with anyio.move_on_after(timeout):
        while not run.acked_since(partition, when):
            if isinstance(run, JavaRun):
                run.poll()
            await anyio.sleep(0.02)
    return run.last_ack_at[partition] - when if run.acked_since(partition, when) else float(timeout)


# --------------------------------------------------------------------------------------------
# Running one schedule with either client
# --------------------------------------------------------------------------------------------

Schedule = Callable[[ApacheKafka, str, ProduceRun], Awaitable[list[float]]]


@dataclass
class Outcome:
    """One scenario run: the ledger's verdict and what the schedule measured."""

    client: str
    report: LedgerReport
    recoveries: list[float]
    errors: dict[str, int]
    reasons: dict[str, int]
    #: Records reported failed yet present, by the error they failed with.
    phantoms: dict[str, int] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def consumer_ok(self) -> bool:
        """True when the live consumer (if one ran) delivered every acknowledged record
        once, in order, never went back, and raised nothing."""
        c = self.extra.get("consumer")
        if c is None:
            return True
        return not (c["lost"] or c["duplicated"] or c["reordered"] or c["backwards"] or c["errors"])


async def run_ours(
    cluster: ApacheKafka,
    schedule: Schedule,
    partitions: int = 3,
    *,
    budget: float = 240.0,
    assignment: Mapping[int, Sequence[int]] | None = None,
    consume: bool = False,
    **producer: Any,
) -> Outcome:
    """Our producer writes while ``schedule`` breaks the cluster; then the ledger check.

    ``assignment`` places the topic's replicas (default: replication factor 3). With
    ``consume`` our consumer reads the topic meanwhile (:class:`LiveConsumer`); its own
    ledger check goes into ``extra["consumer"]`` (``Outcome.consumer_ok`` sums it up)."""
    topic = await new_topic(cluster, partitions, assignment=assignment)
    live = LiveConsumer(cluster.bootstrap_servers, topic) if consume else None
    async with our_producer(cluster.bootstrap_servers, **producer) as p:
        run = OurRun(p, topic, partitions)
        recoveries: list[float] = []

        async def chaos() -> None:
            # Let the producer start and settle in first.
            await anyio.sleep(1.0)
            recoveries.extend(await schedule(cluster, topic, run))
            await anyio.sleep(1.0)
            run.stop.set()

        with anyio.fail_after(budget):
            async with anyio.create_task_group() as tg:
                if live is not None:
                    tg.start_soon(live.run)
                tg.start_soon(run.settle_loop)
                tg.start_soon(chaos)
                await run.produce()
                await run.finish()
                if live is not None:
                    await live.caught_up(run.ledger.expected_present(), 60)
                    live.stop.set()
    phantoms: dict[str, int] = {}
    report = await check_ours(run, cluster.bootstrap_servers, phantoms)
    outcome = Outcome(
        "ours", report, recoveries, dict(run.errors), dict(run.reasons), phantoms=phantoms
    )
    if live is not None:
        seen = run.ledger.check(live.observed)
        outcome.extra["consumer"] = {
            "delivered": len(live.observed),
            "lost": seen.lost,
            "duplicated": seen.duplicated,
            "reordered": seen.reordered,
            "backwards": live.backwards[:5],
            "errors": live.errors,
        }
    return outcome


async def run_java(
    cluster: ApacheKafka,
    schedule: Schedule,
    partitions: int = 3,
    *,
    budget: float = 240.0,
    assignment: Mapping[int, Sequence[int]] | None = None,
    consume: bool = False,
    **config: object,
) -> Outcome:
    """The Java producer writes at the same rate while the same schedule runs.

    ``assignment`` and ``consume`` as for :func:`run_ours`; the live reader here is a Java
    ``VerifiableConsumer`` (a group of its own, committing after every poll), its check in
    ``extra["consumer"]`` like ours."""
    topic = await new_topic(cluster, partitions, prefix="fo-java", assignment=assignment)
    dist = ensure_distribution(cluster.version)
    vp = VerifiableProducer(
        dist,
        cluster.bootstrap_servers,
        topic,
        max_messages=-1,
        throughput=RATE,
        config=java_config(**config),
    )
    live = (
        VerifiableConsumer(
            dist,
            cluster.bootstrap_servers,
            topic,
            f"live-java-{uuid.uuid4().hex[:8]}",
            config={"metadata.max.age.ms": 5_000, "request.timeout.ms": REQUEST_TIMEOUT_MS},
            name="live-consumer",
        )
        if consume
        else None
    )
    async with AsyncExitStack() as stack:
        if live is not None:
            await stack.enter_async_context(live)
            await live.wait_started()
        await stack.enter_async_context(vp)
        await vp.wait_until(lambda: vp.acked >= partitions * 10, 60, "first acknowledgements")
        run = JavaRun(vp, partitions)
        with anyio.fail_after(budget):
            recoveries = await schedule(cluster, topic, run)
            await anyio.sleep(1.0)
        # SIGTERM: the tool closes its producer (flushing what is pending) and exits.
        await vp.stop(grace=DELIVERY_TIMEOUT_MS / 1000 + 10)
        if live is not None:
            acked = {f"{vp.prefix}.{r.n}" for r in vp.outcomes() if r.error is None}
            with contextlib.suppress(JavaToolError):
                await live.wait_until(
                    lambda: acked <= {v for *_, v in live.records}, 60, "every acknowledged record"
                )
            live_exit = live.returncode
            await live.stop()
    phantoms: dict[str, int] = {}
    report = await check_java(vp, cluster.bootstrap_servers, partitions, phantoms)
    outcome = Outcome(
        "java", report, recoveries, dict(vp.errors), dict(vp.errors), phantoms=phantoms
    )
    if vp.error_messages:
        outcome.extra["error_messages"] = dict(vp.error_messages)
    if live is not None:
        outcome.extra["consumer"] = java_consumer_check(vp, live, partitions, live_exit)
    return outcome


def java_consumer_check(
    vp: VerifiableProducer, live: VerifiableConsumer, partitions: int, exit_code: int | None
) -> dict[str, Any]:
    """The live Java consumer's deliveries against the Java producer's ledger, in the shape
    of our live consumer's check (``exit_code``: the tool's, had it exited by itself)."""
    observed = [
        Observed(p, offset, None if v is None else v.encode()) for p, offset, _, v in live.records
    ]
    ledger, translate = java_ledger(vp.outcomes(), partitions, vp.prefix, observed)
    seen = ledger.check(translate(observed))
    backwards: list[tuple[int, int]] = []
    next_offset: dict[int, int] = {}
    for p, offset, _, _ in live.records:
        if offset < next_offset.get(p, 0):
            backwards.append((p, offset))
        next_offset[p] = offset + 1
    return {
        "delivered": len(observed),
        "lost": seen.lost,
        "duplicated": seen.duplicated,
        "reordered": seen.reordered,
        "backwards": backwards[:5],
        "errors": [] if exit_code is None else [f"VerifiableConsumer exited {exit_code}"],
    }


def record(scenario: str, outcome: Outcome, *, runs: int, ok: bool, **extra: object) -> None:
    """One row of the soak table for ``outcome`` (scenario name gets the client's name)."""
    r = outcome.report
    record_result(
        f"cluster: {scenario} [{outcome.client}]",
        runs=runs,
        records=r.produced,
        lost=r.lost,
        duplicated=r.duplicated,
        reordered=r.reordered,
        max_recovery_s=max(outcome.recoveries, default=0.0) if outcome.recoveries else None,
        ok=ok,
        evidence="" if ok else r.summary(),
        details={
            "errors": outcome.errors,
            "reasons": outcome.reasons,
            "recoveries": [round(x, 2) for x in outcome.recoveries],
            "phantoms": outcome.phantoms,
            **outcome.extra,
            **extra,
        },
    )


# --------------------------------------------------------------------------------------------
# Schedules: what happens to the cluster while a producer writes
# --------------------------------------------------------------------------------------------

#: Seconds between a node's return (in sync again) and the next disruption.
UP_S = 1.0


async def _leader(cluster: ApacheKafka, topic: str, partition: int) -> int:
    with anyio.fail_after(30):
        while True:
            leader: int = await anyio.to_thread.run_sync(cluster.leader_of, topic, partition)
            if leader >= 0:
                return leader
            await anyio.sleep(0.1)


def leader_kills(kills: int, *, graceful: bool = False) -> Schedule:
    """SIGKILL (or stop gracefully) the leader of partition ``k % partitions`` ``kills``
    times; each time measure kill -> first new acknowledgement on that partition, then
    restart the node and wait until every replica is back in sync."""

    async def schedule(cluster: ApacheKafka, topic: str, run: ProduceRun) -> list[float]:
        recoveries: list[float] = []
        for k in range(kills):
            p = k % run.partitions
            leader = await _leader(cluster, topic, p)
            t0 = time.monotonic()
            if graceful:
                await cluster.astop_node(leader)
            else:
                await cluster.akill_node(leader)
            # Answers already on their way when the process died may still arrive.
            t_dead = time.monotonic() + 0.2
            await wait_acked_since(run, p, t_dead, 60)
            # Recovery: the longest stretch without an acknowledgement on the partition.
            recoveries.append(run.longest_gap(p, t0, time.monotonic()))
            await anyio.sleep(UP_S)
            await cluster.astart_node(leader)
            await cluster.await_in_sync(topic, timeout=60)
            await anyio.sleep(UP_S)
        return recoveries

    return schedule


@dataclass
class FollowerFacts:
    """What the follower schedule saw."""

    #: Seconds from the follower's death to an acknowledgement with 2 replicas in sync.
    two_isr_ack_s: float = -1.0
    #: Acknowledgements on the partition while fewer replicas than required were in sync
    #: (must stay 0).
    acked_short_isr: int = 0
    #: The typed reasons deliveries failed with meanwhile.
    failure_reasons: dict[str, int] = field(default_factory=dict)
    #: Seconds from min.insync.replicas being met again to the next acknowledgement.
    recovery_s: float = -1.0


async def _isr(cluster: ApacheKafka, topic: str) -> list[int]:
    _, isr = await anyio.to_thread.run_sync(cluster.replicas_of, topic, 0)
    return isr


async def _set_min_isr(cluster: ApacheKafka, topic: str, value: int) -> None:
    from kafka_async import AdminClient
    from kafka_async.admin import ConfigResource, ConfigResourceType

    async with AdminClient(cluster.bootstrap_servers) as admin:
        await admin.incremental_alter_configs(
            {ConfigResource(ConfigResourceType.TOPIC, topic): {"min.insync.replicas": str(value)}},
            raise_on_error=True,
        )


def follower_kills(facts: FollowerFacts) -> Schedule:
    """On a one-partition topic with min.insync.replicas=2: SIGKILL a follower (acks=all
    goes on with 2 in-sync replicas); then require 3 in-sync replicas (writes must now fail
    with NOT_ENOUGH_REPLICAS, and nothing may be acknowledged); then start the follower
    again (writes go on once it is back in sync).

    Why not kill the second follower here: the session cluster's nodes are combined
    broker+controller nodes, so two dead nodes of three take the KRaft quorum with them;
    without a controller the ISR never shrinks, and writes time out instead of being
    refused. Raising min.insync.replicas above the ISR is the same condition for the
    leader. :func:`followers_down` kills both followers on a cluster whose only controller
    is the leader's node (test_split_cluster.py)."""

    async def schedule(cluster: ApacheKafka, topic: str, run: ProduceRun) -> list[float]:
        leader = await _leader(cluster, topic, 0)
        follower = next(n for n in cluster.node_ids if n != leader)
        t0 = time.monotonic()
        await cluster.akill_node(follower)
        with anyio.fail_after(60):
            while len(await _isr(cluster, topic)) > 2:  # noqa: ASYNC110 - polls the cluster
                await anyio.sleep(0.1)
        t_two = time.monotonic()
        facts.two_isr_ack_s = await wait_acked_since(run, 0, t_two, 30) + (t_two - t0)
        await anyio.sleep(UP_S)
        errors_before = dict(run.reasons)
        await _set_min_isr(cluster, topic, 3)
        t_short = time.monotonic()
        # Long enough for deliveries queued meanwhile to fail.
        await anyio.sleep(DELIVERY_FAILURE_S)
        if isinstance(run, JavaRun):
            run.poll()
        # The leader applies the new setting within a moment (metadata propagation).
        facts.acked_short_isr = len([t for t in run.ack_times.get(0, []) if t > t_short + 1.0])
        facts.failure_reasons = {
            k: v - errors_before.get(k, 0)
            for k, v in run.reasons.items()
            if v - errors_before.get(k, 0) > 0
        }
        # The condition clears: two in-sync replicas are enough again.
        await _set_min_isr(cluster, topic, 2)
        t_back = time.monotonic()
        facts.recovery_s = await wait_acked_since(run, 0, t_back, 60)
        await cluster.astart_node(follower)
        await cluster.await_in_sync(topic, timeout=60)
        await anyio.sleep(UP_S)
        return [facts.recovery_s]

    return schedule


#: The delivery timeout of the follower scenario (failures must come within the test), ms;
#: longer than the few seconds acks=all waits for a dead follower to leave the ISR.
FOLLOWER_DELIVERY_TIMEOUT_MS = 8_000
#: How long the follower schedule keeps only the leader in sync, seconds.
DELIVERY_FAILURE_S = FOLLOWER_DELIVERY_TIMEOUT_MS / 1000 + 2


def preferred_election(facts: dict[str, Any]) -> Schedule:
    """Elect preferred leaders through our admin client while the producer writes (the
    test first moved partition 0's leadership off its preferred replica)."""

    async def schedule(cluster: ApacheKafka, topic: str, run: ProduceRun) -> list[float]:
        from kafka_async import AdminClient
        from kafka_async.structs import TopicPartition

        replicas, _ = await anyio.to_thread.run_sync(cluster.replicas_of, topic, 0)
        preferred = replicas[0]
        facts["leader_before"] = await _leader(cluster, topic, 0)
        t0 = time.monotonic()
        async with AdminClient(cluster.bootstrap_servers) as admin:
            result = await admin.elect_leaders(
                [TopicPartition(topic, p) for p in range(run.partitions)]
            )
        facts["election_errors"] = {
            f"{tp.topic}-{tp.partition}": type(r.error).__name__
            for tp, r in result.items()
            if r.error is not None
        }
        with anyio.fail_after(30):
            while await _leader(cluster, topic, 0) != preferred:  # noqa: ASYNC110 - polls state no event announces
                await anyio.sleep(0.1)
        facts["leader_after"] = preferred
        t1 = time.monotonic()
        recovery = await wait_acked_since(run, 0, t1, 30) + (t1 - t0)
        await anyio.sleep(2 * UP_S)
        return [recovery]

    return schedule


async def move_leader_off_preferred(cluster: ApacheKafka, topic: str) -> int:
    """Stop and restart partition 0's preferred replica, so another replica leads it (the
    fixture's clusters do not move leaders back by themselves); returns the preferred id."""
    replicas, _ = await anyio.to_thread.run_sync(cluster.replicas_of, topic, 0)
    preferred = replicas[0]
    if await _leader(cluster, topic, 0) == preferred:
        await cluster.astop_node(preferred)
        await cluster.astart_node(preferred)
        await cluster.await_in_sync(topic, timeout=60)
    assert await _leader(cluster, topic, 0) != preferred
    return preferred


def full_restart() -> Schedule:
    """Stop every node (gracefully, all at once), start them all again; recovery is the
    time from every node being ready again to an acknowledgement on every partition (the
    client's part of the outage; the cluster's own restart time is not the client's)."""

    async def schedule(cluster: ApacheKafka, topic: str, run: ProduceRun) -> list[float]:
        async with anyio.create_task_group() as tg:
            for node in cluster.node_ids:
                tg.start_soon(cluster.astop_node, node, 10.0)
        await cluster.astart_stopped()
        t_ready = time.monotonic()
        recoveries = [await wait_acked_since(run, p, t_ready, 90) for p in range(run.partitions)]
        await cluster.await_in_sync(topic, timeout=60)
        await anyio.sleep(UP_S)
        return [max(recoveries)]

    return schedule


def reassign(rounds: Sequence[Mapping[int, Sequence[int]]], facts: dict[str, Any]) -> Schedule:
    """Move partitions' replicas through our admin client while the clients run: for each
    round, alter the reassignments (partition -> target replicas), wait until the
    controller lists no move and metadata shows the targets, and measure the longest
    stretch without an acknowledgement on each moved partition (a target without the
    current leader moves the leadership too)."""

    async def schedule(cluster: ApacheKafka, topic: str, run: ProduceRun) -> list[float]:
        from kafka_async import AdminClient
        from kafka_async.structs import TopicPartition

        recoveries: list[float] = []
        facts.setdefault("leaders", [])
        facts.setdefault("move_s", [])
        async with AdminClient(cluster.bootstrap_servers) as admin:
            for moves in rounds:
                before = {p: await _leader(cluster, topic, p) for p in moves}
                targets = {TopicPartition(topic, p): list(r) for p, r in moves.items()}
                t0 = time.monotonic()
                result = await admin.alter_partition_reassignments(
                    dict(targets), raise_on_error=True
                )
                assert result.ok, result.errors
                with anyio.fail_after(90):
                    while True:
                        moving = await admin.list_partition_reassignments(list(targets))
                        placed = [
                            sorted(
                                (await anyio.to_thread.run_sync(cluster.replicas_of, topic, p))[0]
                            )
                            == sorted(r)
                            for p, r in moves.items()
                        ]
                        if not moving and all(placed):
                            break
                        await anyio.sleep(0.2)
                t1 = time.monotonic()
                facts["move_s"].append(round(t1 - t0, 2))
                after = {p: await _leader(cluster, topic, p) for p in moves}
                facts["leaders"].append({p: (before[p], after[p]) for p in moves})
                for p in moves:
                    await wait_acked_since(run, p, t1, 30)
                    recoveries.append(run.longest_gap(p, t0, time.monotonic()))
                await anyio.sleep(UP_S)
        return recoveries

    return schedule


def followers_down(facts: FollowerFacts, leader: int, followers: Sequence[int]) -> Schedule:
    """The follower scenario as Kafka states it, on a cluster whose controller outlives
    two dead brokers (``controllers=1``; ``leader`` is that node): SIGKILL one follower
    (acks=all goes on with two in-sync replicas), then the other (only the leader is in
    sync: min.insync.replicas=2 refuses writes with NOT_ENOUGH_REPLICAS, nothing may be
    acknowledged), then start both again (writes go on)."""
    first, second = followers

    async def schedule(cluster: ApacheKafka, topic: str, run: ProduceRun) -> list[float]:
        assert await _leader(cluster, topic, 0) == leader
        t0 = time.monotonic()
        await cluster.akill_node(first)
        with anyio.fail_after(60):
            while len(await _isr(cluster, topic)) > 2:  # noqa: ASYNC110 - polls the cluster
                await anyio.sleep(0.1)
        t_two = time.monotonic()
        facts.two_isr_ack_s = await wait_acked_since(run, 0, t_two, 30) + (t_two - t0)
        await anyio.sleep(UP_S)
        if isinstance(run, JavaRun):
            run.poll()
        errors_before = dict(run.reasons)
        await cluster.akill_node(second)
        with anyio.fail_after(60):
            while len(await _isr(cluster, topic)) > 1:  # noqa: ASYNC110 - polls the cluster
                await anyio.sleep(0.1)
        t_short = time.monotonic()
        # Long enough for deliveries queued meanwhile to fail.
        await anyio.sleep(DELIVERY_FAILURE_S)
        if isinstance(run, JavaRun):
            run.poll()
        facts.acked_short_isr = len([t for t in run.ack_times.get(0, []) if t > t_short + 1.0])
        facts.failure_reasons = {
            k: v - errors_before.get(k, 0)
            for k, v in run.reasons.items()
            if v - errors_before.get(k, 0) > 0
        }
        async with anyio.create_task_group() as tg:
            tg.start_soon(cluster.astart_node, first)
            tg.start_soon(cluster.astart_node, second)
        with anyio.fail_after(60):
            while len(await _isr(cluster, topic)) < 2:  # noqa: ASYNC110 - polls the cluster
                await anyio.sleep(0.1)
        t_back = time.monotonic()
        facts.recovery_s = await wait_acked_since(run, 0, t_back, 60)
        await cluster.await_in_sync(topic, timeout=60)
        await anyio.sleep(UP_S)
        return [facts.recovery_s]

    return schedule
