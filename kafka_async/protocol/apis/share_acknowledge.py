# Generated from kafka_async/protocol/definitions/share_acknowledge.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""ShareAcknowledge: acknowledge records fetched from a share group's partitions (KIP-932).

Versions 1-2, flexible 0+; checked against Kafka 4.4's
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


class ShareAcknowledgeRequest(Message):
    """The ShareAcknowledge request (key 79)."""

    __slots__ = ("group_id", "member_id", "share_session_epoch", "is_renew_ack", "topics")

    group_id: str | None
    """Share group id, or null in a request that only continues the session."""
    member_id: str | None
    """The member id, or null."""
    share_session_epoch: int
    """Share session epoch: 0 is not allowed here, -1 closes the session, else the next epoch."""
    is_renew_ack: bool
    """The acknowledgements carry RENEW (type 4), which extends the records' acquisition locks
    (KIP-1222).
    """
    topics: list[AcknowledgeTopic]
    """The acknowledgements, grouped by topic."""

    def __init__(
        self,
        *,
        group_id: str | None = None,
        member_id: str | None = "",
        share_session_epoch: int = 0,
        is_renew_ack: bool = False,
        topics: list[AcknowledgeTopic] = MISSING,
    ) -> None:
        self.group_id = group_id
        self.member_id = member_id
        self.share_session_epoch = share_session_epoch
        self.is_renew_ack = is_renew_ack
        self.topics = [] if topics is MISSING else topics


class AcknowledgeTopic(Message):
    """The acknowledgements, grouped by topic."""

    __slots__ = ("topic_id", "partitions")

    topic_id: uuid.UUID
    """The topic's UUID."""
    partitions: list[AcknowledgePartition]
    """The partitions of this topic."""

    def __init__(
        self, *, topic_id: uuid.UUID = ZERO_UUID, partitions: list[AcknowledgePartition] = MISSING
    ) -> None:
        self.topic_id = topic_id
        self.partitions = [] if partitions is MISSING else partitions


class AcknowledgePartition(Message):
    """The partitions of this topic."""

    __slots__ = ("partition_index", "acknowledgement_batches")

    partition_index: int
    """Partition index."""
    acknowledgement_batches: list[AcknowledgementBatch]
    """Acknowledgements of records fetched before."""

    def __init__(
        self,
        *,
        partition_index: int = 0,
        acknowledgement_batches: list[AcknowledgementBatch] = MISSING,
    ) -> None:
        self.partition_index = partition_index
        self.acknowledgement_batches = (
            [] if acknowledgement_batches is MISSING else acknowledgement_batches
        )


class AcknowledgementBatch(Message):
    """Acknowledgements of records fetched before."""

    __slots__ = ("first_offset", "last_offset", "acknowledge_types")

    first_offset: int
    """First offset of the range."""
    last_offset: int
    """Last offset of the range (inclusive)."""
    acknowledge_types: list[int]
    """Per offset, or one for the range: 0 gap, 1 accept, 2 release, 3 reject, 4 renew (v2+)."""

    def __init__(
        self, *, first_offset: int = 0, last_offset: int = 0, acknowledge_types: list[int] = MISSING
    ) -> None:
        self.first_offset = first_offset
        self.last_offset = last_offset
        self.acknowledge_types = [] if acknowledge_types is MISSING else acknowledge_types


class ShareAcknowledgeResponse(Message):
    """The ShareAcknowledge response (key 79)."""

    __slots__ = (
        "throttle_time_ms",
        "error_code",
        "error_message",
        "acquisition_lock_timeout_ms",
        "responses",
        "node_endpoints",
    )

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    error_code: int
    """0, or a request-level error."""
    error_message: str | None
    """The broker's description of the error, or null."""
    acquisition_lock_timeout_ms: int
    """How long acquired (and renewed) records stay locked to this member, ms."""
    responses: list[ShareAcknowledgeTopicResponse]
    """The results, grouped by topic."""
    node_endpoints: list[NodeEndpoint]
    """Endpoints of the new leaders named above."""

    def __init__(
        self,
        *,
        throttle_time_ms: int = 0,
        error_code: int = 0,
        error_message: str | None = None,
        acquisition_lock_timeout_ms: int = 0,
        responses: list[ShareAcknowledgeTopicResponse] = MISSING,
        node_endpoints: list[NodeEndpoint] = MISSING,
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.error_code = error_code
        self.error_message = error_message
        self.acquisition_lock_timeout_ms = acquisition_lock_timeout_ms
        self.responses = [] if responses is MISSING else responses
        self.node_endpoints = [] if node_endpoints is MISSING else node_endpoints


class ShareAcknowledgeTopicResponse(Message):
    """The results, grouped by topic."""

    __slots__ = ("topic_id", "partitions")

    topic_id: uuid.UUID
    """The topic's UUID."""
    partitions: list[PartitionData]
    """One result per partition."""

    def __init__(
        self, *, topic_id: uuid.UUID = ZERO_UUID, partitions: list[PartitionData] = MISSING
    ) -> None:
        self.topic_id = topic_id
        self.partitions = [] if partitions is MISSING else partitions


class PartitionData(Message):
    """One result per partition."""

    __slots__ = ("partition_index", "error_code", "error_message", "current_leader")

    partition_index: int
    """Partition index."""
    error_code: int
    """0, or the error for this partition."""
    error_message: str | None
    """The broker's description of the error, or null."""
    current_leader: LeaderIdAndEpoch
    """The new leader, when this broker is not it."""

    def __init__(
        self,
        *,
        partition_index: int = 0,
        error_code: int = 0,
        error_message: str | None = None,
        current_leader: LeaderIdAndEpoch = MISSING,
    ) -> None:
        self.partition_index = partition_index
        self.error_code = error_code
        self.error_message = error_message
        self.current_leader = LeaderIdAndEpoch() if current_leader is MISSING else current_leader


class LeaderIdAndEpoch(Message):
    """The new leader, when this broker is not it."""

    __slots__ = ("leader_id", "leader_epoch")

    leader_id: int
    """Broker id of the new leader, or -1."""
    leader_epoch: int
    """Leader epoch of the new leader, or -1."""

    def __init__(self, *, leader_id: int = 0, leader_epoch: int = 0) -> None:
        self.leader_id = leader_id
        self.leader_epoch = leader_epoch


class NodeEndpoint(Message):
    """Endpoints of the new leaders named above."""

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
_ACKNOWLEDGEMENT_BATCH = StructDef(
    "AcknowledgementBatch",
    [
        Field("first_offset", INT64),
        Field("last_offset", INT64),
        Field("acknowledge_types", array(INT8)),
    ],
    AcknowledgementBatch,
)
_ACKNOWLEDGE_PARTITION = StructDef(
    "AcknowledgePartition",
    [
        Field("partition_index", INT32),
        Field("acknowledgement_batches", array(_ACKNOWLEDGEMENT_BATCH)),
    ],
    AcknowledgePartition,
)
_ACKNOWLEDGE_TOPIC = StructDef(
    "AcknowledgeTopic",
    [Field("topic_id", UUID), Field("partitions", array(_ACKNOWLEDGE_PARTITION))],
    AcknowledgeTopic,
)
_SHARE_ACKNOWLEDGE_REQUEST = StructDef(
    "ShareAcknowledgeRequest",
    [
        Field("group_id", STRING, nullable="0+", default=None),
        Field("member_id", STRING, nullable="0+"),
        Field("share_session_epoch", INT32),
        Field("is_renew_ack", BOOL, "2+", default=False),
        Field("topics", array(_ACKNOWLEDGE_TOPIC)),
    ],
    ShareAcknowledgeRequest,
)
_LEADER_ID_AND_EPOCH = StructDef(
    "LeaderIdAndEpoch", [Field("leader_id", INT32), Field("leader_epoch", INT32)], LeaderIdAndEpoch
)
_PARTITION_DATA = StructDef(
    "PartitionData",
    [
        Field("partition_index", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field("current_leader", _LEADER_ID_AND_EPOCH),
    ],
    PartitionData,
)
_SHARE_ACKNOWLEDGE_TOPIC_RESPONSE = StructDef(
    "ShareAcknowledgeTopicResponse",
    [Field("topic_id", UUID), Field("partitions", array(_PARTITION_DATA))],
    ShareAcknowledgeTopicResponse,
)
_NODE_ENDPOINT = StructDef(
    "NodeEndpoint",
    [
        Field("node_id", INT32),
        Field("host", STRING),
        Field("port", INT32),
        Field("rack", STRING, nullable="0+", default=None),
    ],
    NodeEndpoint,
)
_SHARE_ACKNOWLEDGE_RESPONSE = StructDef(
    "ShareAcknowledgeResponse",
    [
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field("acquisition_lock_timeout_ms", INT32, "2+", ignorable=True),
        Field("responses", array(_SHARE_ACKNOWLEDGE_TOPIC_RESPONSE)),
        Field("node_endpoints", array(_NODE_ENDPOINT)),
    ],
    ShareAcknowledgeResponse,
)

SHARE_ACKNOWLEDGE: Api[ShareAcknowledgeRequest, ShareAcknowledgeResponse] = Api(
    79,
    "ShareAcknowledge",
    "1-2",
    "0+",
    _SHARE_ACKNOWLEDGE_REQUEST,
    _SHARE_ACKNOWLEDGE_RESPONSE,
    ShareAcknowledgeRequest,
    ShareAcknowledgeResponse,
)
"""ShareAcknowledge (key 79), versions 1-2."""
