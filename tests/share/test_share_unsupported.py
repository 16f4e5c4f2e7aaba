"""A broker without share groups (KIP-932): the share consumer fails with a typed error that
says so, at once, instead of waiting for an assignment that never comes.

It runs where the run's broker does not advertise ShareGroupHeartbeat v1 (Tansu, Kafka
before 4.1); on Apache Kafka 4.1 the share tests in ``test_share_consumer.py`` cover the
API, so this one is skipped there.
"""

from __future__ import annotations

import anyio
import pytest

from kafka_async.consumer.share import ShareConsumer
from kafka_async.errors import IncompatibleBrokerVersionError
from kafka_async.testing.plugin import KafkaService

pytestmark = pytest.mark.integration


@pytest.mark.anyio
async def test_a_broker_without_share_groups_gives_a_typed_error(
    kafka_service: KafkaService, kafka_broker: str
) -> None:
    if kafka_service.supports("ShareGroupHeartbeat", 1):
        pytest.skip(
            f"{kafka_service.kind} {kafka_service.version} advertises ShareGroupHeartbeat v1: "
            "the broker supports share groups (test_share_consumer.py tests them)"
        )
    with anyio.fail_after(30):
        async with ShareConsumer("jobs", bootstrap_servers=kafka_broker, group_id="g") as c:
            with pytest.raises(IncompatibleBrokerVersionError, match="share groups"):
                await c.getmany(timeout_ms=20_000)
            with pytest.raises(IncompatibleBrokerVersionError):
                await c.commit()
        assert c.statistics()["group"]["state"] == "failed"
