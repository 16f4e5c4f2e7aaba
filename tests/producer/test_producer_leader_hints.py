"""KIP-951: a NOT_LEADER_OR_FOLLOWER answer that names the new leader (Produce v10+) moves
the retry there at once, without a metadata round trip."""

from __future__ import annotations

import uuid
from types import MappingProxyType
from typing import Any

import anyio
import pytest

from kafka_async import Producer
from kafka_async.cluster.metadata import BrokerInfo, ClusterMetadata, PartitionInfo, TopicInfo
from kafka_async.protocol.apis import METADATA, PRODUCE
from kafka_async.protocol.apis.produce import (
    LeaderIdAndEpoch,
    NodeEndpoint,
    PartitionProduceResponse,
    ProduceResponse,
    TopicProduceResponse,
)
from kafka_async.structs import TopicPartition
from tests.harness.fake_broker import FakeBroker, FakeRequest

TP = TopicPartition("t", 0)


def snapshot(leader: int = 1, epoch: int = 5) -> ClusterMetadata:
    part = PartitionInfo("t", 0, leader, epoch, (1, 2), (1, 2))
    topic = TopicInfo("t", uuid.uuid4(), False, MappingProxyType({0: part}))
    brokers = {1: BrokerInfo(1, "h1", 1), 2: BrokerInfo(2, "h2", 2)}
    return ClusterMetadata(brokers=MappingProxyType(brokers), topics=MappingProxyType({"t": topic}))


def test_a_newer_leader_is_taken() -> None:
    md = snapshot()
    new, moved = md.with_new_leaders([(TP, 2, 6)])
    assert moved == {TP}
    assert new.leader_for(TP) == 2
    assert new.leader_epoch_for(TP) == 6
    assert new.generation == md.generation + 1
    assert md.leader_for(TP) == 1  # snapshots are immutable


@pytest.mark.parametrize("epoch", [4, 5])
def test_a_leader_no_newer_than_known_is_ignored(epoch: int) -> None:
    md = snapshot()
    assert md.with_new_leaders([(TP, 2, epoch)]) == (md, frozenset())


def test_an_unknown_broker_needs_its_endpoint() -> None:
    md = snapshot()
    assert md.with_new_leaders([(TP, 3, 6)])[1] == frozenset()
    new, moved = md.with_new_leaders([(TP, 3, 6)], [BrokerInfo(3, "h3", 3)])
    assert moved == {TP}
    assert new.broker(3) == BrokerInfo(3, "h3", 3)
    # Partitions of unknown topics, and "no leader", are ignored.
    assert md.with_new_leaders([(TopicPartition("u", 0), 2, 9), (TP, -1, 9)])[1] == frozenset()


@pytest.mark.anyio
async def test_produce_retries_at_the_named_leader_without_a_metadata_refresh() -> None:
    async with FakeBroker({"t": 1}, node_id=1) as old, FakeBroker({"t": 1}, node_id=2) as new:
        # The old leader knows only itself: the answer's node endpoints give the new one.
        def moved(req: FakeRequest) -> Any:
            return ProduceResponse(
                responses=[
                    TopicProduceResponse(
                        name="t",
                        partition_responses=[
                            PartitionProduceResponse(
                                index=0,
                                error_code=6,
                                base_offset=-1,
                                current_leader=LeaderIdAndEpoch(leader_id=2, leader_epoch=1),
                            )
                        ],
                    )
                ],
                node_endpoints=[NodeEndpoint(node_id=2, host=new.host, port=new.port)],
            )

        def written(req: FakeRequest) -> Any:
            return ProduceResponse(
                responses=[
                    TopicProduceResponse(
                        name="t",
                        partition_responses=[
                            PartitionProduceResponse(index=0, error_code=0, base_offset=7)
                        ],
                    )
                ]
            )

        old.script(PRODUCE.key, moved, count=1)
        new.set_default(PRODUCE.key, written)
        async with Producer(
            bootstrap_servers=old.address,
            enable_idempotence=False,
            acks=1,
            retry_backoff_ms=5_000,  # a backoff or a refresh would show in the time taken
            metadata_max_age_ms=300_000,
        ) as producer:
            await producer.partitions_for("t")
            metadata_before = old.stats.requests_by_api.get(METADATA.key, 0)
            with anyio.fail_after(3):
                meta = await producer.send("t", b"v", partition=0)
            assert meta.offset == 7
            stats = producer.statistics()
            assert stats["leader_hints"] == 1
            assert stats["retries"] == 1
            assert old.stats.requests_by_api.get(METADATA.key, 0) == metadata_before
            assert not [r for r in new.requests if r.api_key == METADATA.key]
            produced = [r for r in new.requests if r.api_key == PRODUCE.key]
            assert len(produced) == 1
            assert produced[0].api_version >= 10
