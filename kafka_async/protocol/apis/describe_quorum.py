# Generated from kafka_async/protocol/definitions/describe_quorum.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""DescribeQuorum: the state of the KRaft metadata quorum: its leader, voters and observers.

Versions 0-2, flexible 0+; checked against Kafka 4.1's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

import uuid

from ..codec import ZERO_UUID
from ..schema import (
    INT16,
    INT32,
    INT64,
    MISSING,
    STRING,
    UINT16,
    UUID,
    Api,
    Field,
    Message,
    StructDef,
    array,
)


class DescribeQuorumRequest(Message):
    """The DescribeQuorum request (key 55)."""

    __slots__ = ("topics",)

    topics: list[TopicData]
    """The quorum topics to describe (the one metadata topic, __cluster_metadata)."""

    def __init__(self, *, topics: list[TopicData] = MISSING) -> None:
        self.topics = [] if topics is MISSING else topics


class TopicData(Message):
    """The quorum topics to describe (the one metadata topic, __cluster_metadata)."""

    __slots__ = ("topic_name", "partitions")

    topic_name: str
    """Topic name."""
    partitions: list[PartitionData]
    """The partitions of this topic to describe."""

    def __init__(self, *, topic_name: str = "", partitions: list[PartitionData] = MISSING) -> None:
        self.topic_name = topic_name
        self.partitions = [] if partitions is MISSING else partitions


class PartitionData(Message):
    """The partitions of this topic to describe."""

    __slots__ = ("partition_index",)

    partition_index: int
    """Partition index."""

    def __init__(self, *, partition_index: int = 0) -> None:
        self.partition_index = partition_index


class DescribeQuorumResponse(Message):
    """The DescribeQuorum response (key 55)."""

    __slots__ = ("error_code", "error_message", "topics", "nodes")

    error_code: int
    """0, or the error (errors.py) for the whole request."""
    error_message: str | None
    """The broker's description of the error, or null."""
    topics: list[QuorumTopicData]
    """One entry per topic asked about."""
    nodes: list[Node]
    """The endpoints of the quorum's nodes."""

    def __init__(
        self,
        *,
        error_code: int = 0,
        error_message: str | None = "",
        topics: list[QuorumTopicData] = MISSING,
        nodes: list[Node] = MISSING,
    ) -> None:
        self.error_code = error_code
        self.error_message = error_message
        self.topics = [] if topics is MISSING else topics
        self.nodes = [] if nodes is MISSING else nodes


class QuorumTopicData(Message):
    """One entry per topic asked about."""

    __slots__ = ("topic_name", "partitions")

    topic_name: str
    """Topic name."""
    partitions: list[QuorumPartitionData]
    """One entry per partition asked about."""

    def __init__(
        self, *, topic_name: str = "", partitions: list[QuorumPartitionData] = MISSING
    ) -> None:
        self.topic_name = topic_name
        self.partitions = [] if partitions is MISSING else partitions


class QuorumPartitionData(Message):
    """One entry per partition asked about."""

    __slots__ = (
        "partition_index",
        "error_code",
        "error_message",
        "leader_id",
        "leader_epoch",
        "high_watermark",
        "current_voters",
        "observers",
    )

    partition_index: int
    """Partition index."""
    error_code: int
    """0, or the error (errors.py) for this partition."""
    error_message: str | None
    """The broker's description of the error, or null."""
    leader_id: int
    """The node leading the quorum, -1 when unknown."""
    leader_epoch: int
    """The leader's epoch."""
    high_watermark: int
    """The quorum's high watermark (committed metadata offset)."""
    current_voters: list[ReplicaState]
    """The voters and their replication state."""
    observers: list[ReplicaState]
    """The observers (brokers that replicate but do not vote)."""

    def __init__(
        self,
        *,
        partition_index: int = 0,
        error_code: int = 0,
        error_message: str | None = "",
        leader_id: int = 0,
        leader_epoch: int = 0,
        high_watermark: int = 0,
        current_voters: list[ReplicaState] = MISSING,
        observers: list[ReplicaState] = MISSING,
    ) -> None:
        self.partition_index = partition_index
        self.error_code = error_code
        self.error_message = error_message
        self.leader_id = leader_id
        self.leader_epoch = leader_epoch
        self.high_watermark = high_watermark
        self.current_voters = [] if current_voters is MISSING else current_voters
        self.observers = [] if observers is MISSING else observers


class ReplicaState(Message):
    """The voters and their replication state."""

    __slots__ = (
        "replica_id",
        "replica_directory_id",
        "log_end_offset",
        "last_fetch_timestamp",
        "last_caught_up_timestamp",
    )

    replica_id: int
    """Node id of the replica."""
    replica_directory_id: uuid.UUID
    """The replica's metadata log directory id (KIP-853)."""
    log_end_offset: int
    """The replica's log end offset as the leader knows it, -1 when unknown."""
    last_fetch_timestamp: int
    """When the replica last fetched from the leader (ms, leader's clock), -1 when unknown or the
    leader itself.
    """
    last_caught_up_timestamp: int
    """When the replica was last caught up with the leader (ms, leader's clock), -1 when unknown."""

    def __init__(
        self,
        *,
        replica_id: int = 0,
        replica_directory_id: uuid.UUID = ZERO_UUID,
        log_end_offset: int = 0,
        last_fetch_timestamp: int = -1,
        last_caught_up_timestamp: int = -1,
    ) -> None:
        self.replica_id = replica_id
        self.replica_directory_id = replica_directory_id
        self.log_end_offset = log_end_offset
        self.last_fetch_timestamp = last_fetch_timestamp
        self.last_caught_up_timestamp = last_caught_up_timestamp


class Node(Message):
    """The endpoints of the quorum's nodes."""

    __slots__ = ("node_id", "listeners")

    node_id: int
    """Node id."""
    listeners: list[Listener]
    """The node's controller listeners."""

    def __init__(self, *, node_id: int = 0, listeners: list[Listener] = MISSING) -> None:
        self.node_id = node_id
        self.listeners = [] if listeners is MISSING else listeners


class Listener(Message):
    """The node's controller listeners."""

    __slots__ = ("name", "host", "port")

    name: str
    """Listener name."""
    host: str
    """Host name."""
    port: int
    """Port."""

    def __init__(self, *, name: str = "", host: str = "", port: int = 0) -> None:
        self.name = name
        self.host = host
        self.port = port


# The schema the codecs are compiled from (nested structs first).
_PARTITION_DATA = StructDef("PartitionData", [Field("partition_index", INT32)], PartitionData)
_TOPIC_DATA = StructDef(
    "TopicData",
    [Field("topic_name", STRING), Field("partitions", array(_PARTITION_DATA))],
    TopicData,
)
_DESCRIBE_QUORUM_REQUEST = StructDef(
    "DescribeQuorumRequest", [Field("topics", array(_TOPIC_DATA))], DescribeQuorumRequest
)
_REPLICA_STATE = StructDef(
    "ReplicaState",
    [
        Field("replica_id", INT32),
        Field("replica_directory_id", UUID, "2+"),
        Field("log_end_offset", INT64),
        Field("last_fetch_timestamp", INT64, "1+", default=-1, ignorable=True),
        Field("last_caught_up_timestamp", INT64, "1+", default=-1, ignorable=True),
    ],
    ReplicaState,
)
_QUORUM_PARTITION_DATA = StructDef(
    "PartitionData",
    [
        Field("partition_index", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, "2+", nullable="2+", ignorable=True),
        Field("leader_id", INT32),
        Field("leader_epoch", INT32),
        Field("high_watermark", INT64),
        Field("current_voters", array(_REPLICA_STATE)),
        Field("observers", array(_REPLICA_STATE)),
    ],
    QuorumPartitionData,
)
_QUORUM_TOPIC_DATA = StructDef(
    "TopicData",
    [Field("topic_name", STRING), Field("partitions", array(_QUORUM_PARTITION_DATA))],
    QuorumTopicData,
)
_LISTENER = StructDef(
    "Listener",
    [Field("name", STRING, "2+"), Field("host", STRING, "2+"), Field("port", UINT16, "2+")],
    Listener,
)
_NODE = StructDef(
    "Node", [Field("node_id", INT32, "2+"), Field("listeners", array(_LISTENER), "2+")], Node
)
_DESCRIBE_QUORUM_RESPONSE = StructDef(
    "DescribeQuorumResponse",
    [
        Field("error_code", INT16),
        Field("error_message", STRING, "2+", nullable="2+", ignorable=True),
        Field("topics", array(_QUORUM_TOPIC_DATA)),
        Field("nodes", array(_NODE), "2+"),
    ],
    DescribeQuorumResponse,
)

DESCRIBE_QUORUM: Api[DescribeQuorumRequest, DescribeQuorumResponse] = Api(
    55,
    "DescribeQuorum",
    "0-2",
    "0+",
    _DESCRIBE_QUORUM_REQUEST,
    _DESCRIBE_QUORUM_RESPONSE,
    DescribeQuorumRequest,
    DescribeQuorumResponse,
)
"""DescribeQuorum (key 55), versions 0-2."""
