"""Fetch by topic id on a real broker: the version both sides support (v13+ names topics by
id, KIP-516), and a topic deleted and recreated under the same name (a new id) while a
consumer reads it."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import pytest
from consumer_helpers import produce

from kafka_async.admin import AdminClient
from kafka_async.consumer import Consumer
from kafka_async.errors import TopicAlreadyExistsError
from kafka_async.structs import ConsumerRecord, TopicPartition
from kafka_async.testing.plugin import KafkaService
from kafka_async.testing.topics import acreate_topic

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

Records = list[ConsumerRecord[bytes, bytes]]


async def _read(consumer: Consumer[bytes, bytes], n: int, wait: float = 30.0) -> Records:
    """``n`` records (fails after ``wait`` seconds), then whatever else comes within 0.5 s."""
    out: Records = []
    with anyio.fail_after(wait):
        while len(out) < n:
            for recs in (await consumer.getmany(timeout_ms=500)).values():
                out.extend(recs)
    for recs in (await consumer.getmany(timeout_ms=500)).values():
        out.extend(recs)
    return out


def _keys(records: Records) -> list[bytes]:
    return [r.key or b"" for r in records]


async def test_fetch_version_is_the_highest_both_sides_support(
    kafka_service: KafkaService, new_topic: Callable[..., str]
) -> None:
    """The consumer fetches at the broker's highest Fetch version (up to v17): by topic id
    from v13 on, on a session keyed by id."""
    topic = new_topic(2)
    produce(kafka_service.bootstrap_servers, topic, 40, partitions=2)
    async with Consumer(
        bootstrap_servers=kafka_service.bootstrap_servers,
        auto_offset_reset="earliest",
        fetch_max_wait_ms=100,
    ) as c:
        c.assign([TopicPartition(topic, p) for p in range(2)])
        got = await _read(c, 40)
        await c.getmany(timeout_ms=300)  # an incremental fetch or two in the session
        stats = c.statistics()["fetcher"]
    assert sorted(_keys(got)) == sorted(str(i).encode() for i in range(40))
    broker_max = kafka_service.apis()[1][1]
    versions = set(stats["fetches_by_version"])
    assert versions == {min(broker_max, 17)}, (versions, broker_max)
    if kafka_service.kind == "apache" and broker_max >= 17:
        assert versions == {17}  # Kafka 4.x serves Fetch v17, as the Java client uses
    # Older brokers advertise less (Kafka 2.8: Fetch v0-12, no topic ids): the highest.
    by_id = min(broker_max, 17) >= 13
    for node, s in stats["sessions"].items():
        if s["session_id"] != 0:
            assert s["by_topic_id"] is by_id, (node, s)


@pytest.mark.requires_api("DeleteTopics")
async def test_recreated_topic_is_read_from_its_beginning(
    kafka_service: KafkaService, new_topic: Callable[..., str]
) -> None:
    """A topic deleted and recreated under its name while assigned: the new topic has a new
    id, the consumer's position (20, in the old log) means nothing there, and every record
    of the new topic is read, from its first, although the new log is longer than 20."""
    servers = kafka_service.bootstrap_servers
    topic = new_topic(1)
    tp = TopicPartition(topic, 0)
    produce(servers, topic, 20)
    async with (
        Consumer(
            bootstrap_servers=servers,
            auto_offset_reset="latest",  # a recreated topic starts at its beginning anyway
            fetch_max_wait_ms=100,
            metadata_max_age_ms=2000,
        ) as c,
        AdminClient(bootstrap_servers=servers) as admin,
    ):
        c.assign([tp])
        c.seek(tp, 0)
        first = await _read(c, 20)
        assert _keys(first) == [str(i).encode() for i in range(20)]
        old_id = c._client.metadata.topic_id(topic)
        assert old_id is not None
        await admin.delete_topics([topic], raise_on_error=True)
        with anyio.fail_after(30):
            while True:
                try:
                    await acreate_topic(servers, topic, 1)
                    break
                except TopicAlreadyExistsError:
                    await anyio.sleep(0.2)  # the deletion is still under way
        produce(servers, topic, 50, start=100)
        second = await _read(c, 50)
        stats = c.statistics()["fetcher"]
        new_id = c._client.metadata.topic_id(topic)
    assert _keys(second) == [str(i).encode() for i in range(100, 150)]
    assert [r.offset for r in second] == list(range(50))
    assert new_id is not None
    assert new_id != old_id
    assert stats["recreated_topics"] >= 1
