# Generated from kafka_async/protocol/definitions/list_groups.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""ListGroups: the groups a broker coordinates.

Versions 0-5, flexible 3+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import INT16, INT32, MISSING, STRING, Api, Field, Message, StructDef, array


class ListGroupsRequest(Message):
    """The ListGroups request (key 16)."""

    __slots__ = ("states_filter", "types_filter")

    states_filter: list[str]
    """Only groups in these states (empty for all)."""
    types_filter: list[str]
    """Only groups of these types: classic, consumer, share (empty for all)."""

    def __init__(
        self, *, states_filter: list[str] = MISSING, types_filter: list[str] = MISSING
    ) -> None:
        self.states_filter = [] if states_filter is MISSING else states_filter
        self.types_filter = [] if types_filter is MISSING else types_filter


class ListGroupsResponse(Message):
    """The ListGroups response (key 16)."""

    __slots__ = ("throttle_time_ms", "error_code", "groups")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    error_code: int
    """0, or the error (errors.py) for this entry."""
    groups: list[ListedGroup]
    """One entry per group."""

    def __init__(
        self, *, throttle_time_ms: int = 0, error_code: int = 0, groups: list[ListedGroup] = MISSING
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.error_code = error_code
        self.groups = [] if groups is MISSING else groups


class ListedGroup(Message):
    """One entry per group."""

    __slots__ = ("group_id", "protocol_type", "group_state", "group_type")

    group_id: str
    """Consumer group id."""
    protocol_type: str
    """The group's protocol type ('consumer' for consumer groups)."""
    group_state: str
    """The group's state (Stable, Empty, ...)."""
    group_type: str
    """Classic, consumer or share."""

    def __init__(
        self,
        *,
        group_id: str = "",
        protocol_type: str = "",
        group_state: str = "",
        group_type: str = "",
    ) -> None:
        self.group_id = group_id
        self.protocol_type = protocol_type
        self.group_state = group_state
        self.group_type = group_type


# The schema the codecs are compiled from (nested structs first).
_LIST_GROUPS_REQUEST = StructDef(
    "ListGroupsRequest",
    [Field("states_filter", array(STRING), "4+"), Field("types_filter", array(STRING), "5+")],
    ListGroupsRequest,
)
_LISTED_GROUP = StructDef(
    "ListedGroup",
    [
        Field("group_id", STRING),
        Field("protocol_type", STRING),
        Field("group_state", STRING, "4+", ignorable=True),
        Field("group_type", STRING, "5+", ignorable=True),
    ],
    ListedGroup,
)
_LIST_GROUPS_RESPONSE = StructDef(
    "ListGroupsResponse",
    [
        Field("throttle_time_ms", INT32, "1+", ignorable=True),
        Field("error_code", INT16),
        Field("groups", array(_LISTED_GROUP)),
    ],
    ListGroupsResponse,
)

LIST_GROUPS: Api[ListGroupsRequest, ListGroupsResponse] = Api(
    16,
    "ListGroups",
    "0-5",
    "3+",
    _LIST_GROUPS_REQUEST,
    _LIST_GROUPS_RESPONSE,
    ListGroupsRequest,
    ListGroupsResponse,
)
"""ListGroups (key 16), versions 0-5."""
