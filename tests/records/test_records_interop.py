"""Batches built by aiokafka and kafka-python decode exactly with ours, and ours with theirs.

No broker: this is byte-level interop between implementations of the same format.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from aiokafka.record.default_records import DefaultRecordBatch as AioBatch
    from aiokafka.record.default_records import DefaultRecordBatchBuilder as AioBuilder
    from kafka.record.default_records import DefaultRecordBatch as KpBatch
    from kafka.record.default_records import DefaultRecordBatchBuilder as KpBuilder

from kafka_async.records import BatchBuilder, Record, decode_batches

CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}

ROWS: list[tuple[int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]] = [
    (1700000000000, b"key-0", b"v" * 100, []),
    (1700000000001, None, b"value with null key", [("trace", b"abc"), ("empty", b"")]),
    (1700000000005, b"key-2", None, []),  # a tombstone
    (1699999999000, b"", b"", [("null-header", None)]),  # earlier timestamp: negative delta
    (1700000000002, bytes(range(256)) * 10, b"\x00" * 5000, [("\u00fc", b"\xff")]),
]


def expected(base_offset: int = 0) -> list[Record]:
    return [Record(base_offset + i, ts, k, v, tuple(h)) for i, (ts, k, v, h) in enumerate(ROWS)]


@pytest.mark.parametrize("codec", sorted(CODECS))
def test_aiokafka_batches_decode_with_ours(impl: str, codec: str) -> None:
    b = AioBuilder(2, CODECS[codec], 0, 77, 4, 1000, 1 << 24)
    for i, (ts, k, v, h) in enumerate(ROWS):
        assert b.append(i, ts, k, v, h) is not None
    data = bytes(b.build())
    (batch,) = decode_batches(data)
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (77, 4, 1000)
    assert batch.compression_type == CODECS[codec]
    assert batch.records() == expected()
    assert batch.max_timestamp == max(r[0] for r in ROWS)


@pytest.mark.parametrize("codec", sorted(CODECS))
def test_kafka_python_batches_decode_with_ours(impl: str, codec: str) -> None:
    b = KpBuilder(2, CODECS[codec], 1, 5, 0, 12, 1 << 24)
    for i, (ts, k, v, h) in enumerate(ROWS):
        assert b.append(i, ts, k, v, h) is not None
    data = bytes(b.build())
    (batch,) = decode_batches(data)
    assert batch.is_transactional
    assert batch.records() == expected()


def _ours(codec: str) -> bytes:
    b = BatchBuilder(codec, batch_size_limit=1 << 24, is_transactional=True)
    for ts, k, v, h in ROWS:
        assert b.append(ts, k, v, h) is not None
    return b.build(123, 9, 456, base_offset=1000)


def _theirs_view(batch: Iterable[Any]) -> list[Record]:
    # Their batches iterate over their own (untyped) record classes.
    return [Record(r.offset, r.timestamp, r.key, r.value, tuple(r.headers)) for r in batch]


@pytest.mark.parametrize("codec", sorted(CODECS))
def test_our_batches_decode_with_aiokafka(impl: str, codec: str) -> None:
    batch = AioBatch(_ours(codec))
    assert batch.validate_crc()
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (123, 9, 456)
    assert batch.is_transactional
    assert batch.compression_type == CODECS[codec]
    assert _theirs_view(batch) == expected(1000)


@pytest.mark.parametrize("codec", sorted(CODECS))
def test_our_batches_decode_with_kafka_python(impl: str, codec: str) -> None:
    batch = KpBatch(_ours(codec))
    assert batch.validate_crc()
    assert batch.base_offset == 1000
    assert _theirs_view(batch) == expected(1000)
