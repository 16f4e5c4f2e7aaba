"""The source's Kafka I/O without Spark: planning and range reads against a real broker."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_async.spark import kafka_io
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
