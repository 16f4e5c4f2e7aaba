# Generated from kafka_async/protocol/definitions/delete_topics.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""DeleteTopics: delete topics.

Versions 0-6, flexible 4+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

import uuid

from ..codec import ZERO_UUID
from ..schema import INT16, INT32, MISSING, STRING, UUID, Api, Field, Message, StructDef, array


class DeleteTopicsRequest(Message):
    """The DeleteTopics request (key 20)."""

    __slots__ = ("topics", "topic_names", "timeout_ms")

    topics: list[DeleteTopicState]
    """The topics to delete, by name or id (v6+)."""
    topic_names: list[str]
    """The topics to delete (up to v5)."""
    timeout_ms: int
    """How long the broker may take before it answers."""

    def __init__(
        self,
        *,
        topics: list[DeleteTopicState] = MISSING,
        topic_names: list[str] = MISSING,
        timeout_ms: int = 0,
    ) -> None:
        self.topics = [] if topics is MISSING else topics
        self.topic_names = [] if topic_names is MISSING else topic_names
        self.timeout_ms = timeout_ms


class DeleteTopicState(Message):
    """The topics to delete, by name or id (v6+)."""

    __slots__ = ("name", "topic_id")

    name: str | None
    """Topic name, or null to name it by id."""
    topic_id: uuid.UUID
    """The topic's UUID (zero when the topic is named instead)."""

    def __init__(self, *, name: str | None = None, topic_id: uuid.UUID = ZERO_UUID) -> None:
        self.name = name
        self.topic_id = topic_id


class DeleteTopicsResponse(Message):
    """The DeleteTopics response (key 20)."""

    __slots__ = ("throttle_time_ms", "responses")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    responses: list[DeletableTopicResult]
    """One result per topic."""

    def __init__(
        self, *, throttle_time_ms: int = 0, responses: list[DeletableTopicResult] = MISSING
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.responses = [] if responses is MISSING else responses


class DeletableTopicResult(Message):
    """One result per topic."""

    __slots__ = ("name", "topic_id", "error_code", "error_message")

    name: str | None
    """Topic name, or null."""
    topic_id: uuid.UUID
    """The topic's UUID (zero when the topic is named instead)."""
    error_code: int
    """0, or the error (errors.py) for this entry."""
    error_message: str | None
    """The broker's description of the error, or null."""

    def __init__(
        self,
        *,
        name: str | None = "",
        topic_id: uuid.UUID = ZERO_UUID,
        error_code: int = 0,
        error_message: str | None = None,
    ) -> None:
        self.name = name
        self.topic_id = topic_id
        self.error_code = error_code
        self.error_message = error_message


# The schema the codecs are compiled from (nested structs first).
_DELETE_TOPIC_STATE = StructDef(
    "DeleteTopicState",
    [Field("name", STRING, "6+", nullable="6+", default=None), Field("topic_id", UUID, "6+")],
    DeleteTopicState,
)
_DELETE_TOPICS_REQUEST = StructDef(
    "DeleteTopicsRequest",
    [
        Field("topics", array(_DELETE_TOPIC_STATE), "6+"),
        Field("topic_names", array(STRING), "0-5", ignorable=True),
        Field("timeout_ms", INT32),
    ],
    DeleteTopicsRequest,
)
_DELETABLE_TOPIC_RESULT = StructDef(
    "DeletableTopicResult",
    [
        Field("name", STRING, nullable="6+"),
        Field("topic_id", UUID, "6+", ignorable=True),
        Field("error_code", INT16),
        Field("error_message", STRING, "5+", nullable="5+", default=None, ignorable=True),
    ],
    DeletableTopicResult,
)
_DELETE_TOPICS_RESPONSE = StructDef(
    "DeleteTopicsResponse",
    [
        Field("throttle_time_ms", INT32, "1+", ignorable=True),
        Field("responses", array(_DELETABLE_TOPIC_RESULT)),
    ],
    DeleteTopicsResponse,
)

DELETE_TOPICS: Api[DeleteTopicsRequest, DeleteTopicsResponse] = Api(
    20,
    "DeleteTopics",
    "0-6",
    "4+",
    _DELETE_TOPICS_REQUEST,
    _DELETE_TOPICS_RESPONSE,
    DeleteTopicsRequest,
    DeleteTopicsResponse,
)
"""DeleteTopics (key 20), versions 0-6."""
