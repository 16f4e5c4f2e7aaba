"""Record batch encode/decode cost per record: kafka_async (C and pure) beside aiokafka.

Batches of 1,000 records with 10-byte keys and 100-byte values, uncompressed and with each
codec. Encode = append every record + build (compress, CRC). Decode = read the batch header,
check its CRC, decompress and materialise every record as a Python object (aiokafka:
``DefaultRecordBatch`` + ``validate_crc()`` + iteration, as its consumer does with
``check_crcs=True``). The "consume" row (uncompressed) goes on to what the application gets:
our ``ConsumerRecord`` objects (``records.consumer_records``, built in C, or its pure twin),
aiokafka's ``ConsumerRecord`` built from each record as its fetcher does. Every figure is the
best of several rounds, in nanoseconds per record.

Run alone: ``python -m benchmarks.records`` (``--profile`` adds cProfile listings of the
hot paths; ``--quick`` uses fewer rounds).
"""

from __future__ import annotations

import cProfile
import io
import pstats
import random
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

from kafka_async.records import _pure
from kafka_async.records import batch as batch_mod
from kafka_async.records.batch import BatchBuilder, decode_batches

try:
    from kafka_async.records import _speedups
except ImportError:
    _speedups = None  # type: ignore[assignment]

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    try:
        from aiokafka.record import default_records as _aio
    except ImportError:
        _aio = None

N_RECORDS = 1000
VALUE_SIZE = 100
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
AIO_CODEC = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def _records() -> list[tuple[int, bytes, bytes]]:
    rng = random.Random(42)
    words = [b"order", b"user", b"amount", b"status", b"shipped", b"id", b"eur", b"2026"]
    out = []
    for i in range(N_RECORDS):
        text = b" ".join(rng.choice(words) for _ in range(30))
        value = (text + bytes(rng.randrange(256) for _ in range(16)))[:VALUE_SIZE]
        out.append((1_760_000_000_000 + i, b"key-%06d" % i, value.ljust(VALUE_SIZE, b".")))
    return out


def _best_ns_per_record(fn: Callable[[], object], rounds: int, inner: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter_ns()
        for _ in range(inner):
            fn()
        best = min(best, (time.perf_counter_ns() - t0) / inner / N_RECORDS)
    return best


def _builder_class(writer: Any) -> type[BatchBuilder]:
    class Builder(BatchBuilder):
        _writer_type = writer

    return Builder


Rows = list[tuple[int, bytes, bytes]]


def _our_encode(writer: Any, codec: str, rows: Rows) -> Callable[[], bytes]:
    cls = _builder_class(writer)

    def run() -> bytes:
        b = cls(codec, batch_size_limit=1 << 30)
        append = b.append
        for ts, key, value in rows:
            append(ts, key, value)
        return b.build(1, 0, 0)

    return run


def _our_decode(decoder: Any, data: bytes) -> Callable[[], object]:
    def run() -> object:
        saved = batch_mod._decode_records
        batch_mod._decode_records = decoder
        try:
            return [b.records() for b in decode_batches(data)]
        finally:
            batch_mod._decode_records = saved

    return run


def _our_consume(decoder: Any, builder: Any, data: bytes) -> Callable[[], object]:
    from kafka_async.structs import ConsumerRecord

    def run() -> object:
        saved = batch_mod._decode_records
        batch_mod._decode_records = decoder
        try:
            out = []
            for b in decode_batches(data):
                recs = b.records()
                out += builder(recs, 0, len(recs), ConsumerRecord, "topic", 0, 0, None)
            return out
        finally:
            batch_mod._decode_records = saved

    return run


def _aio_consume(data: bytes) -> Callable[[], object]:
    assert _aio is not None
    from aiokafka.structs import ConsumerRecord as AioRecord

    batch_cls = _aio.DefaultRecordBatch

    def run() -> object:
        batch = batch_cls(data)
        if not batch.validate_crc():
            raise AssertionError("aiokafka rejected the batch CRC")
        ts_type = batch.timestamp_type
        return [
            AioRecord(
                "topic",
                0,
                r.offset,
                r.timestamp,
                ts_type,
                r.key,
                r.value,
                r.checksum,
                -1 if r.key is None else len(r.key),
                -1 if r.value is None else len(r.value),
                tuple(r.headers),
            )
            for r in batch
        ]

    return run


def _aio_encode(codec: str, rows: list[tuple[int, bytes, bytes]]) -> Callable[[], object]:
    assert _aio is not None
    builder_cls = _aio.DefaultRecordBatchBuilder
    c = AIO_CODEC[codec]

    def run() -> object:
        b = builder_cls(2, c, 0, 1, 0, 0, 1 << 30)
        append = b.append
        for offset, (ts, key, value) in enumerate(rows):
            append(offset, ts, key, value, [])
        return b.build()

    return run


def _aio_decode(data: bytes) -> Callable[[], object]:
    assert _aio is not None
    batch_cls = _aio.DefaultRecordBatch

    def run() -> object:
        batch = batch_cls(data)
        if not batch.validate_crc():
            raise AssertionError("aiokafka rejected the batch CRC")
        return list(batch)

    return run


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:,.0f}"


def _ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or b is None else f"{a / b:.2f}x"


def run_table(rounds: int = 7) -> list[dict[str, Any]]:
    """Measure every codec; return one row per (codec, operation)."""
    rows = _records()
    results: list[dict[str, Any]] = []
    for codec in CODECS:
        # Every decoder reads the same bytes: the batch our encoder built.
        data = _our_encode(_pure.RecordWriter, codec, rows)()
        inner = 20 if codec == "none" else 5
        enc: dict[str, float | None] = {"c": None, "pure": None, "aiokafka": None}
        dec: dict[str, float | None] = dict(enc)
        if _speedups is not None:
            enc["c"] = _best_ns_per_record(
                _our_encode(_speedups.RecordWriter, codec, rows), rounds, inner
            )
            dec["c"] = _best_ns_per_record(
                _our_decode(_speedups.decode_records, data), rounds, inner
            )
        enc["pure"] = _best_ns_per_record(
            _our_encode(_pure.RecordWriter, codec, rows), max(2, rounds // 3), max(1, inner // 4)
        )
        dec["pure"] = _best_ns_per_record(
            _our_decode(_pure.decode_records, data), max(2, rounds // 3), max(1, inner // 4)
        )
        if _aio is not None:
            enc["aiokafka"] = _best_ns_per_record(_aio_encode(codec, rows), rounds, inner)
            dec["aiokafka"] = _best_ns_per_record(_aio_decode(data), rounds, inner)
        results.append({"codec": codec, "op": "encode", **enc})
        results.append({"codec": codec, "op": "decode", **dec})
        if codec == "none":
            con: dict[str, float | None] = {"c": None, "pure": None, "aiokafka": None}
            if _speedups is not None:
                con["c"] = _best_ns_per_record(
                    _our_consume(_speedups.decode_records, _speedups.consumer_records, data),
                    rounds,
                    inner,
                )
            con["pure"] = _best_ns_per_record(
                _our_consume(_pure.decode_records, _pure.consumer_records, data),
                max(2, rounds // 3),
                max(1, inner // 4),
            )
            if _aio is not None:
                con["aiokafka"] = _best_ns_per_record(_aio_consume(data), rounds, inner)
            results.append({"codec": codec, "op": "consume", **con})
    return results


def print_table(results: list[dict[str, Any]]) -> None:
    aio_kind = "n/a"
    if _aio is not None:
        aio_kind = "Cython" if "_crecords" in _aio.DefaultRecordBatch.__module__ else "pure Python"
    print(
        f"{N_RECORDS} records/batch, {VALUE_SIZE}-byte values, 10-byte keys; ns per record "
        f"(best of several rounds). C accelerator: {'built' if _speedups else 'NOT built'}; "
        f"aiokafka implementation: {aio_kind}."
    )
    header = (
        f"{'codec':<7} {'op':<7} {'ours C':>9} {'ours pure':>10} {'aiokafka':>9} "
        f"{'aiokafka/C':>11} {'aiokafka/pure':>14}"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        print(
            f"{r['codec']:<7} {r['op']:<7} {_fmt(r['c']):>9} {_fmt(r['pure']):>10} "
            f"{_fmt(r['aiokafka']):>9} {_ratio(r['aiokafka'], r['c']):>11} "
            f"{_ratio(r['aiokafka'], r['pure']):>14}"
        )
    print("(a ratio above 1.00x means kafka_async is faster)")
    print(
        "Compressed encode rows also compare codec settings: aiokafka compresses gzip and lz4"
        " at level 9 (lz4 HC), kafka_async at the codecs' defaults (gzip 6, lz4 fast, like"
        " librdkafka); zstd is level 3 in both. Decode rows read identical bytes."
    )


def profile_hot_paths(top: int = 12) -> None:
    """cProfile listings of decode and encode, uncompressed and zstd, for both loops."""
    rows = _records()
    for name, writer, decoder in (
        ("C", getattr(_speedups, "RecordWriter", None), getattr(_speedups, "decode_records", None)),
        ("pure", _pure.RecordWriter, _pure.decode_records),
    ):
        if writer is None:
            continue
        for codec in ("none", "zstd"):
            data = _our_encode(writer, codec, rows)()
            for op, fn in (
                ("decode", _our_decode(decoder, data)),
                ("encode", _our_encode(writer, codec, rows)),
            ):
                prof = cProfile.Profile()
                prof.enable()
                for _ in range(20):
                    fn()
                prof.disable()
                out = io.StringIO()
                pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(top)
                print(f"\n### profile: {name} {op} {codec} (20 batches of {N_RECORDS})")
                lines = [ln for ln in out.getvalue().splitlines() if ln.strip()]
                print("\n".join(lines[3:]))


def main(argv: list[str] | None = None) -> None:
    """Print the table (and profiles with ``--profile``)."""
    args = sys.argv[1:] if argv is None else argv
    rounds = 3 if "--quick" in args else 7
    print_table(run_table(rounds))
    if "--profile" in args:
        profile_hot_paths()


if __name__ == "__main__":
    main()
