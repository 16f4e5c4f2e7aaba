# Generated from kafka_async/protocol/definitions/describe_share_group_offsets.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""DescribeShareGroupOffsets: the start offsets (and, v1+, the lag) of share groups' share-
partitions (KIP-932, KIP-1226).

Versions 0-1, flexible 0+; checked against Kafka 4.4's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

import uuid

from ..codec import ZERO_UUID
from ..schema import (
    INT16,
    INT32,
    INT64,
    MISSING,
    STRING,
    UUID,
    Api,
    Field,
    Message,
    StructDef,
    array,
)


class DescribeShareGroupOffsetsRequest(Message):
    """The DescribeShareGroupOffsets request (key 90)."""

    __slots__ = ("groups",)

    groups: list[DescribeShareGroupOffsetsRequestGroup]
    """The groups to describe."""

    def __init__(self, *, groups: list[DescribeShareGroupOffsetsRequestGroup] = MISSING) -> None:
        self.groups = [] if groups is MISSING else groups


class DescribeShareGroupOffsetsRequestGroup(Message):
    """The groups to describe."""

    __slots__ = ("group_id", "topics")

    group_id: str
    """Group id."""
    topics: list[DescribeShareGroupOffsetsRequestTopic] | None
    """The partitions to describe by topic, or null for every partition the group has."""

    def __init__(
        self,
        *,
        group_id: str = "",
        topics: list[DescribeShareGroupOffsetsRequestTopic] | None = MISSING,
    ) -> None:
        self.group_id = group_id
        self.topics = [] if topics is MISSING else topics


class DescribeShareGroupOffsetsRequestTopic(Message):
    """The partitions to describe by topic, or null for every partition the group has."""

    __slots__ = ("topic_name", "partitions")

    topic_name: str
    """Topic name."""
    partitions: list[int]
    """Partition indexes."""

    def __init__(self, *, topic_name: str = "", partitions: list[int] = MISSING) -> None:
        self.topic_name = topic_name
        self.partitions = [] if partitions is MISSING else partitions


class DescribeShareGroupOffsetsResponse(Message):
    """The DescribeShareGroupOffsets response (key 90)."""

    __slots__ = ("throttle_time_ms", "groups")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    groups: list[DescribeShareGroupOffsetsResponseGroup]
    """One entry per group."""

    def __init__(
        self,
        *,
        throttle_time_ms: int = 0,
        groups: list[DescribeShareGroupOffsetsResponseGroup] = MISSING,
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.groups = [] if groups is MISSING else groups


class DescribeShareGroupOffsetsResponseGroup(Message):
    """One entry per group."""

    __slots__ = ("group_id", "topics", "error_code", "error_message")

    group_id: str
    """Group id."""
    topics: list[DescribeShareGroupOffsetsResponseTopic]
    """Results by topic."""
    error_code: int
    """0, or the error (errors.py) for this group."""
    error_message: str | None
    """The broker's description of the error, or null."""

    def __init__(
        self,
        *,
        group_id: str = "",
        topics: list[DescribeShareGroupOffsetsResponseTopic] = MISSING,
        error_code: int = 0,
        error_message: str | None = None,
    ) -> None:
        self.group_id = group_id
        self.topics = [] if topics is MISSING else topics
        self.error_code = error_code
        self.error_message = error_message


class DescribeShareGroupOffsetsResponseTopic(Message):
    """Results by topic."""

    __slots__ = ("topic_name", "topic_id", "partitions")

    topic_name: str
    """Topic name."""
    topic_id: uuid.UUID
    """Topic id."""
    partitions: list[DescribeShareGroupOffsetsResponsePartition]
    """Results by partition."""

    def __init__(
        self,
        *,
        topic_name: str = "",
        topic_id: uuid.UUID = ZERO_UUID,
        partitions: list[DescribeShareGroupOffsetsResponsePartition] = MISSING,
    ) -> None:
        self.topic_name = topic_name
        self.topic_id = topic_id
        self.partitions = [] if partitions is MISSING else partitions


class DescribeShareGroupOffsetsResponsePartition(Message):
    """Results by partition."""

    __slots__ = (
        "partition_index",
        "start_offset",
        "leader_epoch",
        "lag",
        "error_code",
        "error_message",
    )

    partition_index: int
    """Partition index."""
    start_offset: int
    """The share-partition's start offset, -1 when it has none."""
    leader_epoch: int
    """The leader epoch of the start offset."""
    lag: int
    """Records of the share-partition not yet acknowledged by the group as a whole, -1 when unknown
    (KIP-1226).
    """
    error_code: int
    """0, or the error (errors.py) for this partition."""
    error_message: str | None
    """The broker's description of the error, or null."""

    def __init__(
        self,
        *,
        partition_index: int = 0,
        start_offset: int = 0,
        leader_epoch: int = 0,
        lag: int = -1,
        error_code: int = 0,
        error_message: str | None = None,
    ) -> None:
        self.partition_index = partition_index
        self.start_offset = start_offset
        self.leader_epoch = leader_epoch
        self.lag = lag
        self.error_code = error_code
        self.error_message = error_message


# The schema the codecs are compiled from (nested structs first).
_DESCRIBE_SHARE_GROUP_OFFSETS_REQUEST_TOPIC = StructDef(
    "DescribeShareGroupOffsetsRequestTopic",
    [Field("topic_name", STRING), Field("partitions", array(INT32))],
    DescribeShareGroupOffsetsRequestTopic,
)
_DESCRIBE_SHARE_GROUP_OFFSETS_REQUEST_GROUP = StructDef(
    "DescribeShareGroupOffsetsRequestGroup",
    [
        Field("group_id", STRING),
        Field("topics", array(_DESCRIBE_SHARE_GROUP_OFFSETS_REQUEST_TOPIC), nullable="0+"),
    ],
    DescribeShareGroupOffsetsRequestGroup,
)
_DESCRIBE_SHARE_GROUP_OFFSETS_REQUEST = StructDef(
    "DescribeShareGroupOffsetsRequest",
    [Field("groups", array(_DESCRIBE_SHARE_GROUP_OFFSETS_REQUEST_GROUP))],
    DescribeShareGroupOffsetsRequest,
)
_DESCRIBE_SHARE_GROUP_OFFSETS_RESPONSE_PARTITION = StructDef(
    "DescribeShareGroupOffsetsResponsePartition",
    [
        Field("partition_index", INT32),
        Field("start_offset", INT64),
        Field("leader_epoch", INT32),
        Field("lag", INT64, "1+", default=-1, ignorable=True),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
    ],
    DescribeShareGroupOffsetsResponsePartition,
)
_DESCRIBE_SHARE_GROUP_OFFSETS_RESPONSE_TOPIC = StructDef(
    "DescribeShareGroupOffsetsResponseTopic",
    [
        Field("topic_name", STRING),
        Field("topic_id", UUID),
        Field("partitions", array(_DESCRIBE_SHARE_GROUP_OFFSETS_RESPONSE_PARTITION)),
    ],
    DescribeShareGroupOffsetsResponseTopic,
)
_DESCRIBE_SHARE_GROUP_OFFSETS_RESPONSE_GROUP = StructDef(
    "DescribeShareGroupOffsetsResponseGroup",
    [
        Field("group_id", STRING),
        Field("topics", array(_DESCRIBE_SHARE_GROUP_OFFSETS_RESPONSE_TOPIC)),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
    ],
    DescribeShareGroupOffsetsResponseGroup,
)
_DESCRIBE_SHARE_GROUP_OFFSETS_RESPONSE = StructDef(
    "DescribeShareGroupOffsetsResponse",
    [
        Field("throttle_time_ms", INT32),
        Field("groups", array(_DESCRIBE_SHARE_GROUP_OFFSETS_RESPONSE_GROUP)),
    ],
    DescribeShareGroupOffsetsResponse,
)

DESCRIBE_SHARE_GROUP_OFFSETS: Api[
    DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse
] = Api(
    90,
    "DescribeShareGroupOffsets",
    "0-1",
    "0+",
    _DESCRIBE_SHARE_GROUP_OFFSETS_REQUEST,
    _DESCRIBE_SHARE_GROUP_OFFSETS_RESPONSE,
    DescribeShareGroupOffsetsRequest,
    DescribeShareGroupOffsetsResponse,
)
"""DescribeShareGroupOffsets (key 90), versions 0-1."""
