# Generated from kafka_async/protocol/definitions/describe_producers.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""DescribeProducers: the producers with state on partitions (for hanging transactions).

Versions 0, flexible 0+; checked against Kafka 4.1's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import INT16, INT32, INT64, MISSING, STRING, Api, Field, Message, StructDef, array


class DescribeProducersRequest(Message):
    """The DescribeProducers request (key 61)."""

    __slots__ = ("topics",)

    topics: list[TopicRequest]
    """The partitions to describe, grouped by topic."""

    def __init__(self, *, topics: list[TopicRequest] = MISSING) -> None:
        self.topics = [] if topics is MISSING else topics


class TopicRequest(Message):
    """The partitions to describe, grouped by topic."""

    __slots__ = ("name", "partition_indexes")

    name: str
    """Topic name."""
    partition_indexes: list[int]
    """Partition indexes."""

    def __init__(self, *, name: str = "", partition_indexes: list[int] = MISSING) -> None:
        self.name = name
        self.partition_indexes = [] if partition_indexes is MISSING else partition_indexes


class DescribeProducersResponse(Message):
    """The DescribeProducers response (key 61)."""

    __slots__ = ("throttle_time_ms", "topics")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    topics: list[TopicResponse]
    """The results, grouped by topic."""

    def __init__(self, *, throttle_time_ms: int = 0, topics: list[TopicResponse] = MISSING) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.topics = [] if topics is MISSING else topics


class TopicResponse(Message):
    """The results, grouped by topic."""

    __slots__ = ("name", "partitions")

    name: str
    """Topic name."""
    partitions: list[PartitionResponse]
    """One entry per partition."""

    def __init__(self, *, name: str = "", partitions: list[PartitionResponse] = MISSING) -> None:
        self.name = name
        self.partitions = [] if partitions is MISSING else partitions


class PartitionResponse(Message):
    """One entry per partition."""

    __slots__ = ("partition_index", "error_code", "error_message", "active_producers")

    partition_index: int
    """Partition index."""
    error_code: int
    """0, or the error for this partition."""
    error_message: str | None
    """The broker's description of the error, or null."""
    active_producers: list[ProducerState]
    """The producers with state on this partition."""

    def __init__(
        self,
        *,
        partition_index: int = 0,
        error_code: int = 0,
        error_message: str | None = None,
        active_producers: list[ProducerState] = MISSING,
    ) -> None:
        self.partition_index = partition_index
        self.error_code = error_code
        self.error_message = error_message
        self.active_producers = [] if active_producers is MISSING else active_producers


class ProducerState(Message):
    """The producers with state on this partition."""

    __slots__ = (
        "producer_id",
        "producer_epoch",
        "last_sequence",
        "last_timestamp",
        "coordinator_epoch",
        "current_txn_start_offset",
    )

    producer_id: int
    """Producer id."""
    producer_epoch: int
    """Producer epoch."""
    last_sequence: int
    """Last sequence number written, or -1."""
    last_timestamp: int
    """Timestamp of the last write, or -1."""
    coordinator_epoch: int
    """Epoch of the transaction coordinator that last wrote a marker."""
    current_txn_start_offset: int
    """First offset of the open transaction, or -1."""

    def __init__(
        self,
        *,
        producer_id: int = 0,
        producer_epoch: int = 0,
        last_sequence: int = -1,
        last_timestamp: int = -1,
        coordinator_epoch: int = 0,
        current_txn_start_offset: int = -1,
    ) -> None:
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.last_sequence = last_sequence
        self.last_timestamp = last_timestamp
        self.coordinator_epoch = coordinator_epoch
        self.current_txn_start_offset = current_txn_start_offset


# The schema the codecs are compiled from (nested structs first).
_TOPIC_REQUEST = StructDef(
    "TopicRequest", [Field("name", STRING), Field("partition_indexes", array(INT32))], TopicRequest
)
_DESCRIBE_PRODUCERS_REQUEST = StructDef(
    "DescribeProducersRequest", [Field("topics", array(_TOPIC_REQUEST))], DescribeProducersRequest
)
_PRODUCER_STATE = StructDef(
    "ProducerState",
    [
        Field("producer_id", INT64),
        Field("producer_epoch", INT32),
        Field("last_sequence", INT32, default=-1),
        Field("last_timestamp", INT64, default=-1),
        Field("coordinator_epoch", INT32),
        Field("current_txn_start_offset", INT64, default=-1),
    ],
    ProducerState,
)
_PARTITION_RESPONSE = StructDef(
    "PartitionResponse",
    [
        Field("partition_index", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field("active_producers", array(_PRODUCER_STATE)),
    ],
    PartitionResponse,
)
_TOPIC_RESPONSE = StructDef(
    "TopicResponse",
    [Field("name", STRING), Field("partitions", array(_PARTITION_RESPONSE))],
    TopicResponse,
)
_DESCRIBE_PRODUCERS_RESPONSE = StructDef(
    "DescribeProducersResponse",
    [Field("throttle_time_ms", INT32), Field("topics", array(_TOPIC_RESPONSE))],
    DescribeProducersResponse,
)

DESCRIBE_PRODUCERS: Api[DescribeProducersRequest, DescribeProducersResponse] = Api(
    61,
    "DescribeProducers",
    "0",
    "0+",
    _DESCRIBE_PRODUCERS_REQUEST,
    _DESCRIBE_PRODUCERS_RESPONSE,
    DescribeProducersRequest,
    DescribeProducersResponse,
)
"""DescribeProducers (key 61), versions 0."""
