# Generated from kafka_async/protocol/definitions/fetch.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""Fetch: read record batches from partition leaders (or preferred replicas).

Versions 0-17, flexible 12+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

import uuid

from ..codec import ZERO_UUID
from ..schema import (
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


class FetchRequest(Message):
    """The Fetch request (key 1)."""

    __slots__ = (
        "cluster_id",
        "replica_id",
        "replica_state",
        "max_wait_ms",
        "min_bytes",
        "max_bytes",
        "isolation_level",
        "session_id",
        "session_epoch",
        "topics",
        "forgotten_topics_data",
        "rack_id",
    )

    cluster_id: str | None
    """The cluster the follower expects (KRaft), or null."""
    replica_id: int
    """Broker id of the follower; -1 for a client."""
    replica_state: ReplicaState
    """The follower's state (brokers only)."""
    max_wait_ms: int
    """How long the broker may wait for min_bytes of data."""
    min_bytes: int
    """The broker answers once it has this many bytes (or max_wait_ms passes)."""
    max_bytes: int
    """Response size limit over all partitions (the first batch always fits)."""
    isolation_level: int
    """0 read uncommitted, 1 read committed."""
    session_id: int
    """Fetch session id (KIP-227); 0 when there is none."""
    session_epoch: int
    """Fetch session epoch: 0 opens a session, -1 fetches without one."""
    topics: list[FetchTopic]
    """The partitions to fetch (in a session: the ones added or changed)."""
    forgotten_topics_data: list[ForgottenTopic]
    """Partitions to drop from the fetch session."""
    rack_id: str
    """The client's rack, for fetching from the closest replica (KIP-392)."""

    def __init__(
        self,
        *,
        cluster_id: str | None = None,
        replica_id: int = -1,
        replica_state: ReplicaState = MISSING,
        max_wait_ms: int = 0,
        min_bytes: int = 0,
        max_bytes: int = 2147483647,
        isolation_level: int = 0,
        session_id: int = 0,
        session_epoch: int = -1,
        topics: list[FetchTopic] = MISSING,
        forgotten_topics_data: list[ForgottenTopic] = MISSING,
        rack_id: str = "",
    ) -> None:
        self.cluster_id = cluster_id
        self.replica_id = replica_id
        self.replica_state = ReplicaState() if replica_state is MISSING else replica_state
        self.max_wait_ms = max_wait_ms
        self.min_bytes = min_bytes
        self.max_bytes = max_bytes
        self.isolation_level = isolation_level
        self.session_id = session_id
        self.session_epoch = session_epoch
        self.topics = [] if topics is MISSING else topics
        self.forgotten_topics_data = (
            [] if forgotten_topics_data is MISSING else forgotten_topics_data
        )
        self.rack_id = rack_id


class ReplicaState(Message):
    """The follower's state (brokers only)."""

    __slots__ = ("replica_id", "replica_epoch")

    replica_id: int
    """Broker id of the follower; -1 for a client."""
    replica_epoch: int
    """Broker epoch of the follower, or -1."""

    def __init__(self, *, replica_id: int = -1, replica_epoch: int = -1) -> None:
        self.replica_id = replica_id
        self.replica_epoch = replica_epoch


class FetchTopic(Message):
    """The partitions to fetch (in a session: the ones added or changed)."""

    __slots__ = ("topic", "topic_id", "partitions")

    topic: str
    """Topic name (up to v12)."""
    topic_id: uuid.UUID
    """The topic's UUID (zero when the topic is named instead)."""
    partitions: list[FetchPartition]
    """The partitions of this topic."""

    def __init__(
        self,
        *,
        topic: str = "",
        topic_id: uuid.UUID = ZERO_UUID,
        partitions: list[FetchPartition] = MISSING,
    ) -> None:
        self.topic = topic
        self.topic_id = topic_id
        self.partitions = [] if partitions is MISSING else partitions


class FetchPartition(Message):
    """The partitions of this topic."""

    __slots__ = (
        "partition",
        "current_leader_epoch",
        "fetch_offset",
        "last_fetched_epoch",
        "log_start_offset",
        "partition_max_bytes",
        "replica_directory_id",
    )

    partition: int
    """Partition index."""
    current_leader_epoch: int
    """The leader epoch the client knows (fencing); -1 to skip the check."""
    fetch_offset: int
    """Offset to read from."""
    last_fetched_epoch: int
    """Epoch of the last fetched batch (followers), or -1."""
    log_start_offset: int
    """First offset still in the log."""
    partition_max_bytes: int
    """Size limit for this partition."""
    replica_directory_id: uuid.UUID
    """The follower's log directory (brokers only)."""

    def __init__(
        self,
        *,
        partition: int = 0,
        current_leader_epoch: int = -1,
        fetch_offset: int = 0,
        last_fetched_epoch: int = -1,
        log_start_offset: int = -1,
        partition_max_bytes: int = 0,
        replica_directory_id: uuid.UUID = ZERO_UUID,
    ) -> None:
        self.partition = partition
        self.current_leader_epoch = current_leader_epoch
        self.fetch_offset = fetch_offset
        self.last_fetched_epoch = last_fetched_epoch
        self.log_start_offset = log_start_offset
        self.partition_max_bytes = partition_max_bytes
        self.replica_directory_id = replica_directory_id


class ForgottenTopic(Message):
    """Partitions to drop from the fetch session."""

    __slots__ = ("topic", "topic_id", "partitions")

    topic: str
    """Topic name (up to v12)."""
    topic_id: uuid.UUID
    """The topic's UUID (zero when the topic is named instead)."""
    partitions: list[int]
    """Partition indexes to drop."""

    def __init__(
        self, *, topic: str = "", topic_id: uuid.UUID = ZERO_UUID, partitions: list[int] = MISSING
    ) -> None:
        self.topic = topic
        self.topic_id = topic_id
        self.partitions = [] if partitions is MISSING else partitions


class FetchResponse(Message):
    """The Fetch response (key 1)."""

    __slots__ = ("throttle_time_ms", "error_code", "session_id", "responses", "node_endpoints")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    error_code: int
    """0, or a session-level error."""
    session_id: int
    """Fetch session id (KIP-227); 0 when there is none."""
    responses: list[FetchableTopicResponse]
    """The data, grouped by topic."""
    node_endpoints: list[NodeEndpoint]
    """Endpoints of the new leaders named above (KIP-951)."""

    def __init__(
        self,
        *,
        throttle_time_ms: int = 0,
        error_code: int = 0,
        session_id: int = 0,
        responses: list[FetchableTopicResponse] = MISSING,
        node_endpoints: list[NodeEndpoint] = MISSING,
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.error_code = error_code
        self.session_id = session_id
        self.responses = [] if responses is MISSING else responses
        self.node_endpoints = [] if node_endpoints is MISSING else node_endpoints


class FetchableTopicResponse(Message):
    """The data, grouped by topic."""

    __slots__ = ("topic", "topic_id", "partitions")

    topic: str
    """Topic name (up to v12)."""
    topic_id: uuid.UUID
    """The topic's UUID (zero when the topic is named instead)."""
    partitions: list[PartitionData]
    """One entry per partition."""

    def __init__(
        self,
        *,
        topic: str = "",
        topic_id: uuid.UUID = ZERO_UUID,
        partitions: list[PartitionData] = MISSING,
    ) -> None:
        self.topic = topic
        self.topic_id = topic_id
        self.partitions = [] if partitions is MISSING else partitions


class PartitionData(Message):
    """One entry per partition."""

    __slots__ = (
        "partition_index",
        "error_code",
        "high_watermark",
        "last_stable_offset",
        "log_start_offset",
        "diverging_epoch",
        "current_leader",
        "snapshot_id",
        "aborted_transactions",
        "preferred_read_replica",
        "records",
    )

    partition_index: int
    """Partition index."""
    error_code: int
    """0, or the error (errors.py) for this entry."""
    high_watermark: int
    """Offset after the last committed record."""
    last_stable_offset: int
    """Offset after the last decided transaction (read committed), or -1."""
    log_start_offset: int
    """First offset still in the log."""
    diverging_epoch: EpochEndOffset
    """Where a follower's log diverges from the leader's (brokers only)."""
    current_leader: LeaderIdAndEpoch
    """The new leader, when this broker is not it (KIP-951)."""
    snapshot_id: SnapshotId
    """The snapshot a follower must fetch instead (KRaft)."""
    aborted_transactions: list[AbortedTransaction] | None
    """Aborted transactions within the returned batches (read committed)."""
    preferred_read_replica: int
    """Replica to fetch from instead (KIP-392), or -1."""
    records: bytes | bytearray | memoryview | None
    """The record batches, a zero-copy view of the response."""

    def __init__(
        self,
        *,
        partition_index: int = 0,
        error_code: int = 0,
        high_watermark: int = 0,
        last_stable_offset: int = -1,
        log_start_offset: int = -1,
        diverging_epoch: EpochEndOffset = MISSING,
        current_leader: LeaderIdAndEpoch = MISSING,
        snapshot_id: SnapshotId = MISSING,
        aborted_transactions: list[AbortedTransaction] | None = MISSING,
        preferred_read_replica: int = -1,
        records: bytes | bytearray | memoryview | None = None,
    ) -> None:
        self.partition_index = partition_index
        self.error_code = error_code
        self.high_watermark = high_watermark
        self.last_stable_offset = last_stable_offset
        self.log_start_offset = log_start_offset
        self.diverging_epoch = EpochEndOffset() if diverging_epoch is MISSING else diverging_epoch
        self.current_leader = LeaderIdAndEpoch() if current_leader is MISSING else current_leader
        self.snapshot_id = SnapshotId() if snapshot_id is MISSING else snapshot_id
        self.aborted_transactions = [] if aborted_transactions is MISSING else aborted_transactions
        self.preferred_read_replica = preferred_read_replica
        self.records = records


class EpochEndOffset(Message):
    """Where a follower's log diverges from the leader's (brokers only)."""

    __slots__ = ("epoch", "end_offset")

    epoch: int
    """Leader epoch."""
    end_offset: int
    """End offset of that epoch."""

    def __init__(self, *, epoch: int = -1, end_offset: int = -1) -> None:
        self.epoch = epoch
        self.end_offset = end_offset


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


class SnapshotId(Message):
    """The snapshot a follower must fetch instead (KRaft)."""

    __slots__ = ("end_offset", "epoch")

    end_offset: int
    """End offset of the snapshot."""
    epoch: int
    """Epoch of the snapshot."""

    def __init__(self, *, end_offset: int = -1, epoch: int = -1) -> None:
        self.end_offset = end_offset
        self.epoch = epoch


class AbortedTransaction(Message):
    """Aborted transactions within the returned batches (read committed)."""

    __slots__ = ("producer_id", "first_offset")

    producer_id: int
    """Producer id of the aborted transaction."""
    first_offset: int
    """Offset of its first record."""

    def __init__(self, *, producer_id: int = 0, first_offset: int = 0) -> None:
        self.producer_id = producer_id
        self.first_offset = first_offset


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
_REPLICA_STATE = StructDef(
    "ReplicaState",
    [
        Field("replica_id", INT32, "15+", default=-1),
        Field("replica_epoch", INT64, "15+", default=-1),
    ],
    ReplicaState,
)
_FETCH_PARTITION = StructDef(
    "FetchPartition",
    [
        Field("partition", INT32),
        Field("current_leader_epoch", INT32, "9+", default=-1, ignorable=True),
        Field("fetch_offset", INT64),
        Field("last_fetched_epoch", INT32, "12+", default=-1),
        Field("log_start_offset", INT64, "5+", default=-1, ignorable=True),
        Field("partition_max_bytes", INT32),
        Field("replica_directory_id", UUID, "17+", ignorable=True, tag=0),
    ],
    FetchPartition,
)
_FETCH_TOPIC = StructDef(
    "FetchTopic",
    [
        Field("topic", STRING, "0-12", ignorable=True),
        Field("topic_id", UUID, "13+", ignorable=True),
        Field("partitions", array(_FETCH_PARTITION)),
    ],
    FetchTopic,
)
_FORGOTTEN_TOPIC = StructDef(
    "ForgottenTopic",
    [
        Field("topic", STRING, "7-12", ignorable=True),
        Field("topic_id", UUID, "13+", ignorable=True),
        Field("partitions", array(INT32), "7+"),
    ],
    ForgottenTopic,
)
_FETCH_REQUEST = StructDef(
    "FetchRequest",
    [
        Field("cluster_id", STRING, "12+", nullable="12+", default=None, ignorable=True, tag=0),
        Field("replica_id", INT32, "0-14", default=-1),
        Field("replica_state", _REPLICA_STATE, "15+", tag=1),
        Field("max_wait_ms", INT32),
        Field("min_bytes", INT32),
        Field("max_bytes", INT32, "3+", default=2147483647, ignorable=True),
        Field("isolation_level", INT8, "4+", ignorable=True),
        Field("session_id", INT32, "7+", ignorable=True),
        Field("session_epoch", INT32, "7+", default=-1, ignorable=True),
        Field("topics", array(_FETCH_TOPIC)),
        Field("forgotten_topics_data", array(_FORGOTTEN_TOPIC), "7+"),
        Field("rack_id", STRING, "11+", ignorable=True),
    ],
    FetchRequest,
)
_EPOCH_END_OFFSET = StructDef(
    "EpochEndOffset",
    [Field("epoch", INT32, "12+", default=-1), Field("end_offset", INT64, "12+", default=-1)],
    EpochEndOffset,
)
_LEADER_ID_AND_EPOCH = StructDef(
    "LeaderIdAndEpoch",
    [Field("leader_id", INT32, "12+", default=-1), Field("leader_epoch", INT32, "12+", default=-1)],
    LeaderIdAndEpoch,
)
_SNAPSHOT_ID = StructDef(
    "SnapshotId",
    [Field("end_offset", INT64, default=-1), Field("epoch", INT32, default=-1)],
    SnapshotId,
)
_ABORTED_TRANSACTION = StructDef(
    "AbortedTransaction",
    [Field("producer_id", INT64, "4+"), Field("first_offset", INT64, "4+")],
    AbortedTransaction,
)
_PARTITION_DATA = StructDef(
    "PartitionData",
    [
        Field("partition_index", INT32),
        Field("error_code", INT16),
        Field("high_watermark", INT64),
        Field("last_stable_offset", INT64, "4+", default=-1, ignorable=True),
        Field("log_start_offset", INT64, "5+", default=-1, ignorable=True),
        Field("diverging_epoch", _EPOCH_END_OFFSET, "12+", tag=0),
        Field("current_leader", _LEADER_ID_AND_EPOCH, "12+", tag=1),
        Field("snapshot_id", _SNAPSHOT_ID, "12+", tag=2),
        Field(
            "aborted_transactions", array(_ABORTED_TRANSACTION), "4+", nullable="4+", ignorable=True
        ),
        Field("preferred_read_replica", INT32, "11+", default=-1),
        Field("records", RECORDS, nullable="0+"),
    ],
    PartitionData,
)
_FETCHABLE_TOPIC_RESPONSE = StructDef(
    "FetchableTopicResponse",
    [
        Field("topic", STRING, "0-12", ignorable=True),
        Field("topic_id", UUID, "13+", ignorable=True),
        Field("partitions", array(_PARTITION_DATA)),
    ],
    FetchableTopicResponse,
)
_NODE_ENDPOINT = StructDef(
    "NodeEndpoint",
    [
        Field("node_id", INT32, "16+"),
        Field("host", STRING, "16+"),
        Field("port", INT32, "16+"),
        Field("rack", STRING, "16+", nullable="16+", default=None),
    ],
    NodeEndpoint,
)
_FETCH_RESPONSE = StructDef(
    "FetchResponse",
    [
        Field("throttle_time_ms", INT32, "1+", ignorable=True),
        Field("error_code", INT16, "7+", ignorable=True),
        Field("session_id", INT32, "7+"),
        Field("responses", array(_FETCHABLE_TOPIC_RESPONSE)),
        Field("node_endpoints", array(_NODE_ENDPOINT), "16+", tag=0),
    ],
    FetchResponse,
)

FETCH: Api[FetchRequest, FetchResponse] = Api(
    1, "Fetch", "0-17", "12+", _FETCH_REQUEST, _FETCH_RESPONSE, FetchRequest, FetchResponse
)
"""Fetch (key 1), versions 0-17."""
