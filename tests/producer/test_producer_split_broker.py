"""Batches refused as too large are split and re-sent: end to end on a real broker.

On the run's broker a topic's own ``max.message.bytes`` is the limit (Apache Kafka enforces
it). Tansu does not enforce a topic's ``max.message.bytes`` (checked: a 5000-byte record is
written to a topic created with ``max.message.bytes=2000``), so a FaultProxy stands in for
the limit with :meth:`~kafka_async.testing.FaultProxy.refuse_large_batches`: an oversized
batch never reaches the broker and is answered MESSAGE_TOO_LARGE, as Kafka answers it
(a rewritten answer to a batch the broker *did* write would be a different, impossible
situation). Our own Consumer reads everything back.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from kafka_async import Consumer, Producer
from kafka_async.cluster.client import ClusterClient
from kafka_async.errors import MessageTooLargeError
from kafka_async.net.config import ClientConfig
from kafka_async.protocol.apis import PRODUCE
from kafka_async.protocol.apis.produce import PartitionProduceData, ProduceRequest, TopicProduceData
from kafka_async.records.batch import BatchBuilder
from kafka_async.structs import TopicPartition
from kafka_async.testing import ProxiedBroker
from kafka_async.testing.proxy import start_proxied_broker

pytestmark = [pytest.mark.integration]

PARTITIONS = 3
#: The emulated max.message.bytes: far below the producer's batch size.
LIMIT = 2_000


@pytest.fixture(scope="module")
def split_broker() -> Iterator[ProxiedBroker]:
    pb = start_proxied_broker()
    try:
        yield pb
    finally:
        pb.close()


@pytest.fixture
def limited(split_broker: ProxiedBroker) -> Iterator[ProxiedBroker]:
    split_broker.proxy.refuse_large_batches(LIMIT)
    try:
        yield split_broker
    finally:
        split_broker.proxy.refuse_large_batches(None)


def _topic(pb: ProxiedBroker) -> str:
    name = f"split-{uuid.uuid4().hex[:8]}"
    pb.broker.create_topic(name, partitions=PARTITIONS)
    return name


def _value(partition: int, i: int, size: int = 100) -> bytes:
    return f"{partition}:{i:06d}:".encode().ljust(size, b".")


async def _read_back(pb: ProxiedBroker, topic: str, expected: int) -> dict[int, list[bytes]]:
    """Every record of ``topic`` per partition, in offset order, read by our Consumer."""
    consumer: Consumer[bytes, bytes] = Consumer(
        bootstrap_servers=pb.bootstrap_servers, auto_offset_reset="earliest"
    )
    await consumer.start()
    out: dict[int, list[bytes]] = {p: [] for p in range(PARTITIONS)}
    try:
        consumer.assign([TopicPartition(topic, p) for p in range(PARTITIONS)])
        seen = 0
        with anyio.fail_after(60):
            while seen < expected:
                for tp, records in (await consumer.getmany(timeout_ms=500)).items():
                    out[tp.partition].extend(r.value for r in records if r.value is not None)
                    seen += len(records)
        # Anything beyond what we expect would be a duplicate: give it a moment to show.
        for tp, records in (await consumer.getmany(timeout_ms=500)).items():
            out[tp.partition].extend(r.value for r in records if r.value is not None)
    finally:
        await consumer.close()
    return out


def _producer(pb: ProxiedBroker, **config: Any) -> Producer:
    settings: dict[str, Any] = {
        "acks": "all",
        "linger_ms": 20,
        "max_batch_size": 16_384,
        "max_in_flight_requests_per_connection": 5,
        "request_timeout_ms": 5_000,
        "delivery_timeout_ms": 30_000,
        "retry_backoff_ms": 20,
    }
    settings.update(config)
    return Producer(bootstrap_servers=pb.bootstrap_servers, **settings)


@pytest.mark.anyio
@pytest.mark.parametrize("idempotent", [True, False], ids=["idempotent", "plain"])
async def test_oversized_batches_are_split_and_every_record_lands_once_in_order(
    limited: ProxiedBroker, idempotent: bool
) -> None:
    pb = limited
    topic = _topic(pb)
    per_partition = 400
    refused_before = pb.proxy.stats.batches_refused
    # Batches of 4 KiB filled faster than the broker answers: several batches of a partition
    # are in flight when the first comes back refused, so (idempotent) the later ones come
    # back OUT_OF_ORDER_SEQUENCE_NUMBER and must follow the split pieces without a gap.
    async with _producer(
        pb, enable_idempotence=idempotent, max_batch_size=4_096, linger_ms=5
    ) as producer:
        deliveries = []
        with anyio.fail_after(60):
            for i in range(per_partition):
                for p in range(PARTITIONS):
                    deliveries.append(await producer.enqueue(topic, _value(p, i), partition=p))
            metadata = [await d for d in deliveries]
        stats = producer.statistics()
    # Batches of ~4 KiB against a 2000-byte limit: each is split until its pieces fit.
    assert stats["batch_splits"] > 0
    assert pb.proxy.stats.batches_refused - refused_before >= stats["batch_splits"]
    assert stats["records_failed"] == 0
    assert stats["records_acked"] == per_partition * PARTITIONS
    if idempotent:
        assert stats["epoch_bumps"] == 0
    # Each record's own metadata: offsets count up per partition in the order sent.
    for p in range(PARTITIONS):
        offsets = [m.offset for m in metadata if m.partition == p]
        assert offsets == list(range(per_partition))
    read = await _read_back(pb, topic, per_partition * PARTITIONS)
    for p in range(PARTITIONS):
        assert read[p] == [_value(p, i) for i in range(per_partition)]


@pytest.mark.anyio
@pytest.mark.parametrize("idempotent", [True, False], ids=["idempotent", "plain"])
async def test_one_oversized_record_fails_alone_and_loses_nothing_else(
    limited: ProxiedBroker, idempotent: bool
) -> None:
    pb = limited
    topic = _topic(pb)
    big_at = 37
    count = 80
    async with _producer(pb, enable_idempotence=idempotent, linger_ms=50) as producer:
        with anyio.fail_after(60):
            deliveries = [
                await producer.enqueue(
                    topic, _value(0, i, 3 * LIMIT if i == big_at else 100), partition=0
                )
                for i in range(count)
            ]
            outcomes: list[object] = []
            for d in deliveries:
                try:
                    outcomes.append(await d)
                except MessageTooLargeError as exc:
                    outcomes.append(exc)
        stats = producer.statistics()
    assert isinstance(outcomes[big_at], MessageTooLargeError)
    assert [i for i, o in enumerate(outcomes) if isinstance(o, BaseException)] == [big_at]
    assert stats["records_failed_by_error"] == {"MESSAGE_TOO_LARGE": 1}
    assert stats["batch_splits"] > 0
    kept = [i for i in range(count) if i != big_at]
    read = await _read_back(pb, topic, len(kept))
    assert read[0] == [_value(0, i) for i in kept]
    assert read[1] == read[2] == []


@pytest.mark.anyio
async def test_split_batches_in_a_transaction_commit_once(limited: ProxiedBroker) -> None:
    pb = limited
    topic = _topic(pb)
    per_partition = 150
    producer = _producer(pb, transactional_id=f"split-{uuid.uuid4().hex[:8]}")
    async with producer:
        with anyio.fail_after(60):
            async with producer.transaction():
                for i in range(per_partition):
                    for p in range(PARTITIONS):
                        await producer.enqueue(topic, _value(p, i), partition=p)
        stats = producer.statistics()
    assert stats["batch_splits"] > 0
    assert stats["records_failed"] == 0
    read = await _read_back(pb, topic, per_partition * PARTITIONS)
    for p in range(PARTITIONS):
        # Control records carry no value: only the data records are compared.
        assert read[p] == [_value(p, i) for i in range(per_partition)]


@pytest.mark.anyio
async def test_bulk_enqueue_is_split_per_record(limited: ProxiedBroker) -> None:
    pb = limited
    topic = _topic(pb)
    values = [_value(1, i) for i in range(500)]
    async with _producer(pb, enable_idempotence=True) as producer:
        with anyio.fail_after(60):
            bulk = await producer.enqueue_many(topic, values, partition=1)
            assert await bulk == len(values)
        results = bulk.results()
        assert producer.statistics()["batch_splits"] > 0
    assert [r.offset for r in results] == list(range(len(values)))  # type: ignore[union-attr]
    read = await _read_back(pb, topic, len(values))
    assert read[1] == values


@pytest.mark.anyio
async def test_proxy_limit_refuses_only_the_oversized_partition(limited: ProxiedBroker) -> None:
    """The emulated limit itself: in one Produce request, the oversized partition is answered
    MESSAGE_TOO_LARGE and not written; the other partition is written and answered as usual."""
    pb = limited
    topic = _topic(pb)
    small = BatchBuilder(None)
    small.append(1_000, None, b"small")
    large = BatchBuilder(None, batch_size_limit=4 * LIMIT)
    large.append(1_000, None, b"L" * (2 * LIMIT))
    body = ProduceRequest(
        transactional_id=None,
        acks=-1,
        timeout_ms=5_000,
        topic_data=[
            TopicProduceData(
                name=topic,
                partition_data=[
                    PartitionProduceData(index=0, records=small.build()),
                    PartitionProduceData(index=1, records=large.build()),
                ],
            )
        ],
    )
    refused_before = pb.proxy.stats.batches_refused
    async with ClusterClient(ClientConfig(bootstrap_servers=pb.bootstrap_servers)) as client:
        with anyio.fail_after(30):
            await client.refresh_metadata([topic])
            leader = client.metadata.leader_for(TopicPartition(topic, 0))
            assert leader is not None
            assert leader == client.metadata.leader_for(TopicPartition(topic, 1))
            resp = await client.request(leader, PRODUCE, body)
    codes = {p.index: p.error_code for t in resp.responses for p in t.partition_responses}
    assert codes == {0: 0, 1: MessageTooLargeError.code}
    assert pb.proxy.stats.batches_refused - refused_before == 1
    read = await _read_back(pb, topic, 1)
    assert read == {0: [b"small"], 1: [], 2: []}


def _librdkafka_oversized_refused(bootstrap: str, topic: str, size: int) -> str | None:
    """None when the broker refuses librdkafka a ``size``-byte record on ``topic`` as too
    large; else what happened instead."""
    from confluent_kafka import Producer as RdProducer

    from tests.harness.broker_gaps import librdkafka_error

    reports: list[Any] = []
    # librdkafka's own message.max.bytes is far above ``size``: the broker must refuse it.
    producer = RdProducer({"bootstrap.servers": bootstrap, "linger.ms": 0})

    def produce() -> None:
        producer.produce(topic, b"x" * size, on_delivery=lambda err, _msg: reports.append(err))
        producer.flush(15)

    return librdkafka_error(
        produce,
        check=lambda _: (
            None
            if reports and reports[0] is not None and "TOO_LARGE" in reports[0].name()
            else f"delivery report {reports[0] if reports else 'missing'} for a {size}-byte record"
        ),
    )


@pytest.mark.anyio
async def test_batches_over_the_topics_max_message_bytes_are_split(
    kafka_broker: str, new_topic: Any
) -> None:
    """The broker's own limit (``max.message.bytes`` of the topic), no proxy: batches over it
    come back MESSAGE_TOO_LARGE, are split, and every record lands once, in order."""
    topic = new_topic(1, configs={"max.message.bytes": str(LIMIT)})
    count = 120
    async with Producer(
        bootstrap_servers=kafka_broker, linger_ms=20, max_batch_size=16_384, acks="all"
    ) as producer:
        with anyio.fail_after(60):
            deliveries = [await producer.enqueue(topic, _value(0, i, 150)) for i in range(count)]
            await producer.flush()
        stats = producer.statistics()
    assert [d.exception() for d in deliveries if d.exception() is not None] == []
    if stats["batch_splits"] == 0:
        from tests.harness.broker_gaps import confirm_broker_gap

        theirs = await anyio.to_thread.run_sync(
            _librdkafka_oversized_refused, kafka_broker, topic, 5 * LIMIT
        )
        confirm_broker_gap(
            f"max.message.bytes={LIMIT} on the topic",
            f"batches of up to 16 KiB accepted (statistics: {stats['errors_by_code']})",
            theirs,
        )
    assert stats["batch_splits"] >= 1
    assert stats["errors_by_code"].get("MESSAGE_TOO_LARGE", 0) >= 1
    offsets = [d.result().offset for d in deliveries]
    assert offsets == list(range(count))
    consumer: Consumer[bytes, bytes] = Consumer(
        bootstrap_servers=kafka_broker, auto_offset_reset="earliest"
    )
    async with consumer:
        consumer.assign([TopicPartition(topic, 0)])
        values: list[bytes] = []
        with anyio.fail_after(30):
            while len(values) < count:
                for records in (await consumer.getmany(timeout_ms=500)).values():
                    values.extend(r.value for r in records if r.value is not None)
    assert values == [_value(0, i, 150) for i in range(count)]
