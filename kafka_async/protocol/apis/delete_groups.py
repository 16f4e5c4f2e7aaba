# Generated from kafka_async/protocol/definitions/delete_groups.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""DeleteGroups: delete empty consumer groups.

Versions 0-2, flexible 2+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import INT16, INT32, MISSING, STRING, Api, Field, Message, StructDef, array


class DeleteGroupsRequest(Message):
    """The DeleteGroups request (key 42)."""

    __slots__ = ("groups_names",)

    groups_names: list[str]
    """Group ids."""

    def __init__(self, *, groups_names: list[str] = MISSING) -> None:
        self.groups_names = [] if groups_names is MISSING else groups_names


class DeleteGroupsResponse(Message):
    """The DeleteGroups response (key 42)."""

    __slots__ = ("throttle_time_ms", "results")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    results: list[DeletableGroupResult]
    """One result per group."""

    def __init__(
        self, *, throttle_time_ms: int = 0, results: list[DeletableGroupResult] = MISSING
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.results = [] if results is MISSING else results


class DeletableGroupResult(Message):
    """One result per group."""

    __slots__ = ("group_id", "error_code")

    group_id: str
    """Consumer group id."""
    error_code: int
    """0, or the error (errors.py) for this entry."""

    def __init__(self, *, group_id: str = "", error_code: int = 0) -> None:
        self.group_id = group_id
        self.error_code = error_code


# The schema the codecs are compiled from (nested structs first).
_DELETE_GROUPS_REQUEST = StructDef(
    "DeleteGroupsRequest", [Field("groups_names", array(STRING))], DeleteGroupsRequest
)
_DELETABLE_GROUP_RESULT = StructDef(
    "DeletableGroupResult",
    [Field("group_id", STRING), Field("error_code", INT16)],
    DeletableGroupResult,
)
_DELETE_GROUPS_RESPONSE = StructDef(
    "DeleteGroupsResponse",
    [Field("throttle_time_ms", INT32), Field("results", array(_DELETABLE_GROUP_RESULT))],
    DeleteGroupsResponse,
)

DELETE_GROUPS: Api[DeleteGroupsRequest, DeleteGroupsResponse] = Api(
    42,
    "DeleteGroups",
    "0-2",
    "2+",
    _DELETE_GROUPS_REQUEST,
    _DELETE_GROUPS_RESPONSE,
    DeleteGroupsRequest,
    DeleteGroupsResponse,
)
"""DeleteGroups (key 42), versions 0-2."""
