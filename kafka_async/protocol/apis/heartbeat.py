# Generated from kafka_async/protocol/definitions/heartbeat.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""Heartbeat: keep a classic group membership alive; learn of rebalances.

Versions 0-4, flexible 4+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import INT16, INT32, STRING, Api, Field, Message, StructDef


class HeartbeatRequest(Message):
    """The Heartbeat request (key 12)."""

    __slots__ = ("group_id", "generation_id", "member_id", "group_instance_id")

    group_id: str
    """Consumer group id."""
    generation_id: int
    """Group generation the member belongs to."""
    member_id: str
    """The member id the coordinator gave this member (empty on first join)."""
    group_instance_id: str | None
    """Static membership id (KIP-345), or null for a dynamic member."""

    def __init__(
        self,
        *,
        group_id: str = "",
        generation_id: int = 0,
        member_id: str = "",
        group_instance_id: str | None = None,
    ) -> None:
        self.group_id = group_id
        self.generation_id = generation_id
        self.member_id = member_id
        self.group_instance_id = group_instance_id


class HeartbeatResponse(Message):
    """The Heartbeat response (key 12)."""

    __slots__ = ("throttle_time_ms", "error_code")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    error_code: int
    """0, or the error (errors.py) for this entry."""

    def __init__(self, *, throttle_time_ms: int = 0, error_code: int = 0) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.error_code = error_code


# The schema the codecs are compiled from (nested structs first).
_HEARTBEAT_REQUEST = StructDef(
    "HeartbeatRequest",
    [
        Field("group_id", STRING),
        Field("generation_id", INT32),
        Field("member_id", STRING),
        Field("group_instance_id", STRING, "3+", nullable="3+", default=None),
    ],
    HeartbeatRequest,
)
_HEARTBEAT_RESPONSE = StructDef(
    "HeartbeatResponse",
    [Field("throttle_time_ms", INT32, "1+", ignorable=True), Field("error_code", INT16)],
    HeartbeatResponse,
)

HEARTBEAT: Api[HeartbeatRequest, HeartbeatResponse] = Api(
    12,
    "Heartbeat",
    "0-4",
    "4+",
    _HEARTBEAT_REQUEST,
    _HEARTBEAT_RESPONSE,
    HeartbeatRequest,
    HeartbeatResponse,
)
"""Heartbeat (key 12), versions 0-4."""
