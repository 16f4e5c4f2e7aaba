# Generated from kafka_async/protocol/definitions/alter_partition_reassignments.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""AlterPartitionReassignments: move partitions to other replicas, or cancel a move.

Versions 0-1, flexible 0+; checked against Kafka 4.1's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import BOOL, INT16, INT32, MISSING, STRING, Api, Field, Message, StructDef, array


class AlterPartitionReassignmentsRequest(Message):
    """The AlterPartitionReassignments request (key 45)."""

    __slots__ = ("timeout_ms", "allow_replication_factor_change", "topics")

    timeout_ms: int
    """How long the broker may take before it answers."""
    allow_replication_factor_change: bool
    """Allow a reassignment to change the replica count."""
    topics: list[ReassignableTopic]
    """The partitions to reassign, grouped by topic."""

    def __init__(
        self,
        *,
        timeout_ms: int = 60000,
        allow_replication_factor_change: bool = True,
        topics: list[ReassignableTopic] = MISSING,
    ) -> None:
        self.timeout_ms = timeout_ms
        self.allow_replication_factor_change = allow_replication_factor_change
        self.topics = [] if topics is MISSING else topics


class ReassignableTopic(Message):
    """The partitions to reassign, grouped by topic."""

    __slots__ = ("name", "partitions")

    name: str
    """Topic name."""
    partitions: list[ReassignablePartition]
    """The partitions of this topic."""

    def __init__(
        self, *, name: str = "", partitions: list[ReassignablePartition] = MISSING
    ) -> None:
        self.name = name
        self.partitions = [] if partitions is MISSING else partitions


class ReassignablePartition(Message):
    """The partitions of this topic."""

    __slots__ = ("partition_index", "replicas")

    partition_index: int
    """Partition index."""
    replicas: list[int] | None
    """The new replicas, or null to cancel a reassignment in progress."""

    def __init__(self, *, partition_index: int = 0, replicas: list[int] | None = None) -> None:
        self.partition_index = partition_index
        self.replicas = replicas


class AlterPartitionReassignmentsResponse(Message):
    """The AlterPartitionReassignments response (key 45)."""

    __slots__ = (
        "throttle_time_ms",
        "allow_replication_factor_change",
        "error_code",
        "error_message",
        "responses",
    )

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    allow_replication_factor_change: bool
    """Whether the replica count was allowed to change."""
    error_code: int
    """0, or a request-level error."""
    error_message: str | None
    """The broker's description of the error, or null."""
    responses: list[ReassignableTopicResponse]
    """The results, grouped by topic."""

    def __init__(
        self,
        *,
        throttle_time_ms: int = 0,
        allow_replication_factor_change: bool = True,
        error_code: int = 0,
        error_message: str | None = "",
        responses: list[ReassignableTopicResponse] = MISSING,
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.allow_replication_factor_change = allow_replication_factor_change
        self.error_code = error_code
        self.error_message = error_message
        self.responses = [] if responses is MISSING else responses


class ReassignableTopicResponse(Message):
    """The results, grouped by topic."""

    __slots__ = ("name", "partitions")

    name: str
    """Topic name."""
    partitions: list[ReassignablePartitionResponse]
    """One result per partition."""

    def __init__(
        self, *, name: str = "", partitions: list[ReassignablePartitionResponse] = MISSING
    ) -> None:
        self.name = name
        self.partitions = [] if partitions is MISSING else partitions


class ReassignablePartitionResponse(Message):
    """One result per partition."""

    __slots__ = ("partition_index", "error_code", "error_message")

    partition_index: int
    """Partition index."""
    error_code: int
    """0, or the error for this partition."""
    error_message: str | None
    """The broker's description of the error, or null."""

    def __init__(
        self, *, partition_index: int = 0, error_code: int = 0, error_message: str | None = ""
    ) -> None:
        self.partition_index = partition_index
        self.error_code = error_code
        self.error_message = error_message


# The schema the codecs are compiled from (nested structs first).
_REASSIGNABLE_PARTITION = StructDef(
    "ReassignablePartition",
    [Field("partition_index", INT32), Field("replicas", array(INT32), nullable="0+", default=None)],
    ReassignablePartition,
)
_REASSIGNABLE_TOPIC = StructDef(
    "ReassignableTopic",
    [Field("name", STRING), Field("partitions", array(_REASSIGNABLE_PARTITION))],
    ReassignableTopic,
)
_ALTER_PARTITION_REASSIGNMENTS_REQUEST = StructDef(
    "AlterPartitionReassignmentsRequest",
    [
        Field("timeout_ms", INT32, default=60000),
        Field("allow_replication_factor_change", BOOL, "1+", default=True),
        Field("topics", array(_REASSIGNABLE_TOPIC)),
    ],
    AlterPartitionReassignmentsRequest,
)
_REASSIGNABLE_PARTITION_RESPONSE = StructDef(
    "ReassignablePartitionResponse",
    [
        Field("partition_index", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),
    ],
    ReassignablePartitionResponse,
)
_REASSIGNABLE_TOPIC_RESPONSE = StructDef(
    "ReassignableTopicResponse",
    [Field("name", STRING), Field("partitions", array(_REASSIGNABLE_PARTITION_RESPONSE))],
    ReassignableTopicResponse,
)
_ALTER_PARTITION_REASSIGNMENTS_RESPONSE = StructDef(
    "AlterPartitionReassignmentsResponse",
    [
        Field("throttle_time_ms", INT32),
        Field("allow_replication_factor_change", BOOL, "1+", default=True, ignorable=True),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),
        Field("responses", array(_REASSIGNABLE_TOPIC_RESPONSE)),
    ],
    AlterPartitionReassignmentsResponse,
)

ALTER_PARTITION_REASSIGNMENTS: Api[
    AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse
] = Api(
    45,
    "AlterPartitionReassignments",
    "0-1",
    "0+",
    _ALTER_PARTITION_REASSIGNMENTS_REQUEST,
    _ALTER_PARTITION_REASSIGNMENTS_RESPONSE,
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
)
"""AlterPartitionReassignments (key 45), versions 0-1."""
