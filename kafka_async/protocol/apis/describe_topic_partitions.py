# Generated from kafka_async/protocol/definitions/describe_topic_partitions.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""DescribeTopicPartitions: topics and their partitions, paged, with eligible leader replicas
(KIP-966).

Versions 0, flexible 0+; checked against Kafka 4.1's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

import uuid

from ..codec import ZERO_UUID
from ..schema import (
    BOOL,
    INT16,
    INT32,
    MISSING,
    STRING,
    UUID,
    Api,
    Field,
    Message,
    StructDef,
    array,
)


class DescribeTopicPartitionsRequest(Message):
    """The DescribeTopicPartitions request (key 75)."""

    __slots__ = ("topics", "response_partition_limit", "cursor")

    topics: list[TopicRequest]
    """The topics to describe."""
    response_partition_limit: int
    """The most partitions to return in this response."""
    cursor: Cursor | None
    """Where to start: the first topic and partition of this page, or null."""

    def __init__(
        self,
        *,
        topics: list[TopicRequest] = MISSING,
        response_partition_limit: int = 2000,
        cursor: Cursor | None = None,
    ) -> None:
        self.topics = [] if topics is MISSING else topics
        self.response_partition_limit = response_partition_limit
        self.cursor = cursor


class TopicRequest(Message):
    """The topics to describe."""

    __slots__ = ("name",)

    name: str
    """Topic name."""

    def __init__(self, *, name: str = "") -> None:
        self.name = name


class Cursor(Message):
    """Where to start: the first topic and partition of this page, or null."""

    __slots__ = ("topic_name", "partition_index")

    topic_name: str
    """Topic name."""
    partition_index: int
    """Partition index."""

    def __init__(self, *, topic_name: str = "", partition_index: int = 0) -> None:
        self.topic_name = topic_name
        self.partition_index = partition_index


class DescribeTopicPartitionsResponse(Message):
    """The DescribeTopicPartitions response (key 75)."""

    __slots__ = ("throttle_time_ms", "topics", "next_cursor")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    topics: list[DescribeTopicPartitionsResponseTopic]
    """One entry per topic."""
    next_cursor: Cursor | None
    """Where the next page starts, or null when this was the last."""

    def __init__(
        self,
        *,
        throttle_time_ms: int = 0,
        topics: list[DescribeTopicPartitionsResponseTopic] = MISSING,
        next_cursor: Cursor | None = None,
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.topics = [] if topics is MISSING else topics
        self.next_cursor = next_cursor


class DescribeTopicPartitionsResponseTopic(Message):
    """One entry per topic."""

    __slots__ = (
        "error_code",
        "name",
        "topic_id",
        "is_internal",
        "partitions",
        "topic_authorized_operations",
    )

    error_code: int
    """0, or the error for this topic."""
    name: str | None
    """Topic name, or null."""
    topic_id: uuid.UUID
    """The topic's UUID."""
    is_internal: bool
    """Whether the topic is internal."""
    partitions: list[DescribeTopicPartitionsResponsePartition]
    """One entry per partition."""
    topic_authorized_operations: int
    """Bit field of the operations the caller may do on the topic (-2^31: not asked)."""

    def __init__(
        self,
        *,
        error_code: int = 0,
        name: str | None = "",
        topic_id: uuid.UUID = ZERO_UUID,
        is_internal: bool = False,
        partitions: list[DescribeTopicPartitionsResponsePartition] = MISSING,
        topic_authorized_operations: int = -2147483648,
    ) -> None:
        self.error_code = error_code
        self.name = name
        self.topic_id = topic_id
        self.is_internal = is_internal
        self.partitions = [] if partitions is MISSING else partitions
        self.topic_authorized_operations = topic_authorized_operations


class DescribeTopicPartitionsResponsePartition(Message):
    """One entry per partition."""

    __slots__ = (
        "error_code",
        "partition_index",
        "leader_id",
        "leader_epoch",
        "replica_nodes",
        "isr_nodes",
        "eligible_leader_replicas",
        "last_known_elr",
        "offline_replicas",
    )

    error_code: int
    """0, or the error for this partition."""
    partition_index: int
    """Partition index."""
    leader_id: int
    """Broker id of the leader, or -1."""
    leader_epoch: int
    """Leader epoch of the partition, or -1."""
    replica_nodes: list[int]
    """Broker ids of the replicas."""
    isr_nodes: list[int]
    """Broker ids of the in-sync replicas."""
    eligible_leader_replicas: list[int] | None
    """Broker ids of the eligible leader replicas, or null."""
    last_known_elr: list[int] | None
    """Broker ids of the last known eligible leader replicas, or null."""
    offline_replicas: list[int]
    """Broker ids of the replicas that are offline."""

    def __init__(
        self,
        *,
        error_code: int = 0,
        partition_index: int = 0,
        leader_id: int = 0,
        leader_epoch: int = -1,
        replica_nodes: list[int] = MISSING,
        isr_nodes: list[int] = MISSING,
        eligible_leader_replicas: list[int] | None = None,
        last_known_elr: list[int] | None = None,
        offline_replicas: list[int] = MISSING,
    ) -> None:
        self.error_code = error_code
        self.partition_index = partition_index
        self.leader_id = leader_id
        self.leader_epoch = leader_epoch
        self.replica_nodes = [] if replica_nodes is MISSING else replica_nodes
        self.isr_nodes = [] if isr_nodes is MISSING else isr_nodes
        self.eligible_leader_replicas = eligible_leader_replicas
        self.last_known_elr = last_known_elr
        self.offline_replicas = [] if offline_replicas is MISSING else offline_replicas


# The schema the codecs are compiled from (nested structs first).
_TOPIC_REQUEST = StructDef("TopicRequest", [Field("name", STRING)], TopicRequest)
_CURSOR = StructDef(
    "Cursor", [Field("topic_name", STRING), Field("partition_index", INT32)], Cursor
)
_DESCRIBE_TOPIC_PARTITIONS_REQUEST = StructDef(
    "DescribeTopicPartitionsRequest",
    [
        Field("topics", array(_TOPIC_REQUEST)),
        Field("response_partition_limit", INT32, default=2000),
        Field("cursor", _CURSOR, nullable="0+", default=None),
    ],
    DescribeTopicPartitionsRequest,
)
_DESCRIBE_TOPIC_PARTITIONS_RESPONSE_PARTITION = StructDef(
    "DescribeTopicPartitionsResponsePartition",
    [
        Field("error_code", INT16),
        Field("partition_index", INT32),
        Field("leader_id", INT32),
        Field("leader_epoch", INT32, default=-1, ignorable=True),
        Field("replica_nodes", array(INT32)),
        Field("isr_nodes", array(INT32)),
        Field("eligible_leader_replicas", array(INT32), nullable="0+", default=None),
        Field("last_known_elr", array(INT32), nullable="0+", default=None),
        Field("offline_replicas", array(INT32), ignorable=True),
    ],
    DescribeTopicPartitionsResponsePartition,
)
_DESCRIBE_TOPIC_PARTITIONS_RESPONSE_TOPIC = StructDef(
    "DescribeTopicPartitionsResponseTopic",
    [
        Field("error_code", INT16),
        Field("name", STRING, nullable="0+"),
        Field("topic_id", UUID, ignorable=True),
        Field("is_internal", BOOL, ignorable=True),
        Field("partitions", array(_DESCRIBE_TOPIC_PARTITIONS_RESPONSE_PARTITION)),
        Field("topic_authorized_operations", INT32, default=-2147483648),
    ],
    DescribeTopicPartitionsResponseTopic,
)
_DESCRIBE_TOPIC_PARTITIONS_RESPONSE = StructDef(
    "DescribeTopicPartitionsResponse",
    [
        Field("throttle_time_ms", INT32, ignorable=True),
        Field("topics", array(_DESCRIBE_TOPIC_PARTITIONS_RESPONSE_TOPIC)),
        Field("next_cursor", _CURSOR, nullable="0+", default=None),
    ],
    DescribeTopicPartitionsResponse,
)

DESCRIBE_TOPIC_PARTITIONS: Api[DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse] = (
    Api(
        75,
        "DescribeTopicPartitions",
        "0",
        "0+",
        _DESCRIBE_TOPIC_PARTITIONS_REQUEST,
        _DESCRIBE_TOPIC_PARTITIONS_RESPONSE,
        DescribeTopicPartitionsRequest,
        DescribeTopicPartitionsResponse,
    )
)
"""DescribeTopicPartitions (key 75), versions 0."""
