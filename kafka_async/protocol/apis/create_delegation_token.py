# Generated from kafka_async/protocol/definitions/create_delegation_token.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""CreateDelegationToken: issue a delegation token (a token id and its HMAC) for a principal.

Versions 1-3, flexible 2+; checked against Kafka 4.1's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import (
    BYTES,
    INT16,
    INT32,
    INT64,
    MISSING,
    STRING,
    Api,
    Field,
    Message,
    StructDef,
    array,
)


class CreateDelegationTokenRequest(Message):
    """The CreateDelegationToken request (key 38)."""

    __slots__ = ("owner_principal_type", "owner_principal_name", "renewers", "max_lifetime_ms")

    owner_principal_type: str | None
    """The owner's principal type, or null for the requester."""
    owner_principal_name: str | None
    """The owner's principal name, or null for the requester."""
    renewers: list[CreatableRenewers]
    """The principals allowed to renew the token."""
    max_lifetime_ms: int
    """The token's maximum lifetime, or -1 for the broker's delegation.token.max.lifetime.ms."""

    def __init__(
        self,
        *,
        owner_principal_type: str | None = "",
        owner_principal_name: str | None = "",
        renewers: list[CreatableRenewers] = MISSING,
        max_lifetime_ms: int = 0,
    ) -> None:
        self.owner_principal_type = owner_principal_type
        self.owner_principal_name = owner_principal_name
        self.renewers = [] if renewers is MISSING else renewers
        self.max_lifetime_ms = max_lifetime_ms


class CreatableRenewers(Message):
    """The principals allowed to renew the token."""

    __slots__ = ("principal_type", "principal_name")

    principal_type: str
    """Principal type (User)."""
    principal_name: str
    """Principal name."""

    def __init__(self, *, principal_type: str = "", principal_name: str = "") -> None:
        self.principal_type = principal_type
        self.principal_name = principal_name


class CreateDelegationTokenResponse(Message):
    """The CreateDelegationToken response (key 38)."""

    __slots__ = (
        "error_code",
        "principal_type",
        "principal_name",
        "token_requester_principal_type",
        "token_requester_principal_name",
        "issue_timestamp_ms",
        "expiry_timestamp_ms",
        "max_timestamp_ms",
        "token_id",
        "hmac",
        "throttle_time_ms",
    )

    error_code: int
    """0, or the error (errors.py)."""
    principal_type: str
    """The owner's principal type."""
    principal_name: str
    """The owner's principal name."""
    token_requester_principal_type: str
    """The requester's principal type."""
    token_requester_principal_name: str
    """The requester's principal name."""
    issue_timestamp_ms: int
    """When the token was issued (ms since the epoch)."""
    expiry_timestamp_ms: int
    """When the token expires unless renewed (ms since the epoch)."""
    max_timestamp_ms: int
    """The latest the token can ever expire (ms since the epoch)."""
    token_id: str
    """The token id (the SCRAM user name of a token login)."""
    hmac: bytes
    """The token's HMAC (its secret; base64 of it is the SCRAM password)."""
    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""

    def __init__(
        self,
        *,
        error_code: int = 0,
        principal_type: str = "",
        principal_name: str = "",
        token_requester_principal_type: str = "",
        token_requester_principal_name: str = "",
        issue_timestamp_ms: int = 0,
        expiry_timestamp_ms: int = 0,
        max_timestamp_ms: int = 0,
        token_id: str = "",
        hmac: bytes = b"",
        throttle_time_ms: int = 0,
    ) -> None:
        self.error_code = error_code
        self.principal_type = principal_type
        self.principal_name = principal_name
        self.token_requester_principal_type = token_requester_principal_type
        self.token_requester_principal_name = token_requester_principal_name
        self.issue_timestamp_ms = issue_timestamp_ms
        self.expiry_timestamp_ms = expiry_timestamp_ms
        self.max_timestamp_ms = max_timestamp_ms
        self.token_id = token_id
        self.hmac = hmac
        self.throttle_time_ms = throttle_time_ms


# The schema the codecs are compiled from (nested structs first).
_CREATABLE_RENEWERS = StructDef(
    "CreatableRenewers",
    [Field("principal_type", STRING), Field("principal_name", STRING)],
    CreatableRenewers,
)
_CREATE_DELEGATION_TOKEN_REQUEST = StructDef(
    "CreateDelegationTokenRequest",
    [
        Field("owner_principal_type", STRING, "3+", nullable="3+"),
        Field("owner_principal_name", STRING, "3+", nullable="3+"),
        Field("renewers", array(_CREATABLE_RENEWERS)),
        Field("max_lifetime_ms", INT64),
    ],
    CreateDelegationTokenRequest,
)
_CREATE_DELEGATION_TOKEN_RESPONSE = StructDef(
    "CreateDelegationTokenResponse",
    [
        Field("error_code", INT16),
        Field("principal_type", STRING),
        Field("principal_name", STRING),
        Field("token_requester_principal_type", STRING, "3+"),
        Field("token_requester_principal_name", STRING, "3+"),
        Field("issue_timestamp_ms", INT64),
        Field("expiry_timestamp_ms", INT64),
        Field("max_timestamp_ms", INT64),
        Field("token_id", STRING),
        Field("hmac", BYTES),
        Field("throttle_time_ms", INT32),
    ],
    CreateDelegationTokenResponse,
)

CREATE_DELEGATION_TOKEN: Api[CreateDelegationTokenRequest, CreateDelegationTokenResponse] = Api(
    38,
    "CreateDelegationToken",
    "1-3",
    "2+",
    _CREATE_DELEGATION_TOKEN_REQUEST,
    _CREATE_DELEGATION_TOKEN_RESPONSE,
    CreateDelegationTokenRequest,
    CreateDelegationTokenResponse,
)
"""CreateDelegationToken (key 38), versions 1-3."""
