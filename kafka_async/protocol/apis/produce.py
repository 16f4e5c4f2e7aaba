# Generated from kafka_async/protocol/definitions/produce.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""Produce: append record batches to partition leaders.

Versions 0-12, flexible 9+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import (
    INT16,
    INT32,
    INT64,
    MISSING,
    RECORDS,
    STRING,
    Api,
    Field,
    Message,
    StructDef,
    array,
)


class ProduceRequest(Message):
    """The Produce request (key 0)."""

    __slots__ = ("transactional_id", "acks", "timeout_ms", "topic_data")

    transactional_id: str | None
    """The transactional id of the producer."""
    acks: int
    """Acknowledgements to wait for: 0 none, 1 the leader, -1 every in-sync replica."""
    timeout_ms: int
    """How long the leader waits for the acknowledgements."""
    topic_data: list[TopicProduceData]
    """The batches, grouped by topic."""

    def __init__(
        self,
        *,
        transactional_id: str | None = None,
        acks: int = 0,
        timeout_ms: int = 0,
        topic_data: list[TopicProduceData] = MISSING,
    ) -> None:
        self.transactional_id = transactional_id
        self.acks = acks
        self.timeout_ms = timeout_ms
        self.topic_data = [] if topic_data is MISSING else topic_data


class TopicProduceData(Message):
    """The batches, grouped by topic."""

    __slots__ = ("name", "partition_data")

    name: str
    """Topic name."""
    partition_data: list[PartitionProduceData]
    """The batches of this topic, one entry per partition."""

    def __init__(
        self, *, name: str = "", partition_data: list[PartitionProduceData] = MISSING
    ) -> None:
        self.name = name
        self.partition_data = [] if partition_data is MISSING else partition_data


class PartitionProduceData(Message):
    """The batches of this topic, one entry per partition."""

    __slots__ = ("index", "records")

    index: int
    """Partition index."""
    records: bytes | bytearray | memoryview | None
    """The record batches to append."""

    def __init__(
        self, *, index: int = 0, records: bytes | bytearray | memoryview | None = None
    ) -> None:
        self.index = index
        self.records = records


class ProduceResponse(Message):
    """The Produce response (key 0)."""

    __slots__ = ("responses", "throttle_time_ms", "node_endpoints")

    responses: list[TopicProduceResponse]
    """One result per topic."""
    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    node_endpoints: list[NodeEndpoint]
    """Endpoints of the new leaders named above (KIP-951)."""

    def __init__(
        self,
        *,
        responses: list[TopicProduceResponse] = MISSING,
        throttle_time_ms: int = 0,
        node_endpoints: list[NodeEndpoint] = MISSING,
    ) -> None:
        self.responses = [] if responses is MISSING else responses
        self.throttle_time_ms = throttle_time_ms
        self.node_endpoints = [] if node_endpoints is MISSING else node_endpoints


class TopicProduceResponse(Message):
    """One result per topic."""

    __slots__ = ("name", "partition_responses")

    name: str
    """Topic name."""
    partition_responses: list[PartitionProduceResponse]
    """One result per partition."""

    def __init__(
        self, *, name: str = "", partition_responses: list[PartitionProduceResponse] = MISSING
    ) -> None:
        self.name = name
        self.partition_responses = [] if partition_responses is MISSING else partition_responses


class PartitionProduceResponse(Message):
    """One result per partition."""

    __slots__ = (
        "index",
        "error_code",
        "base_offset",
        "log_append_time_ms",
        "log_start_offset",
        "record_errors",
        "error_message",
        "current_leader",
    )

    index: int
    """Partition index."""
    error_code: int
    """0, or the error (errors.py) for this entry."""
    base_offset: int
    """Offset given to the first record of the batch."""
    log_append_time_ms: int
    """Broker append time when the topic uses LogAppendTime, else -1."""
    log_start_offset: int
    """First offset still in the log."""
    record_errors: list[BatchIndexAndErrorMessage]
    """The records that made the batch fail, by index."""
    error_message: str | None
    """The broker's description of the error, or null."""
    current_leader: LeaderIdAndEpoch
    """The new leader, when this broker is not it (KIP-951)."""

    def __init__(
        self,
        *,
        index: int = 0,
        error_code: int = 0,
        base_offset: int = 0,
        log_append_time_ms: int = -1,
        log_start_offset: int = -1,
        record_errors: list[BatchIndexAndErrorMessage] = MISSING,
        error_message: str | None = None,
        current_leader: LeaderIdAndEpoch = MISSING,
    ) -> None:
        self.index = index
        self.error_code = error_code
        self.base_offset = base_offset
        self.log_append_time_ms = log_append_time_ms
        self.log_start_offset = log_start_offset
        self.record_errors = [] if record_errors is MISSING else record_errors
        self.error_message = error_message
        self.current_leader = LeaderIdAndEpoch() if current_leader is MISSING else current_leader


class BatchIndexAndErrorMessage(Message):
    """The records that made the batch fail, by index."""

    __slots__ = ("batch_index", "batch_index_error_message")

    batch_index: int
    """Index of the failed record within the batch."""
    batch_index_error_message: str | None
    """Why that record failed, or null."""

    def __init__(
        self, *, batch_index: int = 0, batch_index_error_message: str | None = None
    ) -> None:
        self.batch_index = batch_index
        self.batch_index_error_message = batch_index_error_message


class LeaderIdAndEpoch(Message):
    """The new leader, when this broker is not it (KIP-951)."""

    __slots__ = ("leader_id", "leader_epoch")

    leader_id: int
    """Broker id of the new leader, or -1."""
    leader_epoch: int
    """Leader epoch of the new leader, or -1."""

    def __init__(self, *, leader_id: int = -1, leader_epoch: int = -1) -> None:
        self.leader_id = leader_id
        self.leader_epoch = leader_epoch


class NodeEndpoint(Message):
    """Endpoints of the new leaders named above (KIP-951)."""

    __slots__ = ("node_id", "host", "port", "rack")

    node_id: int
    """Broker id."""
    host: str
    """Host name."""
    port: int
    """Port."""
    rack: str | None
    """Rack id, or null."""

    def __init__(
        self, *, node_id: int = 0, host: str = "", port: int = 0, rack: str | None = None
    ) -> None:
        self.node_id = node_id
        self.host = host
        self.port = port
        self.rack = rack


# The schema the codecs are compiled from (nested structs first).
_PARTITION_PRODUCE_DATA = StructDef(
    "PartitionProduceData",
    [Field("index", INT32), Field("records", RECORDS, nullable="0+")],
    PartitionProduceData,
)
_TOPIC_PRODUCE_DATA = StructDef(
    "TopicProduceData",
    [Field("name", STRING), Field("partition_data", array(_PARTITION_PRODUCE_DATA))],
    TopicProduceData,
)
_PRODUCE_REQUEST = StructDef(
    "ProduceRequest",
    [
        Field("transactional_id", STRING, "3+", nullable="3+", default=None),
        Field("acks", INT16),
        Field("timeout_ms", INT32),
        Field("topic_data", array(_TOPIC_PRODUCE_DATA)),
    ],
    ProduceRequest,
)
_BATCH_INDEX_AND_ERROR_MESSAGE = StructDef(
    "BatchIndexAndErrorMessage",
    [
        Field("batch_index", INT32, "8+"),
        Field("batch_index_error_message", STRING, "8+", nullable="8+", default=None),
    ],
    BatchIndexAndErrorMessage,
)
_LEADER_ID_AND_EPOCH = StructDef(
    "LeaderIdAndEpoch",
    [Field("leader_id", INT32, "10+", default=-1), Field("leader_epoch", INT32, "10+", default=-1)],
    LeaderIdAndEpoch,
)
_PARTITION_PRODUCE_RESPONSE = StructDef(
    "PartitionProduceResponse",
    [
        Field("index", INT32),
        Field("error_code", INT16),
        Field("base_offset", INT64),
        Field("log_append_time_ms", INT64, "2+", default=-1, ignorable=True),
        Field("log_start_offset", INT64, "5+", default=-1, ignorable=True),
        Field("record_errors", array(_BATCH_INDEX_AND_ERROR_MESSAGE), "8+", ignorable=True),
        Field("error_message", STRING, "8+", nullable="8+", default=None, ignorable=True),
        Field("current_leader", _LEADER_ID_AND_EPOCH, "10+", tag=0),
    ],
    PartitionProduceResponse,
)
_TOPIC_PRODUCE_RESPONSE = StructDef(
    "TopicProduceResponse",
    [Field("name", STRING), Field("partition_responses", array(_PARTITION_PRODUCE_RESPONSE))],
    TopicProduceResponse,
)
_NODE_ENDPOINT = StructDef(
    "NodeEndpoint",
    [
        Field("node_id", INT32, "10+"),
        Field("host", STRING, "10+"),
        Field("port", INT32, "10+"),
        Field("rack", STRING, "10+", nullable="10+", default=None),
    ],
    NodeEndpoint,
)
_PRODUCE_RESPONSE = StructDef(
    "ProduceResponse",
    [
        Field("responses", array(_TOPIC_PRODUCE_RESPONSE)),
        Field("throttle_time_ms", INT32, "1+", ignorable=True),
        Field("node_endpoints", array(_NODE_ENDPOINT), "10+", tag=0),
    ],
    ProduceResponse,
)

PRODUCE: Api[ProduceRequest, ProduceResponse] = Api(
    0, "Produce", "0-12", "9+", _PRODUCE_REQUEST, _PRODUCE_RESPONSE, ProduceRequest, ProduceResponse
)
"""Produce (key 0), versions 0-12."""
