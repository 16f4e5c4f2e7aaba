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


READING: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Reading",
    "type": "object",
    "properties": {
        "sensor": {"type": "string"},
        "value": {"type": "number"},
        "count": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "place": {"$ref": "#/definitions/Place"},
        "note": {"type": ["string", "null"]},
    },
    "required": ["sensor", "value", "count", "tags"],
    "definitions": {
        "Place": {
            "type": "object",
            "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
            "required": ["lat", "lon"],
        }
    },
}


def _trade_class() -> type[Any]:
    """``kt.spark.Trade``: scalars, an enum, a nested message, a repeated field and a map."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName("kt_spark.proto")
    except KeyError:
        fdp = descriptor_pb2.FileDescriptorProto(
            name="kt_spark.proto", package="kt.spark", syntax="proto3"
        )
        trade = fdp.message_type.add(name="Trade")
        side = trade.enum_type.add(name="Side")
        side.value.add(name="BUY", number=0)
        side.value.add(name="SELL", number=1)
        money = trade.nested_type.add(name="Money")
        money.field.add(name="currency", number=1, type=9, label=1)
        money.field.add(name="cents", number=2, type=3, label=1)
        entry = trade.nested_type.add(name="CountsEntry")
        entry.options.map_entry = True
        entry.field.add(name="key", number=1, type=9, label=1)
        entry.field.add(name="value", number=2, type=5, label=1)
        trade.field.add(name="id", number=1, type=3, label=1)
        trade.field.add(name="symbol", number=2, type=9, label=1)
        trade.field.add(name="side", number=3, type=14, label=1, type_name=".kt.spark.Trade.Side")
        trade.field.add(name="price", number=4, type=11, label=1, type_name=".kt.spark.Trade.Money")
        trade.field.add(name="tags", number=5, type=9, label=3)
        trade.field.add(
            name="counts", number=6, type=11, label=3, type_name=".kt.spark.Trade.CountsEntry"
        )
        pool.Add(fdp)
    cls: type[Any] = message_factory.GetMessageClass(pool.FindMessageTypeByName("kt.spark.Trade"))
    return cls


@pytest.mark.anyio
async def test_json_schema_and_protobuf_columns_both_ways(
    spark: Any,
    kafka_broker: str,
    new_topic: Callable[..., str],
    sr: SchemaRegistryClient,
    registry: RegistryServer,
) -> None:
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer as CJSONDeserializer
    from confluent_kafka.schema_registry.protobuf import (
        ProtobufDeserializer as CProtoDeserializer,
    )
    from pyspark.sql import types as T
    from pyspark.sql.functions import col, struct

    from kafka_async.schema_registry.json_schema import JSONSerializer
    from kafka_async.schema_registry.protobuf import ProtobufSerializer
    from kafka_async.schema_registry.spark import from_registry, to_registry

    json_topic, proto_topic = new_topic(1), new_topic(1)
    trade_cls = _trade_class()
    trades = [
        trade_cls(id=1, symbol="A", side=1, tags=["x", "y"], counts={"a": 2}),
        trade_cls(id=2, symbol="B"),
    ]
    trades[0].price.currency, trades[0].price.cents = "EUR", 1250
    readings = [
        {"sensor": "s1", "value": 1, "count": 3, "tags": ["t"], "place": {"lat": 1.5, "lon": 2}},
        {"sensor": "s2", "value": 2.5, "count": 4, "tags": [], "note": "n"},
    ]
    async with Producer(bootstrap_servers=kafka_broker) as producer:
        jser = JSONSerializer(sr, READING, topic=json_topic)
        pser = ProtobufSerializer(sr, trade_cls, topic=proto_topic)
        await jser.prepare()
        await pser.prepare()
        for r in readings:
            await producer.send(json_topic, jser(r), partition=0)
        for tr in trades:
            await producer.send(proto_topic, pser(tr), partition=0)

    def read(topic: str) -> Any:
        return (
            spark.read.format("kafka_async")
            .option("kafka.bootstrap.servers", kafka_broker)
            .option("subscribe", topic)
            .load()
        )

    # JSON Schema: typed columns (required -> not nullable), and back.
    typed = read(json_topic).select(
        from_registry(col("value"), registry.url, subject=f"{json_topic}-value").alias("r")
    )
    fields = {f.name: (f.dataType, f.nullable) for f in typed.schema["r"].dataType.fields}
    assert fields == {
        "sensor": (T.StringType(), False),
        "value": (T.DoubleType(), False),
        "count": (T.LongType(), False),
        "tags": (T.ArrayType(T.StringType(), False), False),
        "place": (
            T.StructType(
                [
                    T.StructField("lat", T.DoubleType(), False),
                    T.StructField("lon", T.DoubleType(), False),
                ]
            ),
            True,
        ),
        "note": (T.StringType(), True),
    }
    flat = typed.select("r.*")
    rows = sorted((r.asDict(recursive=True) for r in flat.collect()), key=lambda r: r["sensor"])
    assert rows[0] == {
        "sensor": "s1",
        "value": 1.0,
        "count": 3,
        "tags": ["t"],
        "place": {"lat": 1.5, "lon": 2.0},
        "note": None,
    }
    assert rows[1]["note"] == "n"
    assert rows[1]["place"] is None
    out_subject = f"{json_topic}-copy-value"
    encoded = flat.select(
        to_registry(
            struct("*"),
            registry.url,
            subject=out_subject,
            schema=json.dumps(READING),
            schema_type="JSON",
        ).alias("value")
    ).collect()
    peer = ConfluentClient({"url": registry.url})
    cj = CJSONDeserializer(None, schema_registry_client=peer)
    ctx = SerializationContext(json_topic, MessageField.VALUE)
    back = sorted((cj(r.value, ctx) for r in encoded), key=lambda r: r["sensor"])
    assert back[0]["place"] == {"lat": 1.5, "lon": 2.0}
    assert [b["sensor"] for b in back] == ["s1", "s2"]

    # Protobuf: a struct per message (enum as its name, unset message null, map), and back.
    typed = read(proto_topic).select(
        from_registry(col("value"), registry.url, subject=f"{proto_topic}-value").alias("t")
    )
    fields = {f.name: (f.dataType, f.nullable) for f in typed.schema["t"].dataType.fields}
    assert fields == {
        "id": (T.LongType(), False),
        "symbol": (T.StringType(), False),
        "side": (T.StringType(), False),
        "price": (
            T.StructType(
                [
                    T.StructField("currency", T.StringType(), False),
                    T.StructField("cents", T.LongType(), False),
                ]
            ),
            True,
        ),
        "tags": (T.ArrayType(T.StringType(), False), False),
        "counts": (T.MapType(T.StringType(), T.IntegerType(), False), False),
    }
    flat = typed.select("t.*")
    rows = sorted((r.asDict(recursive=True) for r in flat.collect()), key=lambda r: r["id"])
    assert rows == [
        {
            "id": 1,
            "symbol": "A",
            "side": "SELL",
            "price": {"currency": "EUR", "cents": 1250},
            "tags": ["x", "y"],
            "counts": {"a": 2},
        },
        {"id": 2, "symbol": "B", "side": "BUY", "price": None, "tags": [], "counts": {}},
    ]
    registered = (await sr.version(f"{proto_topic}-value", 1)).schema.schema_str
    encoded = flat.select(
        to_registry(
            struct("*"),
            registry.url,
            subject=f"{proto_topic}-copy-value",
            schema=registered,
            schema_type="PROTOBUF",
        ).alias("value")
    ).collect()
    cp = CProtoDeserializer(trade_cls, {"use.deprecated.format": False})
    ctx = SerializationContext(proto_topic, MessageField.VALUE)
    assert sorted((cp(r.value, ctx) for r in encoded), key=lambda m: m.id) == trades
