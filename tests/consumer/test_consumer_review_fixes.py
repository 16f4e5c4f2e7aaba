"""Regression tests for the consumer bugs found in review (issue 4), against a real broker.

Each test is named after the bug it pins down.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import anyio
import anyio.abc
import pytest
from consumer_helpers import FAST_GROUP, produce

from kafka_async.consumer import Consumer, ConsumerRebalanceListener
from kafka_async.errors import KafkaTimeoutError
from kafka_async.structs import ConsumerRecord, TopicPartition

pytestmark = pytest.mark.integration


class CommittingListener(ConsumerRebalanceListener):
    """Commits in ``on_partitions_revoked``, as an application with manual commits does."""

    def __init__(self, explicit: bool) -> None:
        self.consumer: Consumer[Any, Any] | None = None
        self.explicit = explicit
        self.to_commit: dict[TopicPartition, int] = {}
        self.revoked: list[set[TopicPartition]] = []
        self.errors: list[BaseException] = []

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        self.revoked.append(set(revoked))
        assert self.consumer is not None
        try:
            if self.explicit:
                await self.consumer.commit(dict(self.to_commit))
            else:
                await self.consumer.commit()
        except Exception as exc:  # recorded: the test asserts there were none
            self.errors.append(exc)


async def _read(c: Consumer[Any, Any], count: int) -> dict[TopicPartition, int]:
    """Read ``count`` records with getmany; the next offset per partition."""
    nxt: dict[TopicPartition, int] = {}
    got = 0
    with anyio.fail_after(30):
        while got < count:
            batch = await c.getmany(timeout_ms=200, max_records=count - got)
            for tp, recs in batch.items():
                got += len(recs)
                nxt[tp] = recs[-1].offset + 1
    return nxt


async def _committed(bootstrap: str, group: str, tps: list[TopicPartition]) -> dict[Any, Any]:
    probe: Consumer[Any, Any] = Consumer(bootstrap_servers=bootstrap, group_id=group)
    async with probe:
        return {tp: await probe.committed(tp) for tp in tps}


@pytest.mark.anyio
async def test_listener_commit_in_revoke_lands_on_close(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """close() used to mark the consumer closed before the revocation ran the listener, so
    its commit() raised ClientClosedError and the processed offsets were lost."""
    topic = new_topic(2)
    produce(kafka_broker, topic, 40, partitions=2)
    group = f"close-commit-{topic}"
    listener = CommittingListener(explicit=False)
    c: Consumer[Any, Any] = Consumer(
        topic,
        listener=listener,
        bootstrap_servers=kafka_broker,
        group_id=group,
        enable_auto_commit=False,
        **FAST_GROUP,
    )
    listener.consumer = c
    async with c:
        await c.wait_for_assignment(30)
        consumed = await _read(c, 30)
    assert listener.errors == []
    assert listener.revoked == [{TopicPartition(topic, 0), TopicPartition(topic, 1)}]
    tps = sorted(consumed)
    assert await _committed(kafka_broker, group, tps) == consumed


@pytest.mark.anyio
async def test_listener_explicit_commit_in_revoke_lands_on_unsubscribe(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """unsubscribe() used to clear the assignment before the background leave ran the
    listener: commit() committed nothing, commit(offsets) raised CommitFailedError."""
    topic = new_topic(2)
    produce(kafka_broker, topic, 40, partitions=2)
    group = f"unsub-commit-{topic}"
    listener = CommittingListener(explicit=True)
    c: Consumer[Any, Any] = Consumer(
        topic,
        listener=listener,
        bootstrap_servers=kafka_broker,
        group_id=group,
        enable_auto_commit=False,
        **FAST_GROUP,
    )
    listener.consumer = c
    async with c:
        await c.wait_for_assignment(30)
        consumed = await _read(c, 30)
        # An application's own bookkeeping: offsets with metadata-free explicit values.
        listener.to_commit = dict(consumed)
        c.unsubscribe()
        assert c.assignment() == set()
        assert c.subscription() == set()
        assert await c.getmany(timeout_ms=100) == {}
        with anyio.fail_after(10):
            while not listener.revoked:  # noqa: ASYNC110 - bounded by fail_after
                await anyio.sleep(0.05)
        tps = sorted(consumed)
        with anyio.fail_after(10):
            while {tp: await c.committed(tp) for tp in tps} != consumed:  # noqa: ASYNC110
                await anyio.sleep(0.1)
        assert listener.errors == []
        assert c.statistics()["group"]["state"] == "unjoined"


@pytest.mark.anyio
async def test_listener_commit_in_revoke_lands_on_poll_timeout(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """leaving on max_poll_interval_ms reset the generation before the listener ran, so an
    explicit-offset commit in on_partitions_revoked raised CommitFailedError."""
    topic = new_topic(1)
    produce(kafka_broker, topic, 20)
    group = f"polltimeout-commit-{topic}"
    listener = CommittingListener(explicit=True)
    c: Consumer[Any, Any] = Consumer(
        topic,
        listener=listener,
        bootstrap_servers=kafka_broker,
        group_id=group,
        enable_auto_commit=False,
        max_poll_interval_ms=1_500,
        **FAST_GROUP,
    )
    listener.consumer = c
    tp = TopicPartition(topic, 0)
    async with c:
        await c.wait_for_assignment(30)
        consumed = await _read(c, 12)
        listener.to_commit = dict(consumed)
        # Stop polling: the member leaves after max_poll_interval_ms, revoking first.
        with anyio.fail_after(15):
            while not listener.revoked:  # noqa: ASYNC110 - bounded by fail_after
                await anyio.sleep(0.1)
        assert listener.errors == []
        assert await c.committed(tp) == consumed[tp]


@pytest.mark.anyio
async def test_close_waits_for_assign_listener_instead_of_racing_it(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """leave_group() ran in close()'s task while the coordinator task was inside
    on_partitions_assigned, so the revocation interleaved with the assignment."""
    topic = new_topic(1)
    events: list[str] = []
    in_assign = anyio.Event()

    class Slow(ConsumerRebalanceListener):
        async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
            if not assigned:
                return
            events.append("assigned-start")
            in_assign.set()
            await anyio.sleep(1.0)
            events.append("assigned-end")

        async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
            events.append("revoked")

    c: Consumer[Any, Any] = Consumer(
        topic,
        listener=Slow(),
        bootstrap_servers=kafka_broker,
        group_id=f"race-{topic}",
        **FAST_GROUP,
    )
    async with c:
        with anyio.fail_after(30):
            await in_assign.wait()
    assert events == ["assigned-start", "assigned-end", "revoked"]


@pytest.mark.anyio
async def test_close_during_join_abandons_it_within_deadline(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """close() while JoinGroup is held by the broker: the join is abandoned, close returns
    well within close_timeout_ms and the member is not left half-joined."""
    topic = new_topic(1)
    group = f"join-close-{topic}"
    # A member that stays: the newcomer's join is held until the rebalance completes, which
    # takes the holder's rejoin (a few heartbeats) at least.
    async with Consumer(topic, bootstrap_servers=kafka_broker, group_id=group, **FAST_GROUP):
        c: Consumer[Any, Any] = Consumer(
            topic,
            bootstrap_servers=kafka_broker,
            group_id=group,
            close_timeout_ms=10_000,
            session_timeout_ms=10_000,
            heartbeat_interval_ms=1_000,
            auto_offset_reset="earliest",
        )
        await c.start()
        try:
            with anyio.fail_after(10):
                while c.statistics()["group"]["state"] != "joining":  # noqa: ASYNC110
                    await anyio.sleep(0.01)
        finally:
            t = time.monotonic()
            await c.close()
            took = time.monotonic() - t
        assert took < 5.0, f"close took {took:.2f} s"
        assert c.statistics()["group"]["state"] == "left"


@pytest.mark.anyio
async def test_heartbeats_continue_during_slow_revoke_listener(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """No heartbeat went out while an eager member revoked (or synced): a revoke listener
    slower than session_timeout_ms got the member evicted."""
    topic = new_topic(2)
    group = f"hb-revoke-{topic}"
    counts: list[int] = []

    class SlowRevoke(ConsumerRebalanceListener):
        consumer: Consumer[Any, Any] | None = None

        async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
            assert self.consumer is not None
            counts.append(self.consumer.statistics()["group"]["heartbeats"])
            # Longer than the session (2 s): without heartbeats the member is evicted.
            await anyio.sleep(2.5)
            counts.append(self.consumer.statistics()["group"]["heartbeats"])

    listener = SlowRevoke()
    c: Consumer[Any, Any] = Consumer(
        topic, listener=listener, bootstrap_servers=kafka_broker, group_id=group, **FAST_GROUP
    )
    listener.consumer = c
    async with c:
        await c.wait_for_assignment(30)
        member = c.group_metadata().member_id
        other: Consumer[Any, Any] = Consumer(
            topic, bootstrap_servers=kafka_broker, group_id=group, **FAST_GROUP
        )
        async with other:
            with anyio.fail_after(40):
                while not (c.assignment() and other.assignment() and len(counts) >= 2):
                    await c.getmany(timeout_ms=100)
                    await other.getmany(timeout_ms=100)
            # 300 ms heartbeats over 2.5 s: several went out during the revocation.
            assert counts[1] - counts[0] >= 3, counts
            # Not evicted: the same member id rejoined the group.
            assert c.group_metadata().member_id == member


@pytest.mark.anyio
async def test_pause_stops_records_already_taken_by_async_for(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """pause() did not stop records already taken for ``async for``: up to 499 more of the
    paused partition came out. They must stay for resume(): not returned, not skipped."""
    topic = new_topic(2)
    per_partition = 600
    produce(kafka_broker, topic, 2 * per_partition, partitions=2)
    tps = [TopicPartition(topic, 0), TopicPartition(topic, 1)]
    seen: dict[int, list[int]] = {0: [], 1: []}
    c: Consumer[Any, Any] = Consumer(bootstrap_servers=kafka_broker, auto_offset_reset="earliest")
    async with c:
        c.assign(tps)
        it = aiter(c)
        with anyio.fail_after(30):
            first: ConsumerRecord[Any, Any] = await anext(it)
        seen[first.partition].append(first.offset)
        paused = TopicPartition(topic, first.partition)
        other = 1 - first.partition
        assert c.statistics()["iterator_buffered"] > 0
        c.pause(paused)
        with anyio.fail_after(30):
            while len(seen[other]) < per_partition:
                r = await anext(it)
                assert r.partition == other, f"record {r.offset} of paused {paused}"
                seen[r.partition].append(r.offset)
            # Nothing of the paused partition comes from getmany either.
            assert paused not in await c.getmany(timeout_ms=300)
        c.resume(paused)
        with anyio.fail_after(30):
            while len(seen[first.partition]) < per_partition:
                r = await anext(it)
                seen[r.partition].append(r.offset)
    assert seen == {0: list(range(per_partition)), 1: list(range(per_partition))}


@pytest.mark.anyio
async def test_commit_deadline_covers_waiting_for_the_lock(embedded_broker: Any) -> None:
    """The wait for the commit lock and the commit itself each got the full deadline, so a
    commit could take twice its timeout."""
    from kafka_async.testing.topics import acreate_topic

    bootstrap = embedded_broker.bootstrap_servers
    await acreate_topic(bootstrap, "deadline", 1)
    tp = TopicPartition("deadline", 0)
    c: Consumer[Any, Any] = Consumer(
        bootstrap_servers=bootstrap,
        group_id="deadline-g",
        request_timeout_ms=3_000,
        # commit's deadline (Java's default.api.timeout.ms)
        default_api_timeout_ms=3_000,
        close_timeout_ms=500,
        reconnect_backoff_max_ms=200,
    )
    await c.start()
    try:
        c.assign([tp])
        embedded_broker.kill()
        lock = c._offsets._lock  # another commit in progress holds it

        async def hold(*, task_status: anyio.abc.TaskStatus[None]) -> None:
            async with lock:
                task_status.started()
                await anyio.sleep(2.5)

        async with anyio.create_task_group() as tg:
            await tg.start(hold)
            assert lock.locked()
            t = time.monotonic()
            with pytest.raises(KafkaTimeoutError):
                await c.commit({tp: 1})
            took = time.monotonic() - t
        # One 3 s deadline for the whole call (it was 2.5 s + 3 s before the fix).
        assert took < 4.5, f"commit took {took:.2f} s"
    finally:
        await c.close()
