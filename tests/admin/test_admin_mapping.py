"""Result mapping and request building of the admin client, on hand-built responses.

Responses are written as dicts, encoded with the real schema at a given version and decoded
again, so the mapping sees exactly the objects a broker's bytes would produce.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from kafka_async.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AlterConfigOp,
    ConfigResource,
    ConfigSource,
    ConfigType,
    IsolationLevel,
    NewPartitions,
    NewTopic,
    OffsetSpec,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
    ResultMap,
)
from kafka_async.admin import mapping as m
from kafka_async.admin.results import CreatePartitionsResult
from kafka_async.cluster.routing import error_code
from kafka_async.errors import (
    ConfigError,
    GroupIdNotFoundError,
    IncompatibleBrokerVersionError,
    InvalidPartitionsError,
    NotControllerError,
    NotCoordinatorError,
    PolicyViolationError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)
from kafka_async.protocol import apis
from kafka_async.protocol.apis.list_groups import ListGroupsRequest
from kafka_async.protocol.apis.metadata import MetadataRequest
from kafka_async.protocol.consumer_protocol import Assignment
from kafka_async.protocol.schema import Api, ReqT, RespT
from kafka_async.structs import OffsetAndMetadata, TopicPartition

TP = TopicPartition


def wire(api: Api[ReqT, RespT], version: int, body: dict[str, Any]) -> RespT:
    """Encode ``body`` as a response of ``api`` at ``version`` and decode it back."""
    return api.decode_response(version, bytes(api.encode_response(version, body)))


def request_roundtrip(api: Api[ReqT, RespT], version: int, body: ReqT) -> ReqT:
    """A request body must be encodable at ``version``; return it decoded."""
    return api.decode_request(version, bytes(api.encode_request(version, body)))


# -- ResultMap -----------------------------------------------------------------------------


def test_result_map_keeps_successes_beside_failures() -> None:
    bad = InvalidPartitionsError("too few")
    rm = ResultMap(
        [("a", CreatePartitionsResult("a")), ("b", CreatePartitionsResult("b", error=bad))]
    )
    assert list(rm) == ["a", "b"]
    assert not rm.ok
    assert rm.errors == {"b": bad}
    assert list(rm.succeeded) == ["a"]
    with pytest.raises(InvalidPartitionsError) as info:
        rm.raise_first()
    assert info.value is bad


def test_result_map_raise_first_returns_self_when_ok() -> None:
    rm = ResultMap({"a": CreatePartitionsResult("a")})
    assert rm.raise_first() is rm
    assert rm.ok
    assert rm.errors == {}
    assert rm == {"a": CreatePartitionsResult("a")}


# -- topics --------------------------------------------------------------------------------


def test_create_topics_request_carries_assignment_and_configs() -> None:
    topics = [
        NewTopic("a", 3, 1, config={"cleanup.policy": "compact", "retention.ms": 1000}),  # type: ignore[dict-item]
        NewTopic("b", replica_assignment={1: [2, 3], 0: [1, 2]}),
    ]
    body = m.create_topics_request(topics, 5000, True, 7)
    decoded = request_roundtrip(apis.CREATE_TOPICS, 7, body)
    assert decoded.timeout_ms == 5000
    assert decoded.validate_only is True
    a, b = decoded.topics
    assert (a.name, a.num_partitions, a.replication_factor) == ("a", 3, 1)
    assert {c.name: c.value for c in a.configs} == {
        "cleanup.policy": "compact",
        "retention.ms": "1000",
    }
    assert (b.num_partitions, b.replication_factor) == (-1, -1)
    assert [(x.partition_index, list(x.broker_ids)) for x in b.assignments] == [
        (0, [1, 2]),
        (1, [2, 3]),
    ]


def test_create_topics_old_versions_reject_what_they_cannot_carry() -> None:
    with pytest.raises(IncompatibleBrokerVersionError):
        m.create_topics_request([NewTopic("a", 1, 1)], 1000, True, 0)
    # Broker defaults (-1) arrived with v4.
    with pytest.raises(IncompatibleBrokerVersionError):
        m.create_topics_request([NewTopic("a")], 1000, False, 3)
    body = m.create_topics_request([NewTopic("a", 2, 1)], 1000, False, 0)
    assert request_roundtrip(apis.CREATE_TOPICS, 0, body).topics[0].num_partitions == 2


def test_create_topics_results_are_per_topic() -> None:
    tid = uuid.uuid4()
    resp = wire(
        apis.CREATE_TOPICS,
        7,
        {
            "topics": [
                {
                    "name": "ok",
                    "topic_id": tid,
                    "error_code": 0,
                    "num_partitions": 3,
                    "replication_factor": 1,
                    "configs": [
                        {"name": "retention.ms", "value": "5", "read_only": False},
                    ],
                },
                {"name": "dup", "error_code": 36, "error_message": "exists"},
                {"name": "policy", "error_code": 44, "error_message": "no"},
            ]
        },
    )
    got = m.create_topics_results(resp)
    assert got["ok"].error is None
    assert got["ok"].topic_id == tid
    assert got["ok"].num_partitions == 3
    assert dict(got["ok"].configs) == {"retention.ms": "5"}
    assert isinstance(got["dup"].error, TopicAlreadyExistsError)
    assert got["dup"].error.message == "exists"
    assert isinstance(got["policy"].error, PolicyViolationError)
    assert got["dup"].topic_id is None  # the zero UUID means "none"


def test_not_controller_is_a_retry_code() -> None:
    resp = wire(apis.CREATE_TOPICS, 5, {"topics": [{"name": "x", "error_code": 41}]})
    err = m.create_topics_results(resp)["x"].error
    assert isinstance(err, NotControllerError)
    assert error_code(err) in m.CONTROLLER_RETRY


@pytest.mark.parametrize("version", [0, 5, 6])
def test_delete_topics_request_shape_follows_version(version: int) -> None:
    body = m.delete_topics_request(["a", "b"], 3000, version)
    decoded = request_roundtrip(apis.DELETE_TOPICS, version, body)
    if version >= 6:
        assert [t.name for t in decoded.topics] == ["a", "b"]
    else:
        assert list(decoded.topic_names) == ["a", "b"]


def test_delete_topics_results() -> None:
    resp = wire(
        apis.DELETE_TOPICS,
        6,
        {"responses": [{"name": "a", "error_code": 0}, {"name": "b", "error_code": 3}]},
    )
    got = m.delete_topics_results(resp)
    assert got["a"].error is None
    assert isinstance(got["b"].error, UnknownTopicOrPartitionError)


def test_create_partitions_request_and_results() -> None:
    body = m.create_partitions_request(
        {"a": NewPartitions(4), "b": NewPartitions(3, [[1], [2]])}, 1000, False
    )
    decoded = request_roundtrip(apis.CREATE_PARTITIONS, 3, body)
    assert decoded.topics[0].assignments is None
    assert [list(x.broker_ids) for x in decoded.topics[1].assignments or ()] == [[1], [2]]
    resp = wire(
        apis.CREATE_PARTITIONS,
        3,
        {"results": [{"name": "a", "error_code": 0}, {"name": "b", "error_code": 37}]},
    )
    got = m.create_partitions_results(resp)
    assert got["a"].error is None
    assert isinstance(got["b"].error, InvalidPartitionsError)


def _metadata_resp() -> Any:
    return wire(
        apis.METADATA,
        12,
        {
            "brokers": [
                {"node_id": 2, "host": "h2", "port": 2},
                {"node_id": 1, "host": "h1", "port": 1},
            ],
            "cluster_id": "c",
            "controller_id": 1,
            "topics": [
                {
                    "error_code": 0,
                    "name": "b",
                    "partitions": [
                        {
                            "error_code": 0,
                            "partition_index": 1,
                            "leader_id": 2,
                            "leader_epoch": 4,
                            "replica_nodes": [2, 1],
                            "isr_nodes": [2],
                        },
                        {
                            "error_code": 0,
                            "partition_index": 0,
                            "leader_id": 1,
                            "replica_nodes": [1],
                            "isr_nodes": [1],
                        },
                    ],
                },
                {"error_code": 0, "name": "__internal", "is_internal": True, "partitions": []},
                {"error_code": 0, "name": "a", "partitions": []},
            ],
        },
    )


def test_topic_listings_sorted_and_internal_filtered() -> None:
    resp = _metadata_resp()
    assert list(m.topic_listings(resp, False)) == ["a", "b"]
    assert list(m.topic_listings(resp, True)) == ["__internal", "a", "b"]
    assert m.topic_listings(resp, False)["b"].num_partitions == 2


def test_topic_descriptions_mark_missing_topics() -> None:
    got = m.topic_descriptions(_metadata_resp(), ["b", "missing"])
    assert list(got) == ["b", "missing"]
    b = got["b"]
    assert [p.partition for p in b.partitions] == [0, 1]
    assert b.partitions[1].leader == 2
    assert b.partitions[1].leader_epoch == 4
    assert b.partitions[1].replicas == (2, 1)
    assert b.partitions[1].isr == (2,)
    assert isinstance(got["missing"].error, UnknownTopicOrPartitionError)
    assert b.authorized_operations is None


def test_cluster_from_metadata_sorts_brokers() -> None:
    c = m.cluster_from_metadata(_metadata_resp())
    assert [b.node_id for b in c.brokers] == [1, 2]
    assert c.controller_id == 1
    assert c.controller is not None
    assert c.controller.host == "h1"


def test_metadata_request_never_auto_creates() -> None:
    assert m.metadata_request(None, 12) == MetadataRequest(
        topics=None, allow_auto_topic_creation=False
    )
    # v0 knows no null list (empty means every topic) and cannot refuse auto-creation.
    assert m.metadata_request(None, 0) == MetadataRequest(topics=[])
    request_roundtrip(apis.METADATA, 12, m.metadata_request(["a"], 12))


# -- groups --------------------------------------------------------------------------------


def test_group_descriptions_decode_consumer_assignments() -> None:
    assignment = Assignment((TP("t", 0), TP("t", 2))).encode()
    resp = wire(
        apis.DESCRIBE_GROUPS,
        5,
        {
            "groups": [
                {
                    "error_code": 0,
                    "group_id": "g",
                    "group_state": "Stable",
                    "protocol_type": "consumer",
                    "protocol_data": "range",
                    "members": [
                        {
                            "member_id": "m1",
                            "group_instance_id": "i1",
                            "client_id": "c",
                            "client_host": "/1.2.3.4",
                            "member_metadata": b"",
                            "member_assignment": assignment,
                        }
                    ],
                },
                {"error_code": 16, "group_id": "moved"},
            ]
        },
    )
    got = m.group_descriptions(resp, coordinator=7)
    g = got["g"]
    assert (g.state, g.protocol, g.coordinator) == ("Stable", "range", 7)
    (member,) = g.members
    assert member.assignment == (TP("t", 0), TP("t", 2))
    assert member.group_instance_id == "i1"
    assert member.raw_assignment == assignment
    assert isinstance(got["moved"].error, NotCoordinatorError)
    assert error_code(got["moved"].error) in m.COORDINATOR_RETRY


def test_group_descriptions_tolerate_non_consumer_protocols() -> None:
    resp = wire(
        apis.DESCRIBE_GROUPS,
        5,
        {
            "groups": [
                {
                    "error_code": 0,
                    "group_id": "c",
                    "group_state": "Stable",
                    "protocol_type": "connect",
                    "protocol_data": "x",
                    "members": [
                        {
                            "member_id": "m",
                            "client_id": "c",
                            "client_host": "h",
                            "member_metadata": b"\x01",
                            "member_assignment": b"\xff\xff garbage",
                        }
                    ],
                }
            ]
        },
    )
    (member,) = m.group_descriptions(resp, 1)["c"].members
    assert member.assignment == ()
    assert member.raw_assignment == b"\xff\xff garbage"


def test_list_groups_filters_need_new_versions() -> None:
    with pytest.raises(IncompatibleBrokerVersionError):
        m.list_groups_request(["Stable"], None, 3)
    with pytest.raises(IncompatibleBrokerVersionError):
        m.list_groups_request(None, ["classic"], 4)
    assert m.list_groups_request(["Stable"], ["classic"], 5) == ListGroupsRequest(
        states_filter=["Stable"], types_filter=["classic"]
    )
    resp = wire(
        apis.LIST_GROUPS,
        5,
        {
            "groups": [
                {
                    "group_id": "g",
                    "protocol_type": "consumer",
                    "group_state": "Empty",
                    "group_type": "classic",
                }
            ]
        },
    )
    (g,) = m.group_listings(resp, 3)
    assert (g.group_id, g.state, g.type, g.coordinator) == ("g", "Empty", "classic", 3)


@pytest.mark.parametrize("version", [1, 7, 8])
def test_offset_fetch_round_trip_by_version(version: int) -> None:
    tps = [TP("t", 0), TP("t", 1), TP("u", 0)]
    body = m.offset_fetch_request("g", tps, version)
    request_roundtrip(apis.OFFSET_FETCH, version, body)
    parts = [
        {"partition_index": 0, "committed_offset": 5, "metadata": "m", "error_code": 0},
        {"partition_index": 1, "committed_offset": -1, "metadata": None, "error_code": 0},
    ]
    if version >= 8:
        resp_body: dict[str, Any] = {
            "groups": [
                {"group_id": "g", "topics": [{"name": "t", "partitions": parts}], "error_code": 0}
            ]
        }
    else:
        resp_body = {"topics": [{"name": "t", "partitions": parts}]}
    group_error, got = m.offset_fetch_results(
        wire(apis.OFFSET_FETCH, version, resp_body), "g", version
    )
    assert group_error is None
    assert got[TP("t", 0)].offset == 5
    assert got[TP("t", 0)].metadata == "m"
    assert got[TP("t", 1)].offset == -1
    assert got[TP("t", 0)].to_offset_and_metadata() == OffsetAndMetadata(5, "m")


def test_offset_fetch_group_error_and_all_partitions_rule() -> None:
    with pytest.raises(IncompatibleBrokerVersionError):
        m.offset_fetch_request("g", None, 1)
    resp = wire(apis.OFFSET_FETCH, 8, {"groups": [{"group_id": "g", "error_code": 69}]})
    group_error, got = m.offset_fetch_results(resp, "g", 8)
    assert isinstance(group_error, GroupIdNotFoundError)
    assert got == {}


@pytest.mark.parametrize("version", [0, 2, 8, 9])
def test_offset_commit_request_encodes_at_every_version(version: int) -> None:
    body = m.offset_commit_request(
        "g", {TP("t", 0): OffsetAndMetadata(10, "x"), TP("t", 3): OffsetAndMetadata(4)}, version
    )
    decoded = request_roundtrip(apis.OFFSET_COMMIT, version, body)
    (topic,) = decoded.topics
    assert [(p.partition_index, p.committed_offset) for p in topic.partitions] == [(0, 10), (3, 4)]


def test_partition_results_and_offset_delete_request() -> None:
    resp = wire(
        apis.OFFSET_COMMIT,
        8,
        {
            "topics": [
                {
                    "name": "t",
                    "partitions": [
                        {"partition_index": 0, "error_code": 0},
                        {"partition_index": 1, "error_code": 3},
                    ],
                }
            ]
        },
    )
    got = m.partition_results(resp.topics)
    assert got[TP("t", 0)].error is None
    assert isinstance(got[TP("t", 1)].error, UnknownTopicOrPartitionError)
    body = m.offset_delete_request("g", [TP("a", 1), TP("a", 2), TP("b", 0)])
    decoded = request_roundtrip(apis.OFFSET_DELETE, 0, body)
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in decoded.topics] == [
        ("a", [1, 2]),
        ("b", [0]),
    ]


# -- configs -------------------------------------------------------------------------------


def test_describe_configs_v0_and_v4() -> None:
    res = ConfigResource.topic("t")
    with pytest.raises(IncompatibleBrokerVersionError):
        m.describe_configs_request([res], None, True, False, 0)
    with pytest.raises(IncompatibleBrokerVersionError):
        m.describe_configs_request([res], None, False, True, 2)
    request_roundtrip(
        apis.DESCRIBE_CONFIGS, 4, m.describe_configs_request([res], ["a"], True, True, 4)
    )
    v0 = wire(
        apis.DESCRIBE_CONFIGS,
        0,
        {
            "results": [
                {
                    "error_code": 0,
                    "resource_type": 2,
                    "resource_name": "t",
                    "configs": [
                        {"name": "a", "value": "1", "is_default": True},
                        {"name": "b", "value": None, "is_sensitive": True},
                    ],
                }
            ]
        },
    )
    d0 = m.describe_configs_results(v0, [res], 0)[res]
    assert d0.entries["a"].is_default
    assert d0.entries["a"].source is ConfigSource.DEFAULT_CONFIG
    assert d0.entries["b"].value is None
    assert d0.entries["b"].is_sensitive
    v4 = wire(
        apis.DESCRIBE_CONFIGS,
        4,
        {
            "results": [
                {
                    "error_code": 0,
                    "resource_type": 2,
                    "resource_name": "t",
                    "configs": [
                        {
                            "name": "retention.ms",
                            "value": "10",
                            "config_source": 1,
                            "synonyms": [{"name": "log.retention.ms", "value": "7", "source": 4}],
                            "config_type": 5,
                            "documentation": "doc",
                        }
                    ],
                }
            ]
        },
    )
    e = m.describe_configs_results(v4, [res], 4)[res].entries["retention.ms"]
    assert e.source is ConfigSource.DYNAMIC_TOPIC_CONFIG
    assert not e.is_default
    assert e.type is ConfigType.LONG
    assert e.documentation == "doc"
    assert e.synonyms[0].source is ConfigSource.STATIC_BROKER_CONFIG


def test_alter_configs_requests_and_results() -> None:
    t = ConfigResource.topic("t")
    b = ConfigResource.broker(1)
    request_roundtrip(
        apis.ALTER_CONFIGS, 2, m.alter_configs_request({t: {"a": "1", "b": None}}, False)
    )
    incremental = m.incremental_alter_configs_request(
        {t: [AlterConfigOp.set("a", "1"), AlterConfigOp.delete("b")]}, True
    )
    decoded = request_roundtrip(apis.INCREMENTAL_ALTER_CONFIGS, 1, incremental)
    assert [(c.name, c.config_operation, c.value) for c in decoded.resources[0].configs] == [
        ("a", 0, "1"),
        ("b", 1, None),
    ]
    resp = wire(
        apis.INCREMENTAL_ALTER_CONFIGS,
        1,
        {
            "responses": [
                {"error_code": 0, "resource_type": 2, "resource_name": "t"},
                {
                    "error_code": 40,
                    "error_message": "bad",
                    "resource_type": 4,
                    "resource_name": "1",
                },
            ]
        },
    )
    got = m.alter_configs_results(resp, [t, b])
    assert got[t].error is None
    assert got[b].error is not None
    assert error_code(got[b].error) == 40


# -- offsets and records -------------------------------------------------------------------


def test_list_offsets_request_by_version() -> None:
    specs = {TP("t", 0): OffsetSpec.earliest(), TP("t", 1): OffsetSpec.for_timestamp(123)}
    v0 = request_roundtrip(
        apis.LIST_OFFSETS, 0, m.list_offsets_request(specs, IsolationLevel.READ_UNCOMMITTED, 0, 9)
    )
    assert [p.max_num_offsets for p in v0.topics[0].partitions] == [1, 1]
    v10 = request_roundtrip(
        apis.LIST_OFFSETS, 10, m.list_offsets_request(specs, IsolationLevel.READ_COMMITTED, 10, 9)
    )
    assert v10.isolation_level == 1
    assert v10.timeout_ms == 9
    assert [p.timestamp for p in v10.topics[0].partitions] == [-2, 123]
    with pytest.raises(IncompatibleBrokerVersionError):
        m.list_offsets_request({TP("t", 0): OffsetSpec.max_timestamp()}, IsolationLevel(0), 6, 1)
    with pytest.raises(IncompatibleBrokerVersionError):
        m.list_offsets_request(specs, IsolationLevel.READ_COMMITTED, 1, 1)


def test_list_offsets_results_v0_and_v9() -> None:
    v0 = wire(
        apis.LIST_OFFSETS,
        0,
        {
            "topics": [
                {
                    "name": "t",
                    "partitions": [
                        {"partition_index": 0, "error_code": 0, "old_style_offsets": [42]},
                        {"partition_index": 1, "error_code": 6, "old_style_offsets": []},
                    ],
                }
            ]
        },
    )
    got = m.list_offsets_results(v0, 0)
    assert got[TP("t", 0)].offset == 42
    assert error_code(got[TP("t", 1)].error) in m.LEADER_RETRY
    v9 = wire(
        apis.LIST_OFFSETS,
        9,
        {
            "topics": [
                {
                    "name": "t",
                    "partitions": [
                        {
                            "partition_index": 0,
                            "error_code": 0,
                            "timestamp": 99,
                            "offset": 7,
                            "leader_epoch": 3,
                        }
                    ],
                }
            ]
        },
    )
    r = m.list_offsets_results(v9, 9)[TP("t", 0)]
    assert (r.offset, r.timestamp, r.leader_epoch, r.error) == (7, 99, 3, None)


def test_delete_records_request_and_results() -> None:
    body = m.delete_records_request({TP("t", 0): 5, TP("t", 1): -1}, 100)
    request_roundtrip(apis.DELETE_RECORDS, 2, body)
    resp = wire(
        apis.DELETE_RECORDS,
        2,
        {
            "topics": [
                {
                    "name": "t",
                    "partitions": [
                        {"partition_index": 0, "low_watermark": 5, "error_code": 0},
                        {"partition_index": 1, "low_watermark": -1, "error_code": 1},
                    ],
                }
            ]
        },
    )
    got = m.delete_records_results(resp)
    assert got[TP("t", 0)].low_watermark == 5
    assert got[TP("t", 0)].error is None
    assert error_code(got[TP("t", 1)].error) == 1


# -- ACLs ----------------------------------------------------------------------------------


def _acl() -> AclBinding:
    return AclBinding(
        ResourcePattern(ResourceType.TOPIC, "orders", PatternType.PREFIXED),
        "User:alice",
        "*",
        AclOperation.READ,
        AclPermissionType.ALLOW,
    )


def test_acl_filters_on_v0_only_allow_literal() -> None:
    flt = AclBindingFilter(ResourcePatternFilter(ResourceType.TOPIC, "x", PatternType.PREFIXED))
    with pytest.raises(IncompatibleBrokerVersionError):
        m.describe_acls_request(flt, 0)
    with pytest.raises(IncompatibleBrokerVersionError):
        m.delete_acls_request([flt], 0)
    body = m.describe_acls_request(AclBindingFilter.any(), 0)
    assert body.pattern_type_filter == PatternType.LITERAL
    request_roundtrip(apis.DESCRIBE_ACLS, 0, body)
    request_roundtrip(apis.DESCRIBE_ACLS, 3, m.describe_acls_request(flt, 3))
    deleted = request_roundtrip(apis.DELETE_ACLS, 3, m.delete_acls_request([flt], 3))
    assert deleted.filters[0].pattern_type_filter == PatternType.PREFIXED


def test_acl_results_map_back_to_bindings() -> None:
    acl = _acl()
    request_roundtrip(apis.CREATE_ACLS, 3, m.create_acls_request([acl], 3))
    created = m.create_acls_results(
        wire(apis.CREATE_ACLS, 3, {"results": [{"error_code": 0}]}), [acl]
    )
    assert created[acl].error is None
    described = wire(
        apis.DESCRIBE_ACLS,
        3,
        {
            "resources": [
                {
                    "resource_type": 2,
                    "resource_name": "orders",
                    "pattern_type": 4,
                    "acls": [
                        {
                            "principal": "User:alice",
                            "host": "*",
                            "operation": 3,
                            "permission_type": 3,
                        }
                    ],
                }
            ]
        },
    )
    error, acls = m.describe_acls_results(described)
    assert error is None
    assert acls == [acl]
    flt = AclBindingFilter.any()
    deleted = wire(
        apis.DELETE_ACLS,
        3,
        {
            "filter_results": [
                {
                    "error_code": 0,
                    "matching_acls": [
                        {
                            "error_code": 0,
                            "resource_type": 2,
                            "resource_name": "orders",
                            "pattern_type": 4,
                            "principal": "User:alice",
                            "host": "*",
                            "operation": 3,
                            "permission_type": 3,
                        },
                        {
                            "error_code": 31,
                            "resource_type": 2,
                            "resource_name": "x",
                            "pattern_type": 3,
                            "principal": "User:bob",
                            "host": "*",
                            "operation": 4,
                            "permission_type": 2,
                        },
                    ],
                }
            ]
        },
    )
    got = m.delete_acls_results(deleted, [flt])[flt]
    assert got.deleted == (acl,)
    assert got.error is None
    ((failed_acl, failed_error),) = got.match_errors
    assert failed_acl.principal == "User:bob"
    assert error_code(failed_error) == 31


# -- argument validation -------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda: NewTopic(""),
        lambda: NewTopic("bad name"),
        lambda: NewTopic("x" * 250),
        lambda: NewTopic("t", num_partitions=0),
        lambda: NewTopic("t", replication_factor=-2),
        lambda: NewTopic("t", 3, replica_assignment={0: [1]}),
        lambda: NewTopic("t", replica_assignment={0: []}),
        lambda: NewTopic("t", config={"a": object()}),  # type: ignore[dict-item]
        lambda: NewPartitions(0),
        lambda: ConfigResource.broker("abc"),
        lambda: ConfigResource(ResourceType.UNKNOWN, "x"),  # type: ignore[arg-type]
        lambda: AlterConfigOp.set("a", None),  # type: ignore[arg-type]
        lambda: OffsetSpec.for_timestamp(-5),
        lambda: OffsetSpec.coerce("yesterday"),
        lambda: AclBinding(ResourcePattern(ResourceType.TOPIC, "t"), "alice"),
        lambda: AclBinding(
            ResourcePattern(ResourceType.TOPIC, "t"), "User:a", operation=AclOperation.ANY
        ),
        lambda: ResourcePattern(ResourceType.ANY, "t"),
        lambda: ResourcePattern(ResourceType.TOPIC, "t", PatternType.MATCH),
        lambda: ResourcePattern("no-such-type", "t"),  # type: ignore[arg-type]
    ],
)
def test_bad_arguments_raise_config_error(make: Any) -> None:
    with pytest.raises(ConfigError):
        make()


def test_value_types_normalise() -> None:
    t = NewTopic("t", config={"a": 1, "b": True, "c": None})  # type: ignore[dict-item]
    assert dict(t.config) == {"a": "1", "b": "true", "c": None}
    assert OffsetSpec.coerce("latest") == OffsetSpec.latest()
    assert OffsetSpec.coerce(5) == OffsetSpec.for_timestamp(5)
    assert repr(OffsetSpec.max_timestamp()) == "OffsetSpec.max_timestamp()"
    assert ResourcePattern("topic", "t").resource_type is ResourceType.TOPIC  # type: ignore[arg-type]
    assert ConfigResource.broker(3).broker_id == 3
    assert ConfigResource.topic("t").broker_id is None
    # Frozen and hashable: usable as ResultMap keys.
    assert len({_acl(), _acl()}) == 1


def test_elect_leaders_request_and_results() -> None:

    from kafka_async.errors import ElectionNotNeededError
    from kafka_async.protocol.apis import elect_leaders as el

    tps = [TopicPartition("a", 0), TopicPartition("a", 2), TopicPartition("b", 1)]
    assert m.elect_leaders_request(0, tps, 5000, 2) == el.ElectLeadersRequest(
        election_type=0,
        topic_partitions=[
            el.TopicPartitions(topic="a", partitions=[0, 2]),
            el.TopicPartitions(topic="b", partitions=[1]),
        ],
        timeout_ms=5000,
    )
    assert m.elect_leaders_request(1, None, 5000, 1).topic_partitions is None
    with pytest.raises(IncompatibleBrokerVersionError, match="unclean election"):
        m.elect_leaders_request(1, tps, 5000, 0)
    resp = el.ElectLeadersResponse(
        throttle_time_ms=0,
        error_code=0,
        replica_election_results=[
            el.ReplicaElectionResult(
                topic="a",
                partition_result=[
                    el.PartitionResult(partition_id=0, error_code=0, error_message=None),
                    el.PartitionResult(partition_id=2, error_code=84, error_message="not needed"),
                ],
            )
        ],
    )
    got = m.elect_leaders_results(resp)
    assert got[TopicPartition("a", 0)].error is None
    assert isinstance(got[TopicPartition("a", 2)].error, ElectionNotNeededError)
