# Generated from kafka_async/protocol/definitions/find_coordinator.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""FindCoordinator: the broker that coordinates a group or a transactional id.

Versions 0-6, flexible 3+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import INT8, INT16, INT32, MISSING, STRING, Api, Field, Message, StructDef, array


class FindCoordinatorRequest(Message):
    """The FindCoordinator request (key 10)."""

    __slots__ = ("key", "key_type", "coordinator_keys")

    key: str
    """The group id or transactional id (up to v3)."""
    key_type: int
    """0 group, 1 transaction."""
    coordinator_keys: list[str]
    """The group ids or transactional ids (v4+)."""

    def __init__(
        self, *, key: str = "", key_type: int = 0, coordinator_keys: list[str] = MISSING
    ) -> None:
        self.key = key
        self.key_type = key_type
        self.coordinator_keys = [] if coordinator_keys is MISSING else coordinator_keys


class FindCoordinatorResponse(Message):
    """The FindCoordinator response (key 10)."""

    __slots__ = (
        "throttle_time_ms",
        "error_code",
        "error_message",
        "node_id",
        "host",
        "port",
        "coordinators",
    )

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    error_code: int
    """0, or the error (up to v3)."""
    error_message: str | None
    """The broker's description of the error, or null (up to v3)."""
    node_id: int
    """Broker id of the coordinator (up to v3)."""
    host: str
    """Host of the coordinator (up to v3)."""
    port: int
    """Port of the coordinator (up to v3)."""
    coordinators: list[Coordinator]
    """One entry per key (v4+)."""

    def __init__(
        self,
        *,
        throttle_time_ms: int = 0,
        error_code: int = 0,
        error_message: str | None = "",
        node_id: int = 0,
        host: str = "",
        port: int = 0,
        coordinators: list[Coordinator] = MISSING,
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.error_code = error_code
        self.error_message = error_message
        self.node_id = node_id
        self.host = host
        self.port = port
        self.coordinators = [] if coordinators is MISSING else coordinators


class Coordinator(Message):
    """One entry per key (v4+)."""

    __slots__ = ("key", "node_id", "host", "port", "error_code", "error_message")

    key: str
    """The key asked for."""
    node_id: int
    """Broker id of the coordinator."""
    host: str
    """Host of the coordinator."""
    port: int
    """Port of the coordinator."""
    error_code: int
    """0, or the error (errors.py) for this entry."""
    error_message: str | None
    """The broker's description of the error, or null."""

    def __init__(
        self,
        *,
        key: str = "",
        node_id: int = 0,
        host: str = "",
        port: int = 0,
        error_code: int = 0,
        error_message: str | None = "",
    ) -> None:
        self.key = key
        self.node_id = node_id
        self.host = host
        self.port = port
        self.error_code = error_code
        self.error_message = error_message


# The schema the codecs are compiled from (nested structs first).
_FIND_COORDINATOR_REQUEST = StructDef(
    "FindCoordinatorRequest",
    [
        Field("key", STRING, "0-3"),
        Field("key_type", INT8, "1+"),
        Field("coordinator_keys", array(STRING), "4+"),
    ],
    FindCoordinatorRequest,
)
_COORDINATOR = StructDef(
    "Coordinator",
    [
        Field("key", STRING, "4+"),
        Field("node_id", INT32, "4+"),
        Field("host", STRING, "4+"),
        Field("port", INT32, "4+"),
        Field("error_code", INT16, "4+"),
        Field("error_message", STRING, "4+", nullable="4+", ignorable=True),
    ],
    Coordinator,
)
_FIND_COORDINATOR_RESPONSE = StructDef(
    "FindCoordinatorResponse",
    [
        Field("throttle_time_ms", INT32, "1+", ignorable=True),
        Field("error_code", INT16, "0-3"),
        Field("error_message", STRING, "1-3", nullable="1-3", ignorable=True),
        Field("node_id", INT32, "0-3"),
        Field("host", STRING, "0-3"),
        Field("port", INT32, "0-3"),
        Field("coordinators", array(_COORDINATOR), "4+"),
    ],
    FindCoordinatorResponse,
)

FIND_COORDINATOR: Api[FindCoordinatorRequest, FindCoordinatorResponse] = Api(
    10,
    "FindCoordinator",
    "0-6",
    "3+",
    _FIND_COORDINATOR_REQUEST,
    _FIND_COORDINATOR_RESPONSE,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)
"""FindCoordinator (key 10), versions 0-6."""
