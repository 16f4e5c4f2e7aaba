"""Issue 22, defect 2: a deserializer that raised surfaced as a bare exception (say a
``UnicodeDecodeError``) with no topic, partition or offset.

Now ``RecordDeserializationError`` names the record and the part that failed, the records
before it are handed out first, the position stays AT the bad record (every read raises the
same error) and ``seek(tp, offset + 1)`` skips it, for ``getmany``, ``getone`` and
``async for``; the share consumer raises its subclass and releases the record.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable

import anyio
import pytest

import kafka_async
from kafka_async import Producer
from kafka_async.admin import AdminClient, ConfigResource
from kafka_async.consumer import Consumer
from kafka_async.consumer.share import RecordDeserializationError as ShareDeserializationError
from kafka_async.consumer.share import ShareConsumer
from kafka_async.errors import KafkaError, RecordDeserializationError
from kafka_async.structs import ConsumerRecord, TopicPartition
from kafka_async.testing.plugin import KafkaService

pytestmark = pytest.mark.integration

#: Offset 2 holds a value that is not UTF-8; offset 4 a key that is not.
RECORDS: list[tuple[bytes, bytes]] = [
    (b"k0", b"v0"),
    (b"k1", b"v1"),
    (b"k2", b"\xff\xfe"),
    (b"k3", b"v3"),
    (b"\xff", b"v4"),
    (b"k5", b"v5"),
]


def utf8(b: bytes | None) -> str | None:
    return None if b is None else b.decode()


async def produce_records(bootstrap: str, topic: str) -> None:
    async with Producer(bootstrap, linger_ms=50) as producer:
        # One batch, so the bad records sit inside a fetch between good ones.
        deliveries = [await producer.enqueue(topic, v, key=k, partition=0) for k, v in RECORDS]
        await producer.flush()
        for d in deliveries:
            await d


def consumer(bootstrap: str, topic: str) -> Consumer[str | None, str | None]:
    c: Consumer[str | None, str | None] = Consumer(
        bootstrap_servers=bootstrap,
        auto_offset_reset="earliest",
        key_deserializer=utf8,
        value_deserializer=utf8,
    )
    c.assign([TopicPartition(topic, 0)])
    return c


def check_error(exc: RecordDeserializationError, topic: str, offset: int, origin: str) -> None:
    assert isinstance(exc, KafkaError)
    assert (exc.topic, exc.partition, exc.offset, exc.origin) == (topic, 0, offset, origin)
    assert exc.topic_partition == TopicPartition(topic, 0)
    assert isinstance(exc.cause, UnicodeDecodeError)
    assert exc.__cause__ is exc.cause
    assert f"{topic}-0 offset {offset}" in str(exc)
    assert origin in str(exc)
    copy = pickle.loads(pickle.dumps(exc))
    assert (copy.topic, copy.offset, copy.origin) == (topic, offset, origin)


async def read_until_error(
    c: Consumer[str | None, str | None],
) -> tuple[list[int], RecordDeserializationError]:
    """The offsets ``getmany`` returns until it raises RecordDeserializationError."""
    seen: list[int] = []
    with anyio.fail_after(30):
        while True:
            try:
                batch = await c.getmany(timeout_ms=500)
            except RecordDeserializationError as exc:
                return seen, exc
            seen += [r.offset for recs in batch.values() for r in recs]


async def iterate_until_error(
    c: Consumer[str | None, str | None],
) -> tuple[list[int], RecordDeserializationError]:
    """The offsets ``async for`` yields until it raises RecordDeserializationError."""
    seen: list[int] = []
    with anyio.fail_after(30):
        try:
            async for record in c:
                seen.append(record.offset)
        except RecordDeserializationError as exc:
            return seen, exc
    raise AssertionError("the iteration ended without an error")


@pytest.mark.anyio
async def test_getmany_hands_out_records_before_then_raises_at_the_bad_one(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(1)
    tp = TopicPartition(topic, 0)
    await produce_records(kafka_broker, topic)
    async with consumer(kafka_broker, topic) as c:
        got: list[ConsumerRecord[str | None, str | None]] = []
        with anyio.fail_after(30):
            while len(got) < 2:
                batch = await c.getmany(timeout_ms=500)
                got += batch.get(tp, [])
        assert [r.value for r in got] == ["v0", "v1"]
        # Every read raises the same error: nothing is skipped silently.
        for _ in range(2):
            with pytest.raises(RecordDeserializationError) as info:
                await c.getmany(timeout_ms=1000)
            check_error(info.value, topic, 2, "value")
            assert await c.position(tp) == 2
        c.seek(tp, info.value.offset + 1)
        # Offset 3 comes out first, then the key of offset 4 fails.
        seen, error = await read_until_error(c)
        assert seen == [3]
        check_error(error, topic, 4, "key")
        c.seek(tp, 5)
        with anyio.fail_after(30):
            batch = {}
            while not batch:
                batch = await c.getmany(timeout_ms=500)
        assert [(r.offset, r.key, r.value) for r in batch[tp]] == [(5, "k5", "v5")]


@pytest.mark.anyio
async def test_getone_and_async_for_raise_it_too(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(1)
    tp = TopicPartition(topic, 0)
    await produce_records(kafka_broker, topic)
    async with consumer(kafka_broker, topic) as c:
        with anyio.fail_after(30):
            assert (await c.getone()).offset == 0
            assert (await c.getone()).offset == 1
            with pytest.raises(RecordDeserializationError) as info:
                await c.getone()
        check_error(info.value, topic, 2, "value")
        assert await c.position(tp) == 2
        c.seek(tp, 3)
        seen, error = await iterate_until_error(c)
        assert seen == [3]
        check_error(error, topic, 4, "key")
        # The iterator goes on from the same place: the same error again.
        seen, error = await iterate_until_error(c)
        assert seen == []
        check_error(error, topic, 4, "key")


def test_exported_from_the_package() -> None:
    assert kafka_async.RecordDeserializationError is RecordDeserializationError
    assert "RecordDeserializationError" in kafka_async.__all__
    assert issubclass(ShareDeserializationError, RecordDeserializationError)


@pytest.mark.requires_api("ShareGroupHeartbeat", 1)
@pytest.mark.anyio
async def test_share_consumer_raises_it_and_releases_the_record(
    kafka_service: KafkaService, new_topic: Callable[..., str]
) -> None:
    bootstrap = kafka_service.bootstrap_servers
    topic = new_topic(1)
    group = f"share-{topic}"
    async with AdminClient(bootstrap) as admin:
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
    await produce_records(bootstrap, topic)
    async with ShareConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=group,
        key_deserializer=utf8,
        value_deserializer=utf8,
    ) as sc:
        offsets: list[int] = []
        errors: list[ShareDeserializationError] = []
        with anyio.fail_after(60):
            # The bad records are released and delivered again: two errors each at least.
            while len(set(offsets)) < 4 or len({e.offset for e in errors}) < 2:
                try:
                    batch = await sc.getmany(timeout_ms=500)
                except ShareDeserializationError as exc:
                    errors.append(exc)
                    continue
                offsets += [r.offset for recs in batch.values() for r in recs]
        assert set(offsets) == {0, 1, 3, 5}
        by_offset = {e.offset: e for e in errors}
        check_error(by_offset[2], topic, 2, "value")
        check_error(by_offset[4], topic, 4, "key")
        assert "released" in str(by_offset[2])
