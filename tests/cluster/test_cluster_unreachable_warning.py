"""Issue 22, defect 5 (brokers): nothing was logged at WARNING while no broker could be
reached. Now the first round in which every broker and bootstrap server fails logs one
WARNING naming each address, and the first connection that opens again logs an INFO."""

from __future__ import annotations

import logging

import anyio
import anyio.to_thread
import pytest

from kafka_async import Producer
from kafka_async.testing.apache import ApacheKafka
from kafka_async.testing.topics import create_topic

pytestmark = pytest.mark.integration

POOL = "kafka_async.net.pool"


def pool_records(caplog: pytest.LogCaptureFixture, level: int) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == POOL and r.levelno == level]


async def wait_for_log(caplog: pytest.LogCaptureFixture, level: int, deadline: float) -> None:
    with anyio.fail_after(deadline):
        while not pool_records(caplog, level):  # noqa: ASYNC110 - logging has no event
            await anyio.sleep(0.1)


@pytest.mark.anyio
async def test_no_reachable_broker_is_logged_once_and_the_recovery_at_info(
    apache_kafka: ApacheKafka, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=POOL)
    bootstrap = apache_kafka.bootstrap_servers
    topic = "unreachable-warning"
    create_topic(bootstrap, topic, 1)
    async with Producer(bootstrap, linger_ms=0, reconnect_backoff_max_ms=500) as producer:
        await producer.send(topic, b"before")
        assert not pool_records(caplog, logging.WARNING)

        await anyio.to_thread.run_sync(apache_kafka.stop_node, 1)
        pending = await producer.enqueue(topic, b"while down")
        await wait_for_log(caplog, logging.WARNING, 60)
        # Several more rounds fail meanwhile: still one warning for the episode.
        await anyio.sleep(3)
        warnings = pool_records(caplog, logging.WARNING)
        assert len(warnings) == 1
        message = warnings[0].getMessage()
        assert "no broker can be reached" in message
        assert bootstrap in message
        assert not any("reached after" in r.getMessage() for r in caplog.records)

        # The same port and data again (start_node blocks: in a thread, so the producer's
        # tasks go on meanwhile).
        await anyio.to_thread.run_sync(apache_kafka.start_node, 1)
        await wait_for_log(caplog, logging.INFO, 120)
        with anyio.fail_after(120):
            while not any(  # noqa: ASYNC110 - logging has no event
                "reached after" in r.getMessage() for r in pool_records(caplog, logging.INFO)
            ):
                await anyio.sleep(0.1)
            metadata = await pending
        assert metadata.topic == topic
        assert len(pool_records(caplog, logging.WARNING)) == 1
