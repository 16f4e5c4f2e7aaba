"""Issue 22, defect 4: ``send()`` to a topic that does not exist, with the broker's topic
auto-creation off, blocked for ``delivery_timeout_ms`` (120 s).

``max_block_ms`` (Java's ``max.block.ms``, default 60 s) now bounds the wait for a topic's
metadata (and for buffer space); the ``KafkaTimeoutError`` names the topic and the setting.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import anyio
import anyio.to_thread
import pytest

from kafka_async import Producer
from kafka_async.errors import KafkaTimeoutError
from kafka_async.testing.apache import ApacheKafka
from kafka_async.testing.plugin import skip_or_fail
from kafka_async.testing.topics import create_topic

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def no_autocreate_broker() -> Iterator[str]:
    """An Apache Kafka broker that does not create topics on first use."""
    from kafka_async.testing.apache import KafkaPrerequisiteError

    kafka = ApacheKafka(broker_config={"auto.create.topics.enable": "false"})
    try:
        kafka.start()
    except KafkaPrerequisiteError as exc:
        skip_or_fail(f"Apache Kafka cannot run here: {exc}")
    try:
        yield kafka.bootstrap_servers
    finally:
        kafka.stop()


def test_default_is_javas() -> None:
    assert Producer().config.max_block_ms == 60_000


@pytest.mark.parametrize("call", ["send", "enqueue", "produce"])
@pytest.mark.anyio
async def test_send_to_a_missing_topic_gives_up_after_max_block_ms(
    no_autocreate_broker: str, call: str
) -> None:
    topic = f"missing-{uuid.uuid4().hex[:10]}"
    # The producer's default lets the broker auto-create: the broker's setting is what
    # keeps the topic from appearing.
    async with Producer(no_autocreate_broker, max_block_ms=1_500) as producer:
        with anyio.fail_after(60), pytest.raises(KafkaTimeoutError) as info:
            await getattr(producer, call)(topic, b"v")
        message = str(info.value)
        assert repr(topic) in message
        assert "max_block_ms=1500" in message
        # The producer stays usable for topics that exist.
        assert producer.state.value == "running"


async def fill_buffer(producer: Producer, topic: str) -> None:
    """Queue 1000-byte records until one has to wait for buffer space."""
    for _ in range(100):
        await producer.enqueue(topic, b"x" * 1000)


@pytest.mark.anyio
async def test_waiting_for_buffer_space_gives_up_after_max_block_ms(
    apache_kafka: ApacheKafka,
) -> None:
    bootstrap = apache_kafka.bootstrap_servers
    topic = "max-block-buffer"
    create_topic(bootstrap, topic, 1)
    producer = Producer(
        bootstrap,
        max_block_ms=1_500,
        buffer_memory=4_096,
        max_batch_size=2_048,
        max_request_size=2_048,
        linger_ms=0,
    )
    await producer.start()
    try:
        await producer.send(topic, b"first")
        # With the broker gone nothing drains the buffer.
        await anyio.to_thread.run_sync(apache_kafka.stop_node, 1)
        with anyio.fail_after(60), pytest.raises(KafkaTimeoutError) as info:
            await fill_buffer(producer, topic)
        message = str(info.value)
        assert "no buffer space" in message
        assert "max_block_ms (1500" in message
    finally:
        await producer.close(timeout=1)
