"""Pure parts of partition reassignments: what the caller may ask, the request bodies, the
mapping of answers; and the ``kafka-async reassign`` argument parsing."""

from __future__ import annotations

import pytest

from kafka_async.admin.reassignments import (
    alter_request,
    alter_results,
    check_targets,
    list_request,
    list_results,
)
from kafka_async.cli.parsing import UsageError
from kafka_async.cli.reassign import parse_move, parse_partition
from kafka_async.errors import (
    ConfigError,
    IncompatibleBrokerVersionError,
    InvalidReplicaAssignmentError,
    NotControllerError,
)
from kafka_async.protocol.apis.alter_partition_reassignments import (
    AlterPartitionReassignmentsResponse,
    ReassignablePartitionResponse,
    ReassignableTopicResponse,
)
from kafka_async.protocol.apis.list_partition_reassignments import (
    ListPartitionReassignmentsResponse,
    OngoingPartitionReassignment,
    OngoingTopicReassignment,
)
from kafka_async.structs import TopicPartition

A0, A1, B0 = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)


def test_targets_are_checked() -> None:
    assert check_targets({A0: [2, 3], ("b", 0): None}) == {A0: (2, 3), B0: None}  # type: ignore[dict-item]
    for bad, what in [
        ({}, "at least one partition"),
        ({A0: []}, "at least one replica"),
        ({A0: [1, 1]}, "duplicate broker id"),
        ({A0: [-1]}, "ints >= 0"),
        ({A0: [True]}, "ints >= 0"),
        ({A0: "1,2"}, "list of broker ids"),
        ({("a", -1): [1]}, "partition >= 0"),
        ({"a": [1]}, "TopicPartition"),
    ]:
        with pytest.raises(ConfigError, match=what):
            check_targets(bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="mapping"):
        check_targets([(A0, [1])])  # type: ignore[arg-type]


def test_alter_request_groups_by_topic_and_cancels_with_null() -> None:
    req = alter_request({A0: (2, 3), A1: None, B0: (1,)}, True, 5000, 1)
    assert req.timeout_ms == 5000
    assert [
        (t.name, [(p.partition_index, p.replicas) for p in t.partitions]) for t in req.topics
    ] == [
        ("a", [(0, [2, 3]), (1, None)]),
        ("b", [(0, [1])]),
    ]
    # v0 has no guard: only the broker's default (allow) can be sent.
    assert alter_request({A0: (1,)}, True, 1, 0).topics
    with pytest.raises(IncompatibleBrokerVersionError):
        alter_request({A0: (1,)}, False, 1, 0)


def test_alter_results_items_and_request_level_error() -> None:
    resp = AlterPartitionReassignmentsResponse(
        responses=[
            ReassignableTopicResponse(
                name="a",
                partitions=[
                    ReassignablePartitionResponse(partition_index=0, error_code=0),
                    ReassignablePartitionResponse(
                        partition_index=1, error_code=39, error_message="no broker 99"
                    ),
                ],
            )
        ]
    )
    top, got = alter_results(resp, [A0, A1, B0])
    assert top is None
    assert got[A0].error is None
    assert isinstance(got[A1].error, InvalidReplicaAssignmentError)
    assert "no broker 99" in str(got[A1].error)
    assert got[B0].error is not None
    assert "no result" in str(got[B0].error)
    top, got = alter_results(AlterPartitionReassignmentsResponse(error_code=41, responses=[]), [A0])
    assert isinstance(top, NotControllerError)
    assert isinstance(got[A0].error, NotControllerError)


def test_list_request_and_results() -> None:
    assert list_request(None, 100).topics is None
    req = list_request([A0, A1, B0], 100)
    assert [(t.name, t.partition_indexes) for t in req.topics or []] == [("a", [0, 1]), ("b", [0])]
    resp = ListPartitionReassignmentsResponse(
        topics=[
            OngoingTopicReassignment(
                name="a",
                partitions=[
                    OngoingPartitionReassignment(
                        partition_index=0,
                        replicas=[3, 1, 2],
                        adding_replicas=[1],
                        removing_replicas=[2],
                    )
                ],
            )
        ]
    )
    top, got = list_results(resp)
    assert top is None
    move = got[A0]
    assert (move.replicas, move.adding_replicas, move.removing_replicas) == ((3, 1, 2), (1,), (2,))
    assert move.target_replicas == (3, 1)


def test_cli_parsing() -> None:
    assert parse_partition("my:topic:3") == TopicPartition("my:topic", 3)
    assert parse_move("orders:0=2,3") == (TopicPartition("orders", 0), [2, 3])
    for bad in ["orders", "orders:x", ":1"]:
        with pytest.raises(UsageError, match="TOPIC:PARTITION"):
            parse_partition(bad)
    for bad, what in [
        ("orders:0", "TOPIC:PARTITION=BROKER"),
        ("orders:0=", "broker ids"),
        ("orders:0=1,a", "broker ids"),
        ("orders:0=1,1", "twice"),
    ]:
        with pytest.raises(UsageError, match=what):
            parse_move(bad)
