"""``remove_members_from_consumer_group`` and ``list_config_resources`` against the run's broker.

Removing a static member (KIP-345) is what the call is for: a static member that stops does
not leave the group, so its partitions wait for its session timeout (45 s here); removed by
the admin, they go to the other member at the next rebalance. ListConfigResources (KIP-1142)
runs where the broker advertises its v1 (Kafka 4.1+); elsewhere the call's typed error is
checked instead.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import anyio
import anyio.to_thread
import pytest

from kafka_async.admin import AdminClient, ConfigResource, MemberToRemove
from kafka_async.admin.types import ConfigResourceType
from kafka_async.consumer import Consumer
from kafka_async.errors import IncompatibleBrokerVersionError, KafkaError, UnknownMemberIdError
from kafka_async.producer import Producer
from kafka_async.structs import TopicPartition
from kafka_async.testing.capabilities import describe_gap
from kafka_async.testing.plugin import KafkaService
from tests.cli.test_cli_admin_kafka4 import ok, one_line_error, run

pytestmark = [pytest.mark.integration, pytest.mark.anyio]


def _static(bootstrap: str, group: str, instance: str) -> dict[str, Any]:
    return {
        "bootstrap_servers": bootstrap,
        "group_id": group,
        "group_instance_id": instance,
        "session_timeout_ms": 45_000,
        "heartbeat_interval_ms": 500,
        "auto_offset_reset": "earliest",
    }


async def _poll_until(
    consumer: Consumer[bytes, bytes],
    cond: Callable[[], bool],
    timeout: float = 30.0,  # noqa: ASYNC109
) -> None:
    with anyio.fail_after(timeout):
        while not cond():
            await consumer.getmany(timeout_ms=100)


async def test_removing_a_stopped_static_member_hands_its_partitions_on(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(2)
    group = f"remove-{topic}"
    both = {TopicPartition(topic, 0), TopicPartition(topic, 1)}
    async with (
        AdminClient(bootstrap_servers=kafka_broker) as admin,
        Consumer(topic, **_static(kafka_broker, group, "static-b")) as b,
    ):
        async with Consumer(topic, **_static(kafka_broker, group, "static-a")) as a:
            with anyio.fail_after(30):
                while len(a.assignment()) != 1 or len(b.assignment()) != 1:
                    await a.getmany(timeout_ms=50)
                    await b.getmany(timeout_ms=50)
        # A static member closing does not leave: "static-a" is still a member, its
        # partition held for it until its 45 s session runs out.
        described = await admin.describe_consumer_groups([group], raise_on_error=True)
        assert {mb.group_instance_id for mb in described[group].members} == {
            "static-a",
            "static-b",
        }
        removed = await admin.remove_members_from_consumer_group(
            group, ["static-a", MemberToRemove(group_instance_id="static-gone")], reason="test"
        )
        assert list(removed) == ["static-a", "static-gone"]
        assert removed["static-a"].error is None
        assert isinstance(removed["static-gone"].error, UnknownMemberIdError)
        # Well within the 45 s session: B is given A's partition at the next rebalance.
        await _poll_until(b, lambda: b.assignment() == both, timeout=25)

        # The command line: an unknown member is one error line and exit 1.
        line = one_line_error(
            await anyio.to_thread.run_sync(
                lambda: run(
                    ["group-members", "remove", group, "--instance-id", "static-gone"],
                    bootstrap=kafka_broker,
                )
            )
        )
        assert "static-gone" in line
        assert "UNKNOWN_MEMBER_ID" in line

        # "Remove all": B too (it joins again on its own as the same static member).
        everyone = await admin.remove_members_from_consumer_group(group, raise_on_error=True)
        assert list(everyone) == ["static-b"]
        assert everyone["static-b"].error is None


async def test_list_config_resources(
    kafka_broker: str, kafka_service: KafkaService, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(1)
    group = f"configs-{uuid.uuid4().hex[:8]}"
    async with AdminClient(bootstrap_servers=kafka_broker) as admin:
        gap = describe_gap(kafka_broker, "ListConfigResources", 1, kafka_service.apis())
        if gap is not None:
            # The typed error, naming what is missing, instead of a wire error.
            with pytest.raises(IncompatibleBrokerVersionError, match="ListConfigResources"):
                await admin.list_config_resources([ConfigResourceType.TOPIC])
            pytest.skip(f"{kafka_service.kind} {kafka_service.version}: {gap}")
        await admin.incremental_alter_configs(
            {ConfigResource.group(group): {"consumer.session.timeout.ms": "45000"}},
            raise_on_error=True,
        )
        every = await admin.list_config_resources()
        assert ConfigResource.topic(topic) in every
        assert ConfigResource.group(group) in every
        assert any(r.type is ConfigResourceType.BROKER for r in every)
        topics = await admin.list_config_resources([ConfigResourceType.TOPIC])
        assert ConfigResource.topic(topic) in topics
        assert {r.type for r in topics} == {ConfigResourceType.TOPIC}
        groups = await admin.list_config_resources([ConfigResourceType.GROUP])
        assert groups == [r for r in every if r.type is ConfigResourceType.GROUP]
        listed = ok(
            await anyio.to_thread.run_sync(
                lambda: run(["configs", "list", "--type", "group"], bootstrap=kafka_broker)
            )
        )
        assert group in listed
        assert topic not in listed


@pytest.mark.requires_api("DescribeProducers", min_version=0)
async def test_describe_producers_shows_an_idempotent_producer(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """DescribeProducers alone (Kafka 2.8+, where DescribeTransactions came later): the
    idempotent producer that wrote five records is there with its last sequence; a
    partition that does not exist is an item error. Run on 2.8.2 and 3.6.2 by make compat."""
    topic = new_topic(1)
    tp0 = TopicPartition(topic, 0)
    async with Producer(kafka_broker, enable_idempotence=True, acks="all") as producer:
        for i in range(5):
            await producer.send(topic, b"v%d" % i, partition=0)
        pid = producer.statistics()["producer_id"]
    async with AdminClient(bootstrap_servers=kafka_broker) as admin:
        got = await admin.describe_producers([tp0, TopicPartition(topic, 9)])
    assert got[tp0].error is None
    (state,) = [p for p in got[tp0].producers if p.producer_id == pid]
    assert state.last_sequence == 4
    assert state.producer_epoch >= 0
    assert state.current_transaction_start_offset == -1
    assert isinstance(got[TopicPartition(topic, 9)].error, KafkaError)


@pytest.mark.requires_api("ConsumerGroupHeartbeat", min_version=1)
async def test_removing_a_static_member_of_a_consumer_protocol_group(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """On a KIP-848 group too: a closed static member stays (it left with epoch -2, to come
    back) until removed by instance id."""
    topic = new_topic(2)
    group = f"remove-848-{topic}"
    settings: dict[str, Any] = {
        "bootstrap_servers": kafka_broker,
        "group_id": group,
        "group_instance_id": "static-848",
        "group_protocol": "consumer",
        "auto_offset_reset": "earliest",
    }
    async with AdminClient(bootstrap_servers=kafka_broker) as admin:
        async with Consumer(topic, **settings) as c:
            await _poll_until(c, lambda: len(c.assignment()) == 2)
        described = await admin.describe_consumer_groups([group], raise_on_error=True)
        assert [m.group_instance_id for m in described[group].members] == ["static-848"]
        removed = await admin.remove_members_from_consumer_group(
            group, ["static-848"], raise_on_error=True
        )
        assert removed["static-848"].error is None
        after = await admin.describe_consumer_groups([group], raise_on_error=True)
        assert after[group].members == ()
