"""Records in Confluent's wire format through Apache Kafka, both ways between our serializers
and confluent-kafka's (2.16), for Avro, JSON Schema and Protobuf, with the registry on
loopback: what our producer writes with our serializer, confluent-kafka's consumer reads with
its deserializer, and the other way round; schema evolution; the subject-name strategies;
schema references; a deserializer failure as the consumer's typed error."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from confluent_kafka import Consumer as CConsumer
from confluent_kafka import Producer as CProducer
from confluent_kafka import TopicPartition as CTopicPartition
from confluent_kafka.schema_registry import Schema as CSchema
from confluent_kafka.schema_registry import SchemaReference as CSchemaReference
from confluent_kafka.schema_registry import SchemaRegistryClient as ConfluentClient
from confluent_kafka.schema_registry import record_subject_name_strategy
from confluent_kafka.schema_registry.avro import AvroDeserializer as CAvroDeserializer
from confluent_kafka.schema_registry.avro import AvroSerializer as CAvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer as CJSONDeserializer
from confluent_kafka.schema_registry.json_schema import JSONSerializer as CJSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer as CProtoDeserializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer as CProtoSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from kafka_async import Consumer, Producer
from kafka_async.errors import RecordDeserializationError
from kafka_async.schema_registry import (
    IncompatibleSchemaError,
    Schema,
    SchemaNotFoundError,
    SchemaReference,
    SchemaRegistryClient,
    SerializationError,
    SubjectNotFoundError,
)
from kafka_async.schema_registry.avro import AvroDeserializer, AvroSerializer
from kafka_async.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from kafka_async.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from kafka_async.serialization import NeedsResolution
from kafka_async.structs import TopicPartition
from tests.harness.schema_registry import RegistryServer

pytestmark = [pytest.mark.integration, pytest.mark.interop]

NewTopic = Callable[..., str]

USER_V1: dict[str, Any] = {
    "type": "record",
    "name": "User",
    "namespace": "com.example",
    "fields": [{"name": "name", "type": "string"}, {"name": "score", "type": "int"}],
}
#: v1 plus a field with a default: BACKWARD compatible.
USER_V2 = {
    **USER_V1,
    "fields": [
        *USER_V1["fields"],
        {"name": "email", "type": ["null", "string"], "default": None},
    ],
}
#: v1 with score's type changed to string: refused under BACKWARD.
USER_BAD = {
    **USER_V1,
    "fields": [{"name": "name", "type": "string"}, {"name": "score", "type": "string"}],
}

JSON_V1: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Reading",
    "type": "object",
    "properties": {"sensor": {"type": "string"}, "value": {"type": "number"}},
    "required": ["sensor", "value"],
}


# -- helpers ----------------------------------------------------------------------------------


def confluent_read(bootstrap: str, topic: str, expected: int, timeout: float = 30.0) -> list[Any]:
    """The first ``expected`` raw messages of partition 0, read by confluent-kafka."""
    consumer = CConsumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"sr-{topic}",
            "enable.auto.commit": False,
            "enable.partition.eof": False,
        }
    )
    try:
        consumer.assign([CTopicPartition(topic, 0, 0)])
        out: list[Any] = []
        deadline = time.monotonic() + timeout
        while len(out) < expected and time.monotonic() < deadline:
            for msg in consumer.consume(expected - len(out), 0.5):
                assert msg.error() is None, msg.error()
                out.append(msg)
        assert len(out) == expected, f"read {len(out)} of {expected} records of {topic}"
        return out
    finally:
        consumer.close()


def confluent_write(bootstrap: str, topic: str, values: list[bytes]) -> None:
    producer = CProducer({"bootstrap.servers": bootstrap})
    for v in values:
        producer.produce(topic, value=v, partition=0)
    assert producer.flush(30) == 0


async def our_read(
    bootstrap: str, topic: str, expected: int, deserializer: Callable[[bytes | None], Any]
) -> list[Any]:
    consumer: Consumer[bytes, Any] = Consumer(
        bootstrap_servers=bootstrap, auto_offset_reset="earliest", value_deserializer=deserializer
    )
    out: list[Any] = []
    async with consumer:
        consumer.assign([TopicPartition(topic, 0)])
        with anyio.fail_after(30):
            while len(out) < expected:
                batch = await consumer.getmany(timeout_ms=500)
                out += [r.value for recs in batch.values() for r in recs]
    return out


async def our_write(bootstrap: str, topic: str, serializer: Any, values: list[Any]) -> None:
    async with Producer(bootstrap_servers=bootstrap, value_serializer=serializer) as producer:
        for v in values:
            await producer.send(topic, v, partition=0)


def ctx(topic: str) -> SerializationContext:
    return SerializationContext(topic, MessageField.VALUE)


@pytest.fixture
def peer(registry: RegistryServer) -> ConfluentClient:
    return ConfluentClient({"url": registry.url})


# -- Avro ---------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_avro_both_ways_with_evolution(
    kafka_broker: str,
    new_topic: NewTopic,
    sr: SchemaRegistryClient,
    peer: ConfluentClient,
) -> None:
    topic = new_topic(1)
    # Ours writes v1; confluent-kafka reads it.
    ours_v1 = AvroSerializer(sr, json.dumps(USER_V1), topic=topic)
    reg = await ours_v1.prepare()
    assert (reg.subject, reg.version) == (f"{topic}-value", 1)
    await our_write(kafka_broker, topic, ours_v1, [{"name": "a", "score": 1}, None])
    msgs = confluent_read(kafka_broker, topic, 2)
    c_deser = CAvroDeserializer(peer)
    assert c_deser(msgs[0].value(), ctx(topic)) == {"name": "a", "score": 1}
    assert msgs[1].value() is None

    # confluent-kafka writes v2 (a compatible change it registers); ours reads v1 and v2.
    c_ser = CAvroSerializer(peer, json.dumps(USER_V2))
    confluent_write(
        kafka_broker, topic, [c_ser({"name": "b", "score": 2, "email": "b@x"}, ctx(topic))]
    )
    assert await sr.versions(f"{topic}-value") == [1, 2]
    got = await our_read(kafka_broker, topic, 3, AvroDeserializer(sr))
    assert got == [{"name": "a", "score": 1}, None, {"name": "b", "score": 2, "email": "b@x"}]
    # With a reader schema, v1 records take v2's default.
    as_v2 = await our_read(kafka_broker, topic, 3, AvroDeserializer(sr, json.dumps(USER_V2)))
    assert as_v2[0] == {"name": "a", "score": 1, "email": None}

    # An incompatible change is refused by the registry's check, as our typed error.
    assert await sr.is_compatible(f"{topic}-value", Schema(json.dumps(USER_BAD))) is False
    bad = AvroSerializer(sr, json.dumps(USER_BAD), topic=topic)
    with pytest.raises(IncompatibleSchemaError) as info:
        await bad.prepare()
    assert info.value.subject == f"{topic}-value"
    assert info.value.status == 409

    # use_latest_version writes with v2 without registering anything.
    latest = AvroSerializer(sr, topic=topic, use_latest_version=True, auto_register=False)
    assert (await latest.prepare()).version == 2
    raw = latest({"name": "c", "score": 3, "email": None})
    assert raw is not None
    assert c_deser(raw, ctx(topic)) == {"name": "c", "score": 3, "email": None}


@pytest.mark.anyio
async def test_avro_record_strategies_references_and_auto_register_off(
    kafka_broker: str,
    new_topic: NewTopic,
    sr: SchemaRegistryClient,
    peer: ConfluentClient,
) -> None:
    topic = new_topic(1)
    # A referenced named type, registered under its own subject.
    address = {
        "type": "record",
        "name": "Address",
        "namespace": "com.example",
        "fields": [{"name": "city", "type": "string"}],
    }
    ref_subject = f"{topic}-address"
    await sr.register(ref_subject, Schema(json.dumps(address)))
    person = {
        "type": "record",
        "name": "Person",
        "namespace": "com.example",
        "fields": [
            {"name": "name", "type": "string"},
            {"name": "home", "type": "com.example.Address"},
        ],
    }
    schema = Schema(
        json.dumps(person), "AVRO", (SchemaReference("com.example.Address", ref_subject, 1),)
    )
    ser = AvroSerializer(sr, schema, topic=topic, subject_name_strategy="topic_record")
    reg = await ser.prepare()
    assert reg.subject == f"{topic}-com.example.Person"
    value = {"name": "p", "home": {"city": "Oslo"}}
    await our_write(kafka_broker, topic, ser, [value])

    # confluent-kafka writes the same type with the record strategy and the reference.
    c_schema = CSchema(
        json.dumps(person), "AVRO", [CSchemaReference("com.example.Address", ref_subject, 1)]
    )
    c_ser = CAvroSerializer(
        peer, c_schema, conf={"subject.name.strategy": record_subject_name_strategy}
    )
    confluent_write(
        kafka_broker, topic, [c_ser({"name": "q", "home": {"city": "Rome"}}, ctx(topic))]
    )
    assert "com.example.Person" in await sr.subjects()
    got = await our_read(kafka_broker, topic, 2, AvroDeserializer(sr))
    assert got == [value, {"name": "q", "home": {"city": "Rome"}}]
    msgs = confluent_read(kafka_broker, topic, 2)
    assert CAvroDeserializer(peer)(msgs[0].value(), ctx(topic)) == value

    # The record strategy: the subject is the full name, and ours finds confluent's id.
    ours_record = AvroSerializer(sr, schema, subject_name_strategy="record", auto_register=False)
    found = await ours_record.prepare()
    assert found.subject == "com.example.Person"
    assert found.schema_id == reg.schema_id  # the same schema: the same id

    # auto_register off and nothing registered: a typed error naming the subject.
    missing = AvroSerializer(sr, json.dumps(USER_V1), topic=new_topic(1), auto_register=False)
    with pytest.raises(SubjectNotFoundError) as info:
        await missing.prepare()
    assert "auto_register is off" in str(info.value)
    assert info.value.subject == missing.subject
    # A serializer called directly before prepare() asks for the resolution, whose error
    # is the registry's.
    with pytest.raises(NeedsResolution) as need:
        missing({"name": "x", "score": 0})
    with pytest.raises(SubjectNotFoundError):
        await need.value.resolve(10.0)


@pytest.mark.anyio
async def test_deserializer_failure_is_the_consumers_typed_error(
    kafka_broker: str, new_topic: NewTopic, sr: SchemaRegistryClient
) -> None:
    topic = new_topic(1)
    ser = AvroSerializer(sr, json.dumps(USER_V1), topic=topic)
    await ser.prepare()
    good = ser({"name": "ok", "score": 1})
    assert good is not None
    # Offset 1: not Confluent's wire format; offset 2: an id the registry does not have.
    confluent_write(kafka_broker, topic, [good, b"plain text", b"\x00\x00\x0f\x42\x40\x02"])
    consumer: Consumer[bytes, Any] = Consumer(
        bootstrap_servers=kafka_broker,
        auto_offset_reset="earliest",
        value_deserializer=AvroDeserializer(sr),
    )
    async with consumer:
        consumer.assign([TopicPartition(topic, 0)])
        seen: list[Any] = []
        errors: list[RecordDeserializationError] = []
        with anyio.fail_after(30):
            while len(errors) < 2:
                try:
                    batch = await consumer.getmany(timeout_ms=500)
                except RecordDeserializationError as exc:
                    errors.append(exc)
                    consumer.seek(exc.topic_partition, exc.offset + 1)
                    continue
                seen += [r.value for recs in batch.values() for r in recs]
    assert seen == [{"name": "ok", "score": 1}]
    assert [(e.topic, e.partition, e.offset, e.origin) for e in errors] == [
        (topic, 0, 1, "value"),
        (topic, 0, 2, "value"),
    ]
    # Not the wire format: the deserializer's error; an unknown id: the registry's answer.
    assert isinstance(errors[0].cause, SerializationError)
    assert isinstance(errors[1].cause, SchemaNotFoundError)
    assert "magic byte" in str(errors[0])
    assert "1000000" in str(errors[1])  # the unknown schema id


# -- JSON Schema --------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_json_schema_both_ways_and_validation(
    kafka_broker: str,
    new_topic: NewTopic,
    sr: SchemaRegistryClient,
    peer: ConfluentClient,
) -> None:
    topic = new_topic(1)
    ser = JSONSerializer(sr, JSON_V1, topic=topic)
    await ser.prepare()
    with pytest.raises(SerializationError, match="value"):
        ser({"sensor": "t1"})  # "value" is required
    await our_write(kafka_broker, topic, ser, [{"sensor": "t1", "value": 21.5}])
    c_ser = CJSONSerializer(json.dumps(JSON_V1), peer)
    confluent_write(kafka_broker, topic, [c_ser({"sensor": "t2", "value": 7}, ctx(topic))])
    assert await sr.versions(f"{topic}-value") == [1]  # both found the same schema
    got = await our_read(kafka_broker, topic, 2, JSONDeserializer(sr))
    assert got == [{"sensor": "t1", "value": 21.5}, {"sensor": "t2", "value": 7}]
    msgs = confluent_read(kafka_broker, topic, 2)
    c_deser = CJSONDeserializer(None, schema_registry_client=peer)
    assert c_deser(msgs[0].value(), ctx(topic)) == {"sensor": "t1", "value": 21.5}

    # Evolution: an optional property is fine; a new required one is refused.
    v2 = {**JSON_V1, "properties": {**JSON_V1["properties"], "unit": {"type": "string"}}}
    await JSONSerializer(sr, v2, topic=topic).prepare()
    bad = {**v2, "required": ["sensor", "value", "unit"]}
    with pytest.raises(IncompatibleSchemaError):
        await JSONSerializer(sr, bad, topic=topic).prepare()


# -- Protobuf -----------------------------------------------------------------------------------


def _proto_classes() -> tuple[type[Any], type[Any]]:
    """``kt.Order`` (in order.proto, importing common.proto's ``kt.Money``) and its nested
    ``kt.Order.Line``, built at run time (no protoc here) in the default pool."""
    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName("kt_order.proto")
    except KeyError:
        common = descriptor_pb2.FileDescriptorProto(name="kt_common.proto", package="kt")
        money = common.message_type.add(name="Money")
        money.field.add(name="currency", number=1, type=9, label=1)
        money.field.add(name="cents", number=2, type=3, label=1)
        pool.Add(common)
        order_file = descriptor_pb2.FileDescriptorProto(
            name="kt_order.proto", package="kt", dependency=["kt_common.proto"], syntax="proto3"
        )
        header = order_file.message_type.add(name="Header")
        header.field.add(name="id", number=1, type=9, label=1)
        order = order_file.message_type.add(name="Order")
        order.field.add(name="id", number=1, type=9, label=1)
        order.field.add(name="total", number=2, type=11, label=1, type_name=".kt.Money")
        line = order.nested_type.add(name="Line")
        line.field.add(name="sku", number=1, type=9, label=1)
        line.field.add(name="qty", number=2, type=5, label=1)
        order.field.add(name="lines", number=3, type=11, label=3, type_name=".kt.Order.Line")
        pool.Add(order_file)
    order_cls = message_factory.GetMessageClass(pool.FindMessageTypeByName("kt.Order"))
    line_cls = message_factory.GetMessageClass(pool.FindMessageTypeByName("kt.Order.Line"))
    return order_cls, line_cls


@pytest.mark.anyio
async def test_protobuf_both_ways_with_references_and_nested_messages(
    kafka_broker: str,
    new_topic: NewTopic,
    sr: SchemaRegistryClient,
    peer: ConfluentClient,
) -> None:
    order_cls, line_cls = _proto_classes()
    topic = new_topic(1)
    ser = ProtobufSerializer(sr, order_cls, topic=topic)
    reg = await ser.prepare()
    assert [r.subject for r in reg.schema.references] == ["kt_common.proto"]
    order = order_cls(id="o1", lines=[line_cls(sku="s", qty=2)])
    order.total.currency, order.total.cents = "EUR", 1250
    raw = ser(order)
    assert raw is not None
    assert raw[5:6] == b"\x02"
    assert raw[6:7] == b"\x02"
    await our_write(kafka_broker, topic, ser, [order])

    c_ser = CProtoSerializer(order_cls, peer)
    other = order_cls(id="o2")
    confluent_write(kafka_broker, topic, [c_ser(other, ctx(topic))])
    assert await sr.versions(f"{topic}-value") == [1]  # the same schema as ours

    msgs = confluent_read(kafka_broker, topic, 2)
    c_deser = CProtoDeserializer(order_cls, {"use.deprecated.format": False})
    assert c_deser(msgs[0].value(), ctx(topic)) == order
    # Ours, with the class and without it (a class built from the registered schema).
    assert await our_read(kafka_broker, topic, 2, ProtobufDeserializer(sr, order_cls)) == [
        order,
        other,
    ]
    dynamic = await our_read(kafka_broker, topic, 2, ProtobufDeserializer(sr))
    assert [m.SerializeToString() for m in dynamic] == [
        order.SerializeToString(),
        other.SerializeToString(),
    ]
    assert dynamic[0].total.cents == 1250

    # A nested message: indexes [1, 0], read by confluent-kafka.
    line_topic = new_topic(1)
    line_ser = ProtobufSerializer(sr, line_cls, topic=line_topic)
    await line_ser.prepare()
    raw_line = line_ser(line_cls(sku="n", qty=5))
    assert raw_line is not None
    assert raw_line[5:8] == b"\x04\x02\x00"
    assert CProtoDeserializer(line_cls, {"use.deprecated.format": False})(
        raw_line, ctx(line_topic)
    ) == line_cls(sku="n", qty=5)
    # Called directly (not by the consumer): a new id asks for its resolution first.
    line_deser = ProtobufDeserializer(sr)
    with pytest.raises(NeedsResolution) as need:
        line_deser(raw_line)
    await need.value.resolve(10.0)
    got = line_deser(raw_line)
    assert got is not None
    assert got.SerializeToString() == line_cls(sku="n", qty=5).SerializeToString()

    # auto_register off, nothing under the subject: typed error.
    with pytest.raises((SubjectNotFoundError, SchemaNotFoundError)):
        await ProtobufSerializer(sr, order_cls, topic=new_topic(1), auto_register=False).prepare()


@pytest.mark.anyio
async def test_avro_keys_and_a_prepared_deserializer_needs_no_registry(
    kafka_broker: str, new_topic: NewTopic, peer: ConfluentClient
) -> None:
    topic = new_topic(1)
    key_schema = json.dumps(
        {"type": "record", "name": "Key", "fields": [{"name": "k", "type": "long"}]}
    )
    server = RegistryServer()
    server.start()
    try:
        async with SchemaRegistryClient(server.url, deadline_s=1) as sr:
            key_ser = AvroSerializer(sr, key_schema, topic=topic, is_key=True)
            value_ser = AvroSerializer(sr, json.dumps(USER_V1), topic=topic)
            assert (await key_ser.prepare()).subject == f"{topic}-key"
            await value_ser.prepare()
            async with Producer(
                bootstrap_servers=kafka_broker, key_serializer=key_ser, value_serializer=value_ser
            ) as producer:
                await producer.send(topic, {"name": "k1", "score": 1}, key={"k": 7}, partition=0)
            c_peer = ConfluentClient({"url": server.url})
            msg = confluent_read(kafka_broker, topic, 1)[0]
            c_key = CAvroDeserializer(c_peer)(
                msg.key(), SerializationContext(topic, MessageField.KEY)
            )
            assert c_key == {"k": 7}

            # prepare() fetched every version of the subjects: the registry may go away.
            keys, values = AvroDeserializer(sr), AvroDeserializer(sr)
            await keys.prepare(f"{topic}-key")
            await values.prepare(f"{topic}-value")
            server.stop()
            consumer: Consumer[Any, Any] = Consumer(
                bootstrap_servers=kafka_broker,
                auto_offset_reset="earliest",
                key_deserializer=keys,
                value_deserializer=values,
            )
            async with consumer:
                consumer.assign([TopicPartition(topic, 0)])
                with anyio.fail_after(30):
                    record = await consumer.getone()
            assert (record.key, record.value) == ({"k": 7}, {"name": "k1", "score": 1})
    finally:
        server.stop()


@pytest.mark.anyio
async def test_json_schema_references_both_ways(
    kafka_broker: str, new_topic: NewTopic, sr: SchemaRegistryClient, peer: ConfluentClient
) -> None:
    topic = new_topic(1)
    address = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    }
    ref_subject = f"{topic}-address"
    await sr.register(ref_subject, Schema(json.dumps(address), "JSON"))
    person = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "Person",
        "type": "object",
        "properties": {"name": {"type": "string"}, "home": {"$ref": "address.json"}},
        "required": ["name", "home"],
    }
    schema = Schema(json.dumps(person), "JSON", (SchemaReference("address.json", ref_subject, 1),))
    ser = JSONSerializer(sr, schema, topic=topic)
    await ser.prepare()
    with pytest.raises(SerializationError, match="city"):
        ser({"name": "p", "home": {}})  # the referenced schema is enforced
    await our_write(kafka_broker, topic, ser, [{"name": "p", "home": {"city": "Oslo"}}])
    c_schema = CSchema(
        json.dumps(person), "JSON", [CSchemaReference("address.json", ref_subject, 1)]
    )
    c_ser = CJSONSerializer(c_schema, peer)
    confluent_write(
        kafka_broker, topic, [c_ser({"name": "q", "home": {"city": "Rome"}}, ctx(topic))]
    )
    want = [{"name": "p", "home": {"city": "Oslo"}}, {"name": "q", "home": {"city": "Rome"}}]
    assert await our_read(kafka_broker, topic, 2, JSONDeserializer(sr)) == want
    msgs = confluent_read(kafka_broker, topic, 2)
    c_deser = CJSONDeserializer(None, schema_registry_client=peer)
    assert [c_deser(m.value(), ctx(topic)) for m in msgs] == want


def _evo_class(fields: list[tuple[str, int, int]]) -> type[Any]:
    """``kt.Evo`` of kt_evo.proto with these (name, number, type) fields, in a pool of its
    own (two versions of one file cannot share a pool)."""
    pool = descriptor_pool.DescriptorPool()
    fdp = descriptor_pb2.FileDescriptorProto(name="kt_evo.proto", package="kt", syntax="proto3")
    msg = fdp.message_type.add(name="Evo")
    for name, number, ftype in fields:
        msg.field.add(name=name, number=number, type=ftype, label=1)
    pool.Add(fdp)
    cls: type[Any] = message_factory.GetMessageClass(pool.FindMessageTypeByName("kt.Evo"))
    return cls


@pytest.mark.anyio
async def test_protobuf_evolution(
    new_topic: NewTopic, sr: SchemaRegistryClient, peer: ConfluentClient
) -> None:
    topic = new_topic(1)
    string, int64 = 9, 3
    v1 = _evo_class([("a", 1, string)])
    await ProtobufSerializer(sr, v1, topic=topic).prepare()
    # A new field: compatible; confluent-kafka's v1 reader skips it.
    v2 = _evo_class([("a", 1, string), ("b", 2, int64)])
    v2_ser = ProtobufSerializer(sr, v2, topic=topic)
    assert (await v2_ser.prepare()).version == 2
    raw = v2_ser(v2(a="x", b=5))
    assert raw is not None
    old = CProtoDeserializer(v1, {"use.deprecated.format": False})(raw, ctx(topic))
    assert old.a == "x"
    # Field 1 changes its type: refused by the registry's check.
    with pytest.raises(IncompatibleSchemaError) as info:
        await ProtobufSerializer(sr, _evo_class([("a", 1, int64)]), topic=topic).prepare()
    assert info.value.subject == f"{topic}-value"
