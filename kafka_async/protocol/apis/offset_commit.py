# Generated from kafka_async/protocol/definitions/offset_commit.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""OffsetCommit: store a consumer group's offsets.

Versions 0-9, flexible 8+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import INT16, INT32, INT64, MISSING, STRING, Api, Field, Message, StructDef, array


class OffsetCommitRequest(Message):
    """The OffsetCommit request (key 8)."""

    __slots__ = (
        "group_id",
        "generation_id_or_member_epoch",
        "member_id",
        "group_instance_id",
        "retention_time_ms",
        "topics",
    )

    group_id: str
    """Consumer group id."""
    generation_id_or_member_epoch: int
    """Group generation (classic groups) or member epoch (KIP-848); -1 for a standalone commit."""
    member_id: str
    """The member id the coordinator gave this member (empty on first join)."""
    group_instance_id: str | None
    """Static membership id (KIP-345), or null for a dynamic member."""
    retention_time_ms: int
    """How long to keep the offsets (v2-4), -1 for the broker default."""
    topics: list[OffsetCommitRequestTopic]
    """The offsets, grouped by topic."""

    def __init__(
        self,
        *,
        group_id: str = "",
        generation_id_or_member_epoch: int = -1,
        member_id: str = "",
        group_instance_id: str | None = None,
        retention_time_ms: int = -1,
        topics: list[OffsetCommitRequestTopic] = MISSING,
    ) -> None:
        self.group_id = group_id
        self.generation_id_or_member_epoch = generation_id_or_member_epoch
        self.member_id = member_id
        self.group_instance_id = group_instance_id
        self.retention_time_ms = retention_time_ms
        self.topics = [] if topics is MISSING else topics


class OffsetCommitRequestTopic(Message):
    """The offsets, grouped by topic."""

    __slots__ = ("name", "partitions")

    name: str
    """Topic name."""
    partitions: list[OffsetCommitRequestPartition]
    """The partitions of this topic."""

    def __init__(
        self, *, name: str = "", partitions: list[OffsetCommitRequestPartition] = MISSING
    ) -> None:
        self.name = name
        self.partitions = [] if partitions is MISSING else partitions


class OffsetCommitRequestPartition(Message):
    """The partitions of this topic."""

    __slots__ = (
        "partition_index",
        "committed_offset",
        "committed_leader_epoch",
        "commit_timestamp",
        "committed_metadata",
    )

    partition_index: int
    """Partition index."""
    committed_offset: int
    """Offset committed for this partition."""
    committed_leader_epoch: int
    """Leader epoch of the last consumed record, or -1."""
    commit_timestamp: int
    """Commit time in ms (v1 only), -1 for now."""
    committed_metadata: str | None
    """Free-form metadata stored with the offset."""

    def __init__(
        self,
        *,
        partition_index: int = 0,
        committed_offset: int = 0,
        committed_leader_epoch: int = -1,
        commit_timestamp: int = -1,
        committed_metadata: str | None = "",
    ) -> None:
        self.partition_index = partition_index
        self.committed_offset = committed_offset
        self.committed_leader_epoch = committed_leader_epoch
        self.commit_timestamp = commit_timestamp
        self.committed_metadata = committed_metadata


class OffsetCommitResponse(Message):
    """The OffsetCommit response (key 8)."""

    __slots__ = ("throttle_time_ms", "topics")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    topics: list[OffsetCommitResponseTopic]
    """The results, grouped by topic."""

    def __init__(
        self, *, throttle_time_ms: int = 0, topics: list[OffsetCommitResponseTopic] = MISSING
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.topics = [] if topics is MISSING else topics


class OffsetCommitResponseTopic(Message):
    """The results, grouped by topic."""

    __slots__ = ("name", "partitions")

    name: str
    """Topic name."""
    partitions: list[OffsetCommitResponsePartition]
    """One result per partition."""

    def __init__(
        self, *, name: str = "", partitions: list[OffsetCommitResponsePartition] = MISSING
    ) -> None:
        self.name = name
        self.partitions = [] if partitions is MISSING else partitions


class OffsetCommitResponsePartition(Message):
    """One result per partition."""

    __slots__ = ("partition_index", "error_code")

    partition_index: int
    """Partition index."""
    error_code: int
    """0, or the error (errors.py) for this entry."""

    def __init__(self, *, partition_index: int = 0, error_code: int = 0) -> None:
        self.partition_index = partition_index
        self.error_code = error_code


# The schema the codecs are compiled from (nested structs first).
_OFFSET_COMMIT_REQUEST_PARTITION = StructDef(
    "OffsetCommitRequestPartition",
    [
        Field("partition_index", INT32),
        Field("committed_offset", INT64),
        Field("committed_leader_epoch", INT32, "6+", default=-1, ignorable=True),
        Field("commit_timestamp", INT64, "1", default=-1),
        Field("committed_metadata", STRING, nullable="0+"),
    ],
    OffsetCommitRequestPartition,
)
_OFFSET_COMMIT_REQUEST_TOPIC = StructDef(
    "OffsetCommitRequestTopic",
    [Field("name", STRING), Field("partitions", array(_OFFSET_COMMIT_REQUEST_PARTITION))],
    OffsetCommitRequestTopic,
)
_OFFSET_COMMIT_REQUEST = StructDef(
    "OffsetCommitRequest",
    [
        Field("group_id", STRING),
        Field("generation_id_or_member_epoch", INT32, "1+", default=-1, ignorable=True),
        Field("member_id", STRING, "1+", ignorable=True),
        Field("group_instance_id", STRING, "7+", nullable="7+", default=None),
        Field("retention_time_ms", INT64, "2-4", default=-1, ignorable=True),
        Field("topics", array(_OFFSET_COMMIT_REQUEST_TOPIC)),
    ],
    OffsetCommitRequest,
)
_OFFSET_COMMIT_RESPONSE_PARTITION = StructDef(
    "OffsetCommitResponsePartition",
    [Field("partition_index", INT32), Field("error_code", INT16)],
    OffsetCommitResponsePartition,
)
_OFFSET_COMMIT_RESPONSE_TOPIC = StructDef(
    "OffsetCommitResponseTopic",
    [Field("name", STRING), Field("partitions", array(_OFFSET_COMMIT_RESPONSE_PARTITION))],
    OffsetCommitResponseTopic,
)
_OFFSET_COMMIT_RESPONSE = StructDef(
    "OffsetCommitResponse",
    [
        Field("throttle_time_ms", INT32, "3+", ignorable=True),
        Field("topics", array(_OFFSET_COMMIT_RESPONSE_TOPIC)),
    ],
    OffsetCommitResponse,
)

OFFSET_COMMIT: Api[OffsetCommitRequest, OffsetCommitResponse] = Api(
    8,
    "OffsetCommit",
    "0-9",
    "8+",
    _OFFSET_COMMIT_REQUEST,
    _OFFSET_COMMIT_RESPONSE,
    OffsetCommitRequest,
    OffsetCommitResponse,
)
"""OffsetCommit (key 8), versions 0-9."""
