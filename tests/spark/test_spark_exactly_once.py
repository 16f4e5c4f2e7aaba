"""The exactly-once sink (``exactlyOnce=true``) on Apache Kafka with a real PySpark."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from kafka_async.errors import ConfigError
from kafka_async.spark.options import parse_sink_options

BASE = {"kafka.bootstrap.servers": "127.0.0.1:1"}


def test_sink_refuses_unknown_options_naming_the_known_ones() -> None:
    # A misspelt guarantee must not silently write at-least-once.
    with pytest.raises(ConfigError, match=r"'exactly_once'.*exactlyOnce, transactionalIdPrefix"):
        parse_sink_options({**BASE, "exactly_once": "true"})
    assert parse_sink_options({**BASE, "EXACTLYONCE": "true"}).exactly_once
    assert not parse_sink_options(BASE).exactly_once
    # Tools' own options pass under the prefix; the source's options are ignored.
    parse_sink_options({**BASE, "passthrough.tool.run": "7", "subscribe": "t"})
    with pytest.raises(ConfigError, match="need exactlyOnce=true"):
        parse_sink_options({**BASE, "transactionalIdPrefix": "p"})
    with pytest.raises(ConfigError, match=r"transactional\.id"):
        parse_sink_options({**BASE, "exactlyOnce": "true", "kafka.transactional.id": "x"})
    with pytest.raises(ConfigError, match="acks=all"):
        parse_sink_options({**BASE, "exactlyOnce": "true", "kafka.acks": "1"})
    with pytest.raises(ConfigError, match="transactionalIdPrefix"):
        parse_sink_options({**BASE, "exactlyOnce": "true", "transactionalIdPrefix": "a b"})
    eos = parse_sink_options({**BASE, "exactlyOnce": "true"})
    assert eos.transaction_timeout_ms == 900_000
    assert (
        parse_sink_options(
            {**BASE, "exactlyOnce": "true", "kafka.transaction.timeout.ms": "60000"}
        ).transaction_timeout_ms
        == 60_000
    )


def read_committed(bootstrap: str, topic: str, partitions: int, expected: int) -> list[Any]:
    """Every committed record of ``topic`` (confluent-kafka, read_committed)."""
    import time

    from confluent_kafka import OFFSET_BEGINNING, TopicPartition
    from confluent_kafka import Consumer as CKConsumer

    consumer = CKConsumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"check-{topic}",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
        }
    )
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    out: list[Any] = []
    deadline = time.monotonic() + 30
    try:
        while len(out) < expected and time.monotonic() < deadline:
            out.extend(m for m in consumer.consume(1000, 0.5) if m.error() is None)
        out.extend(m for m in consumer.consume(1000, 0.5) if m.error() is None)
    finally:
        consumer.close()
    return out


@pytest.mark.integration
def test_batch_write_exactly_once(spark: Any, kafka_broker: str, new_topic: Any) -> None:
    topic = new_topic(3, prefix="eos")
    rows = [(f"k{i}", f"v{i}", i % 3) for i in range(600)]
    df = spark.createDataFrame(rows, "key string, value string, partition int").repartition(3)
    (
        df.write.format("kafka_async")
        .option("kafka.bootstrap.servers", kafka_broker)
        .option("topic", topic)
        .option("exactlyOnce", "true")
        .mode("append")
        .save()
    )
    got = read_committed(kafka_broker, topic, 3, len(rows))
    assert Counter((m.key(), m.value()) for m in got) == Counter(
        (k.encode(), v.encode()) for k, v, _p in rows
    )
