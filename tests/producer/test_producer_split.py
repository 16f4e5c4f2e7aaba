"""Splitting a batch the broker refused as too large (MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE).

Pure: ``split_records`` under hypothesis, then the accumulator and the sender's answer
handling without a broker (the sender's cluster client is a real, never started
``ClusterClient``; these paths only read metadata). The broker tests are in
``test_producer_split_broker.py``.
"""

from __future__ import annotations

import logging
import random

import anyio
import anyio.lowlevel
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_async.cluster.client import ClusterClient
from kafka_async.errors import (
    MessageTooLargeError,
    OutOfOrderSequenceNumberError,
    RecordListTooLargeError,
)
from kafka_async.producer.accumulator import (
    BulkDelivery,
    Delivery,
    ProducerBatch,
    RecordAccumulator,
    Segment,
    record_size,
    split_records,
)
from kafka_async.producer.config import ProducerConfig
from kafka_async.producer.sender import Sender
from kafka_async.producer.transaction import TransactionState, TxnState
from kafka_async.records.batch import HEADER_SIZE, BatchBuilder, Record, decode_batches
from kafka_async.structs import TopicPartition

TP = TopicPartition("t", 0)


def leader(tp: TopicPartition) -> int | None:
    return 1


# --- split_records: every record exactly once, in order, each piece within the limit ---------

_headers = st.lists(
    st.tuples(st.text(max_size=5), st.none() | st.binary(max_size=20)), max_size=2
).map(tuple)
_records = st.lists(
    st.tuples(
        st.integers(0, 2**41),
        st.none() | st.binary(max_size=40),
        st.none() | st.binary(max_size=300),
        _headers,
    ),
    min_size=2,
    max_size=60,
).map(lambda rs: [Record(i, *r) for i, r in enumerate(rs)])


def _decoded(builder: BatchBuilder) -> list[tuple[object, ...]]:
    (batch,) = decode_batches(builder.build())
    return [(r.timestamp, r.key, r.value, r.headers) for r in batch.records()]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    records=_records,
    limit=st.integers(0, 6000),
    compression=st.sampled_from([None, "gzip"]),
    transactional=st.booleans(),
)
def test_split_records_keeps_every_record_once_in_order_within_the_limit(
    records: list[Record], limit: int, compression: str | None, transactional: bool
) -> None:
    pieces = split_records(records, limit, compression, transactional)
    assert len(pieces) >= 2
    assert all(count >= 1 for _, count in pieces)
    assert sum(count for _, count in pieces) == len(records)
    flat = [rec for builder, _ in pieces for rec in _decoded(builder)]
    assert flat == [(r.timestamp, r.key, r.value, r.headers) for r in records]
    for builder, count in pieces:
        assert builder.record_count == count
        (batch,) = decode_batches(builder.build())
        assert batch.is_transactional == transactional
    one = BatchBuilder(None, batch_size_limit=max(limit, HEADER_SIZE + 1))
    fits_one = all(
        one.append(r.timestamp, r.key, r.value, r.headers or None) is not None for r in records
    )
    if fits_one:
        # Everything would fit one batch of ``limit``: two halves by count instead.
        assert [count for _, count in pieces] == [
            len(records) // 2,
            len(records) - len(records) // 2,
        ]
    else:
        for builder, count in pieces:
            assert count == 1 or builder.size_in_bytes <= max(limit, HEADER_SIZE + 1)


def test_split_records_refuses_a_single_record() -> None:
    with pytest.raises(ValueError, match="fewer than two"):
        split_records([Record(0, 1, None, b"x", ())], 100)


# --- the accumulator and the sender -----------------------------------------------------------


def make(*, idempotent: bool = True, **kw: object) -> RecordAccumulator:
    defaults: dict[str, object] = {
        "max_batch_size": 16384,
        "linger_ms": 0,
        "retry_backoff_ms": 10,
        "retry_backoff_max_ms": 10,
        "delivery_timeout_ms": 10_000,
        "idempotent": idempotent,
        "rng": random.Random(0),
    }
    defaults.update(kw)
    acc = RecordAccumulator(**defaults)  # type: ignore[arg-type]
    if idempotent:
        acc.reset_sequences(1000, 0)
    return acc


def make_sender(
    acc: RecordAccumulator, txn: TransactionState | None = None, **kw: object
) -> Sender:
    cfg = ProducerConfig.from_kwargs(
        bootstrap_servers="127.0.0.1:9", enable_idempotence=acc.idempotent, **kw
    )
    return Sender(ClusterClient(cfg.client), acc, cfg, txn)


def put(acc: RecordAccumulator, value: bytes, *, close: bool = False) -> Delivery:
    size = record_size(None, value, None)
    delivery = acc.append(TP, 1_000 + len(value), None, value, None, size, 0.0)
    if close:
        # The next record opens a new batch.
        ps = acc.partition_state(TP)
        assert ps is not None
        ps.batches[-1].closed = True
    return delivery


def drain_one(acc: RecordAccumulator, now: float = 1.0) -> ProducerBatch:
    (batch,) = acc.drain(1, leader, 1 << 20, now)
    return batch


def values_of(batch: ProducerBatch) -> list[bytes | None]:
    (decoded,) = decode_batches(batch.build())
    return [r.value for r in decoded.records()]


def sequence_of(batch: ProducerBatch) -> tuple[int, int, int]:
    (decoded,) = decode_batches(batch.build())
    return decoded.producer_id, decoded.producer_epoch, decoded.base_sequence


def ooos() -> OutOfOrderSequenceNumberError:
    return OutOfOrderSequenceNumberError()


@pytest.mark.anyio
async def test_refused_batch_is_split_in_place_with_its_sequence_range(
    caplog: pytest.LogCaptureFixture,
) -> None:
    acc = make()
    sender = make_sender(acc)
    values = [b"%02d" % i * 50 for i in range(6)]
    first = [put(acc, v) for v in values[:4]]
    first[-1]._batch.closed = True
    later = [put(acc, v) for v in values[4:]]
    big = drain_one(acc)
    assert big.base_sequence == 0
    # Nothing of this producer is written yet (the broker would take any first sequence):
    # the later batch waits for the big one's answer.
    assert acc.drain(1, leader, 1 << 20, 1.0) == []
    size = len(big.build())
    with caplog.at_level(logging.INFO, logger="kafka_async.producer.sender"):
        sender._on_batch_error(big, MessageTooLargeError("too big"), 1.1)
    assert big.children is not None
    pieces = list(big.children)
    assert [p.record_count for p in pieces] == [2, 2]
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.INFO] == [
        f"t-0: the broker refused a batch of 4 records ({size} bytes) with MESSAGE_TOO_LARGE; "
        "split it into 2 batches of 2/2 records"
    ]
    # Same producer id and epoch, the big batch's sequence range, no epoch bump.
    assert [sequence_of(p) for p in pieces] == [(1000, 0, 0), (1000, 0, 2)]
    assert not sender._bump_needed
    assert not acc.unresolved
    assert acc.statistics()["batch_splits"] == 1
    assert not any(d.done() for d in first + later)
    # In order: the first piece alone (still nothing written), then, once the broker holds
    # the producer's sequence, the second piece and the later batch pipelined.
    p1 = drain_one(acc, 2.0)
    assert p1 is pieces[0]
    assert values_of(p1) == values[:2]
    assert acc.drain(1, leader, 1 << 20, 2.0) == []
    acc.complete(p1, 100)
    p2 = drain_one(acc, 2.0)
    assert p2 is pieces[1]
    assert values_of(p2) == values[2:4]
    nxt = drain_one(acc, 2.0)
    assert sequence_of(nxt) == (1000, 0, 4)
    assert values_of(nxt) == values[4:]
    acc.complete(p2, 102)
    acc.complete(nxt, 104)
    with anyio.fail_after(5):
        assert [(await d).offset for d in first + later] == [100, 101, 102, 103, 104, 105]
    assert not acc.incomplete
    assert acc.buffer_used == 0
    assert acc.records_acked == 6
    assert sender.statistics()["errors_by_code"] == {"MESSAGE_TOO_LARGE": 1}


@pytest.mark.anyio
async def test_piece_refused_again_while_the_next_is_in_flight_keeps_the_order() -> None:
    acc = make()
    sender = make_sender(acc)
    # One batch written first: the broker knows this producer's sequences on the partition,
    # so the pieces are pipelined like new batches.
    known = put(acc, b"known", close=True)
    acc.complete(drain_one(acc), 0)
    assert (await known).offset == 0
    values = [b"%02d" % i * 50 for i in range(8)]
    ds = [put(acc, v) for v in values]
    big = drain_one(acc)
    sender._on_batch_error(big, MessageTooLargeError(), 1.1)
    assert big.children is not None
    p1, p2 = big.children
    assert (drain_one(acc, 2.0), drain_one(acc, 2.0)) == (p1, p2)
    # The first piece is refused too; the broker answers the second one out of order.
    sender._on_batch_error(p1, MessageTooLargeError(), 2.1)
    sender._on_batch_error(p2, ooos(), 2.1)
    assert p1.children is not None
    q1, q2 = p1.children
    assert [sequence_of(b)[2] for b in (q1, q2, p2)] == [1, 3, 5]
    ps = acc.partition_state(TP)
    assert ps is not None
    assert list(ps.batches) == [q1, q2, p2]
    assert list(ps.unacked) == [q1, q2, p2]
    assert (drain_one(acc, 3.0), drain_one(acc, 3.0)) == (q1, q2)
    # p2 is a retry now: it waits until it is the oldest unacknowledged batch.
    assert acc.drain(1, leader, 1 << 20, 3.0) == []
    acc.complete(q1, 1)
    acc.complete(q2, 3)
    assert drain_one(acc, 3.0) is p2
    acc.complete(p2, 5)
    assert not sender._bump_needed
    with anyio.fail_after(5):
        assert [(await d).offset for d in ds] == list(range(1, 9))
    assert acc.statistics()["batch_splits"] == 2


@pytest.mark.anyio
async def test_split_goes_down_to_one_record_which_alone_fails() -> None:
    acc = make()
    sender = make_sender(acc)
    values = [b"a" * 10, b"b" * 10, b"c" * 5000, b"d" * 10]
    ds = [put(acc, v) for v in values]
    big = drain_one(acc)
    waited: list[int] = []

    async def wait_batch() -> None:
        await big.wait()
        waited.append(1)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(wait_batch)
            await anyio.lowlevel.checkpoint()
            sender._on_batch_error(big, MessageTooLargeError(), 1.1)
            # The big record got a piece of its own; the first piece holds the two before it.
            assert big.children is not None
            assert [values_of(p) for p in big.children] == [values[:2], values[2:3], values[3:]]
            p1 = drain_one(acc, 2.0)
            sender._on_batch_error(p1, RecordListTooLargeError(), 2.1)
            assert p1.children is not None
            a = drain_one(acc, 3.0)
            acc.complete(a, 10)
            b = drain_one(acc, 3.0)
            acc.complete(b, 11)
            assert not big.done
            assert not waited
            c = drain_one(acc, 3.0)
            assert c.record_count == 1
            assert sequence_of(c) == (1000, 0, 2)
            error = MessageTooLargeError("record too large")
            # A single record is not split: it fails with the typed error...
            sender._on_batch_error(c, error, 3.1)
            assert c.children is None
            # ... and, the broker still expecting its sequence, the partition is renumbered by an
            # epoch bump (what the sender loop does next) so the last record can follow.
            assert sender._bump_needed
            acc.reset_sequences(1000, 1)
            d = drain_one(acc, 4.0)
            assert sequence_of(d) == (1000, 1, 0)
            acc.complete(d, 12)
    assert waited == [1]
    assert big.done
    assert [d.done() for d in ds] == [True] * 4
    assert ds[0].result().offset == 10
    assert ds[1].result().offset == 11
    assert ds[2].exception() is error
    with pytest.raises(MessageTooLargeError):
        ds[2].result()
    assert "failed" in repr(ds[2])
    assert ds[3].result().offset == 12
    assert ds[3].exception() is None
    assert acc.statistics()["batch_splits"] == 2
    assert acc.records_failed == 1
    assert acc.failed_by_error == {"MESSAGE_TOO_LARGE": 1}
    assert acc.buffer_used == 0
    assert not acc.incomplete


@pytest.mark.anyio
async def test_bulk_delivery_resolves_each_record_of_a_split_batch() -> None:
    acc = make(idempotent=False)
    sender = make_sender(acc)
    ps = acc.partition(TP)
    segments: list[Segment] = []
    values = [bytes([65 + i]) * 100 for i in range(5)]
    acc.append_many_to(ps, 1_000, None, values, None, 0.0, segments)
    bulk = BulkDelivery("t", 1_000, segments, len(values))
    big = drain_one(acc)
    sender._on_batch_error(big, MessageTooLargeError(), 1.1)
    assert big.children is not None
    # About half the bytes each: 2, 2 and 1 records of equal size.
    assert [p.record_count for p in big.children] == [2, 2, 1]
    first, second, third = big.children
    # Without idempotence the pieces carry no sequence and go first, one at a time.
    assert {p.base_sequence for p in big.children} == {-1}
    assert drain_one(acc, 2.0) is first
    assert acc.drain(1, leader, 1 << 20, 2.0) == []
    acc.complete(first, 50)
    assert not bulk.done()
    assert drain_one(acc, 2.0) is second
    # The broker refuses the second piece again: one record each.
    sender._on_batch_error(second, MessageTooLargeError(), 2.1)
    assert second.children is not None
    x = drain_one(acc, 3.0)
    acc.complete(x, 60)
    y = drain_one(acc, 3.0)
    error = MessageTooLargeError("one record")
    sender._on_batch_error(y, error, 3.1)
    assert not bulk.done()
    assert drain_one(acc, 3.0) is third
    acc.complete(third, 70)
    assert bulk.done()
    results = bulk.results()
    assert [getattr(r, "offset", r) for r in results] == [50, 51, 60, error, 70]
    assert bulk.exception() is error
    with pytest.raises(MessageTooLargeError), anyio.fail_after(5):
        await bulk


@pytest.mark.anyio
async def test_split_in_a_transaction_is_not_an_abortable_error() -> None:
    acc = make(transactional=True)
    txn = TransactionState("tx", 60_000)
    txn.initialized(1000, 0)
    txn.begin()
    sender = make_sender(acc, txn, transactional_id="tx")
    ds = [put(acc, b"v" * 100) for _ in range(3)]
    big = drain_one(acc)
    sender._on_batch_error(big, MessageTooLargeError(), 1.1)
    assert txn.state is TxnState.IN_TRANSACTION
    assert big.children is not None
    for piece in big.children:
        (decoded,) = decode_batches(piece.build())
        assert decoded.is_transactional
    assert [p.record_count for p in big.children] == [1, 1, 1]
    for offset in range(3):
        acc.complete(drain_one(acc, 2.0), offset)
    with anyio.fail_after(5):
        assert [(await d).offset for d in ds] == [0, 1, 2]


def test_single_record_batch_is_not_split() -> None:
    acc = make(idempotent=False)
    sender = make_sender(acc)
    d = put(acc, b"x" * 100)
    batch = drain_one(acc)
    error = RecordListTooLargeError()
    sender._on_batch_error(batch, error, 1.1)
    assert batch.children is None
    assert d.exception() is error
    assert acc.statistics()["batch_splits"] == 0


def test_refusal_after_close_ran_out_of_time_fails_instead_of_splitting() -> None:
    acc = make(idempotent=False)
    sender = make_sender(acc)
    ds = [put(acc, b"x" * 100) for _ in range(3)]
    batch = drain_one(acc)
    sender.abort_retries()
    sender._on_batch_error(batch, MessageTooLargeError(), 1.1)
    assert batch.children is None
    assert all(isinstance(d.exception(), MessageTooLargeError) for d in ds)


def test_split_pieces_expire_with_the_original_delivery_timeout() -> None:
    acc = make(idempotent=False, delivery_timeout_ms=1_000)
    sender = make_sender(acc)
    ds = [put(acc, b"x" * 100) for _ in range(2)]
    big = drain_one(acc, 0.5)
    sender._on_batch_error(big, MessageTooLargeError(), 0.6)
    assert big.children is not None
    assert all(p.created == big.created for p in big.children)
    expired, _ = acc.expire(1.5)
    assert len(expired) == 2
    assert all(type(d.exception()).__name__ == "KafkaTimeoutError" for d in ds)
    assert big.done
    assert acc.buffer_used == 0


@pytest.mark.parametrize("compression", ["gzip", None])
def test_compressed_batch_is_split_by_uncompressed_size(compression: str | None) -> None:
    acc = make(idempotent=False, compression_type=compression)
    sender = make_sender(acc)
    values = [b"%03d" % i * 100 for i in range(20)]
    ds = [put(acc, v) for v in values]
    big = drain_one(acc)
    sender._on_batch_error(big, MessageTooLargeError(), 1.1)
    assert big.children is not None
    # Twenty records of one size: two halves of ten, compressed as the batch was.
    assert [p.record_count for p in big.children] == [10, 10]
    assert [v for p in big.children for v in values_of(p)] == values
    for piece in big.children:
        (decoded,) = decode_batches(piece.build())
        assert decoded.compression_type == (1 if compression == "gzip" else 0)
    for offset, piece in enumerate(big.children):
        assert drain_one(acc, 2.0) is piece
        acc.complete(piece, offset * 10)
    assert [d.result().offset for d in ds] == list(range(20))


@pytest.mark.anyio
async def test_pieces_of_a_new_producer_wait_for_its_first_write() -> None:
    """Regression (seen on Apache Kafka 4.1): a new producer's first two batches were both
    refused as too large; the second one's pieces went out while the first one's were being
    refused again, and the broker, which had no state for the producer yet, wrote them: every
    earlier sequence was then OUT_OF_ORDER_SEQUENCE_NUMBER for good and flush() never ended.
    Until something of the producer is written, its batches and pieces go one at a time,
    oldest first."""
    acc = make()
    sender = make_sender(acc)
    values = [b"%02d" % i * 50 for i in range(8)]
    ds = [put(acc, v, close=i in (3, 7)) for i, v in enumerate(values)]
    a = drain_one(acc)
    assert a.base_sequence == 0
    # A new producer's second batch does not follow its first before that one is written.
    assert acc.drain(1, leader, 1 << 20, 1.0) == []
    sender._on_batch_error(a, MessageTooLargeError(), 1.1)
    assert a.children is not None
    a1, a2 = a.children
    assert drain_one(acc, 2.0) is a1
    # Nothing is written yet: neither a's second piece nor the next batch may follow a1.
    assert acc.drain(1, leader, 1 << 20, 2.0) == []
    sender._on_batch_error(a1, MessageTooLargeError(), 2.1)
    assert a1.children is not None
    a11, a12 = a1.children
    assert drain_one(acc, 3.0) is a11
    assert acc.drain(1, leader, 1 << 20, 3.0) == []
    acc.complete(a11, 0)
    # The broker now holds the producer's sequence: the rest is pipelined, in order.
    a12_, a2_, b = (drain_one(acc, 3.0) for _ in range(3))
    assert (a12_, a2_) == (a12, a2)
    assert b.base_sequence == 4
    for batch, offset in ((a12, 1), (a2, 2), (b, 4)):
        acc.complete(batch, offset)
    with anyio.fail_after(5):
        assert [(await d).offset for d in ds] == list(range(8))
    assert not sender._bump_needed
