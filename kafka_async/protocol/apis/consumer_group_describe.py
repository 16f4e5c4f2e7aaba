# Generated from kafka_async/protocol/definitions/consumer_group_describe.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""ConsumerGroupDescribe: state, members and assignments of KIP-848 consumer groups.

Versions 0-1, flexible 0+; checked against Kafka 4.1's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

import uuid

from ..codec import ZERO_UUID
from ..schema import (
    BOOL,
    INT8,
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


class ConsumerGroupDescribeRequest(Message):
    """The ConsumerGroupDescribe request (key 69)."""

    __slots__ = ("group_ids", "include_authorized_operations")

    group_ids: list[str]
    """Group ids."""
    include_authorized_operations: bool
    """Ask for the operations the caller may do on each group."""

    def __init__(
        self, *, group_ids: list[str] = MISSING, include_authorized_operations: bool = False
    ) -> None:
        self.group_ids = [] if group_ids is MISSING else group_ids
        self.include_authorized_operations = include_authorized_operations


class ConsumerGroupDescribeResponse(Message):
    """The ConsumerGroupDescribe response (key 69)."""

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
    """0, or the error for this group."""
    error_message: str | None
    """The broker's description of the error, or null."""
    group_id: str
    """Group id."""
    group_state: str
    """The group's state (Empty, Assigning, Reconciling, Stable, Dead)."""
    group_epoch: int
    """The group's epoch."""
    assignment_epoch: int
    """The epoch of the target assignment."""
    assignor_name: str
    """The assignor the group uses."""
    members: list[Member]
    """The members."""
    authorized_operations: int
    """Bit field of the operations the caller may do on the group (-2^31: not asked)."""

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
    """The members."""

    __slots__ = (
        "member_id",
        "instance_id",
        "rack_id",
        "member_epoch",
        "client_id",
        "client_host",
        "subscribed_topic_names",
        "subscribed_topic_regex",
        "assignment",
        "target_assignment",
        "member_type",
    )

    member_id: str
    """Member id."""
    instance_id: str | None
    """Static membership id, or null."""
    rack_id: str | None
    """The member's rack, or null."""
    member_epoch: int
    """The member's epoch."""
    client_id: str
    """Client id of the member."""
    client_host: str
    """Host the member connects from."""
    subscribed_topic_names: list[str]
    """Topics the member subscribes to."""
    subscribed_topic_regex: str | None
    """The member's subscription regular expression, or null."""
    assignment: Assignment
    """The partitions the member owns now."""
    target_assignment: Assignment
    """The partitions the member will own once reconciled."""
    member_type: int
    """0 classic member (upgraded group), 1 consumer member, -1 unknown."""

    def __init__(
        self,
        *,
        member_id: str = "",
        instance_id: str | None = None,
        rack_id: str | None = None,
        member_epoch: int = 0,
        client_id: str = "",
        client_host: str = "",
        subscribed_topic_names: list[str] = MISSING,
        subscribed_topic_regex: str | None = None,
        assignment: Assignment = MISSING,
        target_assignment: Assignment = MISSING,
        member_type: int = -1,
    ) -> None:
        self.member_id = member_id
        self.instance_id = instance_id
        self.rack_id = rack_id
        self.member_epoch = member_epoch
        self.client_id = client_id
        self.client_host = client_host
        self.subscribed_topic_names = (
            [] if subscribed_topic_names is MISSING else subscribed_topic_names
        )
        self.subscribed_topic_regex = subscribed_topic_regex
        self.assignment = Assignment() if assignment is MISSING else assignment
        self.target_assignment = Assignment() if target_assignment is MISSING else target_assignment
        self.member_type = member_type


class Assignment(Message):
    """The partitions the member owns now."""

    __slots__ = ("topic_partitions",)

    topic_partitions: list[TopicPartitions]
    """The partitions, grouped by topic."""

    def __init__(self, *, topic_partitions: list[TopicPartitions] = MISSING) -> None:
        self.topic_partitions = [] if topic_partitions is MISSING else topic_partitions


class TopicPartitions(Message):
    """The partitions, grouped by topic."""

    __slots__ = ("topic_id", "topic_name", "partitions")

    topic_id: uuid.UUID
    """The topic's UUID."""
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
_CONSUMER_GROUP_DESCRIBE_REQUEST = StructDef(
    "ConsumerGroupDescribeRequest",
    [Field("group_ids", array(STRING)), Field("include_authorized_operations", BOOL)],
    ConsumerGroupDescribeRequest,
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
        Field("instance_id", STRING, nullable="0+", default=None),
        Field("rack_id", STRING, nullable="0+", default=None),
        Field("member_epoch", INT32),
        Field("client_id", STRING),
        Field("client_host", STRING),
        Field("subscribed_topic_names", array(STRING)),
        Field("subscribed_topic_regex", STRING, nullable="0+", default=None),
        Field("assignment", _ASSIGNMENT),
        Field("target_assignment", _ASSIGNMENT),
        Field("member_type", INT8, "1+", default=-1, ignorable=True),
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
_CONSUMER_GROUP_DESCRIBE_RESPONSE = StructDef(
    "ConsumerGroupDescribeResponse",
    [Field("throttle_time_ms", INT32), Field("groups", array(_DESCRIBED_GROUP))],
    ConsumerGroupDescribeResponse,
)

CONSUMER_GROUP_DESCRIBE: Api[ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse] = Api(
    69,
    "ConsumerGroupDescribe",
    "0-1",
    "0+",
    _CONSUMER_GROUP_DESCRIBE_REQUEST,
    _CONSUMER_GROUP_DESCRIBE_RESPONSE,
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
)
"""ConsumerGroupDescribe (key 69), versions 0-1."""
