"""Issue 22, defect 5 (topics): nothing was logged for a consumer subscribed to a topic that
does not exist. Now the first metadata snapshot without it logs one WARNING naming it, and
the one where it appears an INFO; the consumer then reads it."""

from __future__ import annotations

import logging
import uuid

import anyio
import pytest
from consumer_helpers import FAST_GROUP, produce

from kafka_async.consumer import Consumer
from kafka_async.testing.topics import create_topic

pytestmark = pytest.mark.integration

CLIENT = "kafka_async.cluster.client"


def about(caplog: pytest.LogCaptureFixture, topic: str, level: int) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == CLIENT and r.levelno == level and repr(topic) in r.getMessage()
    ]


@pytest.mark.anyio
async def test_a_subscribed_topic_that_does_not_exist_is_logged_once(
    kafka_broker: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=CLIENT)
    topic = f"not-yet-{uuid.uuid4().hex[:10]}"
    async with Consumer(
        topic,
        bootstrap_servers=kafka_broker,
        group_id=f"g-{topic}",
        metadata_max_age_ms=500,  # refresh often, so several snapshots lack the topic
        **FAST_GROUP,
    ) as consumer:
        with anyio.fail_after(60):
            while not about(caplog, topic, logging.WARNING):
                assert await consumer.getmany(timeout_ms=200) == {}
        await anyio.sleep(2)  # more refreshes without the topic: still one warning
        warnings = about(caplog, topic, logging.WARNING)
        assert len(warnings) == 1
        assert "does not exist" in warnings[0]
        assert not about(caplog, topic, logging.INFO)

        create_topic(kafka_broker, topic, 1)
        produce(kafka_broker, topic, 3)
        got = 0
        with anyio.fail_after(90):
            while got < 3:
                batch = await consumer.getmany(timeout_ms=500)
                got += sum(map(len, batch.values()))
        infos = about(caplog, topic, logging.INFO)
        assert any("exists now" in m for m in infos)
        assert len(about(caplog, topic, logging.WARNING)) == 1
