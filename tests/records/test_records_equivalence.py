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
    from kafka_async.records import _speedups  # type: ignore[attr-defined]
except ImportError:
    _speedups = None


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
    outcomes = []
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


def _append_all(impl: Any, limit: int, data: list[Any], closed_at: int | None) -> Any:
    """Append ``data`` with ``impl`` (an ``append_record``) into producer batches, opening a new
    batch whenever one refuses a record; the outcome per record and the batches' state."""
    from kafka_async.producer.accumulator import Delivery, ProducerBatch
    from kafka_async.records.batch import BatchBuilder
    from kafka_async.structs import TopicPartition

    tp = TopicPartition("t", 0)

    def new_batch() -> ProducerBatch:
        builder = BatchBuilder(None, batch_size_limit=limit)
        # The builder's writer: the C or pure one, as the implementation under test.
        if impl is _pure.append_record:
            builder._writer = _pure.RecordWriter(limit)
        return ProducerBatch(tp, builder, 0.0)

    batches = [new_batch()]
    outcomes: list[Any] = []
    for i, (ts, k, v, h) in enumerate(data):
        if i == closed_at:
            batches[-1].closed = True
        size = 21 + i
        try:
            d = impl(batches[-1], ts, k, v, h, size, Delivery)
            if d is None:
                # Full or closed: nothing was checked or written; a new batch takes it.
                outcomes.append("full")
                batches.append(new_batch())
                d = impl(batches[-1], ts, k, v, h, size, Delivery)
                assert d is not None
        except Exception as e:  # the type is what must agree
            outcomes.append(("error", type(e)))
            continue
        assert type(d) is Delivery
        assert d._batch is batches[-1]
        outcomes.append((len(batches), d._delta, d._timestamp, d._key_size, d._value_size))
    state = [
        (b.record_count, b.reserved, bytes(b.writer.buffer), b.writer.record_count) for b in batches
    ]
    return outcomes, state


bad_values = st.one_of(maybe_bytes, st.just(7), st.just("text"))


@SETTINGS
@given(
    data=st.lists(
        st.tuples(timestamps | st.just(-1), bad_values, bad_values, headers),
        min_size=1,
        max_size=30,
    ),
    limit=st.integers(62, 5000),
    closed_at=st.none() | st.integers(0, 30),
)
def test_append_record_agrees(data: list[Any], limit: int, closed_at: int | None) -> None:
    """The producer's per-record step in C does what its pure twin does: the same bytes, the
    same Delivery fields, the same batch counters, the same refusals and errors (and an
    error changes nothing)."""
    assert _speedups is not None
    c = _append_all(_speedups.append_record, limit, data, closed_at)
    p = _append_all(_pure.append_record, limit, data, closed_at)
    assert c == p


def test_append_record_reads_now_and_refuses_settled_batches() -> None:
    import gc
    import time

    from kafka_async.producer.accumulator import Delivery, ProducerBatch
    from kafka_async.records.batch import BatchBuilder
    from kafka_async.structs import TopicPartition

    assert _speedups is not None
    for impl in (_speedups.append_record, _pure.append_record):
        batch = ProducerBatch(TopicPartition("t", 0), BatchBuilder(None), 0.0)
        before = time.time_ns() // 1_000_000
        d = impl(batch, None, b"k", bytearray(b"vv"), None, 30, Delivery)
        after = time.time_ns() // 1_000_000
        assert before <= d._timestamp <= after
        assert (d._key_size, d._value_size, batch.record_count, batch.reserved) == (1, 2, 1, 30)
        not_an_int: Any = "30"
        with pytest.raises(TypeError):
            impl(batch, 1, None, b"v", None, not_an_int, Delivery)
        batch.writer = None  # settled
        assert impl(batch, 1, None, b"v", None, 30, Delivery) is None
        assert (batch.record_count, batch.reserved) == (1, 30)
        if impl is _speedups.append_record:
            assert not gc.is_tracked(d)

    # The C step also drives a writer of another type (the pure one) through its append.
    builder = BatchBuilder(None)
    builder._writer = _pure.RecordWriter(1000)
    batch = ProducerBatch(TopicPartition("t", 0), builder, 0.0)
    d = _speedups.append_record(batch, 5, None, b"v", [("h", None)], 30, Delivery)
    assert (d._delta, d._timestamp, batch.record_count, batch.writer.record_count) == (0, 5, 1, 1)

    class Unslotted:
        pass

    with pytest.raises(TypeError):
        _speedups.append_record(Unslotted(), 1, None, b"v", None, 30, Delivery)


@SETTINGS
@given(data=st.binary(max_size=300))
def test_murmur2_agrees(data: bytes) -> None:
    from kafka_async.producer.partitioner import murmur2_py

    assert _speedups is not None
    assert _speedups.murmur2(data) == murmur2_py(data)
    assert _speedups.murmur2(bytearray(data)) == murmur2_py(data)
    assert _speedups.murmur2(memoryview(data)) == murmur2_py(memoryview(data))


def _settled_delivery(
    done: bool, error: bool, base: int, lat: int, delta: int, ts: int, ks: int, vs: int
) -> Any:
    from kafka_async.producer.accumulator import Delivery, ProducerBatch
    from kafka_async.records.batch import BatchBuilder
    from kafka_async.structs import TopicPartition

    batch = ProducerBatch(TopicPartition("topic-a", 3), BatchBuilder(None), 0.0)
    batch.done = done
    batch.error = ValueError("refused") if error else None
    batch.base_offset = base
    batch.log_append_time = lat
    return Delivery(batch, delta, ts, ks, vs)


@SETTINGS
@given(
    done=st.booleans(),
    error=st.booleans(),
    base=st.one_of(st.just(-1), st.integers(0, INT64_MAX)),
    lat=st.one_of(st.just(-1), st.integers(0, INT64_MAX)),
    delta=st.integers(0, (1 << 31) - 1),
    ts=st.integers(0, INT64_MAX),
    ks=st.integers(-1, 1 << 20),
    vs=st.integers(-1, 1 << 20),
)
def test_delivery_metadata_agrees(
    done: bool, error: bool, base: int, lat: int, delta: int, ts: int, ks: int, vs: int
) -> None:
    """A settled record's metadata from C is the pure twin's, field for field and type for
    type (None unless the batch succeeded), and what ``Delivery.result()`` returns."""
    import gc

    from kafka_async.structs import RecordMetadata

    assert _speedups is not None
    d = _settled_delivery(done, error, base, lat, delta, ts, ks, vs)
    c = _speedups.delivery_metadata(d, RecordMetadata)
    p = _pure.delivery_metadata(d, RecordMetadata)
    if not done or error:
        assert c is None
        assert p is None
        return
    assert type(c) is RecordMetadata
    assert type(p) is RecordMetadata
    assert c == p
    assert [type(x) for x in c] == [type(x) for x in p]
    assert c.offset == (base + delta if base >= 0 else -1)
    assert (c.timestamp, c.timestamp_type) == ((lat, 1) if lat >= 0 else (ts, 0))
    assert d.result() == c
    assert not gc.is_tracked(c)  # only a str and ints: nothing for the cyclic GC to visit


def test_delivery_metadata_refuses_what_it_cannot_build() -> None:
    from kafka_async.structs import RecordMetadata

    assert _speedups is not None
    d = _settled_delivery(True, False, 0, -1, 0, 1, -1, 1)

    class WithDict(tuple):  # type: ignore[type-arg]
        pass

    for impl in (_speedups.delivery_metadata, _pure.delivery_metadata):
        bad: list[Any] = [dict, WithDict, 7]
        for cls in bad:
            with pytest.raises(TypeError):
                impl(d, cls)
        assert impl(d, RecordMetadata) == RecordMetadata("topic-a", 3, 0, 1, 0, -1, 1)


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
