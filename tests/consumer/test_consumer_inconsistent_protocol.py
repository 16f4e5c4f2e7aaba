"""Issue 22, defect 7: a rolling migration (aiokafka members and ours in one group) failed
with a bare ``InconsistentGroupProtocolError``: aiokafka offers only "roundrobin", we offer
("range", "cooperative-sticky") by default. The error now says what we offered, what the
group uses (asked with DescribeGroups) and which setting matches it."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import pytest
from aiokafka import AIOKafkaConsumer

from kafka_async.consumer import Consumer
from kafka_async.consumer.group.state import inconsistent_protocol_error
from kafka_async.errors import InconsistentGroupProtocolError
from kafka_async.testing.plugin import KafkaService

pytestmark = pytest.mark.integration


async def poll_forever(consumer: Consumer[bytes, bytes]) -> None:
    while True:
        await consumer.getmany(timeout_ms=500)


@pytest.mark.anyio
async def test_joining_an_aiokafka_roundrobin_group_says_how_to_match_it(
    kafka_broker: str, new_topic: Callable[..., str], kafka_service: KafkaService
) -> None:
    topic = new_topic(2)
    group = f"migrate-{topic}"
    aio = AIOKafkaConsumer(  # aiokafka's default assignor: roundrobin only
        topic,
        bootstrap_servers=kafka_broker,
        group_id=group,
        session_timeout_ms=10_000,
        heartbeat_interval_ms=500,
    )
    await aio.start()  # returns once it holds its first assignment
    try:
        with anyio.fail_after(30):
            while not aio.assignment():  # noqa: ASYNC110 - aiokafka has no event for it
                await anyio.sleep(0.1)
        async with Consumer(topic, bootstrap_servers=kafka_broker, group_id=group) as ours:
            with anyio.fail_after(60), pytest.raises(InconsistentGroupProtocolError) as info:
                await poll_forever(ours)
    finally:
        await aio.stop()
    message = str(info.value)
    assert "partition_assignment_strategy=('range', 'cooperative-sticky')" in message
    if "the group's members use" not in message and kafka_service.kind == "tansu":
        pytest.skip(
            f"on tansu {kafka_service.version} the members' assignor is not learnt: {message}"
        )
    assert "the group's members use the assignor 'roundrobin'" in message
    assert "set partition_assignment_strategy=('roundrobin',)" in message
    assert repr(group) in message


def test_the_message_without_what_the_group_uses() -> None:
    error = inconsistent_protocol_error("g", ["sticky"])
    message = str(error)
    assert "partition_assignment_strategy=('sticky',)" in message
    assert "'roundrobin'" in message  # the assignors this client has, named
    assert "aiokafka's default is ('roundrobin',)" in message


def test_the_message_for_another_protocol_type_or_an_unknown_assignor() -> None:
    connect = str(inconsistent_protocol_error("g", ["range"], "connect", "sessioned"))
    assert "protocol type 'connect'" in connect
    other = str(inconsistent_protocol_error("g", ["range"], "consumer", "my-own"))
    assert "no assignor named 'my-own'" in other
    assert "Assignor subclass" in other
