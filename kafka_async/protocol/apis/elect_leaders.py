# Generated from kafka_async/protocol/definitions/elect_leaders.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""ElectLeaders: elect the preferred (or an unclean) leader of partitions.

Versions 0-2, flexible 2+; checked against Kafka 4.1's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import INT8, INT16, INT32, MISSING, STRING, Api, Field, Message, StructDef, array


class ElectLeadersRequest(Message):
    """The ElectLeaders request (key 43)."""

    __slots__ = ("election_type", "topic_partitions", "timeout_ms")

    election_type: int
    """0 preferred leader, 1 unclean (any replica)."""
    topic_partitions: list[TopicPartitions] | None
    """The partitions, grouped by topic; null for every partition."""
    timeout_ms: int
    """How long the broker may take before it answers."""

    def __init__(
        self,
        *,
        election_type: int = 0,
        topic_partitions: list[TopicPartitions] | None = MISSING,
        timeout_ms: int = 60000,
    ) -> None:
        self.election_type = election_type
        self.topic_partitions = [] if topic_partitions is MISSING else topic_partitions
        self.timeout_ms = timeout_ms


class TopicPartitions(Message):
    """The partitions, grouped by topic; null for every partition."""

    __slots__ = ("topic", "partitions")

    topic: str
    """Topic name."""
    partitions: list[int]
    """Partition indexes."""

    def __init__(self, *, topic: str = "", partitions: list[int] = MISSING) -> None:
        self.topic = topic
        self.partitions = [] if partitions is MISSING else partitions


class ElectLeadersResponse(Message):
    """The ElectLeaders response (key 43)."""

    __slots__ = ("throttle_time_ms", "error_code", "replica_election_results")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    error_code: int
    """0, or a request-level error."""
    replica_election_results: list[ReplicaElectionResult]
    """The results, grouped by topic."""

    def __init__(
        self,
        *,
        throttle_time_ms: int = 0,
        error_code: int = 0,
        replica_election_results: list[ReplicaElectionResult] = MISSING,
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.error_code = error_code
        self.replica_election_results = (
            [] if replica_election_results is MISSING else replica_election_results
        )


class ReplicaElectionResult(Message):
    """The results, grouped by topic."""

    __slots__ = ("topic", "partition_result")

    topic: str
    """Topic name."""
    partition_result: list[PartitionResult]
    """One result per partition."""

    def __init__(
        self, *, topic: str = "", partition_result: list[PartitionResult] = MISSING
    ) -> None:
        self.topic = topic
        self.partition_result = [] if partition_result is MISSING else partition_result


class PartitionResult(Message):
    """One result per partition."""

    __slots__ = ("partition_id", "error_code", "error_message")

    partition_id: int
    """Partition index."""
    error_code: int
    """0, or the error for this partition."""
    error_message: str | None
    """The broker's description of the error, or null."""

    def __init__(
        self, *, partition_id: int = 0, error_code: int = 0, error_message: str | None = ""
    ) -> None:
        self.partition_id = partition_id
        self.error_code = error_code
        self.error_message = error_message


# The schema the codecs are compiled from (nested structs first).
_TOPIC_PARTITIONS = StructDef(
    "TopicPartitions", [Field("topic", STRING), Field("partitions", array(INT32))], TopicPartitions
)
_ELECT_LEADERS_REQUEST = StructDef(
    "ElectLeadersRequest",
    [
        Field("election_type", INT8, "1+"),
        Field("topic_partitions", array(_TOPIC_PARTITIONS), nullable="0+"),
        Field("timeout_ms", INT32, default=60000),
    ],
    ElectLeadersRequest,
)
_PARTITION_RESULT = StructDef(
    "PartitionResult",
    [
        Field("partition_id", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),
    ],
    PartitionResult,
)
_REPLICA_ELECTION_RESULT = StructDef(
    "ReplicaElectionResult",
    [Field("topic", STRING), Field("partition_result", array(_PARTITION_RESULT))],
    ReplicaElectionResult,
)
_ELECT_LEADERS_RESPONSE = StructDef(
    "ElectLeadersResponse",
    [
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16, "1+"),
        Field("replica_election_results", array(_REPLICA_ELECTION_RESULT)),
    ],
    ElectLeadersResponse,
)

ELECT_LEADERS: Api[ElectLeadersRequest, ElectLeadersResponse] = Api(
    43,
    "ElectLeaders",
    "0-2",
    "2+",
    _ELECT_LEADERS_REQUEST,
    _ELECT_LEADERS_RESPONSE,
    ElectLeadersRequest,
    ElectLeadersResponse,
)
"""ElectLeaders (key 43), versions 0-2."""
