# Generated from kafka_async/protocol/definitions/create_topics.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""CreateTopics: create topics.

Versions 0-7, flexible 5+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

import uuid

from ..codec import ZERO_UUID
from ..schema import (
    BOOL,
    INT8,
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


class CreateTopicsRequest(Message):
    """The CreateTopics request (key 19)."""

    __slots__ = ("topics", "timeout_ms", "validate_only")

    topics: list[CreatableTopic]
    """The topics to create."""
    timeout_ms: int
    """How long the broker may take before it answers."""
    validate_only: bool
    """Check the request without applying it."""

    def __init__(
        self,
        *,
        topics: list[CreatableTopic] = MISSING,
        timeout_ms: int = 60000,
        validate_only: bool = False,
    ) -> None:
        self.topics = [] if topics is MISSING else topics
        self.timeout_ms = timeout_ms
        self.validate_only = validate_only


class CreatableTopic(Message):
    """The topics to create."""

    __slots__ = ("name", "num_partitions", "replication_factor", "assignments", "configs")

    name: str
    """Topic name."""
    num_partitions: int
    """Partition count, or -1 for the broker default."""
    replication_factor: int
    """Replication factor, or -1 for the broker default."""
    assignments: list[CreatableReplicaAssignment]
    """Manual replica placement, or empty to let the broker place them."""
    configs: list[CreatableTopicConfig]
    """Topic configs to set."""

    def __init__(
        self,
        *,
        name: str = "",
        num_partitions: int = 0,
        replication_factor: int = 0,
        assignments: list[CreatableReplicaAssignment] = MISSING,
        configs: list[CreatableTopicConfig] = MISSING,
    ) -> None:
        self.name = name
        self.num_partitions = num_partitions
        self.replication_factor = replication_factor
        self.assignments = [] if assignments is MISSING else assignments
        self.configs = [] if configs is MISSING else configs


class CreatableReplicaAssignment(Message):
    """Manual replica placement, or empty to let the broker place them."""

    __slots__ = ("partition_index", "broker_ids")

    partition_index: int
    """Partition index."""
    broker_ids: list[int]
    """Broker ids of the replicas, preferred leader first."""

    def __init__(self, *, partition_index: int = 0, broker_ids: list[int] = MISSING) -> None:
        self.partition_index = partition_index
        self.broker_ids = [] if broker_ids is MISSING else broker_ids


class CreatableTopicConfig(Message):
    """Topic configs to set."""

    __slots__ = ("name", "value")

    name: str
    """Config name."""
    value: str | None
    """Config value, or null."""

    def __init__(self, *, name: str = "", value: str | None = "") -> None:
        self.name = name
        self.value = value


class CreateTopicsResponse(Message):
    """The CreateTopics response (key 19)."""

    __slots__ = ("throttle_time_ms", "topics")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    topics: list[CreatableTopicResult]
    """One result per topic."""

    def __init__(
        self, *, throttle_time_ms: int = 0, topics: list[CreatableTopicResult] = MISSING
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.topics = [] if topics is MISSING else topics


class CreatableTopicResult(Message):
    """One result per topic."""

    __slots__ = (
        "name",
        "topic_id",
        "error_code",
        "error_message",
        "topic_config_error_code",
        "num_partitions",
        "replication_factor",
        "configs",
    )

    name: str
    """Topic name."""
    topic_id: uuid.UUID
    """The topic's UUID (zero when the topic is named instead)."""
    error_code: int
    """0, or the error (errors.py) for this entry."""
    error_message: str | None
    """The broker's description of the error, or null."""
    topic_config_error_code: int
    """Why the configs below are missing (KIP-525), or 0."""
    num_partitions: int
    """Partition count, or -1."""
    replication_factor: int
    """Replication factor, or -1."""
    configs: list[CreatableTopicConfigs] | None
    """The topic's configs (KIP-525)."""

    def __init__(
        self,
        *,
        name: str = "",
        topic_id: uuid.UUID = ZERO_UUID,
        error_code: int = 0,
        error_message: str | None = "",
        topic_config_error_code: int = 0,
        num_partitions: int = -1,
        replication_factor: int = -1,
        configs: list[CreatableTopicConfigs] | None = MISSING,
    ) -> None:
        self.name = name
        self.topic_id = topic_id
        self.error_code = error_code
        self.error_message = error_message
        self.topic_config_error_code = topic_config_error_code
        self.num_partitions = num_partitions
        self.replication_factor = replication_factor
        self.configs = [] if configs is MISSING else configs


class CreatableTopicConfigs(Message):
    """The topic's configs (KIP-525)."""

    __slots__ = ("name", "value", "read_only", "config_source", "is_sensitive")

    name: str
    """Config name."""
    value: str | None
    """Config value, or null."""
    read_only: bool
    """Whether the config cannot be changed."""
    config_source: int
    """Where the value comes from (dynamic topic, broker, default, ...)."""
    is_sensitive: bool
    """Whether the value is hidden (a password or key)."""

    def __init__(
        self,
        *,
        name: str = "",
        value: str | None = "",
        read_only: bool = False,
        config_source: int = -1,
        is_sensitive: bool = False,
    ) -> None:
        self.name = name
        self.value = value
        self.read_only = read_only
        self.config_source = config_source
        self.is_sensitive = is_sensitive


# The schema the codecs are compiled from (nested structs first).
_CREATABLE_REPLICA_ASSIGNMENT = StructDef(
    "CreatableReplicaAssignment",
    [Field("partition_index", INT32), Field("broker_ids", array(INT32))],
    CreatableReplicaAssignment,
)
_CREATABLE_TOPIC_CONFIG = StructDef(
    "CreatableTopicConfig",
    [Field("name", STRING), Field("value", STRING, nullable="0+")],
    CreatableTopicConfig,
)
_CREATABLE_TOPIC = StructDef(
    "CreatableTopic",
    [
        Field("name", STRING),
        Field("num_partitions", INT32),
        Field("replication_factor", INT16),
        Field("assignments", array(_CREATABLE_REPLICA_ASSIGNMENT)),
        Field("configs", array(_CREATABLE_TOPIC_CONFIG)),
    ],
    CreatableTopic,
)
_CREATE_TOPICS_REQUEST = StructDef(
    "CreateTopicsRequest",
    [
        Field("topics", array(_CREATABLE_TOPIC)),
        Field("timeout_ms", INT32, default=60000),
        Field("validate_only", BOOL, "1+"),
    ],
    CreateTopicsRequest,
)
_CREATABLE_TOPIC_CONFIGS = StructDef(
    "CreatableTopicConfigs",
    [
        Field("name", STRING, "5+"),
        Field("value", STRING, "5+", nullable="5+"),
        Field("read_only", BOOL, "5+"),
        Field("config_source", INT8, "5+", default=-1, ignorable=True),
        Field("is_sensitive", BOOL, "5+"),
    ],
    CreatableTopicConfigs,
)
_CREATABLE_TOPIC_RESULT = StructDef(
    "CreatableTopicResult",
    [
        Field("name", STRING),
        Field("topic_id", UUID, "7+", ignorable=True),
        Field("error_code", INT16),
        Field("error_message", STRING, "1+", nullable="0+", ignorable=True),
        Field("topic_config_error_code", INT16, "5+", ignorable=True, tag=0),
        Field("num_partitions", INT32, "5+", default=-1, ignorable=True),
        Field("replication_factor", INT16, "5+", default=-1, ignorable=True),
        Field("configs", array(_CREATABLE_TOPIC_CONFIGS), "5+", nullable="5+", ignorable=True),
    ],
    CreatableTopicResult,
)
_CREATE_TOPICS_RESPONSE = StructDef(
    "CreateTopicsResponse",
    [
        Field("throttle_time_ms", INT32, "2+", ignorable=True),
        Field("topics", array(_CREATABLE_TOPIC_RESULT)),
    ],
    CreateTopicsResponse,
)

CREATE_TOPICS: Api[CreateTopicsRequest, CreateTopicsResponse] = Api(
    19,
    "CreateTopics",
    "0-7",
    "5+",
    _CREATE_TOPICS_REQUEST,
    _CREATE_TOPICS_RESPONSE,
    CreateTopicsRequest,
    CreateTopicsResponse,
)
"""CreateTopics (key 19), versions 0-7."""
