"""examples/transactional_pipeline.py end to end: output and input offsets are committed
together, a failed batch is aborted and re-processed after a restart."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from examples_helpers import load_example, produce, read_to_end, run_example

from kafka_async import AdminClient, ConsumerRecord, TopicPartition
from kafka_async.consumer.config import IsolationLevelName
from tests.harness.broker_gaps import confirm_broker_gap

pytestmark = [pytest.mark.integration, pytest.mark.anyio]


def _librdkafka_read_committed_extras(bootstrap: str, topic: str, expected: int) -> str | None:
    """None when librdkafka's read_committed consumer reads exactly ``expected`` records of
    partition 0 of ``topic`` (aborted ones hidden); else how many it read."""
    import time

    from confluent_kafka import OFFSET_BEGINNING
    from confluent_kafka import Consumer as RdConsumer
    from confluent_kafka import TopicPartition as RdTopicPartition

    rd = RdConsumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"rc-{topic}",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
        }
    )
    try:
        rd.assign([RdTopicPartition(topic, 0, OFFSET_BEGINNING)])
        got = 0
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            got += sum(1 for m in rd.consume(100, timeout=0.5) if m.error() is None)
        return None if got == expected else f"{got} records (expected {expected})"
    finally:
        rd.close()


async def _topics(bootstrap: str, new_topic: Callable[..., str], n: int) -> tuple[str, str]:
    source, sink = new_topic(2, prefix="ex-txn-in"), new_topic(1, prefix="ex-txn-out")
    await produce(bootstrap, source, [f"order {i}".encode() for i in range(n)])
    return source, sink


async def _group_offsets(bootstrap: str, group: str, topic: str) -> dict[TopicPartition, int]:
    async with AdminClient(bootstrap_servers=bootstrap) as admin:
        got = await admin.list_consumer_group_offsets(group, raise_on_error=True)
    return {tp: r.offset for tp, r in got.items() if tp.topic == topic and r.offset >= 0}


async def _input_ends(bootstrap: str, topic: str) -> dict[TopicPartition, int]:
    records = await read_to_end(bootstrap, topic, 2)
    ends: dict[TopicPartition, int] = {}
    for r in records:
        ends[r.topic_partition] = max(ends.get(r.topic_partition, 0), r.offset + 1)
    return ends


def _source(record: ConsumerRecord[bytes, bytes]) -> str:
    source = dict(record.headers)["source"]
    assert source is not None  # the pipeline stamps every output with its input's position
    return source.decode()


async def test_pipeline_commits_output_and_offsets_together(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    example = load_example("transactional_pipeline")
    n = 30
    source, sink = await _topics(kafka_broker, new_topic, n)
    group, tid = f"ex-txn-{uuid.uuid4().hex[:8]}", f"ex-txn-{uuid.uuid4().hex[:8]}"
    commits: list[tuple[int, int]] = []

    stats = await example.run_pipeline(
        kafka_broker,
        source,
        sink,
        group,
        tid,
        max_records=n,
        batch_size=8,
        on_commit=lambda t, r, _offsets: commits.append((t, r)),
    )
    assert stats.records == n
    # Batches of at most 8 records: at least 4 transactions, reported in order.
    assert stats.transactions >= 4
    assert [t for t, _ in commits] == list(range(1, stats.transactions + 1))
    assert commits[-1][1] == n

    ends = await _input_ends(kafka_broker, source)
    assert stats.committed == ends
    assert await _group_offsets(kafka_broker, group, source) == ends

    inputs = {
        f"{r.topic}/{r.partition}/{r.offset}": r for r in await read_to_end(kafka_broker, source, 2)
    }
    levels: tuple[IsolationLevelName, ...] = ("read_uncommitted", "read_committed")
    for isolation in levels:
        out = await read_to_end(kafka_broker, sink, 1, isolation_level=isolation)
        # No transaction aborted: each input exactly once, transformed, key kept.
        assert Counter(map(_source, out)) == Counter(list(inputs))
        for r in out:
            original = inputs[_source(r)]
            assert r.value == (original.value or b"").upper()
            assert r.key == original.key


async def test_pipeline_aborts_a_failed_batch_and_a_restart_resumes(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    example = load_example("transactional_pipeline")
    n = 30
    source, sink = await _topics(kafka_broker, new_topic, n)
    group, tid = f"ex-txn-{uuid.uuid4().hex[:8]}", f"ex-txn-{uuid.uuid4().hex[:8]}"
    # Fail on the second record of the second transaction: the aborted transaction then
    # holds a record (the first one).
    commits: list[int] = []
    in_txn: list[str] = []
    aborted: list[str] = []

    def failing(record: ConsumerRecord[bytes, bytes]) -> Any:
        name = f"{record.topic}/{record.partition}/{record.offset}"
        if commits and in_txn and not aborted:
            aborted.extend([*in_txn, name])
            raise RuntimeError(f"cannot transform {name}")
        in_txn.append(name)
        return example.upper(record)

    def on_commit(transaction: int, _records: int, _offsets: Any) -> None:
        commits.append(transaction)
        in_txn.clear()

    with pytest.raises(RuntimeError, match="cannot transform"):
        await example.run_pipeline(
            kafka_broker,
            source,
            sink,
            group,
            tid,
            transform=failing,
            batch_size=4,
            on_commit=on_commit,
        )
    assert commits == [1]
    assert len(aborted) >= 2
    # The failed transaction's input offsets were not committed.
    first_run = await _group_offsets(kafka_broker, group, source)
    for name in aborted:
        partition, offset = map(int, name.rsplit("/", 2)[1:])
        assert first_run.get(TopicPartition(source, partition), 0) <= offset
    done_first = sum(first_run.values())
    assert 0 < done_first < n

    # The restart (same group, same transactional id: it fences the old instance) takes up
    # exactly where the last committed transaction left off.
    stats = await example.run_pipeline(
        kafka_broker, source, sink, group, tid, max_records=n - done_first, batch_size=4
    )
    assert stats.records == n - done_first
    ends = await _input_ends(kafka_broker, source)
    assert await _group_offsets(kafka_broker, group, source) == ends

    inputs = {
        f"{r.topic}/{r.partition}/{r.offset}" for r in await read_to_end(kafka_broker, source, 2)
    }
    everything = Counter(map(_source, await read_to_end(kafka_broker, sink, 1)))
    committed = Counter(
        map(_source, await read_to_end(kafka_broker, sink, 1, isolation_level="read_committed"))
    )
    # Guaranteed everywhere: every input made it to the output; the only extra copies are
    # records of the aborted transaction that reached the log before the abort (behind an
    # abort marker; the abort drops those still queued), never the record that failed.
    assert set(everything) == inputs
    assert set(committed) == inputs
    extra = everything - Counter(inputs)
    assert set(extra) <= set(aborted[:-1])
    if committed != Counter(inputs):
        # The abort marker is written and the aborted batch's input offsets were not
        # committed (asserted above); a read_committed reader must still hide its records.
        assert committed == everything
        theirs = await anyio.to_thread.run_sync(
            _librdkafka_read_committed_extras, kafka_broker, sink, len(inputs)
        )
        ours = f"{sum(committed.values())} records (expected {len(inputs)})"
        confirm_broker_gap("read_committed hiding an aborted transaction", ours, theirs)
    assert committed == Counter(inputs)


async def test_pipeline_program_stops_on_sigterm_after_committing(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    n = 12
    source, sink = await _topics(kafka_broker, new_topic, n)
    group, tid = f"ex-txn-{uuid.uuid4().hex[:8]}", f"ex-txn-{uuid.uuid4().hex[:8]}"
    args = ["--bootstrap-servers", kafka_broker, "--input", source, "--output", sink]
    args += ["--group", group, "--transactional-id", tid, "--batch-size", "5"]

    def all_committed(lines: list[str]) -> bool:
        return any(f": {n} records so far" in line for line in lines)

    async with run_example("transactional_pipeline", *args) as ex:
        await ex.wait_for(all_committed, timeout=20)
        code = await ex.terminate_and_wait(timeout=10)
    assert code == 0, ex.transcript()
    assert f"done: {n} records" in "\n".join(ex.stdout), ex.transcript()
    ends = await _input_ends(kafka_broker, source)
    assert await _group_offsets(kafka_broker, group, source) == ends
    out = await read_to_end(kafka_broker, sink, 1, isolation_level="read_committed")
    assert len(out) == n
