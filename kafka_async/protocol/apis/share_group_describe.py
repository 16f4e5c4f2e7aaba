# Generated from kafka_async/protocol/definitions/share_group_describe.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""ShareGroupDescribe: the state, members and assignments of share groups (KIP-932).

Versions 1, flexible 0+; checked against Kafka 4.1's
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


class ShareGroupDescribeRequest(Message):
    """The ShareGroupDescribe request (key 77)."""

    __slots__ = ("group_ids", "include_authorized_operations")

    group_ids: list[str]
    """The share groups to describe."""
    include_authorized_operations: bool
    """Whether to return the operations the caller may perform."""

    def __init__(
        self, *, group_ids: list[str] = MISSING, include_authorized_operations: bool = False
    ) -> None:
        self.group_ids = [] if group_ids is MISSING else group_ids
        self.include_authorized_operations = include_authorized_operations


class ShareGroupDescribeResponse(Message):
    """The ShareGroupDescribe response (key 77)."""

    __slots__ = ("throttle_time_ms", "groups")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    groups: list[DescribedGroup]
    """One entry per group asked about."""

    def __init__(
        self, *, throttle_time_ms: int = 0, groups: list[DescribedGroup] = MISSING
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.groups = [] if groups is MISSING else groups


class DescribedGroup(Message):
    """One entry per group asked about."""

    __slots__ = (
        "error_code",
        "error_message",
        "group_id",
        "group_state",
        "group_epoch",
        "assignment_epoch",
        "assignor_name",
        "members",
        "authorized_operations",
    )

    error_code: int
    """0, or the error (errors.py) for this group."""
    error_message: str | None
    """The broker's description of the error, or null."""
    group_id: str
    """Group id."""
    group_state: str
    """The group's state (Empty, Stable, Dead, ...)."""
    group_epoch: int
    """The group's epoch."""
    assignment_epoch: int
    """The epoch of the group's target assignment."""
    assignor_name: str
    """The broker-side assignor the group uses."""
    members: list[Member]
    """The group's members."""
    authorized_operations: int
    """Bit field of the operations the caller may perform, or the minimum int32 when not asked."""

    def __init__(
        self,
        *,
        error_code: int = 0,
        error_message: str | None = None,
        group_id: str = "",
        group_state: str = "",
        group_epoch: int = 0,
        assignment_epoch: int = 0,
        assignor_name: str = "",
        members: list[Member] = MISSING,
        authorized_operations: int = -2147483648,
    ) -> None:
        self.error_code = error_code
        self.error_message = error_message
        self.group_id = group_id
        self.group_state = group_state
        self.group_epoch = group_epoch
        self.assignment_epoch = assignment_epoch
        self.assignor_name = assignor_name
        self.members = [] if members is MISSING else members
        self.authorized_operations = authorized_operations


class Member(Message):
    """The group's members."""

    __slots__ = (
        "member_id",
        "rack_id",
        "member_epoch",
        "client_id",
        "client_host",
        "subscribed_topic_names",
        "assignment",
    )

    member_id: str
    """Member id."""
    rack_id: str | None
    """The member's rack, or null."""
    member_epoch: int
    """The member's epoch."""
    client_id: str
    """The member's client id."""
    client_host: str
    """The member's host."""
    subscribed_topic_names: list[str]
    """The topics the member subscribes to."""
    assignment: Assignment
    """The partitions assigned to the member."""

    def __init__(
        self,
        *,
        member_id: str = "",
        rack_id: str | None = None,
        member_epoch: int = 0,
        client_id: str = "",
        client_host: str = "",
        subscribed_topic_names: list[str] = MISSING,
        assignment: Assignment = MISSING,
    ) -> None:
        self.member_id = member_id
        self.rack_id = rack_id
        self.member_epoch = member_epoch
        self.client_id = client_id
        self.client_host = client_host
        self.subscribed_topic_names = (
            [] if subscribed_topic_names is MISSING else subscribed_topic_names
        )
        self.assignment = Assignment() if assignment is MISSING else assignment


class Assignment(Message):
    """The partitions assigned to the member."""

    __slots__ = ("topic_partitions",)

    topic_partitions: list[TopicPartitions]
    """Assigned partitions by topic."""

    def __init__(self, *, topic_partitions: list[TopicPartitions] = MISSING) -> None:
        self.topic_partitions = [] if topic_partitions is MISSING else topic_partitions


class TopicPartitions(Message):
    """Assigned partitions by topic."""

    __slots__ = ("topic_id", "topic_name", "partitions")

    topic_id: uuid.UUID
    """Topic id."""
    topic_name: str
    """Topic name."""
    partitions: list[int]
    """Partition indexes."""

    def __init__(
        self,
        *,
        topic_id: uuid.UUID = ZERO_UUID,
        topic_name: str = "",
        partitions: list[int] = MISSING,
    ) -> None:
        self.topic_id = topic_id
        self.topic_name = topic_name
        self.partitions = [] if partitions is MISSING else partitions


# The schema the codecs are compiled from (nested structs first).
_SHARE_GROUP_DESCRIBE_REQUEST = StructDef(
    "ShareGroupDescribeRequest",
    [Field("group_ids", array(STRING)), Field("include_authorized_operations", BOOL)],
    ShareGroupDescribeRequest,
)
_TOPIC_PARTITIONS = StructDef(
    "TopicPartitions",
    [Field("topic_id", UUID), Field("topic_name", STRING), Field("partitions", array(INT32))],
    TopicPartitions,
)
_ASSIGNMENT = StructDef(
    "Assignment", [Field("topic_partitions", array(_TOPIC_PARTITIONS))], Assignment
)
_MEMBER = StructDef(
    "Member",
    [
        Field("member_id", STRING),
        Field("rack_id", STRING, nullable="0+", default=None),
        Field("member_epoch", INT32),
        Field("client_id", STRING),
        Field("client_host", STRING),
        Field("subscribed_topic_names", array(STRING)),
        Field("assignment", _ASSIGNMENT),
    ],
    Member,
)
_DESCRIBED_GROUP = StructDef(
    "DescribedGroup",
    [
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field("group_id", STRING),
        Field("group_state", STRING),
        Field("group_epoch", INT32),
        Field("assignment_epoch", INT32),
        Field("assignor_name", STRING),
        Field("members", array(_MEMBER)),
        Field("authorized_operations", INT32, default=-2147483648),
    ],
    DescribedGroup,
)
_SHARE_GROUP_DESCRIBE_RESPONSE = StructDef(
    "ShareGroupDescribeResponse",
    [Field("throttle_time_ms", INT32), Field("groups", array(_DESCRIBED_GROUP))],
    ShareGroupDescribeResponse,
)

SHARE_GROUP_DESCRIBE: Api[ShareGroupDescribeRequest, ShareGroupDescribeResponse] = Api(
    77,
    "ShareGroupDescribe",
    "1",
    "0+",
    _SHARE_GROUP_DESCRIBE_REQUEST,
    _SHARE_GROUP_DESCRIBE_RESPONSE,
    ShareGroupDescribeRequest,
    ShareGroupDescribeResponse,
)
"""ShareGroupDescribe (key 77), versions 1."""
