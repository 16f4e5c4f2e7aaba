"""Idempotent sequence bookkeeping across failures: regression tests for review issue 3.

Pure: the accumulator and the sender's answer handling run without a broker (the sender's
cluster client is a real, never started ``ClusterClient``; these paths only read metadata).
"""

from __future__ import annotations

import random

import pytest

from kafka_async.cluster.client import ClusterClient
from kafka_async.errors import (
    InvalidRecordError,
    KafkaConnectionError,
    KafkaTimeoutError,
    MessageTooLargeError,
    OutOfOrderSequenceNumberError,
    ProducerFencedError,
    TopicAuthorizationFailedError,
)
from kafka_async.producer.accumulator import (
    Delivery,
    ProducerBatch,
    RecordAccumulator,
    record_size,
)
from kafka_async.producer.config import ProducerConfig
from kafka_async.producer.sender import Sender
from kafka_async.producer.transaction import TransactionState, TxnState
from kafka_async.records.batch import decode_batches
from kafka_async.structs import TopicPartition

TP0 = TopicPartition("t", 0)
TP1 = TopicPartition("t", 1)
LEADERS = {TP0: 1, TP1: 1}


def leader(tp: TopicPartition) -> int | None:
    return LEADERS.get(tp)


def make(**kw: object) -> RecordAccumulator:
    # One 60-byte record fills a 100-byte batch: one record per batch, one sequence each.
    defaults: dict[str, object] = {
        "max_batch_size": 100,
        "linger_ms": 0,
        "retry_backoff_ms": 10,
        "retry_backoff_max_ms": 10,
        "delivery_timeout_ms": 10_000,
        "rng": random.Random(0),
    }
    defaults.update(kw)
    acc = RecordAccumulator(**defaults)  # type: ignore[arg-type]
    acc.reset_sequences(1000, 0)
    for tp in LEADERS:
        known_to_broker(acc, tp)
    return acc


def known_to_broker(acc: RecordAccumulator, tp: TopicPartition) -> None:
    """As after an acknowledged batch of the current producer id and epoch on ``tp``: the
    broker holds the producer's sequence state there, so new batches are pipelined (the
    tests here start mid-stream, at sequence 0 for readability)."""
    ps = acc.partition(tp)
    ps.producer_id, ps.producer_epoch = acc.producer_id, acc.producer_epoch
    ps.broker_knows = True


def put(acc: RecordAccumulator, tp: TopicPartition, now: float = 0.0) -> Delivery:
    value = b"x" * 60
    return acc.append(tp, 1_000, None, value, None, record_size(None, value, None), now)


def drain_one(acc: RecordAccumulator, now: float) -> ProducerBatch:
    (batch,) = acc.drain(1, leader, 1 << 20, now)
    return batch


def stamped(batch: ProducerBatch) -> tuple[int, int]:
    decoded = next(decode_batches(batch.build()))
    return decoded.producer_epoch, decoded.base_sequence


def make_sender(acc: RecordAccumulator, txn: TransactionState | None = None) -> Sender:
    cfg = ProducerConfig.from_kwargs(bootstrap_servers="127.0.0.1:9")
    client = ClusterClient(cfg.client)
    return Sender(client, acc, cfg, txn)


def ooos() -> OutOfOrderSequenceNumberError:
    return OutOfOrderSequenceNumberError()


# --- 1. a rejected batch must not stall its partition ------------------------------------------


def test_unwritten_failure_renumbers_later_batches() -> None:
    acc = make()
    for _ in range(4):
        put(acc, TP0)
    b1, b2, b3 = (drain_one(acc, 1.0) for _ in range(3))
    assert [b.base_sequence for b in (b1, b2, b3)] == [0, 1, 2]
    acc.fail(b1, InvalidRecordError(), unwritten=True)
    # b2 and b3 move down by b1's record count; they are in flight under the old numbers.
    assert [b2.base_sequence, b3.base_sequence] == [0, 1]
    assert b2.sequence_reset
    assert b3.sequence_reset
    # The batch still queued takes the next number after them.
    b4 = drain_one(acc, 1.0)
    assert b4.base_sequence == 2
    ps = acc.partition_state(TP0)
    assert ps is not None
    assert ps.acked_sequence == 0
    assert ps.next_sequence == 3


def test_failure_of_a_possibly_written_batch_does_not_renumber() -> None:
    acc = make()
    for _ in range(2):
        put(acc, TP0)
    b1, b2 = drain_one(acc, 1.0), drain_one(acc, 1.0)
    acc.fail(b1, KafkaTimeoutError("lost"))
    assert b2.base_sequence == 1
    assert not b2.sequence_reset


@pytest.mark.anyio
@pytest.mark.parametrize(
    "error",
    [InvalidRecordError(), MessageTooLargeError(), TopicAuthorizationFailedError()],
    ids=lambda e: e.name,
)
async def test_rejected_batch_does_not_stall_partition(error: Exception) -> None:
    acc = make()
    sender = make_sender(acc)
    ds = [put(acc, TP0) for _ in range(3)]
    b1, b2, b3 = (drain_one(acc, 1.0) for _ in range(3))
    # The broker rejects b1 and therefore answers the two pipelined after it out of order.
    sender._on_batch_error(b1, error, 1.1)
    sender._on_batch_error(b2, ooos(), 1.1)
    sender._on_batch_error(b3, ooos(), 1.1)
    assert ds[0].exception() is error
    assert not ds[1].done()
    assert not ds[2].done()
    # The partition is renumbered by an epoch bump (what the sender loop does next).
    assert sender._bump_needed
    assert acc.unresolved == {TP0}
    assert not acc.has_in_flight()
    acc.reset_sequences(1000, 1)
    assert drain_one(acc, 2.0) is b2
    assert stamped(b2) == (1, 0)
    acc.complete(b2, 10)
    assert drain_one(acc, 2.0) is b3
    assert stamped(b3) == (1, 1)
    acc.complete(b3, 11)
    assert [d.result().offset for d in ds[1:]] == [10, 11]
    assert not acc.incomplete


@pytest.mark.anyio
async def test_rejected_batch_in_a_transaction_renumbers_later_batches() -> None:
    acc = make()
    txn = TransactionState("tx", 60_000)
    txn.initialized(1000, 0)
    txn.begin()
    sender = make_sender(acc, txn)
    ds = [put(acc, TP0) for _ in range(3)]
    b1, b2, b3 = (drain_one(acc, 1.0) for _ in range(3))
    error = InvalidRecordError()
    sender._on_batch_error(b1, error, 1.1)
    sender._on_batch_error(b2, ooos(), 1.1)
    sender._on_batch_error(b3, ooos(), 1.1)
    assert ds[0].exception() is error
    assert txn.state is TxnState.ABORTABLE_ERROR
    # No bump inside a transaction: the later batches took the sequences the broker expects
    # and are retried (not failed as "the expected batch") under them.
    assert not sender._bump_needed
    assert drain_one(acc, 2.0) is b2
    assert stamped(b2) == (0, 0)
    acc.complete(b2, 10)
    assert drain_one(acc, 2.0) is b3
    assert stamped(b3) == (0, 1)
    acc.complete(b3, 11)
    assert [d.result().offset for d in ds[1:]] == [10, 11]


@pytest.mark.anyio
async def test_out_of_order_retry_respects_delivery_timeout() -> None:
    acc = make(delivery_timeout_ms=1000)
    sender = make_sender(acc)
    put(acc, TP0, now=0.0)
    d2 = put(acc, TP0, now=0.0)
    d3 = put(acc, TP0, now=0.0)
    b1, b2, b3 = (drain_one(acc, 0.1) for _ in range(3))
    sender._on_batch_error(b1, KafkaConnectionError("reset"), 0.2)  # queued for a retry
    # Neither b2 nor b3 is the batch the broker expects: retried while there is time...
    sender._on_batch_error(b2, ooos(), 0.5)
    assert not d2.done()
    ps = acc.partition_state(TP0)
    assert ps is not None
    assert list(ps.batches)[:2] == [b1, b2]
    # ... and failed once delivery_timeout_ms has passed, not re-queued for ever.
    sender._on_batch_error(b3, ooos(), 1.5)
    assert isinstance(d3.exception(), OutOfOrderSequenceNumberError)
    assert b3 not in ps.batches
    # Its partition is renumbered by the next epoch bump.
    assert sender._bump_needed
    assert acc.unresolved == {TP0}


@pytest.mark.anyio
async def test_out_of_order_retry_stops_when_close_runs_out_of_time() -> None:
    acc = make()
    sender = make_sender(acc)
    put(acc, TP0)
    d2 = put(acc, TP0)
    b1, b2 = drain_one(acc, 0.1), drain_one(acc, 0.1)
    sender._on_batch_error(b1, KafkaConnectionError("reset"), 0.2)
    sender.abort_retries()
    sender._on_batch_error(b2, ooos(), 0.3)
    assert isinstance(d2.exception(), OutOfOrderSequenceNumberError)
    assert not acc.partition_state(TP0).batches[0].done  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_expected_out_of_order_batch_is_retried_under_a_bumped_epoch() -> None:
    acc = make()
    sender = make_sender(acc)
    put(acc, TP0)
    b1 = drain_one(acc, 0.1)
    sender._on_batch_error(b1, ooos(), 0.2)
    assert sender._bump_needed
    assert TP0 in acc.unresolved
    acc.reset_sequences(1000, 1)
    assert drain_one(acc, 1.0) is b1
    assert stamped(b1) == (1, 0)


# --- 2. an epoch bump must not renumber retries that may have been written --------------------


def test_epoch_bump_keeps_possibly_written_retries_on_old_epoch() -> None:
    acc = make()
    put(acc, TP0)
    put(acc, TP1)
    by_tp = {x.tp: x for x in acc.drain(1, leader, 1 << 20, 1.0)}
    written_maybe, gave_up = by_tp[TP0], by_tp[TP1]
    # TP0: the connection reset after the request went out; the broker may have written it.
    acc.reenqueue(written_maybe, 1.1)
    # TP1: a batch was given up after its delivery timeout: the reason for the bump.
    acc.fail(gave_up, KafkaTimeoutError("gave up"))
    acc.sequence_unresolved(TP1)
    assert not acc.has_in_flight()
    acc.reset_sequences(1000, 1)
    # The retry keeps its id, epoch and sequence so the broker can drop a duplicate.
    fresh0 = put(acc, TP0, now=2.0)
    fresh1 = put(acc, TP1, now=2.0)
    out = acc.drain(1, leader, 1 << 20, 5.0)
    assert {x.tp for x in out} == {TP0, TP1}
    retry = next(x for x in out if x.tp == TP0)
    assert retry is written_maybe
    assert stamped(retry) == (0, 0)
    # TP1 starts the new epoch at once.
    new1 = next(x for x in out if x.tp == TP1)
    assert stamped(new1) == (1, 0)
    # TP0's new batch waits until the old-epoch retry is settled ...
    assert acc.drain(1, leader, 1 << 20, 5.0) == []
    acc.complete(retry, 0)
    # ... then starts the new epoch at sequence 0.
    new0 = drain_one(acc, 5.0)
    assert stamped(new0) == (1, 0)
    assert not fresh0.done()
    assert not fresh1.done()


@pytest.mark.anyio
async def test_unresolved_failure_marks_only_its_partition_for_renumbering() -> None:
    acc = make(delivery_timeout_ms=1000)
    sender = make_sender(acc)
    put(acc, TP0, now=0.0)
    put(acc, TP1, now=0.0)
    out = acc.drain(1, leader, 1 << 20, 0.1)
    by_tp = {x.tp: x for x in out}
    sender._on_batch_error(by_tp[TP0], KafkaConnectionError("reset"), 0.2)  # retried
    sender._on_batch_error(by_tp[TP1], KafkaConnectionError("reset"), 2.0)  # too late
    assert sender._bump_needed
    assert acc.unresolved == {TP1}


# --- 3. a fatal error from a transaction call wakes everything at once -----------------------


@pytest.mark.anyio
async def test_fail_fatal_fails_queued_batches_and_wakes_space_waiters() -> None:
    acc = make()
    sender = make_sender(acc)
    d = put(acc, TP0)
    space = sender.space
    error = ProducerFencedError()
    sender.fail_fatal(error)
    assert sender.fatal_error is error
    assert d.exception() is error
    assert space.is_set()
    assert acc.buffer_used == 0


# --- 4. acknowledgements out of order never move the expected sequence back --------------------


def test_acked_sequence_never_moves_back() -> None:
    acc = make()
    for _ in range(2):
        put(acc, TP0)
    b1, b2 = drain_one(acc, 1.0), drain_one(acc, 1.0)
    ps = acc.partition_state(TP0)
    assert ps is not None
    acc.complete(b2, 1)  # answered first (a leader moved between the requests)
    assert ps.acked_sequence == 2
    acc.complete(b1, 0)
    assert ps.acked_sequence == 2


def test_acked_sequence_moves_forward_across_the_wrap() -> None:
    acc = make()
    ps = acc.partition(TP0)
    ps.producer_id, ps.producer_epoch = acc.producer_id, acc.producer_epoch
    ps.next_sequence = ps.acked_sequence = (1 << 31) - 1
    put(acc, TP0)
    put(acc, TP0)
    b1, b2 = drain_one(acc, 1.0), drain_one(acc, 1.0)
    assert (b1.base_sequence, b2.base_sequence) == ((1 << 31) - 1, 0)
    acc.complete(b1, 0)
    assert ps.acked_sequence == 0
    acc.complete(b2, 1)
    assert ps.acked_sequence == 1
