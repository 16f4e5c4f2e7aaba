"""The C accelerator and the pure-Python loops behave identically (property-based)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_async.errors import KafkaError
from kafka_async.records import Record, _pure, decode_batches
from kafka_async.records import batch as batch_mod
from kafka_async.testing.plugin import skip_or_fail

try:
    from kafka_async.records import _speedups
except ImportError:
    _speedups = None  # type: ignore[assignment]


@pytest.fixture(autouse=True)
def _needs_the_accelerator() -> None:
    if _speedups is None:
        skip_or_fail("the C accelerator is not built (needs a C compiler at install)")


INT64_MAX = (1 << 63) - 1

small_bytes = st.binary(max_size=40)
maybe_bytes = st.one_of(
    st.none(),
    st.just(b""),
    small_bytes,
    st.binary(min_size=100, max_size=3000),
)
headers = st.one_of(
    st.none(),
    st.lists(st.tuples(st.text(max_size=12), st.one_of(st.none(), small_bytes)), max_size=4),
)
timestamps = st.one_of(
    st.integers(0, 2000),
    st.integers(1_600_000_000_000, 1_800_000_000_000),
    st.integers(0, INT64_MAX),
)
rows = st.lists(st.tuples(timestamps, maybe_bytes, maybe_bytes, headers), min_size=1, max_size=30)
codecs = st.sampled_from(["none", "gzip", "snappy", "lz4", "zstd"])

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _write(
    writer_type: Any, limit: int, data: list[Any]
) -> tuple[list[Any], bytes, tuple[int, ...]]:
    w = writer_type(limit)
    results = [w.append(ts, k, v, h) for ts, k, v, h in data]
    state = (w.record_count, w.size_in_bytes, w.base_timestamp, w.max_timestamp)
    return results, bytes(w.buffer), state


@SETTINGS
@given(data=rows, limit=st.integers(62, 20000))
def test_writers_produce_identical_bytes(data: list[Any], limit: int) -> None:
    assert _speedups is not None
    c = _write(_speedups.RecordWriter, limit, data)
    p = _write(_pure.RecordWriter, limit, data)
    assert c == p
    # The first record always fits; any later one only within the limit.
    assert c[0][0] == 0
    if c[2][0] > 1:
        assert c[2][1] <= limit


def _decode_both(buf: bytes, pos: int, end: int, count: int, base: int, ts: int, ovr: Any) -> Any:
    assert _speedups is not None
    outcomes: list[tuple[str, Any]] = []
    for fn in (_speedups.decode_records, _pure.decode_records):
        try:
            outcomes.append(("ok", fn(buf, pos, end, count, base, ts, ovr, Record)))
        except Exception as e:  # the type is what must agree
            outcomes.append(("error", type(e)))
    assert outcomes[0] == outcomes[1]
    return outcomes[0]


@SETTINGS
@given(data=rows, base_offset=st.integers(0, INT64_MAX), override=st.none() | timestamps)
def test_decoders_agree_on_valid_records(data: list[Any], base_offset: int, override: Any) -> None:
    w = _pure.RecordWriter(1 << 30)
    for ts, k, v, h in data:
        w.append(ts, k, v, h)
    buf = bytes(w.buffer)
    kind, records = _decode_both(
        buf, 61, len(buf), len(data), base_offset, w.base_timestamp, override
    )
    assert kind == "ok"
    assert records == [
        Record(
            base_offset + i,
            ts if override is None else override,
            k,
            v,
            tuple(h or ()),
        )
        for i, (ts, k, v, h) in enumerate(data)
    ]


@SETTINGS
@given(
    data=rows,
    edits=st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 255)), min_size=1, max_size=4),
    count_delta=st.integers(-2, 2),
    cut=st.integers(0, 50),
)
def test_decoders_agree_on_damaged_records(
    data: list[Any], edits: list[tuple[int, int]], count_delta: int, cut: int
) -> None:
    w = _pure.RecordWriter(1 << 30)
    for ts, k, v, h in data:
        w.append(ts, k, v, h)
    buf = bytearray(w.buffer)
    for where, byte in edits:
        buf[61 + where % (len(buf) - 61)] = byte
    end = max(61, len(buf) - cut)
    _decode_both(bytes(buf), 61, end, len(data) + count_delta, 10, w.base_timestamp, None)


@SETTINGS
@given(junk=st.binary(max_size=300), count=st.integers(-1, 60))
def test_decoders_agree_on_random_bytes(junk: bytes, count: int) -> None:
    _decode_both(junk, 0, len(junk), count, 0, 0, None)


@SETTINGS
@given(data=rows, codec=codecs)
def test_batches_round_trip_through_both_implementations(data: list[Any], codec: str) -> None:
    assert _speedups is not None
    built = []
    decoded = []
    for writer, decoder in (
        (_speedups.RecordWriter, _speedups.decode_records),
        (_pure.RecordWriter, _pure.decode_records),
    ):

        class Builder(batch_mod.BatchBuilder):
            _writer_type = writer

        b = Builder(codec, batch_size_limit=1 << 30)
        for ts, k, v, h in data:
            b.append(ts, k, v, h)
        built.append(b.build(1, 2, 3))
        saved = batch_mod._decode_records
        batch_mod._decode_records = decoder
        try:
            decoded.append([r for x in decode_batches(built[-1]) for r in x.records()])
        finally:
            batch_mod._decode_records = saved
    assert built[0] == built[1]
    assert decoded[0] == decoded[1]
    assert [(r.timestamp, r.key, r.value, r.headers) for r in decoded[0]] == [
        (ts, k, v, tuple(h or ())) for ts, k, v, h in data
    ]


def _decode_buffer(decoder: Any, data: bytes) -> Any:
    saved = batch_mod._decode_records
    batch_mod._decode_records = decoder
    try:
        return ("ok", [b.records() for b in decode_batches(data, check_crcs=False)])
    except Exception as e:  # the type is what must agree
        return ("error", type(e))
    finally:
        batch_mod._decode_records = saved


@SETTINGS
@given(
    first=rows,
    second=rows,
    codec=codecs,
    edits=st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 255)), max_size=3),
    cut=st.integers(0, 1 << 16),
)
def test_damaged_buffers_give_the_same_outcome_in_both(
    first: list[Any], second: list[Any], codec: str, edits: list[tuple[int, int]], cut: int
) -> None:
    assert _speedups is not None
    data = bytearray(
        batch_mod.build_batch(first, codec) + batch_mod.build_batch(second, "none", base_offset=50)
    )
    for where, byte in edits:
        data[where % len(data)] = byte
    buf = bytes(data[: len(data) - cut % len(data)])
    outcome = _decode_buffer(_speedups.decode_records, buf)
    assert outcome == _decode_buffer(_pure.decode_records, buf)
    if outcome[0] == "error":
        assert issubclass(outcome[1], KafkaError)


# -- consumer records ------------------------------------------------------------------------


@SETTINGS
@given(
    data=rows,
    base_offset=st.integers(0, INT64_MAX - 100),
    bounds=st.tuples(st.integers(0, 35), st.integers(0, 35)),
    leader_epoch=st.none() | st.integers(0, 1000),
)
def test_consumer_records_agree(
    data: list[Any], base_offset: int, bounds: tuple[int, int], leader_epoch: int | None
) -> None:
    """The C builder of ConsumerRecords gives exactly what the pure twin (and the class's
    own constructor) gives, for any slice."""
    from kafka_async.structs import ConsumerRecord

    assert _speedups is not None
    recs = [
        Record(base_offset + i, ts, k, v, tuple(h or ())) for i, (ts, k, v, h) in enumerate(data)
    ]
    lo, hi = min(bounds), max(bounds)
    args = (recs, lo, hi, ConsumerRecord, "topic", 3, 1, leader_epoch)
    c = _speedups.consumer_records(*args)
    p = _pure.consumer_records(*args)
    assert c == p
    assert [type(r) for r in c] == [ConsumerRecord] * len(p)
    assert [repr(r) for r in c] == [repr(r) for r in p]
    for got, r in zip(c, recs[lo:hi], strict=True):
        assert got == ConsumerRecord(
            "topic",
            3,
            r.offset,
            r.timestamp,
            1,
            r.key,
            r.value,
            list(r.headers),
            leader_epoch,
            -1 if r.key is None else len(r.key),
            -1 if r.value is None else len(r.value),
        )
        assert type(got.headers) is list


def test_consumer_records_are_plain_mutable_records() -> None:
    """C-built records behave like constructed ones: own headers lists, settable fields,
    hashing/equality/pickling as the class defines them; they are left out of the cyclic GC
    (nothing in them leads back to the record)."""
    import gc
    import pickle

    from kafka_async.structs import ConsumerRecord

    assert _speedups is not None
    recs = [Record(5, 10, b"k", b"v", (("h", b"x"),)), Record(6, 11, None, None, ())]
    a, b = _speedups.consumer_records(recs, 0, 2, ConsumerRecord, "t", 0, 0, None)
    assert a.headers == [("h", b"x")]
    assert b.headers == []
    assert a.headers is not b.headers
    b.headers.append(("new", b"1"))
    assert _speedups.consumer_records(recs, 1, 2, ConsumerRecord, "t", 0, 0, None)[0].headers == []
    a.value = b"changed"
    assert a.value == b"changed"
    assert (a.serialized_key_size, b.serialized_key_size, b.serialized_value_size) == (1, -1, -1)
    assert a.topic_partition.partition == 0
    assert pickle.loads(pickle.dumps(a)) == a
    assert not gc.is_tracked(a)
    assert not gc.is_tracked(a.headers)
    assert _speedups.consumer_records(recs, 2, 2, ConsumerRecord, "t", 0, 0, None) == []
    assert len(_speedups.consumer_records(recs, 1, 99, ConsumerRecord, "t", 0, 0, None)) == 1
    for impl in (_speedups.consumer_records, _pure.consumer_records):
        with pytest.raises(ValueError, match="lo <= hi"):
            impl(recs, 2, 1, ConsumerRecord, "t", 0, 0, None)
        with pytest.raises(ValueError, match="lo <= hi"):
            impl(recs, -1, 1, ConsumerRecord, "t", 0, 0, None)

    class Unslotted:
        pass

    with pytest.raises(TypeError):
        _speedups.consumer_records(recs, 0, 1, Unslotted, "t", 0, 0, None)


def test_consumer_records_for_falls_back_to_pure_for_other_classes() -> None:
    from dataclasses import dataclass

    from kafka_async.records.batch import consumer_records_for
    from kafka_async.structs import ConsumerRecord

    assert _speedups is not None
    assert consumer_records_for(ConsumerRecord) is _speedups.consumer_records

    @dataclass
    class Plain:  # no slots: the C builder cannot fill it
        topic: str
        partition: int
        offset: int
        timestamp: int
        timestamp_type: int
        key: Any
        value: Any
        headers: list[Any]
        leader_epoch: Any
        serialized_key_size: int
        serialized_value_size: int

    build = consumer_records_for(Plain)
    assert build is _pure.consumer_records
    (rec,) = build([Record(1, 2, b"k", None, ())], 0, 1, Plain, "t", 0, 0, None)
    assert rec == Plain("t", 0, 1, 2, 0, b"k", None, [], None, 1, -1)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_ready_returns_its_value_at_once() -> None:
    """``ready(v)`` (C and pure): awaiting it gives ``v`` (the same object, again on a
    second await) without suspending the task (a task started meanwhile has not run yet),
    on asyncio and trio; the C one also speaks the iterator protocol (StopIteration carrying
    the value)."""
    import anyio

    assert _speedups is not None
    for impl in (_speedups.ready, _pure.ready):
        ran: list[bool] = []

        async def other(ran: list[bool] = ran) -> None:
            ran.append(True)

        value = ("a", [1])
        awaitable = impl(value)
        async with anyio.create_task_group() as tg:
            tg.start_soon(other)
            assert await awaitable is value
            assert await awaitable is value
            assert ran == []
        assert ran == [True]
    with pytest.raises(StopIteration) as info:
        next(_speedups.ready(7).__await__())
    assert info.value.value == 7
