# Generated from kafka_async/protocol/definitions/alter_share_group_offsets.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""AlterShareGroupOffsets: set the start offsets of an empty share group's share-partitions
(KIP-932).

Versions 0, flexible 0+; checked against Kafka 4.1's
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


class AlterShareGroupOffsetsRequest(Message):
    """The AlterShareGroupOffsets request (key 91)."""

    __slots__ = ("group_id", "topics")

    group_id: str
    """Group id."""
    topics: list[AlterShareGroupOffsetsRequestTopic]
    """The new start offsets by topic."""

    def __init__(
        self, *, group_id: str = "", topics: list[AlterShareGroupOffsetsRequestTopic] = MISSING
    ) -> None:
        self.group_id = group_id
        self.topics = [] if topics is MISSING else topics


class AlterShareGroupOffsetsRequestTopic(Message):
    """The new start offsets by topic."""

    __slots__ = ("topic_name", "partitions")

    topic_name: str
    """Topic name."""
    partitions: list[AlterShareGroupOffsetsRequestPartition]
    """The new start offsets by partition."""

    def __init__(
        self,
        *,
        topic_name: str = "",
        partitions: list[AlterShareGroupOffsetsRequestPartition] = MISSING,
    ) -> None:
        self.topic_name = topic_name
        self.partitions = [] if partitions is MISSING else partitions


class AlterShareGroupOffsetsRequestPartition(Message):
    """The new start offsets by partition."""

    __slots__ = ("partition_index", "start_offset")

    partition_index: int
    """Partition index."""
    start_offset: int
    """The new start offset."""

    def __init__(self, *, partition_index: int = 0, start_offset: int = 0) -> None:
        self.partition_index = partition_index
        self.start_offset = start_offset


class AlterShareGroupOffsetsResponse(Message):
    """The AlterShareGroupOffsets response (key 91)."""

    __slots__ = ("throttle_time_ms", "error_code", "error_message", "responses")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    error_code: int
    """0, or the error (errors.py) for the whole request."""
    error_message: str | None
    """The broker's description of the error, or null."""
    responses: list[AlterShareGroupOffsetsResponseTopic]
    """Results by topic."""

    def __init__(
        self,
        *,
        throttle_time_ms: int = 0,
        error_code: int = 0,
        error_message: str | None = None,
        responses: list[AlterShareGroupOffsetsResponseTopic] = MISSING,
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.error_code = error_code
        self.error_message = error_message
        self.responses = [] if responses is MISSING else responses


class AlterShareGroupOffsetsResponseTopic(Message):
    """Results by topic."""

    __slots__ = ("topic_name", "topic_id", "partitions")

    topic_name: str
    """Topic name."""
    topic_id: uuid.UUID
    """Topic id."""
    partitions: list[AlterShareGroupOffsetsResponsePartition]
    """Results by partition."""

    def __init__(
        self,
        *,
        topic_name: str = "",
        topic_id: uuid.UUID = ZERO_UUID,
        partitions: list[AlterShareGroupOffsetsResponsePartition] = MISSING,
    ) -> None:
        self.topic_name = topic_name
        self.topic_id = topic_id
        self.partitions = [] if partitions is MISSING else partitions


class AlterShareGroupOffsetsResponsePartition(Message):
    """Results by partition."""

    __slots__ = ("partition_index", "error_code", "error_message")

    partition_index: int
    """Partition index."""
    error_code: int
    """0, or the error (errors.py) for this partition."""
    error_message: str | None
    """The broker's description of the error, or null."""

    def __init__(
        self, *, partition_index: int = 0, error_code: int = 0, error_message: str | None = None
    ) -> None:
        self.partition_index = partition_index
        self.error_code = error_code
        self.error_message = error_message


# The schema the codecs are compiled from (nested structs first).
_ALTER_SHARE_GROUP_OFFSETS_REQUEST_PARTITION = StructDef(
    "AlterShareGroupOffsetsRequestPartition",
    [Field("partition_index", INT32), Field("start_offset", INT64)],
    AlterShareGroupOffsetsRequestPartition,
)
_ALTER_SHARE_GROUP_OFFSETS_REQUEST_TOPIC = StructDef(
    "AlterShareGroupOffsetsRequestTopic",
    [
        Field("topic_name", STRING),
        Field("partitions", array(_ALTER_SHARE_GROUP_OFFSETS_REQUEST_PARTITION)),
    ],
    AlterShareGroupOffsetsRequestTopic,
)
_ALTER_SHARE_GROUP_OFFSETS_REQUEST = StructDef(
    "AlterShareGroupOffsetsRequest",
    [Field("group_id", STRING), Field("topics", array(_ALTER_SHARE_GROUP_OFFSETS_REQUEST_TOPIC))],
    AlterShareGroupOffsetsRequest,
)
_ALTER_SHARE_GROUP_OFFSETS_RESPONSE_PARTITION = StructDef(
    "AlterShareGroupOffsetsResponsePartition",
    [
        Field("partition_index", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
    ],
    AlterShareGroupOffsetsResponsePartition,
)
_ALTER_SHARE_GROUP_OFFSETS_RESPONSE_TOPIC = StructDef(
    "AlterShareGroupOffsetsResponseTopic",
    [
        Field("topic_name", STRING),
        Field("topic_id", UUID),
        Field("partitions", array(_ALTER_SHARE_GROUP_OFFSETS_RESPONSE_PARTITION)),
    ],
    AlterShareGroupOffsetsResponseTopic,
)
_ALTER_SHARE_GROUP_OFFSETS_RESPONSE = StructDef(
    "AlterShareGroupOffsetsResponse",
    [
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field("responses", array(_ALTER_SHARE_GROUP_OFFSETS_RESPONSE_TOPIC)),
    ],
    AlterShareGroupOffsetsResponse,
)

ALTER_SHARE_GROUP_OFFSETS: Api[AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponse] = Api(
    91,
    "AlterShareGroupOffsets",
    "0",
    "0+",
    _ALTER_SHARE_GROUP_OFFSETS_REQUEST,
    _ALTER_SHARE_GROUP_OFFSETS_RESPONSE,
    AlterShareGroupOffsetsRequest,
    AlterShareGroupOffsetsResponse,
)
"""AlterShareGroupOffsets (key 91), versions 0."""
