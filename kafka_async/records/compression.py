"""Compression codecs of Kafka record batches, with a hard cap on decompressed size.

Codec ids are the low three bits of a batch's attributes: 0 none, 1 gzip, 2 snappy, 3 lz4,
4 zstd. Every decompressor here works incrementally and stops as soon as the output would pass
``max_size``, so a decompression bomb costs at most about ``max_size`` bytes of memory (plus a
few MiB of codec slack) before :class:`~kafka_async.errors.DecompressionLimitError` is raised.

Snappy comes in two shapes: the raw block format (librdkafka, kafka-python) and the "xerial"
framing that the Java client writes (a magic header, two version ints, then length-prefixed
raw blocks). Both decode; we encode the xerial form, as Java does, because every client reads
it while some old Java readers do not read raw blocks.
"""

from __future__ import annotations

import struct
import threading
import zlib
from collections.abc import Callable

import lz4.frame as _lz4f
import snappy as _snappy
import zstandard as _zstd

from ..errors import ConfigError, CorruptRecordError, DecompressionLimitError, UnsupportedCodecError

NONE = 0
GZIP = 1
SNAPPY = 2
LZ4 = 3
ZSTD = 4

#: Codec names as used in producer configuration (``compression_type``).
CODEC_BY_NAME: dict[str, int] = {
    "none": NONE,
    "gzip": GZIP,
    "snappy": SNAPPY,
    "lz4": LZ4,
    "zstd": ZSTD,
}
NAME_BY_CODEC: dict[int, str] = {v: k for k, v in CODEC_BY_NAME.items()}

DEFAULT_MAX_DECOMPRESSED_SIZE = 64 * 1024 * 1024

XERIAL_MAGIC = b"\x82SNAPPY\x00"
# Java's SnappyOutputStream writes version 1, minimum compatible version 1, and 32 KiB blocks.
_XERIAL_HEADER = XERIAL_MAGIC + struct.pack(">ii", 1, 1)
_XERIAL_BLOCK = 32 * 1024
_INT32 = struct.Struct(">i")

# Output produced per decompressor call. Small enough that overshooting the cap by one chunk
# is harmless, large enough that ordinary batches need only a few calls.
_CHUNK = 1024 * 1024
# zstd's decompressobj has no output limit, so input is fed in slices. One block (at most
# 128 KiB of output) needs at least 3 input bytes, so a slice of n bytes yields at most
# (n / 3 + 1) * 128 KiB; slices are sized from the remaining budget with that bound.
_ZSTD_BLOCK = 128 * 1024
_ZSTD_MIN_SLICE = 64
_ZSTD_MAX_FRAME_HEADER = 18


def codec_from_name(name: str | int | None) -> int:
    """Codec id for a configuration value (``None``, a name such as ``"zstd"``, or an id)."""
    if name is None:
        return NONE
    if isinstance(name, int) and not isinstance(name, bool):
        if name in NAME_BY_CODEC:
            return name
        raise UnsupportedCodecError(f"unknown compression codec id {name}")
    if isinstance(name, str) and name.lower() in CODEC_BY_NAME:
        return CODEC_BY_NAME[name.lower()]
    raise ConfigError(
        f"compression_type must be one of {sorted(CODEC_BY_NAME)} or None, not {name!r}"
    )


# --------------------------------------------------------------------------------------------
# Compression
# --------------------------------------------------------------------------------------------


def _gzip_compress(data: bytes | bytearray | memoryview, level: int | None) -> bytes:
    # wbits 31 = gzip container; zlib writes mtime 0, so output is deterministic.
    c = zlib.compressobj(6 if level is None else level, zlib.DEFLATED, 31)
    return c.compress(data) + c.flush()


def _snappy_compress(data: bytes | bytearray | memoryview, level: int | None) -> bytes:
    view = memoryview(data)
    out = bytearray(_XERIAL_HEADER)
    for start in range(0, len(view), _XERIAL_BLOCK):
        block = _snappy.compress(bytes(view[start : start + _XERIAL_BLOCK]))
        out += _INT32.pack(len(block))
        out += block
    return bytes(out)


def _lz4_compress(data: bytes | bytearray | memoryview, level: int | None) -> bytes:
    # Independent 64 KiB blocks, as Java's KafkaLZ4BlockOutputStream writes them.
    return bytes(
        _lz4f.compress(
            data,
            compression_level=0 if level is None else level,
            block_size=_lz4f.BLOCKSIZE_MAX64KB,
            block_linked=False,
        )
    )


# zstd contexts are costly to create and must not be shared between threads (batches may be
# built or decoded in worker threads), so each thread keeps its own.
_ZSTD_LOCAL = threading.local()


def _zstd_compressor(level: int) -> _zstd.ZstdCompressor:
    cache: dict[int, _zstd.ZstdCompressor] | None = getattr(_ZSTD_LOCAL, "compressors", None)
    if cache is None:
        cache = _ZSTD_LOCAL.compressors = {}
    cctx = cache.get(level)
    if cctx is None:
        cctx = cache[level] = _zstd.ZstdCompressor(level=level)
    return cctx


def _zstd_decompressor() -> _zstd.ZstdDecompressor:
    dctx: _zstd.ZstdDecompressor | None = getattr(_ZSTD_LOCAL, "decompressor", None)
    if dctx is None:
        dctx = _ZSTD_LOCAL.decompressor = _zstd.ZstdDecompressor()
    return dctx


def _zstd_compress(data: bytes | bytearray | memoryview, level: int | None) -> bytes:
    return bytes(_zstd_compressor(3 if level is None else level).compress(data))


_COMPRESSORS: dict[int, Callable[[bytes | bytearray | memoryview, int | None], bytes]] = {
    GZIP: _gzip_compress,
    SNAPPY: _snappy_compress,
    LZ4: _lz4_compress,
    ZSTD: _zstd_compress,
}


def compress(codec: int, data: bytes | bytearray | memoryview, level: int | None = None) -> bytes:
    """Compress ``data`` with ``codec`` (``level`` None = the codec's default)."""
    if codec == NONE:
        return bytes(data)
    fn = _COMPRESSORS.get(codec)
    if fn is None:
        raise UnsupportedCodecError(f"unknown compression codec id {codec}")
    return fn(data, level)


# --------------------------------------------------------------------------------------------
# Decompression (bounded)
# --------------------------------------------------------------------------------------------


def _limit_error(codec: int, max_size: int) -> DecompressionLimitError:
    return DecompressionLimitError(
        f"{NAME_BY_CODEC.get(codec, codec)} batch decompresses to more than {max_size} bytes"
    )


def _finished(d: zlib._Decompress) -> bool:
    # A function call, so type checkers do not assume ``eof`` is unchanged by ``flush()``.
    return d.eof


def _gzip_decompress(data: memoryview, max_size: int) -> bytes:
    parts: list[bytes] = []
    total = 0
    pending = bytes(data)
    try:
        # A gzip stream may hold several members; Java's GZIPInputStream reads them all.
        while pending:
            d = zlib.decompressobj(31)
            chunk = d.decompress(pending, min(_CHUNK, max_size - total + 1))
            while True:
                total += len(chunk)
                if total > max_size:
                    raise _limit_error(GZIP, max_size)
                parts.append(chunk)
                if d.eof or not d.unconsumed_tail:
                    break
                chunk = d.decompress(d.unconsumed_tail, min(_CHUNK, max_size - total + 1))
            if not d.eof:
                # Input exhausted before the end of the member; flush what is buffered to
                # tell an output-limited pause from a truncated stream.
                tail = d.flush()
                total += len(tail)
                if total > max_size:
                    raise _limit_error(GZIP, max_size)
                if not _finished(d):
                    raise CorruptRecordError("gzip batch data is truncated")
                parts.append(tail)
            pending = d.unused_data
    except zlib.error as e:
        raise CorruptRecordError(f"gzip batch data is corrupt: {e}") from None
    return b"".join(parts)


def _raw_snappy_length(block: bytes | memoryview) -> int:
    """The uncompressed length a raw snappy block announces (its varint prefix)."""
    result = 0
    shift = 0
    for i in range(min(len(block), 5)):
        b = block[i]
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result
        shift += 7
    raise CorruptRecordError("snappy block has a bad length prefix")


def _snappy_block(block: bytes | memoryview, budget: int, max_size: int) -> bytes:
    if _raw_snappy_length(block) > budget:
        raise _limit_error(SNAPPY, max_size)
    try:
        return bytes(_snappy.uncompress(bytes(block)))
    except Exception as e:  # python-snappy raises its own UncompressError or cramjam errors
        raise CorruptRecordError(f"snappy batch data is corrupt: {e}") from None


def _snappy_decompress(data: memoryview, max_size: int) -> bytes:
    if data[:8] != XERIAL_MAGIC:
        return _snappy_block(data, max_size, max_size)
    n = len(data)
    if n < 16:
        raise CorruptRecordError("xerial snappy header is truncated")
    pos = 16
    parts: list[bytes] = []
    total = 0
    while pos < n:
        if n - pos < 4:
            raise CorruptRecordError("xerial snappy block length is truncated")
        (size,) = _INT32.unpack_from(data, pos)
        pos += 4
        if size < 0 or size > n - pos:
            raise CorruptRecordError("xerial snappy block overruns the batch")
        block = _snappy_block(data[pos : pos + size], max_size - total, max_size)
        pos += size
        total += len(block)
        parts.append(block)
    return b"".join(parts)


def _lz4_decompress(data: memoryview, max_size: int) -> bytes:
    parts: list[bytes] = []
    total = 0
    pending = bytes(data)
    try:
        while pending:
            d = _lz4f.LZ4FrameDecompressor()
            chunk = d.decompress(pending, min(_CHUNK, max_size - total + 1))
            while True:
                total += len(chunk)
                if total > max_size:
                    raise _limit_error(LZ4, max_size)
                parts.append(chunk)
                if d.eof or d.needs_input:
                    break
                chunk = d.decompress(b"", min(_CHUNK, max_size - total + 1))
            if not d.eof:
                raise CorruptRecordError("lz4 batch data is truncated")
            pending = d.unused_data
    except RuntimeError as e:  # python-lz4 reports frame errors as RuntimeError
        raise CorruptRecordError(f"lz4 batch data is corrupt: {e}") from None
    return b"".join(parts)


def _zstd_decompress(data: memoryview, max_size: int) -> bytes:
    parts: list[bytes] = []
    total = 0
    pending = bytes(data)
    dctx = _zstd_decompressor()
    try:
        while pending:
            d = dctx.decompressobj()
            pos = 0
            n = len(pending)
            # zstd refuses to produce more than a frame's declared content size, and one
            # decompress call stops at the end of a frame: with a declared size within
            # budget, the whole input can be fed at once.
            declared = _zstd.frame_content_size(pending[:_ZSTD_MAX_FRAME_HEADER])
            if declared > max_size - total:
                raise _limit_error(ZSTD, max_size)
            whole = declared >= 0
            while pos < n and not d.eof:
                budget = max_size - total
                step = n if whole else max(_ZSTD_MIN_SLICE, (budget // _ZSTD_BLOCK) * 3)
                chunk = d.decompress(pending[pos : pos + step])
                pos += step
                total += len(chunk)
                if total > max_size:
                    raise _limit_error(ZSTD, max_size)
                parts.append(chunk)
            if not d.eof:
                raise CorruptRecordError("zstd batch data is truncated")
            # unused_data covers only the last slice fed; the rest was never fed at all.
            pending = d.unused_data + pending[pos:]
    except _zstd.ZstdError as e:
        raise CorruptRecordError(f"zstd batch data is corrupt: {e}") from None
    return b"".join(parts)


_DECOMPRESSORS: dict[int, Callable[[memoryview, int], bytes]] = {
    GZIP: _gzip_decompress,
    SNAPPY: _snappy_decompress,
    LZ4: _lz4_decompress,
    ZSTD: _zstd_decompress,
}


def decompress(
    codec: int,
    data: bytes | bytearray | memoryview,
    max_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> bytes:
    """Decompress ``data``; raise :class:`DecompressionLimitError` past ``max_size`` bytes.

    Corrupt or truncated input raises :class:`CorruptRecordError`, an unknown codec id
    :class:`UnsupportedCodecError`.
    """
    view = memoryview(data)
    if codec == NONE:
        if len(view) > max_size:
            raise _limit_error(codec, max_size)
        return bytes(view)
    fn = _DECOMPRESSORS.get(codec)
    if fn is None:
        raise UnsupportedCodecError(f"unknown compression codec id {codec}")
    return fn(view, max_size)
