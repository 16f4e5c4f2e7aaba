"""Legacy MessageSet v0/v1 (magic 0 and 1) decoding, so data written by old clients reads.

A message set is a sequence of entries ``offset int64, message_size int32, message`` where
the message is ``crc uint32 (zlib CRC32 of the rest), magic int8, attributes int8,
[timestamp int64 if magic 1], key bytes, value bytes`` (int32 lengths, -1 = null).

A compressed message ("wrapper") carries a whole inner message set as its value. In magic 0
the inner offsets are absolute; in magic 1 they are relative, and the wrapper's offset is the
absolute offset of the last inner message. A magic 1 wrapper with log-append time gives all
inner messages its own timestamp. Each top-level entry becomes one :class:`LegacyRecordBatch`.
"""

from __future__ import annotations

import struct
import zlib

from ..errors import CorruptRecordError, UnsupportedCodecError
from . import compression as _codecs
from .batch import ATTR_COMPRESSION_MASK, ATTR_TIMESTAMP_TYPE, Record, RecordBatch
from .compression import DEFAULT_MAX_DECOMPRESSED_SIZE

_ENTRY = struct.Struct(">qiIbb")  # offset, size, crc, magic, attributes
_INT32 = struct.Struct(">i")
_INT64 = struct.Struct(">q")
_MIN_SIZE = {0: 14, 1: 22}  # crc + magic + attributes [+ timestamp] + two lengths

_LZ4_MAGIC = b"\x04\x22\x4d\x18"


class LegacyRecordBatch(RecordBatch):
    """One top-level magic 0/1 message (or compressed wrapper), shaped like a v2 batch.

    Producer id, epoch and sequence are -1; ``timestamp_type`` is -1 for magic 0.
    """

    __slots__ = ("_records",)

    _records: list[Record]

    def __init__(
        self,
        buf: bytes = b"",
        start: int = 0,
        end: int = 0,
        max_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
        records: list[Record] | None = None,
    ) -> None:
        """A top-level entry ``buf[start:end]`` whose records are decoded already."""
        super().__init__(buf, start, end, max_size)
        self._records = records if records is not None else []

    @property
    def timestamp_type(self) -> int:
        if self.magic == 0:
            return -1
        return (self.attributes & ATTR_TIMESTAMP_TYPE) >> 3

    @property
    def is_transactional(self) -> bool:
        return False

    @property
    def is_control(self) -> bool:
        return False

    @property
    def delete_horizon_ms(self) -> int | None:
        return None

    def records(self) -> list[Record]:
        """The records, decoded when the batch was read (a copy of the list)."""
        return list(self._records)


def _xxh32_short(data: bytes) -> int:
    """xxHash32 (seed 0) of fewer than 16 bytes: enough for an LZ4 frame descriptor."""
    p1, p2, p3, p4, p5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
    mask = 0xFFFFFFFF
    h = (p5 + len(data)) & mask
    i = 0
    while i + 4 <= len(data):
        h = (h + int.from_bytes(data[i : i + 4], "little") * p3) & mask
        h = (((h << 17) | (h >> 15)) & mask) * p4 & mask
        i += 4
    for b in data[i:]:
        h = (h + b * p5) & mask
        h = (((h << 11) | (h >> 21)) & mask) * p1 & mask
    h ^= h >> 15
    h = h * p2 & mask
    h ^= h >> 13
    h = h * p3 & mask
    h ^= h >> 16
    return h


def _fix_old_lz4_header(data: bytes) -> bytes:
    """Kafka before 0.10 computed the LZ4 frame descriptor checksum over the wrong bytes
    (including the magic number; KAFKA-3160). Rewrite it so a standard decoder accepts it."""
    if len(data) < 7 or data[:4] != _LZ4_MAGIC:
        return data
    hc_pos = 14 if data[4] & 0x08 else 6  # the content-size flag adds 8 bytes
    if len(data) <= hc_pos:
        return data
    hc = (_xxh32_short(data[4:hc_pos]) >> 8) & 0xFF
    return data[:hc_pos] + bytes([hc]) + data[hc_pos + 1 :]


def _read_message(
    buf: bytes, pos: int, end: int, check_crcs: bool
) -> tuple[int, int, int, int, int, bytes | None, bytes | None]:
    """Parse the entry at ``pos`` that must end exactly at ``end``.

    Returns (offset, crc, magic, attributes, timestamp, key, value).
    """
    offset, size, crc, magic, attributes = _ENTRY.unpack_from(buf, pos)
    if magic not in (0, 1):
        raise CorruptRecordError(f"legacy message at offset {offset} has magic {magic}")
    if size < _MIN_SIZE[magic]:
        raise CorruptRecordError(f"legacy message at offset {offset} is too short")
    if check_crcs:
        actual = zlib.crc32(memoryview(buf)[pos + 16 : end])
        if actual != crc:
            raise CorruptRecordError(
                f"legacy message at offset {offset} failed its CRC32 check "
                f"(stored {crc:#010x}, computed {actual:#010x})"
            )
    p = pos + 18
    timestamp = -1
    if magic == 1:
        (timestamp,) = _INT64.unpack_from(buf, p)
        p += 8
    fields: list[bytes | None] = []
    for what in ("key", "value"):
        if end - p < 4:
            raise CorruptRecordError(f"legacy message at offset {offset}: {what} is truncated")
        (n,) = _INT32.unpack_from(buf, p)
        p += 4
        if n == -1:
            fields.append(None)
        elif 0 <= n <= end - p:
            fields.append(buf[p : p + n])
            p += n
        else:
            raise CorruptRecordError(f"legacy message at offset {offset}: bad {what} length")
    if p != end:
        raise CorruptRecordError(f"legacy message at offset {offset} has trailing bytes")
    return offset, crc, magic, attributes, timestamp, fields[0], fields[1]


def decode_legacy_entry(
    buf: bytes, pos: int, end: int, check_crcs: bool, max_decompressed_size: int
) -> LegacyRecordBatch:
    """Decode the complete top-level entry ``buf[pos:end]`` into a batch."""
    if end - pos < 12 + _MIN_SIZE[0]:
        raise CorruptRecordError(f"legacy message at byte {pos} is too short")
    offset, crc, magic, attributes, timestamp, key, value = _read_message(buf, pos, end, check_crcs)
    codec = attributes & ATTR_COMPRESSION_MASK
    log_append = magic == 1 and bool(attributes & ATTR_TIMESTAMP_TYPE)
    if codec == 0:
        records = [Record(offset, timestamp, key, value, ())]
    else:
        if codec > _codecs.LZ4:
            raise UnsupportedCodecError(f"codec {codec} is not valid in a magic {magic} message")
        if value is None:
            raise CorruptRecordError(f"compressed legacy message at offset {offset} has no value")
        if codec == _codecs.LZ4 and magic == 0:
            value = _fix_old_lz4_header(value)
        inner = _codecs.decompress(codec, value, max_decompressed_size)
        records = _decode_inner(inner, offset, magic, timestamp if log_append else None)
    batch = LegacyRecordBatch(buf, pos, end, max_decompressed_size, records)
    batch.base_offset = records[0].offset
    batch.last_offset_delta = records[-1].offset - records[0].offset
    batch.batch_length = end - pos - 12
    batch.partition_leader_epoch = -1
    batch.magic = magic
    batch.crc = crc
    batch.attributes = attributes
    batch.base_timestamp = records[0].timestamp
    batch.max_timestamp = max(r.timestamp for r in records)
    batch.producer_id = -1
    batch.producer_epoch = -1
    batch.base_sequence = -1
    batch.record_count = len(records)
    return batch


def _decode_inner(
    inner: bytes, wrapper_offset: int, wrapper_magic: int, timestamp_override: int | None
) -> list[Record]:
    entries: list[tuple[int, int, bytes | None, bytes | None]] = []
    pos = 0
    n = len(inner)
    while pos < n:
        if n - pos < 12:
            raise CorruptRecordError("inner legacy message set is truncated")
        (size,) = _INT32.unpack_from(inner, pos + 8)
        end = pos + 12 + size
        if size < _MIN_SIZE[0] or end > n:
            raise CorruptRecordError("inner legacy message has a bad size")
        # Inner CRCs are always checked: the wrapper's CRC covered only compressed bytes.
        off, _, _, attrs, ts, key, value = _read_message(inner, pos, end, True)
        if attrs & ATTR_COMPRESSION_MASK:
            raise CorruptRecordError("nested compressed legacy messages are not allowed")
        entries.append((off, ts if timestamp_override is None else timestamp_override, key, value))
        pos = end
    if not entries:
        raise CorruptRecordError(f"compressed legacy message at {wrapper_offset} is empty")
    if wrapper_magic == 0:
        return [Record(off, ts, k, v, ()) for off, ts, k, v in entries]
    shift = wrapper_offset - entries[-1][0]
    return [Record(off + shift, ts, k, v, ()) for off, ts, k, v in entries]
