"""Pure-Python per-record loops of RecordBatch v2 (the fallback for ``_speedups``).

The same behaviour as their C twins in ``_speedups.c`` (tests run both):

* :func:`decode_records` turns the records section of a batch into ``Record`` tuples;
* :func:`consumer_records` turns them into the consumer's record objects;
* :class:`RecordWriter` appends records to a buffer that starts with room for the 61-byte
  batch header, which ``BatchBuilder.build`` fills in later;
* :func:`ready` is an awaitable that is done already.

The producer's per-record steps (one record into a batch's writer, a delivery's metadata)
belong to the producer: ``producer/_fastpath_pure.py`` beside ``producer/_fastpath.c``.

Record layout (Kafka's DefaultRecord): varint length, int8 attributes, varlong timestamp
delta, varint offset delta, varint key length (-1 = null) + key, varint value length + value,
varint header count, then per header varint key length + UTF-8 key, varint value length
(-1 = null) + value. Varints are zigzag-encoded; a varint holds 32 bits (at most 5 bytes), a
varlong 64 bits (at most 10 bytes).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterable
from typing import Any

from ..errors import CorruptRecordError

HEADER_SIZE = 61
# The smallest record: length, attributes, timestamp delta, offset delta, key length, value
# length and header count, one byte each.
MIN_RECORD_SIZE = 7

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1
_INT32_MAX = (1 << 31) - 1

Header = tuple[str, "bytes | None"]
Buffer = Any  # bytes, bytearray or memoryview (anything with the buffer protocol)


def _corrupt(msg: str) -> CorruptRecordError:
    return CorruptRecordError(msg)


def _varint(buf: bytes, pos: int, limit: int) -> tuple[int, int]:
    """Decode a zigzag varint (32 bits, at most 5 bytes) ending before ``limit``."""
    raw = 0
    shift = 0
    for i in range(pos, min(limit, pos + 5)):
        b = buf[i]
        raw |= (b & 0x7F) << shift
        if not b & 0x80:
            if raw >> 32:
                raise _corrupt("varint overflows 32 bits")
            return (raw >> 1) ^ -(raw & 1), i + 1
        shift += 7
    raise _corrupt("varint is truncated or too long")


def _varlong(buf: bytes, pos: int, limit: int) -> tuple[int, int]:
    raw = 0
    shift = 0
    for i in range(pos, min(limit, pos + 10)):
        b = buf[i]
        raw |= (b & 0x7F) << shift
        if not b & 0x80:
            if raw >> 64:
                raise _corrupt("varlong overflows 64 bits")
            return (raw >> 1) ^ -(raw & 1), i + 1
        shift += 7
    raise _corrupt("varlong is truncated or too long")


def decode_records(
    buf: bytes,
    pos: int,
    end: int,
    count: int,
    base_offset: int,
    base_timestamp: int,
    timestamp_override: int | None,
    record_type: type[tuple[Any, ...]],
) -> list[Any]:
    """Decode exactly ``count`` records filling ``buf[pos:end]``.

    Each record becomes ``record_type((offset, timestamp, key, value, headers))`` built with
    ``tuple.__new__`` (``record_type`` is a NamedTuple class); ``headers`` is a tuple of
    ``(str, bytes | None)`` pairs. ``timestamp_override`` (the batch's max timestamp when the
    topic uses log-append time) replaces every record's own timestamp.
    """
    if count < 0 or count * MIN_RECORD_SIZE > end - pos:
        raise _corrupt(f"record count {count} does not fit in {end - pos} bytes")
    new = tuple.__new__
    out: list[Any] = []
    append = out.append
    no_headers: tuple[Header, ...] = ()
    # Offset deltas increase within a batch (compaction leaves gaps, never reorders).
    prev_delta = -1
    try:
        for _ in range(count):
            b = buf[pos]
            if b < 0x80:
                length = (b >> 1) ^ -(b & 1)
                pos += 1
            elif (c := buf[pos + 1]) < 0x80:
                b = (b & 0x7F) | (c << 7)
                length = (b >> 1) ^ -(b & 1)
                pos += 2
            else:
                length, pos = _varint(buf, pos, end)
            rec_end = pos + length
            if length < MIN_RECORD_SIZE - 1 or rec_end > end:
                raise _corrupt("record length overruns the batch")
            # pos + 0 is the attributes byte, unused in v2.
            b = buf[pos + 1]
            if b < 0x80:
                ts_delta = (b >> 1) ^ -(b & 1)
                pos += 2
            elif (c := buf[pos + 2]) < 0x80:
                b = (b & 0x7F) | (c << 7)
                ts_delta = (b >> 1) ^ -(b & 1)
                pos += 3
            else:
                ts_delta, pos = _varlong(buf, pos + 1, rec_end)
            b = buf[pos]
            if b < 0x80:
                off_delta = (b >> 1) ^ -(b & 1)
                pos += 1
            elif (c := buf[pos + 1]) < 0x80:
                b = (b & 0x7F) | (c << 7)
                off_delta = (b >> 1) ^ -(b & 1)
                pos += 2
            else:
                off_delta, pos = _varint(buf, pos, rec_end)
            if off_delta <= prev_delta:
                raise _corrupt("record offset deltas do not increase")
            prev_delta = off_delta
            b = buf[pos]
            if b < 0x80:
                klen = (b >> 1) ^ -(b & 1)
                pos += 1
            elif (c := buf[pos + 1]) < 0x80:
                b = (b & 0x7F) | (c << 7)
                klen = (b >> 1) ^ -(b & 1)
                pos += 2
            else:
                klen, pos = _varint(buf, pos, rec_end)
            if klen >= 0:
                if klen > rec_end - pos:
                    raise _corrupt("record key overruns the record")
                key: bytes | None = buf[pos : pos + klen]
                pos += klen
            elif klen == -1:
                key = None
            else:
                raise _corrupt("negative record key length")
            b = buf[pos]
            if b < 0x80:
                vlen = (b >> 1) ^ -(b & 1)
                pos += 1
            elif (c := buf[pos + 1]) < 0x80:
                b = (b & 0x7F) | (c << 7)
                vlen = (b >> 1) ^ -(b & 1)
                pos += 2
            else:
                vlen, pos = _varint(buf, pos, rec_end)
            if vlen >= 0:
                if vlen > rec_end - pos:
                    raise _corrupt("record value overruns the record")
                value: bytes | None = buf[pos : pos + vlen]
                pos += vlen
            elif vlen == -1:
                value = None
            else:
                raise _corrupt("negative record value length")
            b = buf[pos]
            if b == 0:
                headers = no_headers
                pos += 1
            else:
                headers, pos = _headers(buf, pos, rec_end)
            if pos != rec_end:
                raise _corrupt("record length disagrees with its contents")
            append(
                new(
                    record_type,
                    (
                        base_offset + off_delta,
                        base_timestamp + ts_delta
                        if timestamp_override is None
                        else timestamp_override,
                        key,
                        value,
                        headers,
                    ),
                )
            )
    except IndexError:
        raise _corrupt("record is truncated") from None
    if pos != end:
        raise _corrupt(f"record count {count} leaves {end - pos} bytes unread in the batch")
    return out


def consumer_records(
    records: list[Any],
    lo: int,
    hi: int,
    cls: Callable[..., Any],
    topic: str,
    partition: int,
    timestamp_type: int,
    leader_epoch: int | None,
) -> list[Any]:
    """``records[lo:hi]`` (``Record`` tuples) as ``cls`` instances (the consumer's record
    class: topic, partition, offset, timestamp, timestamp_type, key, value, headers as a new
    list, leader_epoch, serialized key and value sizes)."""
    if lo < 0 or hi < lo:
        raise ValueError("need 0 <= lo <= hi")
    return [
        cls(
            topic,
            partition,
            r[0],
            r[1],
            timestamp_type,
            r[2],
            r[3],
            list(r[4]),
            leader_epoch,
            -1 if r[2] is None else len(r[2]),
            -1 if r[3] is None else len(r[3]),
        )
        for r in records[lo:hi]
    ]


def _headers(buf: bytes, pos: int, rec_end: int) -> tuple[tuple[Header, ...], int]:
    count, pos = _varint(buf, pos, rec_end)
    # A header needs at least two bytes (key length and value length).
    if count < 0 or count * 2 > rec_end - pos:
        raise _corrupt("record header count does not fit in the record")
    out: list[Header] = []
    for _ in range(count):
        klen, pos = _varint(buf, pos, rec_end)
        if klen < 0 or klen > rec_end - pos:
            raise _corrupt("record header key length is invalid")
        try:
            hkey = buf[pos : pos + klen].decode("utf-8")
        except UnicodeDecodeError:
            raise _corrupt("record header key is not valid UTF-8") from None
        pos += klen
        vlen, pos = _varint(buf, pos, rec_end)
        if vlen >= 0:
            if vlen > rec_end - pos:
                raise _corrupt("record header value overruns the record")
            hval: bytes | None = buf[pos : pos + vlen]
            pos += vlen
        elif vlen == -1:
            hval = None
        else:
            raise _corrupt("negative record header value length")
        out.append((hkey, hval))
    return tuple(out), pos


# --------------------------------------------------------------------------------------------
# Encoding
# --------------------------------------------------------------------------------------------

# One-byte zigzag varints (values -64..63, most deltas and lengths), indexed by zigzag value.
_ONE_BYTE = [bytes([z]) for z in range(0x80)]


def _zigzag(n: int) -> bytes:
    raw = (n << 1) if n >= 0 else ((-n) << 1) - 1
    if raw < 0x80:
        return _ONE_BYTE[raw]
    if raw < 0x4000:
        return bytes(((raw & 0x7F) | 0x80, raw >> 7))
    out = bytearray()
    while raw > 0x7F:
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
    out.append(raw)
    return bytes(out)


def _as_bytes(obj: object, what: str) -> bytes | None:
    if obj is None:
        return None
    if type(obj) is bytes:
        return obj
    try:
        return bytes(memoryview(obj))  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(
            f"record {what} must be bytes-like or None, not {type(obj).__name__}"
        ) from None


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class RecordWriter:
    """Appends records to ``buffer`` after a 61-byte gap kept for the batch header.

    ``append`` returns the record's offset delta, or None (writing nothing) when the record
    would take the batch past ``batch_size_limit``; the first record is always accepted.
    """

    __slots__ = ("_base_ts", "_buf", "_count", "_limit", "_max_ts")

    def __init__(self, batch_size_limit: int) -> None:
        if type(batch_size_limit) is not int:
            raise TypeError("batch_size_limit must be an int")
        self._limit = batch_size_limit
        self._buf = bytearray(HEADER_SIZE)
        self._count = 0
        self._base_ts = -1
        self._max_ts = -1

    @property
    def buffer(self) -> bytearray:
        """Header gap followed by the uncompressed records."""
        return self._buf

    @property
    def record_count(self) -> int:
        return self._count

    @property
    def size_in_bytes(self) -> int:
        """Header plus uncompressed records: an upper bound of the built batch's size."""
        return len(self._buf)

    @property
    def batch_size_limit(self) -> int:
        return self._limit

    @property
    def base_timestamp(self) -> int:
        """The first record's timestamp (-1 before any record)."""
        return self._base_ts

    @property
    def max_timestamp(self) -> int:
        """The largest record timestamp (-1 before any record)."""
        return self._max_ts

    def append(
        self,
        timestamp: int | None,
        key: bytes | bytearray | memoryview | None,
        value: bytes | bytearray | memoryview | None,
        headers: Iterable[tuple[str, bytes | bytearray | memoryview | None]] | None = None,
    ) -> int | None:
        """Add one record; its offset delta, or None when the batch is full."""
        if timestamp is None:
            timestamp = _now_ms()
        elif type(timestamp) is not int:
            if not isinstance(timestamp, int) or isinstance(timestamp, bool):
                raise TypeError("record timestamp must be an int or None")
            timestamp = int(timestamp)
        if timestamp < 0 or timestamp > _INT64_MAX:
            raise ValueError(f"record timestamp {timestamp} is out of range")
        k = _as_bytes(key, "key")
        v = _as_bytes(value, "value")
        count = self._count
        if count >= _INT32_MAX:
            return None
        base_ts = self._base_ts if count else timestamp
        parts = [
            b"\x00",
            _zigzag(timestamp - base_ts),
            _zigzag(count),
        ]
        if k is None:
            parts.append(b"\x01")
        else:
            parts.append(_zigzag(len(k)))
            parts.append(k)
        if v is None:
            parts.append(b"\x01")
        else:
            parts.append(_zigzag(len(v)))
            parts.append(v)
        if headers is None:
            parts.append(b"\x00")
        else:
            hparts: list[bytes] = []
            n = 0
            for item in headers:
                if not isinstance(item, (tuple, list)) or len(item) != 2:
                    raise TypeError("record headers must be (str, bytes | None) pairs")
                hk, hv = item
                if not isinstance(hk, str):
                    raise TypeError("record header keys must be str")
                hkb = hk.encode("utf-8")
                hparts.append(_zigzag(len(hkb)))
                hparts.append(hkb)
                hvb = _as_bytes(hv, "header value")
                if hvb is None:
                    hparts.append(b"\x01")
                else:
                    hparts.append(_zigzag(len(hvb)))
                    hparts.append(hvb)
                n += 1
            parts.append(_zigzag(n))
            parts.extend(hparts)
        body = b"".join(parts)
        size = len(body)
        prefix = _zigzag(size)
        buf = self._buf
        if count and len(buf) + len(prefix) + size > self._limit:
            return None
        buf += prefix
        buf += body
        if not count:
            self._base_ts = timestamp
        if timestamp > self._max_ts:
            self._max_ts = timestamp
        self._count = count + 1
        return count


class _Ready:
    """An awaitable that is done already (what :func:`ready` returns)."""

    __slots__ = ("_value",)

    def __init__(self, value: Any) -> None:
        self._value = value

    def __await__(self) -> Generator[Any, None, Any]:
        yield from ()  # a generator that yields nothing: it returns at once
        return self._value


def ready(value: Any) -> Any:
    """An awaitable that returns ``value`` at once, without suspending the awaiting task (the
    C twin makes no generator either)."""
    return _Ready(value)
