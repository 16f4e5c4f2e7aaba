# Generated from kafka_async/protocol/definitions/sasl_authenticate.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""SaslAuthenticate: one SASL exchange, framed as a Kafka request (KIP-152).

Versions 0-2, flexible 2+; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import BYTES, INT16, INT64, STRING, Api, Field, Message, StructDef


class SaslAuthenticateRequest(Message):
    """The SaslAuthenticate request (key 36)."""

    __slots__ = ("auth_bytes",)

    auth_bytes: bytes
    """The SASL mechanism bytes from the client."""

    def __init__(self, *, auth_bytes: bytes = b"") -> None:
        self.auth_bytes = auth_bytes


class SaslAuthenticateResponse(Message):
    """The SaslAuthenticate response (key 36)."""

    __slots__ = ("error_code", "error_message", "auth_bytes", "session_lifetime_ms")

    error_code: int
    """0, or the error (errors.py) for this entry."""
    error_message: str | None
    """The broker's description of the error, or null."""
    auth_bytes: bytes
    """The SASL mechanism bytes from the broker."""
    session_lifetime_ms: int
    """Re-authenticate within this (KIP-368), 0 for no limit."""

    def __init__(
        self,
        *,
        error_code: int = 0,
        error_message: str | None = "",
        auth_bytes: bytes = b"",
        session_lifetime_ms: int = 0,
    ) -> None:
        self.error_code = error_code
        self.error_message = error_message
        self.auth_bytes = auth_bytes
        self.session_lifetime_ms = session_lifetime_ms


# The schema the codecs are compiled from (nested structs first).
_SASL_AUTHENTICATE_REQUEST = StructDef(
    "SaslAuthenticateRequest", [Field("auth_bytes", BYTES)], SaslAuthenticateRequest
)
_SASL_AUTHENTICATE_RESPONSE = StructDef(
    "SaslAuthenticateResponse",
    [
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),
        Field("auth_bytes", BYTES),
        Field("session_lifetime_ms", INT64, "1+", ignorable=True),
    ],
    SaslAuthenticateResponse,
)

SASL_AUTHENTICATE: Api[SaslAuthenticateRequest, SaslAuthenticateResponse] = Api(
    36,
    "SaslAuthenticate",
    "0-2",
    "2+",
    _SASL_AUTHENTICATE_REQUEST,
    _SASL_AUTHENTICATE_RESPONSE,
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
)
"""SaslAuthenticate (key 36), versions 0-2."""
