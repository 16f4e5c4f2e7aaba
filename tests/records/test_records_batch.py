"""RecordBatch v2: golden bytes, round trips, validation, corruption and truncation.

Every test taking the ``impl`` fixture runs once with the C accelerator and once with the
pure-Python loops.
"""

from __future__ import annotations

import struct

import crc32c
import pytest

from kafka_async.errors import CorruptRecordError, UnsupportedCodecError
from kafka_async.records import (
    BatchBuilder,
    ControlRecordType,
    Record,
    build_batch,
    control_record_payload,
    decode_batches,
)

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]

# A batch written out byte by byte from the RecordBatch v2 layout in the Kafka protocol
# guide: two records, the second with a null key, an empty value and two headers (one with a
# null value); producer id 7, epoch 1, base sequence 5.
GOLDEN_RECORDS = bytes.fromhex(
    # length 12 | attrs | ts delta 0 | offset delta 0 | key len 1 "k" | value len 5 "hello"
    # | 0 headers
    "18"
    "00"
    "00"
    "00"
    "02"
    "6b"
    "0a"
    "68656c6c6f"
    "00"
    # length 13 | attrs | ts delta 5 | offset delta 1 | null key | empty value | 2 headers:
    # "h" = "v", "n" = null
    "1a"
    "00"
    "0a"
    "02"
    "01"
    "00"
    "04"
    "02"
    "68"
    "02"
    "76"
    "02"
    "6e"
    "01"
)
GOLDEN_AFTER_CRC = (
    bytes.fromhex(
        "0000"  # attributes
        "00000001"  # last offset delta
        "00000174876e8000"  # base timestamp 1600000000000
        "00000174876e8005"  # max timestamp
        "0000000000000007"  # producer id
        "0001"  # producer epoch
        "00000005"  # base sequence
        "00000002"  # record count
    )
    + GOLDEN_RECORDS
)
GOLDEN_CRC = 0x90A06B31
GOLDEN = (
    bytes.fromhex("00000000000000000000004cffffffff02")  # offset, length, epoch, magic
    + GOLDEN_CRC.to_bytes(4, "big")
    + GOLDEN_AFTER_CRC
)
GOLDEN_DECODED = [
    Record(0, 1600000000000, b"k", b"hello", ()),
    Record(1, 1600000000005, None, b"", (("h", b"v"), ("n", None))),
]


def recrc(batch: bytes | bytearray) -> bytes:
    """Recompute the CRC of a single batch after a test edited it."""
    out = bytearray(batch)
    out[17:21] = crc32c.crc32c(bytes(out[21:])).to_bytes(4, "big")
    return bytes(out)


def decode_all(data: bytes, **kwargs: object) -> list[Record]:
    return [r for b in decode_batches(data, **kwargs) for r in b.records()]  # type: ignore[arg-type]


def test_golden_crc_is_crc32c_of_the_tail() -> None:
    assert crc32c.crc32c(GOLDEN_AFTER_CRC) == GOLDEN_CRC
    assert len(GOLDEN) == 12 + 0x4C


def test_golden_bytes_encode(impl: str) -> None:
    built = build_batch(
        [
            (1600000000000, b"k", b"hello", None),
            (1600000000005, None, b"", [("h", b"v"), ("n", None)]),
        ],
        producer_id=7,
        producer_epoch=1,
        base_sequence=5,
    )
    assert built == GOLDEN


def test_golden_bytes_decode(impl: str) -> None:
    (batch,) = decode_batches(GOLDEN)
    assert batch.base_offset == 0
    assert batch.magic == 2
    assert batch.crc == GOLDEN_CRC
    assert batch.partition_leader_epoch == -1
    assert batch.producer_id == 7
    assert batch.producer_epoch == 1
    assert batch.base_sequence == 5
    assert batch.record_count == 2
    assert batch.last_offset_delta == 1
    assert batch.base_timestamp == 1600000000000
    assert batch.max_timestamp == 1600000000005
    assert batch.compression_type == 0
    assert batch.timestamp_type == 0
    assert not batch.is_transactional
    assert not batch.is_control
    assert batch.delete_horizon_ms is None
    assert batch.next_offset == 2
    assert batch.size_in_bytes == len(GOLDEN)
    assert batch.records() == GOLDEN_DECODED
    assert list(batch) == GOLDEN_DECODED
    assert len(batch) == 2


@pytest.mark.parametrize("codec", CODECS)
def test_round_trip_every_codec(impl: str, codec: str) -> None:
    rows: list[tuple[int, bytes | None, bytes | None, list[tuple[str, bytes | None]] | None]] = [
        (1700000000000 + i, None if i % 3 == 0 else b"key-%d" % i, b"x" * (i % 200), None)
        for i in range(500)
    ]
    rows[7] = (rows[7][0], b"k", None, [("a", b"1"), ("\u00e9t\u00e9", None), ("", b"")])
    data = build_batch(rows, codec, producer_id=42, producer_epoch=3, base_sequence=100)
    (batch,) = decode_batches(data)
    assert batch.compression_type == CODECS.index(codec)
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (42, 3, 100)
    assert batch.max_timestamp == 1700000000499
    got = batch.records()
    assert [r.offset for r in got] == list(range(500))
    assert [(r.timestamp, r.key, r.value) for r in got] == [(t, k, v) for t, k, v, _ in rows]
    assert got[7].headers == (("a", b"1"), ("\u00e9t\u00e9", None), ("", b""))
    assert got[8].headers == ()


def test_large_values_and_multibyte_varints(impl: str) -> None:
    big = bytes(range(256)) * 4000  # 1 MB: a 3-byte length varint
    rows = [
        (0, b"", big, [("k" * 300, big[:70000])]),
        ((1 << 62), None, b"v", None),  # a 9-byte timestamp delta
        (5, b"x", b"", None),  # a negative timestamp delta
    ]
    data = build_batch(rows, base_offset=(1 << 40))
    (batch,) = decode_batches(data)
    got = batch.records()
    assert got[0] == Record(1 << 40, 0, b"", big, (("k" * 300, big[:70000]),))
    assert got[1] == Record((1 << 40) + 1, 1 << 62, None, b"v", ())
    assert got[2] == Record((1 << 40) + 2, 5, b"x", b"", ())
    assert batch.base_timestamp == 0
    assert batch.max_timestamp == 1 << 62


def test_builder_size_limit_and_first_record_always_fits(impl: str) -> None:
    b = BatchBuilder(batch_size_limit=200)
    assert b.append(1, None, b"x" * 1000) == 0  # larger than the limit, but first
    assert b.append(1, None, b"y") is None
    assert b.record_count == 1
    b = BatchBuilder(batch_size_limit=200)
    deltas = []
    while (d := b.append(1, None, b"z" * 10)) is not None:
        deltas.append(d)
    assert deltas == list(range(len(deltas)))
    assert b.size_in_bytes <= 200
    assert len(b.build()) == b.size_in_bytes
    (batch,) = decode_batches(b.build())
    assert len(batch.records()) == len(deltas)


def test_builder_accepts_keywords_and_buffers(impl: str) -> None:
    b = BatchBuilder("gzip")
    assert b.append(timestamp=5, key=bytearray(b"ka"), value=memoryview(b"va")) == 0
    assert b.append(6, b"k", b"v", headers=(["h", bytearray(b"x")],)) == 1
    assert b.append(7, None, None, iter([("g", memoryview(b"y"))])) == 2
    (batch,) = decode_batches(b.build())
    assert batch.records() == [
        Record(0, 5, b"ka", b"va", ()),
        Record(1, 6, b"k", b"v", (("h", b"x"),)),
        Record(2, 7, None, None, (("g", b"y"),)),
    ]


def test_builder_timestamp_none_is_now(impl: str) -> None:
    import time

    before = time.time_ns() // 1_000_000
    b = BatchBuilder()
    b.append(None, None, b"v")
    after = time.time_ns() // 1_000_000
    (rec,) = next(decode_batches(b.build())).records()
    assert before <= rec.timestamp <= after


@pytest.mark.parametrize(
    ("args", "exc"),
    [
        (("1", None, b"v"), TypeError),
        ((True, None, b"v"), TypeError),
        ((1.5, None, b"v"), TypeError),
        ((-1, None, b"v"), ValueError),
        ((1 << 63, None, b"v"), ValueError),
        ((1, "key", b"v"), TypeError),
        ((1, None, "value"), TypeError),
        ((1, None, 5), TypeError),
        ((1, None, b"v", [("k",)]), TypeError),
        ((1, None, b"v", [(b"k", b"v")]), TypeError),
        ((1, None, b"v", [("k", "v")]), TypeError),
        ((1, None, b"v", ["kv"]), TypeError),
        ((1, None, b"v", 5), TypeError),
        ((1, None, b"v", [("\ud800", b"v")]), UnicodeEncodeError),
    ],
)
def test_builder_rejects_bad_arguments(impl: str, args: tuple[object, ...], exc: type) -> None:
    b = BatchBuilder()
    with pytest.raises(exc):
        b.append(*args)
    assert b.record_count == 0
    assert b.size_in_bytes == 61


def test_builder_rejects_unknown_keywords(impl: str) -> None:
    b = BatchBuilder()
    with pytest.raises(TypeError):
        b.append(1, None, b"v", bogus=1)
    with pytest.raises(TypeError):
        b.append(1, None)
    with pytest.raises(TypeError):
        b.append(1, None, b"v", None, None)


def test_build_empty_batch_is_an_error(impl: str) -> None:
    with pytest.raises(ValueError, match="without records"):
        BatchBuilder().build()


@pytest.mark.parametrize("codec", CODECS)
def test_rebuild_with_new_producer_state(impl: str, codec: str) -> None:
    b = BatchBuilder(codec)
    b.append(10, b"k", b"v")
    first = b.build(1, 0, 0)
    second = b.build(1, 1, 0)
    assert first != second
    (x,), (y,) = decode_batches(first), decode_batches(second)
    assert (x.producer_epoch, y.producer_epoch) == (0, 1)
    assert x.records() == y.records()
    b.append(11, b"k2", b"v2")  # appending after a build invalidates the cached payload
    (z,) = decode_batches(b.build())
    assert [r.key for r in z.records()] == [b"k", b"k2"]


def test_transactional_and_control_batches(impl: str) -> None:
    b = BatchBuilder(is_transactional=True)
    b.append(1, b"k", b"v")
    (batch,) = decode_batches(b.build(9, 2, 0))
    assert batch.is_transactional
    assert not batch.is_control
    assert batch.control_records() == []

    c = BatchBuilder(is_transactional=True, is_control=True)
    key, value = control_record_payload(ControlRecordType.COMMIT, 17)
    c.append(123, key, value)
    (marker,) = decode_batches(c.build(9, 2, -1, base_offset=50))
    assert marker.is_control
    assert marker.is_transactional
    (ctrl,) = marker.control_records()
    assert (ctrl.offset, ctrl.timestamp, ctrl.version) == (50, 123, 0)
    assert ctrl.is_commit
    assert not ctrl.is_abort
    assert ctrl.coordinator_epoch == 17

    key, value = control_record_payload(ControlRecordType.ABORT, 3)
    c = BatchBuilder(is_control=True)
    c.append(1, key, value)
    (ctrl,) = next(decode_batches(c.build())).control_records()
    assert ctrl.is_abort
    assert ctrl.type == ControlRecordType.ABORT


def test_control_record_with_bad_key_is_corrupt(impl: str) -> None:
    c = BatchBuilder(is_control=True)
    c.append(1, b"\x00", b"\x00\x00\x00\x00\x00\x01")
    with pytest.raises(CorruptRecordError):
        next(decode_batches(c.build())).control_records()


def test_log_append_time_overrides_record_timestamps(impl: str) -> None:
    data = bytearray(build_batch([(5, None, b"a", None), (9, None, b"b", None)]))
    struct.pack_into(">h", data, 21, 0x08)  # timestamp type = log-append time
    struct.pack_into(">q", data, 35, 777)  # max timestamp = the broker's append time
    (batch,) = decode_batches(recrc(data))
    assert batch.timestamp_type == 1
    assert [r.timestamp for r in batch.records()] == [777, 777]


def test_delete_horizon_flag(impl: str) -> None:
    data = bytearray(build_batch([(5, None, b"a", None)]))
    struct.pack_into(">h", data, 21, 0x40)
    (batch,) = decode_batches(recrc(data))
    assert batch.delete_horizon_ms == 5


def test_several_batches_and_truncated_last(impl: str) -> None:
    one = build_batch([(1, b"a", b"1", None)], base_offset=0)
    two = build_batch([(2, b"b", b"2", None), (3, b"c", b"3", None)], "zstd", base_offset=1)
    three = build_batch([(4, b"d", b"4", None)], base_offset=3)
    data = one + two + three
    got = [r for b in decode_batches(data) for r in b.records()]
    assert [r.offset for r in got] == [0, 1, 2, 3]
    for cut in range(len(one + two), len(data)):
        batches = list(decode_batches(memoryview(data)[:cut]))
        assert len(batches) == 2
    assert list(decode_batches(b"")) == []


def test_empty_batch_after_compaction(impl: str) -> None:
    # The log cleaner may keep a batch with no records (for producer state); a consumer must
    # still move past its offsets.
    data = bytearray(build_batch([(1, None, b"a", None)]))
    data = data[:61]
    struct.pack_into(">i", data, 8, 61 - 12)
    struct.pack_into(">i", data, 23, 4)  # last offset delta 4
    struct.pack_into(">i", data, 57, 0)  # no records
    (batch,) = decode_batches(recrc(data))
    assert batch.records() == []
    assert batch.next_offset == 5


def test_every_truncation_of_a_batch(impl: str) -> None:
    data = build_batch([(1, b"key", b"value", [("h", b"x")]), (2, None, b"v" * 300, None)], "lz4")
    prefix = build_batch([(0, None, b"p", None)])
    for cut in range(len(data)):
        # A truncated batch on its own, or after a complete one, is a cut fetch response.
        assert list(decode_batches(data[:cut])) == []
        (only,) = decode_batches(prefix + data[:cut])
        assert only.records() == [Record(0, 0, None, b"p", ())]


def test_truncated_batch_before_another_is_corrupt(impl: str) -> None:
    # The first batch claims fewer bytes than it has: the next "batch" starts mid-record.
    a = build_batch([(1, b"key", b"value", None)] * 3)
    b = build_batch([(1, b"k", b"v", None)])
    for shrink in range(1, len(a) - 61):
        data = bytearray(a + b)
        struct.pack_into(">i", data, 8, len(a) - 12 - shrink)
        with pytest.raises(CorruptRecordError):
            decode_all(bytes(data))


def test_crc_corruption_detected(impl: str) -> None:
    data = build_batch([(1, b"key", b"value", [("h", b"x")])] * 3, "gzip")
    for i in range(17, len(data)):
        bad = bytearray(data)
        bad[i] ^= 0x01
        with pytest.raises(CorruptRecordError):
            list(decode_batches(bytes(bad)))


def test_flipped_bytes_without_crc_check_raise_typed_errors_only(impl: str) -> None:
    for codec in CODECS:
        data = build_batch([(1, b"key", b"value", [("h", b"x")]), (3, None, None, None)] * 3, codec)
        for i in range(len(data)):
            for flip in (0x01, 0x80, 0xFF):
                bad = bytearray(data)
                bad[i] ^= flip
                try:
                    for batch in decode_batches(bytes(bad), check_crcs=False):
                        batch.records()
                except (CorruptRecordError, UnsupportedCodecError):
                    pass


def test_bad_magic(impl: str) -> None:
    data = bytearray(build_batch([(1, None, b"v", None)]))
    data[16] = 3
    with pytest.raises(CorruptRecordError, match="magic"):
        list(decode_batches(bytes(data)))


def test_negative_and_too_short_lengths(impl: str) -> None:
    data = bytearray(build_batch([(1, None, b"v", None)]))
    struct.pack_into(">i", data, 8, -5)
    with pytest.raises(CorruptRecordError):
        list(decode_batches(bytes(data)))
    struct.pack_into(">i", data, 8, 20)
    with pytest.raises(CorruptRecordError):
        list(decode_batches(bytes(data)))


@pytest.mark.parametrize("count", [0, 1, 3, -1, 1 << 30, (1 << 31) - 1])
def test_record_count_disagreeing_with_bytes(impl: str, count: int) -> None:
    data = bytearray(build_batch([(1, b"k", b"v", None), (2, b"k", b"v", None)]))
    struct.pack_into(">i", data, 57, count)
    with pytest.raises(CorruptRecordError):
        decode_all(recrc(data))


def test_record_length_disagreeing_with_contents(impl: str) -> None:
    data = bytearray(build_batch([(1, b"k", b"v", None)]))
    assert data[61] == 16  # zigzag(8)
    for wrong in (14, 18, 1, 0):
        data[61] = wrong
        with pytest.raises(CorruptRecordError):
            next(decode_batches(recrc(data))).records()


def test_overlong_and_overflowing_varints_are_corrupt(impl: str) -> None:
    base = bytearray(build_batch([(1, None, b"v", None)]))
    head = base[:61]
    bodies = [
        # length varint with six continuation bytes
        b"\xff\xff\xff\xff\xff\x01",
        # a 5-byte varint whose value needs 33 bits
        b"\xff\xff\xff\xff\x7f",
        # timestamp delta: an 11-byte varlong
        b"\x18\x00" + b"\xff" * 10 + b"\x01",
    ]
    for body in bodies:
        data = head + body
        struct.pack_into(">i", data, 8, len(data) - 12)
        struct.pack_into(">i", data, 57, 1)
        with pytest.raises(CorruptRecordError):
            next(decode_batches(recrc(data))).records()


def test_invalid_header_key_utf8_is_corrupt(impl: str) -> None:
    data = bytearray(build_batch([(1, None, b"v", [("ab", b"x")])]))
    i = data.index(b"ab")
    data[i] = 0xFF
    with pytest.raises(CorruptRecordError, match="UTF-8"):
        next(decode_batches(recrc(data))).records()


def test_unknown_codec(impl: str) -> None:
    data = bytearray(build_batch([(1, None, b"v", None)], "gzip"))
    struct.pack_into(">h", data, 21, 5)
    (batch,) = decode_batches(recrc(data))
    with pytest.raises(UnsupportedCodecError):
        batch.records()


def test_offsets_past_int64_stay_exact(impl: str) -> None:
    # Nonsense a broker would never send, but both implementations must agree on it.
    data = build_batch([(1, None, b"a", None), (2, None, b"b", None)], base_offset=(1 << 63) - 1)
    got = next(decode_batches(data)).records()
    assert [r.offset for r in got] == [(1 << 63) - 1, 1 << 63]


def test_repr_mentions_the_essentials(impl: str) -> None:
    (batch,) = decode_batches(GOLDEN)
    text = repr(batch)
    assert "offsets=0..1" in text
    assert "records=2" in text
    assert "producer=7/1/5" in text
