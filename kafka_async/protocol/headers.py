"""Request and response headers, and which header version each API version uses.

Request header v0: api_key, api_version, correlation_id. v1 adds client_id (nullable string).
v2 (flexible request versions) adds a tagged-field section. Response header v0 is the
correlation id; v1 (flexible response versions) adds a tagged-field section. ApiVersions
responses always use header v0, so a client can read them before it knows what the broker
speaks; ControlledShutdown v0 uses request header v0.
"""

from __future__ import annotations

import struct

from ..errors import ProtocolDecodeError
from . import codec as c
from .codec import Reader
from .schema import AnyApi

API_VERSIONS_KEY = 18
CONTROLLED_SHUTDOWN_KEY = 7

_REQ_FIXED = struct.Struct(">hhi")


def request_header_version(api: AnyApi, version: int) -> int:
    if api.key == CONTROLLED_SHUTDOWN_KEY and version == 0:
        return 0
    return 2 if api.is_flexible(version) else 1


def response_header_version(api: AnyApi, version: int) -> int:
    if api.key == API_VERSIONS_KEY:
        return 0
    return 1 if api.is_flexible(version) else 0


def encode_request_header(
    api: AnyApi, version: int, correlation_id: int, client_id: str | None
) -> bytearray:
    out = bytearray(_REQ_FIXED.pack(api.key, version, correlation_id))
    hv = request_header_version(api, version)
    if hv >= 1:
        c.write_nullable_string(out, client_id)  # client_id is never compact
    if hv >= 2:
        out.append(0)  # no tagged fields
    return out


def encode_request(
    api: AnyApi, version: int, correlation_id: int, client_id: str | None, body: object
) -> bytearray:
    """Header + body, without the 4-byte size prefix."""
    out = encode_request_header(api, version, correlation_id, client_id)
    out += api.encode_request(version, body)
    return out


def decode_request_header(r: Reader) -> tuple[int, int, int, str | None]:
    """(api_key, api_version, correlation_id, client_id); used by fake brokers and tests.

    The caller must skip the tagged fields of a v2 header once it knows the API's
    flexibility (see :func:`skip_request_header_tags`).
    """
    api_key = r.int16()
    api_version = r.int16()
    correlation_id = r.int32()
    client_id = r.nullable_string()
    return api_key, api_version, correlation_id, client_id


def skip_tags(r: Reader) -> None:
    """Skip a tagged-field section."""
    for _ in range(r.check_count(r.uvarint(), 2)):
        r.uvarint()
        r.skip(r.uvarint())


def read_response_header(r: Reader, api: AnyApi, version: int) -> int:
    """Read the response header; return the correlation id."""
    if r.remaining < 4:
        raise ProtocolDecodeError("response shorter than its header")
    correlation_id = r.int32()
    if response_header_version(api, version) >= 1:
        skip_tags(r)
    return correlation_id


def encode_response(api: AnyApi, version: int, correlation_id: int, body: object) -> bytearray:
    """Header + body for a response (fake brokers and tests)."""
    out = bytearray(struct.pack(">i", correlation_id))
    if response_header_version(api, version) >= 1:
        out.append(0)
    out += api.encode_response(version, body)
    return out
