"""Per-partition batches waiting to be sent: the producer's pure, synchronous core.

The accumulator owns every record between ``Producer.enqueue`` and the broker's answer:

* ``append`` adds a record to the open batch of its partition (a ``records.BatchBuilder``),
  opening a new batch when the open one is full;
* ``ready`` says which brokers have something to send now and when to look again (a batch is
  sendable when it is full, lingered ``linger_ms``, is being flushed, or is a retry whose
  backoff passed);
* ``drain`` takes, for one broker, at most one batch per partition (a Produce request may
  name a partition only once) up to ``max_request_size``, and stamps producer id, epoch and
  sequence numbers on batches that have none yet;
* ``complete`` / ``fail`` / ``reenqueue`` settle a batch after the broker answered, and
  ``split`` puts a batch the broker refused as too large back as smaller batches.

Nothing here awaits or does I/O; the sender calls these functions and does the waiting.

Ordering within a partition (the rule that decides what ``drain`` may take):

* With idempotence, up to ``max_in_flight`` batches of a partition may be in flight at once
  (the broker keeps the last five batches per producer and partition to detect duplicates);
  the broker rejects any batch whose sequence does not follow the last written one, so the
  log order is the sequence order. The first batch of a partition (per producer id and
  epoch) goes alone, though: a broker holding no state for the producer there accepts any
  first sequence, so a second batch pipelined behind a refused first one would be written
  ahead of it. A failed batch goes back to the *front* of its partition
  with its sequence kept, and a batch that already has a sequence is only sent again once it
  is the oldest unacknowledged batch of the partition, exactly as the Java client does; the
  later batches that were in flight fail with OUT_OF_ORDER_SEQUENCE_NUMBER and queue up
  behind it in sequence order.
* A batch the broker rejected (so did not write) leaves a gap before the later batches of
  its partition: the sender has them renumbered, by an epoch bump or, inside a transaction,
  by ``fail(..., unwritten=True)`` moving their sequences down.
* A batch split after a too-large refusal (never written) hands its sequence range, in
  order, to its pieces, which take its place: the broker still expects its first sequence,
  so the partition's later batches keep theirs and nothing is renumbered. Never sent, the
  pieces are pipelined like new batches.
* An epoch bump renumbers only partitions that are unresolved or have no sequenced batch
  left; a partition with a retry that may already be written keeps its old producer id,
  epoch and sequences until that retry is settled, so the broker can still recognise it as
  a duplicate. New batches of such a partition wait until then.
* Without idempotence there is no sequence to restore order after a retry, so the Java
  client reorders under retries unless ``max.in.flight.requests.per.connection=1``. We keep
  order instead by allowing one in-flight batch per partition (other partitions of the same
  broker still share pipelined requests). A retry after a lost response may still duplicate
  a record, which only idempotence prevents.
"""

from __future__ import annotations

import asyncio
import random
import time
from asyncio import _get_running_loop
from collections import deque
from collections.abc import Awaitable, Callable, Generator, Iterable, Sequence
from typing import Any

import anyio

from ..errors import BrokerResponseError, InvalidStateError, KafkaTimeoutError
from ..net.backoff import ExponentialBackoff
from ..records.batch import HEADER_SIZE, BatchBuilder, Record, decode_batches
from ..structs import RecordMetadata, TimestampType, TopicPartition
from .fastpath import append_record, delivery_metadata

__all__ = [
    "Bytes",
    "Delivery",
    "InvalidStateError",
    "PartitionState",
    "ProducerBatch",
    "RecordAccumulator",
    "record_size",
]

#: Bytes a RecordBatch v2 header takes before its first record.
BATCH_OVERHEAD = 61
#: Upper bound of a record's framing (length, attributes, deltas, key/value lengths, header
#: count) in a v2 batch; used to estimate sizes without encoding.
RECORD_OVERHEAD = 21
_SEQ_MODULUS = 1 << 31
_monotonic = time.monotonic
#: Seconds a batch may leave before its linger ends (see ``RecordAccumulator.linger_due``).
_LINGER_SLACK = 0.001

#: Byte strings a key or value may be given as.
Bytes = bytes | bytearray | memoryview

_tuple_new = tuple.__new__
_Future = asyncio.Future
_CREATE_TIME = TimestampType.CREATE_TIME
_LOG_APPEND_TIME = TimestampType.LOG_APPEND_TIME


def record_size(key: Bytes | None, value: Bytes | None, headers: Iterable[Any] | None) -> int:
    """An upper-bound estimate of a record's encoded size (before compression)."""
    size = RECORD_OVERHEAD
    if key is not None:
        size += len(key)
    if value is not None:
        size += len(value)
    if headers:
        for hkey, hval in headers:
            # A str key costs at most 4 bytes per character in UTF-8; 10 covers two varints.
            size += 10 + len(hkey) * 4 + (len(hval) if hval is not None else 0)
    return size


class ProducerBatch:
    """One record batch of one partition, from its first record until it is settled.

    Deliveries point at their batch; settling a batch settles all of its records at once, so
    completing a batch of a thousand records costs one event set, not a thousand.
    """

    __slots__ = (
        "_event",
        "_waiters",
        "attempts",
        "base_offset",
        "base_sequence",
        "builder",
        "children",
        "closed",
        "created",
        "done",
        "error",
        "in_flight",
        "last_error",
        "log_append_time",
        "loop",
        "maybe_written",
        "parent",
        "payload",
        "pending_children",
        "producer_epoch",
        "producer_id",
        "record_count",
        "report_at_flush",
        "reserved",
        "retry_at",
        "sequence_reset",
        "split_delta",
        "tp",
        "writer",
    )

    def __init__(self, tp: TopicPartition, builder: BatchBuilder, created: float) -> None:
        self.tp = tp
        self.builder: BatchBuilder | None = builder
        #: The builder's record writer while records may be added (None once settled):
        #: ``append_record`` writes to it directly.
        self.writer: Any = builder.writer
        self.created = created
        self.reserved = 0
        self.record_count = 0
        self.closed = False
        self.in_flight = False
        self.attempts = 0
        self.retry_at = 0.0
        self.base_sequence = -1
        #: True while the batch is in flight under a sequence that was renumbered since it
        #: was sent (an earlier batch failed unwritten): the broker's answer is about the old
        #: sequence, so an OUT_OF_ORDER_SEQUENCE_NUMBER for it just means "send it again".
        self.sequence_reset = False
        self.producer_id = -1
        self.producer_epoch = -1
        self.payload: bytes | None = None
        self.done = False
        self.base_offset = -1
        self.log_append_time = -1
        self.error: BaseException | None = None
        #: The retriable error of the last failed attempt (named when the batch expires).
        self.last_error: BaseException | None = None
        #: An attempt's outcome was unknown (no answer, REQUEST_TIMED_OUT,
        #: NOT_ENOUGH_REPLICAS_AFTER_APPEND): the broker may have written the batch, so a
        #: later refusal does not mean it is not in the log (see ``timed_out``).
        self.maybe_written = False
        #: For ``wait()`` (a flush: one waiter per batch), and for awaited deliveries when
        #: no asyncio loop runs (trio): created on first use.
        self._event: anyio.Event | None = None
        #: Awaited deliveries on asyncio: one future per waiting task (see ``settled``).
        self._waiters: list[asyncio.Future[None]] | None = None
        #: The asyncio loop the producer runs on (None: not known, or not asyncio).
        self.loop: asyncio.AbstractEventLoop | None = None
        #: Set when the broker refused the batch as too large and it was split: the smaller
        #: batches now holding its records, in order. The batch itself is then never sent; it
        #: settles once all of them have, with ``error`` kept as the refusal, and its
        #: records' outcomes are read from the batch holding each (see ``_holder``). Looking
        #: there only when ``error`` is set keeps the split out of the success path.
        self.children: tuple[ProducerBatch, ...] | None = None
        #: Children not settled yet (a split batch settles when this reaches 0).
        self.pending_children = 0
        #: The batch this one was split from, and the offset delta its first record had there.
        self.parent: ProducerBatch | None = None
        self.split_delta = 0
        #: Holds records queued with ``Producer.produce`` (no handle each): if it fails,
        #: its records are counted for the next ``flush`` to raise.
        self.report_at_flush = False

    def __repr__(self) -> str:
        if self.children is not None:
            return (
                f"<ProducerBatch {self.tp.topic}-{self.tp.partition} "
                f"records={self.record_count} split into {len(self.children)}>"
            )
        state = "done" if self.done else "in-flight" if self.in_flight else "queued"
        return (
            f"<ProducerBatch {self.tp.topic}-{self.tp.partition} records={self.record_count} "
            f"seq={self.base_sequence} attempts={self.attempts} {state}>"
        )

    @property
    def size(self) -> int:
        """Encoded size: of the built payload once built, else the builder's estimate."""
        if self.payload is not None:
            return len(self.payload)
        return self.builder.size_in_bytes if self.builder is not None else 0

    def build(self) -> bytes:
        """The wire bytes, stamped with the batch's producer id, epoch and sequence.

        Built once and reused for retries; rebuilt only when the stamp changed (an epoch bump
        gives retried batches a new producer epoch and new sequences).
        """
        payload = self.payload
        if payload is not None and self._stamp_matches(payload):
            return payload
        assert self.builder is not None, "a settled batch is never sent"
        payload = self.builder.build(
            producer_id=self.producer_id,
            producer_epoch=self.producer_epoch,
            base_sequence=self.base_sequence,
        )
        self.payload = payload
        return payload

    def _stamp_matches(self, payload: bytes) -> bool:
        # RecordBatch v2: producerId at byte 43, producerEpoch at 51, baseSequence at 53.
        return (
            int.from_bytes(payload[43:51], "big", signed=True) == self.producer_id
            and int.from_bytes(payload[51:53], "big", signed=True) == self.producer_epoch
            and int.from_bytes(payload[53:57], "big", signed=True) == self.base_sequence
        )

    def settle(self) -> None:
        """Mark the batch settled (its outcome set) and wake its waiters (the accumulator's
        ``complete``/``fail``)."""
        self.done = True
        self.in_flight = False
        self.builder = None
        self.writer = None
        self.payload = None
        self._wake()
        if self.parent is not None:
            self.parent.child_settled()

    def child_settled(self) -> None:
        """One of the batches this one was split into settled (called by that child)."""
        self.pending_children -= 1
        if self.pending_children == 0:
            self.done = True
            self._wake()
            if self.parent is not None:
                self.parent.child_settled()

    def _wake(self) -> None:
        if self._event is not None:
            self._event.set()
        waiters = self._waiters
        if waiters:
            self._waiters = None
            for fut in waiters:
                if not fut.done():  # a cancelled waiter's future is done already
                    fut.set_result(None)

    def settled(self) -> Awaitable[Any]:
        """Something to await until the batch is settled, for one waiting task (the
        caller checked that it is not settled yet).

        On asyncio, a plain future of the caller's own, set when the batch settles: a
        thousand tasks each awaiting its record's delivery then cost one future each, not an
        anyio and an asyncio ``Event.wait`` coroutine each (about twice the CPU per
        wake-up). One future shared by the waiters would not do: cancelling a task cancels
        the future it waits on. A waiter cancelled meanwhile leaves its (cancelled, so
        done) future behind until the batch settles, which skips it. Elsewhere (trio): the
        batch's anyio ``Event``.
        """
        loop = self.loop or _get_running_loop()
        if loop is None:
            event = self._event
            if event is None:
                event = self._event = anyio.Event()
            return event.wait()
        fut: asyncio.Future[None] = _Future(loop=loop)
        waiters = self._waiters
        if waiters is None:
            self._waiters = [fut]
        else:
            waiters.append(fut)
        return fut

    async def wait(self) -> None:
        """Wait until the batch is acknowledged or failed."""
        if self.done:
            return
        if self._event is None:
            self._event = anyio.Event()
        await self._event.wait()


def _holder(batch: ProducerBatch, delta: int) -> tuple[ProducerBatch, int]:
    """The batch that holds the record at ``delta`` of ``batch`` after splits, and its delta
    there (``batch`` itself when it was never split)."""
    while batch.children is not None:
        for child in reversed(batch.children):
            if child.split_delta <= delta:
                break
        delta -= child.split_delta
        batch = child
    return batch, delta


class Delivery:
    """The outcome of one enqueued record: await it for its :class:`RecordMetadata`.

    Awaiting raises the typed error the record failed with. ``done()``, ``result()`` and
    ``exception()`` read the outcome without waiting. Cheap by design (one small object per
    record, no event or future of its own): it waits on its batch.
    """

    __slots__ = ("_batch", "_delta", "_key_size", "_timestamp", "_value_size")

    def __init__(
        self, batch: ProducerBatch, delta: int, timestamp: int, key_size: int, value_size: int
    ) -> None:
        self._batch = batch
        self._delta = delta
        self._timestamp = timestamp
        self._key_size = key_size
        self._value_size = value_size

    def __repr__(self) -> str:
        if not self._batch.done:
            return f"<Delivery {self._batch.tp.topic}-{self._batch.tp.partition} pending>"
        error = self.exception()
        if error is not None:
            return f"<Delivery failed: {error!r}>"
        return f"<Delivery {self.result()!r}>"

    @property
    def topic_partition(self) -> TopicPartition:
        """Where the record is going."""
        return self._batch.tp

    @property
    def batch(self) -> ProducerBatch:
        """The batch holding the record (the producer's own bookkeeping)."""
        return self._batch

    def done(self) -> bool:
        """True once the broker acknowledged the record or it failed."""
        return self._batch.done

    def settled(self) -> Awaitable[Any]:
        """Something for one task to await until the record is settled (the caller checked
        ``done()`` is False): its batch's waiter (``ProducerBatch.settled``), so a layer on
        top (the aiokafka drop-in's futures) wakes in the same loop turn as the batch's
        other records, with no task or event per record."""
        return self._batch.settled()

    def exception(self) -> BaseException | None:
        """The error the record failed with, None on success; ``InvalidStateError`` early."""
        batch = self._batch
        if not batch.done:
            raise InvalidStateError("the record is not settled yet")
        if batch.error is not None and batch.children is not None:
            return _holder(batch, self._delta)[0].error
        return batch.error

    def result(self) -> RecordMetadata:
        """The record's metadata; raises its error, or ``InvalidStateError`` if not settled."""
        # The success path in one call into the C fast path (fastpath.py): it reads the
        # handle's and the batch's slots and makes the named tuple without its __new__.
        metadata = delivery_metadata(self, RecordMetadata)
        if metadata is not None:
            return metadata  # type: ignore[no-any-return]
        batch = self._batch
        if not batch.done:
            raise InvalidStateError("the record is not settled yet")
        delta = self._delta
        if batch.error is not None:
            if batch.children is None:
                raise batch.error
            # The batch was split: the record's outcome is that of the batch now holding it.
            batch, delta = _holder(batch, delta)
            if batch.error is not None:
                raise batch.error
        tp = batch.tp
        base = batch.base_offset
        if batch.log_append_time >= 0:
            timestamp, ts_type = batch.log_append_time, _LOG_APPEND_TIME
        else:
            timestamp, ts_type = self._timestamp, _CREATE_TIME
        return _tuple_new(
            RecordMetadata,
            (
                tp.topic,
                tp.partition,
                base + delta if base >= 0 else -1,
                timestamp,
                ts_type,
                self._key_size,
                self._value_size,
            ),
        )

    async def wait(self) -> RecordMetadata:
        """Wait for the outcome; same as ``await delivery``."""
        if not self._batch.done:
            await self._batch.wait()
        return self.result()

    def __await__(self) -> Generator[Any, None, RecordMetadata]:
        # A generator rather than ``self.wait().__await__()``: no coroutine objects per
        # await, which matters when thousands of tasks each await their own record.
        batch = self._batch
        if not batch.done:
            yield from batch.settled().__await__()
        return self.result()


#: One run of consecutive records of a bulk append in one batch:
#: (batch, offset delta of the first, number of records, index of the first in the call).
Segment = tuple["ProducerBatch", int, int, int]


class BulkDelivery:
    """The outcome of :meth:`Producer.enqueue_many`: await it to wait for every record.

    Awaiting returns the number of records acknowledged and raises the first record's error
    if any failed. ``results()`` gives one :class:`RecordMetadata` or exception per record,
    in the order given (serialized sizes are not kept: -1). Costs one small tuple per batch
    touched, not one object per record.
    """

    __slots__ = ("_count", "_order", "_segments", "_timestamp", "_topic")

    def __init__(
        self,
        topic: str,
        timestamp: int,
        segments: list[Segment],
        count: int,
        order: list[int] | None = None,
    ) -> None:
        self._topic = topic
        self._timestamp = timestamp
        self._segments = segments
        self._count = count
        #: Position in the call of the n-th record appended, when records were regrouped by
        #: partition (None: appended in call order).
        self._order = order

    def __len__(self) -> int:
        return self._count

    def __repr__(self) -> str:
        state = "done" if self.done() else "pending"
        return f"<BulkDelivery {self._topic} records={self._count} {state}>"

    def done(self) -> bool:
        """True once every record is acknowledged or failed."""
        return all(seg[0].done for seg in self._segments)

    def exception(self) -> BaseException | None:
        """The first error among the records (None if all succeeded); requires ``done()``."""
        if not self.done():
            raise InvalidStateError("the records are not settled yet")
        for batch, first_delta, count, _ in self._segments:
            if batch.error is not None:
                if batch.children is None:
                    return batch.error
                for delta in range(first_delta, first_delta + count):
                    error = _holder(batch, delta)[0].error
                    if error is not None:
                        return error
        return None

    def results(self) -> list[RecordMetadata | BaseException]:
        """Per record, in call order: its metadata or its error; requires ``done()``."""
        if not self.done():
            raise InvalidStateError("the records are not settled yet")
        out: list[RecordMetadata | BaseException | None] = [None] * self._count
        ts = self._timestamp
        order = self._order
        for batch, first_delta, count, first_index in self._segments:
            if batch.error is not None:
                if batch.children is not None:
                    self._split_results(out, batch, first_delta, count, first_index)
                    continue
                for i in range(first_index, first_index + count):
                    out[order[i] if order is not None else i] = batch.error
                continue
            if batch.log_append_time >= 0:
                stamp, ts_type = batch.log_append_time, TimestampType.LOG_APPEND_TIME
            else:
                stamp, ts_type = ts, TimestampType.CREATE_TIME
            base = batch.base_offset
            tp = batch.tp
            for n in range(count):
                offset = base + first_delta + n if base >= 0 else -1
                i = first_index + n
                out[order[i] if order is not None else i] = RecordMetadata(
                    tp.topic, tp.partition, offset, stamp, ts_type
                )
        return out  # type: ignore[return-value]

    def _split_results(
        self,
        out: list[RecordMetadata | BaseException | None],
        batch: ProducerBatch,
        first_delta: int,
        count: int,
        first_index: int,
    ) -> None:
        """``results()`` for one run of records of a batch that was split (one lookup each)."""
        order = self._order
        for n in range(count):
            holder, delta = _holder(batch, first_delta + n)
            i = first_index + n
            outcome: RecordMetadata | BaseException
            if holder.error is not None:
                outcome = holder.error
            else:
                if holder.log_append_time >= 0:
                    stamp, ts_type = holder.log_append_time, TimestampType.LOG_APPEND_TIME
                else:
                    stamp, ts_type = self._timestamp, TimestampType.CREATE_TIME
                base = holder.base_offset
                outcome = RecordMetadata(
                    holder.tp.topic,
                    holder.tp.partition,
                    base + delta if base >= 0 else -1,
                    stamp,
                    ts_type,
                )
            out[order[i] if order is not None else i] = outcome

    async def wait(self) -> int:
        """Wait for every record; return how many there were, raise the first error."""
        for batch, _, _, _ in self._segments:
            if not batch.done:
                await batch.wait()
        error = self.exception()
        if error is not None:
            raise error
        return self._count

    def __await__(self) -> Generator[Any, None, int]:
        return self.wait().__await__()


class PartitionState:
    """Queued batches and sequence bookkeeping of one partition."""

    __slots__ = (
        "acked_sequence",
        "batches",
        "broker_knows",
        "in_flight",
        "next_sequence",
        "producer_epoch",
        "producer_id",
        "tp",
        "unacked",
    )

    def __init__(self, tp: TopicPartition) -> None:
        self.tp = tp
        #: Queued batches, oldest first; the last one may still be open for appends.
        self.batches: deque[ProducerBatch] = deque()
        #: Batches of this partition currently in a request.
        self.in_flight = 0
        #: Sequence for the next batch drained (idempotence only).
        self.next_sequence = 0
        #: Batches with a sequence that are not settled, in sequence order.
        self.unacked: deque[ProducerBatch] = deque()
        #: The sequence the broker expects next: the one after the last acknowledged batch.
        self.acked_sequence = 0
        #: A batch of this producer id and epoch was acknowledged here, so the broker holds
        #: our sequence state and refuses a sequence that skips ahead. Before that it has no
        #: state for us and accepts any first sequence (Kafka's ProducerStateManager).
        self.broker_knows = False
        #: The producer id and epoch the sequences above belong to. After an epoch bump a
        #: partition keeps its old ones until its batches that may have been written are
        #: settled (the broker dedupes a retry only under the id, epoch and sequence it was
        #: first sent with); new batches of the partition wait until then.
        self.producer_id = -1
        self.producer_epoch = -1


class RecordAccumulator:
    """Batches per partition, buffer accounting and the drain rules. Pure and synchronous.

    ``now`` arguments are ``time.monotonic()`` seconds (one clock on every backend: trio's
    own clock has an arbitrary offset, and reading it costs more than the record itself).
    """

    def __init__(
        self,
        *,
        max_batch_size: int = 16384,
        linger_ms: float = 5,
        buffer_memory: int = 32 * 1024 * 1024,
        compression_type: str | None = None,
        delivery_timeout_ms: float = 120_000,
        retry_backoff_ms: float = 100,
        retry_backoff_max_ms: float = 1_000,
        max_in_flight: int = 5,
        idempotent: bool = True,
        transactional: bool = False,
        rng: random.Random | None = None,
    ) -> None:
        self.max_batch_size = max_batch_size
        self.linger = linger_ms / 1000.0
        #: When a batch counts as lingered: a little before ``linger``. An event loop timer
        #: fires up to about a millisecond late (epoll rounds its timeout up to whole ms), so
        #: a batch within that distance of its deadline goes with the current wake-up rather
        #: than after one more late timer; at most a fifth of ``linger`` is given up.
        self.linger_due = self.linger - min(_LINGER_SLACK, self.linger / 5)
        self.buffer_memory = buffer_memory
        self.compression_type = compression_type
        self.delivery_timeout = delivery_timeout_ms / 1000.0
        self.retry_backoff = retry_backoff_ms / 1000.0
        self.retry_backoff_max = max(retry_backoff_max_ms, retry_backoff_ms) / 1000.0
        self.max_in_flight = max_in_flight
        self.idempotent = idempotent
        self.transactional = transactional
        self._rng = rng or random.Random()
        self._backoff = ExponentialBackoff(self.retry_backoff, self.retry_backoff_max)

        self._parts: dict[TopicPartition, PartitionState] = {}
        #: Bytes reserved by unsettled records.
        self.buffer_used = 0
        #: Every unsettled batch (queued or in flight); what ``flush`` waits for.
        self.incomplete: set[ProducerBatch] = set()
        #: Set when a batch was opened or filled: the sender should look again.
        self.wakeup_needed = False
        #: > 0 while a flush (or close) wants every batch sent regardless of linger.
        self.flushing = 0
        #: Producer id and epoch stamped on drained batches (-1 without idempotence).
        self.producer_id = -1
        self.producer_epoch = -1
        #: Rotates the partition drain starts with, so no partition starves.
        self._drain_start = 0
        #: The asyncio loop the producer runs on, None if not asyncio (or not started): new
        #: batches take it, so a task awaiting a delivery need not look it up.
        self.loop: asyncio.AbstractEventLoop | None = None
        #: Called with each batch as it settles (observability hooks); None: nobody asks.
        self.on_settle: Callable[[ProducerBatch], None] | None = None
        #: Called with each drained batch's time in the queue, in seconds (the KIP-714
        #: record.queue.time metrics), or None.
        self.on_drain: Callable[[float], None] | None = None
        #: Records acknowledged / failed so far, and failed records per error name.
        self.records_acked = 0
        self.records_failed = 0
        self.failed_by_error: dict[str, int] = {}
        #: Records of failed batches that held ``produce`` records, not yet reported by a
        #: ``flush``, and the first such failure (see ``take_unreported``).
        self.unreported_failed = 0
        self.first_unreported: BaseException | None = None
        #: Batches split because the broker refused them as too large (``split``).
        self.batch_splits = 0
        #: Partitions whose sequences are unresolved (a batch that may have been written was
        #: given up, or the broker lost our state): the next epoch bump renumbers them.
        self.unresolved: set[TopicPartition] = set()

    # -- appending -------------------------------------------------------------------------

    def has_room(self, size: int) -> bool:
        """True when ``size`` more bytes fit the buffer (an empty buffer takes anything)."""
        return self.buffer_used + size <= self.buffer_memory or self.buffer_used == 0

    def partition(self, tp: TopicPartition) -> PartitionState:
        """The state of ``tp``, created on first use (callers may cache it)."""
        ps = self._parts.get(tp)
        if ps is None:
            ps = self._parts[tp] = PartitionState(tp)
        return ps

    def append(
        self,
        tp: TopicPartition,
        timestamp: int | None,
        key: Bytes | None,
        value: Bytes | None,
        headers: list[tuple[str, bytes | None]] | None,
        size: int,
        now: float | None = None,
    ) -> Delivery:
        """Add a record to ``tp``'s open batch; see :meth:`append_to`."""
        return self.append_to(self.partition(tp), timestamp, key, value, headers, size, now)

    def append_to(
        self,
        ps: PartitionState,
        timestamp: int | None,
        key: Bytes | None,
        value: Bytes | None,
        headers: list[tuple[str, bytes | None]] | None,
        size: int,
        now: float | None = None,
    ) -> Delivery:
        """Add a record to ``ps``'s open batch (opening one if needed) and return its handle.

        ``timestamp`` None means now (milliseconds since the epoch); ``now`` is the monotonic
        time a new batch is created at (read here when None, and only if a batch is opened).
        ``size`` is the estimate from :func:`record_size`, reserved from ``buffer_memory``
        until the batch settles. The caller checked ``has_room`` and ``max_request_size``.
        The record's bytes and its ``Delivery`` are made in one call into the C fast path
        (``fastpath.append_record``; a pure-Python twin without it).
        """
        batches = ps.batches
        if batches:
            batch = batches[-1]
            delivery: Delivery | None = append_record(
                batch, timestamp, key, value, headers, size, Delivery
            )
            if delivery is not None:
                self.buffer_used += size
                return delivery
            # Full (or closed already): it is ready to go, and the sender should notice.
            batch.closed = True
        batch = self._open_batch(ps, _monotonic() if now is None else now)
        try:
            delivery = append_record(batch, timestamp, key, value, headers, size, Delivery)
        except BaseException:
            # A record the writer refuses (say, a header key that is not a str) must not
            # leave an empty batch behind: the sender cannot build one.
            ps.batches.pop()
            self.incomplete.discard(batch)
            raise
        if delivery is None:  # pragma: no cover - the builder's contract: the first record fits
            raise AssertionError("BatchBuilder refused the first record of a batch")
        self.buffer_used += size
        return delivery

    def _open_batch(self, ps: PartitionState, now: float) -> ProducerBatch:
        batch = ProducerBatch(
            ps.tp,
            BatchBuilder(
                self.compression_type,
                batch_size_limit=self.max_batch_size,
                is_transactional=self.transactional,
            ),
            now,
        )
        batch.loop = self.loop
        ps.batches.append(batch)
        self.incomplete.add(batch)
        self.wakeup_needed = True
        return batch

    def append_many_to(
        self,
        ps: PartitionState,
        timestamp: int,
        keys: Sequence[Bytes | None] | None,
        values: Sequence[Bytes | None],
        headers: list[tuple[str, bytes | None]] | None,
        now: float,
        segments: list[Segment],
        index_base: int = 0,
    ) -> int:
        """Append ``values`` (with ``keys[i]`` when given) to ``ps``, in order.

        Appends one ``(batch, first offset delta, count, first index)`` run per batch touched
        to ``segments`` (indexes count from ``index_base``) and returns the bytes reserved.
        Values must be bytes or None (the caller checked types, sizes and buffer room). One
        Python loop, no per-record objects: the bulk path of ``Producer.enqueue_many``.
        """
        batches = ps.batches
        batch = batches[-1] if batches else None
        if batch is None or batch.closed or batch.writer is None:
            batch = self._open_batch(ps, now)
        append = batch.writer.append
        first_delta = -1
        first_index = 0
        count = 0
        total = 0
        run_bytes = 0
        for i, value in enumerate(values):
            key = keys[i] if keys is not None else None
            size = RECORD_OVERHEAD + (0 if value is None else len(value))
            if key is not None:
                size += len(key)
            delta = append(timestamp, key, value, headers)
            if delta is None:
                batch.closed = True
                if count:
                    segments.append((batch, first_delta, count, first_index))
                    batch.record_count += count
                    batch.reserved += run_bytes
                batch = self._open_batch(ps, now)
                append = batch.writer.append
                count = 0
                run_bytes = 0
                delta = append(timestamp, key, value, headers)
                if delta is None:  # pragma: no cover - the first record always fits
                    raise AssertionError("BatchBuilder refused the first record of a batch")
            if count == 0:
                first_delta = delta
                first_index = index_base + i
            count += 1
            run_bytes += size
            total += size
        if count:
            segments.append((batch, first_delta, count, first_index))
            batch.record_count += count
            batch.reserved += run_bytes
        self.buffer_used += total
        return total

    # -- deciding what to send -------------------------------------------------------------

    def _head_sendable(self, ps: PartitionState, batch: ProducerBatch, now: float) -> bool:
        """May ``batch`` (the head of ``ps``) be drained now, ordering-wise?"""
        if batch.attempts and batch.retry_at > now:
            return False
        if not self.idempotent:
            return ps.in_flight == 0
        if batch.base_sequence >= 0:
            if batch.attempts == 0 and batch.parent is not None:
                return self._piece_sendable(ps, batch)
            # A retry goes out only as the oldest unacknowledged batch of its partition.
            return bool(ps.unacked) and ps.unacked[0] is batch
        if ps.unacked and (
            ps.producer_id != self.producer_id or ps.producer_epoch != self.producer_epoch
        ):
            # The partition still settles batches of an older epoch: a new batch can only
            # start the new epoch's sequences once those are resolved.
            return False
        if not ps.broker_knows:
            # The broker has no sequence state for this producer id and epoch here yet and
            # takes *any* first sequence: were the first batch refused (a topic still being
            # created, a leader moving) while the next one is in flight, that one would be
            # written first and the refused batch refused for ever after, out of order. So
            # the first batch goes alone; pipelining starts once it is acknowledged.
            return ps.in_flight == 0
        return ps.in_flight < self.max_in_flight

    def _piece_sendable(self, ps: PartitionState, batch: ProducerBatch) -> bool:
        """A piece of a split batch, never sent yet, is pipelined like a new batch: it may go
        once every unacknowledged batch ahead of it is in flight (if one of those fails, the
        broker answers this one OUT_OF_ORDER_SEQUENCE_NUMBER and it queues up behind it).

        That holds only once the broker knows our sequences on the partition: with no batch
        of this producer id and epoch written yet, the broker accepts any first sequence, so
        a later piece arriving while the earlier ones are refused again would be written
        ahead of them and every earlier sequence refused for good. Until then pieces go one
        at a time, as the oldest unacknowledged batch (the Java client sends every batch
        that already has a sequence that way).
        """
        if ps.in_flight >= self.max_in_flight:
            return False
        if not ps.broker_knows:
            return ps.in_flight == 0 and bool(ps.unacked) and ps.unacked[0] is batch
        for other in ps.unacked:
            if other is batch:
                return True
            if not other.in_flight:
                return False
        return False

    def ready(
        self, leader_for: Callable[[TopicPartition], int | None], now: float
    ) -> tuple[set[int], float | None, list[TopicPartition]]:
        """Brokers with a sendable batch, seconds until the next batch may become sendable
        (None: nothing pending), and partitions whose leader is unknown."""
        nodes: set[int] = set()
        unknown: list[TopicPartition] = []
        next_delay: float | None = None
        linger = self.linger_due
        urgent = self.flushing > 0 or self.buffer_used >= self.buffer_memory
        for tp, ps in self._parts.items():
            batches = ps.batches
            if not batches:
                continue
            head = batches[0]
            leader = leader_for(tp)
            if leader is None or leader < 0:
                unknown.append(tp)
                continue
            if leader in nodes:
                continue
            if head.attempts:
                wait = head.retry_at - now
            elif urgent or head.closed or len(batches) > 1:
                wait = 0.0
            else:
                wait = head.created + linger - now
            if wait > 0:
                if next_delay is None or wait < next_delay:
                    next_delay = wait
                continue
            if self._head_sendable(ps, head, now):
                nodes.add(leader)
        return nodes, next_delay, unknown

    def drain(
        self,
        node_id: int,
        leader_for: Callable[[TopicPartition], int | None],
        max_request_size: int,
        now: float,
        can_send: Callable[[TopicPartition], bool] | None = None,
    ) -> list[ProducerBatch]:
        """Take at most one batch per partition led by ``node_id`` for one Produce request.

        The first batch is taken even when it alone exceeds ``max_request_size`` (a record
        fitting it was checked at append). Sequence numbers are stamped here, not at append,
        so a batch that never leaves does not burn a sequence.
        """
        out: list[ProducerBatch] = []
        total = 0
        parts = list(self._parts.values())
        n = len(parts)
        if n == 0:
            return out
        start = self._drain_start % n
        self._drain_start = start + 1
        linger = self.linger_due
        urgent = self.flushing > 0 or self.buffer_used >= self.buffer_memory
        on_drain = self.on_drain
        for i in range(n):
            ps = parts[(start + i) % n]
            batches = ps.batches
            if not batches:
                continue
            head = batches[0]
            if leader_for(ps.tp) != node_id:
                continue
            if not (
                head.attempts
                or urgent
                or head.closed
                or len(batches) > 1
                or head.created + linger <= now
            ):
                continue
            if not self._head_sendable(ps, head, now):
                continue
            if can_send is not None and not can_send(ps.tp):
                continue
            size = head.size
            if out and total + size > max_request_size:
                break
            total += size
            batches.popleft()
            head.closed = True
            head.in_flight = True
            ps.in_flight += 1
            head.sequence_reset = False
            if self.idempotent and head.base_sequence < 0:
                if ps.producer_id != self.producer_id or ps.producer_epoch != self.producer_epoch:
                    # Nothing of the old epoch is unsettled (``_head_sendable``): start over.
                    self._restart_sequences(ps)
                head.producer_id = self.producer_id
                head.producer_epoch = self.producer_epoch
                head.base_sequence = ps.next_sequence
                ps.next_sequence = (ps.next_sequence + head.record_count) % _SEQ_MODULUS
                ps.unacked.append(head)
            out.append(head)
            if on_drain is not None:
                on_drain(now - head.created)
        return out

    # -- settling --------------------------------------------------------------------------

    def _release(self, batch: ProducerBatch) -> None:
        ps = self._parts[batch.tp]
        if batch.in_flight:
            ps.in_flight -= 1
        if batch.base_sequence >= 0 and ps.unacked:
            if ps.unacked[0] is batch:
                ps.unacked.popleft()
            else:
                try:
                    ps.unacked.remove(batch)
                except ValueError:
                    pass
        self.buffer_used -= batch.reserved
        batch.reserved = 0
        self.incomplete.discard(batch)

    def complete(self, batch: ProducerBatch, base_offset: int, log_append_time: int = -1) -> None:
        """The broker wrote ``batch`` at ``base_offset``: settle its records."""
        if batch.done:
            return
        if batch.base_sequence >= 0:
            ps = self._parts[batch.tp]
            after = (batch.base_sequence + batch.record_count) % _SEQ_MODULUS
            # Answers can come back out of order (a leader moved between requests): the
            # expected sequence only ever moves forward.
            if _seq_after(after, ps.acked_sequence):
                ps.acked_sequence = after
            ps.broker_knows = True
        self._release(batch)
        batch.base_offset = base_offset
        batch.log_append_time = log_append_time
        self.records_acked += batch.record_count
        if self.on_settle is not None:
            self.on_settle(batch)
        batch.settle()

    def fail(self, batch: ProducerBatch, error: BaseException, *, unwritten: bool = False) -> None:
        """Settle every record of ``batch`` with ``error`` (queued or in flight).

        ``unwritten=True`` says the broker certainly did not write the batch (it answered
        with an error that rejects it). The broker then still expects the batch's sequence,
        so the later batches of the partition are renumbered to close the gap (the Java
        client's ``adjustSequencesDueToFailedBatch``): none of them can have been written,
        since the broker takes a partition's sequences only in order.
        """
        if batch.done:
            return
        ps = self._parts.get(batch.tp)
        if ps is not None and not batch.in_flight:
            try:
                ps.batches.remove(batch)
            except ValueError:
                pass
        self._release(batch)
        if unwritten and ps is not None and batch.base_sequence >= 0:
            self._close_sequence_gap(ps, batch)
        batch.error = error
        self.records_failed += batch.record_count
        if batch.report_at_flush:
            self.unreported_failed += batch.record_count
            if self.first_unreported is None:
                self.first_unreported = error
        name = error_name(error)
        self.failed_by_error[name] = self.failed_by_error.get(name, 0) + batch.record_count
        if self.on_settle is not None:
            self.on_settle(batch)
        batch.settle()

    def take_unreported(self) -> tuple[int, BaseException | None]:
        """The failed ``produce`` records counted since the last call, and the first error;
        the count starts again at zero."""
        taken = (self.unreported_failed, self.first_unreported)
        self.unreported_failed = 0
        self.first_unreported = None
        return taken

    def _close_sequence_gap(self, ps: PartitionState, failed: ProducerBatch) -> None:
        if failed.producer_id != ps.producer_id or failed.producer_epoch != ps.producer_epoch:
            return
        count = failed.record_count
        for other in ps.unacked:
            if _seq_after(other.base_sequence, failed.base_sequence):
                other.base_sequence = (other.base_sequence - count) % _SEQ_MODULUS
                if other.in_flight:
                    other.sequence_reset = True
        ps.next_sequence = (ps.next_sequence - count) % _SEQ_MODULUS

    def split(self, batch: ProducerBatch, error: BaseException) -> tuple[ProducerBatch, ...]:
        """The broker refused ``batch`` as too large (MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE):
        put its records back, in order, as smaller batches at the front of its partition.

        The caller checked that ``batch`` holds more than one record. Each new batch takes at
        most about half of ``batch``'s bytes, so a batch still too large is split again on
        its next refusal, down to single records (which then fail with the broker's error).
        Every record keeps its ``Delivery``: ``batch`` settles once all the new batches have,
        and each record's outcome is read from the batch now holding it.

        The broker did not write ``batch``, so it still expects ``batch``'s first sequence
        next. The new batches take ``batch``'s producer id, epoch and sequence range, in
        order (as the Java client's ``splitAndReenqueue`` does): the first of them carries
        exactly the expected sequence, and the partition's later batches keep theirs, which
        follow the range. No renumbering and no epoch bump is needed; those later batches,
        if they were in flight, come back OUT_OF_ORDER_SEQUENCE_NUMBER and are retried
        behind the new ones.
        """
        if batch.builder is None or batch.record_count < 2:
            raise ValueError(f"{batch!r} cannot be split (settled, or a single record)")
        ps = self._parts[batch.tp]
        size = batch.builder.size_in_bytes
        # Our own batch: its records' uncompressed size is known, and no cap may refuse it.
        records = list(
            next(decode_batches(batch.build(), max_decompressed_size=max(size, 1))).records()
        )
        limit = HEADER_SIZE + max(1, (size - HEADER_SIZE + 1) // 2)
        pieces = split_records(records, limit, self.compression_type, self.transactional)

        children: list[ProducerBatch] = []
        first = 0
        reserved_left = batch.reserved
        for builder, count in pieces:
            child = ProducerBatch(batch.tp, builder, batch.created)
            child.loop = batch.loop
            child.report_at_flush = batch.report_at_flush
            child.closed = True
            child.record_count = count
            child.parent = batch
            child.split_delta = first
            if len(children) == len(pieces) - 1:
                child.reserved = reserved_left
            else:
                share = 0
                for rec in records[first : first + count]:
                    share += record_size(rec.key, rec.value, rec.headers)
                child.reserved = min(share, reserved_left)
                reserved_left -= child.reserved
            first += count
            children.append(child)

        if batch.in_flight:
            ps.in_flight -= 1
        else:
            try:
                ps.batches.remove(batch)
            except ValueError:
                pass
        index = 0
        if batch.base_sequence >= 0 and batch in ps.unacked:
            sequence = batch.base_sequence
            for child in children:
                child.producer_id = batch.producer_id
                child.producer_epoch = batch.producer_epoch
                child.base_sequence = sequence
                sequence = (sequence + child.record_count) % _SEQ_MODULUS
            unacked = list(ps.unacked)
            at = unacked.index(batch)
            unacked[at : at + 1] = children
            ps.unacked = deque(unacked)
            # Ahead of everything queued except earlier retries (same rule as ``reenqueue``).
            for other in ps.batches:
                if other.base_sequence < 0 or _seq_after(other.base_sequence, batch.base_sequence):
                    break
                index += 1
        for child in reversed(children):
            ps.batches.insert(index, child)

        self.incomplete.discard(batch)
        self.incomplete.update(children)
        batch.reserved = 0
        batch.in_flight = False
        batch.builder = None
        batch.writer = None
        batch.payload = None
        batch.error = error
        batch.children = tuple(children)
        batch.pending_children = len(children)
        self.batch_splits += 1
        return batch.children

    def sequence_unresolved(self, tp: TopicPartition) -> None:
        """A batch of ``tp`` that may have been written was given up, or the broker lost the
        producer's state there: the next epoch bump renumbers the partition."""
        self.unresolved.add(tp)

    def backoff(self, attempts: int) -> float:
        """The delay before the ``attempts``-th retry, in seconds: the library's one backoff
        (:class:`~kafka_async.net.backoff.ExponentialBackoff`, +-20% jitter, capped at
        ``retry_backoff_max_ms``)."""
        return self._backoff.delay(max(attempts, 1), self._rng.random)

    def reenqueue(
        self,
        batch: ProducerBatch,
        now: float,
        error: BaseException | None = None,
        *,
        backoff: bool = True,
    ) -> None:
        """Put an in-flight batch back for a retry, at the front of its partition (``error``:
        why the attempt failed, kept as the cause should the batch expire before a retry
        succeeds).

        Batches that carry a sequence go in sequence order ahead of any batch without one, so
        a partition's order survives several failed requests coming back in any order.
        ``backoff=False``: retry at once (the partition's new leader is known, KIP-951).
        """
        ps = self._parts[batch.tp]
        if batch.in_flight:
            ps.in_flight -= 1
            batch.in_flight = False
        batch.attempts += 1
        if error is not None:
            batch.last_error = error
        batch.retry_at = now + self.backoff(batch.attempts) if backoff else now
        batches = ps.batches
        index = 0
        if batch.base_sequence >= 0:
            for other in batches:
                if other.base_sequence < 0 or _seq_after(other.base_sequence, batch.base_sequence):
                    break
                index += 1
        batches.insert(index, batch)

    def expire(self, now: float) -> tuple[list[ProducerBatch], bool]:
        """Fail queued batches older than ``delivery_timeout_ms``.

        Returns them and whether one of them had been sent before: its sequence is then
        unresolved (the broker may or may not have written it), which needs an epoch bump
        before that partition can go on.
        """
        expired: list[ProducerBatch] = []
        unresolved = False
        deadline = now - self.delivery_timeout
        for ps in self._parts.values():
            while ps.batches and ps.batches[0].created <= deadline:
                batch = ps.batches[0]
                if batch.base_sequence >= 0:
                    unresolved = True
                    self.unresolved.add(ps.tp)
                expired.append(batch)
                self.fail(batch, self.timed_out(batch, batch.last_error))
        return expired, unresolved

    def timed_out(self, batch: ProducerBatch, last: BaseException | None) -> KafkaTimeoutError:
        """The error of a batch not acknowledged within ``delivery_timeout_ms``; ``last`` (the
        broker's typed reason, NotEnoughReplicasError, ...) is its ``__cause__``."""
        error = KafkaTimeoutError(
            f"{batch.record_count} record(s) for {batch.tp.topic}-"
            f"{batch.tp.partition} expired: not acknowledged within "
            f"delivery_timeout_ms={self.delivery_timeout * 1000:.0f}"
            + (f" (last error: {last!r})" if last else "")
            + (
                "; an earlier attempt's outcome is unknown: they may be in the log"
                if batch.maybe_written
                else ""
            )
        )
        error.__cause__ = last
        return error

    def next_expiry(self) -> float | None:
        """When the oldest queued batch expires (monotonic seconds), None if none is queued."""
        oldest: float | None = None
        for ps in self._parts.values():
            if ps.batches:
                created = ps.batches[0].created
                if oldest is None or created < oldest:
                    oldest = created
        return None if oldest is None else oldest + self.delivery_timeout

    def fail_all_queued(self, error: BaseException) -> int:
        """Fail every queued (not in-flight) batch with ``error``; returns how many."""
        count = 0
        for ps in self._parts.values():
            while ps.batches:
                self.fail(ps.batches[0], error)
                count += 1
        return count

    def fail_queued_for(self, tps: Iterable[TopicPartition], error: BaseException) -> int:
        """Fail the queued batches of some partitions (a topic that never appeared)."""
        count = 0
        for tp in tps:
            ps = self._parts.get(tp)
            while ps is not None and ps.batches:
                self.fail(ps.batches[0], error)
                count += 1
        return count

    # -- idempotence -----------------------------------------------------------------------

    def has_in_flight(self) -> bool:
        """True while any batch is in a request."""
        return any(ps.in_flight for ps in self._parts.values())

    def reset_sequences(self, producer_id: int, producer_epoch: int) -> None:
        """A new producer id or epoch: partitions start again at sequence 0 under it.

        Called with nothing in flight. Partitions with no sequenced batch left, and the
        unresolved ones (``sequence_unresolved``; the reason for the bump), start over now:
        their queued retries lose their old sequence and get a new one when drained, in the
        order they are queued, which is their old sequence order. Any other partition keeps
        its old id, epoch and sequences until its sequenced batches are settled: a queued
        retry there may have been written by an attempt whose answer was lost, and only a
        resend under the same id, epoch and sequence lets the broker drop the duplicate.
        """
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        for ps in self._parts.values():
            if not ps.unacked or ps.tp in self.unresolved:
                self._restart_sequences(ps)
        self.unresolved.clear()

    def _restart_sequences(self, ps: PartitionState) -> None:
        ps.producer_id = self.producer_id
        ps.producer_epoch = self.producer_epoch
        ps.next_sequence = 0
        ps.acked_sequence = 0
        ps.broker_knows = False
        ps.unacked.clear()
        for batch in ps.batches:
            batch.base_sequence = -1
            batch.producer_id = -1
            batch.producer_epoch = -1

    # -- introspection ---------------------------------------------------------------------

    @property
    def queued_batches(self) -> int:
        """Batches waiting to be sent (including open ones)."""
        return sum(len(ps.batches) for ps in self._parts.values())

    @property
    def in_flight_batches(self) -> int:
        """Batches currently in a request."""
        return sum(ps.in_flight for ps in self._parts.values())

    def partition_state(self, tp: TopicPartition) -> PartitionState | None:
        """The bookkeeping of one partition (for tests and statistics)."""
        return self._parts.get(tp)

    def statistics(self) -> dict[str, Any]:
        """A snapshot of the accumulator's state, for ``Producer.statistics()``."""
        return {
            "buffer_used": self.buffer_used,
            "buffer_memory": self.buffer_memory,
            "buffered_records": sum(b.record_count for b in self.incomplete),
            "records_acked": self.records_acked,
            "records_failed": self.records_failed,
            "records_failed_unreported": self.unreported_failed,
            "records_failed_by_error": dict(self.failed_by_error),
            "batch_splits": self.batch_splits,
            "queued_batches": self.queued_batches,
            "in_flight_batches": self.in_flight_batches,
            "incomplete_batches": len(self.incomplete),
            "flushing": self.flushing > 0,
            "partitions": len(self._parts),
        }


def split_records(
    records: Sequence[Record],
    limit: int,
    compression_type: str | None = None,
    transactional: bool = False,
) -> list[tuple[BatchBuilder, int]]:
    """Pack ``records`` (two or more), in order, into new batches: ``(builder, count)`` each.

    Each batch stays within ``limit`` bytes (header and uncompressed records, as
    ``BatchBuilder.size_in_bytes`` counts them) unless a single record alone exceeds it.
    There are always at least two batches: when everything would fit one, the records are
    cut in two halves by count instead, so a split always makes progress.
    """
    if len(records) < 2:
        raise ValueError("a batch of fewer than two records cannot be split")
    limit = max(limit, HEADER_SIZE + 1)
    pieces: list[tuple[BatchBuilder, int]] = []
    builder: BatchBuilder | None = None
    count = 0
    for rec in records:
        headers = rec.headers or None
        if (
            builder is not None
            and builder.append(rec.timestamp, rec.key, rec.value, headers) is not None
        ):
            count += 1
            continue
        if builder is not None:
            pieces.append((builder, count))
        builder = BatchBuilder(
            compression_type, batch_size_limit=limit, is_transactional=transactional
        )
        builder.append(rec.timestamp, rec.key, rec.value, headers)
        count = 1
    assert builder is not None
    pieces.append((builder, count))
    if len(pieces) > 1:
        return pieces
    half = len(records) // 2
    return [
        _packed(records[:half], compression_type, transactional),
        _packed(records[half:], compression_type, transactional),
    ]


def _packed(
    records: Sequence[Record], compression_type: str | None, transactional: bool
) -> tuple[BatchBuilder, int]:
    builder = BatchBuilder(
        compression_type, batch_size_limit=_SEQ_MODULUS - 1, is_transactional=transactional
    )
    for rec in records:
        builder.append(rec.timestamp, rec.key, rec.value, rec.headers or None)
    return builder, len(records)


def error_name(error: BaseException) -> str:
    """How statistics name an error: Kafka's name for a broker error code
    (``NOT_LEADER_OR_FOLLOWER``), the class name for anything else (``KafkaTimeoutError``)."""
    if isinstance(error, BrokerResponseError):
        return error.name
    return type(error).__name__


def _seq_after(a: int, b: int) -> bool:
    """True when sequence ``a`` comes after ``b``, allowing for the wrap at 2**31."""
    return 0 < (a - b) % _SEQ_MODULUS < _SEQ_MODULUS // 2
