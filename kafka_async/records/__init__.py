"""Kafka record batches: RecordBatch v2 encode/decode, legacy v0/v1 decode, compression.

Pure (no I/O). Producing: :class:`BatchBuilder` (``append`` records, then ``build`` with the
producer id, epoch and base sequence assigned at drain time). Consuming:
:func:`decode_batches` over a partition's fetched bytes, then ``batch.records()``.
"""

from __future__ import annotations

from .batch import (
    SPEEDUPS,
    TIMESTAMP_CREATE_TIME,
    TIMESTAMP_LOG_APPEND_TIME,
    TIMESTAMP_NONE,
    BatchBuilder,
    ControlRecord,
    ControlRecordType,
    Record,
    RecordBatch,
    build_batch,
    control_record_payload,
    decode_batches,
    parse_control_record,
)
from .compression import (
    CODEC_BY_NAME,
    DEFAULT_MAX_DECOMPRESSED_SIZE,
    GZIP,
    LZ4,
    NONE,
    SNAPPY,
    ZSTD,
    codec_from_name,
)
from .legacy import LegacyRecordBatch

__all__ = [
    "CODEC_BY_NAME",
    "DEFAULT_MAX_DECOMPRESSED_SIZE",
    "GZIP",
    "LZ4",
    "NONE",
    "SNAPPY",
    "SPEEDUPS",
    "TIMESTAMP_CREATE_TIME",
    "TIMESTAMP_LOG_APPEND_TIME",
    "TIMESTAMP_NONE",
    "ZSTD",
    "BatchBuilder",
    "ControlRecord",
    "ControlRecordType",
    "LegacyRecordBatch",
    "Record",
    "RecordBatch",
    "build_batch",
    "codec_from_name",
    "control_record_payload",
    "decode_batches",
    "parse_control_record",
]
