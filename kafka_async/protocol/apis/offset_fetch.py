# Generated from kafka_async/protocol/definitions/offset_fetch.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""OffsetFetch: read a consumer group's committed offsets.

Versions 0-9, flexible 6+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import (
    BOOL,
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


class OffsetFetchRequest(Message):
    """The OffsetFetch request (key 9)."""

    __slots__ = ("group_id", "topics", "groups", "require_stable")

    group_id: str
    """Consumer group id (up to v7)."""
    topics: list[OffsetFetchRequestTopic] | None
    """Partitions to read, grouped by topic (up to v7); null for all."""
    groups: list[OffsetFetchRequestGroup]
    """The groups to read (v8+)."""
    require_stable: bool
    """Fail partitions with pending transactional offsets (UNSTABLE_OFFSET_COMMIT) instead of
    answering.
    """

    def __init__(
        self,
        *,
        group_id: str = "",
        topics: list[OffsetFetchRequestTopic] | None = MISSING,
        groups: list[OffsetFetchRequestGroup] = MISSING,
        require_stable: bool = False,
    ) -> None:
        self.group_id = group_id
        self.topics = [] if topics is MISSING else topics
        self.groups = [] if groups is MISSING else groups
        self.require_stable = require_stable


class OffsetFetchRequestTopic(Message):
    """Partitions to read, grouped by topic (up to v7); null for all."""

    __slots__ = ("name", "partition_indexes")

    name: str
    """Topic name."""
    partition_indexes: list[int]
    """Partition indexes."""

    def __init__(self, *, name: str = "", partition_indexes: list[int] = MISSING) -> None:
        self.name = name
        self.partition_indexes = [] if partition_indexes is MISSING else partition_indexes


class OffsetFetchRequestGroup(Message):
    """The groups to read (v8+)."""

    __slots__ = ("group_id", "member_id", "member_epoch", "topics")

    group_id: str
    """Consumer group id."""
    member_id: str | None
    """Member id (KIP-848 groups), or null."""
    member_epoch: int
    """Member epoch (KIP-848 groups), or -1."""
    topics: list[OffsetFetchRequestTopics] | None
    """Partitions to read, grouped by topic; null for all."""

    def __init__(
        self,
        *,
        group_id: str = "",
        member_id: str | None = None,
        member_epoch: int = -1,
        topics: list[OffsetFetchRequestTopics] | None = MISSING,
    ) -> None:
        self.group_id = group_id
        self.member_id = member_id
        self.member_epoch = member_epoch
        self.topics = [] if topics is MISSING else topics


class OffsetFetchRequestTopics(Message):
    """Partitions to read, grouped by topic; null for all."""

    __slots__ = ("name", "partition_indexes")

    name: str
    """Topic name."""
    partition_indexes: list[int]
    """Partition indexes."""

    def __init__(self, *, name: str = "", partition_indexes: list[int] = MISSING) -> None:
        self.name = name
        self.partition_indexes = [] if partition_indexes is MISSING else partition_indexes


class OffsetFetchResponse(Message):
    """The OffsetFetch response (key 9)."""

    __slots__ = ("throttle_time_ms", "topics", "error_code", "groups")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    topics: list[OffsetFetchResponseTopic]
    """The offsets, grouped by topic (up to v7)."""
    error_code: int
    """0, or a group-level error (up to v7)."""
    groups: list[OffsetFetchResponseGroup]
    """One entry per group (v8+)."""

    def __init__(
        self,
        *,
        throttle_time_ms: int = 0,
        topics: list[OffsetFetchResponseTopic] = MISSING,
        error_code: int = 0,
        groups: list[OffsetFetchResponseGroup] = MISSING,
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.topics = [] if topics is MISSING else topics
        self.error_code = error_code
        self.groups = [] if groups is MISSING else groups


class OffsetFetchResponseTopic(Message):
    """The offsets, grouped by topic (up to v7)."""

    __slots__ = ("name", "partitions")

    name: str
    """Topic name."""
    partitions: list[OffsetFetchResponsePartition]
    """One entry per partition."""

    def __init__(
        self, *, name: str = "", partitions: list[OffsetFetchResponsePartition] = MISSING
    ) -> None:
        self.name = name
        self.partitions = [] if partitions is MISSING else partitions


class OffsetFetchResponsePartition(Message):
    """One entry per partition."""

    __slots__ = (
        "partition_index",
        "committed_offset",
        "committed_leader_epoch",
        "metadata",
        "error_code",
    )

    partition_index: int
    """Partition index."""
    committed_offset: int
    """The committed offset, or -1 if none."""
    committed_leader_epoch: int
    """Leader epoch of the last consumed record, or -1."""
    metadata: str | None
    """Metadata committed with the offset, or null."""
    error_code: int
    """0, or the error (errors.py) for this entry."""

    def __init__(
        self,
        *,
        partition_index: int = 0,
        committed_offset: int = 0,
        committed_leader_epoch: int = -1,
        metadata: str | None = "",
        error_code: int = 0,
    ) -> None:
        self.partition_index = partition_index
        self.committed_offset = committed_offset
        self.committed_leader_epoch = committed_leader_epoch
        self.metadata = metadata
        self.error_code = error_code


class OffsetFetchResponseGroup(Message):
    """One entry per group (v8+)."""

    __slots__ = ("group_id", "topics", "error_code")

    group_id: str
    """Consumer group id."""
    topics: list[OffsetFetchResponseTopics]
    """The offsets, grouped by topic."""
    error_code: int
    """0, or a group-level error."""

    def __init__(
        self,
        *,
        group_id: str = "",
        topics: list[OffsetFetchResponseTopics] = MISSING,
        error_code: int = 0,
    ) -> None:
        self.group_id = group_id
        self.topics = [] if topics is MISSING else topics
        self.error_code = error_code


class OffsetFetchResponseTopics(Message):
    """The offsets, grouped by topic."""

    __slots__ = ("name", "partitions")

    name: str
    """Topic name."""
    partitions: list[OffsetFetchResponsePartitions]
    """One entry per partition."""

    def __init__(
        self, *, name: str = "", partitions: list[OffsetFetchResponsePartitions] = MISSING
    ) -> None:
        self.name = name
        self.partitions = [] if partitions is MISSING else partitions


class OffsetFetchResponsePartitions(Message):
    """One entry per partition."""

    __slots__ = (
        "partition_index",
        "committed_offset",
        "committed_leader_epoch",
        "metadata",
        "error_code",
    )

    partition_index: int
    """Partition index."""
    committed_offset: int
    """The committed offset, or -1 if none."""
    committed_leader_epoch: int
    """Leader epoch of the last consumed record, or -1."""
    metadata: str | None
    """Metadata committed with the offset, or null."""
    error_code: int
    """0, or the error (errors.py) for this entry."""

    def __init__(
        self,
        *,
        partition_index: int = 0,
        committed_offset: int = 0,
        committed_leader_epoch: int = -1,
        metadata: str | None = "",
        error_code: int = 0,
    ) -> None:
        self.partition_index = partition_index
        self.committed_offset = committed_offset
        self.committed_leader_epoch = committed_leader_epoch
        self.metadata = metadata
        self.error_code = error_code


# The schema the codecs are compiled from (nested structs first).
_OFFSET_FETCH_REQUEST_TOPIC = StructDef(
    "OffsetFetchRequestTopic",
    [Field("name", STRING, "0-7"), Field("partition_indexes", array(INT32), "0-7")],
    OffsetFetchRequestTopic,
)
_OFFSET_FETCH_REQUEST_TOPICS = StructDef(
    "OffsetFetchRequestTopics",
    [Field("name", STRING, "8+"), Field("partition_indexes", array(INT32), "8+")],
    OffsetFetchRequestTopics,
)
_OFFSET_FETCH_REQUEST_GROUP = StructDef(
    "OffsetFetchRequestGroup",
    [
        Field("group_id", STRING, "8+"),
        Field("member_id", STRING, "9+", nullable="9+", default=None, ignorable=True),
        Field("member_epoch", INT32, "9+", default=-1, ignorable=True),
        Field("topics", array(_OFFSET_FETCH_REQUEST_TOPICS), "8+", nullable="8+"),
    ],
    OffsetFetchRequestGroup,
)
_OFFSET_FETCH_REQUEST = StructDef(
    "OffsetFetchRequest",
    [
        Field("group_id", STRING, "0-7"),
        Field("topics", array(_OFFSET_FETCH_REQUEST_TOPIC), "0-7", nullable="2-7"),
        Field("groups", array(_OFFSET_FETCH_REQUEST_GROUP), "8+"),
        Field("require_stable", BOOL, "7+"),
    ],
    OffsetFetchRequest,
)
_OFFSET_FETCH_RESPONSE_PARTITION = StructDef(
    "OffsetFetchResponsePartition",
    [
        Field("partition_index", INT32, "0-7"),
        Field("committed_offset", INT64, "0-7"),
        Field("committed_leader_epoch", INT32, "5-7", default=-1, ignorable=True),
        Field("metadata", STRING, "0-7", nullable="0-7"),
        Field("error_code", INT16, "0-7"),
    ],
    OffsetFetchResponsePartition,
)
_OFFSET_FETCH_RESPONSE_TOPIC = StructDef(
    "OffsetFetchResponseTopic",
    [
        Field("name", STRING, "0-7"),
        Field("partitions", array(_OFFSET_FETCH_RESPONSE_PARTITION), "0-7"),
    ],
    OffsetFetchResponseTopic,
)
_OFFSET_FETCH_RESPONSE_PARTITIONS = StructDef(
    "OffsetFetchResponsePartitions",
    [
        Field("partition_index", INT32, "8+"),
        Field("committed_offset", INT64, "8+"),
        Field("committed_leader_epoch", INT32, "8+", default=-1, ignorable=True),
        Field("metadata", STRING, "8+", nullable="8+"),
        Field("error_code", INT16, "8+"),
    ],
    OffsetFetchResponsePartitions,
)
_OFFSET_FETCH_RESPONSE_TOPICS = StructDef(
    "OffsetFetchResponseTopics",
    [
        Field("name", STRING, "8+"),
        Field("partitions", array(_OFFSET_FETCH_RESPONSE_PARTITIONS), "8+"),
    ],
    OffsetFetchResponseTopics,
)
_OFFSET_FETCH_RESPONSE_GROUP = StructDef(
    "OffsetFetchResponseGroup",
    [
        Field("group_id", STRING, "8+"),
        Field("topics", array(_OFFSET_FETCH_RESPONSE_TOPICS), "8+"),
        Field("error_code", INT16, "8+"),
    ],
    OffsetFetchResponseGroup,
)
_OFFSET_FETCH_RESPONSE = StructDef(
    "OffsetFetchResponse",
    [
        Field("throttle_time_ms", INT32, "3+", ignorable=True),
        Field("topics", array(_OFFSET_FETCH_RESPONSE_TOPIC), "0-7"),
        Field("error_code", INT16, "2-7", ignorable=True),
        Field("groups", array(_OFFSET_FETCH_RESPONSE_GROUP), "8+"),
    ],
    OffsetFetchResponse,
)

OFFSET_FETCH: Api[OffsetFetchRequest, OffsetFetchResponse] = Api(
    9,
    "OffsetFetch",
    "0-9",
    "6+",
    _OFFSET_FETCH_REQUEST,
    _OFFSET_FETCH_RESPONSE,
    OffsetFetchRequest,
    OffsetFetchResponse,
)
"""OffsetFetch (key 9), versions 0-9."""
