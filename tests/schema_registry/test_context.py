"""Serializers that see their record (``kafka_async.serialization.Serializer``/``Deserializer``:
topic, key or value, headers) on Apache Kafka, and what the registry serializers do with it:
one serializer for many topics (a subject per topic), the header-carried schema GUIDs of
confluent-kafka 2.11+ both ways with confluent-kafka 2.16, the share consumer and the
aiokafka drop-in without ``prepare()``."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from confluent_kafka import Consumer as CConsumer
from confluent_kafka import Producer as CProducer
from confluent_kafka import TopicPartition as CTopicPartition
from confluent_kafka.schema_registry import SchemaRegistryClient as ConfluentClient
from confluent_kafka.schema_registry import header_schema_id_serializer
from confluent_kafka.schema_registry.avro import AvroDeserializer as CAvroDeserializer
from confluent_kafka.schema_registry.avro import AvroSerializer as CAvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer as CJSONDeserializer
from confluent_kafka.schema_registry.json_schema import JSONSerializer as CJSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer as CProtoDeserializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer as CProtoSerializer
from confluent_kafka.serialization import MessageField as CField
from confluent_kafka.serialization import SerializationContext as CContext
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from kafka_async import Consumer, Producer
from kafka_async.admin import AdminClient, ConfigResource
from kafka_async.aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from kafka_async.consumer.share import ShareConsumer
from kafka_async.schema_registry import SchemaRegistryClient, SchemaRegistryConfigError
from kafka_async.schema_registry.avro import AvroDeserializer, AvroSerializer
from kafka_async.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from kafka_async.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from kafka_async.serialization import (
    Deserializer,
    MessageField,
    SerializationContext,
    Serializer,
)
from kafka_async.structs import TopicPartition
from tests.harness.schema_registry import RegistryServer

pytestmark = [pytest.mark.integration, pytest.mark.interop]

NewTopic = Callable[..., str]

USER: dict[str, Any] = {
    "type": "record",
    "name": "User",
    "namespace": "com.example",
    "fields": [{"name": "name", "type": "string"}, {"name": "score", "type": "int"}],
}
KEY = json.dumps({"type": "record", "name": "Key", "fields": [{"name": "k", "type": "long"}]})
READING: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Reading",
    "type": "object",
    "properties": {"sensor": {"type": "string"}, "value": {"type": "number"}},
    "required": ["sensor", "value"],
}


class Tagged(Serializer):
    """Writes ``topic|value`` and adds a header naming the field."""

    def serialize(self, obj: Any, ctx: SerializationContext | None) -> bytes | None:
        assert ctx is not None
        ctx.headers.append((f"tag-{ctx.field.value}", ctx.topic.encode()))
        return f"{ctx.topic}|{obj}".encode()


class Seen(Deserializer):
    """Decodes ``topic|value`` and keeps what the context said."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, MessageField, list[tuple[str, bytes | None]]]] = []

    def deserialize(self, data: bytes | None, ctx: SerializationContext | None) -> Any:
        assert ctx is not None
        assert data is not None
        self.seen.append((ctx.topic, ctx.field, list(ctx.headers)))
        topic, _, value = data.decode().partition("|")
        assert topic == ctx.topic
        return value


class _PythonPathProducer(Producer):
    """The Python bodies of send/enqueue/produce (an override keeps the C paths away)."""

    async def send(self, *args: Any, **kwargs: Any) -> Any:
        return await super().send(*args, **kwargs)


async def _read_records(
    bootstrap: str, topic: str, expected: int, **deserializers: Any
) -> list[Any]:
    consumer: Consumer[Any, Any] = Consumer(
        bootstrap_servers=bootstrap, auto_offset_reset="earliest", **deserializers
    )
    out: list[Any] = []
    async with consumer:
        consumer.assign([TopicPartition(topic, 0)])
        with anyio.fail_after(30):
            while len(out) < expected:
                batch = await consumer.getmany(timeout_ms=500)
                out += [r for recs in batch.values() for r in recs]
    return out


def _confluent_read(bootstrap: str, topic: str, expected: int) -> list[Any]:
    consumer = CConsumer(
        {"bootstrap.servers": bootstrap, "group.id": f"ctx-{topic}", "enable.auto.commit": False}
    )
    try:
        consumer.assign([CTopicPartition(topic, 0, 0)])
        out: list[Any] = []
        deadline = time.monotonic() + 30
        while len(out) < expected and time.monotonic() < deadline:
            for msg in consumer.consume(expected - len(out), 0.5):
                assert msg.error() is None, msg.error()
                out.append(msg)
        assert len(out) == expected
        return out
    finally:
        consumer.close()


@pytest.mark.anyio
async def test_context_serializers_see_topic_field_and_headers(
    kafka_broker: str, new_topic: NewTopic
) -> None:
    topic = new_topic(1)
    for cls in (Producer, _PythonPathProducer):
        async with cls(
            bootstrap_servers=kafka_broker,
            # A plain callable (called with None too) beside a context-aware one.
            key_serializer=lambda k: None if k is None else k.encode(),
            value_serializer=Tagged(),
        ) as producer:
            await producer.send(topic, "s", "k1", partition=0, headers=[("h", b"1")])
            await (await producer.enqueue(topic, "e", "k2", partition=0))
            await producer.produce(topic, "p", None, partition=0)
            await producer.enqueue_many(topic, ["m1", "m2"], keys=["k3", "k4"], partition=0)
            await producer.flush()
    seen = Seen()
    got = await _read_records(kafka_broker, topic, 10, value_deserializer=seen)
    tag = ("tag-value", topic.encode())
    expected = [
        ("s", b"k1", [("h", b"1"), tag]),
        ("e", b"k2", [tag]),
        ("p", None, [tag]),
        ("m1", b"k3", [tag]),
        ("m2", b"k4", [tag]),
    ] * 2
    assert [(r.value, r.key, r.headers) for r in got] == expected
    assert {(t, f) for t, f, _ in seen.seen} == {(topic, MessageField.VALUE)}
    assert seen.seen[0][2] == [("h", b"1"), tag]


@pytest.mark.anyio
async def test_one_serializer_for_many_topics(
    kafka_broker: str, new_topic: NewTopic, sr: SchemaRegistryClient
) -> None:
    orders, refunds = new_topic(1), new_topic(1)
    ser = AvroSerializer(sr, json.dumps(USER))  # no topic: each record's own
    key_ser = AvroSerializer(sr, KEY)
    with pytest.raises(SchemaRegistryConfigError):  # without a context there is no topic
        ser({"name": "x", "score": 0})
    async with Producer(
        bootstrap_servers=kafka_broker, key_serializer=key_ser, value_serializer=ser
    ) as producer:
        for i, topic in enumerate((orders, refunds, orders)):
            await producer.send(topic, {"name": f"u{i}", "score": i}, {"k": i}, partition=0)
    for topic in (orders, refunds):
        assert (await sr.version(f"{topic}-value", 1)).schema.schema_str == json.dumps(USER)
        assert (await sr.version(f"{topic}-key", 1)).schema.schema_str == KEY
    deser = AvroDeserializer(sr)
    got = await _read_records(
        kafka_broker, orders, 2, key_deserializer=deser, value_deserializer=deser
    )
    assert [(r.key, r.value) for r in got] == [
        ({"k": 0}, {"name": "u0", "score": 0}),
        ({"k": 2}, {"name": "u2", "score": 2}),
    ]
    assert repr(ser).count("-value=") == 2


def _reading_class() -> type[Any]:
    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName("kt_ctx.proto")
    except KeyError:
        fdp = descriptor_pb2.FileDescriptorProto(name="kt_ctx.proto", package="kt", syntax="proto3")
        first = fdp.message_type.add(name="First")
        first.field.add(name="x", number=1, type=5, label=1)
        msg = fdp.message_type.add(name="Reading")
        msg.field.add(name="sensor", number=1, type=9, label=1)
        msg.field.add(name="value", number=2, type=1, label=1)
        pool.Add(fdp)
    cls: type[Any] = message_factory.GetMessageClass(pool.FindMessageTypeByName("kt.Reading"))
    return cls


@pytest.mark.anyio
@pytest.mark.parametrize("fmt", ["avro", "json", "protobuf"])
async def test_header_schema_ids_both_ways_with_confluent(
    kafka_broker: str,
    new_topic: NewTopic,
    sr: SchemaRegistryClient,
    registry: RegistryServer,
    fmt: str,
) -> None:
    topic = new_topic(1)
    peer = ConfluentClient({"url": registry.url})
    header_conf = {"schema.id.serializer": header_schema_id_serializer}
    ours_ser: Any
    ours_deser: Any
    if fmt == "avro":
        # confluent-kafka 2.16's Avro deserializer refuses values of 5 bytes or fewer even
        # when the schema id is in the header: values longer than that.
        value: Any = {"name": "alice", "score": 1}
        other: Any = {"name": "bob-b", "score": 2}
        ours_ser = AvroSerializer(sr, json.dumps(USER), schema_id_in_header=True)
        ours_deser = AvroDeserializer(sr)
        c_ser: Any = CAvroSerializer(peer, json.dumps(USER), conf=header_conf)
        c_deser: Any = CAvroDeserializer(peer)
    elif fmt == "json":
        value, other = {"sensor": "a", "value": 1.5}, {"sensor": "b", "value": 2.5}
        ours_ser = JSONSerializer(sr, READING, schema_id_in_header=True)
        ours_deser = JSONDeserializer(sr)
        c_ser = CJSONSerializer(json.dumps(READING), peer, conf=header_conf)
        c_deser = CJSONDeserializer(None, schema_registry_client=peer)
    else:
        cls = _reading_class()
        value, other = cls(sensor="a", value=1.5), cls(sensor="b", value=2.5)
        ours_ser = ProtobufSerializer(sr, cls, schema_id_in_header=True)
        ours_deser = ProtobufDeserializer(sr, cls)
        c_ser = CProtoSerializer(cls, peer, conf={**header_conf, "use.deprecated.format": False})
        c_deser = CProtoDeserializer(cls, {"use.deprecated.format": False})

    # Ours writes: the GUID in the header, the bare payload; confluent-kafka reads it.
    async with Producer(bootstrap_servers=kafka_broker, value_serializer=ours_ser) as producer:
        await producer.send(topic, value, partition=0)
    (msg,) = _confluent_read(kafka_broker, topic, 1)
    headers = dict(msg.headers())
    reg = await sr.version(f"{topic}-value", 1)
    assert reg.guid is not None
    assert headers["__value_schema_id"][:17] == b"\x01" + uuid.UUID(reg.guid).bytes
    if fmt == "protobuf":
        assert headers["__value_schema_id"][17:] == b"\x02\x02"  # message indexes [1]
    else:
        assert len(headers["__value_schema_id"]) == 17
    assert msg.value()[:1] != b"\x00"  # no prefix
    assert c_deser(msg.value(), CContext(topic, CField.VALUE, msg.headers())) == value

    # confluent-kafka writes with its header serializer; ours reads it (GUID fetched).
    c_headers: list[tuple[str, str | bytes | None]] = []
    payload = c_ser(other, CContext(topic, CField.VALUE, c_headers))
    assert [h for h, _ in c_headers] == ["__value_schema_id"]
    producer_c = CProducer({"bootstrap.servers": kafka_broker})
    producer_c.produce(topic, value=payload, headers=c_headers, partition=0)
    assert producer_c.flush(30) == 0
    got = await _read_records(kafka_broker, topic, 2, value_deserializer=ours_deser)
    assert [r.value for r in got] == [value, other]


@pytest.mark.anyio
@pytest.mark.requires_api("ShareGroupHeartbeat", 1)
async def test_share_consumer_reads_header_schema_ids(
    kafka_broker: str, new_topic: NewTopic, sr: SchemaRegistryClient
) -> None:
    topic = new_topic(1)
    group = f"ctx-share-{uuid.uuid4().hex[:8]}"
    async with AdminClient(kafka_broker) as admin:
        await admin.incremental_alter_configs(
            {ConfigResource.group(group): {"share.auto.offset.reset": "earliest"}},
            raise_on_error=True,
        )
    async with Producer(
        bootstrap_servers=kafka_broker,
        value_serializer=AvroSerializer(sr, json.dumps(USER), schema_id_in_header=True),
    ) as producer:
        for i in range(2):
            await producer.send(topic, {"name": f"s{i}", "score": i}, partition=0)
    got: list[Any] = []
    async with ShareConsumer(
        topic,
        bootstrap_servers=kafka_broker,
        group_id=group,
        value_deserializer=AvroDeserializer(sr),
    ) as consumer:
        with anyio.fail_after(30):
            while len(got) < 2:
                for recs in (await consumer.getmany(timeout_ms=500)).values():
                    got += [r.value for r in recs]
    assert got == [{"name": f"s{i}", "score": i} for i in range(2)]


@pytest.mark.anyio
async def test_aiokafka_drop_in_needs_no_prepare(
    kafka_broker: str, new_topic: NewTopic, registry: RegistryServer
) -> None:
    topic = new_topic(1)
    async with SchemaRegistryClient(registry.url) as sr:  # a fresh client: nothing cached
        producer = AIOKafkaProducer(
            bootstrap_servers=kafka_broker, value_serializer=AvroSerializer(sr, json.dumps(USER))
        )
        await producer.start()
        try:
            await producer.send_and_wait(topic, {"name": "a", "score": 1}, partition=0)
            batch = producer.create_batch()
            assert batch.append(timestamp=None, key=None, value={"name": "b", "score": 2})
            assert batch.append(timestamp=None, key=None, value={"name": "c", "score": 3})
            await (await producer.send_batch(batch, topic, partition=0))
        finally:
            await producer.stop()
    async with SchemaRegistryClient(registry.url) as sr:
        consumer = AIOKafkaConsumer(
            bootstrap_servers=kafka_broker,
            auto_offset_reset="earliest",
            value_deserializer=AvroDeserializer(sr),
        )
        await consumer.start()
        try:
            consumer.assign([TopicPartition(topic, 0)])
            with anyio.fail_after(30):
                got = [(await consumer.getone()).value for _ in range(3)]
        finally:
            await consumer.stop()
    assert got == [{"name": n, "score": i + 1} for i, n in enumerate("abc")]


PROTO_COMMON = """syntax = "proto3";
package kt.text;
message Money { string currency = 1; int64 cents = 2; }
"""
PROTO_ORDER = """syntax = "proto3";
package kt.text;
import "kt/text/common.proto";
import "google/protobuf/timestamp.proto";
message Header { string id = 1; }
message Order {
  string id = 1;
  Money total = 2;
  google.protobuf.Timestamp at = 3;
  message Line { string sku = 1; int32 qty = 2; }
  repeated Line lines = 4;
}
"""


@pytest.mark.anyio
async def test_protobuf_proto_text_schema_read_without_a_class(
    kafka_broker: str, new_topic: NewTopic, sr: SchemaRegistryClient
) -> None:
    """A schema registered as .proto text (as Java clients do), with a reference: decoded
    without the message class (protoc from grpcio-tools compiles it)."""
    pytest.importorskip("grpc_tools")
    from kafka_async.schema_registry import Schema, SchemaReference
    from kafka_async.schema_registry.wire import encode_message_indexes, frame

    topic = new_topic(1)
    common_subject = f"{topic}-kt/text/common.proto"
    await sr.register(common_subject, Schema(PROTO_COMMON, "PROTOBUF"))
    ref = SchemaReference("kt/text/common.proto", common_subject, 1)
    schema_id = await sr.register(f"{topic}-value", Schema(PROTO_ORDER, "PROTOBUF", (ref,)))

    # The same messages, built here to write the bytes (a pool of the test's own).
    pool = descriptor_pool.DescriptorPool()
    from google.protobuf import timestamp_pb2

    pool.AddSerializedFile(timestamp_pb2.DESCRIPTOR.serialized_pb)
    common = descriptor_pb2.FileDescriptorProto(
        name="kt/text/common.proto", package="kt.text", syntax="proto3"
    )
    money = common.message_type.add(name="Money")
    money.field.add(name="currency", number=1, type=9, label=1)
    money.field.add(name="cents", number=2, type=3, label=1)
    pool.Add(common)
    order_file = descriptor_pb2.FileDescriptorProto(
        name="order.proto",
        package="kt.text",
        syntax="proto3",
        dependency=["kt/text/common.proto", "google/protobuf/timestamp.proto"],
    )
    order_file.message_type.add(name="Header").field.add(name="id", number=1, type=9, label=1)
    order = order_file.message_type.add(name="Order")
    order.field.add(name="id", number=1, type=9, label=1)
    order.field.add(name="total", number=2, type=11, label=1, type_name=".kt.text.Money")
    order.field.add(name="at", number=3, type=11, label=1, type_name=".google.protobuf.Timestamp")
    line = order.nested_type.add(name="Line")
    line.field.add(name="sku", number=1, type=9, label=1)
    line.field.add(name="qty", number=2, type=5, label=1)
    order.field.add(name="lines", number=4, type=11, label=3, type_name=".kt.text.Order.Line")
    pool.Add(order_file)
    order_cls = message_factory.GetMessageClass(pool.FindMessageTypeByName("kt.text.Order"))
    line_cls = message_factory.GetMessageClass(pool.FindMessageTypeByName("kt.text.Order.Line"))
    msg = order_cls(id="o1", lines=[line_cls(sku="s", qty=2)])
    msg.total.currency, msg.total.cents = "EUR", 1250
    msg.at.seconds = 1_700_000_000
    values = [
        frame(schema_id) + encode_message_indexes([1]) + msg.SerializeToString(),
        frame(schema_id) + encode_message_indexes([1, 0]) + line_cls(sku="n").SerializeToString(),
    ]
    async with Producer(bootstrap_servers=kafka_broker) as producer:
        for v in values:
            await producer.send(topic, v, partition=0)

    got = await _read_records(kafka_broker, topic, 2, value_deserializer=ProtobufDeserializer(sr))
    first, second = (r.value for r in got)
    assert first.DESCRIPTOR.full_name == "kt.text.Order"
    assert (first.id, first.total.cents, first.at.seconds) == ("o1", 1250, 1_700_000_000)
    assert [(ln.sku, ln.qty) for ln in first.lines] == [("s", 2)]
    assert second.DESCRIPTOR.full_name == "kt.text.Order.Line"
    assert second.sku == "n"
