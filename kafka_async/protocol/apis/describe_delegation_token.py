# Generated from kafka_async/protocol/definitions/describe_delegation_token.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""DescribeDelegationToken: the delegation tokens the requester may see, by owner.

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


class DescribeDelegationTokenRequest(Message):
    """The DescribeDelegationToken request (key 41)."""

    __slots__ = ("owners",)

    owners: list[DescribeDelegationTokenOwner] | None
    """The owners whose tokens to describe, or null for all."""

    def __init__(self, *, owners: list[DescribeDelegationTokenOwner] | None = MISSING) -> None:
        self.owners = [] if owners is MISSING else owners


class DescribeDelegationTokenOwner(Message):
    """The owners whose tokens to describe, or null for all."""

    __slots__ = ("principal_type", "principal_name")

    principal_type: str
    """The owner's principal type (User)."""
    principal_name: str
    """The owner's principal name."""

    def __init__(self, *, principal_type: str = "", principal_name: str = "") -> None:
        self.principal_type = principal_type
        self.principal_name = principal_name


class DescribeDelegationTokenResponse(Message):
    """The DescribeDelegationToken response (key 41)."""

    __slots__ = ("error_code", "tokens", "throttle_time_ms")

    error_code: int
    """0, or the error (errors.py)."""
    tokens: list[DescribedDelegationToken]
    """The tokens."""
    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""

    def __init__(
        self,
        *,
        error_code: int = 0,
        tokens: list[DescribedDelegationToken] = MISSING,
        throttle_time_ms: int = 0,
    ) -> None:
        self.error_code = error_code
        self.tokens = [] if tokens is MISSING else tokens
        self.throttle_time_ms = throttle_time_ms


class DescribedDelegationToken(Message):
    """The tokens."""

    __slots__ = (
        "principal_type",
        "principal_name",
        "token_requester_principal_type",
        "token_requester_principal_name",
        "issue_timestamp",
        "expiry_timestamp",
        "max_timestamp",
        "token_id",
        "hmac",
        "renewers",
    )

    principal_type: str
    """The owner's principal type."""
    principal_name: str
    """The owner's principal name."""
    token_requester_principal_type: str
    """The requester's principal type."""
    token_requester_principal_name: str
    """The requester's principal name."""
    issue_timestamp: int
    """When the token was issued (ms since the epoch)."""
    expiry_timestamp: int
    """When the token expires unless renewed (ms since the epoch)."""
    max_timestamp: int
    """The latest the token can ever expire (ms since the epoch)."""
    token_id: str
    """The token id."""
    hmac: bytes
    """The token's HMAC."""
    renewers: list[DescribedDelegationTokenRenewer]
    """The principals allowed to renew the token."""

    def __init__(
        self,
        *,
        principal_type: str = "",
        principal_name: str = "",
        token_requester_principal_type: str = "",
        token_requester_principal_name: str = "",
        issue_timestamp: int = 0,
        expiry_timestamp: int = 0,
        max_timestamp: int = 0,
        token_id: str = "",
        hmac: bytes = b"",
        renewers: list[DescribedDelegationTokenRenewer] = MISSING,
    ) -> None:
        self.principal_type = principal_type
        self.principal_name = principal_name
        self.token_requester_principal_type = token_requester_principal_type
        self.token_requester_principal_name = token_requester_principal_name
        self.issue_timestamp = issue_timestamp
        self.expiry_timestamp = expiry_timestamp
        self.max_timestamp = max_timestamp
        self.token_id = token_id
        self.hmac = hmac
        self.renewers = [] if renewers is MISSING else renewers


class DescribedDelegationTokenRenewer(Message):
    """The principals allowed to renew the token."""

    __slots__ = ("principal_type", "principal_name")

    principal_type: str
    """The renewer's principal type."""
    principal_name: str
    """The renewer's principal name."""

    def __init__(self, *, principal_type: str = "", principal_name: str = "") -> None:
        self.principal_type = principal_type
        self.principal_name = principal_name


# The schema the codecs are compiled from (nested structs first).
_DESCRIBE_DELEGATION_TOKEN_OWNER = StructDef(
    "DescribeDelegationTokenOwner",
    [Field("principal_type", STRING), Field("principal_name", STRING)],
    DescribeDelegationTokenOwner,
)
_DESCRIBE_DELEGATION_TOKEN_REQUEST = StructDef(
    "DescribeDelegationTokenRequest",
    [Field("owners", array(_DESCRIBE_DELEGATION_TOKEN_OWNER), nullable="0+")],
    DescribeDelegationTokenRequest,
)
_DESCRIBED_DELEGATION_TOKEN_RENEWER = StructDef(
    "DescribedDelegationTokenRenewer",
    [Field("principal_type", STRING), Field("principal_name", STRING)],
    DescribedDelegationTokenRenewer,
)
_DESCRIBED_DELEGATION_TOKEN = StructDef(
    "DescribedDelegationToken",
    [
        Field("principal_type", STRING),
        Field("principal_name", STRING),
        Field("token_requester_principal_type", STRING, "3+"),
        Field("token_requester_principal_name", STRING, "3+"),
        Field("issue_timestamp", INT64),
        Field("expiry_timestamp", INT64),
        Field("max_timestamp", INT64),
        Field("token_id", STRING),
        Field("hmac", BYTES),
        Field("renewers", array(_DESCRIBED_DELEGATION_TOKEN_RENEWER)),
    ],
    DescribedDelegationToken,
)
_DESCRIBE_DELEGATION_TOKEN_RESPONSE = StructDef(
    "DescribeDelegationTokenResponse",
    [
        Field("error_code", INT16),
        Field("tokens", array(_DESCRIBED_DELEGATION_TOKEN)),
        Field("throttle_time_ms", INT32),
    ],
    DescribeDelegationTokenResponse,
)

DESCRIBE_DELEGATION_TOKEN: Api[DescribeDelegationTokenRequest, DescribeDelegationTokenResponse] = (
    Api(
        41,
        "DescribeDelegationToken",
        "1-3",
        "2+",
        _DESCRIBE_DELEGATION_TOKEN_REQUEST,
        _DESCRIBE_DELEGATION_TOKEN_RESPONSE,
        DescribeDelegationTokenRequest,
        DescribeDelegationTokenResponse,
    )
)
"""DescribeDelegationToken (key 41), versions 1-3."""
