# Generated from kafka_async/protocol/definitions/describe_cluster.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""DescribeCluster: the cluster's id, controller and brokers.

Versions 0-1, flexible 0+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import (
    BOOL,
    INT8,
    INT16,
    INT32,
    MISSING,
    STRING,
    Api,
    Field,
    Message,
    StructDef,
    array,
)


class DescribeClusterRequest(Message):
    """The DescribeCluster request (key 60)."""

    __slots__ = ("include_cluster_authorized_operations", "endpoint_type")

    include_cluster_authorized_operations: bool
    """Ask for the operations the caller may do on the cluster."""
    endpoint_type: int
    """1 broker endpoints, 2 controller endpoints."""

    def __init__(
        self, *, include_cluster_authorized_operations: bool = False, endpoint_type: int = 1
    ) -> None:
        self.include_cluster_authorized_operations = include_cluster_authorized_operations
        self.endpoint_type = endpoint_type


class DescribeClusterResponse(Message):
    """The DescribeCluster response (key 60)."""

    __slots__ = (
        "throttle_time_ms",
        "error_code",
        "error_message",
        "endpoint_type",
        "cluster_id",
        "controller_id",
        "brokers",
        "cluster_authorized_operations",
    )

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    error_code: int
    """0, or a request-level error."""
    error_message: str | None
    """The broker's description of the error, or null."""
    endpoint_type: int
    """1 broker endpoints, 2 controller endpoints."""
    cluster_id: str
    """The cluster's id."""
    controller_id: int
    """Broker id of the active controller."""
    brokers: list[DescribeClusterBroker]
    """The brokers (or controllers, by endpoint_type)."""
    cluster_authorized_operations: int
    """Bit field of the operations the caller may do on the cluster (-2^31: not asked)."""

    def __init__(
        self,
        *,
        throttle_time_ms: int = 0,
        error_code: int = 0,
        error_message: str | None = None,
        endpoint_type: int = 1,
        cluster_id: str = "",
        controller_id: int = -1,
        brokers: list[DescribeClusterBroker] = MISSING,
        cluster_authorized_operations: int = -2147483648,
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.error_code = error_code
        self.error_message = error_message
        self.endpoint_type = endpoint_type
        self.cluster_id = cluster_id
        self.controller_id = controller_id
        self.brokers = [] if brokers is MISSING else brokers
        self.cluster_authorized_operations = cluster_authorized_operations


class DescribeClusterBroker(Message):
    """The brokers (or controllers, by endpoint_type)."""

    __slots__ = ("broker_id", "host", "port", "rack")

    broker_id: int
    """Broker id."""
    host: str
    """Host name or address."""
    port: int
    """Port."""
    rack: str | None
    """Rack id, or null."""

    def __init__(
        self, *, broker_id: int = 0, host: str = "", port: int = 0, rack: str | None = None
    ) -> None:
        self.broker_id = broker_id
        self.host = host
        self.port = port
        self.rack = rack


# The schema the codecs are compiled from (nested structs first).
_DESCRIBE_CLUSTER_REQUEST = StructDef(
    "DescribeClusterRequest",
    [
        Field("include_cluster_authorized_operations", BOOL),
        Field("endpoint_type", INT8, "1+", default=1),
    ],
    DescribeClusterRequest,
)
_DESCRIBE_CLUSTER_BROKER = StructDef(
    "DescribeClusterBroker",
    [
        Field("broker_id", INT32),
        Field("host", STRING),
        Field("port", INT32),
        Field("rack", STRING, nullable="0+", default=None),
    ],
    DescribeClusterBroker,
)
_DESCRIBE_CLUSTER_RESPONSE = StructDef(
    "DescribeClusterResponse",
    [
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field("endpoint_type", INT8, "1+", default=1),
        Field("cluster_id", STRING),
        Field("controller_id", INT32, default=-1),
        Field("brokers", array(_DESCRIBE_CLUSTER_BROKER)),
        Field("cluster_authorized_operations", INT32, default=-2147483648),
    ],
    DescribeClusterResponse,
)

DESCRIBE_CLUSTER: Api[DescribeClusterRequest, DescribeClusterResponse] = Api(
    60,
    "DescribeCluster",
    "0-1",
    "0+",
    _DESCRIBE_CLUSTER_REQUEST,
    _DESCRIBE_CLUSTER_RESPONSE,
    DescribeClusterRequest,
    DescribeClusterResponse,
)
"""DescribeCluster (key 60), versions 0-1."""
