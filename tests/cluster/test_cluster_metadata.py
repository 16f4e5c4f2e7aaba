"""ClusterMetadata.merge and queries (pure)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from kafka_async.cluster.metadata import BrokerInfo, ClusterMetadata
from kafka_async.protocol.apis import METADATA
from kafka_async.structs import TopicPartition as TP

ID_A = uuid.UUID(int=0xA)
ID_B = uuid.UUID(int=0xB)


def part(i: int, leader: int, epoch: int = 0, error: int = 0) -> dict[str, Any]:
    return {
        "error_code": error,
        "partition_index": i,
        "leader_id": leader,
        "leader_epoch": epoch,
        "replica_nodes": [leader] if leader >= 0 else [],
        "isr_nodes": [leader] if leader >= 0 else [],
        "offline_replicas": [],
    }


def topic(name: str, parts: list[dict[str, Any]], error: int = 0, tid: uuid.UUID = ID_A) -> Any:
    return {"error_code": error, "name": name, "topic_id": tid, "partitions": parts}


def response(topics: list[Any], brokers: tuple[int, ...] = (1, 2), version: int = 12) -> Any:
    body = {
        "brokers": [
            {"node_id": b, "host": f"h{b}", "port": 9000 + b, "rack": None} for b in brokers
        ],
        "cluster_id": "c1",
        "controller_id": brokers[0] if brokers else -1,
        "topics": topics,
    }
    # Through the real codec, so the merge sees exactly what a broker's answer decodes to.
    return METADATA.decode_response(version, METADATA.encode_response(version, body))


def test_empty_snapshot_knows_nothing() -> None:
    md = ClusterMetadata()
    assert md.leader_for(TP("t", 0)) is None
    assert md.partitions_for("t") is None
    assert md.available_partitions_for("t") == frozenset()
    assert md.generation == 0


def test_merge_builds_a_new_snapshot() -> None:
    md0 = ClusterMetadata()
    md = md0.merge(response([topic("t", [part(0, 1), part(1, 2, epoch=3)])]), ["t"])
    assert md0.topics == {}  # the old snapshot is untouched
    assert md.generation == 1
    assert md.cluster_id == "c1"
    assert md.controller_id == 1
    assert md.brokers[2] == BrokerInfo(2, "h2", 9002, None)
    assert md.leader_for(TP("t", 0)) == 1
    assert md.leader_for(TP("t", 1)) == 2
    assert md.leader_epoch_for(TP("t", 1)) == 3
    assert md.partitions_for("t") == frozenset({0, 1})
    assert md.topic_id("t") == ID_A
    assert md.topic_name(ID_A) == "t"
    assert md.partitions_for_broker(2) == {TP("t", 1)}
    with pytest.raises(TypeError):
        md.topics["x"] = md.topics["t"]  # type: ignore[index]


def test_never_goes_back_to_an_older_leader_epoch() -> None:
    md = ClusterMetadata().merge(response([topic("t", [part(0, 2, epoch=5)])]), ["t"])
    stale = md.merge(response([topic("t", [part(0, 1, epoch=4)])]), ["t"])
    assert stale.leader_for(TP("t", 0)) == 2
    assert stale.leader_epoch_for(TP("t", 0)) == 5
    newer = stale.merge(response([topic("t", [part(0, 1, epoch=6)])]), ["t"])
    assert newer.leader_for(TP("t", 0)) == 1
    assert newer.leader_epoch_for(TP("t", 0)) == 6


def test_a_recreated_topic_starts_epochs_over() -> None:
    md = ClusterMetadata().merge(response([topic("t", [part(0, 2, epoch=9)])]), ["t"])
    again = md.merge(response([topic("t", [part(0, 1, epoch=0)], tid=ID_B)]), ["t"])
    assert again.topic_id("t") == ID_B
    assert again.leader_for(TP("t", 0)) == 1
    assert again.leader_epoch_for(TP("t", 0)) == 0


def test_unknown_and_unauthorized_topics_are_tracked() -> None:
    md = ClusterMetadata().merge(response([topic("t", [part(0, 1)])]), ["t"])
    md = md.merge(
        response([topic("t", [], error=3), topic("secret", [], error=29), topic("b@d", [], 17)]),
        ["t", "secret", "b@d", "missing"],
    )
    assert md.topic("t") is None
    assert md.unknown_topics == {"t", "missing"}
    assert md.unauthorized_topics == {"secret"}
    assert md.invalid_topics == {"b@d"}
    # Once it exists, it leaves the unknown set.
    md = md.merge(response([topic("t", [part(0, 1)])]), ["t"])
    assert "t" not in md.unknown_topics
    assert md.partitions_for("t") == frozenset({0})


def test_partial_refresh_keeps_other_topics_full_refresh_drops_them() -> None:
    md = ClusterMetadata().merge(response([topic("a", [part(0, 1)]), topic("b", [part(0, 2)])]))
    assert set(md.topics) == {"a", "b"}
    md2 = md.merge(response([topic("a", [part(0, 2, epoch=1)])]), ["a"])
    assert set(md2.topics) == {"a", "b"}
    md3 = md2.merge(response([topic("a", [part(0, 2, epoch=1)])]), None)
    assert set(md3.topics) == {"a"}


def test_available_partitions_need_a_live_leader() -> None:
    md = ClusterMetadata().merge(
        response([topic("t", [part(0, 1), part(1, -1, error=5), part(2, 7)])], brokers=(1,)),
        ["t"],
    )
    assert md.partitions_for("t") == frozenset({0, 1, 2})
    assert md.available_partitions_for("t") == {0}  # no leader for 1; 7 is not a known broker
    assert md.leader_for(TP("t", 1)) is None
    assert md.partition(TP("t", 1)).error_code == 5  # type: ignore[union-attr]


def test_leader_not_available_without_partitions_keeps_what_we_knew() -> None:
    md = ClusterMetadata().merge(response([topic("t", [part(0, 1)])]), ["t"])
    md = md.merge(response([topic("t", [], error=5)]), ["t"])
    assert md.partitions_for("t") == frozenset({0})
    assert md.topic("t").error_code == 5  # type: ignore[union-attr]


def test_old_versions_without_epochs_or_ids() -> None:
    md = ClusterMetadata().merge(response([topic("t", [part(0, 1)])], version=1), ["t"])
    assert md.leader_for(TP("t", 0)) == 1
    assert md.leader_epoch_for(TP("t", 0)) == -1
    assert md.topic_id("t") is None
    assert md.cluster_id is None  # v1 has no cluster id


def test_brokers_are_replaced_and_can_be_added() -> None:
    md = ClusterMetadata().merge(response([], brokers=(1, 2)))
    md = md.merge(response([], brokers=(2, 3)))
    assert set(md.brokers) == {2, 3}
    md2 = md.with_brokers([BrokerInfo(9, "coord", 1)])
    assert set(md2.brokers) == {2, 3, 9}
    assert md2.generation == md.generation + 1
