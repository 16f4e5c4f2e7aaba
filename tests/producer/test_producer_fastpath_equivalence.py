"""The producer's C fast path and its pure-Python twins behave identically (property-based):
``append_record``, ``delivery_metadata`` and ``murmur2`` (``Producer.enqueue`` against its
C ``Enqueuer``: test_producer_enqueue_twins.py)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_async.producer import _fastpath_pure
from kafka_async.records import _pure
from kafka_async.testing.plugin import skip_or_fail

try:
    from kafka_async.producer import _fastpath
except ImportError:
    _fastpath = None  # type: ignore[assignment]


@pytest.fixture(autouse=True)
def _needs_the_fast_path() -> None:
    if _fastpath is None:
        skip_or_fail("the producer's C fast path is not built (needs a C compiler at install)")


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

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


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
        if impl is _fastpath_pure.append_record:
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
    assert _fastpath is not None
    c = _append_all(_fastpath.append_record, limit, data, closed_at)
    p = _append_all(_fastpath_pure.append_record, limit, data, closed_at)
    assert c == p


def test_append_record_reads_now_and_refuses_settled_batches() -> None:
    import gc
    import time

    from kafka_async.producer.accumulator import Delivery, ProducerBatch
    from kafka_async.records.batch import BatchBuilder
    from kafka_async.structs import TopicPartition

    assert _fastpath is not None
    for impl in (_fastpath.append_record, _fastpath_pure.append_record):
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
        if impl is _fastpath.append_record:
            assert not gc.is_tracked(d)

    # The C step also drives a writer of another type (the pure one) through its append.
    builder = BatchBuilder(None)
    builder._writer = _pure.RecordWriter(1000)
    batch = ProducerBatch(TopicPartition("t", 0), builder, 0.0)
    d = _fastpath.append_record(batch, 5, None, b"v", [("h", None)], 30, Delivery)
    assert (d._delta, d._timestamp, batch.record_count, batch.writer.record_count) == (0, 5, 1, 1)

    class Unslotted:
        pass

    with pytest.raises(TypeError):
        _fastpath.append_record(Unslotted(), 1, None, b"v", None, 30, Delivery)


@SETTINGS
@given(data=st.binary(max_size=300))
def test_murmur2_agrees(data: bytes) -> None:
    from kafka_async.producer.partitioner import murmur2_py

    assert _fastpath is not None
    assert _fastpath.murmur2(data) == murmur2_py(data)
    assert _fastpath.murmur2(bytearray(data)) == murmur2_py(data)
    assert _fastpath.murmur2(memoryview(data)) == murmur2_py(memoryview(data))


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

    assert _fastpath is not None
    d = _settled_delivery(done, error, base, lat, delta, ts, ks, vs)
    c = _fastpath.delivery_metadata(d, RecordMetadata)
    p = _fastpath_pure.delivery_metadata(d, RecordMetadata)
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

    assert _fastpath is not None
    d = _settled_delivery(True, False, 0, -1, 0, 1, -1, 1)

    class WithDict(tuple):  # type: ignore[type-arg]
        pass

    for impl in (_fastpath.delivery_metadata, _fastpath_pure.delivery_metadata):
        bad: list[Any] = [dict, WithDict, 7]
        for cls in bad:
            with pytest.raises(TypeError):
                impl(d, cls)
        assert impl(d, RecordMetadata) == RecordMetadata("topic-a", 3, 0, 1, 0, -1, 1)
