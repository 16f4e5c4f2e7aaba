# Generated from kafka_async/protocol/definitions/delete_share_group_offsets.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""DeleteShareGroupOffsets: remove an empty share group's state for whole topics (KIP-932).

Versions 0, flexible 0+; checked against Kafka 4.1's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

import uuid

from ..codec import ZERO_UUID
from ..schema import INT16, INT32, MISSING, STRING, UUID, Api, Field, Message, StructDef, array


class DeleteShareGroupOffsetsRequest(Message):
    """The DeleteShareGroupOffsets request (key 92)."""

    __slots__ = ("group_id", "topics")

    group_id: str
    """Group id."""
    topics: list[DeleteShareGroupOffsetsRequestTopic]
    """The topics whose share-partition state to delete."""

    def __init__(
        self, *, group_id: str = "", topics: list[DeleteShareGroupOffsetsRequestTopic] = MISSING
    ) -> None:
        self.group_id = group_id
        self.topics = [] if topics is MISSING else topics


class DeleteShareGroupOffsetsRequestTopic(Message):
    """The topics whose share-partition state to delete."""

    __slots__ = ("topic_name",)

    topic_name: str
    """Topic name."""

    def __init__(self, *, topic_name: str = "") -> None:
        self.topic_name = topic_name


class DeleteShareGroupOffsetsResponse(Message):
    """The DeleteShareGroupOffsets response (key 92)."""

    __slots__ = ("throttle_time_ms", "error_code", "error_message", "responses")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    error_code: int
    """0, or the error (errors.py) for the whole request."""
    error_message: str | None
    """The broker's description of the error, or null."""
    responses: list[DeleteShareGroupOffsetsResponseTopic]
    """Results by topic."""

    def __init__(
        self,
        *,
        throttle_time_ms: int = 0,
        error_code: int = 0,
        error_message: str | None = None,
        responses: list[DeleteShareGroupOffsetsResponseTopic] = MISSING,
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.error_code = error_code
        self.error_message = error_message
        self.responses = [] if responses is MISSING else responses


class DeleteShareGroupOffsetsResponseTopic(Message):
    """Results by topic."""

    __slots__ = ("topic_name", "topic_id", "error_code", "error_message")

    topic_name: str
    """Topic name."""
    topic_id: uuid.UUID
    """Topic id."""
    error_code: int
    """0, or the error (errors.py) for this topic."""
    error_message: str | None
    """The broker's description of the error, or null."""

    def __init__(
        self,
        *,
        topic_name: str = "",
        topic_id: uuid.UUID = ZERO_UUID,
        error_code: int = 0,
        error_message: str | None = None,
    ) -> None:
        self.topic_name = topic_name
        self.topic_id = topic_id
        self.error_code = error_code
        self.error_message = error_message


# The schema the codecs are compiled from (nested structs first).
_DELETE_SHARE_GROUP_OFFSETS_REQUEST_TOPIC = StructDef(
    "DeleteShareGroupOffsetsRequestTopic",
    [Field("topic_name", STRING)],
    DeleteShareGroupOffsetsRequestTopic,
)
_DELETE_SHARE_GROUP_OFFSETS_REQUEST = StructDef(
    "DeleteShareGroupOffsetsRequest",
    [Field("group_id", STRING), Field("topics", array(_DELETE_SHARE_GROUP_OFFSETS_REQUEST_TOPIC))],
    DeleteShareGroupOffsetsRequest,
)
_DELETE_SHARE_GROUP_OFFSETS_RESPONSE_TOPIC = StructDef(
    "DeleteShareGroupOffsetsResponseTopic",
    [
        Field("topic_name", STRING),
        Field("topic_id", UUID),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
    ],
    DeleteShareGroupOffsetsResponseTopic,
)
_DELETE_SHARE_GROUP_OFFSETS_RESPONSE = StructDef(
    "DeleteShareGroupOffsetsResponse",
    [
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field("responses", array(_DELETE_SHARE_GROUP_OFFSETS_RESPONSE_TOPIC)),
    ],
    DeleteShareGroupOffsetsResponse,
)

DELETE_SHARE_GROUP_OFFSETS: Api[DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponse] = (
    Api(
        92,
        "DeleteShareGroupOffsets",
        "0",
        "0+",
        _DELETE_SHARE_GROUP_OFFSETS_REQUEST,
        _DELETE_SHARE_GROUP_OFFSETS_RESPONSE,
        DeleteShareGroupOffsetsRequest,
        DeleteShareGroupOffsetsResponse,
    )
)
"""DeleteShareGroupOffsets (key 92), versions 0."""
