"""The ``kafka_async`` Spark sink: batch and streaming writes, read back with confluent-kafka."""

from __future__ import annotations

import tempfile
import time
from collections import Counter
from typing import Any

import pytest

pytestmark = pytest.mark.integration


def test_batch_write_reads_back_exactly(
    spark: Any, kafka_broker: str, new_topic: Any, ck_consume_all: Any
) -> None:
    from pyspark.sql.types import (
        ArrayType,
        BinaryType,
        IntegerType,
        StringType,
        StructField,
        StructType,
    )

    topic = new_topic(3, prefix="sink")
    header = StructType([StructField("key", StringType()), StructField("value", BinaryType())])
    schema = StructType(
        [
            StructField("key", StringType()),
            StructField("value", BinaryType()),
            StructField("partition", IntegerType()),
            StructField("headers", ArrayType(header)),
        ]
    )
    rows = [
        (
            None if i % 5 == 0 else f"k{i}",
            f"value-{i}".encode(),
            i % 3,
            [("n", str(i).encode())] if i % 2 else [],
        )
        for i in range(300)
    ]
    df = spark.createDataFrame(rows, schema).repartition(2)
    df.write.format("kafka_async").option("kafka.bootstrap.servers", kafka_broker).option(
        "topic", topic
    ).mode("append").save()

    got = ck_consume_all(kafka_broker, topic, 3, len(rows))
    assert Counter(
        (m.partition(), m.key(), m.value(), tuple(m.headers() or ())) for m in got
    ) == Counter((p, k.encode() if k is not None else None, v, tuple(h)) for k, v, p, h in rows)


def test_batch_write_topic_column_and_modes(
    spark: Any, kafka_broker: str, new_topic: Any, ck_consume_all: Any
) -> None:
    a = new_topic(1, prefix="sink")
    b = new_topic(1, prefix="sink")
    df = spark.createDataFrame([(a, "1"), (b, "2"), (b, "3")], "topic string, value string")
    writer = df.write.format("kafka_async").option("kafka.bootstrap.servers", kafka_broker)
    writer.mode("append").save()
    assert sorted(m.value() for m in ck_consume_all(kafka_broker, a, 1, 1)) == [b"1"]
    assert sorted(m.value() for m in ck_consume_all(kafka_broker, b, 1, 2)) == [b"2", b"3"]
    with pytest.raises(Exception, match="append"):
        writer.mode("overwrite").save()
    with pytest.raises(Exception, match="value"):
        spark.createDataFrame([(a,)], "topic string").write.format("kafka_async").option(
            "kafka.bootstrap.servers", kafka_broker
        ).mode("append").save()


def test_streaming_write_reads_back_exactly(
    spark: Any, kafka_broker: str, new_topic: Any, ck_produce: Any, ck_consume_all: Any
) -> None:
    source = new_topic(2, prefix="sink-src")
    target = new_topic(2, prefix="sink-dst")
    # Recent timestamps: Kafka's time-based retention (7 days) would delete older ones.
    now_ms = int(time.time() * 1000) - 60_000
    records: list[tuple[int, bytes, bytes, list[tuple[str, bytes]], int]] = [
        (i % 2, f"k{i}".encode(), f"v{i}".encode(), [], now_ms + i) for i in range(100)
    ]
    ck_produce(kafka_broker, source, records)
    query = (
        spark.readStream.format("kafka_async")
        .option("kafka.bootstrap.servers", kafka_broker)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "60")
        .load()
        .selectExpr("key", "upper(cast(value as string)) as value", "partition")
        .writeStream.format("kafka_async")
        .option("kafka.bootstrap.servers", kafka_broker)
        .option("topic", target)
        .option("checkpointLocation", tempfile.mkdtemp(prefix="sink-ckpt-"))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(120)
    assert query.exception() is None
    got = ck_consume_all(kafka_broker, target, 2, len(records))
    assert Counter((m.partition(), m.key(), m.value()) for m in got) == Counter(
        (p, k, v.upper()) for p, k, v, _h, _t in records
    )
