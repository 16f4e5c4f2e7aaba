"""Compression codecs: round trips, peer formats, bounded decompression (bombs), damage."""

from __future__ import annotations

import gzip
import os
import struct
import tracemalloc
import zlib

import lz4.frame
import pytest
import snappy
import zstandard

from kafka_async.errors import (
    ConfigError,
    CorruptRecordError,
    DecompressionLimitError,
    UnsupportedCodecError,
)
from kafka_async.records import BatchBuilder, decode_batches
from kafka_async.records import compression as c

CODECS = [c.GZIP, c.SNAPPY, c.LZ4, c.ZSTD]
MiB = 1024 * 1024


def sample(n: int) -> bytes:
    # Half random, half repetitive: compressible but not trivially.
    rnd = os.urandom(n // 2)
    return rnd + (b"kafka-records " * (n // 28 + 1))[: n - len(rnd)]


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("size", [0, 1, 1000, 100_000, 3 * MiB])
def test_round_trip(codec: int, size: int) -> None:
    data = sample(size)
    packed = c.compress(codec, data)
    assert c.decompress(codec, packed) == data
    assert c.decompress(codec, packed, max_size=size) == data  # the cap is inclusive


def test_codec_names() -> None:
    assert c.codec_from_name(None) == c.NONE
    assert c.codec_from_name("ZSTD") == c.ZSTD
    assert c.codec_from_name(2) == c.SNAPPY
    with pytest.raises(ConfigError):
        c.codec_from_name("brotli")
    with pytest.raises(UnsupportedCodecError):
        c.codec_from_name(7)


def test_unknown_codec_ids() -> None:
    with pytest.raises(UnsupportedCodecError):
        c.compress(6, b"x")
    with pytest.raises(UnsupportedCodecError):
        c.decompress(6, b"x")


def test_gzip_is_a_gzip_stream_and_reads_stdlib_output() -> None:
    data = sample(5000)
    assert gzip.decompress(c.compress(c.GZIP, data)) == data
    assert c.decompress(c.GZIP, gzip.compress(data)) == data
    # Several gzip members back to back read as one stream, as Java's GZIPInputStream does.
    assert c.decompress(c.GZIP, gzip.compress(b"ab") + gzip.compress(b"cd")) == b"abcd"


def test_snappy_writes_xerial_like_java() -> None:
    data = sample(100_000)
    packed = c.compress(c.SNAPPY, data)
    assert packed[:8] == b"\x82SNAPPY\x00"
    assert struct.unpack(">ii", packed[8:16]) == (1, 1)
    # 32 KiB blocks, each length-prefixed raw snappy.
    pos, blocks = 16, []
    while pos < len(packed):
        (n,) = struct.unpack_from(">i", packed, pos)
        blocks.append(snappy.uncompress(packed[pos + 4 : pos + 4 + n]))
        pos += 4 + n
    assert [len(b) for b in blocks] == [32768, 32768, 32768, 100_000 - 3 * 32768]
    assert b"".join(blocks) == data


def test_snappy_reads_raw_blocks() -> None:
    data = sample(50_000)
    assert c.decompress(c.SNAPPY, snappy.compress(data)) == data


def test_lz4_frame_and_zstd_from_peer_libraries() -> None:
    data = sample(200_000)
    assert c.decompress(c.LZ4, lz4.frame.compress(data, block_linked=True)) == data
    assert c.decompress(c.LZ4, lz4.frame.compress(data, store_size=False)) == data
    assert lz4.frame.decompress(c.compress(c.LZ4, data)) == data
    no_size = zstandard.ZstdCompressor(write_content_size=False).compress(data)
    assert c.decompress(c.ZSTD, no_size) == data
    assert zstandard.ZstdDecompressor().decompress(c.compress(c.ZSTD, data)) == data
    # Concatenated frames (a streaming writer may flush several) read as one stream.
    two = lz4.frame.compress(b"ab") + lz4.frame.compress(b"cd")
    assert c.decompress(c.LZ4, two) == b"abcd"
    z = zstandard.ZstdCompressor()
    assert c.decompress(c.ZSTD, z.compress(b"ab") + z.compress(b"cd")) == b"abcd"


def _bomb(codec: int, size: int) -> bytes:
    return c.compress(codec, bytes(size))


@pytest.mark.parametrize("codec", CODECS)
def test_decompression_bomb_is_stopped_with_bounded_memory(codec: int) -> None:
    bomb = _bomb(codec, 48 * MiB)
    assert len(bomb) < 3 * MiB
    tracemalloc.start()
    try:
        with pytest.raises(DecompressionLimitError):
            c.decompress(codec, bomb, max_size=1 * MiB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # The cap plus one decompressor chunk and the copied input; far below 48 MiB.
    assert peak < 1 * MiB + len(bomb) + 6 * MiB


@pytest.mark.parametrize("codec", CODECS)
def test_bomb_inside_a_batch(codec: int) -> None:
    b = BatchBuilder(codec, batch_size_limit=1 << 30)
    b.append(1, None, bytes(8 * MiB))
    data = b.build()
    (batch,) = decode_batches(data, max_decompressed_size=1 * MiB)
    with pytest.raises(DecompressionLimitError):
        batch.records()
    (batch,) = decode_batches(data, max_decompressed_size=9 * MiB)
    assert len(batch.records()[0].value or b"") == 8 * MiB


def test_snappy_lying_length_header_is_refused_before_allocating() -> None:
    # A raw block announcing 2 GiB of output in five bytes.
    lying = bytes([0x80, 0x80, 0x80, 0x80, 0x08]) + b"\x00" * 10
    with pytest.raises(DecompressionLimitError):
        c.decompress(c.SNAPPY, lying, max_size=MiB)
    xerial = b"\x82SNAPPY\x00" + struct.pack(">iii", 1, 1, len(lying)) + lying
    with pytest.raises(DecompressionLimitError):
        c.decompress(c.SNAPPY, xerial, max_size=MiB)


def test_xerial_blocks_add_up_to_the_limit() -> None:
    packed = c.compress(c.SNAPPY, bytes(200_000))
    with pytest.raises(DecompressionLimitError):
        c.decompress(c.SNAPPY, packed, max_size=100_000)


def test_zstd_frame_without_content_size_is_capped_while_streaming() -> None:
    huge = zstandard.ZstdCompressor(write_content_size=False).compress(bytes(4 * MiB))
    with pytest.raises(DecompressionLimitError):
        c.decompress(c.ZSTD, huge, max_size=MiB)


def test_uncompressed_over_the_cap() -> None:
    with pytest.raises(DecompressionLimitError):
        c.decompress(c.NONE, b"x" * 11, max_size=10)


@pytest.mark.parametrize("codec", CODECS)
def test_truncated_compressed_data_is_corrupt(codec: int) -> None:
    packed = c.compress(codec, sample(70_000))
    for cut in (1, 2, 5, len(packed) // 2, len(packed) - 3, len(packed) - 1):
        with pytest.raises(CorruptRecordError):
            c.decompress(codec, packed[:cut])


@pytest.mark.parametrize("codec", CODECS)
def test_garbage_is_corrupt_not_a_crash(codec: int) -> None:
    packed = bytearray(c.compress(codec, sample(20_000)))
    rng = __import__("random").Random(codec)
    for _ in range(200):
        bad = bytearray(packed)
        for _ in range(3):
            bad[rng.randrange(len(bad))] = rng.randrange(256)
        try:
            c.decompress(codec, bytes(bad), max_size=MiB)
        except (CorruptRecordError, DecompressionLimitError):
            pass
    with pytest.raises(CorruptRecordError):
        c.decompress(codec, b"\x00not compressed data at all\x00" * 3)


def test_gzip_trailing_garbage_is_corrupt() -> None:
    with pytest.raises(CorruptRecordError):
        c.decompress(c.GZIP, gzip.compress(b"abc") + b"garbage!")


def test_zlib_error_codes_are_wrapped() -> None:
    raw_deflate = zlib.compress(b"not gzip framed")
    with pytest.raises(CorruptRecordError):
        c.decompress(c.GZIP, raw_deflate)


def test_zstd_declared_content_size() -> None:
    frame = bytearray(zstandard.ZstdCompressor().compress(bytes(200_000)))
    assert frame[4] == 0xA0  # single segment, 4-byte content size follows
    assert int.from_bytes(frame[5:9], "little") == 200_000
    # Declaring more than the cap is refused before decompressing anything.
    with pytest.raises(DecompressionLimitError):
        c.decompress(c.ZSTD, bytes(frame), max_size=100_000)
    # Declaring less than the real output (so the whole frame would be fed at once) makes zstd
    # itself stop: corrupt, not a bigger output than declared.
    frame[5:9] = (1000).to_bytes(4, "little")
    with pytest.raises(CorruptRecordError):
        c.decompress(c.ZSTD, bytes(frame))


@pytest.mark.parametrize("codec", CODECS)
def test_codecs_from_many_threads(codec: int) -> None:
    from concurrent.futures import ThreadPoolExecutor

    inputs = [sample(20_000 + i * 1000) for i in range(16)]

    def work(data: bytes) -> bool:
        return all(c.decompress(codec, c.compress(codec, data)) == data for _ in range(10))

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert all(pool.map(work, inputs))
