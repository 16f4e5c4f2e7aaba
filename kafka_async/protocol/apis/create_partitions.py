# Generated from kafka_async/protocol/definitions/create_partitions.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""CreatePartitions: add partitions to topics.

Versions 0-3, flexible 2+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import BOOL, INT16, INT32, MISSING, STRING, Api, Field, Message, StructDef, array


class CreatePartitionsRequest(Message):
    """The CreatePartitions request (key 37)."""

    __slots__ = ("topics", "timeout_ms", "validate_only")

    topics: list[CreatePartitionsTopic]
    """The topics to grow."""
    timeout_ms: int
    """How long the broker may take before it answers."""
    validate_only: bool
    """Check the request without applying it."""

    def __init__(
        self,
        *,
        topics: list[CreatePartitionsTopic] = MISSING,
        timeout_ms: int = 0,
        validate_only: bool = False,
    ) -> None:
        self.topics = [] if topics is MISSING else topics
        self.timeout_ms = timeout_ms
        self.validate_only = validate_only


class CreatePartitionsTopic(Message):
    """The topics to grow."""

    __slots__ = ("name", "count", "assignments")

    name: str
    """Topic name."""
    count: int
    """The new partition count."""
    assignments: list[CreatePartitionsAssignment] | None
    """Replica placement of the new partitions, or null to let the broker place them."""

    def __init__(
        self,
        *,
        name: str = "",
        count: int = 0,
        assignments: list[CreatePartitionsAssignment] | None = MISSING,
    ) -> None:
        self.name = name
        self.count = count
        self.assignments = [] if assignments is MISSING else assignments


class CreatePartitionsAssignment(Message):
    """Replica placement of the new partitions, or null to let the broker place them."""

    __slots__ = ("broker_ids",)

    broker_ids: list[int]
    """Broker ids of the replicas of one new partition."""

    def __init__(self, *, broker_ids: list[int] = MISSING) -> None:
        self.broker_ids = [] if broker_ids is MISSING else broker_ids


class CreatePartitionsResponse(Message):
    """The CreatePartitions response (key 37)."""

    __slots__ = ("throttle_time_ms", "results")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    results: list[CreatePartitionsTopicResult]
    """One result per topic."""

    def __init__(
        self, *, throttle_time_ms: int = 0, results: list[CreatePartitionsTopicResult] = MISSING
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.results = [] if results is MISSING else results


class CreatePartitionsTopicResult(Message):
    """One result per topic."""

    __slots__ = ("name", "error_code", "error_message")

    name: str
    """Topic name."""
    error_code: int
    """0, or the error (errors.py) for this entry."""
    error_message: str | None
    """The broker's description of the error, or null."""

    def __init__(
        self, *, name: str = "", error_code: int = 0, error_message: str | None = None
    ) -> None:
        self.name = name
        self.error_code = error_code
        self.error_message = error_message


# The schema the codecs are compiled from (nested structs first).
_CREATE_PARTITIONS_ASSIGNMENT = StructDef(
    "CreatePartitionsAssignment", [Field("broker_ids", array(INT32))], CreatePartitionsAssignment
)
_CREATE_PARTITIONS_TOPIC = StructDef(
    "CreatePartitionsTopic",
    [
        Field("name", STRING),
        Field("count", INT32),
        Field("assignments", array(_CREATE_PARTITIONS_ASSIGNMENT), nullable="0+"),
    ],
    CreatePartitionsTopic,
)
_CREATE_PARTITIONS_REQUEST = StructDef(
    "CreatePartitionsRequest",
    [
        Field("topics", array(_CREATE_PARTITIONS_TOPIC)),
        Field("timeout_ms", INT32),
        Field("validate_only", BOOL),
    ],
    CreatePartitionsRequest,
)
_CREATE_PARTITIONS_TOPIC_RESULT = StructDef(
    "CreatePartitionsTopicResult",
    [
        Field("name", STRING),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
    ],
    CreatePartitionsTopicResult,
)
_CREATE_PARTITIONS_RESPONSE = StructDef(
    "CreatePartitionsResponse",
    [Field("throttle_time_ms", INT32), Field("results", array(_CREATE_PARTITIONS_TOPIC_RESULT))],
    CreatePartitionsResponse,
)

CREATE_PARTITIONS: Api[CreatePartitionsRequest, CreatePartitionsResponse] = Api(
    37,
    "CreatePartitions",
    "0-3",
    "2+",
    _CREATE_PARTITIONS_REQUEST,
    _CREATE_PARTITIONS_RESPONSE,
    CreatePartitionsRequest,
    CreatePartitionsResponse,
)
"""CreatePartitions (key 37), versions 0-3."""
