# Generated from kafka_async/protocol/definitions/expire_delegation_token.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""ExpireDelegationToken: move a delegation token's expiry (a negative period expires it now).

Versions 1-2, flexible 2+; checked against Kafka 4.1's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import BYTES, INT16, INT32, INT64, Api, Field, Message, StructDef


class ExpireDelegationTokenRequest(Message):
    """The ExpireDelegationToken request (key 40)."""

    __slots__ = ("hmac", "expiry_time_period_ms")

    hmac: bytes
    """The HMAC of the token to expire."""
    expiry_time_period_ms: int
    """The new expiry, counted from now; negative expires it at once."""

    def __init__(self, *, hmac: bytes = b"", expiry_time_period_ms: int = 0) -> None:
        self.hmac = hmac
        self.expiry_time_period_ms = expiry_time_period_ms


class ExpireDelegationTokenResponse(Message):
    """The ExpireDelegationToken response (key 40)."""

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
_EXPIRE_DELEGATION_TOKEN_REQUEST = StructDef(
    "ExpireDelegationTokenRequest",
    [Field("hmac", BYTES), Field("expiry_time_period_ms", INT64)],
    ExpireDelegationTokenRequest,
)
_EXPIRE_DELEGATION_TOKEN_RESPONSE = StructDef(
    "ExpireDelegationTokenResponse",
    [
        Field("error_code", INT16),
        Field("expiry_timestamp_ms", INT64),
        Field("throttle_time_ms", INT32),
    ],
    ExpireDelegationTokenResponse,
)

EXPIRE_DELEGATION_TOKEN: Api[ExpireDelegationTokenRequest, ExpireDelegationTokenResponse] = Api(
    40,
    "ExpireDelegationToken",
    "1-2",
    "2+",
    _EXPIRE_DELEGATION_TOKEN_REQUEST,
    _EXPIRE_DELEGATION_TOKEN_RESPONSE,
    ExpireDelegationTokenRequest,
    ExpireDelegationTokenResponse,
)
"""ExpireDelegationToken (key 40), versions 1-2."""
