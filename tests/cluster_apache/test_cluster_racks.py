"""Rack-aware classic assignment (KIP-881) on a real two-node cluster whose nodes have racks.

Node 1 is in ``rack-a``, node 2 in ``rack-b`` (``broker.rack``). The topic's four partitions
have one replica each, alternating: p0 and p2 on node 1, p1 and p3 on node 2. Two classic
members with ``client_rack`` rack-a and rack-b each get the two partitions whose replica is
in their own rack, under ``range`` and under ``cooperative-sticky``. Without racks, range
gives one member p0-p1 and the other p2-p3: each would read one partition across racks.

The file starts its own cluster (two combined nodes, one of them the controller, small
heaps).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from kafka_async.admin import AdminClient, NewTopic
from kafka_async.consumer import Consumer
from kafka_async.structs import TopicPartition
from kafka_async.testing.apache import ApacheKafka, KafkaPrerequisiteError
from kafka_async.testing.plugin import skip_or_fail

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

RACKS = {1: "rack-a", 2: "rack-b"}


@pytest.fixture(scope="module")
def racked_cluster() -> Iterator[str]:
    kafka = ApacheKafka(
        nodes=2,
        controllers=1,
        heap="384m",
        node_config={n: {"broker.rack": r} for n, r in RACKS.items()},
        broker_config={
            "offsets.topic.replication.factor": "1",
            "transaction.state.log.replication.factor": "1",
        },
    )
    try:
        kafka.start()
    except KafkaPrerequisiteError as exc:
        skip_or_fail(f"Apache Kafka cannot run here: {exc}")
    try:
        yield kafka.bootstrap_servers
    finally:
        kafka.stop()


@pytest.mark.parametrize("strategy", ["range", "cooperative-sticky"])
async def test_members_get_the_partitions_in_their_rack(racked_cluster: str, strategy: str) -> None:
    topic = f"racks-{uuid.uuid4().hex[:8]}"
    layout = {0: [1], 1: [2], 2: [1], 3: [2]}
    async with AdminClient(bootstrap_servers=racked_cluster) as admin:
        await admin.create_topics([NewTopic(topic, replica_assignment=layout)], raise_on_error=True)
        described = await admin.describe_cluster()
        assert {b.node_id: b.rack for b in described.brokers} == RACKS
    group = f"racks-{strategy}-{topic}"

    def settings(rack: str) -> dict[str, Any]:
        return {
            "bootstrap_servers": racked_cluster,
            "group_id": group,
            "client_rack": rack,
            "partition_assignment_strategy": strategy,
            "auto_offset_reset": "earliest",
            "heartbeat_interval_ms": 500,
        }

    async with (
        Consumer(topic, **settings("rack-a")) as a,
        Consumer(topic, **settings("rack-b")) as b,
    ):
        with anyio.fail_after(40):
            while len(a.assignment()) != 2 or len(b.assignment()) != 2:
                await a.getmany(timeout_ms=50)
                await b.getmany(timeout_ms=50)
        assert a.assignment() == {TopicPartition(topic, 0), TopicPartition(topic, 2)}
        assert b.assignment() == {TopicPartition(topic, 1), TopicPartition(topic, 3)}
