"""Shutdown: close() under an outer cancellation, at its deadline, with an open transaction;
topic auto-creation through the producer's metadata requests."""

from __future__ import annotations

import logging
import socket
import time
import uuid
from collections.abc import Callable
from typing import Any

import anyio
import pytest

from kafka_async import Producer
from kafka_async.errors import ClientClosedError, KafkaTimeoutError

pytestmark = [pytest.mark.integration]

NewTopic = Callable[..., str]


async def _end_offset(bootstrap: str, topic: str) -> int:
    """The partition's end offset, read as the offset a fresh record gets."""
    async with Producer(bootstrap_servers=bootstrap, linger_ms=0) as probe:
        md = await probe.send(topic, value=b"probe", partition=0)
    return md.offset


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_outer_cancellation_flushes_queued_records(
    kafka_broker: str, new_topic: NewTopic, anyio_backend: str
) -> None:
    """Regression: cancelling the code around ``async with Producer`` (an application
    shutting down, an outer ``move_on_after``) cancelled the sender and the connections
    before close() ran, so the 100 queued records were never sent."""
    topic = new_topic(1)
    deliveries = []
    with anyio.CancelScope() as outer:
        async with Producer(bootstrap_servers=kafka_broker, linger_ms=60_000) as producer:
            producer_ref = producer
            await producer.flush()  # connected, producer id in hand
            first = await producer.enqueue(topic, value=b"first")
            await producer.flush()
            assert first.result().offset == 0
            for i in range(100):
                deliveries.append(await producer.enqueue(topic, value=b"r%d" % i))
            assert not any(d.done() for d in deliveries)  # lingering for a minute
            outer.cancel()
            await anyio.sleep_forever()
    assert outer.cancelled_caught  # the cancellation still propagated
    assert producer_ref.statistics()["state"] == "closed"
    offsets = [d.result().offset for d in deliveries]
    assert offsets == list(range(1, 101))
    assert await _end_offset(kafka_broker, topic) == 101


@pytest.mark.anyio
async def test_outer_move_on_after_flushes_in_flight_and_queued(
    kafka_broker: str, new_topic: NewTopic
) -> None:
    """The same through a deadline, with records spread over partitions and requests."""
    topic = new_topic(3)
    deliveries = []
    with anyio.CancelScope() as outer:
        async with Producer(bootstrap_servers=kafka_broker, linger_ms=20) as producer:
            # The deadline counts from the start: a slow start (a loaded machine) must not
            # use it all up before the first record.
            outer.deadline = anyio.current_time() + 0.5
            while True:
                deliveries.append(await producer.enqueue(topic, value=b"x" * 100))
                if len(deliveries) % 500 == 0:
                    await anyio.sleep(0.001)
    assert outer.cancelled_caught
    assert deliveries
    assert all(d.done() and d.exception() is None for d in deliveries)
    by_partition: dict[int, list[int]] = {}
    for d in deliveries:
        md = d.result()
        by_partition.setdefault(md.partition, []).append(md.offset)
    for offsets in by_partition.values():
        assert offsets == list(range(len(offsets)))


@pytest.mark.anyio
async def test_cancelled_close_with_broker_gone_keeps_its_deadline(
    embedded_broker: Any, caplog: pytest.LogCaptureFixture
) -> None:
    bootstrap = embedded_broker.bootstrap_servers
    await embedded_broker.acreate_topic("gone", 1)
    caplog.set_level(logging.WARNING, logger="kafka_async.producer")
    deliveries = []
    start = 0.0
    with anyio.CancelScope() as outer:
        producer = Producer(
            bootstrap_servers=bootstrap,
            request_timeout_ms=1000,
            delivery_timeout_ms=60_000,
            linger_ms=10_000,
        )
        async with producer:
            await producer.send("gone", value=b"before", partition=0)
            embedded_broker.kill()
            deliveries = [await producer.enqueue("gone", value=b"after") for _ in range(20)]
            # close() below runs with the default deadline (delivery_timeout_ms = 60 s): an
            # explicit close(timeout) is what bounds it here.
            outer.cancel()
            start = time.monotonic()
            await producer.close(timeout=1.0)
    elapsed = time.monotonic() - start
    assert outer.cancelled_caught
    # The deadline plus the shutdown grace, plus slack for a loaded CI machine.
    assert elapsed < 1.0 + 6 + 12
    for d in deliveries:
        assert isinstance(d.exception(), KafkaTimeoutError | ClientClosedError)
    assert any("close() reached its deadline" in r.getMessage() for r in caplog.records)


@pytest.mark.anyio
async def test_close_aborts_an_open_transaction(kafka_broker: str, new_topic: NewTopic) -> None:
    topic = new_topic(1)
    txn_id = f"close-{uuid.uuid4().hex}"
    producer = Producer(
        bootstrap_servers=kafka_broker, transactional_id=txn_id, transaction_timeout_ms=60_000
    )
    await producer.start()
    producer.begin_transaction()
    d = await producer.enqueue(topic, value=b"never committed")
    await producer.flush()
    assert d.exception() is None
    start = time.monotonic()
    await producer.close(timeout=10)
    assert time.monotonic() - start < 10 + 20
    assert producer.statistics()["transaction"]["state"] == "ready"
    # Were the transaction left open, a new instance would wait for the coordinator to
    # abort it (transaction_timeout_ms = 60 s) before it could commit one of its own.
    async with Producer(bootstrap_servers=kafka_broker, transactional_id=txn_id) as again:
        with anyio.fail_after(60):
            async with again.transaction():
                await again.send(topic, value=b"committed")


@pytest.mark.anyio
async def test_send_to_new_topic_lets_the_broker_create_it(kafka_broker: str) -> None:
    name = f"auto-{uuid.uuid4().hex}"
    async with Producer(bootstrap_servers=kafka_broker) as producer:
        with anyio.fail_after(45):
            md = await producer.send(name, value=b"v")
    assert md.topic == name
    assert md.offset == 0


@pytest.mark.anyio
async def test_allow_auto_create_topics_false_does_not_create(kafka_broker: str) -> None:
    name = f"noauto-{uuid.uuid4().hex}"
    async with Producer(
        bootstrap_servers=kafka_broker, allow_auto_create_topics=False, metadata_wait_ms=800
    ) as producer:
        with pytest.raises(KafkaTimeoutError, match="not found"):
            await producer.send(name, value=b"v")
        # Still unknown: the metadata requests above did not create it.
        with pytest.raises(KafkaTimeoutError):
            await producer.partitions_for(name)


@pytest.mark.anyio
async def test_start_can_be_cancelled_while_bootstrapping() -> None:
    """Shielding starts only once the producer runs: a caller giving up on start() (no
    broker there) is not held for the bootstrap deadline."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again below: nothing listens there
    producer = Producer(bootstrap_servers=f"127.0.0.1:{port}", request_timeout_ms=30_000)
    start = time.monotonic()
    with anyio.move_on_after(0.5) as scope:
        await producer.start()
    assert scope.cancelled_caught
    assert time.monotonic() - start < 9
    assert producer.statistics()["state"] == "closed"
    await producer.close()  # a no-op now
    with pytest.raises(ClientClosedError):
        await producer.send("t", value=b"v")
