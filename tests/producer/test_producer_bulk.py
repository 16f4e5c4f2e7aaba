"""The bulk path: ``Producer.enqueue_many``."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

import anyio
import pytest
from producer_readback import consume_confluent

from kafka_async import Producer, RecordMetadata
from kafka_async.errors import (
    ClientClosedError,
    RecordTooLargeClientError,
    UnknownTopicOrPartitionError,
)
from kafka_async.producer import murmur2_partition
from kafka_async.producer.accumulator import InvalidStateError
from kafka_async.producer.config import CompressionType

pytestmark = [pytest.mark.integration]

NewTopic = Callable[..., str]


@pytest.mark.anyio
@pytest.mark.parametrize("compression", [None, "zstd"])
async def test_keyless_bulk_in_order_exactly_once(
    kafka_broker: str, new_topic: NewTopic, compression: CompressionType | None
) -> None:
    topic = new_topic(3)
    total = 20_000
    values = [i.to_bytes(4, "big") + b"v" * 40 for i in range(total)]
    async with Producer(
        bootstrap_servers=kafka_broker, compression_type=compression, max_batch_size=8192
    ) as producer:
        bulk = await producer.enqueue_many(topic, values, headers=[("h", b"1")])
        assert len(bulk) == total
        assert await bulk == total
        assert bulk.done()
        assert bulk.exception() is None
        results = bulk.results()
    assert all(isinstance(r, RecordMetadata) for r in results)
    mds: list[RecordMetadata] = results  # type: ignore[assignment]
    # Spread over partitions in batch-sized runs, offsets dense and increasing per partition.
    per_partition: dict[int, list[int]] = defaultdict(list)
    for md in mds:
        per_partition[md.partition].append(md.offset)
    assert len(per_partition) == 3
    for offsets in per_partition.values():
        assert offsets == list(range(len(offsets)))
    msgs = await anyio.to_thread.run_sync(consume_confluent, kafka_broker, topic, 3, total)
    assert len(msgs) == total
    by_position = {(m.partition(), m.offset()): m for m in msgs}
    for i, md in enumerate(mds):
        msg = by_position[(md.partition, md.offset)]
        assert msg.value() == values[i]
        assert msg.headers() == [("h", b"1")]
        assert msg.key() is None


@pytest.mark.anyio
async def test_keyed_bulk_follows_murmur2_and_keeps_call_order(
    kafka_broker: str, new_topic: NewTopic
) -> None:
    topic = new_topic(4)
    keys = [f"k{i % 37}".encode() for i in range(3000)]
    values = [i.to_bytes(4, "big") for i in range(3000)]
    async with Producer(bootstrap_servers=kafka_broker) as producer:
        bulk = await producer.enqueue_many(topic, values, keys=keys, timestamp_ms=4242)
        await bulk
        results = bulk.results()
    seen: dict[int, list[int]] = defaultdict(list)
    for i, md in enumerate(results):
        assert isinstance(md, RecordMetadata)
        assert md.partition == murmur2_partition(keys[i], 4)
        assert md.timestamp == 4242
        seen[md.partition].append(md.offset)
    for offsets in seen.values():
        assert offsets == sorted(offsets)  # call order kept within each partition
    msgs = await anyio.to_thread.run_sync(consume_confluent, kafka_broker, topic, 4, 3000)
    got = {(m.partition(), m.offset()): (m.key(), m.value()) for m in msgs}
    for i, md in enumerate(results):
        assert isinstance(md, RecordMetadata)
        assert got[(md.partition, md.offset)] == (keys[i], values[i])


@pytest.mark.anyio
async def test_bulk_with_serializers_partition_and_small_buffer(
    kafka_broker: str, new_topic: NewTopic
) -> None:
    topic = new_topic(2)
    async with Producer(
        bootstrap_servers=kafka_broker,
        value_serializer=lambda v: str(v).encode(),
        buffer_memory=8192,
        max_batch_size=1024,
        max_request_size=4096,
    ) as producer:
        bulk = await producer.enqueue_many(topic, range(2000), partition=1)
        assert producer.statistics()["buffer_used"] <= 8192 + 1024
        assert await bulk == 2000
        results = bulk.results()
        assert [r.partition for r in results if isinstance(r, RecordMetadata)] == [1] * 2000
        assert [r.offset for r in results if isinstance(r, RecordMetadata)] == list(range(2000))
        empty = await producer.enqueue_many(topic, [])
        assert await empty == 0


@pytest.mark.anyio
async def test_bulk_errors(kafka_broker: str, new_topic: NewTopic) -> None:
    topic = new_topic(1)
    async with Producer(bootstrap_servers=kafka_broker, max_request_size=1000) as producer:
        with pytest.raises(TypeError, match="value must be bytes"):
            await producer.enqueue_many(topic, [b"ok", "text"])
        with pytest.raises(TypeError, match="key must be bytes"):
            await producer.enqueue_many(topic, [b"a"], keys=[1])
        with pytest.raises(ValueError, match="2 keys for 1 values"):
            await producer.enqueue_many(topic, [b"a"], keys=[b"x", b"y"])
        with pytest.raises(RecordTooLargeClientError, match="max_request_size=1000"):
            await producer.enqueue_many(topic, [b"small", b"x" * 1000])
        with pytest.raises(UnknownTopicOrPartitionError):
            await producer.enqueue_many(topic, [b"a"], partition=5)
        bulk = await producer.enqueue_many(topic, [b"a", None])
        with pytest.raises(InvalidStateError):
            bulk.results()
        await bulk
    with pytest.raises(ClientClosedError):
        await producer.enqueue_many(topic, [b"late"])
