"""Legacy MessageSet v0/v1 decoding (messages built by kafka-python and by hand)."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence

import pytest
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kafka_async.errors import CorruptRecordError, DecompressionLimitError
from kafka_async.records import LegacyRecordBatch, Record, build_batch, decode_batches
from kafka_async.records.legacy import _xxh32_short

CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3}


def legacy_set(
    magic: int, codec: int, rows: Sequence[tuple[int, bytes | None, bytes | None]]
) -> bytes:
    b = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 24)
    for i, (ts, key, value) in enumerate(rows):
        assert b.append(i, ts, key, value) is not None
    return bytes(b.build())


def fix_crc(entry: bytearray, pos: int = 0) -> None:
    """Recompute the CRC of the message at ``pos`` (covers magic..end of the message)."""
    (size,) = struct.unpack_from(">i", entry, pos + 8)
    end = pos + 12 + size
    struct.pack_into(">I", entry, pos + 12, zlib.crc32(bytes(entry[pos + 16 : end])))


ROWS = [(1000, b"k0", b"v0"), (1001, None, b"v1"), (1002, b"k2", None), (1003, b"", b"")]


def test_hand_built_v0_message() -> None:
    # offset 7, size, crc, magic 0, attributes 0, key "k", value "hello"
    body = bytes([0, 0]) + struct.pack(">i", 1) + b"k" + struct.pack(">i", 5) + b"hello"
    crc = zlib.crc32(body)
    entry = struct.pack(">qiI", 7, 4 + len(body), crc) + body
    (batch,) = decode_batches(entry)
    assert isinstance(batch, LegacyRecordBatch)
    assert batch.magic == 0
    assert batch.timestamp_type == -1
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (-1, -1, -1)
    assert batch.records() == [Record(7, -1, b"k", b"hello", ())]
    assert batch.next_offset == 8


def test_hand_built_v1_message_with_null_key() -> None:
    body = bytes([1, 0]) + struct.pack(">q", 1234) + struct.pack(">i", -1)
    body += struct.pack(">i", 2) + b"hi"
    entry = struct.pack(">qiI", 3, 4 + len(body), zlib.crc32(body)) + body
    (batch,) = decode_batches(entry)
    assert batch.timestamp_type == 0
    assert batch.records() == [Record(3, 1234, None, b"hi", ())]


@pytest.mark.parametrize("magic", [0, 1])
def test_uncompressed_message_sets(magic: int) -> None:
    data = legacy_set(magic, 0, ROWS)
    batches = list(decode_batches(data))
    assert len(batches) == len(ROWS)  # one batch per top-level message
    got = [r for b in batches for r in b.records()]
    ts = [t if magic == 1 else -1 for t, _, _ in ROWS]
    assert got == [Record(i, ts[i], k, v, ()) for i, (_, k, v) in enumerate(ROWS)]
    assert all(b.magic == magic for b in batches)


@pytest.mark.parametrize(
    ("magic", "codec"), [(0, "gzip"), (0, "snappy"), (1, "gzip"), (1, "snappy"), (1, "lz4")]
)
def test_compressed_wrappers(magic: int, codec: str) -> None:
    data = legacy_set(magic, CODECS[codec], ROWS)
    if magic == 1:
        # The broker stamps the wrapper with the absolute offset of its last inner message;
        # the inner offsets stay relative (0..3). The offset lies outside the CRC.
        data = struct.pack(">q", 503) + data[8:]
    (batch,) = decode_batches(data)
    assert batch.compression_type == CODECS[codec]
    first = 500 if magic == 1 else 0
    ts = [t if magic == 1 else -1 for t, _, _ in ROWS]
    assert batch.records() == [
        Record(first + i, ts[i], k, v, ()) for i, (_, k, v) in enumerate(ROWS)
    ]
    assert batch.base_offset == first
    assert batch.last_offset_delta == 3
    assert batch.record_count == 4
    assert batch.max_timestamp == (1003 if magic == 1 else -1)


def test_v0_lz4_with_the_old_kafka_header_checksum() -> None:
    # Kafka before 0.10 computed the LZ4 frame descriptor checksum over the magic number too
    # (KAFKA-3160) and wrote it so in magic 0 wrappers. A standard LZ4 reader rejects such a
    # frame, so decoding it proves the checksum is repaired.
    import lz4.frame

    inner = legacy_set(0, 0, ROWS)
    frame = bytearray(lz4.frame.compress(inner, store_size=False))
    frame[6] = (_xxh32_short(bytes(frame[0:6])) >> 8) & 0xFF
    with pytest.raises(RuntimeError):
        lz4.frame.decompress(bytes(frame))
    body = bytes([0, 3]) + struct.pack(">i", -1) + struct.pack(">i", len(frame)) + frame
    entry = struct.pack(">qiI", 3, 4 + len(body), zlib.crc32(body)) + body
    (batch,) = decode_batches(entry)
    assert batch.records() == [Record(i, -1, k, v, ()) for i, (_, k, v) in enumerate(ROWS)]


def test_xxh32_known_values() -> None:
    # Reference values of xxHash32 with seed 0.
    assert _xxh32_short(b"") == 0x02CC5D05
    assert _xxh32_short(b"a") == 0x550D7456
    assert _xxh32_short(b"abc") == 0x32D153FF


def test_v1_wrapper_with_log_append_time() -> None:
    data = bytearray(legacy_set(1, CODECS["gzip"], ROWS))
    data[17] |= 0x08  # attributes: log-append time
    struct.pack_into(">q", data, 18, 99999)  # the wrapper's (broker's) timestamp
    fix_crc(data)
    (batch,) = decode_batches(bytes(data))
    assert batch.timestamp_type == 1
    assert [r.timestamp for r in batch.records()] == [99999] * 4


def test_crc_mismatch_and_check_crcs_off() -> None:
    data = bytearray(legacy_set(1, 0, ROWS[:1]))
    data[-1] ^= 0xFF
    with pytest.raises(CorruptRecordError, match="CRC32"):
        list(decode_batches(bytes(data)))
    (batch,) = decode_batches(bytes(data), check_crcs=False)
    assert batch.records()[0].value == bytes([ord("0") ^ 0xFF]).rjust(2, b"v")


def test_truncated_last_message_is_skipped_and_damage_is_typed() -> None:
    data = legacy_set(1, 0, ROWS)
    sizes = [b.size_in_bytes for b in decode_batches(data)]
    for cut in range(len(data)):
        try:
            batches = list(decode_batches(data[:cut]))
        except CorruptRecordError:
            pytest.fail(f"a cut at {cut} must not be an error")
        complete = 0
        total = 0
        for s in sizes:
            if total + s > cut:
                break
            complete += 1
            total += s
        assert len(batches) == complete
    for i in range(len(data)):
        bad = bytearray(data)
        bad[i] ^= 0x5A
        try:
            for b in decode_batches(bytes(bad), check_crcs=False):
                b.records()
        except CorruptRecordError:
            pass


def test_nested_compression_is_corrupt() -> None:
    inner = bytearray(legacy_set(1, CODECS["gzip"], ROWS[:1]))
    wrapper = bytearray(legacy_set(1, CODECS["gzip"], ROWS[:1]))
    # Build a wrapper whose inner message is itself compressed.
    body = bytes([1, 1]) + struct.pack(">q", 1) + struct.pack(">i", -1)
    packed = zlib.compressobj(6, zlib.DEFLATED, 31)
    value = packed.compress(bytes(inner)) + packed.flush()
    body += struct.pack(">i", len(value)) + value
    entry = struct.pack(">qiI", 0, 4 + len(body), zlib.crc32(body)) + body
    assert wrapper  # the builder itself works; the hand-made nesting is what is refused
    with pytest.raises(CorruptRecordError, match="nested"):
        list(decode_batches(entry))


def test_wrapper_bomb_is_capped() -> None:
    rows = [(1, None, bytes(2 * 1024 * 1024))]
    data = legacy_set(1, CODECS["gzip"], rows)
    with pytest.raises(DecompressionLimitError):
        list(decode_batches(data, max_decompressed_size=1024 * 1024))


def test_too_short_magic1_message() -> None:
    body = bytes([1, 0]) + struct.pack(">i", -1) + struct.pack(">i", -1)  # no timestamp
    entry = struct.pack(">qiI", 0, 4 + len(body), zlib.crc32(body)) + body
    with pytest.raises(CorruptRecordError):
        list(decode_batches(entry))


def test_legacy_followed_by_v2() -> None:
    # A log written before and after an upgrade to the v2 format.
    old = legacy_set(1, 0, ROWS[:2])
    new = build_batch([(5, b"n", b"new", None)], base_offset=2)
    got = [r for b in decode_batches(old + new) for r in b.records()]
    assert [r.offset for r in got] == [0, 1, 2]
    assert got[-1].value == b"new"
