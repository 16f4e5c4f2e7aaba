# Generated from kafka_async/protocol/definitions/describe_acls.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""DescribeAcls: the ACLs matching a filter.

Versions 0-3, flexible 2+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import INT8, INT16, INT32, MISSING, STRING, Api, Field, Message, StructDef, array


class DescribeAclsRequest(Message):
    """The DescribeAcls request (key 29)."""

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


class DescribeAclsResponse(Message):
    """The DescribeAcls response (key 29)."""

    __slots__ = ("throttle_time_ms", "error_code", "error_message", "resources")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    error_code: int
    """0, or the error (errors.py) for this entry."""
    error_message: str | None
    """The broker's description of the error, or null."""
    resources: list[DescribeAclsResource]
    """The matching ACLs, grouped by resource."""

    def __init__(
        self,
        *,
        throttle_time_ms: int = 0,
        error_code: int = 0,
        error_message: str | None = "",
        resources: list[DescribeAclsResource] = MISSING,
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.error_code = error_code
        self.error_message = error_message
        self.resources = [] if resources is MISSING else resources


class DescribeAclsResource(Message):
    """The matching ACLs, grouped by resource."""

    __slots__ = ("resource_type", "resource_name", "pattern_type", "acls")

    resource_type: int
    """Resource type code (topic 2, group 3, broker 4, ...)."""
    resource_name: str
    """Resource name."""
    pattern_type: int
    """Pattern type of the resource (literal or prefixed)."""
    acls: list[AclDescription]
    """The ACLs on this resource."""

    def __init__(
        self,
        *,
        resource_type: int = 0,
        resource_name: str = "",
        pattern_type: int = 3,
        acls: list[AclDescription] = MISSING,
    ) -> None:
        self.resource_type = resource_type
        self.resource_name = resource_name
        self.pattern_type = pattern_type
        self.acls = [] if acls is MISSING else acls


class AclDescription(Message):
    """The ACLs on this resource."""

    __slots__ = ("principal", "host", "operation", "permission_type")

    principal: str
    """Principal, as 'User:name'."""
    host: str
    """Host the ACL applies to ('*' for any)."""
    operation: int
    """ACL operation code (read, write, describe, ...)."""
    permission_type: int
    """ACL permission: 2 deny, 3 allow."""

    def __init__(
        self, *, principal: str = "", host: str = "", operation: int = 0, permission_type: int = 0
    ) -> None:
        self.principal = principal
        self.host = host
        self.operation = operation
        self.permission_type = permission_type


# The schema the codecs are compiled from (nested structs first).
_DESCRIBE_ACLS_REQUEST = StructDef(
    "DescribeAclsRequest",
    [
        Field("resource_type_filter", INT8),
        Field("resource_name_filter", STRING, nullable="0+"),
        Field("pattern_type_filter", INT8, "1+", default=3),
        Field("principal_filter", STRING, nullable="0+"),
        Field("host_filter", STRING, nullable="0+"),
        Field("operation", INT8),
        Field("permission_type", INT8),
    ],
    DescribeAclsRequest,
)
_ACL_DESCRIPTION = StructDef(
    "AclDescription",
    [
        Field("principal", STRING),
        Field("host", STRING),
        Field("operation", INT8),
        Field("permission_type", INT8),
    ],
    AclDescription,
)
_DESCRIBE_ACLS_RESOURCE = StructDef(
    "DescribeAclsResource",
    [
        Field("resource_type", INT8),
        Field("resource_name", STRING),
        Field("pattern_type", INT8, "1+", default=3),
        Field("acls", array(_ACL_DESCRIPTION)),
    ],
    DescribeAclsResource,
)
_DESCRIBE_ACLS_RESPONSE = StructDef(
    "DescribeAclsResponse",
    [
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),
        Field("resources", array(_DESCRIBE_ACLS_RESOURCE)),
    ],
    DescribeAclsResponse,
)

DESCRIBE_ACLS: Api[DescribeAclsRequest, DescribeAclsResponse] = Api(
    29,
    "DescribeAcls",
    "0-3",
    "2+",
    _DESCRIBE_ACLS_REQUEST,
    _DESCRIBE_ACLS_RESPONSE,
    DescribeAclsRequest,
    DescribeAclsResponse,
)
"""DescribeAcls (key 29), versions 0-3."""
