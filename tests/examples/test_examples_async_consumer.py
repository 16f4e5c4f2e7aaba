"""examples/async_consumer.py: processes every record, commits what it processed, and on
SIGTERM commits and exits with status 0; a restart resumes after the committed offsets."""

from __future__ import annotations

import re
import signal
import time
import uuid
from collections.abc import Callable

import anyio
import pytest
from examples_helpers import load_example, produce, run_example

from kafka_async import AdminClient, ConsumerRecord, TimestampType, TopicPartition

PROCESSED = re.compile(r"^processed (\S+)/(\d+)/(\d+) key=(\S*) value=(.*)$")
COMMITTED = re.compile(r"^committed (\S+)/(\d+) (\d+)$")


def _processed(lines: list[str]) -> list[tuple[int, int, str]]:
    out = []
    for line in lines:
        m = PROCESSED.match(line)
        if m:
            out.append((int(m.group(2)), int(m.group(3)), m.group(5)))
    return out


def _record(tp: TopicPartition, offset: int) -> ConsumerRecord[bytes, bytes]:
    return ConsumerRecord(tp.topic, tp.partition, offset, 0, TimestampType.CREATE_TIME, b"", b"")


def test_offset_tracker_commits_after_processing() -> None:
    tracker = load_example("async_consumer").OffsetTracker(commit_every=3, commit_interval=1.0)
    a, b = TopicPartition("t", 0), TopicPartition("t", 1)
    assert not tracker.due()
    assert tracker.to_commit({a, b}) == {}
    tracker.processed(_record(a, 10))
    tracker.processed(_record(b, 4))
    assert not tracker.due()
    tracker.processed(_record(a, 11))
    assert tracker.due()
    # Only assigned partitions are committed; the offset is the one after the record.
    offsets = tracker.to_commit({a})
    assert offsets == {a: 12}
    assert not tracker.due()
    # A commit that never completed (cancelled, failed) leaves the offsets pending.
    assert tracker.to_commit({a, b}) == {a: 12, b: 5}
    tracker.processed(_record(a, 12))
    tracker.done({a: 12, b: 5})
    assert tracker.committed == {a: 12, b: 5}
    # a moved on to 13 while the commit of 12 was in flight: 13 is still to be committed.
    assert tracker.pending == {a: 13}


async def _group_offsets(bootstrap: str, group: str) -> dict[int, int]:
    async with AdminClient(bootstrap_servers=bootstrap) as admin:
        got = await admin.list_consumer_group_offsets(group, raise_on_error=True)
    return {tp.partition: r.offset for tp, r in got.items() if r.offset >= 0}


@pytest.mark.integration
@pytest.mark.anyio
async def test_async_consumer_sigterm_commits_and_exits_0(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(2, prefix="ex-async")
    group = f"ex-async-{uuid.uuid4().hex[:8]}"
    first = [f"first-{i}".encode() for i in range(20)]
    placed = await produce(kafka_broker, topic, first)
    per_partition: dict[int, int] = {}
    for p, offset in placed:
        per_partition[p] = max(per_partition.get(p, 0), offset + 1)
    args = ["--bootstrap-servers", kafka_broker, "--topic", topic, "--group", group]

    async with run_example("async_consumer", *args, "--commit-every", "7") as ex:
        await ex.wait_for(lambda lines: len(_processed(lines)) >= len(first), timeout=20)
        # Idle now: the periodic commit (every second) still commits the last records.
        with anyio.fail_after(15):
            while True:  # polling the broker: there is no event to wait on
                if await _group_offsets(kafka_broker, group) == per_partition:
                    break
                await anyio.sleep(0.2)
        started = time.monotonic()
        code = await ex.terminate_and_wait(timeout=20)
        shutdown = time.monotonic() - started
    assert code == 0, ex.transcript()
    # Clean and prompt, with slack for a loaded 2-core CI machine.
    assert shutdown < 12, f"shutdown took {shutdown:.1f} s"
    assert "received SIGTERM, shutting down" in ex.stderr
    processed = _processed(ex.stdout)
    # Every record once, each partition in offset order.
    assert sorted((p, o) for p, o, _ in processed) == sorted(placed)
    assert sorted(v for _, _, v in processed) == sorted(v.decode() for v in first)
    for p in per_partition:
        offsets = [o for q, o, _ in processed if q == p]
        assert offsets == sorted(offsets)
    # What it printed as committed and what the group really has both cover everything.
    printed = {int(m.group(2)): int(m.group(3)) for m in map(COMMITTED.match, ex.stdout) if m}
    assert printed == per_partition
    assert await _group_offsets(kafka_broker, group) == per_partition

    # A restart in the same group resumes after the commit: only the new records come.
    second = [f"second-{i}".encode() for i in range(5)]
    await produce(kafka_broker, topic, second)
    async with run_example("async_consumer", *args, "--max-records", "5") as ex2:
        code = await ex2.wait(timeout=20)
    assert code == 0, ex2.transcript()
    assert sorted(v for _, _, v in _processed(ex2.stdout)) == sorted(v.decode() for v in second)
    after = await _group_offsets(kafka_broker, group)
    assert sum(after.values()) == len(first) + len(second)


@pytest.mark.integration
@pytest.mark.anyio
async def test_async_consumer_handler_error_commits_only_what_was_handled(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    example = load_example("async_consumer")
    topic = new_topic(1, prefix="ex-async-err")
    group = f"ex-async-err-{uuid.uuid4().hex[:8]}"
    await produce(kafka_broker, topic, [f"r{i}".encode() for i in range(10)])
    handled: list[int] = []

    def handle(record: ConsumerRecord[bytes, bytes]) -> None:
        if record.offset == 6:
            raise ValueError("cannot handle offset 6")
        handled.append(record.offset)

    tracker = example.OffsetTracker(commit_every=4, commit_interval=3600)
    # The handler's own error comes out as itself, not wrapped in an ExceptionGroup.
    with pytest.raises(ValueError, match="offset 6"):
        await example.consume(kafka_broker, topic, group, tracker=tracker, handle=handle)
    assert handled == [0, 1, 2, 3, 4, 5]
    # Records 0-5 were handled and committed (4 by the periodic commit, the rest at the
    # end); offset 6 failed, so the group resumes there.
    assert tracker.committed == {TopicPartition(topic, 0): 6}
    assert await _group_offsets(kafka_broker, group) == {0: 6}


@pytest.mark.anyio
async def test_async_consumer_second_signal_stops_at_once_when_broker_unreachable() -> None:
    # Nothing listens on port 1: the consumer would wait for its bootstrap deadline (30 s).
    args = ["--bootstrap-servers", "127.0.0.1:1", "--topic", "t", "--group", "g"]
    async with run_example("async_consumer", *args) as ex:
        await ex.wait_for_stderr(lambda lines: any("SIGTERM or Ctrl-C" in x for x in lines), 30)
        ex.process.send_signal(signal.SIGTERM)
        await ex.wait_for_stderr(lambda lines: any("shutting down" in x for x in lines), 15)
        started = time.monotonic()
        code = await ex.terminate_and_wait(timeout=15)
    # Well below the 30 s bootstrap deadline it would otherwise wait for (the slack is for
    # a loaded CI machine).
    assert time.monotonic() - started < 10
    assert code == 1, ex.transcript()
    assert any("again, stopping now" in line for line in ex.stderr)
