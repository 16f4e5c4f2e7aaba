"""A background task failing unexpectedly (a bug) must not leave a client hanging: its
calls raise ``BackgroundTaskError``, pending records fail with it, and close() returns.

The bug is planted by replacing one internal step with a function that raises; the
clients run against the real broker otherwise."""

from __future__ import annotations

import uuid
from typing import Any, NoReturn

import anyio
import pytest

from kafka_async import Consumer, Producer
from kafka_async.errors import BackgroundTaskError
from kafka_async.testing import EmbeddedBroker

pytestmark = [pytest.mark.anyio, pytest.mark.integration]


def _bug(*args: Any, **kwargs: Any) -> NoReturn:
    raise RuntimeError("planted bug")


async def test_producer_background_failure_fails_records_and_calls(
    embedded_broker: EmbeddedBroker,
) -> None:
    topic = f"bg-fail-{uuid.uuid4().hex[:8]}"
    await embedded_broker.acreate_topic(topic, partitions=1)
    producer = Producer(bootstrap_servers=embedded_broker.bootstrap_servers)
    await producer.start()
    try:
        producer._acc.drain = _bug  # type: ignore[method-assign]
        delivery = await producer.enqueue(topic, b"x", partition=0)
        with anyio.fail_after(10), pytest.raises(BackgroundTaskError) as info:
            await delivery
        assert isinstance(info.value.__cause__, RuntimeError)
        with pytest.raises(BackgroundTaskError):
            await producer.enqueue(topic, b"y", partition=0)
    finally:
        with anyio.fail_after(10):
            await producer.close()


async def test_consumer_background_failure_wakes_getmany(
    embedded_broker: EmbeddedBroker,
) -> None:
    topic = f"bg-fail-{uuid.uuid4().hex[:8]}"
    await embedded_broker.acreate_topic(topic, partitions=1)
    consumer: Consumer[bytes, bytes] = Consumer(
        topic,
        bootstrap_servers=embedded_broker.bootstrap_servers,
        group_id=f"bg-fail-{uuid.uuid4().hex[:8]}",
    )
    consumer._update_positions = _bug  # type: ignore[method-assign]
    await consumer.start()
    try:
        # A long poll: the failure must end it early, not its timeout.
        with anyio.fail_after(20), pytest.raises(BackgroundTaskError) as info:
            await consumer.getmany(timeout_ms=60_000)
        assert isinstance(info.value.__cause__, RuntimeError)
        with pytest.raises(BackgroundTaskError):
            await consumer.commit()
    finally:
        with anyio.fail_after(15):
            await consumer.close()
