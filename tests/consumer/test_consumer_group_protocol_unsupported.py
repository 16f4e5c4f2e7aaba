"""``group_protocol="consumer"`` on a broker without the consumer group protocol (Tansu, or
Apache Kafka before 4.0): a typed error naming the way out, not a hang."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import pytest

from kafka_async.consumer import Consumer
from kafka_async.errors import IncompatibleBrokerVersionError
from kafka_async.testing.plugin import KafkaService

pytestmark = pytest.mark.integration


@pytest.mark.anyio
async def test_consumer_protocol_on_a_broker_without_it_is_a_typed_error(
    kafka_service: KafkaService, new_topic: Callable[..., str]
) -> None:
    if kafka_service.supports("ConsumerGroupHeartbeat", 1):
        pytest.skip(
            f"{kafka_service.kind} {kafka_service.version} supports the consumer group "
            "protocol (tests/consumer/test_consumer_group_protocol.py runs there)"
        )
    topic = new_topic(1)
    async with Consumer(
        topic,
        bootstrap_servers=kafka_service.bootstrap_servers,
        group_id=f"kip848-unsupported-{topic}",
        group_protocol="consumer",
    ) as c:

        async def poll() -> None:
            with anyio.fail_after(30):
                while True:
                    await c.getmany(timeout_ms=100)

        with pytest.raises(IncompatibleBrokerVersionError, match="group_protocol='classic'"):
            await poll()
