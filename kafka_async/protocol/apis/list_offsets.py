# Generated from kafka_async/protocol/definitions/list_offsets.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""ListOffsets: find the offset of a timestamp, or the earliest or latest offset.

Versions 0-10, flexible 6+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import (
    INT8,
    INT16,
    INT32,
    INT64,
    MISSING,
    STRING,
    Api,
    Field,
    Message,
    StructDef,
    array,
)


class ListOffsetsRequest(Message):
    """The ListOffsets request (key 2)."""

    __slots__ = ("replica_id", "isolation_level", "topics", "timeout_ms")

    replica_id: int
    """Broker id of the follower; -1 for a client."""
    isolation_level: int
    """0 read uncommitted, 1 read committed."""
    topics: list[ListOffsetsTopic]
    """The partitions to look up, grouped by topic."""
    timeout_ms: int
    """How long the broker may take before it answers."""

    def __init__(
        self,
        *,
        replica_id: int = 0,
        isolation_level: int = 0,
        topics: list[ListOffsetsTopic] = MISSING,
        timeout_ms: int = 0,
    ) -> None:
        self.replica_id = replica_id
        self.isolation_level = isolation_level
        self.topics = [] if topics is MISSING else topics
        self.timeout_ms = timeout_ms


class ListOffsetsTopic(Message):
    """The partitions to look up, grouped by topic."""

    __slots__ = ("name", "partitions")

    name: str
    """Topic name."""
    partitions: list[ListOffsetsPartition]
    """The partitions of this topic."""

    def __init__(self, *, name: str = "", partitions: list[ListOffsetsPartition] = MISSING) -> None:
        self.name = name
        self.partitions = [] if partitions is MISSING else partitions


class ListOffsetsPartition(Message):
    """The partitions of this topic."""

    __slots__ = ("partition_index", "current_leader_epoch", "timestamp", "max_num_offsets")

    partition_index: int
    """Partition index."""
    current_leader_epoch: int
    """The leader epoch the client knows (fencing); -1 to skip the check."""
    timestamp: int
    """Timestamp in ms to look up (-1 latest, -2 earliest, -3 max timestamp)."""
    max_num_offsets: int
    """How many offsets to return (v0 only)."""

    def __init__(
        self,
        *,
        partition_index: int = 0,
        current_leader_epoch: int = -1,
        timestamp: int = 0,
        max_num_offsets: int = 1,
    ) -> None:
        self.partition_index = partition_index
        self.current_leader_epoch = current_leader_epoch
        self.timestamp = timestamp
        self.max_num_offsets = max_num_offsets


class ListOffsetsResponse(Message):
    """The ListOffsets response (key 2)."""

    __slots__ = ("throttle_time_ms", "topics")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    topics: list[ListOffsetsTopicResponse]
    """The results, grouped by topic."""

    def __init__(
        self, *, throttle_time_ms: int = 0, topics: list[ListOffsetsTopicResponse] = MISSING
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.topics = [] if topics is MISSING else topics


class ListOffsetsTopicResponse(Message):
    """The results, grouped by topic."""

    __slots__ = ("name", "partitions")

    name: str
    """Topic name."""
    partitions: list[ListOffsetsPartitionResponse]
    """One result per partition."""

    def __init__(
        self, *, name: str = "", partitions: list[ListOffsetsPartitionResponse] = MISSING
    ) -> None:
        self.name = name
        self.partitions = [] if partitions is MISSING else partitions


class ListOffsetsPartitionResponse(Message):
    """One result per partition."""

    __slots__ = (
        "partition_index",
        "error_code",
        "old_style_offsets",
        "timestamp",
        "offset",
        "leader_epoch",
    )

    partition_index: int
    """Partition index."""
    error_code: int
    """0, or the error (errors.py) for this entry."""
    old_style_offsets: list[int]
    """The offsets found (v0 only)."""
    timestamp: int
    """Timestamp of the record found, or -1."""
    offset: int
    """The offset found, or -1."""
    leader_epoch: int
    """Leader epoch of the record found, or -1."""

    def __init__(
        self,
        *,
        partition_index: int = 0,
        error_code: int = 0,
        old_style_offsets: list[int] = MISSING,
        timestamp: int = -1,
        offset: int = -1,
        leader_epoch: int = -1,
    ) -> None:
        self.partition_index = partition_index
        self.error_code = error_code
        self.old_style_offsets = [] if old_style_offsets is MISSING else old_style_offsets
        self.timestamp = timestamp
        self.offset = offset
        self.leader_epoch = leader_epoch


# The schema the codecs are compiled from (nested structs first).
_LIST_OFFSETS_PARTITION = StructDef(
    "ListOffsetsPartition",
    [
        Field("partition_index", INT32),
        Field("current_leader_epoch", INT32, "4+", default=-1, ignorable=True),
        Field("timestamp", INT64),
        Field("max_num_offsets", INT32, "0", default=1),
    ],
    ListOffsetsPartition,
)
_LIST_OFFSETS_TOPIC = StructDef(
    "ListOffsetsTopic",
    [Field("name", STRING), Field("partitions", array(_LIST_OFFSETS_PARTITION))],
    ListOffsetsTopic,
)
_LIST_OFFSETS_REQUEST = StructDef(
    "ListOffsetsRequest",
    [
        Field("replica_id", INT32),
        Field("isolation_level", INT8, "2+"),
        Field("topics", array(_LIST_OFFSETS_TOPIC)),
        Field("timeout_ms", INT32, "10+", ignorable=True),
    ],
    ListOffsetsRequest,
)
_LIST_OFFSETS_PARTITION_RESPONSE = StructDef(
    "ListOffsetsPartitionResponse",
    [
        Field("partition_index", INT32),
        Field("error_code", INT16),
        Field("old_style_offsets", array(INT64), "0"),
        Field("timestamp", INT64, "1+", default=-1),
        Field("offset", INT64, "1+", default=-1),
        Field("leader_epoch", INT32, "4+", default=-1),
    ],
    ListOffsetsPartitionResponse,
)
_LIST_OFFSETS_TOPIC_RESPONSE = StructDef(
    "ListOffsetsTopicResponse",
    [Field("name", STRING), Field("partitions", array(_LIST_OFFSETS_PARTITION_RESPONSE))],
    ListOffsetsTopicResponse,
)
_LIST_OFFSETS_RESPONSE = StructDef(
    "ListOffsetsResponse",
    [
        Field("throttle_time_ms", INT32, "2+", ignorable=True),
        Field("topics", array(_LIST_OFFSETS_TOPIC_RESPONSE)),
    ],
    ListOffsetsResponse,
)

LIST_OFFSETS: Api[ListOffsetsRequest, ListOffsetsResponse] = Api(
    2,
    "ListOffsets",
    "0-10",
    "6+",
    _LIST_OFFSETS_REQUEST,
    _LIST_OFFSETS_RESPONSE,
    ListOffsetsRequest,
    ListOffsetsResponse,
)
"""ListOffsets (key 2), versions 0-10."""
