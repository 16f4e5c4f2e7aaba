"""The plugin's topic helpers on a ZooKeeper-mode cluster of three brokers (the oldest release
CI runs, 2.8.2): there only the controller accepts CreateTopics, and a test (or a user's
fixture) may bootstrap from any broker. ``make compat`` found every three-node test failing
on 2.8.2 and 3.6.2 with NOT_CONTROLLER from ``create_topic`` before the helpers asked
Metadata for the controller."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import pytest

from kafka_async.testing import _wire
from kafka_async.testing.apache import ApacheKafka, KafkaPrerequisiteError
from kafka_async.testing.topics import acreate_topic, create_topic, topic_partitions

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

#: The oldest release CI runs (the Makefile's OLD_RELEASE), in ZooKeeper mode.
RELEASE = "2.8.2"


@pytest.fixture(scope="module")
def zk_cluster() -> Iterator[ApacheKafka]:
    kafka = ApacheKafka(version=RELEASE, mode="zookeeper", nodes=3, heap="256m")
    try:
        kafka.start()
    except KafkaPrerequisiteError as exc:
        from kafka_async.testing.plugin import skip_or_fail

        skip_or_fail(f"Apache Kafka {RELEASE} cannot run here: {exc}")
    try:
        yield kafka
    finally:
        kafka.stop()


def _controller(cluster: ApacheKafka) -> int:
    from kafka_async.protocol.apis import METADATA
    from kafka_async.protocol.apis.metadata import MetadataRequest

    meta = _wire.request(
        cluster.bootstrap_servers.split(",")[0],
        METADATA,
        MetadataRequest(topics=[], allow_auto_topic_creation=False),
    )
    return int(meta.controller_id)


def test_topics_are_created_through_any_broker(zk_cluster: ApacheKafka) -> None:
    addresses = zk_cluster.bootstrap_servers.split(",")
    controller = _controller(zk_cluster)
    assert controller in zk_cluster.node_ids
    # Bootstrapping from each broker in turn: two of them are not the controller.
    for i, address in enumerate(addresses):
        create_topic(address, f"sync-{i}", 3, replication_factor=3)
        assert topic_partitions(address, f"sync-{i}") == 3

        async def create(address: str = address, i: int = i) -> None:
            await acreate_topic(address, f"async-{i}", 2, replication_factor=2)

        anyio.run(create)
        assert topic_partitions(address, f"async-{i}") == 2
    # exist_ok still holds for a topic the controller already has.
    create_topic(addresses[-1], "sync-0", 3, replication_factor=3, exist_ok=True)
