"""The source's Kafka I/O without Spark: planning and range reads against a real broker."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_async import TopicPartition
from kafka_async.spark import kafka_io
from kafka_async.spark.consumer_pool import pool_key
from kafka_async.spark.options import parse_source_options
from kafka_async.spark.planning import OffsetRange
from kafka_async.testing.plugin import importorskip_or_fail

pytestmark = pytest.mark.integration
importorskip_or_fail("pyarrow")


def _opts(broker: str, topic: str, **extra: str) -> Any:
    return parse_source_options(
        {"kafka.bootstrap.servers": broker, "subscribe": topic, **extra}, streaming=False
    )


def test_ranges_ending_on_transaction_markers_finish(kafka_broker: str, new_topic: Any) -> None:
    from confluent_kafka import Producer as CKProducer

    topic = new_topic(1, prefix="spark-txn")
    producer = CKProducer({"bootstrap.servers": kafka_broker, "transactional.id": topic})
    producer.init_transactions(30)
    for txn in range(2):
        producer.begin_transaction()
        for i in range(5):
            producer.produce(topic, value=f"{txn}-{i}".encode(), partition=0)
        producer.commit_transaction(30)
    # Two transactions of five records, each followed by a commit marker: offsets 0-4, 5
    # (marker), 6-10, 11 (marker); the partition ends at 12.
    ranges = kafka_io.run(kafka_io.plan_batch, _opts(kafka_broker, topic))
    assert ranges == [OffsetRange(topic, 0, 0, 12)]
    # A range that ends right after a marker must finish, not wait for a record at 11.
    opts = _opts(broker=kafka_broker, topic=topic, **{"kafkaConsumer.pollTimeoutMs": "10000"})
    values = [
        v
        for batch in kafka_io.read_range(opts, OffsetRange(topic, 0, 0, 12))
        for v in batch.column("value").to_pylist()
    ]
    assert values == [f"{t}-{i}".encode() for t in range(2) for i in range(5)]
    offsets = [
        o
        for batch in kafka_io.read_range(opts, OffsetRange(topic, 0, 3, 6))
        for o in batch.column("offset").to_pylist()
    ]
    assert offsets == [3, 4]


def test_read_range_stops_early_when_closed(kafka_broker: str, new_topic: Any) -> None:
    from confluent_kafka import Producer as CKProducer

    topic = new_topic(1, prefix="spark-close")
    producer = CKProducer({"bootstrap.servers": kafka_broker, "linger.ms": 5})
    for i in range(50_000):
        producer.produce(topic, value=b"%d" % i, partition=0)
        if i % 10_000 == 0:
            producer.poll(0)
    assert producer.flush(30) == 0
    # Spark closes the iterator when a limit is met: the consumer and its loop must go too.
    reader = kafka_io.read_range(_opts(kafka_broker, topic), OffsetRange(topic, 0, 0, 50_000))
    first = next(reader)
    assert first.num_rows > 0
    reader.close()


def test_driver_offsets_through_one_kept_consumer(kafka_broker: str, new_topic: Any) -> None:
    """The streaming reader's offset lookups reuse one connected consumer, see records
    written between two calls, leave it fetching nothing, and stop() closes it."""
    from confluent_kafka import Producer as CKProducer

    topic = new_topic(2, prefix="spark-driver")
    producer = CKProducer({"bootstrap.servers": kafka_broker, "linger.ms": 5})

    def write(per_partition: int) -> None:
        for p in range(2):
            for i in range(per_partition):
                producer.produce(topic, value=str(i).encode(), partition=p)
        assert producer.flush(30) == 0

    write(5)
    opts = parse_source_options(
        {"kafka.bootstrap.servers": kafka_broker, "subscribe": topic}, streaming=True
    )
    tps = [TopicPartition(topic, p) for p in range(2)]
    try:
        first = kafka_io.run_driver(kafka_io.bounds_on, opts)
        assert first == (dict.fromkeys(tps, 0), dict.fromkeys(tps, 5))
        assert first == kafka_io.run(kafka_io.bounds, opts)
        kept = kafka_io._driver_consumers[pool_key(opts.consumer_config, kafka_io._NO_PARTITION)]
        # The probe's partitions are given up: the kept consumer fetches nothing meanwhile.
        assert kept.assignment() == set()
        write(3)
        assert kafka_io.run_driver(kafka_io.bounds_on, opts) == (
            dict.fromkeys(tps, 0),
            dict.fromkeys(tps, 8),
        )
        assert (
            kafka_io._driver_consumers[pool_key(opts.consumer_config, kafka_io._NO_PARTITION)]
            is kept
        )
    finally:
        kafka_io.close_driver(opts)
    assert kafka_io._driver_consumers == {}
