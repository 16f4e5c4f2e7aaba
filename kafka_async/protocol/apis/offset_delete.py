# Generated from kafka_async/protocol/definitions/offset_delete.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""OffsetDelete: delete a group's committed offsets for some partitions.

Versions 0, flexible none; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import INT16, INT32, MISSING, STRING, Api, Field, Message, StructDef, array


class OffsetDeleteRequest(Message):
    """The OffsetDelete request (key 47)."""

    __slots__ = ("group_id", "topics")

    group_id: str
    """Consumer group id."""
    topics: list[OffsetDeleteRequestTopic]
    """The partitions whose offsets to delete, grouped by topic."""

    def __init__(
        self, *, group_id: str = "", topics: list[OffsetDeleteRequestTopic] = MISSING
    ) -> None:
        self.group_id = group_id
        self.topics = [] if topics is MISSING else topics


class OffsetDeleteRequestTopic(Message):
    """The partitions whose offsets to delete, grouped by topic."""

    __slots__ = ("name", "partitions")

    name: str
    """Topic name."""
    partitions: list[OffsetDeleteRequestPartition]
    """The partitions of this topic."""

    def __init__(
        self, *, name: str = "", partitions: list[OffsetDeleteRequestPartition] = MISSING
    ) -> None:
        self.name = name
        self.partitions = [] if partitions is MISSING else partitions


class OffsetDeleteRequestPartition(Message):
    """The partitions of this topic."""

    __slots__ = ("partition_index",)

    partition_index: int
    """Partition index."""

    def __init__(self, *, partition_index: int = 0) -> None:
        self.partition_index = partition_index


class OffsetDeleteResponse(Message):
    """The OffsetDelete response (key 47)."""

    __slots__ = ("error_code", "throttle_time_ms", "topics")

    error_code: int
    """0, or a group-level error."""
    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    topics: list[OffsetDeleteResponseTopic]
    """The results, grouped by topic."""

    def __init__(
        self,
        *,
        error_code: int = 0,
        throttle_time_ms: int = 0,
        topics: list[OffsetDeleteResponseTopic] = MISSING,
    ) -> None:
        self.error_code = error_code
        self.throttle_time_ms = throttle_time_ms
        self.topics = [] if topics is MISSING else topics


class OffsetDeleteResponseTopic(Message):
    """The results, grouped by topic."""

    __slots__ = ("name", "partitions")

    name: str
    """Topic name."""
    partitions: list[OffsetDeleteResponsePartition]
    """One result per partition."""

    def __init__(
        self, *, name: str = "", partitions: list[OffsetDeleteResponsePartition] = MISSING
    ) -> None:
        self.name = name
        self.partitions = [] if partitions is MISSING else partitions


class OffsetDeleteResponsePartition(Message):
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
_OFFSET_DELETE_REQUEST_PARTITION = StructDef(
    "OffsetDeleteRequestPartition", [Field("partition_index", INT32)], OffsetDeleteRequestPartition
)
_OFFSET_DELETE_REQUEST_TOPIC = StructDef(
    "OffsetDeleteRequestTopic",
    [Field("name", STRING), Field("partitions", array(_OFFSET_DELETE_REQUEST_PARTITION))],
    OffsetDeleteRequestTopic,
)
_OFFSET_DELETE_REQUEST = StructDef(
    "OffsetDeleteRequest",
    [Field("group_id", STRING), Field("topics", array(_OFFSET_DELETE_REQUEST_TOPIC))],
    OffsetDeleteRequest,
)
_OFFSET_DELETE_RESPONSE_PARTITION = StructDef(
    "OffsetDeleteResponsePartition",
    [Field("partition_index", INT32), Field("error_code", INT16)],
    OffsetDeleteResponsePartition,
)
_OFFSET_DELETE_RESPONSE_TOPIC = StructDef(
    "OffsetDeleteResponseTopic",
    [Field("name", STRING), Field("partitions", array(_OFFSET_DELETE_RESPONSE_PARTITION))],
    OffsetDeleteResponseTopic,
)
_OFFSET_DELETE_RESPONSE = StructDef(
    "OffsetDeleteResponse",
    [
        Field("error_code", INT16),
        Field("throttle_time_ms", INT32, ignorable=True),
        Field("topics", array(_OFFSET_DELETE_RESPONSE_TOPIC)),
    ],
    OffsetDeleteResponse,
)

OFFSET_DELETE: Api[OffsetDeleteRequest, OffsetDeleteResponse] = Api(
    47,
    "OffsetDelete",
    "0",
    "none",
    _OFFSET_DELETE_REQUEST,
    _OFFSET_DELETE_RESPONSE,
    OffsetDeleteRequest,
    OffsetDeleteResponse,
)
"""OffsetDelete (key 47), versions 0."""
