# Generated from kafka_async/protocol/definitions/describe_groups.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""DescribeGroups: state, members and assignments of classic groups.

Versions 0-5, flexible 5+; checked against Kafka 4.0's
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


class DescribeGroupsRequest(Message):
    """The DescribeGroups request (key 15)."""

    __slots__ = ("groups", "include_authorized_operations")

    groups: list[str]
    """Group ids."""
    include_authorized_operations: bool
    """Ask for the operations the caller may do on each group."""

    def __init__(
        self, *, groups: list[str] = MISSING, include_authorized_operations: bool = False
    ) -> None:
        self.groups = [] if groups is MISSING else groups
        self.include_authorized_operations = include_authorized_operations


class DescribeGroupsResponse(Message):
    """The DescribeGroups response (key 15)."""

    __slots__ = ("throttle_time_ms", "groups")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    groups: list[DescribedGroup]
    """One entry per group."""

    def __init__(
        self, *, throttle_time_ms: int = 0, groups: list[DescribedGroup] = MISSING
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.groups = [] if groups is MISSING else groups


class DescribedGroup(Message):
    """One entry per group."""

    __slots__ = (
        "error_code",
        "group_id",
        "group_state",
        "protocol_type",
        "protocol_data",
        "members",
        "authorized_operations",
    )

    error_code: int
    """0, or the error (errors.py) for this entry."""
    group_id: str
    """Consumer group id."""
    group_state: str
    """The group's state (Stable, Empty, ...)."""
    protocol_type: str
    """The group's protocol type (empty when the group is empty)."""
    protocol_data: str
    """The chosen assignor (empty when the group is empty)."""
    members: list[DescribedGroupMember]
    """The members."""
    authorized_operations: int
    """Bit field of the operations the caller may do on the group (-2^31: not asked)."""

    def __init__(
        self,
        *,
        error_code: int = 0,
        group_id: str = "",
        group_state: str = "",
        protocol_type: str = "",
        protocol_data: str = "",
        members: list[DescribedGroupMember] = MISSING,
        authorized_operations: int = -2147483648,
    ) -> None:
        self.error_code = error_code
        self.group_id = group_id
        self.group_state = group_state
        self.protocol_type = protocol_type
        self.protocol_data = protocol_data
        self.members = [] if members is MISSING else members
        self.authorized_operations = authorized_operations


class DescribedGroupMember(Message):
    """The members."""

    __slots__ = (
        "member_id",
        "group_instance_id",
        "client_id",
        "client_host",
        "member_metadata",
        "member_assignment",
    )

    member_id: str
    """The member id the coordinator gave this member (empty on first join)."""
    group_instance_id: str | None
    """Static membership id (KIP-345), or null for a dynamic member."""
    client_id: str
    """Client id of the member."""
    client_host: str
    """Host the member connects from."""
    member_metadata: bytes
    """The member's subscription (consumer protocol bytes)."""
    member_assignment: bytes
    """The member's assignment (consumer protocol bytes)."""

    def __init__(
        self,
        *,
        member_id: str = "",
        group_instance_id: str | None = None,
        client_id: str = "",
        client_host: str = "",
        member_metadata: bytes = b"",
        member_assignment: bytes = b"",
    ) -> None:
        self.member_id = member_id
        self.group_instance_id = group_instance_id
        self.client_id = client_id
        self.client_host = client_host
        self.member_metadata = member_metadata
        self.member_assignment = member_assignment


# The schema the codecs are compiled from (nested structs first).
_DESCRIBE_GROUPS_REQUEST = StructDef(
    "DescribeGroupsRequest",
    [Field("groups", array(STRING)), Field("include_authorized_operations", BOOL, "3+")],
    DescribeGroupsRequest,
)
_DESCRIBED_GROUP_MEMBER = StructDef(
    "DescribedGroupMember",
    [
        Field("member_id", STRING),
        Field("group_instance_id", STRING, "4+", nullable="4+", default=None, ignorable=True),
        Field("client_id", STRING),
        Field("client_host", STRING),
        Field("member_metadata", BYTES),
        Field("member_assignment", BYTES),
    ],
    DescribedGroupMember,
)
_DESCRIBED_GROUP = StructDef(
    "DescribedGroup",
    [
        Field("error_code", INT16),
        Field("group_id", STRING),
        Field("group_state", STRING),
        Field("protocol_type", STRING),
        Field("protocol_data", STRING),
        Field("members", array(_DESCRIBED_GROUP_MEMBER)),
        Field("authorized_operations", INT32, "3+", default=-2147483648),
    ],
    DescribedGroup,
)
_DESCRIBE_GROUPS_RESPONSE = StructDef(
    "DescribeGroupsResponse",
    [
        Field("throttle_time_ms", INT32, "1+", ignorable=True),
        Field("groups", array(_DESCRIBED_GROUP)),
    ],
    DescribeGroupsResponse,
)

DESCRIBE_GROUPS: Api[DescribeGroupsRequest, DescribeGroupsResponse] = Api(
    15,
    "DescribeGroups",
    "0-5",
    "5+",
    _DESCRIBE_GROUPS_REQUEST,
    _DESCRIBE_GROUPS_RESPONSE,
    DescribeGroupsRequest,
    DescribeGroupsResponse,
)
"""DescribeGroups (key 15), versions 0-5."""
