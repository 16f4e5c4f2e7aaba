# Generated from kafka_async/protocol/definitions/share_fetch.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""ShareFetch: read records of a share group's partitions, acquiring them, and acknowledge earlier
ones (KIP-932).

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
    RECORDS,
    STRING,
    UUID,
    Api,
    Field,
    Message,
    StructDef,
    array,
)


class ShareFetchRequest(Message):
    """The ShareFetch request (key 78)."""

    __slots__ = (
        "group_id",
        "member_id",
        "share_session_epoch",
        "max_wait_ms",
        "min_bytes",
        "max_bytes",
        "max_records",
        "batch_size",
        "share_acquire_mode",
        "is_renew_ack",
        "topics",
        "forgotten_topics_data",
    )

    group_id: str | None
    """Share group id, or null in a request that only continues the session."""
    member_id: str | None
    """The member id, or null."""
    share_session_epoch: int
    """Share session epoch: 0 opens a session, -1 closes it, else the next epoch."""
    max_wait_ms: int
    """How long the broker may wait for min_bytes of data."""
    min_bytes: int
    """The broker answers once it has this many bytes (or max_wait_ms passes)."""
    max_bytes: int
    """Response size limit over all partitions."""
    max_records: int
    """The most records to acquire in this fetch."""
    batch_size: int
    """Preferred number of records per acquired batch."""
    share_acquire_mode: int
    """0 batch-optimized (max_records may be exceeded to keep batches whole), 1 record-limit (strict
    max_records; KIP-1206).
    """
    is_renew_ack: bool
    """The acknowledgements carry RENEW (type 4); then every fetch limit must be 0 (KIP-1222)."""
    topics: list[FetchTopic]
    """The partitions to fetch (in a session: the ones added or changed)."""
    forgotten_topics_data: list[ForgottenTopic]
    """Partitions to drop from the share session."""

    def __init__(
        self,
        *,
        group_id: str | None = None,
        member_id: str | None = "",
        share_session_epoch: int = 0,
        max_wait_ms: int = 0,
        min_bytes: int = 0,
        max_bytes: int = 2147483647,
        max_records: int = 0,
        batch_size: int = 0,
        share_acquire_mode: int = 0,
        is_renew_ack: bool = False,
        topics: list[FetchTopic] = MISSING,
        forgotten_topics_data: list[ForgottenTopic] = MISSING,
    ) -> None:
        self.group_id = group_id
        self.member_id = member_id
        self.share_session_epoch = share_session_epoch
        self.max_wait_ms = max_wait_ms
        self.min_bytes = min_bytes
        self.max_bytes = max_bytes
        self.max_records = max_records
        self.batch_size = batch_size
        self.share_acquire_mode = share_acquire_mode
        self.is_renew_ack = is_renew_ack
        self.topics = [] if topics is MISSING else topics
        self.forgotten_topics_data = (
            [] if forgotten_topics_data is MISSING else forgotten_topics_data
        )


class FetchTopic(Message):
    """The partitions to fetch (in a session: the ones added or changed)."""

    __slots__ = ("topic_id", "partitions")

    topic_id: uuid.UUID
    """The topic's UUID."""
    partitions: list[FetchPartition]
    """The partitions of this topic."""

    def __init__(
        self, *, topic_id: uuid.UUID = ZERO_UUID, partitions: list[FetchPartition] = MISSING
    ) -> None:
        self.topic_id = topic_id
        self.partitions = [] if partitions is MISSING else partitions


class FetchPartition(Message):
    """The partitions of this topic."""

    __slots__ = ("partition_index", "partition_max_bytes", "acknowledgement_batches")

    partition_index: int
    """Partition index."""
    partition_max_bytes: int
    """Size limit for this partition (v0 only)."""
    acknowledgement_batches: list[AcknowledgementBatch]
    """Acknowledgements of records fetched before."""

    def __init__(
        self,
        *,
        partition_index: int = 0,
        partition_max_bytes: int = 0,
        acknowledgement_batches: list[AcknowledgementBatch] = MISSING,
    ) -> None:
        self.partition_index = partition_index
        self.partition_max_bytes = partition_max_bytes
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


class ForgottenTopic(Message):
    """Partitions to drop from the share session."""

    __slots__ = ("topic_id", "partitions")

    topic_id: uuid.UUID
    """The topic's UUID."""
    partitions: list[int]
    """Partition indexes to drop."""

    def __init__(self, *, topic_id: uuid.UUID = ZERO_UUID, partitions: list[int] = MISSING) -> None:
        self.topic_id = topic_id
        self.partitions = [] if partitions is MISSING else partitions


class ShareFetchResponse(Message):
    """The ShareFetch response (key 78)."""

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
    """How long acquired records stay locked to this member, ms."""
    responses: list[ShareFetchableTopicResponse]
    """The data, grouped by topic."""
    node_endpoints: list[NodeEndpoint]
    """Endpoints of the new leaders named above."""

    def __init__(
        self,
        *,
        throttle_time_ms: int = 0,
        error_code: int = 0,
        error_message: str | None = None,
        acquisition_lock_timeout_ms: int = 0,
        responses: list[ShareFetchableTopicResponse] = MISSING,
        node_endpoints: list[NodeEndpoint] = MISSING,
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.error_code = error_code
        self.error_message = error_message
        self.acquisition_lock_timeout_ms = acquisition_lock_timeout_ms
        self.responses = [] if responses is MISSING else responses
        self.node_endpoints = [] if node_endpoints is MISSING else node_endpoints


class ShareFetchableTopicResponse(Message):
    """The data, grouped by topic."""

    __slots__ = ("topic_id", "partitions")

    topic_id: uuid.UUID
    """The topic's UUID."""
    partitions: list[PartitionData]
    """One entry per partition."""

    def __init__(
        self, *, topic_id: uuid.UUID = ZERO_UUID, partitions: list[PartitionData] = MISSING
    ) -> None:
        self.topic_id = topic_id
        self.partitions = [] if partitions is MISSING else partitions


class PartitionData(Message):
    """One entry per partition."""

    __slots__ = (
        "partition_index",
        "error_code",
        "error_message",
        "acknowledge_error_code",
        "acknowledge_error_message",
        "current_leader",
        "records",
        "acquired_records",
    )

    partition_index: int
    """Partition index."""
    error_code: int
    """0, or the fetch error for this partition."""
    error_message: str | None
    """The broker's description of the fetch error, or null."""
    acknowledge_error_code: int
    """0, or the error of the acknowledgements for this partition."""
    acknowledge_error_message: str | None
    """The broker's description of the acknowledgement error, or null."""
    current_leader: LeaderIdAndEpoch
    """The new leader, when this broker is not it."""
    records: bytes | bytearray | memoryview | None
    """The record batches."""
    acquired_records: list[AcquiredRecords]
    """The ranges of records acquired by this fetch."""

    def __init__(
        self,
        *,
        partition_index: int = 0,
        error_code: int = 0,
        error_message: str | None = None,
        acknowledge_error_code: int = 0,
        acknowledge_error_message: str | None = None,
        current_leader: LeaderIdAndEpoch = MISSING,
        records: bytes | bytearray | memoryview | None = None,
        acquired_records: list[AcquiredRecords] = MISSING,
    ) -> None:
        self.partition_index = partition_index
        self.error_code = error_code
        self.error_message = error_message
        self.acknowledge_error_code = acknowledge_error_code
        self.acknowledge_error_message = acknowledge_error_message
        self.current_leader = LeaderIdAndEpoch() if current_leader is MISSING else current_leader
        self.records = records
        self.acquired_records = [] if acquired_records is MISSING else acquired_records


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


class AcquiredRecords(Message):
    """The ranges of records acquired by this fetch."""

    __slots__ = ("first_offset", "last_offset", "delivery_count")

    first_offset: int
    """First offset of the range."""
    last_offset: int
    """Last offset of the range (inclusive)."""
    delivery_count: int
    """How many times these records have been delivered."""

    def __init__(
        self, *, first_offset: int = 0, last_offset: int = 0, delivery_count: int = 0
    ) -> None:
        self.first_offset = first_offset
        self.last_offset = last_offset
        self.delivery_count = delivery_count


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
_FETCH_PARTITION = StructDef(
    "FetchPartition",
    [
        Field("partition_index", INT32),
        Field("partition_max_bytes", INT32, "0"),
        Field("acknowledgement_batches", array(_ACKNOWLEDGEMENT_BATCH)),
    ],
    FetchPartition,
)
_FETCH_TOPIC = StructDef(
    "FetchTopic",
    [Field("topic_id", UUID), Field("partitions", array(_FETCH_PARTITION))],
    FetchTopic,
)
_FORGOTTEN_TOPIC = StructDef(
    "ForgottenTopic", [Field("topic_id", UUID), Field("partitions", array(INT32))], ForgottenTopic
)
_SHARE_FETCH_REQUEST = StructDef(
    "ShareFetchRequest",
    [
        Field("group_id", STRING, nullable="0+", default=None),
        Field("member_id", STRING, nullable="0+"),
        Field("share_session_epoch", INT32),
        Field("max_wait_ms", INT32),
        Field("min_bytes", INT32),
        Field("max_bytes", INT32, default=2147483647),
        Field("max_records", INT32, "1+"),
        Field("batch_size", INT32, "1+"),
        Field("share_acquire_mode", INT8, "2+", default=0, ignorable=True),
        Field("is_renew_ack", BOOL, "2+", default=False),
        Field("topics", array(_FETCH_TOPIC)),
        Field("forgotten_topics_data", array(_FORGOTTEN_TOPIC)),
    ],
    ShareFetchRequest,
)
_LEADER_ID_AND_EPOCH = StructDef(
    "LeaderIdAndEpoch", [Field("leader_id", INT32), Field("leader_epoch", INT32)], LeaderIdAndEpoch
)
_ACQUIRED_RECORDS = StructDef(
    "AcquiredRecords",
    [Field("first_offset", INT64), Field("last_offset", INT64), Field("delivery_count", INT16)],
    AcquiredRecords,
)
_PARTITION_DATA = StructDef(
    "PartitionData",
    [
        Field("partition_index", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field("acknowledge_error_code", INT16),
        Field("acknowledge_error_message", STRING, nullable="0+", default=None),
        Field("current_leader", _LEADER_ID_AND_EPOCH),
        Field("records", RECORDS, nullable="0"),
        Field("acquired_records", array(_ACQUIRED_RECORDS)),
    ],
    PartitionData,
)
_SHARE_FETCHABLE_TOPIC_RESPONSE = StructDef(
    "ShareFetchableTopicResponse",
    [Field("topic_id", UUID), Field("partitions", array(_PARTITION_DATA))],
    ShareFetchableTopicResponse,
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
_SHARE_FETCH_RESPONSE = StructDef(
    "ShareFetchResponse",
    [
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field("acquisition_lock_timeout_ms", INT32, "1+"),
        Field("responses", array(_SHARE_FETCHABLE_TOPIC_RESPONSE)),
        Field("node_endpoints", array(_NODE_ENDPOINT)),
    ],
    ShareFetchResponse,
)

SHARE_FETCH: Api[ShareFetchRequest, ShareFetchResponse] = Api(
    78,
    "ShareFetch",
    "1-2",
    "0+",
    _SHARE_FETCH_REQUEST,
    _SHARE_FETCH_RESPONSE,
    ShareFetchRequest,
    ShareFetchResponse,
)
"""ShareFetch (key 78), versions 1-2."""
