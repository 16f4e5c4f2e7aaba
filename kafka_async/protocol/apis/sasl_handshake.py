# Generated from kafka_async/protocol/definitions/sasl_handshake.def
# by `make generate` (tools/generate_protocol.py): do not edit.
"""SaslHandshake: choose the SASL mechanism.

Versions 0-1, flexible none; checked against Kafka 4.0's
JSON message specs by tests/protocol/test_protocol_crosscheck.py.
"""

from __future__ import annotations

from ..schema import INT16, MISSING, STRING, Api, Field, Message, StructDef, array


class SaslHandshakeRequest(Message):
    """The SaslHandshake request (key 17)."""

    __slots__ = ("mechanism",)

    mechanism: str
    """The SASL mechanism the client wants (PLAIN, SCRAM-SHA-256, ...)."""

    def __init__(self, *, mechanism: str = "") -> None:
        self.mechanism = mechanism


class SaslHandshakeResponse(Message):
    """The SaslHandshake response (key 17)."""

    __slots__ = ("error_code", "mechanisms")

    error_code: int
    """0, or the error (errors.py) for this entry."""
    mechanisms: list[str]
    """The mechanisms the broker enables."""

    def __init__(self, *, error_code: int = 0, mechanisms: list[str] = MISSING) -> None:
        self.error_code = error_code
        self.mechanisms = [] if mechanisms is MISSING else mechanisms


# The schema the codecs are compiled from (nested structs first).
_SASL_HANDSHAKE_REQUEST = StructDef(
    "SaslHandshakeRequest", [Field("mechanism", STRING)], SaslHandshakeRequest
)
_SASL_HANDSHAKE_RESPONSE = StructDef(
    "SaslHandshakeResponse",
    [Field("error_code", INT16), Field("mechanisms", array(STRING))],
    SaslHandshakeResponse,
)

SASL_HANDSHAKE: Api[SaslHandshakeRequest, SaslHandshakeResponse] = Api(
    17,
    "SaslHandshake",
    "0-1",
    "none",
    _SASL_HANDSHAKE_REQUEST,
    _SASL_HANDSHAKE_RESPONSE,
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)
"""SaslHandshake (key 17), versions 0-1."""
