"""The streaming reader's driver-side offset lookups: exact ends, a stable initial offset."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_async import TopicPartition
from kafka_async.spark import kafka_io
from kafka_async.spark.consumer_pool import pool_key
from kafka_async.spark.options import parse_source_options
from kafka_async.testing.plugin import KafkaService, importorskip_or_fail

pytestmark = pytest.mark.integration
importorskip_or_fail("pyspark")
importorskip_or_fail("pyarrow")

from kafka_async.spark.source import KafkaStreamReader  # noqa: E402


def _write(broker: str, topic: str, per_partition: int, partitions: int) -> None:
    from confluent_kafka import Producer as CKProducer

    # linger: each partition's records go in one multi-record batch, the case a broker that
    # answers ListOffsets(latest) with the last batch's base offset + 1 gets wrong.
    producer = CKProducer({"bootstrap.servers": broker, "linger.ms": 50})
    for p in range(partitions):
        for i in range(per_partition):
            producer.produce(topic, value=str(i).encode(), partition=p)
    assert producer.flush(30) == 0


def test_driver_ends_exact_with_or_without_the_probe(
    kafka_service: KafkaService, new_topic: Any
) -> None:
    """End offsets of multi-record last batches are exact. Only a broker known to answer
    ListOffsets(latest) exactly (Apache Kafka, in KRaft or ZooKeeper mode) skips the probe;
    Tansu keeps it, which its ends need."""
    broker = kafka_service.bootstrap_servers
    topic = new_topic(2, prefix="spark-ends")
    _write(broker, topic, 7, 2)
    opts = parse_source_options(
        {"kafka.bootstrap.servers": broker, "subscribe": topic}, streaming=True
    )
    tps = [TopicPartition(topic, p) for p in range(2)]
    try:
        assert kafka_io.run_driver(kafka_io.bounds_on, opts) == (
            dict.fromkeys(tps, 0),
            dict.fromkeys(tps, 7),
        )
        exact = kafka_io.run_driver(
            lambda consumer, _opts: kafka_io._exact_ends(consumer, tps), opts
        )
        if kafka_service.kind == "apache":
            assert exact == set(tps)
        elif kafka_service.kind == "tansu":
            assert exact == set()
        kept = kafka_io._driver_consumers[pool_key(opts.consumer_config, kafka_io._NO_PARTITION)]
        # Its only fetches are probes: the broker must not hold one past the data's end.
        assert kept._config.fetch_max_wait_ms == kafka_io.DRIVER_FETCH_MAX_WAIT_MS
    finally:
        kafka_io.close_driver(opts)
    # A batch read's fresh consumer agrees.
    assert kafka_io.run(kafka_io.bounds, opts) == (dict.fromkeys(tps, 0), dict.fromkeys(tps, 7))


def test_initial_offset_is_asked_once_per_query(kafka_broker: str, new_topic: Any) -> None:
    """Spark asks a new query's initial offset twice; with startingOffsets=latest both
    answers are the offsets of the first call, whatever was written in between."""
    topic = new_topic(1, prefix="spark-initial")
    _write(kafka_broker, topic, 3, 1)
    reader = KafkaStreamReader(
        parse_source_options(
            {
                "kafka.bootstrap.servers": kafka_broker,
                "subscribe": topic,
                "startingOffsets": "latest",
            },
            streaming=True,
        )
    )
    try:
        first = reader.initialOffset()
        assert first == {topic: {"0": 3}}
        _write(kafka_broker, topic, 2, 1)
        assert reader.initialOffset() == first
        # latestOffset, through the same kept consumer, sees the new records.
        assert kafka_io.run_driver(kafka_io.bounds_on, reader.options)[1] == {
            TopicPartition(topic, 0): 5
        }
    finally:
        reader.stop()
    assert kafka_io._driver_consumers == {}
