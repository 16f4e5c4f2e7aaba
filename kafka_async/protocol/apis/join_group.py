# Generated from kafka_async/protocol/definitions/join_group.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""JoinGroup: join a classic consumer group (first step of a rebalance).

Versions 0-9, flexible 6+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import (
    BOOL,
    BYTES,
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


class JoinGroupRequest(Message):
    """The JoinGroup request (key 11)."""

    __slots__ = (
        "group_id",
        "session_timeout_ms",
        "rebalance_timeout_ms",
        "member_id",
        "group_instance_id",
        "protocol_type",
        "protocols",
        "reason",
    )

    group_id: str
    """Consumer group id."""
    session_timeout_ms: int
    """The member is removed if no heartbeat arrives within this."""
    rebalance_timeout_ms: int
    """How long the coordinator waits for members to rejoin."""
    member_id: str
    """The member id the coordinator gave this member (empty on first join)."""
    group_instance_id: str | None
    """Static membership id (KIP-345), or null for a dynamic member."""
    protocol_type: str
    """The group's protocol type ('consumer' for consumer groups)."""
    protocols: list[JoinGroupRequestProtocol]
    """The assignors this member supports, in order of preference."""
    reason: str | None
    """Why the member leaves or rejoins (logged by the broker), or null."""

    def __init__(
        self,
        *,
        group_id: str = "",
        session_timeout_ms: int = 0,
        rebalance_timeout_ms: int = -1,
        member_id: str = "",
        group_instance_id: str | None = None,
        protocol_type: str = "",
        protocols: list[JoinGroupRequestProtocol] = MISSING,
        reason: str | None = None,
    ) -> None:
        self.group_id = group_id
        self.session_timeout_ms = session_timeout_ms
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.member_id = member_id
        self.group_instance_id = group_instance_id
        self.protocol_type = protocol_type
        self.protocols = [] if protocols is MISSING else protocols
        self.reason = reason


class JoinGroupRequestProtocol(Message):
    """The assignors this member supports, in order of preference."""

    __slots__ = ("name", "metadata")

    name: str
    """Assignor name."""
    metadata: bytes
    """The member's subscription (consumer protocol bytes)."""

    def __init__(self, *, name: str = "", metadata: bytes = b"") -> None:
        self.name = name
        self.metadata = metadata


class JoinGroupResponse(Message):
    """The JoinGroup response (key 11)."""

    __slots__ = (
        "throttle_time_ms",
        "error_code",
        "generation_id",
        "protocol_type",
        "protocol_name",
        "leader",
        "skip_assignment",
        "member_id",
        "members",
    )

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    error_code: int
    """0, or the error (errors.py) for this entry."""
    generation_id: int
    """The new generation, or -1."""
    protocol_type: str | None
    """The group's protocol type, or null."""
    protocol_name: str | None
    """The chosen assignor, or null."""
    leader: str
    """Member id of the leader."""
    skip_assignment: bool
    """The leader must not assign (static leader rejoining, KIP-814)."""
    member_id: str
    """This member's id."""
    members: list[JoinGroupResponseMember]
    """Every member with its subscription (to the leader only)."""

    def __init__(
        self,
        *,
        throttle_time_ms: int = 0,
        error_code: int = 0,
        generation_id: int = -1,
        protocol_type: str | None = None,
        protocol_name: str | None = "",
        leader: str = "",
        skip_assignment: bool = False,
        member_id: str = "",
        members: list[JoinGroupResponseMember] = MISSING,
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.error_code = error_code
        self.generation_id = generation_id
        self.protocol_type = protocol_type
        self.protocol_name = protocol_name
        self.leader = leader
        self.skip_assignment = skip_assignment
        self.member_id = member_id
        self.members = [] if members is MISSING else members


class JoinGroupResponseMember(Message):
    """Every member with its subscription (to the leader only)."""

    __slots__ = ("member_id", "group_instance_id", "metadata")

    member_id: str
    """Member id."""
    group_instance_id: str | None
    """Static membership id (KIP-345), or null for a dynamic member."""
    metadata: bytes
    """The member's subscription (consumer protocol bytes)."""

    def __init__(
        self, *, member_id: str = "", group_instance_id: str | None = None, metadata: bytes = b""
    ) -> None:
        self.member_id = member_id
        self.group_instance_id = group_instance_id
        self.metadata = metadata


# The schema the codecs are compiled from (nested structs first).
_JOIN_GROUP_REQUEST_PROTOCOL = StructDef(
    "JoinGroupRequestProtocol",
    [Field("name", STRING), Field("metadata", BYTES)],
    JoinGroupRequestProtocol,
)
_JOIN_GROUP_REQUEST = StructDef(
    "JoinGroupRequest",
    [
        Field("group_id", STRING),
        Field("session_timeout_ms", INT32),
        Field("rebalance_timeout_ms", INT32, "1+", default=-1, ignorable=True),
        Field("member_id", STRING),
        Field("group_instance_id", STRING, "5+", nullable="5+", default=None),
        Field("protocol_type", STRING),
        Field("protocols", array(_JOIN_GROUP_REQUEST_PROTOCOL)),
        Field("reason", STRING, "8+", nullable="8+", default=None, ignorable=True),
    ],
    JoinGroupRequest,
)
_JOIN_GROUP_RESPONSE_MEMBER = StructDef(
    "JoinGroupResponseMember",
    [
        Field("member_id", STRING),
        Field("group_instance_id", STRING, "5+", nullable="5+", default=None, ignorable=True),
        Field("metadata", BYTES),
    ],
    JoinGroupResponseMember,
)
_JOIN_GROUP_RESPONSE = StructDef(
    "JoinGroupResponse",
    [
        Field("throttle_time_ms", INT32, "2+", ignorable=True),
        Field("error_code", INT16),
        Field("generation_id", INT32, default=-1),
        Field("protocol_type", STRING, "7+", nullable="7+", default=None, ignorable=True),
        Field("protocol_name", STRING, nullable="7+"),
        Field("leader", STRING),
        Field("skip_assignment", BOOL, "9+"),
        Field("member_id", STRING),
        Field("members", array(_JOIN_GROUP_RESPONSE_MEMBER)),
    ],
    JoinGroupResponse,
)

JOIN_GROUP: Api[JoinGroupRequest, JoinGroupResponse] = Api(
    11,
    "JoinGroup",
    "0-9",
    "6+",
    _JOIN_GROUP_REQUEST,
    _JOIN_GROUP_RESPONSE,
    JoinGroupRequest,
    JoinGroupResponse,
)
"""JoinGroup (key 11), versions 0-9."""
