"""RecordAccumulator: batching, linger, buffer accounting, drain rules, retries, expiry."""

from __future__ import annotations

import random

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_async.errors import KafkaTimeoutError
from kafka_async.producer.accumulator import (
    Delivery,
    InvalidStateError,
    ProducerBatch,
    RecordAccumulator,
    Segment,
    record_size,
)
from kafka_async.records.batch import decode_batches
from kafka_async.structs import TimestampType, TopicPartition

TP0 = TopicPartition("t", 0)
TP1 = TopicPartition("t", 1)
TP2 = TopicPartition("u", 0)
LEADERS = {TP0: 1, TP1: 2, TP2: 1}


def leader(tp: TopicPartition) -> int | None:
    return LEADERS.get(tp)


def make(**kw: object) -> RecordAccumulator:
    defaults: dict[str, object] = {
        "max_batch_size": 1024,
        "linger_ms": 10,
        "rng": random.Random(0),
    }
    defaults.update(kw)
    acc = RecordAccumulator(**defaults)  # type: ignore[arg-type]
    acc.producer_id, acc.producer_epoch = 1000, 0
    return acc


def known_to_broker(acc: RecordAccumulator, tp: TopicPartition) -> None:
    """As after an acknowledged batch of the current producer id and epoch on ``tp``: the
    broker holds the producer's sequence state there, so new batches are pipelined."""
    ps = acc.partition(tp)
    ps.producer_id, ps.producer_epoch = acc.producer_id, acc.producer_epoch
    ps.broker_knows = True


def put(acc: RecordAccumulator, tp: TopicPartition, value: bytes, now: float = 0.0) -> Delivery:
    size = record_size(None, value, None)
    return acc.append(tp, 1_000, None, value, None, size, now)


def test_record_size_is_an_upper_bound() -> None:
    from kafka_async.records.batch import BatchBuilder

    for key, value, headers in [
        (None, None, None),
        (b"k", b"v" * 100, None),
        (b"k" * 300, b"", [("h\u00e9", b"x" * 50), ("a", b"")]),
    ]:
        builder = BatchBuilder(None, batch_size_limit=1 << 20)
        before = builder.size_in_bytes
        builder.append(1, key, value, headers)
        assert builder.size_in_bytes - before <= record_size(key, value, headers)


def test_batches_fill_then_close() -> None:
    acc = make(max_batch_size=300)
    deliveries = [put(acc, TP0, b"x" * 50) for _ in range(10)]
    ps = acc.partition_state(TP0)
    assert ps is not None
    assert len(ps.batches) > 1
    assert all(b.closed for b in list(ps.batches)[:-1])
    assert sum(b.record_count for b in ps.batches) == 10
    assert acc.buffer_used == 10 * record_size(None, b"x" * 50, None)
    assert len(acc.incomplete) == len(ps.batches)
    assert not deliveries[0].done()
    with pytest.raises(InvalidStateError):
        deliveries[0].result()


def test_a_refused_first_record_leaves_no_empty_batch() -> None:
    """A record the writer refuses (a header key that is not a str) as the first of a new
    batch raises and leaves nothing behind: an empty batch could never be built or sent."""
    acc = make()
    bad: list[tuple[str, bytes | None]] = [(b"k", b"v")]  # type: ignore[list-item]
    with pytest.raises(TypeError):
        acc.append(TP0, 1_000, None, b"v", bad, 40, 0.0)
    ps = acc.partition_state(TP0)
    assert ps is not None
    assert not ps.batches
    assert not acc.incomplete
    assert acc.buffer_used == 0
    put(acc, TP0, b"v")
    (batch,) = acc.drain(1, leader, 1 << 20, 100.0)
    assert batch.record_count == 1


def test_linger_decides_readiness() -> None:
    acc = make(linger_ms=10)
    put(acc, TP0, b"a", now=100.0)
    nodes, delay, unknown = acc.ready(leader, 100.001)
    assert nodes == set()
    assert unknown == []
    # 10 ms linger, less the 1 ms timer slack, less the 1 ms gone.
    assert delay == pytest.approx(0.008, abs=1e-6)
    assert acc.drain(1, leader, 1 << 20, 100.001) == []
    nodes, delay, _ = acc.ready(leader, 100.0105)
    assert nodes == {1}
    assert delay is None
    drained = acc.drain(1, leader, 1 << 20, 100.0105)
    assert [b.tp for b in drained] == [TP0]


@pytest.mark.parametrize(("linger_ms", "slack"), [(5, 0.001), (1, 0.0002), (100, 0.001)])
def test_linger_ends_within_timer_slack(linger_ms: int, slack: float) -> None:
    """A batch that would linger for less than a late event loop timer goes now."""
    acc = make(linger_ms=linger_ms)
    put(acc, TP0, b"a", now=100.0)
    due = 100.0 + linger_ms / 1000 - slack
    assert acc.ready(leader, due - 1e-5)[0] == set()
    assert acc.drain(1, leader, 1 << 20, due - 1e-5) == []
    assert acc.ready(leader, due + 1e-5)[0] == {1}
    assert [b.tp for b in acc.drain(1, leader, 1 << 20, due + 1e-5)] == [TP0]


def test_full_batch_and_flush_are_ready_without_linger() -> None:
    acc = make(linger_ms=10_000, max_batch_size=200)
    for _ in range(5):
        put(acc, TP0, b"y" * 60)
    put(acc, TP1, b"z")
    nodes, _, _ = acc.ready(leader, 0.0)
    assert nodes == {1}  # TP0 has a full batch; TP1 lingers
    acc.flushing += 1
    nodes, _, _ = acc.ready(leader, 0.0)
    assert nodes == {1, 2}


def test_unknown_leader_is_reported() -> None:
    acc = make(linger_ms=0)
    put(acc, TopicPartition("nowhere", 0), b"a")
    nodes, _, unknown = acc.ready(leader, 1.0)
    assert nodes == set()
    assert unknown == [TopicPartition("nowhere", 0)]


def test_drain_one_batch_per_partition_and_sequences() -> None:
    acc = make(max_batch_size=200, linger_ms=0)
    for _ in range(9):
        put(acc, TP0, b"q" * 60)
    put(acc, TP2, b"r")
    first = acc.drain(1, leader, 1 << 20, 1.0)
    assert sorted(b.tp for b in first) == [TP0, TP2]
    by_tp = {b.tp: b for b in first}
    assert by_tp[TP0].base_sequence == 0
    assert by_tp[TP2].base_sequence == 0
    assert by_tp[TP0].producer_id == 1000
    # The broker has no sequence state for the producer on TP0 yet: the next batch waits
    # for the first one's answer (it would be taken as the first sequence otherwise).
    assert acc.drain(1, leader, 1 << 20, 1.0) == []
    acc.complete(by_tp[TP0], 0)
    second = acc.drain(1, leader, 1 << 20, 1.0)
    assert [b.tp for b in second] == [TP0]
    assert second[0].base_sequence == by_tp[TP0].record_count
    # The built bytes carry the stamp.
    batch = next(decode_batches(second[0].build()))
    assert batch.producer_id == 1000
    assert batch.base_sequence == second[0].base_sequence


def test_drain_respects_max_request_size_but_always_takes_one() -> None:
    acc = make(max_batch_size=10_000, linger_ms=0)
    put(acc, TP0, b"a" * 3000)
    put(acc, TP2, b"b" * 3000)
    out = acc.drain(1, leader, 100, 1.0)
    assert len(out) == 1
    out2 = acc.drain(1, leader, 100, 1.0)
    assert len(out2) == 1
    assert out2[0].tp != out[0].tp


def test_idempotent_in_flight_limit_per_partition() -> None:
    acc = make(max_batch_size=100, linger_ms=0, max_in_flight=2)
    known_to_broker(acc, TP0)
    for _ in range(10):
        put(acc, TP0, b"x" * 60)
    assert len(acc.drain(1, leader, 1 << 20, 1.0)) == 1
    assert len(acc.drain(1, leader, 1 << 20, 1.0)) == 1
    assert acc.drain(1, leader, 1 << 20, 1.0) == []
    assert acc.ready(leader, 1.0)[0] == set()


def test_first_batch_of_a_new_producer_goes_alone() -> None:
    """Until a batch of the producer id and epoch is acknowledged on a partition, the broker
    accepts any first sequence there: a second batch in flight behind a refused first one
    (a topic still being created) would be written ahead of it, and the first refused
    OUT_OF_ORDER_SEQUENCE_NUMBER for ever after. So the first batch goes alone, also after a
    retry and after an epoch bump; pipelining starts with its acknowledgement."""
    acc = make(max_batch_size=100, linger_ms=0, retry_backoff_ms=0)
    for _ in range(8):
        put(acc, TP0, b"x" * 60)
    (first,) = acc.drain(1, leader, 1 << 20, 1.0)
    assert acc.drain(1, leader, 1 << 20, 1.0) == []
    assert acc.ready(leader, 1.0)[0] == set()
    acc.reenqueue(first, 1.0)  # refused: UNKNOWN_TOPIC_OR_PARTITION, say
    assert acc.drain(1, leader, 1 << 20, 2.0) == [first]
    assert acc.drain(1, leader, 1 << 20, 2.0) == []
    acc.complete(first, 0)
    assert len([acc.drain(1, leader, 1 << 20, 2.0) for _ in range(5)]) == 5
    ps = acc.partition_state(TP0)
    assert ps is not None
    assert ps.in_flight == 5
    # A new epoch starts over: the broker has no state for it either.
    for batch in list(ps.unacked):
        acc.complete(batch, 1)
    acc.reset_sequences(1000, 1)
    (again,) = acc.drain(1, leader, 1 << 20, 3.0)
    assert (again.producer_epoch, again.base_sequence) == (1, 0)
    assert acc.drain(1, leader, 1 << 20, 3.0) == []


def test_without_idempotence_one_batch_per_partition_in_flight() -> None:
    acc = make(max_batch_size=100, linger_ms=0, idempotent=False)
    acc.producer_id = -1
    for _ in range(4):
        put(acc, TP0, b"x" * 60)
    (b1,) = acc.drain(1, leader, 1 << 20, 1.0)
    assert b1.base_sequence == -1
    assert acc.drain(1, leader, 1 << 20, 1.0) == []
    acc.complete(b1, 0)
    assert len(acc.drain(1, leader, 1 << 20, 1.0)) == 1


@pytest.mark.anyio
async def test_complete_resolves_every_delivery() -> None:
    acc = make(linger_ms=0)
    ds = [acc.append(TP0, 5_000 + i, b"k", b"v" * i, None, 30, 0.0) for i in range(3)]
    (batch,) = acc.drain(1, leader, 1 << 20, 1.0)
    acc.complete(batch, 42)
    mds = [await d for d in ds]
    assert [m.offset for m in mds] == [42, 43, 44]
    assert [m.timestamp for m in mds] == [5000, 5001, 5002]
    assert all(m.timestamp_type == TimestampType.CREATE_TIME for m in mds)
    assert [m.serialized_value_size for m in mds] == [0, 1, 2]
    assert mds[0].serialized_key_size == 1
    assert acc.buffer_used == 0
    assert not acc.incomplete


@pytest.mark.anyio
async def test_log_append_time_reported() -> None:
    acc = make(linger_ms=0)
    d = put(acc, TP0, b"v")
    (batch,) = acc.drain(1, leader, 1 << 20, 1.0)
    acc.complete(batch, 7, log_append_time=123456)
    md = await d
    assert (md.offset, md.timestamp, md.timestamp_type) == (
        7,
        123456,
        TimestampType.LOG_APPEND_TIME,
    )


@pytest.mark.anyio
async def test_waiting_delivery_wakes_on_fail() -> None:
    acc = make(linger_ms=0)
    d = put(acc, TP0, b"v")
    (batch,) = acc.drain(1, leader, 1 << 20, 1.0)
    err = KafkaTimeoutError("boom")

    async def settle_later() -> None:
        await anyio.sleep(0.01)
        acc.fail(batch, err)

    async with anyio.create_task_group() as tg:
        tg.start_soon(settle_later)
        with anyio.fail_after(2):
            with pytest.raises(KafkaTimeoutError, match="boom"):
                await d
    assert d.exception() is err
    assert acc.buffer_used == 0


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
@pytest.mark.parametrize("loop_known", [False, True])
async def test_cancelled_waiter_leaves_the_others_waiting(
    anyio_backend: str, loop_known: bool
) -> None:
    """Tasks awaiting deliveries of one batch wait independently: cancelling one (a timeout
    around ``await delivery``) neither wakes nor fails the others, which get their metadata
    when the batch settles; a cancelled waiter leaves nothing that fails the settle."""
    import asyncio

    acc = make(linger_ms=0)
    if loop_known and anyio_backend == "asyncio":
        acc.loop = asyncio.get_running_loop()  # as Producer.start() sets it
    ds = [put(acc, TP0, b"v") for _ in range(4)]
    got: dict[int, int] = {}

    async def wait_for(i: int) -> None:
        got[i] = (await ds[i]).offset

    async with anyio.create_task_group() as tg:
        for i in range(4):
            tg.start_soon(wait_for, i)
        with anyio.move_on_after(0.02) as scope:
            await ds[1]
        assert scope.cancelled_caught
        await anyio.sleep(0.01)
        assert got == {}
        (batch,) = acc.drain(1, leader, 1 << 20, 1.0)
        acc.complete(batch, 100)
    assert got == {0: 100, 1: 101, 2: 102, 3: 103}
    assert (await ds[3]).offset == 103


def test_retry_goes_to_front_in_sequence_order_after_backoff() -> None:
    acc = make(max_batch_size=100, linger_ms=0, retry_backoff_ms=100)
    known_to_broker(acc, TP0)
    for _ in range(6):
        put(acc, TP0, b"x" * 60)
    b1 = acc.drain(1, leader, 1 << 20, 1.0)[0]
    b2 = acc.drain(1, leader, 1 << 20, 1.0)[0]
    b3 = acc.drain(1, leader, 1 << 20, 1.0)[0]
    # Responses fail out of order: b3 first, then b1, then b2.
    acc.reenqueue(b3, 1.0)
    acc.reenqueue(b1, 1.0)
    acc.reenqueue(b2, 1.0)
    ps = acc.partition_state(TP0)
    assert ps is not None
    assert list(ps.batches)[:3] == [b1, b2, b3]
    assert [b.base_sequence for b in (b1, b2, b3)] == [0, 1, 2]
    # Not before the backoff (100 ms +-20%).
    assert acc.drain(1, leader, 1 << 20, 1.05) == []
    nodes, delay, _ = acc.ready(leader, 1.05)
    assert nodes == set()
    assert delay is not None
    assert 0 < delay < 0.08
    assert acc.drain(1, leader, 1 << 20, 1.2) == [b1]
    # b2 waits until b1 (the oldest unacknowledged) is settled.
    assert acc.drain(1, leader, 1 << 20, 1.2) == []
    acc.complete(b1, 0)
    assert acc.drain(1, leader, 1 << 20, 1.2) == [b2]
    assert b2.base_sequence == 1


def test_backoff_grows_exponentially_with_jitter() -> None:
    acc = make(retry_backoff_ms=100, retry_backoff_max_ms=1000)
    for attempt, base in [(1, 0.1), (2, 0.2), (3, 0.4), (4, 0.8), (5, 1.0), (9, 1.0)]:
        for _ in range(20):
            assert base * 0.8 <= acc.backoff(attempt) <= min(base * 1.2, 1.0)


def test_expiry_fails_queued_batches_and_frees_memory() -> None:
    acc = make(delivery_timeout_ms=1000, linger_ms=0)
    d = put(acc, TP0, b"a", now=0.0)
    put(acc, TP1, b"b", now=0.5)
    assert acc.next_expiry() == pytest.approx(1.0)
    expired, unresolved = acc.expire(1.2)
    assert len(expired) == 1
    assert not unresolved
    assert isinstance(d.exception(), KafkaTimeoutError)
    assert acc.buffer_used == record_size(None, b"b", None)


def test_expiry_after_retries_names_the_last_broker_error() -> None:
    # Retried on NOT_ENOUGH_REPLICAS until the delivery timeout (seen on a three-node
    # cluster with too few in-sync replicas): the timeout says why, and keeps the typed error.
    from kafka_async.errors import NotEnoughReplicasError

    acc = make(delivery_timeout_ms=1000, linger_ms=0)
    d = put(acc, TP0, b"a", now=0.0)
    (batch,) = acc.drain(1, leader, 1 << 20, 0.01)
    acc.reenqueue(batch, 0.1, NotEnoughReplicasError())
    acc.expire(1.2)
    exc = d.exception()
    assert isinstance(exc, KafkaTimeoutError)
    assert isinstance(exc.__cause__, NotEnoughReplicasError)
    assert "last error: NotEnoughReplicasError" in str(exc)


def test_expiry_of_a_sent_batch_is_unresolved() -> None:
    acc = make(delivery_timeout_ms=1000, linger_ms=0)
    put(acc, TP0, b"a", now=0.0)
    (b,) = acc.drain(1, leader, 1 << 20, 0.1)
    acc.reenqueue(b, 0.2)
    _, unresolved = acc.expire(5.0)
    assert unresolved


def test_reset_sequences_restamps_queued_retries() -> None:
    acc = make(max_batch_size=100, linger_ms=0)
    known_to_broker(acc, TP0)
    for _ in range(3):
        put(acc, TP0, b"x" * 60)
    b1 = acc.drain(1, leader, 1 << 20, 1.0)[0]
    b2 = acc.drain(1, leader, 1 << 20, 1.0)[0]
    acc.fail(b1, KafkaTimeoutError("gone"))
    # The sender marks the partition of a batch given up while its fate was unknown.
    acc.sequence_unresolved(TP0)
    acc.reenqueue(b2, 1.0)
    assert not acc.has_in_flight()
    acc.reset_sequences(1000, 1)
    out = acc.drain(1, leader, 1 << 20, 10.0)
    assert out == [b2]
    assert (b2.base_sequence, b2.producer_epoch) == (0, 1)
    stamped = next(decode_batches(b2.build()))
    assert (stamped.producer_epoch, stamped.base_sequence) == (1, 0)


def test_buffer_room() -> None:
    acc = make(buffer_memory=1000)
    assert acc.has_room(5000)  # an empty buffer takes anything
    put(acc, TP0, b"x" * 500)
    assert acc.has_room(400)
    assert not acc.has_room(600)
    stats = acc.statistics()
    assert stats["buffer_used"] == record_size(None, b"x" * 500, None)


def test_can_send_gate_and_fail_all() -> None:
    acc = make(linger_ms=0)
    d0 = put(acc, TP0, b"a")
    put(acc, TP2, b"b")
    out = acc.drain(1, leader, 1 << 20, 1.0, can_send=lambda tp: tp == TP2)
    assert [b.tp for b in out] == [TP2]
    assert acc.fail_all_queued(KafkaTimeoutError("closing")) == 1
    assert isinstance(d0.exception(), KafkaTimeoutError)
    assert acc.queued_batches == 0
    assert acc.in_flight_batches == 1


# --- properties -------------------------------------------------------------------------------

ops = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(0, 2), st.integers(0, 150)),
        st.tuples(st.just("drain"), st.integers(1, 2), st.just(0)),
        st.tuples(st.just("ack"), st.integers(0, 50), st.just(0)),
        st.tuples(st.just("retry"), st.integers(0, 50), st.just(0)),
        st.tuples(st.just("tick"), st.integers(0, 500), st.just(0)),
    ),
    max_size=120,
)


@settings(max_examples=200, deadline=None)
@given(ops, st.booleans())
def test_property_no_loss_no_duplicate_order_kept(
    script: list[tuple[str, int, int]], idem: bool
) -> None:
    acc = make(max_batch_size=200, linger_ms=5, idempotent=idem, retry_backoff_ms=10)
    tps = [TP0, TP1, TP2]
    now = 0.0
    counter = 0
    appended: dict[TopicPartition, list[int]] = {tp: [] for tp in tps}
    written: dict[TopicPartition, list[int]] = {tp: [] for tp in tps}
    in_flight: list[ProducerBatch] = []
    for op, a, b in script:
        if op == "append":
            tp = tps[a]
            value = counter.to_bytes(4, "big") + b"p" * b
            counter += 1
            acc.append(tp, 0, None, value, None, record_size(None, value, None), now)
            appended[tp].append(counter - 1)
        elif op == "drain":
            in_flight.extend(acc.drain(a, leader, 1 << 20, now))
        elif op == "ack" and in_flight:
            batch = in_flight.pop(a % len(in_flight))
            ps = acc.partition_state(batch.tp)
            assert ps is not None
            if idem and ps.unacked and ps.unacked[0] is not batch:
                # The broker rejects a batch whose predecessor was not written.
                acc.reenqueue(batch, now)
                continue
            for rec in next(decode_batches(batch.build())).records():
                written[batch.tp].append(int.from_bytes((rec.value or b"")[:4], "big"))
            acc.complete(batch, 0)
        elif op == "retry" and in_flight:
            acc.reenqueue(in_flight.pop(a % len(in_flight)), now)
        elif op == "tick":
            now += a / 1000
        assert acc.buffer_used >= 0
    # Drain everything to the end, acknowledging in order.
    acc.flushing += 1
    now += 100
    for _ in range(1000):
        for batch in in_flight:
            acc.reenqueue(batch, now)
        in_flight = []
        now += 10
        out = acc.drain(1, leader, 1 << 20, now) + acc.drain(2, leader, 1 << 20, now)
        if not out and not acc.incomplete:
            break
        for batch in out:
            for rec in next(decode_batches(batch.build())).records():
                written[batch.tp].append(int.from_bytes((rec.value or b"")[:4], "big"))
            acc.complete(batch, 0)
    assert not acc.incomplete
    assert acc.buffer_used == 0
    for tp in tps:
        assert written[tp] == appended[tp]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.binary(max_size=120)), min_size=1, max_size=80),
    st.booleans(),
)
def test_property_append_many_segments_cover_every_record(
    values: list[bytes | None], with_keys: bool
) -> None:
    acc = make(max_batch_size=300, linger_ms=0)
    put(acc, TP0, b"already-open")  # the bulk run continues an open batch
    keys = [b"k%d" % i for i in range(len(values))] if with_keys else None
    segments: list[Segment] = []
    reserved = acc.append_many_to(
        acc.partition(TP0), 7, keys, values, None, 0.0, segments, index_base=100
    )
    expected = sum(record_size(keys[i] if keys else None, v, None) for i, v in enumerate(values))
    assert reserved == expected
    assert acc.buffer_used == expected + record_size(None, b"already-open", None)
    # Segments: consecutive call indexes, consecutive deltas, one per batch touched.
    assert sum(seg[2] for seg in segments) == len(values)
    assert [seg[3] for seg in segments] == sorted(seg[3] for seg in segments)
    assert segments[0][3] == 100
    assert len({id(seg[0]) for seg in segments}) == len(segments)
    # Built batches hold exactly the records, in order.
    got: list[tuple[bytes | None, bytes | None]] = []
    while True:
        out = acc.drain(1, leader, 1 << 20, 5.0)
        if not out:
            break
        for batch in out:
            got.extend((r.key, r.value) for r in next(decode_batches(batch.build())).records())
            acc.complete(batch, 0)
    expect: list[tuple[bytes | None, bytes | None]] = [(None, b"already-open")]
    expect += [(keys[i] if keys else None, v) for i, v in enumerate(values)]
    assert got == expect
    assert acc.buffer_used == 0
