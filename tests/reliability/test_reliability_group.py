"""Consumer-group reliability against a real broker, with ledger-tracked records.

* a member killed (SIGKILL of its process: no LeaveGroup, no final commit): its partitions are
  consumed by the others within session timeout + rebalance + 3 s, and with commits after
  processing (at-least-once) no acknowledged record is lost. A commit that a rebalance
  overtakes fails with CommitFailedError (as the Java client's does); the members carry on and
  the partition's next owner reads those records again;
* a member closing gracefully: its partitions are assigned to the others within 3 s (not
  counting the time the broker holds the JoinGroup), and every record is then read once;
* auto commit only ever covers records already returned to the caller.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable
from functools import partial
from typing import Any

import anyio
import pytest
from reliability_support import LedgerProducer

from kafka_async import Consumer, Producer
from kafka_async.consumer import CommitFailedError
from kafka_async.structs import TopicPartition
from tests.harness.ledger import Ledger, Observed
from tests.harness.soak import record_result

pytestmark = [pytest.mark.integration]

PARTITIONS = 6
SESSION_MS = 3_000
GROUP_SETTINGS: dict[str, Any] = {
    "session_timeout_ms": SESSION_MS,
    "heartbeat_interval_ms": 300,
    "auto_offset_reset": "earliest",
    "enable_auto_commit": False,
}
#: Allowance for one rebalance round on top of the session timeout.
REBALANCE_S = 3.0

_CHILD = r"""
import json, sys, anyio
from kafka_async.consumer import CommitFailedError, Consumer
bootstrap, topic, group, session = sys.argv[1:5]
async def main():
    async with Consumer(topic, bootstrap_servers=bootstrap, group_id=group,
                        enable_auto_commit=False, session_timeout_ms=int(session),
                        heartbeat_interval_ms=300, auto_offset_reset="earliest") as c:
        while True:
            batch = await c.getmany(timeout_ms=100, max_records=20)
            for tp, recs in batch.items():
                for r in recs:
                    print(json.dumps(["rec", r.partition, r.offset, r.value.decode()]),
                          flush=True)
            if batch:
                try:
                    await c.commit()  # at-least-once: commit after processing
                except CommitFailedError:
                    pass  # the group moved on: the next owner reads these records again
            print(json.dumps(["own", sorted(tp.partition for tp in c.assignment())]),
                  flush=True)
            await anyio.sleep(0.02)
anyio.run(main)
"""


class Processed:
    """What every member processed, as ledger observations, with timestamps."""

    def __init__(self) -> None:
        self.observed: list[Observed] = []
        self.last_seen: dict[int, float] = {}

    def add(self, partition: int, offset: int, value: bytes | None) -> None:
        self.observed.append(Observed(partition, offset, value))
        self.last_seen[partition] = anyio.current_time()


async def _member(
    bootstrap: str,
    topic: str,
    group: str,
    processed: Processed,
    stop: anyio.Event,
    *,
    task_status: anyio.abc.TaskStatus[Consumer[bytes, bytes]],
) -> None:
    async with Consumer(topic, bootstrap_servers=bootstrap, group_id=group, **GROUP_SETTINGS) as c:
        task_status.started(c)
        while not stop.is_set():
            batch = await c.getmany(timeout_ms=100, max_records=50)
            for recs in batch.values():
                for r in recs:
                    processed.add(r.partition, r.offset, r.value)
            if batch:
                try:
                    await c.commit()
                except CommitFailedError:
                    # A rebalance overtook the commit (Kafka answers ILLEGAL_GENERATION or
                    # REBALANCE_IN_PROGRESS; the Java client throws CommitFailedException /
                    # RebalanceInProgressException alike). At-least-once: the partition's
                    # next owner reads these records again from the last successful commit.
                    pass
            await anyio.sleep(0.01)


async def _produce(
    bootstrap: str,
    topic: str,
    ledger: Ledger,
    total: int,
    rate: float,
    stop: anyio.Event | None = None,
    done: anyio.Event | None = None,
    seen: list[Producer] | None = None,
) -> Any:
    """Produce ``total`` records (fewer if ``stop`` is set first); set ``done`` once every
    delivery is settled into ``ledger``. ``seen`` gets the producer (for a failure report)."""
    async with Producer(bootstrap_servers=bootstrap, linger_ms=5) as producer:
        if seen is not None:
            seen.append(producer)
        lp = LedgerProducer(producer, topic, ledger)
        async with anyio.create_task_group() as tg:
            tg.start_soon(lp.settle, 1e9)
            await lp.produce(total, per_second=rate, stop=stop)
    if done is not None:
        done.set()
    return lp


def _processed_all(processed: Processed, ledger: Ledger) -> bool:
    """Every acknowledged record was processed by some member (at least once)."""
    return len({(o.partition, o.offset) for o in processed.observed}) >= ledger.acked_count()


def _since(processed: Processed, partitions: set[int], t: float) -> bool:
    return all(processed.last_seen.get(p, -1.0) > t for p in partitions)


@pytest.mark.anyio
async def test_reliability_group_member_killed(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(PARTITIONS)
    group = f"kill-{uuid.uuid4().hex[:8]}"
    ledger = Ledger(PARTITIONS)
    processed = Processed()
    child_owned: list[int] = []
    child = subprocess.Popen(  # noqa: ASYNC220 - started once, read in a thread
        [sys.executable, "-c", _CHILD, kafka_broker, topic, group, str(SESSION_MS)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )

    def read_child() -> None:
        assert child.stdout is not None
        for line in child.stdout:
            item = json.loads(line)
            if item[0] == "rec":
                processed.observed.append(Observed(item[1], item[2], item[3].encode()))
            else:
                child_owned[:] = item[1]

    # Producing goes on until the orphans were taken over (plus half a second of records the
    # survivors must also get); the cap is far beyond the recovery bound.
    total, rate = 60_000, 1000.0
    stop = anyio.Event()
    stop_producing, produced = anyio.Event(), anyio.Event()
    phase = "starting"
    producers: list[Producer] = []
    try:
        with anyio.fail_after(90):
            async with anyio.create_task_group() as tg:
                # Abandoned on cancel: a deadline must not wait for the child's pipe to close
                # (the child is killed in ``finally``, after the task group).
                tg.start_soon(partial(anyio.to_thread.run_sync, read_child, abandon_on_cancel=True))
                for _ in range(2):
                    await tg.start(_member, kafka_broker, topic, group, processed, stop)
                tg.start_soon(
                    partial(
                        _produce,
                        kafka_broker,
                        topic,
                        ledger,
                        total,
                        rate,
                        stop_producing,
                        produced,
                        seen=producers,
                    )
                )
                # Wait until the child owns a share and has processed some of it.
                phase = "waiting for the child to own partitions and process 1000 records"
                while len(child_owned) == 0 or len(processed.observed) < 1000:  # noqa: ASYNC110
                    await anyio.sleep(0.05)
                orphans = set(child_owned)
                child.send_signal(signal.SIGKILL)
                killed_at = anyio.current_time()
                await anyio.to_thread.run_sync(child.wait)
                phase = f"waiting for the survivors to take over partitions {sorted(orphans)}"
                while not _since(processed, orphans, killed_at + 0.1):  # noqa: ASYNC110
                    await anyio.sleep(0.02)
                recovery = anyio.current_time() - killed_at
                await anyio.sleep(0.5)
                stop_producing.set()
                await produced.wait()
                # Let the survivors drain everything.
                phase = "waiting for the survivors to process every acknowledged record"
                while not _processed_all(processed, ledger):  # noqa: ASYNC110
                    await anyio.sleep(0.05)
                stop.set()
    except TimeoutError:
        pytest.fail(
            f"no progress within 90 s while {phase}: child owned {child_owned}, "
            f"{len(processed.observed)} records processed, {ledger.acked_count()} acknowledged; "
            f"producer: {[p.statistics() for p in producers]}"
        )
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    report = ledger.check(processed.observed)
    bound = SESSION_MS / 1000 + REBALANCE_S + 3
    record_result(
        "group member killed (SIGKILL), commits after processing",
        records=report.acked,
        lost=report.lost,
        duplicated=report.duplicated,
        reordered=0,
        max_recovery_s=recovery,
        ok=report.lost == 0 and recovery <= bound,
        evidence="" if report.lost == 0 else report.summary(),
        reprocessed=report.duplicated,
        orphaned_partitions=len(orphans),
    )
    # At-least-once: nothing acknowledged is lost; reprocessing after the kill is allowed.
    assert report.lost == 0, report.summary()
    assert report.unknown == 0
    assert report.phantom == 0
    assert recovery <= bound, f"orphaned partitions consumed again only after {recovery:.1f} s"


@pytest.mark.anyio
async def test_reliability_group_graceful_close(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(PARTITIONS)
    group = f"close-{uuid.uuid4().hex[:8]}"
    ledger = Ledger(PARTITIONS)
    processed = Processed()
    stop_a, stop_b = anyio.Event(), anyio.Event()
    stop_producing, produced = anyio.Event(), anyio.Event()
    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            a = await tg.start(_member, kafka_broker, topic, group, processed, stop_a)
            b = await tg.start(_member, kafka_broker, topic, group, processed, stop_b)
            # Producing goes on until b's partitions were taken over, and half a second longer
            # (500 records/s: a alone reads faster than that even on a loaded machine, so the
            # backlog of the rebalance drains).
            tg.start_soon(
                _produce, kafka_broker, topic, ledger, 40_000, 500.0, stop_producing, produced
            )
            while len(a.assignment()) + len(b.assignment()) < PARTITIONS or not (  # noqa: ASYNC110
                a.assignment() and b.assignment()
            ):
                await anyio.sleep(0.05)
            # Both members consuming every partition before b leaves (on a loaded machine the
            # first fetches take a while): the takeover starts from committed positions.
            started = anyio.current_time()
            while not _since(processed, set(range(PARTITIONS)), started):  # noqa: ASYNC110
                await anyio.sleep(0.05)
            orphans = b.assignment()
            left_at = anyio.current_time()
            stop_b.set()  # b leaves: commit, LeaveGroup, close
            # The takeover: b's partitions assigned to a. (Not the first record a reads from
            # each: a drains what piled up during the rebalance one partition at a time, so
            # that time is a's throughput against the backlog, longer on a loaded machine.)
            while not orphans <= a.assignment():  # noqa: ASYNC110
                await anyio.sleep(0.02)
            recovery = anyio.current_time() - left_at
            # The broker's share: how long it held a's JoinGroup after the leave (Tansu
            # holds every JoinGroup ~2 s; Kafka answers at once when all members rejoined).
            join_hold = a.statistics()["group"]["last_join_ms"] / 1000
            await anyio.sleep(0.5)
            stop_producing.set()
            await produced.wait()
            # a reads everything, b's partitions included, from where b committed.
            while not _processed_all(processed, ledger):  # noqa: ASYNC110
                await anyio.sleep(0.05)
            stop_a.set()
    report = ledger.check(processed.observed)
    record_result(
        "group member graceful close",
        records=report.acked,
        lost=report.lost,
        duplicated=report.duplicated,
        max_recovery_s=recovery,
        ok=report.lost == 0 and recovery - join_hold <= 3.0,
        broker_join_hold_s=round(join_hold, 2),
    )
    assert report.lost == 0, report.summary()
    # A graceful leave commits what was processed: nothing is read twice.
    assert report.duplicated == 0, report.summary()
    # Within 3 s of the leave, not counting the time the broker held the JoinGroup.
    assert recovery - join_hold <= 3.0, (
        f"partitions assigned to the other member {recovery:.2f} s after the leave "
        f"(the broker held the JoinGroup {join_hold:.2f} s of it)"
    )


@pytest.mark.anyio
async def test_reliability_auto_commit_covers_only_returned(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(2)
    group = f"auto-{uuid.uuid4().hex[:8]}"
    ledger = Ledger(2)
    await _produce(kafka_broker, topic, ledger, 2000, 1e9)
    returned: dict[TopicPartition, int] = {}
    violations: list[tuple[TopicPartition, int, int]] = []
    samples = 0
    with anyio.fail_after(60):
        async with Consumer(
            topic,
            bootstrap_servers=kafka_broker,
            group_id=group,
            auto_offset_reset="earliest",
            enable_auto_commit=True,
            auto_commit_interval_ms=50,
            session_timeout_ms=SESSION_MS,
            heartbeat_interval_ms=300,
            max_partition_fetch_bytes=1_000_000,
        ) as c:
            while sum(returned.values()) < 1000:
                batch = await c.getmany(timeout_ms=200, max_records=7)
                for tp, recs in batch.items():
                    returned[tp] = recs[-1].offset + 1
                # Fetched-but-not-returned records are plenty (prefetch); a commit must not
                # cover them. Sample what the group has committed right now.
                for tp in list(returned):
                    committed = await c.committed(tp)
                    samples += 1
                    if committed is not None and committed > returned[tp]:
                        violations.append((tp, committed, returned[tp]))
                # Room for the 50 ms auto-commit timer between polls.
                await anyio.sleep(0.01)
        final = dict(returned)
    # After close (final auto commit) exactly the returned positions are committed.
    async with Consumer(bootstrap_servers=kafka_broker, group_id=group) as check:
        committed_after = {tp: await check.committed(tp) for tp in final}
    record_result(
        "auto commit covers only returned records",
        runs=samples,
        records=sum(final.values()),
        ok=not violations and committed_after == final,
    )
    assert not violations, violations[:5]
    assert committed_after == final
