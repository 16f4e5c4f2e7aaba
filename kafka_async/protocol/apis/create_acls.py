# Generated from kafka_async/protocol/definitions/create_acls.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""CreateAcls: create ACLs.

Versions 0-3, flexible 2+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import INT8, INT16, INT32, MISSING, STRING, Api, Field, Message, StructDef, array


class CreateAclsRequest(Message):
    """The CreateAcls request (key 30)."""

    __slots__ = ("creations",)

    creations: list[AclCreation]
    """The ACLs to create."""

    def __init__(self, *, creations: list[AclCreation] = MISSING) -> None:
        self.creations = [] if creations is MISSING else creations


class AclCreation(Message):
    """The ACLs to create."""

    __slots__ = (
        "resource_type",
        "resource_name",
        "resource_pattern_type",
        "principal",
        "host",
        "operation",
        "permission_type",
    )

    resource_type: int
    """Resource type code (topic 2, group 3, broker 4, ...)."""
    resource_name: str
    """Resource name."""
    resource_pattern_type: int
    """Pattern type of the resource (literal or prefixed)."""
    principal: str
    """Principal, as 'User:name'."""
    host: str
    """Host the ACL applies to ('*' for any)."""
    operation: int
    """ACL operation code (read, write, describe, ...)."""
    permission_type: int
    """ACL permission: 2 deny, 3 allow."""

    def __init__(
        self,
        *,
        resource_type: int = 0,
        resource_name: str = "",
        resource_pattern_type: int = 3,
        principal: str = "",
        host: str = "",
        operation: int = 0,
        permission_type: int = 0,
    ) -> None:
        self.resource_type = resource_type
        self.resource_name = resource_name
        self.resource_pattern_type = resource_pattern_type
        self.principal = principal
        self.host = host
        self.operation = operation
        self.permission_type = permission_type


class CreateAclsResponse(Message):
    """The CreateAcls response (key 30)."""

    __slots__ = ("throttle_time_ms", "results")

    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""
    results: list[AclCreationResult]
    """One result per ACL, in request order."""

    def __init__(
        self, *, throttle_time_ms: int = 0, results: list[AclCreationResult] = MISSING
    ) -> None:
        self.throttle_time_ms = throttle_time_ms
        self.results = [] if results is MISSING else results


class AclCreationResult(Message):
    """One result per ACL, in request order."""

    __slots__ = ("error_code", "error_message")

    error_code: int
    """0, or the error (errors.py) for this entry."""
    error_message: str | None
    """The broker's description of the error, or null."""

    def __init__(self, *, error_code: int = 0, error_message: str | None = "") -> None:
        self.error_code = error_code
        self.error_message = error_message


# The schema the codecs are compiled from (nested structs first).
_ACL_CREATION = StructDef(
    "AclCreation",
    [
        Field("resource_type", INT8),
        Field("resource_name", STRING),
        Field("resource_pattern_type", INT8, "1+", default=3),
        Field("principal", STRING),
        Field("host", STRING),
        Field("operation", INT8),
        Field("permission_type", INT8),
    ],
    AclCreation,
)
_CREATE_ACLS_REQUEST = StructDef(
    "CreateAclsRequest", [Field("creations", array(_ACL_CREATION))], CreateAclsRequest
)
_ACL_CREATION_RESULT = StructDef(
    "AclCreationResult",
    [Field("error_code", INT16), Field("error_message", STRING, nullable="0+")],
    AclCreationResult,
)
_CREATE_ACLS_RESPONSE = StructDef(
    "CreateAclsResponse",
    [Field("throttle_time_ms", INT32), Field("results", array(_ACL_CREATION_RESULT))],
    CreateAclsResponse,
)

CREATE_ACLS: Api[CreateAclsRequest, CreateAclsResponse] = Api(
    30,
    "CreateAcls",
    "0-3",
    "2+",
    _CREATE_ACLS_REQUEST,
    _CREATE_ACLS_RESPONSE,
    CreateAclsRequest,
    CreateAclsResponse,
)
"""CreateAcls (key 30), versions 0-3."""
