"""The consumer and producer on broker features Kafka promises: deleted records and each
``auto_offset_reset``, LogAppendTime topics, incremental fetch sessions, partitions added to a
topic in use.

Each runs for real on Apache Kafka. Where the run's broker does not advertise an API the test
is skipped with what kafka_async and librdkafka saw in ApiVersions (``requires_api``); where it
advertises one but fails it, the test is skipped only with librdkafka's answer to the same
request as evidence (``confirm_broker_gap``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import anyio
import pytest
from consumer_helpers import FAST_GROUP, produce

from kafka_async import Producer
from kafka_async.admin import AdminClient, NewPartitions
from kafka_async.consumer import Consumer
from kafka_async.consumer.config import AutoOffsetReset
from kafka_async.errors import (
    KafkaConnectionError,
    KafkaTimeoutError,
    OffsetOutOfRangeError,
)
from kafka_async.structs import ConsumerRecord, TimestampType, TopicPartition
from kafka_async.testing.plugin import KafkaService
from tests.harness.broker_gaps import (
    confirm_broker_gap,
    librdkafka_admin_error,
    librdkafka_log_append_time_error,
)

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

Records = list[ConsumerRecord[bytes, bytes]]


async def delete_records_or_gap(bootstrap: str, tp: TopicPartition, before: int) -> None:
    """Delete the records of ``tp`` before offset ``before``: a broker that fails the
    advertised DeleteRecords skips the test with librdkafka's answer (or fails it when
    librdkafka succeeds)."""
    async with AdminClient(bootstrap) as admin:
        try:
            got = await admin.delete_records({tp: before}, timeout_ms=5000, raise_on_error=True)
        except (KafkaConnectionError, KafkaTimeoutError) as exc:
            from confluent_kafka import TopicPartition as RdTopicPartition

            theirs = await anyio.to_thread.run_sync(
                lambda: librdkafka_admin_error(
                    bootstrap,
                    lambda a: a.delete_records([RdTopicPartition(tp.topic, tp.partition, before)]),
                )
            )
            confirm_broker_gap("DeleteRecords", exc, theirs)
    assert got[tp].low_watermark == before


async def drain(consumer: Consumer[bytes, bytes], n: int, wait: float = 20.0) -> Records:
    """``n`` records (fails after ``wait`` seconds), then whatever else comes within 0.5 s."""
    out: Records = []
    with anyio.fail_after(wait):
        while len(out) < n:
            for recs in (await consumer.getmany(timeout_ms=500)).values():
                out.extend(recs)
    for recs in (await consumer.getmany(timeout_ms=500)).values():
        out.extend(recs)
    return out


# -- an out-of-range position after DeleteRecords ----------------------------------------------


@pytest.mark.requires_api("DeleteRecords")
@pytest.mark.parametrize("reset", ["earliest", "latest", "none"])
async def test_committed_offset_deleted_under_the_group(
    kafka_broker: str, new_topic: Callable[..., str], reset: AutoOffsetReset
) -> None:
    """The group's committed offset (2) was deleted (log start is now 6): the next member
    resets by its ``auto_offset_reset``, or raises the typed error with ``"none"``."""
    topic = new_topic(1)
    tp = TopicPartition(topic, 0)
    produce(kafka_broker, topic, 10)
    group = f"oor-{reset}-{topic}"
    async with Consumer(bootstrap_servers=kafka_broker, group_id=group) as c:
        c.assign([tp])
        await c.commit({tp: 2})
    await delete_records_or_gap(kafka_broker, tp, 6)
    async with Consumer(
        bootstrap_servers=kafka_broker,
        group_id=group,
        auto_offset_reset=reset,
        enable_auto_commit=False,
    ) as c:
        c.assign([tp])
        if reset == "none":

            async def poll_until_error() -> None:
                with anyio.fail_after(20):
                    while True:
                        await c.getmany(timeout_ms=500)

            with pytest.raises(OffsetOutOfRangeError):
                await poll_until_error()
            return
        if reset == "earliest":
            got = await drain(c, 4)
            assert [r.offset for r in got] == [6, 7, 8, 9]
            return
        # latest: nothing of what is there; what comes next.
        with anyio.fail_after(20):
            while await c.position(tp) != 10:
                await c.getmany(timeout_ms=200)
        assert await c.getmany(timeout_ms=300) == {}
        produce(kafka_broker, topic, 2, start=10)
        got = await drain(c, 2)
        assert [r.offset for r in got] == [10, 11]


# -- LogAppendTime -----------------------------------------------------------------------------


async def test_log_append_time_topic(kafka_broker: str, new_topic: Callable[..., str]) -> None:
    """On a LogAppendTime topic the broker stamps each batch with its own clock: the producer's
    metadata and the consumed records carry that time and the LOG_APPEND_TIME type, not the
    timestamp the producer sent."""
    topic = new_topic(1, configs={"message.timestamp.type": "LogAppendTime"})
    sent_ts = int(time.time() * 1000) - 3_600_000  # an hour ago: far from the broker's clock
    before = int(time.time() * 1000)
    async with Producer(bootstrap_servers=kafka_broker, linger_ms=0) as p:
        metas = [await p.send(topic, b"v%d" % i, timestamp_ms=sent_ts) for i in range(3)]
    after = int(time.time() * 1000)
    if metas[0].timestamp_type != TimestampType.LOG_APPEND_TIME:
        theirs = await anyio.to_thread.run_sync(
            librdkafka_log_append_time_error, kafka_broker, topic, sent_ts
        )
        confirm_broker_gap("a LogAppendTime topic", f"{metas[0]!r}", theirs)
    for md in metas:
        assert md.timestamp_type == TimestampType.LOG_APPEND_TIME
        assert before - 1000 <= md.timestamp <= after + 1000
    async with Consumer(bootstrap_servers=kafka_broker, auto_offset_reset="earliest") as c:
        c.assign([TopicPartition(topic, 0)])
        got = await drain(c, 3)
    assert [r.value for r in got] == [b"v0", b"v1", b"v2"]
    for r, md in zip(got, metas, strict=True):
        assert r.timestamp_type == TimestampType.LOG_APPEND_TIME
        assert r.timestamp == md.timestamp
    # A CreateTime topic keeps the producer's timestamp (the control case).
    plain = new_topic(1)
    async with Producer(bootstrap_servers=kafka_broker, linger_ms=0) as p:
        md = await p.send(plain, b"x", timestamp_ms=sent_ts)
    assert (md.timestamp, md.timestamp_type) == (sent_ts, TimestampType.CREATE_TIME)


# -- incremental fetch sessions (KIP-227) ------------------------------------------------------


async def test_incremental_fetch_sessions(
    kafka_service: KafkaService, new_topic: Callable[..., str]
) -> None:
    """A consumer of several partitions opens one fetch session per broker and then sends
    incremental fetches in it; the statistics show the session id and the counts."""
    kafka_broker = kafka_service.bootstrap_servers
    topic = new_topic(3)
    produce(kafka_broker, topic, 300, partitions=3)
    tps = [TopicPartition(topic, p) for p in range(3)]
    async with Consumer(
        bootstrap_servers=kafka_broker,
        auto_offset_reset="earliest",
        max_partition_fetch_bytes=2048,  # several fetches per partition
        fetch_max_wait_ms=100,
    ) as c:
        c.assign(tps)
        got = await drain(c, 300)
        # Idle fetches of the same three partitions continue the same session.
        await c.getmany(timeout_ms=600)
        sessions = c.statistics()["fetcher"]["sessions"]
    assert sorted((r.partition, r.offset) for r in got) == [
        (p, o) for p in range(3) for o in range(100)
    ]
    assert sessions, "no fetch loop ran"
    if kafka_service.kind == "apache":
        # Apache Kafka grants sessions (max.incremental.fetch.session.cache.slots=1000).
        for node, s in sessions.items():
            assert s["session_id"] != 0, (node, s)
            assert s["incremental_requests"] >= 3, (node, s)
            assert s["full_requests"] <= 2, (node, s)
            assert s["epoch"] >= 2, (node, s)
    else:
        # KIP-227 lets a broker decline sessions (session id 0 in every answer); the client
        # then keeps to full requests, and every one of them still delivered.
        for node, s in sessions.items():
            if s["session_id"] == 0:
                assert s["incremental_requests"] <= 1, (node, s)


# -- CreatePartitions seen by a running producer and consumer ----------------------------------


@pytest.mark.requires_api("CreatePartitions")
async def test_partitions_added_reach_running_clients(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """Partitions added to a topic in use get records from a running producer and are
    consumed by a running group member, within the metadata refresh interval."""
    topic = new_topic(1)
    refresh_ms = 1000
    sent: dict[int, set[bytes]] = {}
    consumed: dict[int, set[bytes]] = {}
    async with (
        Producer(
            bootstrap_servers=kafka_broker, linger_ms=0, metadata_max_age_ms=refresh_ms
        ) as producer,
        Consumer(
            topic,
            bootstrap_servers=kafka_broker,
            group_id=f"grow-{topic}",
            metadata_max_age_ms=refresh_ms,
            **FAST_GROUP,
        ) as consumer,
    ):
        await consumer.wait_for_assignment(timeout=20)
        assert consumer.assignment() == {TopicPartition(topic, 0)}

        async def send(i: int) -> None:
            key = b"k%d" % i
            md = await producer.send(topic, b"v%d" % i, key=key)
            sent.setdefault(md.partition, set()).add(key)

        for i in range(10):
            await send(i)
        assert set(sent) == {0}
        async with AdminClient(kafka_broker) as admin:
            (await admin.create_partitions({topic: NewPartitions(3)})).raise_first()
        grown_at = time.monotonic()
        i = 10
        # Keyed records hash over every partition the producer knows of.
        with anyio.fail_after(refresh_ms / 1000 + 10):
            while set(sent) != {0, 1, 2}:
                await send(i)
                i += 1
                await anyio.sleep(0.02)
        producer_saw_it = time.monotonic() - grown_at
        with anyio.fail_after(refresh_ms / 1000 + 20):
            while consumed != sent:
                for tp, recs in (await consumer.getmany(timeout_ms=300)).items():
                    consumed.setdefault(tp.partition, set()).update(
                        r.key for r in recs if r.key is not None
                    )
        assert consumer.assignment() == {TopicPartition(topic, p) for p in range(3)}
    assert consumed == sent
    assert producer_saw_it <= refresh_ms / 1000 + 10
