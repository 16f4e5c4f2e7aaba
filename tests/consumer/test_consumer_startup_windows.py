"""The consumer's public methods in the three windows where a group member has no (or no
settled) assignment: before its first assignment, during a rebalance (partitions revoked,
new ones not yet assigned), and after close. Against a real broker (Apache Kafka and Tansu).

The reference is what the Java client and aiokafka do (README, "Consumer: start-up,
rebalance and close"): a commit with nothing to commit is a no-op in any window, so a
``getmany`` + ``commit()`` loop runs from start-up through rebalances without an error.

The windows are made deterministic by a member whose ``on_partitions_revoked`` waits on an
event: the broker holds every other member's JoinGroup until that member has rejoined, so
they stay in the window for as long as the test needs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from unittest.mock import ANY

import anyio
import anyio.abc
import pytest
from aiokafka import AIOKafkaConsumer
from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
from aiokafka.errors import CommitFailedError as AioCommitFailedError
from aiokafka.errors import IllegalStateError as AioIllegalStateError
from consumer_helpers import produce

from kafka_async.consumer import (
    CommitFailedError,
    Consumer,
    ConsumerRebalanceListener,
    OffsetAndTimestamp,
)
from kafka_async.consumer.group.assignors import CooperativeStickyAssignor, MemberInfo
from kafka_async.errors import ClientClosedError, ConfigError, RebalanceInProgressError
from kafka_async.protocol.consumer_protocol import Assignment
from kafka_async.structs import TopicPartition
from kafka_async.testing.plugin import KafkaService

pytestmark = pytest.mark.integration

#: Sessions long enough that a loaded 2-core machine never evicts a member by accident
#: (an eviction would be a legitimate CommitFailedError, not what these tests are about).
GROUP: dict[str, Any] = {
    "session_timeout_ms": 10_000,
    "heartbeat_interval_ms": 500,
    "auto_offset_reset": "earliest",
    "enable_auto_commit": False,
}


class HoldingListener(ConsumerRebalanceListener):
    """Holds the member in ``on_partitions_revoked`` until ``release()``, while armed."""

    def __init__(self) -> None:
        self.armed = False
        self.holding = anyio.Event()
        self._release = anyio.Event()

    def arm(self) -> None:
        self.armed = True
        self.holding = anyio.Event()
        self._release = anyio.Event()

    def release(self) -> None:
        self.armed = False
        self._release.set()

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        if revoked and self.armed:
            self.holding.set()
            with anyio.fail_after(120):
                await self._release.wait()


class RecordingListener(ConsumerRebalanceListener):
    def __init__(self) -> None:
        self.events: list[tuple[str, frozenset[TopicPartition]]] = []

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        self.events.append(("revoked", frozenset(revoked)))

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        self.events.append(("assigned", frozenset(assigned)))


def _group_state(c: Consumer[Any, Any]) -> str:
    group = c.statistics()["group"]
    assert group is not None
    return str(group["state"])


async def _until(check: Callable[[], bool], timeout: float = 60) -> None:  # noqa: ASYNC109
    """Poll a condition another task makes true (no event to wait on)."""
    with anyio.fail_after(timeout):
        while not check():  # noqa: ASYNC110
            await anyio.sleep(0.05)


async def _poll_until(
    consumers: list[Consumer[Any, Any]],
    check: Callable[[], bool],
    timeout: float = 60,  # noqa: ASYNC109
) -> None:
    """Keep every consumer polling (as an application does) until ``check()``."""
    with anyio.fail_after(timeout):
        while not check():
            for c in consumers:
                await c.getmany(timeout_ms=20)


async def _commit_once_in_place(
    consumer: Consumer[Any, Any],
    polling: list[Consumer[Any, Any]],
    timeout: float = 60,  # noqa: ASYNC109
) -> None:
    """Commit, polling and trying again while the group is mid-rebalance (the refusal's advice)."""
    with anyio.fail_after(timeout):
        while True:
            try:
                await consumer.commit()
                return
            except CommitFailedError as exc:
                if not isinstance(exc.cause, RebalanceInProgressError):
                    raise
            for c in polling:
                await c.getmany(timeout_ms=20)
            await _poll_until(polling, lambda: _group_state(consumer) == "stable", timeout)


# -- the defect: commit() before the first assignment ---------------------------------------


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
@pytest.mark.anyio
async def test_commit_with_nothing_consumed_before_first_assignment_is_a_noop(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """Issue 12: ``getmany`` then ``commit()`` at start-up raised CommitFailedError because
    the member had not joined yet. Nothing was consumed, so there is nothing to commit: the
    Java client and aiokafka return without a request, and so do we."""
    topic = new_topic(2)
    produce(kafka_broker, topic, 20, partitions=2)
    group = f"early-{topic}"
    async with Consumer(topic, bootstrap_servers=kafka_broker, group_id=group, **GROUP) as c:
        assert c.group_metadata().generation_id == -1  # not joined yet: the window
        await c.commit()
        assert c.statistics()["commits"] == 0  # no request: nothing to commit
        got = 0
        early = 0
        with anyio.fail_after(60):
            while got < 20:
                if not c.assignment():
                    early += 1
                batch = await c.getmany(timeout_ms=100)
                got += sum(map(len, batch.values()))
                await c.commit()
        assert early >= 1
        for p in range(2):
            assert await c.committed(TopicPartition(topic, p)) == 10


# -- a mixed group of getmany + commit loops, ours and aiokafka's ---------------------------


@pytest.mark.anyio
async def test_mixed_group_getmany_commit_loops_through_startup_and_rebalances(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """Two of our consumers and two of aiokafka's in one group, each a ``getmany`` +
    ``commit()`` loop with manual commits, from start-up (ours commit before their first
    assignment) through two rebalances (an aiokafka member joins, another leaves). Every
    record is consumed and committed, and none of our members is lost: our loops catch
    nothing, so any error from ``commit()`` fails the test. aiokafka's loops catch what an
    aiokafka application must (its CommitFailedError during a rebalance)."""
    partitions = 6
    topic = new_topic(partitions)
    half = 600
    produce(kafka_broker, topic, half, partitions=partitions)
    group = f"mixed-loops-{topic}"
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    seen: set[tuple[int, int]] = set()
    early_commits = [0, 0]
    commits = [0, 0]
    ours_started = [anyio.Event(), anyio.Event()]
    ours_ref: list[Consumer[Any, Any] | None] = [None, None]
    stop = anyio.Event()
    aio_errors: list[str] = []

    def aio_consumer() -> AIOKafkaConsumer:
        return AIOKafkaConsumer(
            topic,
            bootstrap_servers=kafka_broker,
            group_id=group,
            partition_assignment_strategy=(RoundRobinPartitionAssignor,),
            session_timeout_ms=GROUP["session_timeout_ms"],
            heartbeat_interval_ms=GROUP["heartbeat_interval_ms"],
            auto_offset_reset="earliest",
            enable_auto_commit=False,
        )

    async def our_loop(i: int) -> None:
        async with Consumer(
            topic,
            bootstrap_servers=kafka_broker,
            group_id=group,
            partition_assignment_strategy="roundrobin",
            **GROUP,
        ) as c:
            ours_ref[i] = c
            ours_started[i].set()
            wait_ms = 0  # the first getmany returns at once: its commit precedes the join
            while not stop.is_set():
                batch = await c.getmany(timeout_ms=wait_ms, max_records=50)
                wait_ms = 100
                for recs in batch.values():
                    seen.update((r.partition, r.offset) for r in recs)
                if c.group_metadata().generation_id < 0:
                    early_commits[i] += 1
                await c.commit()  # no try/except: an error here is the defect
                commits[i] += 1

    async def aio_loop(a: AIOKafkaConsumer, until: anyio.Event) -> None:
        await a.start()  # aiokafka's start() waits for its first assignment
        try:
            while not (stop.is_set() or until.is_set()):
                batch = await a.getmany(timeout_ms=100, max_records=50)
                for recs in batch.values():
                    seen.update((r.partition, r.offset) for r in recs)
                try:
                    await a.commit()
                except (AioCommitFailedError, AioIllegalStateError) as exc:
                    aio_errors.append(type(exc).__name__)  # aiokafka's own rebalance window
        finally:
            await a.stop()

    async def committed_all(probe: Consumer[Any, Any], total: int) -> bool:
        # Offsets are contiguous from 0 and the records spread evenly: the log end of
        # each partition is total / partitions.
        for tp in tps:
            if await probe.committed(tp) != total // partitions:
                return False
        return True

    aio1_leave = anyio.Event()
    never = anyio.Event()
    aio2 = aio_consumer()

    def settled() -> bool:
        """Ours and the remaining aiokafka member share the topic, each with a part."""
        owned = [set(c.assignment()) for c in ours] + [
            {TopicPartition(tp.topic, tp.partition) for tp in aio2.assignment()}
        ]
        return all(owned) and sum(map(len, owned)) == partitions and set().union(*owned) == set(tps)

    with anyio.fail_after(240):
        async with anyio.create_task_group() as tg:
            aio1 = aio_consumer()
            tg.start_soon(aio_loop, aio1, aio1_leave)
            # Ours start while aiokafka's first member is joining or settled: they run
            # getmany + commit() from before their own first assignment.
            for i in range(2):
                tg.start_soon(our_loop, i)
            for ev in ours_started:
                await ev.wait()
            ours = [c for c in ours_ref if c is not None]
            await _until(lambda: all(c.assignment() for c in ours), 90)
            generations = [c.group_metadata().generation_id for c in ours]
            # Rebalance 1: a second aiokafka member joins.
            tg.start_soon(aio_loop, aio2, never)
            await _until(lambda: len(seen) >= half, 90)
            produce(kafka_broker, topic, half, partitions=partitions, start=half)
            # Rebalance 2: the first aiokafka member leaves.
            aio1_leave.set()
            await _until(lambda: len(seen) >= 2 * half, 90)
            with anyio.fail_after(90):
                while not await committed_all(ours[0], 2 * half):  # noqa: ASYNC110
                    await anyio.sleep(0.2)
            # The group settles with a share for each of ours (an eager rebalance may be
            # under way when the last commit lands: its window has no assignment).
            with anyio.move_on_after(60):
                await _until(settled, 60)
            final = [set(c.assignment()) for c in ours]
            after = [c.group_metadata().generation_id for c in ours]
            groups = [c.statistics()["group"] for c in ours]
            aio_owned = aio2.assignment()
            stop.set()
    assert seen == {(p, o) for p in range(partitions) for o in range(2 * half // partitions)}
    assert all(n >= 1 for n in early_commits), early_commits
    assert all(n >= early for n, early in zip(commits, early_commits, strict=True))
    # Both of ours went through the rebalances and still hold partitions.
    assert all(a > g for a, g in zip(after, generations, strict=True)), (generations, after)
    assert all(final), (final, aio_owned, groups)


# -- unsubscribe() and subscribe() while a getmany + commit loop runs ---------------------


@pytest.mark.anyio
async def test_getmany_commit_loop_through_unsubscribe_and_subscribe(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """``unsubscribe()`` gives the partitions up (and leaves) in the background and
    ``subscribe()`` joins again, while another task keeps calling ``getmany`` + ``commit()``:
    the loop never sees an error (nothing to commit between the two is a no-op), and
    every record is consumed and committed once the member is back."""
    topic = new_topic(2)
    produce(kafka_broker, topic, 100, partitions=2)
    group = f"resub-{topic}"
    tps = [TopicPartition(topic, p) for p in range(2)]
    seen: set[tuple[int, int]] = set()
    loops_unsubscribed = 0
    stop = anyio.Event()
    async with Consumer(topic, bootstrap_servers=kafka_broker, group_id=group, **GROUP) as c:

        async def loop() -> None:
            nonlocal loops_unsubscribed
            while not stop.is_set():
                batch = await c.getmany(timeout_ms=50, max_records=20)
                for recs in batch.values():
                    seen.update((r.partition, r.offset) for r in recs)
                if not c.subscription():
                    loops_unsubscribed += 1
                await c.commit()  # no try/except: any error fails the test

        with anyio.fail_after(120):
            async with anyio.create_task_group() as tg:
                tg.start_soon(loop)
                await _until(lambda: len(seen) >= 20)
                c.unsubscribe()
                assert c.assignment() == set()
                assert c.subscription() == set()
                await _until(lambda: _group_state(c) in ("left", "unjoined"))
                await _until(lambda: loops_unsubscribed >= 3)
                c.subscribe([topic])
                assert c.subscription() == {topic}
                await _until(lambda: len(c.assignment()) == 2)
                produce(kafka_broker, topic, 100, partitions=2, start=100)
                await _until(lambda: len(seen) == 200)
                with anyio.fail_after(60):
                    while [await c.committed(tp) for tp in tps] != [100, 100]:  # noqa: ASYNC110
                        await anyio.sleep(0.1)
                stop.set()
    assert seen == {(p, o) for p in range(2) for o in range(100)}


# -- every public method in each window -----------------------------------------------------


@pytest.mark.anyio
async def test_public_methods_before_first_assignment_during_rebalance_and_after_close(
    kafka_service: KafkaService, new_topic: Callable[..., str]
) -> None:
    """The table in README ("Consumer: start-up, rebalance and close"), window by window."""
    kafka_broker = kafka_service.bootstrap_servers
    topic = new_topic(4)
    produce(kafka_broker, topic, 36, partitions=4)
    # The last record of each partition alone in its batch: Tansu answers ListOffsets
    # (latest) with the last batch's base offset + 1 (see test_consumer_integration.py).
    produce(kafka_broker, topic, 4, partitions=4, start=36)
    group = f"windows-{topic}"
    tps = [TopicPartition(topic, p) for p in range(4)]
    tp0 = tps[0]
    kw: dict[str, Any] = {"bootstrap_servers": kafka_broker, "group_id": group, **GROUP}
    holder = HoldingListener()
    recorder = RecordingListener()
    t0 = time.time_ns() // 1_000_000 - 3_600_000

    async def lookups(c: Consumer[Any, Any]) -> tuple[Any, ...]:
        return (
            await c.end_offsets([tp0]),
            await c.beginning_offsets([tp0]),
            await c.offsets_for_times({tp0: t0}),
        )

    reference: tuple[Any, ...] = ()

    async def lookups_work(c: Consumer[Any, Any]) -> None:
        # Broker lookups need no assignment (Java and aiokafka alike): the same answers as
        # from a member that has its partitions.
        assert await lookups(c) == reference

    async def unassigned_calls_fail(c: Consumer[Any, Any], tp: TopicPartition) -> None:
        # Java: IllegalStateException; aiokafka: IllegalStateError; ours: ConfigError.
        with pytest.raises(ConfigError, match="not assigned"):
            await c.position(tp, timeout_ms=1000)
        with pytest.raises(ConfigError, match="not assigned"):
            c.seek(tp, 0)
        with pytest.raises(ConfigError, match="not assigned"):
            await c.seek_to_beginning(tp)
        with pytest.raises(ConfigError, match="not assigned"):
            await c.seek_to_end(tp)
        with pytest.raises(ConfigError, match="not assigned"):
            c.pause(tp)
        with pytest.raises(ConfigError, match="not assigned"):
            c.resume(tp)
        with pytest.raises(ConfigError, match="not assigned"):
            c.highwater(tp)
        with pytest.raises(ConfigError, match="not assigned"):
            c.last_stable_offset(tp)

    b: Consumer[Any, Any] = Consumer(topic, listener=holder, **kw)
    async with b:
        await _poll_until([b], lambda: len(b.assignment()) == 4)
        reference = await lookups(b)
        if kafka_service.kind == "apache":  # Tansu's ListOffsets by time differs (a gap)
            assert reference == ({tp0: 10}, {tp0: 0}, {tp0: OffsetAndTimestamp(0, ANY)})

        # Before start: nothing works but construction-time state.
        a: Consumer[Any, Any] = Consumer(topic, listener=recorder, **kw)
        with pytest.raises(ClientClosedError, match="not started"):
            await a.commit()
        assert a.assignment() == set()
        assert a.subscription() == {topic}

        # -- window 1: a has started, b holds the rebalance a's join began --------------
        holder.arm()
        await a.start()
        try:
            await _poll_until([b], holder.holding.is_set)
            assert _group_state(a) == "joining"
            assert a.group_metadata().generation_id == -1
            await a.commit()  # nothing consumed: a no-op
            await a.commit({})
            assert a.statistics()["commits"] == 0
            with pytest.raises(CommitFailedError):
                await a.commit({tp0: 1})  # not assigned (Java: not in an active group)
            assert a.assignment() == set()
            assert a.subscription() == {topic}
            assert a.paused() == set()
            await a.seek_to_beginning()  # no partitions given, none assigned: nothing
            await a.seek_to_end()
            await unassigned_calls_fail(a, tp0)
            assert await a.getmany(timeout_ms=200) == {}
            assert await a.committed(tp0) is None
            await lookups_work(a)
            assert a.statistics()["partitions"] == {}
            holder.release()
            await _poll_until([a, b], lambda: len(a.assignment()) == 2 and len(b.assignment()) == 2)

            # -- window 2: a's partitions are revoked, the new ones not yet assigned --------
            mine = set(a.assignment())
            await _poll_until([a, b], lambda: all(a.highwater(tp) is not None for tp in mine))
            for tp in mine:
                await a.position(tp)
            await a.commit()
            committed = {tp: await a.committed(tp) for tp in mine}
            assert all(v is not None for v in committed.values())
            generation = a.group_metadata().generation_id
            commits = a.statistics()["commits"]
            holder.arm()
            async with Consumer(topic, **kw) as c:
                await _poll_until([a, b], holder.holding.is_set)
                await _until(lambda: ("revoked", frozenset(mine)) in recorder.events)
                await _until(lambda: _group_state(a) == "joining")
                assert a.assignment() == set()
                assert a.group_metadata().generation_id == generation  # still held
                await a.commit()  # nothing owned: a no-op
                assert a.statistics()["commits"] == commits
                mine_tp = next(iter(mine))
                with pytest.raises(CommitFailedError):
                    await a.commit({mine_tp: committed[mine_tp] or 0})
                await unassigned_calls_fail(a, mine_tp)
                assert await a.getmany(timeout_ms=200) == {}
                assert await a.committed(mine_tp) == committed[mine_tp]
                await lookups_work(a)
                holder.release()
                await _poll_until(
                    [a, b, c],
                    lambda: (
                        sum(len(x.assignment()) for x in (a, b, c)) == 4
                        and all(x.assignment() for x in (a, b, c))
                    ),
                )
                assert a.group_metadata().generation_id > generation
        finally:
            await a.close()

        # -- window 3: after close -------------------------------------------------------
        closed = a
        with pytest.raises(ClientClosedError):
            await closed.commit()
        with pytest.raises(ClientClosedError):
            await closed.commit({tp0: 1})
        with pytest.raises(ClientClosedError):
            await closed.committed(tp0)
        with pytest.raises(ClientClosedError):
            await closed.position(tp0)
        with pytest.raises(ClientClosedError):
            closed.seek(tp0, 0)
        with pytest.raises(ClientClosedError):
            await closed.seek_to_beginning()
        with pytest.raises(ClientClosedError):
            await closed.seek_to_end()
        with pytest.raises(ClientClosedError):
            closed.pause(tp0)
        with pytest.raises(ClientClosedError):
            closed.resume(tp0)
        with pytest.raises(ClientClosedError):
            await closed.getmany()
        with pytest.raises(ClientClosedError):
            await closed.getone()
        with pytest.raises(ClientClosedError):
            await closed.end_offsets([tp0])
        with pytest.raises(ClientClosedError):
            await closed.beginning_offsets([tp0])
        with pytest.raises(ClientClosedError):
            await closed.offsets_for_times({tp0: t0})
        with pytest.raises(ClientClosedError):
            await closed.wait_for_assignment(1)
        with pytest.raises(ClientClosedError):
            closed.subscribe([topic])
        with pytest.raises(ClientClosedError):
            closed.unsubscribe()
        with pytest.raises(ClientClosedError):
            closed.assign([tp0])
        async for _ in closed:
            raise AssertionError("a closed consumer yields nothing")
        # What it knows stays readable (exporters read statistics after close).
        assert closed.assignment() == set()
        assert closed.paused() == set()
        assert closed.statistics()["closed"] is True
        await closed.close()  # again: returns


# -- the sync window of a cooperative rebalance ---------------------------------------------


class SlowCooperativeSticky(CooperativeStickyAssignor):
    """The leader's assignor, slowed on demand: the other members wait in SyncGroup (the
    window between the JoinGroup answer and the SyncGroup answer) meanwhile."""

    def __init__(self, slow: threading.Event, seconds: float) -> None:
        self.slow = slow
        self.seconds = seconds

    def assign(
        self, partitions_per_topic: Mapping[str, int], members: Sequence[MemberInfo]
    ) -> dict[str, Assignment]:
        if self.slow.is_set():
            self.slow.clear()
            time.sleep(self.seconds)  # blocks the leader's own event loop (its own thread)
        return super().assign(partitions_per_topic, members)


class GenerationListener(ConsumerRebalanceListener):
    """Records the generation each callback ran in."""

    def __init__(self) -> None:
        self.consumer: Consumer[Any, Any] | None = None
        self.generations: list[int] = []

    def _note(self) -> None:
        assert self.consumer is not None
        self.generations.append(self.consumer.group_metadata().generation_id)

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        self._note()

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        self._note()


@pytest.mark.anyio
async def test_commit_while_syncing_is_refused_without_breaking_the_rebalance(
    kafka_service: KafkaService, new_topic: Callable[..., str]
) -> None:
    """Cooperative rebalance: a member keeps its partitions while it rejoins, and between
    its JoinGroup answer and its SyncGroup answer the broker refuses commits with
    REBALANCE_IN_PROGRESS. ``commit()`` there raises CommitFailedError caused by
    RebalanceInProgressError, decided on the client as the Java client does (its
    RebalanceInProgressException), and the pending SyncGroup still completes: the member
    gets its assignment in the generation it was syncing. (Sending the commit made the
    member abandon that generation and rejoin, a rebalance of its own making.)

    Apache Kafka answers heartbeats normally while the group waits for the leader's
    SyncGroup (CompletingRebalance); Tansu answers them with REBALANCE_IN_PROGRESS, which
    ends the generation being synced by itself, so there the test stops at the refusal."""
    kafka_broker = kafka_service.bootstrap_servers
    topic = new_topic(4)
    produce(kafka_broker, topic, 400, partitions=4)
    group = f"syncing-{topic}"
    kw: dict[str, Any] = {
        "bootstrap_servers": kafka_broker,
        "group_id": group,
        "partition_assignment_strategy": "cooperative-sticky",
        **GROUP,
    }
    slow = threading.Event()
    stop = threading.Event()
    leader_owned: list[frozenset[TopicPartition]] = [frozenset()]

    async def leader_main() -> None:
        leader: Consumer[Any, Any] = Consumer(
            topic, **{**kw, "partition_assignment_strategy": SlowCooperativeSticky(slow, 4.0)}
        )
        async with leader:
            while not stop.is_set():
                await leader.getmany(timeout_ms=50)
                leader_owned[0] = frozenset(leader.assignment())

    def run_leader() -> None:
        anyio.run(leader_main)

    listener = GenerationListener()
    with anyio.fail_after(180):
        async with anyio.create_task_group() as tg:
            tg.start_soon(anyio.to_thread.run_sync, run_leader)
            try:
                # The first member is the group's leader.
                await _until(lambda: len(leader_owned[0]) == 4, 60)
                async with Consumer(topic, listener=listener, **kw) as b:
                    listener.consumer = b
                    await _poll_until(
                        [b],
                        lambda: (
                            len(b.assignment()) == 2
                            and b.statistics()["group"]["state"] == "stable"
                            and len(leader_owned[0]) == 2
                        ),
                    )
                    await _poll_until(
                        [b], lambda: all(b.highwater(tp) is not None for tp in b.assignment())
                    )
                    await b.commit()
                    commits = b.statistics()["commits"]
                    slow.set()
                    async with Consumer(topic, **kw) as c:
                        await _poll_until([b, c], lambda: _group_state(b) == "syncing", 60)
                        syncing = b.group_metadata().generation_id
                        assert b.assignment()  # cooperative: kept through the rebalance
                        with pytest.raises(CommitFailedError) as info:
                            await b.commit()
                        assert isinstance(info.value.cause, RebalanceInProgressError)
                        assert b.statistics()["commits"] == commits  # refused on the client
                        if kafka_service.kind == "apache":
                            # The leader's SyncGroup comes; b is assigned in that generation.
                            await _poll_until([b, c], lambda: syncing in listener.generations, 60)
                        await _poll_until(
                            [b, c],
                            lambda: (
                                bool(b.assignment() and c.assignment() and leader_owned[0])
                                and len(b.assignment()) + len(c.assignment()) + len(leader_owned[0])
                                == 4
                                and _group_state(b) == "stable"
                            ),
                            60,
                        )
                        # In place again: commits land. A cooperative group may still run
                        # a follow-up rebalance (Tansu does); the refusal then says "again
                        # once in place", which is what an application does.
                        await _commit_once_in_place(b, [b, c])
                        assert b.statistics()["commits"] > commits
            finally:
                stop.set()
