"""The pure parts of the Kafka 4.x admin calls: request building and response mapping.

The behaviour against a broker is in test_admin_kafka4.py; these pin the edges a healthy
broker rarely shows (a topic split across pages, results a broker left out, a request
version that cannot carry an argument).
"""

from __future__ import annotations

import uuid

import pytest

from kafka_async.admin import (
    AbortTransactionSpec,
    ClientQuotaAlteration,
    ClientQuotaEntity,
    FeatureUpdate,
    FeatureUpgradeType,
    ProducerState,
)
from kafka_async.admin import cluster_ops as co
from kafka_async.admin import quotas as q
from kafka_async.admin import transactions as tx
from kafka_async.admin.results import TopicDescription
from kafka_async.errors import (
    ClusterAuthorizationFailedError,
    ConfigError,
    IncompatibleBrokerVersionError,
    InvalidUpdateVersionError,
    NotLeaderOrFollowerError,
    UnknownServerError,
)
from kafka_async.protocol.apis import describe_topic_partitions as dtp
from kafka_async.protocol.apis import update_features as uf
from kafka_async.protocol.apis.alter_client_quotas import (
    AlterClientQuotasResponse,
    EntityData,
    EntryResult,
)
from kafka_async.protocol.apis.describe_quorum import (
    DescribeQuorumResponse,
    Listener,
    Node,
    QuorumPartitionData,
    QuorumTopicData,
    ReplicaState,
)
from kafka_async.protocol.apis.write_txn_markers import (
    WritableTxnMarkerPartitionResult,
    WritableTxnMarkerResult,
    WritableTxnMarkerTopicResult,
    WriteTxnMarkersResponse,
)
from kafka_async.structs import TopicPartition

TP = TopicPartition


def _page(
    parts: dict[str, list[int]], cursor: tuple[str, int] | None
) -> dtp.DescribeTopicPartitionsResponse:
    return dtp.DescribeTopicPartitionsResponse(
        topics=[
            dtp.DescribeTopicPartitionsResponseTopic(
                name=name,
                topic_id=uuid.UUID(int=1),
                partitions=[
                    dtp.DescribeTopicPartitionsResponsePartition(
                        partition_index=p, leader_id=1, replica_nodes=[1], isr_nodes=[1]
                    )
                    for p in ps
                ],
            )
            for name, ps in parts.items()
        ],
        next_cursor=None
        if cursor is None
        else dtp.Cursor(topic_name=cursor[0], partition_index=cursor[1]),
    )


def test_a_topic_split_across_pages_is_joined_in_partition_order() -> None:
    acc: dict[str, TopicDescription] = {}
    co.merge_topic_partitions_page(acc, _page({"a": [0, 1]}, ("a", 2)), with_ops=False)
    co.merge_topic_partitions_page(acc, _page({"a": [2], "b": [0]}, ("b", 1)), with_ops=False)
    co.merge_topic_partitions_page(acc, _page({"b": [1]}, None), with_ops=False)
    assert [p.partition for p in acc["a"].partitions] == [0, 1, 2]
    assert [p.partition for p in acc["b"].partitions] == [0, 1]
    assert acc["a"].topic_id == uuid.UUID(int=1)
    assert acc["a"].partitions[0].eligible_leader_replicas is None  # not reported: None


def test_update_features_v2_error_is_every_features_error() -> None:
    resp = uf.UpdateFeaturesResponse(error_code=InvalidUpdateVersionError.code, error_message="no")
    got = co.update_features_results(resp, ["a", "b"])
    assert all(isinstance(r.error, InvalidUpdateVersionError) for r in got.values())
    ok = co.update_features_results(uf.UpdateFeaturesResponse(), ["a"])
    assert ok["a"].error is None
    per_feature = uf.UpdateFeaturesResponse(
        results=[uf.UpdatableFeatureResult(feature="b", error_code=InvalidUpdateVersionError.code)]
    )
    got = co.update_features_results(per_feature, ["a", "b"])
    assert got["a"].error is None
    assert isinstance(got["b"].error, InvalidUpdateVersionError)


def test_update_features_request_per_version() -> None:
    ups = {"x": FeatureUpdate(2, FeatureUpgradeType.UNSAFE_DOWNGRADE)}
    v1 = co.update_features_request(ups, True, 5000, 1)
    assert v1.feature_updates[0].upgrade_type == 3
    assert v1.validate_only
    with pytest.raises(IncompatibleBrokerVersionError, match="dry run"):
        co.update_features_request(ups, True, 5000, 0)
    v0 = co.update_features_request(ups, False, 5000, 0)
    assert v0.feature_updates[0].allow_downgrade
    with pytest.raises(ConfigError):
        FeatureUpdate(1 << 15)


def test_list_transactions_filters_need_their_version() -> None:
    with pytest.raises(IncompatibleBrokerVersionError, match="duration"):
        tx.list_request(None, None, 1000, None, 0)
    with pytest.raises(IncompatibleBrokerVersionError, match="pattern"):
        tx.list_request(None, None, None, "^a", 1)
    body = tx.list_request(["Ongoing"], [7], 1000, "^a", 2)
    assert (body.state_filters, body.producer_id_filters, body.duration_filter) == (
        ["Ongoing"],
        [7],
        1000,
    )


def test_abort_marker_result_and_spec() -> None:
    spec = AbortTransactionSpec(TP("t", 3), 11, 2, 5)
    body = tx.abort_request(spec)
    marker = body.markers[0]
    assert (marker.producer_id, marker.producer_epoch, marker.transaction_result) == (11, 2, False)
    assert marker.topics[0].partition_indexes == [3]
    resp = WriteTxnMarkersResponse(
        markers=[
            WritableTxnMarkerResult(
                producer_id=11,
                topics=[
                    WritableTxnMarkerTopicResult(
                        name="t",
                        partitions=[
                            WritableTxnMarkerPartitionResult(
                                partition_index=3, error_code=NotLeaderOrFollowerError.code
                            )
                        ],
                    )
                ],
            )
        ]
    )
    assert tx.abort_result(resp, spec) == NotLeaderOrFollowerError.code
    assert tx.abort_result(WriteTxnMarkersResponse(), spec) == -1
    # From DescribeProducers: a coordinator epoch of -1 (no marker written yet) becomes 0.
    state = ProducerState(11, 2, 4, 0, -1, 17)
    assert AbortTransactionSpec.of(TP("t", 3), state).coordinator_epoch == 0
    with pytest.raises(ConfigError, match="producer_epoch"):
        AbortTransactionSpec(TP("t", 3), 11, -1, 0)


def test_client_quota_entities_compare_by_content() -> None:
    a = ClientQuotaEntity.of(user="u", client_id="c")
    b = ClientQuotaEntity((("client-id", "c"), ("user", "u")))
    assert a == b
    assert hash(a) == hash(b)
    assert str(a) == "client-id=c,user=u"
    assert str(ClientQuotaEntity.of(user=None)) == "user=<default>"
    assert ClientQuotaEntity.of(user=None).as_dict() == {"user": None}
    with pytest.raises(ConfigError, match="twice"):
        ClientQuotaEntity((("user", "a"), ("user", "b")))


def test_alter_quota_results_name_a_missing_entity() -> None:
    asked = [ClientQuotaEntity.of(user="a"), ClientQuotaEntity.of(user="b")]
    body = q.alter_request([ClientQuotaAlteration(e, {"x": None}) for e in asked], False)
    assert [op.remove for entry in body.entries for op in entry.ops] == [True, True]
    resp = AlterClientQuotasResponse(
        entries=[
            EntryResult(
                error_code=ClusterAuthorizationFailedError.code,
                entity=[EntityData(entity_type="user", entity_name="a")],
            )
        ]
    )
    got = q.alter_results(resp, asked)
    assert isinstance(got[asked[0]].error, ClusterAuthorizationFailedError)
    assert isinstance(got[asked[1]].error, UnknownServerError)


def test_quorum_info_of_a_response() -> None:
    voter = ReplicaState(replica_id=1, log_end_offset=50, last_fetch_timestamp=10)
    resp = DescribeQuorumResponse(
        topics=[
            QuorumTopicData(
                topic_name="__cluster_metadata",
                partitions=[
                    QuorumPartitionData(
                        leader_id=1, leader_epoch=3, high_watermark=49, current_voters=[voter]
                    )
                ],
            )
        ],
        nodes=[Node(node_id=1, listeners=[Listener(name="CONTROLLER", host="h", port=9)])],
    )
    info = co.quorum_info(resp)
    assert (info.leader_id, info.leader_epoch, info.high_watermark) == (1, 3, 49)
    assert info.voters[0].log_end_offset == 50
    assert info.voters[0].directory_id is None
    assert info.nodes[1].endpoints == {"CONTROLLER": ("h", 9)}
    with pytest.raises(UnknownServerError):
        co.quorum_info(DescribeQuorumResponse())
    with pytest.raises(ClusterAuthorizationFailedError):
        co.quorum_info(DescribeQuorumResponse(error_code=ClusterAuthorizationFailedError.code))
