"""Consumer groups against a real broker: churn, mixed clients, static members, timeouts."""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import anyio
import pytest
from aiokafka import AIOKafkaConsumer
from aiokafka.coordinator.assignors.range import RangePartitionAssignor
from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
from consumer_helpers import FAST_GROUP, produce

from kafka_async.consumer import CommitFailedError, Consumer, ConsumerRebalanceListener
from kafka_async.consumer.config import AssignorName
from kafka_async.structs import TopicPartition

pytestmark = pytest.mark.integration


class OwnershipCheck:
    """Shared by all members: fails the test if two members own one partition at once."""

    def __init__(self) -> None:
        self.owner: dict[TopicPartition, str] = {}
        self.violations: list[str] = []
        self.events: list[tuple[str, str, list[TopicPartition]]] = []

    def listener(self, name: str) -> ConsumerRebalanceListener:
        check = self

        class Listener(ConsumerRebalanceListener):
            async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
                check.events.append((name, "assigned", sorted(assigned)))
                for tp in assigned:
                    other = check.owner.get(tp)
                    if other is not None and other != name:
                        check.violations.append(f"{tp} given to {name} while {other} owns it")
                    check.owner[tp] = name

            async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
                check.events.append((name, "revoked", sorted(revoked)))
                for tp in revoked:
                    if check.owner.get(tp) == name:
                        del check.owner[tp]

        return Listener()

    def crashed(self, name: str) -> None:
        for tp, owner in list(self.owner.items()):
            if owner == name:
                del self.owner[tp]


#: The member whose tasks log a record: the consumer's background tasks start in a copy of
#: the context ``member`` sets, so the name follows them (see ``_tag_member``).
_MEMBER: contextvars.ContextVar[str] = contextvars.ContextVar("member", default="")


@contextlib.contextmanager
def _tag_member() -> Iterator[None]:
    """Prefix log messages with the churn member they come from (read with ``--log-file``)."""
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        name = _MEMBER.get()
        if name:
            record.msg = f"[{name}] {record.msg}"
        return record

    logging.setLogRecordFactory(factory)
    try:
        yield
    finally:
        logging.setLogRecordFactory(previous)


async def run_churn(bootstrap: str, topic: str, total: int, strategy: AssignorName) -> None:
    """3 members, a 4th joins mid-stream, one leaves; every record read exactly once."""
    with _tag_member():
        await _run_churn(bootstrap, topic, total, strategy)


async def _run_churn(bootstrap: str, topic: str, total: int, strategy: AssignorName) -> None:
    check = OwnershipCheck()
    seen: Counter[tuple[int, int]] = Counter()
    who: dict[tuple[int, int], list[tuple[str, float]]] = {}
    group = f"churn-{topic}"
    done = anyio.Event()
    stop: dict[str, anyio.Event] = {}
    consumers: dict[str, Consumer[bytes, bytes]] = {}
    snapshot: list[str] = []

    async def member(name: str, task_status: anyio.abc.TaskStatus[None]) -> None:
        stop[name] = anyio.Event()
        _MEMBER.set(name)
        async with Consumer(
            topic,
            bootstrap_servers=bootstrap,
            group_id=group,
            listener=check.listener(name),
            partition_assignment_strategy=strategy,
            enable_auto_commit=True,
            auto_commit_interval_ms=300,
            **FAST_GROUP,
        ) as c:
            consumers[name] = c
            task_status.started()
            while not stop[name].is_set() and not done.is_set():
                batch = await c.getmany(timeout_ms=100, max_records=max(20, total // 500))
                for recs in batch.values():
                    for r in recs:
                        seen[(r.partition, r.offset)] += 1
                        if seen[(r.partition, r.offset)] > 1:
                            who.setdefault((r.partition, r.offset), []).append(
                                (name, time.monotonic())
                            )
                        else:
                            who[(r.partition, r.offset)] = [(name, time.monotonic())]
                if len(seen) >= total:
                    done.set()
                # Slow consumers, so the joins and leaves happen mid-stream.
                await anyio.sleep(0.01)

    def describe() -> str:
        """Where each member stands (taken before the deadline cancels them)."""
        per_partition: Counter[int] = Counter(p for p, _ in seen)
        lines = [f"seen {len(seen)}/{total}, per partition {sorted(per_partition.items())}"]
        for n, c in consumers.items():
            st = c.statistics()
            g = st["group"] or {}
            parts = {k: (v["position"], v["high_watermark"]) for k, v in st["partitions"].items()}
            lines.append(
                f"{n}: stopped={stop[n].is_set()} closed={st['closed']} state={g.get('state')} "
                f"gen={g.get('generation_id')} member={g.get('member_id')} "
                f"rejoin={g.get('rejoin_needed')} ({g.get('rejoin_reason')}) "
                f"rebalances={g.get('rebalances')} since_poll={g.get('seconds_since_poll')} "
                f"partitions(position, hw)={parts} fetcher={st['fetcher']}"
            )
        lines.append(f"events {check.events}")
        return "\n".join(lines)

    watch = anyio.CancelScope()

    async def watchdog() -> None:
        with watch:
            await anyio.sleep(deadline - 2)
            snapshot.append(describe())

    deadline = 120
    try:
        with anyio.fail_after(deadline):
            async with anyio.create_task_group() as tg:
                tg.start_soon(watchdog)
                for name in ("a", "b", "c"):
                    await tg.start(member, name)
                while len(seen) < total // 4:  # noqa: ASYNC110 - polling a counter
                    await anyio.sleep(0.05)
                await tg.start(member, "d")
                while len(seen) < total // 2:  # noqa: ASYNC110 - polling a counter
                    await anyio.sleep(0.05)
                stop["b"].set()  # a graceful leave: commits, revokes, LeaveGroup
                await done.wait()
                watch.cancel()
    except TimeoutError:
        pytest.fail(f"churn did not finish within {deadline} s:\n" + "\n".join(snapshot))

    assert not check.violations, check.violations[:5]
    assert len(seen) == total, f"{total - len(seen)} records never consumed"
    dupes = [k for k, n in seen.items() if n > 1]
    assert not dupes, (
        f"{len(dupes)} records consumed twice, e.g. {dupes[:3]} by {who[dupes[0]]}, "
        f"events {check.events}"
    )
    # The work was shared (which members got a share before the run ended is timing).
    names = {e[0] for e in check.events if e[1] == "assigned" and e[2]}
    assert len(names) >= 2, check.events


@pytest.mark.anyio
async def test_group_churn_small(kafka_broker: str, new_topic: Callable[..., str]) -> None:
    topic = new_topic(6)
    produce(kafka_broker, topic, 10_000, partitions=6)
    await run_churn(kafka_broker, topic, 10_000, "range")


@pytest.mark.anyio
async def test_group_churn_cooperative(kafka_broker: str, new_topic: Callable[..., str]) -> None:
    topic = new_topic(6)
    produce(kafka_broker, topic, 6_000, partitions=6)
    await run_churn(kafka_broker, topic, 6_000, "cooperative-sticky")


@pytest.mark.slow
@pytest.mark.anyio
async def test_group_churn_100k(kafka_broker: str, new_topic: Callable[..., str]) -> None:
    topic = new_topic(6)
    produce(kafka_broker, topic, 100_000, partitions=6)
    await run_churn(kafka_broker, topic, 100_000, "range")


@pytest.mark.anyio
async def test_rebalance_during_held_sync_rejoins_in_that_rebalance(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """A rebalance that starts while a member's SyncGroup is held by the broker: the member
    rejoins within that rebalance, so one more generation settles the group.

    Tansu holds a follower's SyncGroup that arrives before the leader's (a joining member is
    answered first) until the session timeout, then answers REBALANCE_IN_PROGRESS; Kafka
    answers it at once when the rebalance starts. A member waiting for it missed the next
    join phase, and its late rejoin forced yet another generation; two such members kept
    each other out of every generation (test_group_churn_small hung until its deadline)."""
    topic = new_topic(4)
    kw: dict[str, Any] = {
        "bootstrap_servers": kafka_broker,
        "group_id": f"held-sync-{topic}",
        "partition_assignment_strategy": "range",
        **FAST_GROUP,
    }

    def group(c: Consumer[bytes, bytes]) -> dict[str, Any]:
        g: dict[str, Any] = c.statistics()["group"]
        return g

    async with Consumer(topic, **kw) as a:
        b = Consumer(topic, **kw)
        async with b:
            with anyio.fail_after(30):
                while not (  # noqa: ASYNC110 - polling statistics
                    a.assignment() and b.assignment() and group(a)["state"] == "stable"
                ):
                    await anyio.sleep(0.05)
            async with Consumer(topic, **kw) as d:
                # d joins first, so its JoinGroup is answered before the leader's and its
                # SyncGroup waits; seen waiting twice, 0.3 s apart, it is held.
                held = None
                with anyio.move_on_after(15):
                    while held is None:
                        g = group(d)
                        if g["state"] == "syncing":
                            await anyio.sleep(0.3)
                            if group(d)["state"] == "syncing" and (
                                group(d)["generation_id"] == g["generation_id"]
                            ):
                                held = g["generation_id"]
                        await anyio.sleep(0.01)
                if held is None:
                    pytest.skip(
                        "the scenario needs a follower's SyncGroup held for a while; this "
                        "broker answered it within 0.3 s every time in 15 s (Kafka answers "
                        "it as soon as the leader's SyncGroup arrives)"
                    )
                await b.close()  # LeaveGroup: the rebalance starts during the held SyncGroup
                with anyio.fail_after(30):
                    while not (  # noqa: ASYNC110 - polling statistics
                        len(a.assignment()) + len(d.assignment()) == 4
                        and a.assignment()
                        and d.assignment()
                        and group(a)["state"] == group(d)["state"] == "stable"
                    ):
                        await anyio.sleep(0.05)
                # One generation after the held one: d joined the rebalance b's leave began.
                assert group(d)["generation_id"] == group(a)["generation_id"] == held + 1, (
                    group(a),
                    group(d),
                )


# -- a crashed member ------------------------------------------------------------------------

_CHILD = r"""
import json, sys, anyio
from kafka_async.consumer import CommitFailedError, Consumer
bootstrap, topic, group = sys.argv[1:4]
async def main():
    async with Consumer(topic, bootstrap_servers=bootstrap, group_id=group,
                        enable_auto_commit=False, session_timeout_ms=2000,
                        heartbeat_interval_ms=300, auto_offset_reset="earliest") as c:
        while True:
            batch = await c.getmany(timeout_ms=200, max_records=50)
            for tp, recs in batch.items():
                for r in recs:
                    print(json.dumps(["rec", r.partition, r.offset]), flush=True)
            if batch:
                try:
                    await c.commit()
                except CommitFailedError:
                    continue  # a rebalance overtook it: the next owner reads them again
                for tp, recs in batch.items():
                    print(json.dumps(["commit", tp.partition, recs[-1].offset + 1]), flush=True)
            await anyio.sleep(0.02)
anyio.run(main)
"""


@pytest.mark.anyio
async def test_crashed_member_partitions_reassigned(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """A member killed with SIGKILL (no LeaveGroup): its partitions move to the survivor
    within the session timeout, and only records after its last commit are read twice."""
    topic = new_topic(4)
    total = 4000
    produce(kafka_broker, topic, total, partitions=4)
    group = f"crash-{topic}"
    child = subprocess.Popen(  # noqa: ASYNC220 - started once, read in a thread
        [sys.executable, "-c", _CHILD, kafka_broker, topic, group],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    child_seen: list[tuple[int, int]] = []
    committed: dict[int, int] = {}
    seen: Counter[tuple[int, int]] = Counter()

    def read_child() -> None:
        # Reads to EOF: after the kill, whatever the child printed is still collected.
        assert child.stdout is not None
        for line in child.stdout:
            kind, p, o = json.loads(line)
            if kind == "rec":
                child_seen.append((p, o))
            else:
                committed[p] = o

    async def consume(c: Consumer[bytes, bytes], max_records: int) -> None:
        batch = await c.getmany(timeout_ms=100, max_records=max_records)
        for recs in batch.values():
            seen.update((r.partition, r.offset) for r in recs)
        if batch:
            try:
                await c.commit()
            except CommitFailedError:
                # A rebalance overtook the commit (Kafka answers ILLEGAL_GENERATION; the Java
                # client throws CommitFailedException alike): these records are read again.
                pass

    try:
        async with (
            Consumer(
                topic,
                bootstrap_servers=kafka_broker,
                group_id=group,
                enable_auto_commit=False,
                **FAST_GROUP,
            ) as c,
            anyio.create_task_group() as tg,
        ):
            # Abandoned on cancel: a deadline must not wait for the child's pipe to close
            # (the child is killed in ``finally``).
            tg.start_soon(partial(anyio.to_thread.run_sync, read_child, abandon_on_cancel=True))
            with anyio.fail_after(60):
                # Both consume slowly until the child has read and committed a share.
                while len(child_seen) < 300 or not committed or not c.assignment():
                    await consume(c, 10)
                    await anyio.sleep(0.05)
                assert len(c.assignment()) == 2
                child.send_signal(signal.SIGKILL)
                killed_at = time.monotonic()
                await anyio.to_thread.run_sync(child.wait)
                while len(c.assignment()) < 4:
                    await consume(c, 10)
                took = time.monotonic() - killed_at
                # Session timeout (2 s) plus one rebalance round on Tansu (~1 s), measured at
                # about 3-4 s; the bound leaves room for a loaded 2-core CI runner.
                assert took < 15.0, f"partitions reassigned only after {took:.1f} s"
                while len(set(seen) | set(child_seen)) < total:
                    await consume(c, 1000)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    everything = Counter(seen)
    everything.update(child_seen)
    assert set(everything) == {(p, o) for p in range(4) for o in range(total // 4)}
    twice = sorted(k for k, n in everything.items() if n > 1)
    for p, o in twice:
        # Only records at or after the crashed member's last commit are read twice.
        assert o >= committed.get(p, 0), (p, o, committed)


# -- mixed with aiokafka ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("strategy", "aio_assignor"),
    [("range", RangePartitionAssignor), ("roundrobin", RoundRobinPartitionAssignor)],
)
@pytest.mark.anyio
async def test_mixed_group_with_aiokafka(
    kafka_broker: str, new_topic: Callable[..., str], strategy: AssignorName, aio_assignor: Any
) -> None:
    topic = new_topic(6)
    total = 3000
    produce(kafka_broker, topic, total, partitions=6)
    group = f"mixed-{strategy}-{topic}"
    seen: Counter[tuple[int, int]] = Counter()
    sets: list[set[TopicPartition]] = []
    aio = [
        AIOKafkaConsumer(
            topic,
            bootstrap_servers=kafka_broker,
            group_id=group,
            partition_assignment_strategy=(aio_assignor,),
            session_timeout_ms=6000,
            heartbeat_interval_ms=500,
            auto_offset_reset="earliest",
            enable_auto_commit=True,
            auto_commit_interval_ms=300,
        )
        for _ in range(2)
    ]
    ours = [
        Consumer(
            topic,
            bootstrap_servers=kafka_broker,
            group_id=group,
            partition_assignment_strategy=strategy,
            auto_commit_interval_ms=300,
            session_timeout_ms=6000,
            heartbeat_interval_ms=500,
            auto_offset_reset=FAST_GROUP["auto_offset_reset"],
        )
        for _ in range(2)
    ]
    try:
        for a in aio:
            await a.start()
        for o in ours:
            await o.start()
        deadline = time.monotonic() + 60
        while True:
            assert time.monotonic() < deadline, (len(seen), sets)
            for o in ours:
                batch = await o.getmany(timeout_ms=50, max_records=20)
                for recs in batch.values():
                    seen.update((r.partition, r.offset) for r in recs)
            for a in aio:
                batch = await a.getmany(timeout_ms=50, max_records=20)
                for recs in batch.values():
                    seen.update((r.partition, r.offset) for r in recs)
            sets = [o.assignment() for o in ours] + [
                {TopicPartition(tp.topic, tp.partition) for tp in a.assignment()} for a in aio
            ]
            if len(seen) >= total and all(sets):
                break
            await anyio.sleep(0.01)
        # Stable: every member got a share, and the shares partition the topic.
        assert all(len(s) >= 1 for s in sets), sets
        union: set[TopicPartition] = set()
        for s in sets:
            assert not (union & s), f"partitions owned twice: {union & s}"
            union |= s
        assert union == {TopicPartition(topic, p) for p in range(6)}
        assert len(seen) == total
    finally:
        # start()/close() pairs nest like the task groups they open: close in reverse.
        for o in reversed(ours):
            await o.close()
        for a in aio:
            await a.stop()


# -- static membership, poll timeout, commit failures, close ----------------------------------


@pytest.mark.anyio
async def test_static_member_gets_its_partitions_back(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(4)
    group = f"static-{topic}"
    kw: dict[str, Any] = {
        "bootstrap_servers": kafka_broker,
        "group_id": group,
        "partition_assignment_strategy": "range",
        **FAST_GROUP,
        "session_timeout_ms": 6000,
        "heartbeat_interval_ms": 500,
    }
    async with Consumer(topic, group_instance_id="static-b", **kw) as b:
        async with Consumer(topic, group_instance_id="static-a", **kw) as a:
            with anyio.fail_after(30):
                while len(a.assignment()) + len(b.assignment()) != 4 or not (
                    a.assignment() and b.assignment()
                ):
                    await a.getmany(timeout_ms=100)
                    await b.getmany(timeout_ms=100)
            first_a, first_b = a.assignment(), b.assignment()
            gen = b.statistics()["group"]["generation_id"]
        # "a" closed without LeaveGroup (static); it comes back with the same instance id.
        async with Consumer(topic, group_instance_id="static-a", **kw) as a2:
            with anyio.fail_after(30):
                while not a2.assignment():
                    await a2.getmany(timeout_ms=100)
                    await b.getmany(timeout_ms=100)
            assert a2.assignment() == first_a
            assert b.assignment() == first_b
            # Ordering by instance id (Java's rule) gave "static-a" the first range.
            assert TopicPartition(topic, 0) in first_a
            assert b.statistics()["group"]["generation_id"] >= gen


@pytest.mark.anyio
async def test_poll_timeout_leaves_and_rejoins(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(2)
    group = f"poll-{topic}"
    kw: dict[str, Any] = {"bootstrap_servers": kafka_broker, "group_id": group, **FAST_GROUP}
    async with (
        Consumer(topic, max_poll_interval_ms=1500, **kw) as slow,
        Consumer(topic, **kw) as busy,
    ):
        with anyio.fail_after(30):
            while not (slow.assignment() and busy.assignment()):
                await slow.getmany(timeout_ms=50)
                await busy.getmany(timeout_ms=50)
        # "slow" stops polling: after max_poll_interval_ms it leaves, "busy" gets it all.
        with anyio.fail_after(30):
            while len(busy.assignment()) != 2:
                await busy.getmany(timeout_ms=100)
        assert slow.assignment() == set()
        with pytest.raises(CommitFailedError):
            await slow.commit({TopicPartition(topic, 0): 0})
        # Polling again rejoins.
        with anyio.fail_after(30):
            while not (slow.assignment() and len(busy.assignment()) == 1):
                await slow.getmany(timeout_ms=50)
                await busy.getmany(timeout_ms=50)


@pytest.mark.anyio
async def test_commit_with_stale_generation_is_typed_error(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(1)
    group = f"stale-{topic}"
    async with Consumer(topic, bootstrap_servers=kafka_broker, group_id=group, **FAST_GROUP) as c:
        await c.wait_for_assignment(30)
        gen, member, _ = c._coordinator.generation()  # type: ignore[union-attr]
        with pytest.raises(CommitFailedError) as info:
            await c._offsets.commit(
                {TopicPartition(topic, 0): __import__("kafka_async").OffsetAndMetadata(1)},
                generation_id=gen + 7,
                member_id=member,
            )
        assert info.value.cause is not None
        assert info.value.cause.code in (22, 25, 27)


@pytest.mark.anyio
async def test_close_returns_with_broker_gone(embedded_broker: Any) -> None:
    from kafka_async.testing.topics import acreate_topic

    bootstrap = embedded_broker.bootstrap_servers
    await acreate_topic(bootstrap, "gone", 2)
    produce(bootstrap, "gone", 50, partitions=2)
    c = Consumer(
        "gone", bootstrap_servers=bootstrap, group_id="gone-g", close_timeout_ms=2000, **FAST_GROUP
    )
    await c.start()
    try:
        await c.wait_for_assignment(30)
        got = 0
        with anyio.fail_after(20):
            while got < 50:
                batch = await c.getmany(timeout_ms=200)
                got += sum(map(len, batch.values()))
        embedded_broker.kill()
        # Close once the consumer has noticed (a failed heartbeat), not after a guess.
        with anyio.fail_after(20):
            while not c.statistics()["group"]["heartbeat_failures"]:  # noqa: ASYNC110
                await anyio.sleep(0.05)
    finally:
        # close() exits the consumer's task group, so it cannot run inside a cancel scope
        # opened after start(); its own deadline is what is under test here.
        t = time.monotonic()
        await c.close()
        took = time.monotonic() - t
    # close_timeout_ms (2 s) plus socket closing; generous for a loaded 2-core CI runner.
    assert took < 2.0 + 5.0, f"close took {took:.2f} s"


@pytest.mark.anyio
async def test_group_survives_broker_restart(durable_broker: Any) -> None:
    """The coordinator (the only broker) dies and comes back: the member finds it again,
    rejoins if the group was forgotten, and reads on from its commits without loss."""
    from kafka_async.testing.topics import acreate_topic

    bootstrap = durable_broker.bootstrap_servers
    await acreate_topic(bootstrap, "restart", 2)
    produce(bootstrap, "restart", 200, partitions=2)
    seen: set[tuple[int, int]] = set()
    async with Consumer(
        "restart",
        bootstrap_servers=bootstrap,
        group_id="restart-g",
        enable_auto_commit=False,
        reconnect_backoff_max_ms=200,
        **FAST_GROUP,
    ) as c:
        with anyio.fail_after(30):
            while len(seen) < 200:
                batch = await c.getmany(timeout_ms=200)
                for recs in batch.values():
                    seen.update((r.partition, r.offset) for r in recs)
                if batch:
                    await c.commit()
        await anyio.to_thread.run_sync(durable_broker.kill)
        await anyio.to_thread.run_sync(durable_broker.restart)
        await anyio.to_thread.run_sync(
            lambda: produce(bootstrap, "restart", 100, partitions=2, start=200)
        )
        with anyio.fail_after(60):
            while len(seen) < 300:
                batch = await c.getmany(timeout_ms=200)
                for recs in batch.values():
                    seen.update((r.partition, r.offset) for r in recs)
        assert seen == {(p, o) for p in range(2) for o in range(150)}


@pytest.mark.anyio
async def test_unsubscribe_resubscribe_and_plain_listener(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    first, second = new_topic(2), new_topic(1)
    produce(kafka_broker, first, 20, partitions=2)
    produce(kafka_broker, second, 7)
    calls: list[tuple[str, set[TopicPartition]]] = []

    class PlainListener:  # plain (not async) methods are accepted too
        def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
            calls.append(("revoked", revoked))

        def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
            calls.append(("assigned", assigned))

    async with Consumer(
        bootstrap_servers=kafka_broker, group_id=f"unsub-{first}", **FAST_GROUP
    ) as c:
        c.subscribe([first], listener=PlainListener())
        got = 0
        with anyio.fail_after(30):
            while got < 20:
                got += sum(map(len, (await c.getmany(timeout_ms=200)).values()))
        assert ("assigned", {TopicPartition(first, 0), TopicPartition(first, 1)}) in calls
        c.unsubscribe()
        assert c.assignment() == set()
        assert await c.getmany(timeout_ms=200) == {}
        # What was consumed is committed on the way out (auto commit, in the background).
        with anyio.fail_after(5):
            while await c.committed(TopicPartition(first, 0)) != 10:  # noqa: ASYNC110
                await anyio.sleep(0.1)
        c.subscribe([second])
        assert c.subscription() == {second}
        got = 0
        with anyio.fail_after(30):
            while got < 7:
                batch = await c.getmany(timeout_ms=200)
                assert all(tp.topic == second for tp in batch)
                got += sum(map(len, batch.values()))
