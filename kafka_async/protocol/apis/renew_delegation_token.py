# Generated from kafka_async/protocol/definitions/renew_delegation_token.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""RenewDelegationToken: push a delegation token's expiry further out (up to its maximum).

Versions 1-2, flexible 2+; checked against Kafka 4.1's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import BYTES, INT16, INT32, INT64, Api, Field, Message, StructDef


class RenewDelegationTokenRequest(Message):
    """The RenewDelegationToken request (key 39)."""

    __slots__ = ("hmac", "renew_period_ms")

    hmac: bytes
    """The HMAC of the token to renew."""
    renew_period_ms: int
    """The new expiry, counted from now, or -1 for the broker's renew interval."""

    def __init__(self, *, hmac: bytes = b"", renew_period_ms: int = 0) -> None:
        self.hmac = hmac
        self.renew_period_ms = renew_period_ms


class RenewDelegationTokenResponse(Message):
    """The RenewDelegationToken response (key 39)."""

    __slots__ = ("error_code", "expiry_timestamp_ms", "throttle_time_ms")

    error_code: int
    """0, or the error (errors.py)."""
    expiry_timestamp_ms: int
    """The token's new expiry (ms since the epoch)."""
    throttle_time_ms: int
    """How long the broker throttled this request (quota), 0 if it did not."""

    def __init__(
        self, *, error_code: int = 0, expiry_timestamp_ms: int = 0, throttle_time_ms: int = 0
    ) -> None:
        self.error_code = error_code
        self.expiry_timestamp_ms = expiry_timestamp_ms
        self.throttle_time_ms = throttle_time_ms


# The schema the codecs are compiled from (nested structs first).
_RENEW_DELEGATION_TOKEN_REQUEST = StructDef(
    "RenewDelegationTokenRequest",
    [Field("hmac", BYTES), Field("renew_period_ms", INT64)],
    RenewDelegationTokenRequest,
)
_RENEW_DELEGATION_TOKEN_RESPONSE = StructDef(
    "RenewDelegationTokenResponse",
    [
        Field("error_code", INT16),
        Field("expiry_timestamp_ms", INT64),
        Field("throttle_time_ms", INT32),
    ],
    RenewDelegationTokenResponse,
)

RENEW_DELEGATION_TOKEN: Api[RenewDelegationTokenRequest, RenewDelegationTokenResponse] = Api(
    39,
    "RenewDelegationToken",
    "1-2",
    "2+",
    _RENEW_DELEGATION_TOKEN_REQUEST,
    _RENEW_DELEGATION_TOKEN_RESPONSE,
    RenewDelegationTokenRequest,
    RenewDelegationTokenResponse,
)
"""RenewDelegationToken (key 39), versions 1-2."""
