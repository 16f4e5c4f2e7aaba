"""Hostile record batches through a real Consumer (manual assignment, no group).

Partition 0 of topic ``t`` is led by a fake broker whose Fetch answers carry damaged
record-batch bytes; partition 1 by a healthy one. For every example ``getmany`` must hand
out only records or raise one typed ``KafkaError``; never hang or spin (every wait has a
deadline, and a partition with nothing decodable is not refetched in a busy loop); stay
within bounded memory; and never move the position past a batch it could not decode.

What the record-batch v2 format lets a client detect (facts of the format):

* The CRC32C covers the batch from ``attributes`` to its end. Any change there (record count,
  timestamps, producer fields, every record's varint lengths, keys, values, headers) fails
  the CRC check, which consumers run by default (``check_crcs``).
* ``baseOffset``, ``batchLength``, ``partitionLeaderEpoch``, ``magic`` and the CRC itself
  precede that region. A changed ``magic`` or CRC is detected (unknown magic; CRC mismatch);
  so is a ``batchLength`` that shrinks the batch (the CRC then covers other bytes) or is
  negative. A ``batchLength`` that grows past the data makes the batch look cut short by the
  broker's size limit, which Kafka does legitimately: nothing is decodable, the position must
  stay put. A changed ``baseOffset`` or ``partitionLeaderEpoch`` is undetectable: the records
  decode with shifted offsets (or another leader epoch).

So with CRC checks on, a mutation either decodes to records (the CRC-free header fields), or
gives ``CorruptRecordError``, or leaves the partition where it was. To fuzz the record decoder
itself, a second series recomputes the CRC after mutating (a producer or broker that wrote
garbage with a valid checksum): then any decoding outcome is possible, and it must still be
records or a typed error, with the position only past what was handed out (or past a batch
that is valid but holds nothing to show: a control batch, or an empty one).

The quick tier runs a few hundred examples per series; ``-m slow`` 20,000 per series (each
example is a whole fetch through a real Consumer, ~11 ms; the Fetch *response type* gets its
100,000 mutations in test_reliability_hostile_apis.py, records decoded included).
``KAFKA_ASYNC_FUZZ_EXAMPLES`` overrides both.
"""

from __future__ import annotations

import random
import struct
import tracemalloc
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import crc32c
import pytest

from kafka_async import Consumer
from kafka_async.errors import CorruptRecordError, KafkaError, MessageTooLargeError
from kafka_async.protocol.apis import FETCH
from kafka_async.records import _pure
from kafka_async.records import batch as batch_module
from kafka_async.records.batch import build_batch, decode_batches
from kafka_async.structs import TopicPartition
from kafka_async.testing.plugin import skip_or_fail
from tests.harness.fake_broker import FakeBroker, FakeRequest
from tests.harness.mutations import fuzz_examples, mutate
from tests.harness.soak import record_result

try:
    from kafka_async.records import _speedups
except ImportError:  # the optional C accelerator was not built
    _speedups = None  # type: ignore[assignment]

HOSTILE, HEALTHY = 1, 2
TP0, TP1 = TopicPartition("t", 0), TopicPartition("t", 1)
#: Every example settles within this.
DEADLINE = 10.0
#: Allocation budget per example (the fetched data is well under 1 KiB).
ALLOC_BUDGET = 1024 * 1024
#: Where the CRC-covered region of a v2 batch starts (attributes), and the CRC's offset.
CRC_START, CRC_AT = 21, 17
#: The rig consumer's pause before refetching data it could not use (short: the quick tier
#: runs hundreds of examples that end that way).
RETRY_BACKOFF_MS = 5
#: Offsets between examples: each example starts at a fresh offset, so a Fetch answered for
#: an earlier example can never be taken for the current one.
STRIDE = 1000


def batches(base: int) -> bytes:
    """Two batches as a broker stores them: 3 records (headers, a null key, a null value),
    then 2 gzip-compressed records."""
    ts = 1_700_000_000_000
    first = build_batch(
        [
            (ts, b"k0", b"v0", [("h", b"x")]),
            (ts + 1, None, b"v1", None),
            (ts + 2, b"k2", None, None),
        ],
        base_offset=base,
    )
    second = build_batch(
        [(ts + 3, b"k3", b"v3" * 30, None), (ts + 4, b"k4", b"v4", None)],
        "gzip",
        base_offset=base + 3,
    )
    return first + second


def fix_crcs(data: bytes) -> bytes:
    """Recompute the CRC of every v2 batch that the length fields still delimit."""
    out = bytearray(data)
    pos = 0
    while len(out) - pos >= 61:
        length = int.from_bytes(out[pos + 8 : pos + 12], "big", signed=True)
        end = pos + 12 + length
        if length < 49 or end > len(out) or out[pos + 16] != 2:
            break
        struct.pack_into(">I", out, pos + CRC_AT, crc32c.crc32c(bytes(out[pos + CRC_START : end])))
        pos = end
    return bytes(out)


# --------------------------------------------------------------------------------------------
# The brokers
# --------------------------------------------------------------------------------------------


@dataclass
class Served:
    """What the hostile broker answers for partition 0, for the current example."""

    start: int = -1
    data: bytes = b""
    #: Times ``data`` was sent for this example.
    sent: int = 0
    #: Set by the first Fetch that arrives after ``data`` was sent: the consumer has filed
    #: that answer (its fetch loop sends the next request only after that).
    filed: anyio.Event = field(default_factory=anyio.Event)
    #: Fetch requests seen for partition 0 (all examples).
    requests: int = 0


def fetch_handler(
    records_for: Callable[[int, int], bytes | None], hw: int, served: Served | None
) -> Any:
    async def handle(req: FakeRequest) -> Any:
        topics = []
        any_data = False
        for t in req.body.topics:
            parts = []
            for p in t.partitions:
                if served is not None and p.partition == 0:
                    served.requests += 1
                    if served.sent:
                        served.filed.set()
                data = records_for(p.partition, p.fetch_offset)
                if data is not None and served is not None and p.partition == 0:
                    served.sent += 1
                any_data = any_data or bool(data)
                part: dict[str, Any] = {
                    "partition_index": p.partition,
                    "error_code": 0,
                    "high_watermark": hw,
                    "last_stable_offset": hw,
                    "log_start_offset": 0,
                    "records": data or b"",
                }
                parts.append(part)
            topics.append({"topic": t.topic, "topic_id": t.topic_id, "partitions": parts})
        if not any_data:
            # A real broker holds a Fetch with nothing to send for max_wait_ms.
            await anyio.sleep(req.body.max_wait_ms / 1000)
        return {"responses": topics, "session_id": 0}

    return handle


@dataclass
class Rig:
    hostile: FakeBroker
    healthy: FakeBroker
    served: Served
    consumer: Consumer[bytes, bytes]


def _healthy_records(p: int, offset: int) -> bytes | None:
    if p != 1:
        return None
    return build_batch(
        [(None, None, b"ok%d" % (offset + i), None) for i in range(5)], base_offset=offset
    )


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    async with (
        FakeBroker({"t": 2}, node_id=HOSTILE) as bad,
        FakeBroker({"t": 2}, node_id=HEALTHY) as good,
    ):
        for b in (bad, good):
            b.topic_ids = dict(bad.topic_ids)
            b.leaders[("t", 0)] = HOSTILE
            b.leaders[("t", 1)] = HEALTHY
        bad.peers = [(HEALTHY, good.host, good.port)]
        good.peers = [(HOSTILE, bad.host, bad.port)]
        served = Served()

        def hostile_records(p: int, offset: int) -> bytes | None:
            return served.data if p == 0 and offset == served.start else None

        bad.set_default(FETCH.key, fetch_handler(hostile_records, 10**9, served))
        good.set_default(FETCH.key, fetch_handler(_healthy_records, 10**9, None))
        consumer: Consumer[bytes, bytes] = Consumer(
            bootstrap_servers=good.address,
            enable_auto_commit=False,
            enable_fetch_sessions=False,
            request_timeout_ms=3000,
            fetch_max_wait_ms=5,
            retry_backoff_ms=RETRY_BACKOFF_MS,
            reconnect_backoff_ms=1,
        )
        async with consumer:
            consumer.assign([TP0])
            consumer.seek(TP0, 0)  # no ListOffsets (the fake brokers do not answer it)
            yield Rig(bad, good, served, consumer)


# --------------------------------------------------------------------------------------------
# One example
# --------------------------------------------------------------------------------------------


@dataclass
class Tally:
    outcomes: dict[str, int] = field(default_factory=dict)
    worst_alloc: int = 0
    records: int = 0

    def count(self, key: str) -> None:
        self.outcomes[key] = self.outcomes.get(key, 0) + 1


def _skippable_end(data: bytes, start: int) -> int:
    """How far a consumer may move past ``start`` without handing out a record: over the
    leading batches that are valid (CRC and records) but show nothing (control or empty)."""
    end = start
    try:
        for batch in decode_batches(data):
            if batch.next_offset <= end:
                continue
            if batch.is_control or not batch.records():
                end = batch.next_offset
                continue
            break
    except KafkaError:
        pass
    return end


async def answer_filed(rig: Rig) -> None:
    """Until the consumer has filed the answer carrying the example's data: it fetched
    again (its fetch loop files an answer before the next request), or it holds the
    partition back because an error waits in its buffer."""
    while not rig.served.filed.is_set():
        if rig.consumer.statistics()["fetcher"]["buffered_fetches"]:
            return
        with anyio.move_on_after(0.002):
            await rig.served.filed.wait()


@dataclass
class Outcome:
    records: list[Any]
    error: KafkaError | None


#: Fetch requests one example may cause: a few (the answer, the follow-up, long polls of
#: 5 ms); a busy loop makes hundreds.
MAX_REQUESTS_PER_EXAMPLE = 40


async def run_example(rig: Rig, index: int, data: bytes, tally: Tally, *, strict: bool) -> Outcome:
    """Serve ``data`` (batches based at ``start``) for partition 0 from a fresh position;
    drain what the consumer makes of it and check the position rules.

    ``strict``: the CRC covers every change to the records, so the position may only move
    past records handed out.
    """
    start = (index + 1) * STRIDE
    served, consumer = rig.served, rig.consumer
    served.start, served.data, served.sent = start, data, 0
    served.filed = anyio.Event()
    requests = served.requests
    consumer.seek(TP0, start)
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    returned: list[Any] = []
    error: KafkaError | None = None
    with anyio.fail_after(DEADLINE):
        await answer_filed(rig)
        for _ in range(10):
            before = await consumer.position(TP0)
            try:
                got = await consumer.getmany(TP0, timeout_ms=0)
            except KafkaError as exc:
                error = exc
                break
            recs = got.get(TP0, [])
            if not recs:
                break
            offsets = [r.offset for r in recs]
            assert offsets == sorted(set(offsets)), offsets
            assert offsets[0] >= before, (offsets, before)
            returned += recs
        if error is not None:
            # The failed call moved nothing: the consumer stays at the bad batch.
            assert await consumer.position(TP0) == before, error
    tally.worst_alloc = max(tally.worst_alloc, tracemalloc.get_traced_memory()[1] - base)
    position = await consumer.position(TP0)
    handed_out_to = returned[-1].offset + 1 if returned else start
    if strict:
        assert position == handed_out_to, (position, handed_out_to, error, data.hex())
    else:
        # Past the records handed out, only to the end of their batch (offsets may have
        # gaps) or over batches that validly show nothing (control or empty).
        limit = _skippable_end(data, handed_out_to)
        if returned:
            limit = max(limit, _batch_end_after(data, returned[-1].offset))
        assert position <= limit, (position, limit, error, data.hex())
    assert served.requests - requests <= MAX_REQUESTS_PER_EXAMPLE, served.requests - requests
    tally.records += len(returned)
    tally.count(type(error).__name__ if error else ("records" if returned else "nothing"))
    return Outcome(returned, error)


def _batch_end_after(data: bytes, offset: int) -> int:
    """The end (next offset) of the batch holding ``offset``: records of a batch may have
    gaps (compaction), and the consumer continues at the batch's end."""
    try:
        for batch in decode_batches(data, check_crcs=False):
            if batch.base_offset <= offset < batch.next_offset:
                return batch.next_offset
    except KafkaError:
        pass
    return offset + 1


async def run_series(
    rig: Rig, make: Callable[[int, random.Random], bytes], n: int, seed: int, *, strict: bool
) -> Tally:
    tally = Tally()
    rng = random.Random(seed)
    tracemalloc.start()
    try:
        for i in range(n):
            await run_example(rig, i, make((i + 1) * STRIDE, rng), tally, strict=strict)
    finally:
        tracemalloc.stop()
    assert tally.worst_alloc < ALLOC_BUDGET, f"peak allocation {tally.worst_alloc} bytes"
    await _other_partition_flows(rig)
    return tally


async def _other_partition_flows(rig: Rig) -> None:
    """The healthy broker's partition is consumed normally after all that."""
    consumer = rig.consumer
    rig.served.start = -1  # nothing more for partition 0
    position = await consumer.position(TP0)
    consumer.assign([TP0, TP1])
    consumer.seek(TP0, position)
    consumer.seek(TP1, 0)
    with anyio.fail_after(DEADLINE):
        got: list[Any] = []
        while len(got) < 10:
            got += (await consumer.getmany(TP1, timeout_ms=200)).get(TP1, [])
    assert [r.value for r in got[:10]] == [b"ok%d" % i for i in range(10)]
    consumer.assign([TP0])
    consumer.seek(TP0, position)


# --------------------------------------------------------------------------------------------
# Mutations
# --------------------------------------------------------------------------------------------

QUICK = 200
#: Per series in the full tier (three series: ~4 minutes each on 2 cores).
FULL = 20_000


# --------------------------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_hostile_records_truncated_at_every_offset(rig: Rig) -> None:
    """The records blob cut at every byte: the complete batches before the cut are handed
    out, the cut one is not, and the position stops at its start."""
    template = batches(0)
    first = 12 + int.from_bytes(template[8:12], "big")
    tally = Tally()
    tracemalloc.start()
    try:
        for cut in range(len(template)):
            start = (cut + 1) * STRIDE
            got = await run_example(rig, cut, batches(start)[:cut], tally, strict=True)
            assert got.error is None, (cut, got.error)
            expected = [start, start + 1, start + 2] if cut >= first else []
            assert [r.offset for r in got.records] == expected, cut
    finally:
        tracemalloc.stop()
    assert tally.worst_alloc < ALLOC_BUDGET
    await _other_partition_flows(rig)
    record_result(
        "hostile: Fetch records truncated at every offset",
        runs=len(template),
        records=tally.records,
        extra_outcomes=str(tally.outcomes),
        peak_alloc_kib=tally.worst_alloc // 1024,
    )


def _random(base: int, rng: random.Random) -> bytes:
    return mutate(batches(base), rng)


def _random_crc_fixed(base: int, rng: random.Random) -> bytes:
    return fix_crcs(mutate(batches(base), rng))


SERIES: dict[str, tuple[Callable[[int, random.Random], bytes], bool]] = {
    "random mutations": (_random, True),
    "random mutations, CRC fixed": (_random_crc_fixed, False),
}
#: The record decoders: the C accelerator (when built) and its pure-Python twin. The
#: CRC-fixed series, the one that reaches the per-record loops, runs against each.
DECODERS = {"C": getattr(_speedups, "decode_records", None), "pure": _pure.decode_records}


def _series_params() -> list[Any]:
    out = [pytest.param("random mutations", "default", id="random mutations")]
    for name in DECODERS:
        out.append(
            pytest.param(
                "random mutations, CRC fixed",
                name,
                id=f"random mutations, CRC fixed, {name} decoder",
            )
        )
    return out


def _use_decoder(monkeypatch: pytest.MonkeyPatch, decoder: str) -> str:
    """Make the consumer decode with ``decoder``; the series name to report."""
    if decoder == "default":
        return ""
    if DECODERS[decoder] is None:
        skip_or_fail("the C accelerator is not built (needs a C compiler at install)")
    monkeypatch.setattr(batch_module, "_decode_records", DECODERS[decoder])
    return f", {decoder} decoder"


@pytest.mark.anyio
@pytest.mark.parametrize(("series", "decoder"), _series_params())
async def test_hostile_records_quick(
    rig: Rig, series: str, decoder: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    make, strict = SERIES[series]
    label = series + _use_decoder(monkeypatch, decoder)
    n = fuzz_examples(QUICK)
    tally = await run_series(rig, make, n, seed=len(label), strict=strict)
    assert sum(tally.outcomes.values()) == n
    record_result(
        f"hostile: Fetch records {label}",
        runs=n,
        records=tally.records,
        extra_outcomes=str(tally.outcomes),
        peak_alloc_kib=tally.worst_alloc // 1024,
    )


@pytest.mark.anyio
@pytest.mark.slow
@pytest.mark.parametrize(("series", "decoder"), _series_params())
async def test_hostile_records_full(
    rig: Rig, series: str, decoder: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    make, strict = SERIES[series]
    label = series + _use_decoder(monkeypatch, decoder)
    n = fuzz_examples(FULL)
    tally = await run_series(rig, make, n, seed=1234, strict=strict)
    assert sum(tally.outcomes.values()) == n
    record_result(
        f"hostile: Fetch records {label} (full)",
        runs=n,
        records=tally.records,
        extra_outcomes=str(tally.outcomes),
        peak_alloc_kib=tally.worst_alloc // 1024,
    )


# --------------------------------------------------------------------------------------------
# Chosen fields of the first batch
# --------------------------------------------------------------------------------------------


def _set(at: int, raw: bytes) -> Callable[[bytearray], None]:
    def edit(b: bytearray) -> None:
        b[at : at + len(raw)] = raw

    return edit


def _add_i64(at: int, delta: int) -> Callable[[bytearray], None]:
    def edit(b: bytearray) -> None:
        struct.pack_into(">q", b, at, struct.unpack_from(">q", b, at)[0] + delta)

    return edit


def _add_i32(at: int, delta: int) -> Callable[[bytearray], None]:
    def edit(b: bytearray) -> None:
        struct.pack_into(">i", b, at, struct.unpack_from(">i", b, at)[0] + delta)

    return edit


# Byte positions in the first batch: baseOffset 0, batchLength 8, partitionLeaderEpoch 12,
# magic 16, crc 17, attributes 21, lastOffsetDelta 23, recordCount 57, records from 61. The
# first record: length varint 61, attributes 62, timestampDelta 63, offsetDelta 64, key
# length 65, key 66-67, value length 68, value 69-70, header count 71, header key length 72.
# Varints are zigzag-encoded: 0x7e is 63, 0x03 is -2, 0x01 is -1.

#: name -> (edit, recompute the CRC, expected outcome, offsets handed out relative to start).
FIELD_CASES: dict[str, tuple[Callable[[bytearray], None], bool, str, list[int]]] = {
    # Outside the CRC: undetectable, the records decode with other offsets.
    "base offset -10 (already consumed)": (_add_i64(0, -10), False, "records", [3, 4]),
    "base offset +100": (_add_i64(0, 100), False, "records", [100, 101, 102]),
    "leader epoch changed": (_set(12, b"\x7f\xff\xff\xff"), False, "records", [0, 1, 2, 3, 4]),
    # Outside the CRC but detected.
    "batch length +1": (_add_i32(8, 1), False, "CorruptRecordError", []),
    "batch length -1": (_add_i32(8, -1), False, "CorruptRecordError", []),
    "batch length 0": (_set(8, b"\0\0\0\0"), False, "CorruptRecordError", []),
    "batch length -1 (all ones)": (_set(8, b"\xff\xff\xff\xff"), False, "CorruptRecordError", []),
    # A length past the data looks like a batch cut short by the broker: nothing to hand out.
    "batch length past the data": (_add_i32(8, 1000), False, "nothing", []),
    "batch length 2^31-1": (_set(8, b"\x7f\xff\xff\xff"), False, "nothing", []),
    "magic 3": (_set(16, b"\x03"), False, "CorruptRecordError", []),
    "magic 1": (_set(16, b"\x01"), False, "CorruptRecordError", []),
    "crc flipped": (_set(17, b"\x00\x00\x00\x00"), False, "CorruptRecordError", []),
    # Inside the CRC: caught by the CRC...
    "record count +1": (_add_i32(57, 1), False, "CorruptRecordError", []),
    "key length 63": (_set(65, b"\x7e"), False, "CorruptRecordError", []),
    # ... and, with a recomputed CRC, by the record decoder.
    "record count +1 (CRC fixed)": (_add_i32(57, 1), True, "CorruptRecordError", []),
    "record count -1 (CRC fixed)": (_add_i32(57, -1), True, "CorruptRecordError", []),
    "record count 2^31-1 (CRC fixed)": (
        _set(57, b"\x7f\xff\xff\xff"),
        True,
        "CorruptRecordError",
        [],
    ),
    "record count negative (CRC fixed)": (
        _set(57, b"\xff\xff\xff\xff"),
        True,
        "CorruptRecordError",
        [],
    ),
    "record length 63 (CRC fixed)": (_set(61, b"\x7e"), True, "CorruptRecordError", []),
    "record length -1 (CRC fixed)": (_set(61, b"\x01"), True, "CorruptRecordError", []),
    "record length unterminated varint (CRC fixed)": (
        _set(61, b"\xff\xff\xff\xff\xff\xff"),
        True,
        "CorruptRecordError",
        [],
    ),
    "key length 63 (CRC fixed)": (_set(65, b"\x7e"), True, "CorruptRecordError", []),
    "key length -2 (CRC fixed)": (_set(65, b"\x03"), True, "CorruptRecordError", []),
    "value length 63 (CRC fixed)": (_set(68, b"\x7e"), True, "CorruptRecordError", []),
    "header count 63 (CRC fixed)": (_set(71, b"\x7e"), True, "CorruptRecordError", []),
    "header key length 63 (CRC fixed)": (_set(72, b"\x7e"), True, "CorruptRecordError", []),
    # The second record (byte 76): length 76, attributes 77, timestampDelta 78, offsetDelta 79.
    "second offset delta 0, a duplicate (CRC fixed)": (
        _set(79, b"\x00"),
        True,
        "CorruptRecordError",
        [],
    ),
    "second offset delta -1, backwards (CRC fixed)": (
        _set(79, b"\x01"),
        True,
        "CorruptRecordError",
        [],
    ),
    "unknown codec 7 (CRC fixed)": (_set(22, b"\x07"), True, "UnsupportedCodecError", []),
    "gzip codec on raw records (CRC fixed)": (_set(22, b"\x01"), True, "CorruptRecordError", []),
}


@pytest.mark.anyio
async def test_hostile_records_chosen_fields(rig: Rig) -> None:
    """Each header and varint field of the first batch damaged in one known way."""
    tally = Tally()
    tracemalloc.start()
    try:
        for i, name in enumerate(sorted(FIELD_CASES)):
            edit, crc_fixed, expected, offsets = FIELD_CASES[name]
            start = (i + 1) * STRIDE
            data = bytearray(batches(start))
            edit(data)
            blob = fix_crcs(bytes(data)) if crc_fixed else bytes(data)
            got = await run_example(rig, i, blob, tally, strict=not crc_fixed)
            outcome = (
                type(got.error).__name__ if got.error else "records" if got.records else "nothing"
            )
            assert outcome == expected, (name, got.error)
            assert [r.offset - start for r in got.records] == offsets, name
    finally:
        tracemalloc.stop()
    assert tally.worst_alloc < ALLOC_BUDGET
    await _other_partition_flows(rig)
    record_result(
        "hostile: Fetch batch fields (offset, length, count, varints)",
        runs=len(FIELD_CASES),
        extra_outcomes=str(tally.outcomes),
        peak_alloc_kib=tally.worst_alloc // 1024,
    )


@pytest.mark.anyio
async def test_records_before_a_corrupt_batch_are_handed_out(rig: Rig) -> None:
    """A good batch then a corrupt one in the same answer: the good records come out, the
    error follows on the next call, and the position stays at the corrupt batch.

    Regression: getmany drained again after the first slice, got the error that the first
    slice had left for later, and raised it; the good records were lost while the position
    had already moved past them.
    """
    start = STRIDE
    data = bytearray(batches(start))
    data[-3] ^= 0xFF  # inside the second (gzip) batch's CRC-covered bytes
    rig.served.start, rig.served.data, rig.served.sent = start, bytes(data), 0
    rig.served.filed = anyio.Event()
    rig.consumer.seek(TP0, start)
    with anyio.fail_after(DEADLINE):
        await answer_filed(rig)
        got = await rig.consumer.getmany(TP0, timeout_ms=0)
        assert [r.offset for r in got[TP0]] == [start, start + 1, start + 2]
        assert [r.value for r in got[TP0]] == [b"v0", b"v1", None]
        # Asked again from offset start + 3, a broker answers from the batch holding it.
        first = 12 + int.from_bytes(data[8:12], "big")
        rig.served.start, rig.served.data = start + 3, bytes(data[first:])
        for _ in range(3):
            with pytest.raises(CorruptRecordError):
                await rig.consumer.getmany(TP0, timeout_ms=1000)
            assert await rig.consumer.position(TP0) == start + 3


@pytest.mark.anyio
async def test_hostile_records_undecodable_not_fetched_in_a_busy_loop(rig: Rig) -> None:
    """Records with no complete batch past the fetch offset (cut short, or a batch before
    the offset) come back the same on every refetch; the fetcher backs off
    (``retry_backoff_ms``) instead of asking again at once.

    Regression: it refetched at once; against a broker that answers immediately that was
    ~4,600 requests and 93% of a core per second (here: 5 ms backoff, ~200 requests).
    """
    cases = {
        "cut short": batches(STRIDE)[:40],
        "batch before the offset": batches(STRIDE - 10)[:94],
    }
    for name, data in cases.items():
        rig.served.start, rig.served.data = STRIDE, data
        rig.consumer.seek(TP0, STRIDE)
        await anyio.sleep(0.1)
        before = rig.served.requests
        got = await rig.consumer.getmany(TP0, timeout_ms=500)
        requests = rig.served.requests - before
        assert got == {}, name
        assert await rig.consumer.position(TP0) == STRIDE, name
        # One per retry_backoff_ms (5 ms) at most: about 100 in 0.5 s, not thousands. (The
        # request count is the evidence; a CPU-time bound failed on a loaded machine.)
        assert requests < 1000 / RETRY_BACKOFF_MS, (name, requests)


@pytest.mark.anyio
async def test_hostile_records_too_large_error_is_filed_once(rig: Rig) -> None:
    """A batch larger than ``max_partition_fetch_bytes`` (what a pre-KIP-74 broker sends)
    is reported once and not fetched again until the application has seen the error.

    Regression: every refetch filed another error at once: a busy loop, and a buffer that
    grew by ~1,000 entries a second while the application did not poll.
    """
    rig.consumer.assign([])
    consumer: Consumer[bytes, bytes] = Consumer(
        bootstrap_servers=rig.healthy.address,
        enable_auto_commit=False,
        enable_fetch_sessions=False,
        fetch_max_wait_ms=10,
        retry_backoff_ms=20,
        max_partition_fetch_bytes=64,
    )
    async with consumer:
        consumer.assign([TP0])
        rig.served.start, rig.served.data = STRIDE, batches(STRIDE)[:70]
        consumer.seek(TP0, STRIDE)
        with anyio.fail_after(DEADLINE):
            await anyio.sleep(0.2)
            before = rig.served.requests
            await anyio.sleep(0.5)
            assert rig.served.requests - before < 5
            assert consumer.statistics()["fetcher"]["buffered_fetches"] <= 1
            for _ in range(2):
                with pytest.raises(MessageTooLargeError):
                    await consumer.getmany(TP0, timeout_ms=1000)
                assert await consumer.position(TP0) == STRIDE


@pytest.mark.anyio
async def test_an_error_of_one_partition_is_not_raised_for_another(rig: Rig) -> None:
    """``getmany(tp1)`` returns partition 1's records while partition 0's error waits; the
    error comes from ``getmany(tp0)`` (or a plain ``getmany()``).

    Regression: drain checked for a buffered error before the partition filter, so
    getmany(tp1) raised partition 0's CorruptRecordError.
    """
    data = bytearray(batches(STRIDE))
    data[8:12] = b"\xff\xff\xff\x00"  # a negative batch length: filed as an error
    rig.served.start, rig.served.data, rig.served.sent = STRIDE, bytes(data), 0
    rig.served.filed = anyio.Event()
    consumer = rig.consumer
    consumer.assign([TP0, TP1])
    consumer.seek(TP0, STRIDE)
    consumer.seek(TP1, 0)
    with anyio.fail_after(DEADLINE):
        await answer_filed(rig)
        got: list[Any] = []
        while len(got) < 10:
            got += (await consumer.getmany(TP1, timeout_ms=200)).get(TP1, [])
        with pytest.raises(CorruptRecordError):
            await consumer.getmany(TP0, timeout_ms=1000)
        assert await consumer.position(TP0) == STRIDE
