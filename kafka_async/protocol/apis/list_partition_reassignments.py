# Generated from kafka_async/protocol/definitions/list_partition_reassignments.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""ListPartitionReassignments: the partition moves the controller is carrying out.

Versions 0, flexible 0+; checked against Kafka 4.1's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import INT16, INT32, MISSING, STRING, Api, Field, Message, StructDef, array


class ListPartitionReassignmentsRequest(Message):
    """The ListPartitionReassignments request (key 46)."""

    __slots__ = ("timeout_ms", "topics")

    timeout_ms: int
    """How long the broker may take before it answers."""
    topics: list[ListPartitionReassignmentsTopics] | None
    """The partitions to ask about, grouped by topic; null for every ongoing move."""

    def __init__(
        self,
        *,
        timeout_ms: int = 60000,
        topics: list[ListPartitionReassignmentsTopics] | None = None,
    ) -> None:
        self.timeout_ms = timeout_ms
        self.topics = topics


class ListPartitionReassignmentsTopics(Message):
    """The partitions to ask about, grouped by topic; null for every ongoing move."""

    __slots__ = ("name", "partition_indexes")

    name: str
    """Topic name."""
    partition_indexes: list[int]
    """Partition indexes."""

    def __init__(self, *, name: str = "", partition_indexes: list[int] = MISSING) -> None:
        self.name = name
        self.partition_indexes = [] if partition_indexes is MISSING else partition_indexes


class ListPartitionReassignmentsResponse(Message):
    """The ListPartitionReassignments response (key 46)."""

    __slots__ = ("throttle_time_ms", "error_code", "error_message", "topics")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    error_code: int
    """0, or a request-level error."""
    error_message: str | None
    """The broker's description of the error, or null."""
    topics: list[OngoingTopicReassignment]
    """The ongoing moves, grouped by topic."""

    def __init__(
        self,
        *,
        throttle_time_ms: int = 0,
        error_code: int = 0,
        error_message: str | None = "",
        topics: list[OngoingTopicReassignment] = MISSING,
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.error_code = error_code
        self.error_message = error_message
        self.topics = [] if topics is MISSING else topics


class OngoingTopicReassignment(Message):
    """The ongoing moves, grouped by topic."""

    __slots__ = ("name", "partitions")

    name: str
    """Topic name."""
    partitions: list[OngoingPartitionReassignment]
    """One entry per partition being moved."""

    def __init__(
        self, *, name: str = "", partitions: list[OngoingPartitionReassignment] = MISSING
    ) -> None:
        self.name = name
        self.partitions = [] if partitions is MISSING else partitions


class OngoingPartitionReassignment(Message):
    """One entry per partition being moved."""

    __slots__ = ("partition_index", "replicas", "adding_replicas", "removing_replicas")

    partition_index: int
    """Partition index."""
    replicas: list[int]
    """The replica set now (old and new replicas while the move runs)."""
    adding_replicas: list[int]
    """Replicas being added."""
    removing_replicas: list[int]
    """Replicas being removed."""

    def __init__(
        self,
        *,
        partition_index: int = 0,
        replicas: list[int] = MISSING,
        adding_replicas: list[int] = MISSING,
        removing_replicas: list[int] = MISSING,
    ) -> None:
        self.partition_index = partition_index
        self.replicas = [] if replicas is MISSING else replicas
        self.adding_replicas = [] if adding_replicas is MISSING else adding_replicas
        self.removing_replicas = [] if removing_replicas is MISSING else removing_replicas


# The schema the codecs are compiled from (nested structs first).
_LIST_PARTITION_REASSIGNMENTS_TOPICS = StructDef(
    "ListPartitionReassignmentsTopics",
    [Field("name", STRING), Field("partition_indexes", array(INT32))],
    ListPartitionReassignmentsTopics,
)
_LIST_PARTITION_REASSIGNMENTS_REQUEST = StructDef(
    "ListPartitionReassignmentsRequest",
    [
        Field("timeout_ms", INT32, default=60000),
        Field("topics", array(_LIST_PARTITION_REASSIGNMENTS_TOPICS), nullable="0+", default=None),
    ],
    ListPartitionReassignmentsRequest,
)
_ONGOING_PARTITION_REASSIGNMENT = StructDef(
    "OngoingPartitionReassignment",
    [
        Field("partition_index", INT32),
        Field("replicas", array(INT32)),
        Field("adding_replicas", array(INT32)),
        Field("removing_replicas", array(INT32)),
    ],
    OngoingPartitionReassignment,
)
_ONGOING_TOPIC_REASSIGNMENT = StructDef(
    "OngoingTopicReassignment",
    [Field("name", STRING), Field("partitions", array(_ONGOING_PARTITION_REASSIGNMENT))],
    OngoingTopicReassignment,
)
_LIST_PARTITION_REASSIGNMENTS_RESPONSE = StructDef(
    "ListPartitionReassignmentsResponse",
    [
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),
        Field("topics", array(_ONGOING_TOPIC_REASSIGNMENT)),
    ],
    ListPartitionReassignmentsResponse,
)

LIST_PARTITION_REASSIGNMENTS: Api[
    ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse
] = Api(
    46,
    "ListPartitionReassignments",
    "0",
    "0+",
    _LIST_PARTITION_REASSIGNMENTS_REQUEST,
    _LIST_PARTITION_REASSIGNMENTS_RESPONSE,
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
)
"""ListPartitionReassignments (key 46), versions 0."""
