"""Registry-aware Avro columns in Spark: records our serializer wrote (two compatible schema
versions) read through the ``kafka_async`` Spark source into typed columns with
``from_registry``, and encoded back with ``to_registry`` into bytes confluent-kafka's
``AvroDeserializer`` reads."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient as ConfluentClient
from confluent_kafka.schema_registry.avro import AvroDeserializer as CAvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

from kafka_async import Producer
from kafka_async.schema_registry import SchemaRegistryClient
from kafka_async.schema_registry.avro import AvroSerializer
from kafka_async.testing.plugin import importorskip_or_fail, skip_or_fail
from tests.harness.schema_registry import RegistryServer

pytestmark = [pytest.mark.integration, pytest.mark.interop]

V1: dict[str, Any] = {
    "type": "record",
    "name": "Trade",
    "namespace": "spark.test",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "symbol", "type": "string"},
        {"name": "side", "type": {"type": "enum", "name": "Side", "symbols": ["BUY", "SELL"]}},
    ],
}
V2: dict[str, Any] = {
    **V1,
    "fields": [
        *V1["fields"],
        {"name": "tags", "type": {"type": "array", "items": "string"}, "default": []},
        {"name": "note", "type": ["null", "string"], "default": None},
    ],
}


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    """A local SparkSession (the one tests/spark uses, when it is already running)."""
    importorskip_or_fail("pyspark")
    importorskip_or_fail("pyarrow")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        skip_or_fail("Spark needs a Java runtime (java on PATH or JAVA_HOME)")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    from kafka_async.spark import register

    running = SparkSession.getActiveSession()
    session = running or (
        SparkSession.builder.master("local[2]")
        .appName("kafka_async-schema-registry-tests")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    yield session
    if running is None:
        session.stop()


@pytest.mark.anyio
async def test_from_registry_gives_typed_columns_and_to_registry_encodes(
    spark: Any,
    kafka_broker: str,
    new_topic: Callable[..., str],
    sr: SchemaRegistryClient,
    registry: RegistryServer,
) -> None:
    from pyspark.sql import types as T
    from pyspark.sql.functions import col, struct

    from kafka_async.schema_registry.spark import from_registry, to_registry

    topic = new_topic(1)
    v1 = AvroSerializer(sr, json.dumps(V1), topic=topic)
    v2 = AvroSerializer(sr, json.dumps(V2), topic=topic)
    await v1.prepare()
    await v2.prepare()
    async with Producer(bootstrap_servers=kafka_broker) as producer:
        await producer.send(topic, v1({"id": 1, "symbol": "A", "side": "BUY"}), partition=0)
        await producer.send(
            topic,
            v2({"id": 2, "symbol": "B", "side": "SELL", "tags": ["x"], "note": "n"}),
            partition=0,
        )

    df = (
        spark.read.format("kafka_async")
        .option("kafka.bootstrap.servers", kafka_broker)
        .option("subscribe", topic)
        .load()
    )
    typed = df.select(
        from_registry(col("value"), registry.url, subject=f"{topic}-value").alias("t")
    )
    flat = typed.select("t.*")
    # The struct's own fields keep Avro's nullability (flattened, all are nullable: the
    # struct itself is, for a null value).
    fields = {f.name: (f.dataType, f.nullable) for f in typed.schema["t"].dataType.fields}
    assert fields == {
        "id": (T.LongType(), False),
        "symbol": (T.StringType(), False),
        "side": (T.StringType(), False),
        "tags": (T.ArrayType(T.StringType(), False), False),
        "note": (T.StringType(), True),
    }
    rows = sorted((r.asDict() for r in flat.collect()), key=lambda r: r["id"])
    # The v1 record is resolved into the latest version: v2's defaults fill its new fields.
    assert rows == [
        {"id": 1, "symbol": "A", "side": "BUY", "tags": [], "note": None},
        {"id": 2, "symbol": "B", "side": "SELL", "tags": ["x"], "note": "n"},
    ]

    out_subject = f"{topic}-copy-value"
    encoded = flat.select(
        to_registry(struct("*"), registry.url, subject=out_subject, schema=json.dumps(V2)).alias(
            "value"
        )
    ).collect()
    peer = CAvroDeserializer(ConfluentClient({"url": registry.url}))
    ctx = SerializationContext(topic, MessageField.VALUE)
    decoded = sorted((peer(r.value, ctx) for r in encoded), key=lambda r: r["id"])
    assert decoded == rows
    assert await sr.versions(out_subject) == [1]
