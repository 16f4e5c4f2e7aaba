# Generated from kafka_async/protocol/definitions/leave_group.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""LeaveGroup: leave a classic consumer group.

Versions 0-5, flexible 4+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import INT16, INT32, MISSING, STRING, Api, Field, Message, StructDef, array


class LeaveGroupRequest(Message):
    """The LeaveGroup request (key 13)."""

    __slots__ = ("group_id", "member_id", "members")

    group_id: str
    """Consumer group id."""
    member_id: str
    """The member leaving (up to v2)."""
    members: list[MemberIdentity]
    """The members leaving (v3+)."""

    def __init__(
        self, *, group_id: str = "", member_id: str = "", members: list[MemberIdentity] = MISSING
    ) -> None:
        self.group_id = group_id
        self.member_id = member_id
        self.members = [] if members is MISSING else members


class MemberIdentity(Message):
    """The members leaving (v3+)."""

    __slots__ = ("member_id", "group_instance_id", "reason")

    member_id: str
    """Member id (empty for a static member named by instance id)."""
    group_instance_id: str | None
    """Static membership id (KIP-345), or null for a dynamic member."""
    reason: str | None
    """Why the member leaves or rejoins (logged by the broker), or null."""

    def __init__(
        self,
        *,
        member_id: str = "",
        group_instance_id: str | None = None,
        reason: str | None = None,
    ) -> None:
        self.member_id = member_id
        self.group_instance_id = group_instance_id
        self.reason = reason


class LeaveGroupResponse(Message):
    """The LeaveGroup response (key 13)."""

    __slots__ = ("throttle_time_ms", "error_code", "members")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    error_code: int
    """0, or the error (errors.py) for this entry."""
    members: list[MemberResponse]
    """One result per member (v3+)."""

    def __init__(
        self,
        *,
        throttle_time_ms: int = 0,
        error_code: int = 0,
        members: list[MemberResponse] = MISSING,
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.error_code = error_code
        self.members = [] if members is MISSING else members


class MemberResponse(Message):
    """One result per member (v3+)."""

    __slots__ = ("member_id", "group_instance_id", "error_code")

    member_id: str
    """Member id."""
    group_instance_id: str | None
    """Static membership id (KIP-345), or null for a dynamic member."""
    error_code: int
    """0, or the error (errors.py) for this entry."""

    def __init__(
        self, *, member_id: str = "", group_instance_id: str | None = "", error_code: int = 0
    ) -> None:
        self.member_id = member_id
        self.group_instance_id = group_instance_id
        self.error_code = error_code


# The schema the codecs are compiled from (nested structs first).
_MEMBER_IDENTITY = StructDef(
    "MemberIdentity",
    [
        Field("member_id", STRING, "3+"),
        Field("group_instance_id", STRING, "3+", nullable="3+", default=None),
        Field("reason", STRING, "5+", nullable="5+", default=None, ignorable=True),
    ],
    MemberIdentity,
)
_LEAVE_GROUP_REQUEST = StructDef(
    "LeaveGroupRequest",
    [
        Field("group_id", STRING),
        Field("member_id", STRING, "0-2"),
        Field("members", array(_MEMBER_IDENTITY), "3+"),
    ],
    LeaveGroupRequest,
)
_MEMBER_RESPONSE = StructDef(
    "MemberResponse",
    [
        Field("member_id", STRING, "3+"),
        Field("group_instance_id", STRING, "3+", nullable="3+"),
        Field("error_code", INT16, "3+"),
    ],
    MemberResponse,
)
_LEAVE_GROUP_RESPONSE = StructDef(
    "LeaveGroupResponse",
    [
        Field("throttle_time_ms", INT32, "1+", ignorable=True),
        Field("error_code", INT16),
        Field("members", array(_MEMBER_RESPONSE), "3+"),
    ],
    LeaveGroupResponse,
)

LEAVE_GROUP: Api[LeaveGroupRequest, LeaveGroupResponse] = Api(
    13,
    "LeaveGroup",
    "0-5",
    "4+",
    _LEAVE_GROUP_REQUEST,
    _LEAVE_GROUP_RESPONSE,
    LeaveGroupRequest,
    LeaveGroupResponse,
)
"""LeaveGroup (key 13), versions 0-5."""
