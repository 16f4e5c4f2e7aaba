"""The registry serializers without ``prepare()``, on Apache Kafka: the producer and the
consumer resolve a schema id the serializer has not cached (``NeedsResolution``) with async
I/O, never blocking the event loop; a registry that does not answer ends in its typed error
within the deadline, and no record is lost or skipped."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import pytest

from kafka_async import Consumer, Producer
from kafka_async.admin import AdminClient, ConfigResource
from kafka_async.consumer.share import ShareConsumer
from kafka_async.errors import RecordDeserializationError
from kafka_async.schema_registry import (
    RegistryUnavailableError,
    SchemaRegistryClient,
)
from kafka_async.schema_registry.avro import AvroDeserializer, AvroSerializer
from kafka_async.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from kafka_async.structs import TopicPartition
from tests.harness.schema_registry import RegistryServer

pytestmark = [pytest.mark.integration]

NewTopic = Callable[..., str]

USER: dict[str, Any] = {
    "type": "record",
    "name": "User",
    "namespace": "com.example",
    "fields": [{"name": "name", "type": "string"}, {"name": "score", "type": "int"}],
}
KEY = json.dumps({"type": "record", "name": "Key", "fields": [{"name": "k", "type": "long"}]})
READING: dict[str, Any] = {
    "type": "object",
    "properties": {"sensor": {"type": "string"}},
    "required": ["sensor"],
}


@pytest.fixture(scope="module")
def slow_registry() -> Iterator[RegistryServer]:
    """A registry of this file's own: its tests make it slow or silent."""
    with RegistryServer() as server:
        yield server


@pytest.fixture
def registry_answers(slow_registry: RegistryServer) -> Iterator[RegistryServer]:
    """The registry, answering promptly again after the test."""
    slow_registry.set_delay(0)
    try:
        yield slow_registry
    finally:
        slow_registry.set_delay(0)


class _PythonPathProducer(Producer):
    """A producer whose send takes the Python body (the C fast path is installed only for
    methods a subclass leaves alone)."""

    def send(self, *args: Any, **kwargs: Any) -> Any:
        return super().send(*args, **kwargs)


async def _read(
    bootstrap: str,
    topic: str,
    expected: int,
    client: SchemaRegistryClient,
    *,
    key: bool = False,
) -> list[tuple[Any, Any]]:
    consumer: Consumer[Any, Any] = Consumer(
        bootstrap_servers=bootstrap,
        auto_offset_reset="earliest",
        key_deserializer=AvroDeserializer(client) if key else None,
        value_deserializer=AvroDeserializer(client),
    )
    out: list[tuple[Any, Any]] = []
    async with consumer:
        consumer.assign([TopicPartition(topic, 0)])
        with anyio.fail_after(30):
            while len(out) < expected:
                batch = await consumer.getmany(timeout_ms=500)
                out += [(r.key, r.value) for recs in batch.values() for r in recs]
    return out


@pytest.mark.anyio
async def test_producer_without_prepare(
    kafka_broker: str, new_topic: NewTopic, registry_answers: RegistryServer
) -> None:
    topic = new_topic(1)
    async with SchemaRegistryClient(registry_answers.url, deadline_s=10) as sr:
        key_ser = AvroSerializer(sr, KEY, topic=topic, is_key=True)
        value_ser = AvroSerializer(sr, json.dumps(USER), topic=topic)
        assert key_ser.registered is None
        assert value_ser.registered is None
        async with Producer(
            bootstrap_servers=kafka_broker, key_serializer=key_ser, value_serializer=value_ser
        ) as producer:
            # Concurrent first sends: each resolves (once, under the serializer's lock).
            async with anyio.create_task_group() as tg:
                for i in range(5):
                    tg.start_soon(producer.send, topic, {"name": f"u{i}", "score": i}, {"k": i}, 0)
            delivery = await producer.enqueue(topic, {"name": "e", "score": 5}, {"k": 5}, 0)
            await delivery
            await producer.produce(topic, {"name": "p", "score": 6}, {"k": 6}, 0)
            await producer.enqueue_many(topic, [{"name": "m", "score": 7}], keys=[{"k": 7}])
            await producer.flush()
        assert None not in (key_ser.registered, value_ser.registered)  # resolved on first use

        # The Python bodies (no C fast path) resolve too: a fresh serializer, a new subject.
        topic2 = new_topic(1)
        async with _PythonPathProducer(
            bootstrap_servers=kafka_broker,
            value_serializer=AvroSerializer(sr, json.dumps(USER), topic=topic2),
        ) as producer:
            await producer.send(topic2, {"name": "py", "score": 8}, partition=0)

    async with SchemaRegistryClient(registry_answers.url, deadline_s=10) as reader:
        got = await _read(kafka_broker, topic, 8, reader, key=True)
        assert sorted((k["k"], v["score"]) for k, v in got) == [(i, i) for i in range(8)]
        assert await _read(kafka_broker, topic2, 1, reader) == [(None, {"name": "py", "score": 8})]


@pytest.mark.anyio
async def test_consumer_resolves_new_schema_ids_without_blocking_the_loop(
    kafka_broker: str, new_topic: NewTopic, registry_answers: RegistryServer
) -> None:
    topic = new_topic(1)
    # The consumer's client is its own: the producer's has the ids cached already.
    async with SchemaRegistryClient(registry_answers.url, deadline_s=20) as reader:
        consumer: Consumer[Any, Any] = Consumer(
            bootstrap_servers=kafka_broker,
            auto_offset_reset="earliest",
            value_deserializer=AvroDeserializer(reader),
        )
        async with consumer:
            consumer.assign([TopicPartition(topic, 0)])
            assert await consumer.getmany(timeout_ms=200) == {}
            # Registered only now, after the consumer started; two schema ids.
            async with SchemaRegistryClient(registry_answers.url) as sr:
                async with Producer(
                    bootstrap_servers=kafka_broker,
                    value_serializer=AvroSerializer(sr, json.dumps(USER), topic=topic),
                ) as producer:
                    await producer.send(topic, {"name": "a", "score": 1}, partition=0)
                    await producer.send(topic, {"name": "b", "score": 2}, partition=0)
                async with Producer(
                    bootstrap_servers=kafka_broker,
                    value_serializer=JSONSerializer(sr, READING, subject=f"{topic}-json"),
                ) as producer:
                    await producer.send(topic, {"sensor": "s"}, partition=0)
            registry_answers.set_delay(0.8)

            ticks = 0

            async def ticker() -> None:
                nonlocal ticks
                while True:
                    await anyio.sleep(0.01)
                    ticks += 1

            values: list[Any] = []
            offsets: list[int] = []
            errors: list[RecordDeserializationError] = []
            async with anyio.create_task_group() as tg:
                tg.start_soon(ticker)
                with anyio.fail_after(30):
                    while len(values) + len(errors) < 3:
                        try:
                            batch = await consumer.getmany(timeout_ms=500)
                        except RecordDeserializationError as exc:
                            # The JSON record under the Avro deserializer: fetched without
                            # blocking too, then refused by fastavro as the typed error.
                            errors.append(exc)
                            consumer.seek(exc.topic_partition, exc.offset + 1)
                            continue
                        for recs in batch.values():
                            values += [r.value for r in recs]
                            offsets += [r.offset for r in recs]
                tg.cancel_scope.cancel()
    assert values == [{"name": "a", "score": 1}, {"name": "b", "score": 2}]
    assert offsets == [0, 1]
    assert [(e.offset, e.origin) for e in errors] == [(2, "value")]
    # Two slow fetches (0.8 s each) happened while the ticker ran: a blocked event loop
    # would have let it tick about zero times meanwhile; it ticked on.
    assert ticks >= 40, ticks


@pytest.mark.anyio
async def test_silent_registry_typed_errors_and_nothing_lost(
    kafka_broker: str, new_topic: NewTopic, registry_answers: RegistryServer
) -> None:
    topic = new_topic(1)
    # Producer: a registry that does not answer ends in its typed error, not a hang.
    async with SchemaRegistryClient(registry_answers.url, deadline_s=1.0, timeout_s=0.5) as sr:
        ser = AvroSerializer(sr, json.dumps(USER), topic=topic)
        async with Producer(bootstrap_servers=kafka_broker, value_serializer=ser) as producer:
            registry_answers.set_delay(3)
            with anyio.fail_after(10):
                with pytest.raises(RegistryUnavailableError):
                    await producer.send(topic, {"name": "lost?", "score": 0}, partition=0)
            registry_answers.set_delay(0)
            with anyio.fail_after(20):
                meta = await producer.send(topic, {"name": "a", "score": 1}, partition=0)
                await producer.send(topic, {"name": "b", "score": 2}, partition=0)
            assert meta.offset == 0  # the failed send queued nothing

    # Consumer: the typed error names the record; the position stays; nothing is lost.
    async with SchemaRegistryClient(registry_answers.url, deadline_s=1.0, timeout_s=0.5) as sr:
        consumer: Consumer[Any, Any] = Consumer(
            bootstrap_servers=kafka_broker,
            auto_offset_reset="earliest",
            value_deserializer=AvroDeserializer(sr),
        )
        async with consumer:
            tp = TopicPartition(topic, 0)
            consumer.assign([tp])
            registry_answers.set_delay(3)
            err: RecordDeserializationError | None = None
            with anyio.fail_after(20):
                while err is None:
                    try:
                        assert not await consumer.getmany(timeout_ms=500)
                    except RecordDeserializationError as exc:
                        err = exc
            assert (err.topic, err.partition, err.offset, err.origin) == (topic, 0, 0, "value")
            assert isinstance(err.cause, RegistryUnavailableError)
            assert await consumer.position(tp) == 0
            registry_answers.set_delay(0)
            got: list[Any] = []
            with anyio.fail_after(20):
                while len(got) < 2:
                    batch = await consumer.getmany(timeout_ms=500)
                    got += [(r.offset, r.value) for recs in batch.values() for r in recs]
            assert got == [(0, {"name": "a", "score": 1}), (1, {"name": "b", "score": 2})]


@pytest.mark.anyio
async def test_json_deserializer_resolves_too(
    kafka_broker: str, new_topic: NewTopic, registry_answers: RegistryServer
) -> None:
    topic = new_topic(1)
    async with (
        SchemaRegistryClient(registry_answers.url) as sr,
        Producer(
            bootstrap_servers=kafka_broker,
            value_serializer=JSONSerializer(sr, READING, topic=topic),
        ) as producer,
    ):
        await producer.send(topic, {"sensor": "x"}, partition=0)
    async with SchemaRegistryClient(registry_answers.url) as reader:
        consumer: Consumer[Any, Any] = Consumer(
            bootstrap_servers=kafka_broker,
            auto_offset_reset="earliest",
            value_deserializer=JSONDeserializer(reader),
        )
        async with consumer:
            consumer.assign([TopicPartition(topic, 0)])
            with anyio.fail_after(30):
                record = await consumer.getone()
    assert record.value == {"sensor": "x"}


@pytest.mark.anyio
@pytest.mark.requires_api("ShareGroupHeartbeat", 1)
async def test_share_consumer_resolves_new_schema_ids(
    kafka_broker: str, new_topic: NewTopic, registry_answers: RegistryServer
) -> None:
    topic = new_topic(1)
    group = f"sr-share-{uuid.uuid4().hex[:8]}"
    async with AdminClient(kafka_broker) as admin:
        await admin.incremental_alter_configs(
            {
                ConfigResource.group(group): {
                    "share.auto.offset.reset": "earliest",
                    "share.heartbeat.interval.ms": "500",
                    "share.session.timeout.ms": "6000",
                }
            },
            raise_on_error=True,
        )
    async with (
        SchemaRegistryClient(registry_answers.url) as sr,
        Producer(
            bootstrap_servers=kafka_broker,
            value_serializer=AvroSerializer(sr, json.dumps(USER), topic=topic),
        ) as producer,
    ):
        for i in range(3):
            await producer.send(topic, {"name": f"s{i}", "score": i}, partition=0)
    async with SchemaRegistryClient(registry_answers.url) as reader:
        got: list[tuple[int, Any, int]] = []
        async with ShareConsumer(
            topic,
            bootstrap_servers=kafka_broker,
            group_id=group,
            value_deserializer=AvroDeserializer(reader),
        ) as consumer:
            with anyio.fail_after(30):
                while len(got) < 3:
                    for recs in (await consumer.getmany(timeout_ms=500)).values():
                        got += [(r.offset, r.value, r.delivery_count) for r in recs]
    # Each in order, decoded, on its first delivery (none released by a failed decode).
    assert got == [(i, {"name": f"s{i}", "score": i}, 1) for i in range(3)]
