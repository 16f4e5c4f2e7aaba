# Generated from kafka_async/protocol/definitions/metadata.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""Metadata: the cluster's brokers, topics, partitions and their leaders.

Versions 0-13, flexible 9+; checked against Kafka 4.1's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

import uuid

from ..codec import ZERO_UUID
from ..schema import (
    BOOL,
    INT16,
    INT32,
    MISSING,
    STRING,
    UUID,
    Api,
    Field,
    Message,
    StructDef,
    array,
)


class MetadataRequest(Message):
    """The Metadata request (key 3)."""

    __slots__ = (
        "topics",
        "allow_auto_topic_creation",
        "include_cluster_authorized_operations",
        "include_topic_authorized_operations",
    )

    topics: list[MetadataRequestTopic] | None
    """Topics to describe; null for every topic, empty for none."""
    allow_auto_topic_creation: bool
    """Let the broker create missing topics (if it is configured to)."""
    include_cluster_authorized_operations: bool
    """Ask for the operations the caller may do on the cluster (v8-10)."""
    include_topic_authorized_operations: bool
    """Ask for the operations the caller may do on each topic."""

    def __init__(
        self,
        *,
        topics: list[MetadataRequestTopic] | None = MISSING,
        allow_auto_topic_creation: bool = True,
        include_cluster_authorized_operations: bool = False,
        include_topic_authorized_operations: bool = False,
    ) -> None:
        self.topics = [] if topics is MISSING else topics
        self.allow_auto_topic_creation = allow_auto_topic_creation
        self.include_cluster_authorized_operations = include_cluster_authorized_operations
        self.include_topic_authorized_operations = include_topic_authorized_operations


class MetadataRequestTopic(Message):
    """Topics to describe; null for every topic, empty for none."""

    __slots__ = ("topic_id", "name")

    topic_id: uuid.UUID
    """The topic's UUID (zero when the topic is named instead)."""
    name: str | None
    """Topic name, or null to name it by id."""

    def __init__(self, *, topic_id: uuid.UUID = ZERO_UUID, name: str | None = "") -> None:
        self.topic_id = topic_id
        self.name = name


class MetadataResponse(Message):
    """The Metadata response (key 3)."""

    __slots__ = (
        "throttle_time_ms",
        "brokers",
        "cluster_id",
        "controller_id",
        "topics",
        "cluster_authorized_operations",
        "error_code",
    )

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    brokers: list[MetadataResponseBroker]
    """The live brokers."""
    cluster_id: str | None
    """The cluster's id."""
    controller_id: int
    """Broker id of the active controller."""
    topics: list[MetadataResponseTopic]
    """One entry per topic."""
    cluster_authorized_operations: int
    """Bit field of the operations the caller may do on the cluster (-2^31: not asked)."""
    error_code: int
    """The top-level error (v13+): REBOOTSTRAP_REQUIRED asks the client to rebootstrap (KIP-1102).
    """

    def __init__(
        self,
        *,
        throttle_time_ms: int = 0,
        brokers: list[MetadataResponseBroker] = MISSING,
        cluster_id: str | None = None,
        controller_id: int = -1,
        topics: list[MetadataResponseTopic] = MISSING,
        cluster_authorized_operations: int = -2147483648,
        error_code: int = 0,
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.brokers = [] if brokers is MISSING else brokers
        self.cluster_id = cluster_id
        self.controller_id = controller_id
        self.topics = [] if topics is MISSING else topics
        self.cluster_authorized_operations = cluster_authorized_operations
        self.error_code = error_code


class MetadataResponseBroker(Message):
    """The live brokers."""

    __slots__ = ("node_id", "host", "port", "rack")

    node_id: int
    """Broker id."""
    host: str
    """Host name or address."""
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


class MetadataResponseTopic(Message):
    """One entry per topic."""

    __slots__ = (
        "error_code",
        "name",
        "topic_id",
        "is_internal",
        "partitions",
        "topic_authorized_operations",
    )

    error_code: int
    """0, or the error (errors.py) for this entry."""
    name: str | None
    """Topic name, or null."""
    topic_id: uuid.UUID
    """The topic's UUID (zero when the topic is named instead)."""
    is_internal: bool
    """Whether the topic is internal (__consumer_offsets, ...)."""
    partitions: list[MetadataResponsePartition]
    """One entry per partition."""
    topic_authorized_operations: int
    """Bit field of the operations the caller may do on the topic (-2^31: not asked)."""

    def __init__(
        self,
        *,
        error_code: int = 0,
        name: str | None = "",
        topic_id: uuid.UUID = ZERO_UUID,
        is_internal: bool = False,
        partitions: list[MetadataResponsePartition] = MISSING,
        topic_authorized_operations: int = -2147483648,
    ) -> None:
        self.error_code = error_code
        self.name = name
        self.topic_id = topic_id
        self.is_internal = is_internal
        self.partitions = [] if partitions is MISSING else partitions
        self.topic_authorized_operations = topic_authorized_operations


class MetadataResponsePartition(Message):
    """One entry per partition."""

    __slots__ = (
        "error_code",
        "partition_index",
        "leader_id",
        "leader_epoch",
        "replica_nodes",
        "isr_nodes",
        "offline_replicas",
    )

    error_code: int
    """0, or the error (errors.py) for this entry."""
    partition_index: int
    """Partition index."""
    leader_id: int
    """Broker id of the leader, or -1."""
    leader_epoch: int
    """Leader epoch of the partition, or -1."""
    replica_nodes: list[int]
    """Broker ids of the replicas."""
    isr_nodes: list[int]
    """Broker ids of the in-sync replicas."""
    offline_replicas: list[int]
    """Broker ids of the replicas that are offline."""

    def __init__(
        self,
        *,
        error_code: int = 0,
        partition_index: int = 0,
        leader_id: int = 0,
        leader_epoch: int = -1,
        replica_nodes: list[int] = MISSING,
        isr_nodes: list[int] = MISSING,
        offline_replicas: list[int] = MISSING,
    ) -> None:
        self.error_code = error_code
        self.partition_index = partition_index
        self.leader_id = leader_id
        self.leader_epoch = leader_epoch
        self.replica_nodes = [] if replica_nodes is MISSING else replica_nodes
        self.isr_nodes = [] if isr_nodes is MISSING else isr_nodes
        self.offline_replicas = [] if offline_replicas is MISSING else offline_replicas


# The schema the codecs are compiled from (nested structs first).
_METADATA_REQUEST_TOPIC = StructDef(
    "MetadataRequestTopic",
    [Field("topic_id", UUID, "10+", ignorable=True), Field("name", STRING, nullable="10+")],
    MetadataRequestTopic,
)
_METADATA_REQUEST = StructDef(
    "MetadataRequest",
    [
        Field("topics", array(_METADATA_REQUEST_TOPIC), nullable="1+"),
        Field("allow_auto_topic_creation", BOOL, "4+", default=True),
        Field("include_cluster_authorized_operations", BOOL, "8-10"),
        Field("include_topic_authorized_operations", BOOL, "8+"),
    ],
    MetadataRequest,
)
_METADATA_RESPONSE_BROKER = StructDef(
    "MetadataResponseBroker",
    [
        Field("node_id", INT32),
        Field("host", STRING),
        Field("port", INT32),
        Field("rack", STRING, "1+", nullable="1+", default=None, ignorable=True),
    ],
    MetadataResponseBroker,
)
_METADATA_RESPONSE_PARTITION = StructDef(
    "MetadataResponsePartition",
    [
        Field("error_code", INT16),
        Field("partition_index", INT32),
        Field("leader_id", INT32),
        Field("leader_epoch", INT32, "7+", default=-1, ignorable=True),
        Field("replica_nodes", array(INT32)),
        Field("isr_nodes", array(INT32)),
        Field("offline_replicas", array(INT32), "5+", ignorable=True),
    ],
    MetadataResponsePartition,
)
_METADATA_RESPONSE_TOPIC = StructDef(
    "MetadataResponseTopic",
    [
        Field("error_code", INT16),
        Field("name", STRING, nullable="12+"),
        Field("topic_id", UUID, "10+", ignorable=True),
        Field("is_internal", BOOL, "1+", ignorable=True),
        Field("partitions", array(_METADATA_RESPONSE_PARTITION)),
        Field("topic_authorized_operations", INT32, "8+", default=-2147483648),
    ],
    MetadataResponseTopic,
)
_METADATA_RESPONSE = StructDef(
    "MetadataResponse",
    [
        Field("throttle_time_ms", INT32, "3+", ignorable=True),
        Field("brokers", array(_METADATA_RESPONSE_BROKER)),
        Field("cluster_id", STRING, "2+", nullable="2+", default=None, ignorable=True),
        Field("controller_id", INT32, "1+", default=-1, ignorable=True),
        Field("topics", array(_METADATA_RESPONSE_TOPIC)),
        Field("cluster_authorized_operations", INT32, "8-10", default=-2147483648),
        Field("error_code", INT16, "13+", ignorable=True),
    ],
    MetadataResponse,
)

METADATA: Api[MetadataRequest, MetadataResponse] = Api(
    3,
    "Metadata",
    "0-13",
    "9+",
    _METADATA_REQUEST,
    _METADATA_RESPONSE,
    MetadataRequest,
    MetadataResponse,
)
"""Metadata (key 3), versions 0-13."""
