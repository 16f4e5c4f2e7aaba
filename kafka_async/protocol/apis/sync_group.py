# Generated from kafka_async/protocol/definitions/sync_group.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""SyncGroup: the leader hands out the assignment; every member receives its own.

Versions 0-5, flexible 4+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import BYTES, INT16, INT32, MISSING, STRING, Api, Field, Message, StructDef, array


class SyncGroupRequest(Message):
    """The SyncGroup request (key 14)."""

    __slots__ = (
        "group_id",
        "generation_id",
        "member_id",
        "group_instance_id",
        "protocol_type",
        "protocol_name",
        "assignments",
    )

    group_id: str
    """Consumer group id."""
    generation_id: int
    """Group generation the member belongs to."""
    member_id: str
    """The member id the coordinator gave this member (empty on first join)."""
    group_instance_id: str | None
    """Static membership id (KIP-345), or null for a dynamic member."""
    protocol_type: str | None
    """The group's protocol type, or null."""
    protocol_name: str | None
    """The chosen assignor, or null."""
    assignments: list[SyncGroupRequestAssignment]
    """The leader's assignment of every member (empty from followers)."""

    def __init__(
        self,
        *,
        group_id: str = "",
        generation_id: int = 0,
        member_id: str = "",
        group_instance_id: str | None = None,
        protocol_type: str | None = None,
        protocol_name: str | None = None,
        assignments: list[SyncGroupRequestAssignment] = MISSING,
    ) -> None:
        self.group_id = group_id
        self.generation_id = generation_id
        self.member_id = member_id
        self.group_instance_id = group_instance_id
        self.protocol_type = protocol_type
        self.protocol_name = protocol_name
        self.assignments = [] if assignments is MISSING else assignments


class SyncGroupRequestAssignment(Message):
    """The leader's assignment of every member (empty from followers)."""

    __slots__ = ("member_id", "assignment")

    member_id: str
    """Member id."""
    assignment: bytes
    """The member's assignment (consumer protocol bytes)."""

    def __init__(self, *, member_id: str = "", assignment: bytes = b"") -> None:
        self.member_id = member_id
        self.assignment = assignment


class SyncGroupResponse(Message):
    """The SyncGroup response (key 14)."""

    __slots__ = ("throttle_time_ms", "error_code", "protocol_type", "protocol_name", "assignment")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    error_code: int
    """0, or the error (errors.py) for this entry."""
    protocol_type: str | None
    """The group's protocol type, or null."""
    protocol_name: str | None
    """The chosen assignor, or null."""
    assignment: bytes
    """This member's assignment (consumer protocol bytes)."""

    def __init__(
        self,
        *,
        throttle_time_ms: int = 0,
        error_code: int = 0,
        protocol_type: str | None = None,
        protocol_name: str | None = None,
        assignment: bytes = b"",
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.error_code = error_code
        self.protocol_type = protocol_type
        self.protocol_name = protocol_name
        self.assignment = assignment


# The schema the codecs are compiled from (nested structs first).
_SYNC_GROUP_REQUEST_ASSIGNMENT = StructDef(
    "SyncGroupRequestAssignment",
    [Field("member_id", STRING), Field("assignment", BYTES)],
    SyncGroupRequestAssignment,
)
_SYNC_GROUP_REQUEST = StructDef(
    "SyncGroupRequest",
    [
        Field("group_id", STRING),
        Field("generation_id", INT32),
        Field("member_id", STRING),
        Field("group_instance_id", STRING, "3+", nullable="3+", default=None),
        Field("protocol_type", STRING, "5+", nullable="5+", default=None, ignorable=True),
        Field("protocol_name", STRING, "5+", nullable="5+", default=None, ignorable=True),
        Field("assignments", array(_SYNC_GROUP_REQUEST_ASSIGNMENT)),
    ],
    SyncGroupRequest,
)
_SYNC_GROUP_RESPONSE = StructDef(
    "SyncGroupResponse",
    [
        Field("throttle_time_ms", INT32, "1+", ignorable=True),
        Field("error_code", INT16),
        Field("protocol_type", STRING, "5+", nullable="5+", default=None, ignorable=True),
        Field("protocol_name", STRING, "5+", nullable="5+", default=None, ignorable=True),
        Field("assignment", BYTES),
    ],
    SyncGroupResponse,
)

SYNC_GROUP: Api[SyncGroupRequest, SyncGroupResponse] = Api(
    14,
    "SyncGroup",
    "0-5",
    "4+",
    _SYNC_GROUP_REQUEST,
    _SYNC_GROUP_RESPONSE,
    SyncGroupRequest,
    SyncGroupResponse,
)
"""SyncGroup (key 14), versions 0-5."""
