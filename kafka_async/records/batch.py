"""RecordBatch v2 (magic 2): decoding a buffer of batches, and building one batch.

Batch header (61 bytes, big-endian)::

    0  base_offset int64          27 base_timestamp int64
    8  batch_length int32         35 max_timestamp int64
    12 partition_leader_epoch     43 producer_id int64
    16 magic int8 (2)             51 producer_epoch int16
    17 crc uint32 (CRC32C of 21..end)   53 base_sequence int32
    21 attributes int16           57 record_count int32
    23 last_offset_delta int32    61 records (compressed as a whole when a codec is set)

Attributes: bits 0-2 codec, bit 3 timestamp type (1 = log-append time), bit 4 transactional,
bit 5 control, bit 6 "base timestamp is the delete horizon" (set by the log cleaner).

The per-record loops run in the C accelerator ``_speedups`` when it was compiled, else in
``_pure``; both behave the same (the tests run every batch test against each).
"""

from __future__ import annotations

import struct
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Iterator
from typing import Any, NamedTuple, TypeAlias

import crc32c as _crc32c

from ..errors import ConfigError, CorruptRecordError
from . import _pure
from . import compression as _codecs
from .compression import DEFAULT_MAX_DECOMPRESSED_SIZE

try:
    from . import _speedups
except ImportError:  # the optional C extension was not built
    _speedups = None  # type: ignore[assignment]

#: True when the C accelerator of the record codec is in use (the producer's own C fast
#: path says so in ``kafka_async.producer.fastpath.FASTPATH``).
SPEEDUPS = _speedups is not None

_decode_records = _speedups.decode_records if _speedups is not None else _pure.decode_records
#: ``consumer_records(records, lo, hi, cls, topic, partition, timestamp_type, leader_epoch)``:
#: ``records[lo:hi]`` as the consumer's record objects (see ``_pure.consumer_records``).
consumer_records = _speedups.consumer_records if _speedups is not None else _pure.consumer_records


def consumer_records_for(cls: type) -> Callable[..., list[Any]]:
    """The ``consumer_records`` that can build ``cls``: the C builder needs a slotted class
    with exactly the consumer record's fields; any other class gets the pure twin, which
    calls the constructor."""
    builder = consumer_records
    if builder is not _pure.consumer_records:
        try:
            builder([], 0, 0, cls, "", 0, 0, None)
        except TypeError:
            return _pure.consumer_records
    return builder


#: The record writer's type: the C one or its pure twin (the same methods; see the stubs).
_WriterType: TypeAlias = "_pure.RecordWriter | _speedups.RecordWriter"
_RecordWriter: type[_WriterType] = (
    _speedups.RecordWriter if _speedups is not None else _pure.RecordWriter
)
#: ``ready(value)``: an awaitable that returns ``value`` at once (``async for``'s per-record
#: answer when the record is at hand; see ``_pure.ready``).
ready: Callable[[Any], Awaitable[Any]] = _speedups.ready if _speedups is not None else _pure.ready
if _speedups is not None:
    # What the C ``ready`` returns passes for a coroutine (it has send, throw and close), so a
    # producer's ``enqueue(...)`` may be given to ``asyncio.create_task`` like any coroutine.
    Coroutine.register(type(_speedups.ready(None)))

MAGIC = 2
HEADER_SIZE = 61
# batch_length counts everything after the length field: the header minus 12 bytes.
MIN_BATCH_LENGTH = HEADER_SIZE - 12
_LOG_OVERHEAD = 12  # base_offset + batch_length
_CRC_START = 21
_HEADER = struct.Struct(">qiibIhiqqqhii")
_CRC = struct.Struct(">I")

ATTR_COMPRESSION_MASK = 0x07
ATTR_TIMESTAMP_TYPE = 0x08
ATTR_TRANSACTIONAL = 0x10
ATTR_CONTROL = 0x20
ATTR_DELETE_HORIZON = 0x40

TIMESTAMP_CREATE_TIME = 0
TIMESTAMP_LOG_APPEND_TIME = 1
TIMESTAMP_NONE = -1


class Record(NamedTuple):
    """One decoded record. ``headers`` holds ``(key, value)`` pairs; values may be None."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]


class ControlRecordType:
    """Types of control record (the ``type`` field of a control record's key)."""

    ABORT = 0
    COMMIT = 1


class ControlRecord(NamedTuple):
    """A transaction marker written by the coordinator in a control batch."""

    offset: int
    timestamp: int
    version: int
    type: int
    coordinator_epoch: int

    @property
    def is_commit(self) -> bool:
        return self.type == ControlRecordType.COMMIT

    @property
    def is_abort(self) -> bool:
        return self.type == ControlRecordType.ABORT


_CONTROL_KEY = struct.Struct(">hh")
_CONTROL_VALUE = struct.Struct(">hi")


def parse_control_record(record: Record) -> ControlRecord:
    """Read a control batch's record as a commit/abort marker.

    The key holds version and type (int16 each); the value, version and coordinator epoch.
    Newer versions may append fields, so only the known prefix is read.
    """
    key, value = record.key, record.value
    if key is None or len(key) < _CONTROL_KEY.size:
        raise CorruptRecordError("control record key is missing or too short")
    version, ctype = _CONTROL_KEY.unpack_from(key)
    epoch = -1
    if value is not None:
        if len(value) < _CONTROL_VALUE.size:
            raise CorruptRecordError("control record value is too short")
        _, epoch = _CONTROL_VALUE.unpack_from(value)
    return ControlRecord(record.offset, record.timestamp, version, ctype, epoch)


def control_record_payload(
    control_type: int, coordinator_epoch: int, *, version: int = 0
) -> tuple[bytes, bytes]:
    """(key, value) of a commit/abort marker, for building control batches in tests or fakes."""
    return (
        _CONTROL_KEY.pack(version, control_type),
        _CONTROL_VALUE.pack(version, coordinator_epoch),
    )


class RecordBatch:
    """One batch of a fetch response. Header fields are plain attributes; ``records()``
    decompresses (bounded by ``max_decompressed_size``) and decodes the records on demand,
    each call anew.
    """

    __slots__ = (
        "_buf",
        "_end",
        "_max_size",
        "_start",
        "attributes",
        "base_offset",
        "base_sequence",
        "base_timestamp",
        "batch_length",
        "crc",
        "last_offset_delta",
        "magic",
        "max_timestamp",
        "partition_leader_epoch",
        "producer_epoch",
        "producer_id",
        "record_count",
    )

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    record_count: int
    _buf: bytes
    _start: int
    _end: int
    _max_size: int

    def __init__(
        self,
        buf: bytes = b"",
        start: int = 0,
        end: int = 0,
        max_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    ) -> None:
        """A batch whose records are ``buf[start:end]`` (header fields are set by the
        decoder); ``max_size`` caps their decompressed size."""
        self._buf = buf
        self._start = start
        self._end = end
        self._max_size = max_size

    @property
    def compression_type(self) -> int:
        """Codec id: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd."""
        return self.attributes & ATTR_COMPRESSION_MASK

    @property
    def timestamp_type(self) -> int:
        """0 create time, 1 log-append time (-1, no timestamps, for legacy magic 0)."""
        return (self.attributes & ATTR_TIMESTAMP_TYPE) >> 3

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & ATTR_TRANSACTIONAL)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & ATTR_CONTROL)

    @property
    def delete_horizon_ms(self) -> int | None:
        """The log cleaner's delete horizon, stored in ``base_timestamp`` when flagged."""
        return self.base_timestamp if self.attributes & ATTR_DELETE_HORIZON else None

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        """The offset after this batch (where a consumer continues, even if records were
        compacted away)."""
        return self.base_offset + self.last_offset_delta + 1

    @property
    def size_in_bytes(self) -> int:
        return self.batch_length + _LOG_OVERHEAD

    def records(self) -> list[Record]:
        """Decode every record (decompressing first if needed).

        Raises :class:`CorruptRecordError` when the records do not match the header's count
        or the bytes, :class:`DecompressionLimitError` past the decompression cap and
        :class:`UnsupportedCodecError` for an unknown codec.
        """
        codec = self.attributes & ATTR_COMPRESSION_MASK
        override = self.max_timestamp if self.attributes & ATTR_TIMESTAMP_TYPE else None
        if codec == 0:
            return _decode_records(
                self._buf,
                self._start,
                self._end,
                self.record_count,
                self.base_offset,
                self.base_timestamp,
                override,
                Record,
            )
        raw = _codecs.decompress(
            codec, memoryview(self._buf)[self._start : self._end], self._max_size
        )
        return _decode_records(
            raw,
            0,
            len(raw),
            self.record_count,
            self.base_offset,
            self.base_timestamp,
            override,
            Record,
        )

    def control_records(self) -> list[ControlRecord]:
        """The markers of a control batch (empty for an ordinary batch)."""
        if not self.attributes & ATTR_CONTROL:
            return []
        return [parse_control_record(r) for r in self.records()]

    def __iter__(self) -> Iterator[Record]:
        return iter(self.records())

    def __len__(self) -> int:
        return self.record_count

    def __repr__(self) -> str:
        return (
            f"<{type(self).__name__} magic={self.magic} offsets={self.base_offset}.."
            f"{self.last_offset} records={self.record_count} "
            f"codec={_codecs.NAME_BY_CODEC.get(self.compression_type, self.compression_type)}"
            f" producer={self.producer_id}/{self.producer_epoch}/{self.base_sequence}"
            f"{' txn' if self.is_transactional else ''}"
            f"{' control' if self.is_control else ''}>"
        )


def decode_batches(
    data: bytes | bytearray | memoryview,
    *,
    check_crcs: bool = True,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> Iterator[RecordBatch]:
    """Iterate the batches in ``data`` (the records field of one fetched partition).

    Yields v2 batches and, for magic 0/1 data, one legacy batch per top-level message (a
    compressed wrapper becomes one batch holding its inner messages). A last batch cut short
    by the end of ``data`` is skipped silently, as Kafka may cut a fetch response mid-batch;
    any other damage (a bad length, CRC or magic) raises :class:`CorruptRecordError`.
    Headers are checked as batches are yielded; records decode lazily in
    :meth:`RecordBatch.records`.
    """
    buf = data if type(data) is bytes else bytes(data)
    n = len(buf)
    pos = 0
    unpack_head = _HEADER.unpack_from
    crc32c = _crc32c.crc32c
    while n - pos >= _LOG_OVERHEAD:
        length = int.from_bytes(buf[pos + 8 : pos + 12], "big", signed=True)
        end = pos + _LOG_OVERHEAD + length
        if length < 0:
            raise CorruptRecordError(f"batch at byte {pos} has a negative length {length}")
        if end > n:
            return  # a truncated last batch
        if length < 5:
            raise CorruptRecordError(f"batch at byte {pos} is too short ({length} bytes)")
        magic = buf[pos + 16]
        if magic == MAGIC:
            if length < MIN_BATCH_LENGTH:
                raise CorruptRecordError(f"batch at byte {pos} is too short ({length} bytes)")
            batch = RecordBatch(buf, pos + HEADER_SIZE, end, max_decompressed_size)
            (
                batch.base_offset,
                batch.batch_length,
                batch.partition_leader_epoch,
                batch.magic,
                batch.crc,
                batch.attributes,
                batch.last_offset_delta,
                batch.base_timestamp,
                batch.max_timestamp,
                batch.producer_id,
                batch.producer_epoch,
                batch.base_sequence,
                batch.record_count,
            ) = unpack_head(buf, pos)
            if check_crcs:
                actual = crc32c(memoryview(buf)[pos + _CRC_START : end])
                if actual != batch.crc:
                    raise CorruptRecordError(
                        f"batch at offset {batch.base_offset} failed its CRC32C check "
                        f"(stored {batch.crc:#010x}, computed {actual:#010x})"
                    )
            if batch.record_count < 0:
                raise CorruptRecordError(f"batch at byte {pos} has a negative record count")
            yield batch
        elif magic in (0, 1):
            from .legacy import decode_legacy_entry

            yield decode_legacy_entry(buf, pos, end, check_crcs, max_decompressed_size)
        else:
            raise CorruptRecordError(f"batch at byte {pos} has unsupported magic {magic}")
        pos = end


class BatchBuilder:
    """Collects records into one RecordBatch v2 and builds it.

    ``append(timestamp_ms, key, value, headers=None)`` returns the record's offset delta, or
    None when the record would take the batch past ``batch_size_limit`` (nothing is written
    then; the first record is always accepted, so callers check ``max_request_size`` first).
    ``timestamp_ms`` None means now. ``build()`` may be called more than once (a retried
    batch is rebuilt with the same sequence but, say, a bumped epoch); the compressed
    records are cached between builds while no record is added.
    """

    __slots__ = (
        "_cache",
        "_cache_count",
        "_codec",
        "_flags",
        "_level",
        "_writer",
        "append",
    )

    #: The per-record writer implementation (the C one when available).
    _writer_type: type[_WriterType] = _RecordWriter

    #: ``append(timestamp_ms, key, value, headers=None) -> int | None`` (see the class doc).
    append: Callable[..., int | None]

    def __init__(
        self,
        compression_type: int | str | None = None,
        *,
        batch_size_limit: int = 16384,
        is_transactional: bool = False,
        is_control: bool = False,
        compression_level: int | None = None,
    ) -> None:
        self._codec = _codecs.codec_from_name(compression_type)
        if batch_size_limit <= HEADER_SIZE:
            raise ConfigError(f"batch_size_limit must exceed {HEADER_SIZE} bytes")
        self._level = compression_level
        self._flags = self._codec
        if is_transactional:
            self._flags |= ATTR_TRANSACTIONAL
        if is_control:
            self._flags |= ATTR_CONTROL
        self._writer = self._writer_type(batch_size_limit)
        # Binding the writer's method here makes every append one direct call (into C when
        # the accelerator is built) instead of a Python method forwarding to it.
        self.append = self._writer.append
        self._cache: bytes | None = None
        self._cache_count = -1

    @property
    def compression_type(self) -> int:
        return self._codec

    @property
    def writer(self) -> _WriterType:
        """The per-record writer ``append`` goes to (what ``append_record`` takes)."""
        return self._writer

    @property
    def record_count(self) -> int:
        return self._writer.record_count

    @property
    def size_in_bytes(self) -> int:
        """Header plus uncompressed records; the built batch is at most about this big."""
        return self._writer.size_in_bytes

    @property
    def max_timestamp(self) -> int:
        return self._writer.max_timestamp

    @property
    def base_timestamp(self) -> int:
        return self._writer.base_timestamp

    def build(
        self,
        producer_id: int = -1,
        producer_epoch: int = -1,
        base_sequence: int = -1,
        *,
        base_offset: int = 0,
        partition_leader_epoch: int = -1,
    ) -> bytes:
        """The encoded batch: compressed (if a codec is set) and CRC'd."""
        w = self._writer
        count = w.record_count
        if count == 0:
            raise ValueError("cannot build a batch without records")
        buf = w.buffer
        fields = (
            base_offset,
            0,
            partition_leader_epoch,
            MAGIC,
            0,
            self._flags,
            count - 1,
            w.base_timestamp,
            w.max_timestamp,
            producer_id,
            producer_epoch,
            base_sequence,
            count,
        )
        if self._codec == 0:
            out = buf
        else:
            if self._cache is None or self._cache_count != count:
                self._cache = _codecs.compress(
                    self._codec, memoryview(buf)[HEADER_SIZE:], self._level
                )
                self._cache_count = count
            out = bytearray(HEADER_SIZE)
            out += self._cache
        try:
            _HEADER.pack_into(out, 0, *fields)
        except struct.error as e:
            raise ValueError(f"batch header field out of range: {e}") from None
        struct.pack_into(">i", out, 8, len(out) - _LOG_OVERHEAD)
        _CRC.pack_into(out, 17, _crc32c.crc32c(memoryview(out)[_CRC_START:]))
        return bytes(out)


def build_batch(
    records: Iterable[tuple[int | None, bytes | None, bytes | None, Any]],
    compression_type: int | str | None = None,
    **build_args: int,
) -> bytes:
    """Build one batch from ``(timestamp, key, value, headers)`` tuples, with no size limit."""
    b = BatchBuilder(compression_type, batch_size_limit=(1 << 31) - 1)
    for ts, key, value, headers in records:
        b.append(ts, key, value, headers)
    return b.build(**build_args)
