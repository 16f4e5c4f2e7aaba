"""Issue 22, defect 4: ``send()`` to a topic that does not exist, with the broker's topic
auto-creation off, blocked for ``delivery_timeout_ms`` (120 s).

``max_block_ms`` (Java's ``max.block.ms``, default 60 s) now bounds the wait for a topic's
metadata (and for buffer space); the ``KafkaTimeoutError`` names the topic and the setting.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import anyio
import pytest

from kafka_async import Producer
from kafka_async.errors import KafkaTimeoutError
from kafka_async.testing.apache import ApacheKafka
from kafka_async.testing.plugin import skip_or_fail

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
