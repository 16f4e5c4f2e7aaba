# Generated from kafka_async/protocol/definitions/delete_acls.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""DeleteAcls: delete the ACLs matching filters.

Versions 0-3, flexible 2+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import INT8, INT16, INT32, MISSING, STRING, Api, Field, Message, StructDef, array


class DeleteAclsRequest(Message):
    """The DeleteAcls request (key 31)."""

    __slots__ = ("filters",)

    filters: list[DeleteAclsFilter]
    """Filters; every ACL matching one is deleted."""

    def __init__(self, *, filters: list[DeleteAclsFilter] = MISSING) -> None:
        self.filters = [] if filters is MISSING else filters


class DeleteAclsFilter(Message):
    """Filters; every ACL matching one is deleted."""

    __slots__ = (
        "resource_type_filter",
        "resource_name_filter",
        "pattern_type_filter",
        "principal_filter",
        "host_filter",
        "operation",
        "permission_type",
    )

    resource_type_filter: int
    """Resource type to match."""
    resource_name_filter: str | None
    """Resource name to match, or null for any."""
    pattern_type_filter: int
    """Resource pattern type to match (any, match, literal, prefixed)."""
    principal_filter: str | None
    """Principal to match, or null for any."""
    host_filter: str | None
    """Host to match, or null for any."""
    operation: int
    """ACL operation code (read, write, describe, ...)."""
    permission_type: int
    """ACL permission: 2 deny, 3 allow."""

    def __init__(
        self,
        *,
        resource_type_filter: int = 0,
        resource_name_filter: str | None = "",
        pattern_type_filter: int = 3,
        principal_filter: str | None = "",
        host_filter: str | None = "",
        operation: int = 0,
        permission_type: int = 0,
    ) -> None:
        self.resource_type_filter = resource_type_filter
        self.resource_name_filter = resource_name_filter
        self.pattern_type_filter = pattern_type_filter
        self.principal_filter = principal_filter
        self.host_filter = host_filter
        self.operation = operation
        self.permission_type = permission_type


class DeleteAclsResponse(Message):
    """The DeleteAcls response (key 31)."""

    __slots__ = ("throttle_time_ms", "filter_results")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    filter_results: list[DeleteAclsFilterResult]
    """One result per filter, in request order."""

    def __init__(
        self, *, throttle_time_ms: int = 0, filter_results: list[DeleteAclsFilterResult] = MISSING
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.filter_results = [] if filter_results is MISSING else filter_results


class DeleteAclsFilterResult(Message):
    """One result per filter, in request order."""

    __slots__ = ("error_code", "error_message", "matching_acls")

    error_code: int
    """0, or the error (errors.py) for this entry."""
    error_message: str | None
    """The broker's description of the error, or null."""
    matching_acls: list[DeleteAclsMatchingAcl]
    """The ACLs the filter deleted."""

    def __init__(
        self,
        *,
        error_code: int = 0,
        error_message: str | None = "",
        matching_acls: list[DeleteAclsMatchingAcl] = MISSING,
    ) -> None:
        self.error_code = error_code
        self.error_message = error_message
        self.matching_acls = [] if matching_acls is MISSING else matching_acls


class DeleteAclsMatchingAcl(Message):
    """The ACLs the filter deleted."""

    __slots__ = (
        "error_code",
        "error_message",
        "resource_type",
        "resource_name",
        "pattern_type",
        "principal",
        "host",
        "operation",
        "permission_type",
    )

    error_code: int
    """0, or the error (errors.py) for this entry."""
    error_message: str | None
    """The broker's description of the error, or null."""
    resource_type: int
    """Resource type code (topic 2, group 3, broker 4, ...)."""
    resource_name: str
    """Resource name."""
    pattern_type: int
    """Pattern type of the resource (literal or prefixed)."""
    principal: str
    """Principal, as 'User:name'."""
    host: str
    """Host the ACL applies to."""
    operation: int
    """ACL operation code (read, write, describe, ...)."""
    permission_type: int
    """ACL permission: 2 deny, 3 allow."""

    def __init__(
        self,
        *,
        error_code: int = 0,
        error_message: str | None = "",
        resource_type: int = 0,
        resource_name: str = "",
        pattern_type: int = 3,
        principal: str = "",
        host: str = "",
        operation: int = 0,
        permission_type: int = 0,
    ) -> None:
        self.error_code = error_code
        self.error_message = error_message
        self.resource_type = resource_type
        self.resource_name = resource_name
        self.pattern_type = pattern_type
        self.principal = principal
        self.host = host
        self.operation = operation
        self.permission_type = permission_type


# The schema the codecs are compiled from (nested structs first).
_DELETE_ACLS_FILTER = StructDef(
    "DeleteAclsFilter",
    [
        Field("resource_type_filter", INT8),
        Field("resource_name_filter", STRING, nullable="0+"),
        Field("pattern_type_filter", INT8, "1+", default=3),
        Field("principal_filter", STRING, nullable="0+"),
        Field("host_filter", STRING, nullable="0+"),
        Field("operation", INT8),
        Field("permission_type", INT8),
    ],
    DeleteAclsFilter,
)
_DELETE_ACLS_REQUEST = StructDef(
    "DeleteAclsRequest", [Field("filters", array(_DELETE_ACLS_FILTER))], DeleteAclsRequest
)
_DELETE_ACLS_MATCHING_ACL = StructDef(
    "DeleteAclsMatchingAcl",
    [
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),
        Field("resource_type", INT8),
        Field("resource_name", STRING),
        Field("pattern_type", INT8, "1+", default=3),
        Field("principal", STRING),
        Field("host", STRING),
        Field("operation", INT8),
        Field("permission_type", INT8),
    ],
    DeleteAclsMatchingAcl,
)
_DELETE_ACLS_FILTER_RESULT = StructDef(
    "DeleteAclsFilterResult",
    [
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),
        Field("matching_acls", array(_DELETE_ACLS_MATCHING_ACL)),
    ],
    DeleteAclsFilterResult,
)
_DELETE_ACLS_RESPONSE = StructDef(
    "DeleteAclsResponse",
    [Field("throttle_time_ms", INT32), Field("filter_results", array(_DELETE_ACLS_FILTER_RESULT))],
    DeleteAclsResponse,
)

DELETE_ACLS: Api[DeleteAclsRequest, DeleteAclsResponse] = Api(
    31,
    "DeleteAcls",
    "0-3",
    "2+",
    _DELETE_ACLS_REQUEST,
    _DELETE_ACLS_RESPONSE,
    DeleteAclsRequest,
    DeleteAclsResponse,
)
"""DeleteAcls (key 31), versions 0-3."""
