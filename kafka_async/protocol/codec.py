"""Primitive wire codec: fixed-width ints, varints, strings, bytes, arrays, UUIDs.

Pure: no I/O. ``Reader`` walks a bytes-like buffer and never trusts it: every length and
count is checked against the bytes that remain *before* anything is allocated, and any short
read raises :class:`~kafka_async.errors.ProtocolDecodeError` (one typed error, never an
``IndexError`` or ``struct.error`` escaping). Writers append to a ``bytearray``.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable
from typing import Any

from ..errors import ProtocolDecodeError

_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_U16 = struct.Struct(">H")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")
_F64 = struct.Struct(">d")

ZERO_UUID = uuid.UUID(int=0)

# A UUID built the way unpickling builds one (UUID.__setstate__): the bytes are 16 by
# construction, so the checks of UUID(bytes=...) only cost time, about half of a v13+ Fetch
# answer's per-topic decoding.
_UUID = uuid.UUID
_new = object.__new__
_set = object.__setattr__
_UNKNOWN = uuid.SafeUUID.unknown


class Reader:
    """A cursor over a buffer. All getters raise ``ProtocolDecodeError`` on short input."""

    __slots__ = ("buf", "end", "pos")

    def __init__(self, buf: bytes | bytearray | memoryview, pos: int = 0, end: int | None = None):
        self.buf = buf if isinstance(buf, memoryview) else memoryview(buf)
        self.pos = pos
        self.end = len(self.buf) if end is None else end

    # -- bookkeeping -------------------------------------------------------------------------

    @property
    def remaining(self) -> int:
        return self.end - self.pos

    def _need(self, n: int) -> int:
        pos = self.pos
        if n < 0 or pos + n > self.end:
            raise ProtocolDecodeError(
                f"truncated message: need {n} bytes at offset {pos}, {self.end - pos} left"
            )
        self.pos = pos + n
        return pos

    #: ``_need`` under a public name, for the decoders ``schema.py`` compiles (one lookup,
    #: no wrapper frame: the decode path calls it per field).
    need = _need

    def check_count(self, count: int, min_element_size: int = 1) -> int:
        """Validate an element count against the bytes left (each element >= 1 byte)."""
        if count < 0:
            raise ProtocolDecodeError(f"negative element count {count}")
        if count * min_element_size > self.end - self.pos:
            raise ProtocolDecodeError(
                f"count {count} claims more elements than the {self.end - self.pos} bytes left"
            )
        return count

    def expect_end(self) -> None:
        """Raise if unread bytes remain (used for exact-size frames)."""
        if self.pos != self.end:
            raise ProtocolDecodeError(f"{self.end - self.pos} unexpected trailing bytes")

    # -- fixed width -------------------------------------------------------------------------

    def int8(self) -> int:
        return int(_I8.unpack_from(self.buf, self._need(1))[0])

    def int16(self) -> int:
        return int(_I16.unpack_from(self.buf, self._need(2))[0])

    def uint16(self) -> int:
        return int(_U16.unpack_from(self.buf, self._need(2))[0])

    def int32(self) -> int:
        return int(_I32.unpack_from(self.buf, self._need(4))[0])

    def uint32(self) -> int:
        return int(_U32.unpack_from(self.buf, self._need(4))[0])

    def int64(self) -> int:
        return int(_I64.unpack_from(self.buf, self._need(8))[0])

    def float64(self) -> float:
        return float(_F64.unpack_from(self.buf, self._need(8))[0])

    def boolean(self) -> bool:
        return self.buf[self._need(1)] != 0

    def uuid(self) -> uuid.UUID:
        pos = self._need(16)
        u = _new(_UUID)
        _set(u, "int", int.from_bytes(self.buf[pos : pos + 16], "big"))
        _set(u, "is_safe", _UNKNOWN)
        return u

    # -- variable width ----------------------------------------------------------------------

    def uvarint(self) -> int:
        """Unsigned LEB128 varint (at most 5 bytes for 32-bit values, 10 for 64-bit)."""
        buf = self.buf
        pos = self.pos
        end = self.end
        result = 0
        shift = 0
        while True:
            if pos >= end:
                raise ProtocolDecodeError("truncated varint")
            b = buf[pos]
            pos += 1
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                self.pos = pos
                return result
            shift += 7
            if shift > 63:
                raise ProtocolDecodeError("varint longer than 10 bytes")

    def varint(self) -> int:
        """Zigzag-encoded signed varint."""
        v = self.uvarint()
        return (v >> 1) ^ -(v & 1)

    varlong = varint

    def raw(self, n: int) -> memoryview:
        """``n`` bytes as a zero-copy view."""
        pos = self._need(n)
        return self.buf[pos : pos + n]

    def string(self) -> str:
        n = self.int16()
        if n < 0:
            raise ProtocolDecodeError(f"negative length {n} for non-nullable string")
        return self._text(n)

    def nullable_string(self) -> str | None:
        n = self.int16()
        if n < 0:
            if n != -1:
                raise ProtocolDecodeError(f"invalid string length {n}")
            return None
        return self._text(n)

    def compact_string(self) -> str:
        n = self.uvarint() - 1
        if n < 0:
            raise ProtocolDecodeError("null for non-nullable compact string")
        return self._text(n)

    def compact_nullable_string(self) -> str | None:
        n = self.uvarint() - 1
        if n < 0:
            return None
        return self._text(n)

    def _text(self, n: int) -> str:
        pos = self._need(n)
        try:
            return str(self.buf[pos : pos + n], "utf-8")
        except UnicodeDecodeError as exc:
            raise ProtocolDecodeError(f"invalid UTF-8 in string: {exc}") from None

    def bytes_(self) -> bytes:
        n = self.int32()
        if n < 0:
            raise ProtocolDecodeError(f"negative length {n} for non-nullable bytes")
        pos = self._need(n)
        return bytes(self.buf[pos : pos + n])

    def nullable_bytes(self) -> bytes | None:
        n = self.int32()
        if n < 0:
            if n != -1:
                raise ProtocolDecodeError(f"invalid bytes length {n}")
            return None
        pos = self._need(n)
        return bytes(self.buf[pos : pos + n])

    def compact_bytes(self) -> bytes:
        n = self.uvarint() - 1
        if n < 0:
            raise ProtocolDecodeError("null for non-nullable compact bytes")
        pos = self._need(n)
        return bytes(self.buf[pos : pos + n])

    def compact_nullable_bytes(self) -> bytes | None:
        n = self.uvarint() - 1
        if n < 0:
            return None
        pos = self._need(n)
        return bytes(self.buf[pos : pos + n])

    def records(self) -> memoryview | None:
        """A nullable bytes field holding record batches, as a zero-copy view."""
        n = self.int32()
        if n < 0:
            if n != -1:
                raise ProtocolDecodeError(f"invalid records length {n}")
            return None
        return self.raw(n)

    def compact_records(self) -> memoryview | None:
        n = self.uvarint() - 1
        if n < 0:
            return None
        return self.raw(n)

    def array_len(self) -> int | None:
        """Classic array length (int32, -1 for null), checked against the bytes left."""
        n = self.int32()
        if n < 0:
            if n != -1:
                raise ProtocolDecodeError(f"invalid array length {n}")
            return None
        return self.check_count(n)

    def compact_array_len(self) -> int | None:
        n = self.uvarint() - 1
        if n < 0:
            return None
        return self.check_count(n)

    def skip(self, n: int) -> None:
        self._need(n)


# -- writers ---------------------------------------------------------------------------------
# Each writer appends one value to a bytearray. They are plain functions so that compiled
# schema encoders can bind them once and call them without attribute look-ups.

Writer = Callable[[bytearray, Any], None]


def write_int8(out: bytearray, v: int) -> None:
    out += _I8.pack(v)


def write_int16(out: bytearray, v: int) -> None:
    out += _I16.pack(v)


def write_uint16(out: bytearray, v: int) -> None:
    out += _U16.pack(v)


def write_int32(out: bytearray, v: int) -> None:
    out += _I32.pack(v)


def write_uint32(out: bytearray, v: int) -> None:
    out += _U32.pack(v)


def write_int64(out: bytearray, v: int) -> None:
    out += _I64.pack(v)


def write_float64(out: bytearray, v: float) -> None:
    out += _F64.pack(v)


def write_bool(out: bytearray, v: bool) -> None:
    out.append(1 if v else 0)


def write_uuid(out: bytearray, v: uuid.UUID | None) -> None:
    out += (v or ZERO_UUID).bytes


def write_uvarint(out: bytearray, v: int) -> None:
    if v < 0:
        raise ValueError(f"unsigned varint cannot hold {v}")
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)


def write_varint(out: bytearray, v: int) -> None:
    """Zigzag varint for 32-bit values."""
    write_uvarint(out, ((v << 1) ^ (v >> 31)) & 0xFFFFFFFF)


def write_varlong(out: bytearray, v: int) -> None:
    """Zigzag varint for 64-bit values."""
    write_uvarint(out, ((v << 1) ^ (v >> 63)) & 0xFFFFFFFFFFFFFFFF)


def uvarint_size(v: int) -> int:
    n = 1
    while v >= 0x80:
        v >>= 7
        n += 1
    return n


def write_string(out: bytearray, v: str) -> None:
    data = v.encode()
    if len(data) > 0x7FFF:
        raise ValueError(f"string of {len(data)} bytes is longer than int16 allows")
    out += _I16.pack(len(data))
    out += data


def write_nullable_string(out: bytearray, v: str | None) -> None:
    if v is None:
        out += b"\xff\xff"
    else:
        write_string(out, v)


def write_compact_string(out: bytearray, v: str) -> None:
    data = v.encode()
    write_uvarint(out, len(data) + 1)
    out += data


def write_compact_nullable_string(out: bytearray, v: str | None) -> None:
    if v is None:
        out.append(0)
    else:
        write_compact_string(out, v)


def write_bytes(out: bytearray, v: bytes | bytearray | memoryview) -> None:
    out += _I32.pack(len(v))
    out += v


def write_nullable_bytes(out: bytearray, v: bytes | bytearray | memoryview | None) -> None:
    if v is None:
        out += b"\xff\xff\xff\xff"
    else:
        write_bytes(out, v)


def write_compact_bytes(out: bytearray, v: bytes | bytearray | memoryview) -> None:
    write_uvarint(out, len(v) + 1)
    out += v


def write_compact_nullable_bytes(out: bytearray, v: bytes | bytearray | memoryview | None) -> None:
    if v is None:
        out.append(0)
    else:
        write_compact_bytes(out, v)
