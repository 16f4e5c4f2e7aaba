"""The fetcher: one Fetch loop per leader broker, a bounded buffer, lazy decoding.

Life of fetched bytes
---------------------
1. ``Fetcher.run`` (a task in the consumer's task group) groups the fetchable partitions by
   leader and keeps one ``_node_loop`` task per leader broker.
2. A node loop asks its broker for every partition it leads that is not paused and whose
   buffered bytes are under ``max_partition_fetch_bytes``, as long as the whole buffer is
   under ``fetch_max_bytes``. Requests go on the ``"fetch"`` connection (a Fetch may wait
   ``fetch_max_wait_ms`` on the broker, and must not hold up short requests). The next Fetch
   leaves as soon as the previous response is filed, while the application is still working
   through it: that is the pipelining. Within a KIP-227 session requests are sequential by
   definition (each carries the previous epoch + 1).
3. Each partition's records bytes become a ``CompletedFetch`` in the buffer, undecoded. The
   next fetch offset is read from the batch headers alone (a walk over length fields), so
   prefetching never decodes records.
4. ``drain`` (called by ``getmany``/``async for``) decodes one batch at a time
   (``records.decode_batches``, CRC-checked when ``check_crcs``), skips control batches and,
   under read_committed, batches of aborted transactions, and hands out records from the
   partition's ``position`` on, moving ``position`` as it goes.

Versions and topic ids: the highest Fetch version both sides support is used, up to v17.
From v13 on requests and answers name topics by id (KIP-516; the ids come from Metadata v10+):
the request's plan keeps name -> id, and the answer's topics are read back through it. A
request with a topic whose id is not known (Metadata older than v10) uses v12, by name.
UNKNOWN_TOPIC_ID and INCONSISTENT_TOPIC_ID (the topic was deleted, or recreated under a new
id) ask for new metadata. A topic recreated under the same name has a new id; a position
fetched under the old id belongs to a log that no longer exists, so the partition is reset to
the new topic's beginning (or the application is told, under ``auto_offset_reset="none"``).

New leaders (KIP-951): a Fetch v16+ answer of NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH
names the partition's current leader, and the answer's node endpoints its address; they go
into the metadata at once (``ClusterClient.apply_leader_hints``), so the next fetch goes to
the new leader without a metadata round trip first (``leader_hints`` in the statistics).

Staleness: every ``CompletedFetch`` carries the partition's epoch at request time and its
fetch offset; data whose epoch changed (seek, reset, reassignment) or whose offset no longer
matches the position is dropped, never handed out.
"""

from __future__ import annotations

import bisect
import heapq
import logging
import operator
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.abc

from ..cluster.client import ClusterClient
from ..cluster.metadata import ClusterMetadata
from ..errors import (
    INVALID_METADATA_CODES,
    CorruptRecordError,
    FencedLeaderEpochError,
    FetchSessionIdNotFoundError,
    FetchSessionTopicIdError,
    IncompatibleBrokerVersionError,
    InvalidFetchSessionEpochError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    MessageTooLargeError,
    NotLeaderOrFollowerError,
    OffsetOutOfRangeError,
    RecordDeserializationError,
    TopicAuthorizationFailedError,
    error_for_code,
)
from ..protocol.apis import FETCH
from ..protocol.apis.fetch import (
    FetchPartition,
    FetchRequest,
    FetchTopic,
    ForgottenTopic,
    PartitionData,
)
from ..records.batch import RecordBatch, consumer_records_for, decode_batches
from ..serialization import Deserializer as _ContextDeserializer
from ..serialization import MessageField, deserialize
from ..structs import ConsumerRecord, TopicPartition
from ._signal import Signal, wait_any
from .config import ConsumerConfig
from .errors import LogTruncationError
from .fetch_session import FetchPlan, FetchSession, PartitionFetch
from .positions import EARLIEST, SubscriptionState

log = logging.getLogger(__name__)

# Partition error codes the fetcher handles itself.
_NONE = 0
_OFFSET_OUT_OF_RANGE = OffsetOutOfRangeError.code
#: Session errors: the next request is a full one, sent at once.
_SESSION_ERRORS = (
    FetchSessionIdNotFoundError.code,
    InvalidFetchSessionEpochError.code,
    # The session is by id and the request by name, or the other way round.
    FetchSessionTopicIdError.code,
)
#: Errors after which the partition's leader must be looked up again (errors.py's flags).
_METADATA_ERRORS = INVALID_METADATA_CODES
#: Errors whose answer names the current leader (KIP-951, Fetch v16+).
_LEADER_MOVED = (NotLeaderOrFollowerError.code, FencedLeaderEpochError.code)
#: The highest Fetch version we speak (Kafka 4.x clients' too).
MAX_FETCH_VERSION = 17
#: Fetch v13+ names topics by id; up to v12 by name (a topic without a known id).
MAX_FETCH_VERSION_BY_NAME = 12
#: The first version whose answers carry the new leader's address (node_endpoints).
_FIRST_NODE_ENDPOINTS_VERSION = 16

_LOG_OVERHEAD = 12


def next_fetch_offset(data: bytes | memoryview, start: int) -> int:
    """The offset after the last complete batch in ``data`` (``start`` if there is none).

    Reads only the fixed header fields, so prefetching costs no decoding. A truncated last
    batch is ignored, as ``decode_batches`` does.
    """
    return next_fetch_position(data, start)[0]


def next_fetch_position(data: bytes | memoryview, start: int) -> tuple[int, int]:
    """``next_fetch_offset`` and the leader epoch of the last complete batch (-1 when it
    has none: legacy messages, or no complete batch), the next fetch's last_fetched_epoch."""
    n = len(data)
    pos = 0
    nxt = start
    epoch = -1
    while n - pos >= _LOG_OVERHEAD:
        length = int.from_bytes(data[pos + 8 : pos + 12], "big", signed=True)
        end = pos + _LOG_OVERHEAD + length
        if length < 0 or end > n or length < 5:
            break
        base = int.from_bytes(data[pos : pos + 8], "big", signed=True)
        magic = data[pos + 16]
        if magic >= 2:
            if length < 15:
                break
            delta = int.from_bytes(data[pos + 23 : pos + 27], "big", signed=True)
            nxt = max(nxt, base + delta + 1)
            epoch = int.from_bytes(data[pos + 12 : pos + 16], "big", signed=True)
        else:
            # Legacy message (or compressed wrapper): its offset is its last inner offset.
            nxt = max(nxt, base + 1)
            epoch = -1
        pos = end
    return nxt, epoch


def _structural_damage(data: bytes, max_decompressed_size: int) -> CorruptRecordError | None:
    """The error decoding ``data`` raises before looking at any CRC or record, if any.

    Only called for records that bring no complete batch past the fetch offset (few bytes,
    or batches already consumed), so walking their headers again costs little.
    """
    try:
        for _ in decode_batches(
            data, check_crcs=False, max_decompressed_size=max_decompressed_size
        ):
            pass
    except CorruptRecordError as exc:
        return exc
    return None


@dataclass(slots=True)
class FetchedPartition:
    """Header data of one partition in a Fetch response."""

    high_watermark: int
    last_stable_offset: int
    log_start_offset: int


Deserializer = Callable[[Any], Any]
_OFFSET = operator.itemgetter(0)
#: Builds ConsumerRecords from decoded records (in C when the accelerator is built).
_consumer_records = consumer_records_for(ConsumerRecord)


def _convert(
    recs: list[Any],
    lo: int,
    hi: int,
    topic: str,
    partition: int,
    ts_type: int,
    leader_epoch: int | None,
    kd: Deserializer | None,
    vd: Deserializer | None,
) -> list[ConsumerRecord[Any, Any]]:
    """``recs[lo:hi]`` (decoded ``Record`` tuples) as ConsumerRecords: the hot path.

    Without deserializers one C call builds them (``records.consumer_records``; the records
    are then untracked by the cyclic GC, see there). With deserializers the records are built
    here, tracked as usual, since a deserialized key or value may be any object.
    """
    if kd is None and vd is None:
        return _consumer_records(
            recs, lo, hi, ConsumerRecord, topic, partition, ts_type, leader_epoch
        )
    if isinstance(kd, _ContextDeserializer) or isinstance(vd, _ContextDeserializer):
        # Context-aware deserializers (topic, key or value, headers): one record at a time.
        return [
            _convert_one(r, topic, partition, ts_type, leader_epoch, kd, vd) for r in recs[lo:hi]
        ]
    cls = ConsumerRecord
    return [
        cls(
            topic,
            partition,
            r.offset,
            r.timestamp,
            ts_type,
            r.key if kd is None else kd(r.key),
            r.value if vd is None else vd(r.value),
            list(r.headers),
            leader_epoch,
            -1 if r.key is None else len(r.key),
            -1 if r.value is None else len(r.value),
        )
        for r in recs[lo:hi]
    ]


def _convert_one(
    r: Any,
    topic: str,
    partition: int,
    ts_type: int,
    leader_epoch: int | None,
    kd: Deserializer | None,
    vd: Deserializer | None,
) -> ConsumerRecord[Any, Any]:
    """One decoded record as a ConsumerRecord, deserializing key and value one at a time so
    that a deserializer's exception becomes a ``RecordDeserializationError`` naming the
    record and which part failed. The slow path, taken once ``_convert`` has raised."""
    try:
        key = r.key if kd is None else deserialize(kd, r.key, topic, MessageField.KEY, r.headers)
    except Exception as exc:
        raise RecordDeserializationError(topic, partition, r.offset, "key", exc) from exc
    try:
        value = (
            r.value
            if vd is None
            else deserialize(vd, r.value, topic, MessageField.VALUE, r.headers)
        )
    except Exception as exc:
        raise RecordDeserializationError(topic, partition, r.offset, "value", exc) from exc
    return ConsumerRecord(
        topic,
        partition,
        r.offset,
        r.timestamp,
        ts_type,
        key,
        value,
        list(r.headers),
        leader_epoch,
        -1 if r.key is None else len(r.key),
        -1 if r.value is None else len(r.value),
    )


class CompletedFetch:
    """One partition's undecoded records from one Fetch response, consumed lazily."""

    __slots__ = (
        "_aborted_heap",
        "_aborted_pids",
        "_batch_end",
        "_batches",
        "_deferred",
        "_leader_epoch",
        "_pending",
        "_pending_at",
        "_ts_type",
        "data",
        "epoch",
        "error",
        "fetch_offset",
        "next_offset",
        "read_committed",
        "size",
        "tp",
    )

    def __init__(
        self,
        tp: TopicPartition,
        epoch: int,
        fetch_offset: int,
        data: bytes,
        next_offset: int,
        *,
        aborted: list[tuple[int, int]] | None = None,
        read_committed: bool = False,
        error: KafkaError | None = None,
    ) -> None:
        self.tp = tp
        self.epoch = epoch
        self.fetch_offset = fetch_offset
        self.data = data
        self.size = len(data)
        #: Where the next Fetch for this partition starts after this one.
        self.next_offset = next_offset
        self.error = error
        self.read_committed = read_committed
        self._aborted_heap = [(first, pid) for pid, first in (aborted or [])]
        heapq.heapify(self._aborted_heap)
        self._aborted_pids: set[int] = set()
        self._batches: Iterator[RecordBatch] | None = None
        #: Decoded records of the current batch not handed out yet.
        self._pending: list[Any] = []
        #: Index of the first record in ``_pending`` not handed out yet.
        self._pending_at = 0
        self._batch_end = fetch_offset
        self._ts_type = 0
        self._leader_epoch: int | None = None
        self._deferred: CorruptRecordError | None = None

    @property
    def started(self) -> bool:
        return self._batches is not None

    @property
    def leader_epoch(self) -> int | None:
        """The leader epoch of the batch ``take`` read last (None before v2 batches)."""
        return self._leader_epoch

    def take(
        self,
        position: int,
        limit: int,
        config: ConsumerConfig,
    ) -> tuple[list[ConsumerRecord[Any, Any]], int, bool]:
        """Up to ``limit`` records at or after ``position``.

        Returns (records, new position, exhausted). Raises ``CorruptRecordError`` (and its
        subclasses) for damaged data.
        """
        topic, partition = self.tp
        kd = config.key_deserializer
        vd = config.value_deserializer
        out: list[ConsumerRecord[Any, Any]] = []
        if self._batches is None:
            self._batches = decode_batches(
                self.data,
                check_crcs=config.check_crcs,
                max_decompressed_size=config.max_decompressed_size,
            )
        if self._deferred is not None:
            exc, self._deferred = self._deferred, None
            raise exc
        try:
            while len(out) < limit:
                pending = self._pending
                if pending:
                    n = len(pending)
                    # Offsets ascend within a batch; records before the position (a seek
                    # into the middle of a batch) are skipped.
                    lo = self._pending_at
                    if pending[lo][0] < position:
                        lo = bisect.bisect_left(pending, position, lo, n, key=_OFFSET)
                    hi = min(n, lo + limit - len(out))
                    if lo < hi:
                        # Converted before they leave ``pending``: a deserializer that raises
                        # loses nothing, and raises again at the same record.
                        try:
                            out += _convert(
                                pending,
                                lo,
                                hi,
                                topic,
                                partition,
                                self._ts_type,
                                self._leader_epoch,
                                kd,
                                vd,
                            )
                        except Exception:
                            # Hand out the records before the bad one; it raises next call
                            # (as a RecordDeserializationError naming it), and the position
                            # stays at it.
                            for i in range(lo, hi):
                                out.append(
                                    _convert_one(
                                        pending[i],
                                        topic,
                                        partition,
                                        self._ts_type,
                                        self._leader_epoch,
                                        kd,
                                        vd,
                                    )
                                )
                                position = pending[i][0] + 1
                        position = pending[hi - 1][0] + 1
                    self._pending_at = hi
                    if hi >= n:
                        self._pending = []
                        self._pending_at = 0
                        # Offsets inside a batch may have gaps (compaction): the batch's end is
                        # where consumption continues.
                        position = max(position, self._batch_end)
                    continue
                batch = next(self._batches, None)
                if batch is None:
                    return out, max(position, self.next_offset), True
                nxt = batch.next_offset
                if nxt <= position:
                    continue
                if self.read_committed and batch.producer_id >= 0:
                    heap = self._aborted_heap
                    last = batch.last_offset
                    while heap and heap[0][0] <= last:
                        self._aborted_pids.add(heapq.heappop(heap)[1])
                    if batch.is_control:
                        if any(c.is_abort for c in batch.control_records()):
                            self._aborted_pids.discard(batch.producer_id)
                    elif batch.is_transactional and batch.producer_id in self._aborted_pids:
                        position = nxt  # an aborted transaction's records are skipped
                        continue
                if batch.is_control:
                    position = nxt  # transaction markers are never shown
                    continue
                self._ts_type = batch.timestamp_type
                self._leader_epoch = (
                    batch.partition_leader_epoch
                    if batch.magic >= 2 and batch.partition_leader_epoch >= 0
                    else None
                )
                self._batch_end = nxt
                recs = batch.records()
                if not recs:
                    position = nxt
                else:
                    self._pending = recs
                    self._pending_at = 0

        except Exception as exc:
            if not out:
                raise
            # Hand out what was decoded before the failure; the error comes next call. A
            # corrupt batch cannot be decoded again, so that error is kept; a deserializer
            # error recurs by itself (its records were not consumed).
            if isinstance(exc, CorruptRecordError):
                self._deferred = exc
            return out, position, False
        return out, position, False


class Fetcher:
    """Fetch loops per broker plus the buffer ``getmany`` drains."""

    def __init__(
        self,
        client: ClusterClient,
        subscriptions: SubscriptionState,
        config: ConsumerConfig,
        changed: Signal,
    ) -> None:
        self._client = client
        self._subs = subscriptions
        self._config = config
        #: Notified when fetchable state changes (seek, assign, resume, data consumed).
        self._changed = changed
        #: Notified when data (or an error) lands in the buffer.
        self.data_ready = Signal()
        self._buffer: deque[CompletedFetch] = deque()
        self._buffered_bytes: dict[TopicPartition, int] = {}
        self._total_bytes = 0
        #: Where the next fetch of a partition starts when it runs ahead of the position:
        #: (partition epoch, offset, leader epoch of the last batch fetched).
        self._fetch_offsets: dict[TopicPartition, tuple[int, int, int]] = {}
        self._loops: dict[int, FetchSession] = {}
        self._in_flight: dict[TopicPartition, int] = {}
        # statistics
        self.fetch_requests = 0
        self.fetch_errors = 0
        #: Responses whose records held no complete batch past the fetch offset.
        self.fetch_stalls = 0
        #: Truncations found (KIP-320): Fetch answers with a diverging epoch, and position
        #: validations whose leader's log ends below the position.
        self.truncations = 0
        #: Positions put to validation after a leader change (KIP-320).
        self.validations = 0
        #: KIP-392: partition -> (replica to fetch from, until when), as the leader said.
        self._preferred: dict[TopicPartition, tuple[int, float]] = {}
        #: Fetch requests sent, by node id.
        self.fetches_by_node: dict[int, int] = {}
        #: Fetch requests sent, by version.
        self.fetches_by_version: dict[int, int] = {}
        #: Partitions whose new leader a Fetch answer named and that moved to it (KIP-951).
        self.leader_hints = 0
        #: Partitions reset because their topic was deleted and recreated (a new topic id).
        self.recreated_topics = 0
        #: Per partition, (partition epoch, topic id) of the position's last fetch: the log
        #: the position belongs to.
        self._fetched_ids: dict[TopicPartition, tuple[int, uuid.UUID]] = {}
        self._stalled = False
        self.bytes_fetched = 0
        self.records_returned = 0
        self.last_fetch_latency_ms = 0.0

    # -- buffer ------------------------------------------------------------------------------

    @property
    def buffered_bytes(self) -> int:
        return self._total_bytes

    def has_data(self) -> bool:
        return bool(self._buffer)

    def _add(self, cf: CompletedFetch) -> None:
        self._buffer.append(cf)
        self._buffered_bytes[cf.tp] = self._buffered_bytes.get(cf.tp, 0) + cf.size
        self._total_bytes += cf.size

    def _release(self, cf: CompletedFetch) -> None:
        left = self._buffered_bytes.get(cf.tp, 0) - cf.size
        if left > 0:
            self._buffered_bytes[cf.tp] = left
        else:
            self._buffered_bytes.pop(cf.tp, None)
        self._total_bytes -= cf.size
        cf.size = 0
        self._changed.notify()

    def discard(self, tps: set[TopicPartition] | None = None) -> None:
        """Drop buffered data (of ``tps``, or all): after seek, revoke or unsubscribe."""
        keep: deque[CompletedFetch] = deque()
        for cf in self._buffer:
            if tps is None or cf.tp in tps:
                self._release(cf)
            else:
                keep.append(cf)
        self._buffer = keep
        for tp in list(self._fetch_offsets) if tps is None else list(tps):
            self._fetch_offsets.pop(tp, None)
        if tps is None:
            self._fetched_ids.clear()
        else:
            for tp in tps:
                self._fetched_ids.pop(tp, None)

    def drain(
        self,
        max_records: int,
        only: frozenset[TopicPartition] | None = None,
        *,
        holding: bool = False,
    ) -> dict[TopicPartition, list[ConsumerRecord[Any, Any]]]:
        """Hand out up to ``max_records`` buffered records (of ``only``, if given),
        advancing positions.

        A stored error (reset "none", corrupt data, authorization) is raised once the records
        ahead of it are returned. ``holding``: the caller already holds records from an
        earlier drain for the same answer; an error then waits in the buffer for the next
        call, as it does behind this call's own records (raising would lose the held
        records, whose positions have already moved on).
        """
        out: dict[TopicPartition, list[ConsumerRecord[Any, Any]]] = {}
        budget = max_records
        assignment = self._subs.assignment
        buffer = self._buffer
        skipped: list[CompletedFetch] = []
        try:
            while buffer and budget > 0:
                cf = buffer[0]
                st = assignment.get(cf.tp)
                if st is None or st.epoch != cf.epoch or st.position is None:
                    buffer.popleft()
                    self._release(cf)
                    continue
                if st.paused or st.revoking:
                    # Kept for when the partition resumes, out of the way of the others.
                    skipped.append(buffer.popleft())
                    continue
                if only is not None and cf.tp not in only:
                    # Another partition's data or error: getmany(tp) neither returns nor
                    # raises it.
                    skipped.append(buffer.popleft())
                    continue
                if cf.error is not None:
                    if out or holding:
                        break  # hand out what we have first; the error surfaces next time
                    buffer.popleft()
                    self._release(cf)
                    self._fetch_offsets.pop(cf.tp, None)
                    raise cf.error
                if not cf.started and cf.fetch_offset != st.position:
                    # Prefetched for a position we have since left: drop it, and fetch
                    # again from the position (never leave a gap behind).
                    buffer.popleft()
                    self._release(cf)
                    self._fetch_offsets.pop(cf.tp, None)
                    continue
                if not cf.started:
                    self._changed.notify()  # its partition may be fetched again now
                try:
                    records, position, done = cf.take(st.position, budget, self._config)
                except CorruptRecordError as exc:
                    buffer.popleft()
                    self._release(cf)
                    # Refetch from the position next time (the caller may seek past it).
                    self._fetch_offsets.pop(cf.tp, None)
                    if out or holding:
                        buffer.appendleft(
                            CompletedFetch(cf.tp, cf.epoch, st.position, b"", 0, error=exc)
                        )
                        break
                    raise
                except Exception:
                    # A deserializer raised. The fetch stays where it is, so the error
                    # repeats at the same record until the application seeks past it.
                    if out or holding:
                        break
                    raise
                st.position = position
                if records:
                    # The epoch of the last record read: Fetch sends it as last_fetched_epoch
                    # and commits carry it (KIP-320).
                    if cf.leader_epoch is not None:
                        st.leader_epoch = cf.leader_epoch
                    lst = out.get(cf.tp)
                    if lst is None:
                        out[cf.tp] = records
                    else:
                        lst.extend(records)
                    budget -= len(records)
                    self.records_returned += len(records)
                if done:
                    buffer.popleft()
                    self._release(cf)
                # else: the budget ran out mid-fetch. It stays in front: moving it behind a
                # later fetch of the same partition would reorder that partition.
        finally:
            for cf in reversed(skipped):
                buffer.appendleft(cf)
        return out

    def report(self, tp: TopicPartition, error: KafkaError) -> None:
        """Hand ``error`` to the application for ``tp`` (raised by the next drain that
        reaches it), unless one already waits for it."""
        st = self._subs.assignment.get(tp)
        if st is None or st.position is None or self.error_waiting(tp):
            return
        self._add(CompletedFetch(tp, st.epoch, st.position, b"", st.position, error=error))
        self.data_ready.notify()

    def error_waiting(self, tp: TopicPartition) -> bool:
        """True while an error for ``tp`` waits in the buffer for the application."""
        return any(cf.tp == tp and cf.error is not None for cf in self._buffer)

    # -- fetching ----------------------------------------------------------------------------

    def check_leader_epochs(self) -> bool:
        """KIP-320: hold back the partitions whose leader changed since their position was
        known good, until the position is validated (the Consumer's position task sends
        OffsetForLeaderEpoch). True when some partition now awaits validation."""
        metadata = self._client.metadata
        moved = False
        for tp in list(self._subs.assignment):
            if self._subs.note_leader_epoch(tp, metadata.leader_epoch_for(tp)):
                self._fetch_offsets.pop(tp, None)
                self.validations += 1
                moved = True
        if moved:
            self._changed.notify()
        return moved

    def _fetch_offset(
        self, tp: TopicPartition, position: int, epoch: int, leader_epoch: int | None
    ) -> tuple[int, int]:
        """Where to fetch next, and the leader epoch of what was fetched before it."""
        known = self._fetch_offsets.get(tp)
        if known is None or known[0] != epoch:
            return position, -1 if leader_epoch is None else leader_epoch
        return known[1], known[2]

    def _wanted(self, node_id: int) -> tuple[dict[TopicPartition, PartitionFetch], bool]:
        """Partitions to fetch from ``node_id`` now, and whether it is worth it.

        It is not worth it when some partitions are held back by the prefetch bound and all
        the others are caught up (fetch offset at the high watermark): such a request would
        sit out ``fetch_max_wait_ms`` on the broker while the held-back partitions, drained
        meanwhile by the application, wait behind it. Better to wait for the buffer to
        drain and ask for everything together.
        """
        cfg = self._config
        self.check_leader_epochs()
        if self._total_bytes >= cfg.fetch_max_bytes:
            return {}, False
        metadata = self._client.metadata
        # Only data the application has not started on counts against the per-partition
        # bound: once it starts on a fetch, the next one may be under way (double buffering).
        waiting: dict[TopicPartition, int] = {}
        # A partition whose error waits in the buffer is not fetched until the application
        # has seen it: fetching again would only file the same error again, at once and
        # without end (a busy loop and a buffer that grows while nobody polls).
        failed: set[TopicPartition] = set()
        for cf in self._buffer:
            if cf.error is not None:
                failed.add(cf.tp)
            elif not cf.started:
                waiting[cf.tp] = waiting.get(cf.tp, 0) + cf.size
        wanted: dict[TopicPartition, PartitionFetch] = {}
        held_back = False
        caught_up = True
        fetched_ids = self._fetched_ids
        for tp, st in self._subs.assignment.items():
            if not st.has_position or st.paused or st.revoking or st.position is None:
                continue
            if self._fetch_node(tp, metadata) != node_id:
                continue
            seen = fetched_ids.get(tp)
            if seen is not None and seen[0] == st.epoch:
                info = metadata.topics.get(tp.topic)
                topic_id = None if info is None else info.topic_id
                # Identity first: the id fetched under is the metadata's own object until a
                # refresh (a UUID's == is a Python method; this runs per partition).
                if topic_id is not seen[1] and topic_id is not None and topic_id != seen[1]:
                    self._recreated(tp, st.position, seen[1], topic_id)
                    continue
            if tp in failed or waiting.get(tp, 0) >= cfg.max_partition_fetch_bytes:
                held_back = True
                continue
            offset, last_epoch = self._fetch_offset(tp, st.position, st.epoch, st.leader_epoch)
            if st.high_watermark < 0 or offset < st.high_watermark:
                caught_up = False
            # KIP-320: the current leader epoch is the metadata's (the fencing check); the
            # epoch of the last record read goes in last_fetched_epoch (the truncation check).
            # Sending the latter as the former fenced every fetch after a leader change.
            wanted[tp] = PartitionFetch(
                offset,
                cfg.max_partition_fetch_bytes,
                metadata.leader_epoch_for(tp),
                last_fetched_epoch=last_epoch,
            )
        return wanted, bool(wanted) and not (held_back and caught_up)

    def _recreated(self, tp: TopicPartition, position: int, old: uuid.UUID, new: uuid.UUID) -> None:
        """``tp``'s topic was deleted and recreated (its id changed from ``old`` to ``new``)
        since its position was fetched: the position belongs to a log that no longer
        exists. Everything in the new topic was written after that, so none of it was
        consumed: start at its beginning, whatever the reset strategy (the "latest" of
        ``auto_offset_reset`` would skip records nobody has read); under "none" tell the
        application (again after each drain, until it seeks)."""
        self._fetch_offsets.pop(tp, None)
        if self._subs.default_reset is None:
            self.report(
                tp,
                OffsetOutOfRangeError(
                    f"{tp}: the topic was deleted and recreated (topic id {old} is now "
                    f"{new}); position {position} belongs to the old topic and "
                    "auto_offset_reset is 'none'"
                ),
            )
            return
        log.info("%s: topic recreated (id %s -> %s); starting at its beginning", tp, old, new)
        self.recreated_topics += 1
        del self._fetched_ids[tp]
        self._subs.request_reset(tp, EARLIEST)
        self._changed.notify()

    def _topic_ids(
        self, wanted: Mapping[TopicPartition, PartitionFetch]
    ) -> tuple[dict[str, uuid.UUID], bool]:
        """Name -> id of the topics in ``wanted`` whose id the metadata knows, and whether
        that is all of them."""
        topics = self._client.metadata.topics
        ids: dict[str, uuid.UUID] = {}
        every = True
        last = None
        for tp in wanted:
            name = tp.topic
            if name == last or name in ids:
                continue
            last = name
            info = topics.get(name)
            if info is None or info.topic_id is None:
                every = False
            else:
                ids[name] = info.topic_id
        return ids, every

    def _fetch_node(self, tp: TopicPartition, metadata: ClusterMetadata) -> int | None:
        """The broker to fetch ``tp`` from: the replica the leader told us to read from
        (KIP-392, until ``metadata_max_age_ms`` passes or it fails us), else the leader."""
        preferred = self._preferred.get(tp)
        if preferred is not None:
            node, until = preferred
            if time.monotonic() < until and metadata.broker(node) is not None:
                return node
            del self._preferred[tp]
        return metadata.leader_for(tp)

    def _prefer(self, tp: TopicPartition, node: int) -> None:
        ttl = self._config.client.metadata_max_age_ms / 1000
        if self._preferred.get(tp, (None, 0.0))[0] != node:
            log.debug("%s: fetching from replica %s (preferred read replica)", tp, node)
        self._preferred[tp] = (node, time.monotonic() + ttl)

    def _forget_replica(self, tp: TopicPartition, node_id: int) -> bool:
        """Back to the leader for ``tp`` if we were reading it from replica ``node_id``."""
        preferred = self._preferred.get(tp)
        if preferred is None or preferred[0] != node_id:
            return False
        del self._preferred[tp]
        self._changed.notify()
        return True

    def _leaders(self) -> tuple[set[int], bool]:
        """Nodes to fetch from (leaders, or preferred read replicas); True if some leader is
        unknown."""
        self.check_leader_epochs()
        metadata = self._client.metadata
        nodes: set[int] = set()
        unknown = False
        denied = metadata.unauthorized_topics
        for tp in self._subs.fetchable():
            if tp.topic in denied:
                # Metadata refused the topic (ACLs): no leader will be known; the
                # application gets the refusal instead of an endless wait, and metadata is
                # asked again (rate-limited) so that a grant is seen soon.
                self._file_refusal(tp)
                unknown = True
                continue
            leader = self._fetch_node(tp, metadata)
            if leader is None or leader < 0:
                unknown = True
            else:
                nodes.add(leader)
        return nodes, unknown

    def _file_refusal(self, tp: TopicPartition) -> None:
        """Buffer a TopicAuthorizationFailedError for ``tp`` unless one already waits."""
        self.report(tp, TopicAuthorizationFailedError(tp.topic))

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Keep one fetch loop per leader broker; runs until cancelled."""
        backoff = self._config.client.retry_backoff_ms / 1000
        async with anyio.create_task_group() as tg:
            task_status.started()
            while True:
                event = self._changed.current()
                updated = self._client.metadata_update_event()
                nodes, unknown = self._leaders()
                if unknown:
                    self._client.request_metadata_update()
                for node in nodes:
                    if node not in self._loops:
                        self._loops[node] = FetchSession(
                            node, enabled=self._config.enable_fetch_sessions
                        )
                        tg.start_soon(self._node_loop, node)
                if unknown:
                    # A partition without a known leader: start its fetch as soon as the
                    # metadata names one (retry_backoff_ms at most between looks).
                    await wait_any((event, updated), backoff)
                else:
                    await self._changed.wait(1.0, event)

    async def _node_loop(self, node_id: int) -> None:
        session = self._loops[node_id]
        cfg = self._config
        idle_since: float | None = None
        backoff = cfg.client.retry_backoff_ms / 1000
        try:
            while True:
                event = self._changed.current()
                wanted, worth_it = self._wanted(node_id)
                if wanted and not worth_it:
                    # Look again after every change (the application starting on held-back
                    # data makes its partition wanted, and the request worth it). Sending
                    # the caught-up partitions alone right after a change would sit out
                    # fetch_max_wait_ms on the broker while the application may empty the
                    # buffer meanwhile: `async for`, which drains in small steps, stalled
                    # there for that long again and again. Only a wait that times out with
                    # nothing changed sends them (new data may have arrived for them).
                    if await self._changed.wait(cfg.fetch_max_wait_ms / 1000, event):
                        continue
                    wanted, _ = self._wanted(node_id)
                if not wanted:
                    # Nothing to ask this broker for now; exit after a while with no work so
                    # a broker that lost its leaderships does not keep a task.
                    now = time.monotonic()
                    if idle_since is None:
                        idle_since = now
                    elif now - idle_since > 30 and node_id not in self._leaders()[0]:
                        return
                    await self._changed.wait(1.0, event)
                    continue
                idle_since = None
                ok = await self._fetch_once(node_id, session, wanted)
                if not ok:
                    await anyio.sleep(backoff)
        finally:
            self._loops.pop(node_id, None)

    def _build_request(self, plan: FetchPlan) -> FetchRequest:
        """The request for ``plan``: topics by id when the plan has ids (v13+), else by
        name (the request's version must match: ``plan.by_id`` iff v13+)."""
        cfg = self._config
        topics: dict[str, list[FetchPartition]] = {}
        for tp, pf in plan.to_send.items():
            topics.setdefault(tp.topic, []).append(
                FetchPartition(
                    partition=tp.partition,
                    current_leader_epoch=pf.current_leader_epoch,
                    fetch_offset=pf.fetch_offset,
                    last_fetched_epoch=pf.last_fetched_epoch,
                    log_start_offset=pf.log_start_offset,
                    partition_max_bytes=pf.max_bytes,
                )
            )
        ids = plan.topic_ids
        if ids is None:
            fetch_topics = [FetchTopic(topic=t, partitions=ps) for t, ps in topics.items()]
            forgotten: dict[str, list[int]] = {}
            for tp in plan.to_forget:
                forgotten.setdefault(tp.topic, []).append(tp.partition)
            forget_topics = [ForgottenTopic(topic=t, partitions=ps) for t, ps in forgotten.items()]
        else:
            fetch_topics = [FetchTopic(topic_id=ids[t], partitions=ps) for t, ps in topics.items()]
            by_id: dict[uuid.UUID, list[int]] = {}
            for tp in plan.to_forget:
                by_id.setdefault(plan.forget_ids[tp], []).append(tp.partition)
            forget_topics = [ForgottenTopic(topic_id=i, partitions=ps) for i, ps in by_id.items()]
        return FetchRequest(
            max_wait_ms=cfg.fetch_max_wait_ms,
            min_bytes=cfg.fetch_min_bytes,
            max_bytes=cfg.fetch_max_bytes,
            isolation_level=cfg.isolation,
            session_id=plan.session_id,
            session_epoch=plan.epoch,
            # KIP-392: where we are, so the leader can name a replica in our rack.
            rack_id=cfg.client_rack or "",
            topics=fetch_topics,
            forgotten_topics_data=forget_topics,
        )

    def _plan(
        self, session: FetchSession, wanted: Mapping[TopicPartition, PartitionFetch], top: int
    ) -> tuple[FetchPlan, int, dict[str, uuid.UUID]]:
        """The next request of ``session`` and its version, given the highest version
        ``top`` both sides support: by id (v13+) when every topic's id is known, else by
        name at v12 at most. Also returns the ids the metadata knows (even by name)."""
        ids, every = self._topic_ids(wanted)
        if every and top > MAX_FETCH_VERSION_BY_NAME:
            return session.plan(wanted, ids), top, ids
        return session.plan(wanted), min(top, MAX_FETCH_VERSION_BY_NAME), ids

    def _failed(
        self, node_id: int, session: FetchSession, tps: Iterable[TopicPartition], exc: Exception
    ) -> bool:
        log.debug("fetch from node %s failed: %r", node_id, exc)
        self.fetch_errors += 1
        session.on_failure()
        for tp in tps:
            self._forget_replica(tp, node_id)
        self._client.request_metadata_update()
        return False

    async def _fetch_once(
        self,
        node_id: int,
        session: FetchSession,
        wanted: Mapping[TopicPartition, PartitionFetch],
    ) -> bool:
        cfg = self._config
        timeout = cfg.fetch_max_wait_ms / 1000 + cfg.client.request_timeout
        try:
            conn = await self._client.connection(node_id, "fetch")
            top = conn.version_for(FETCH, 4, MAX_FETCH_VERSION)
        except (KafkaConnectionError, KafkaTimeoutError, IncompatibleBrokerVersionError) as exc:
            return self._failed(node_id, session, wanted, exc)
        # The assignment may have changed while we waited for the connection (a revoked
        # partition, a fenced member losing everything): ask only for what is still ours.
        assignment = self._subs.assignment
        if any(tp not in assignment for tp in wanted):
            wanted = {tp: pf for tp, pf in wanted.items() if tp in assignment}
            if not wanted:
                return True
        plan, version, ids = self._plan(session, wanted, top)
        epochs = {tp: assignment[tp].epoch for tp in plan.fetching}
        body = self._build_request(plan)
        started = time.monotonic()
        self.fetch_requests += 1
        self.fetches_by_node[node_id] = self.fetches_by_node.get(node_id, 0) + 1
        self.fetches_by_version[version] = self.fetches_by_version.get(version, 0) + 1
        try:
            resp = await conn.request(FETCH, body, version=version, timeout=timeout)
        except (KafkaConnectionError, KafkaTimeoutError) as exc:
            return self._failed(node_id, session, plan.fetching, exc)
        self.last_fetch_latency_ms = (time.monotonic() - started) * 1000
        session.on_response(plan, resp.error_code, resp.session_id)
        if resp.error_code != _NONE:
            self.fetch_errors += 1
            log.debug("fetch session error %s from node %s", resp.error_code, node_id)
            return resp.error_code in _SESSION_ERRORS
        added = False
        self._stalled = False
        hints: list[tuple[TopicPartition, int, int]] = []
        names = None if plan.topic_ids is None else plan.topic_names()
        for topic in resp.responses:
            if names is None:
                name = topic.topic
            else:
                found = names.get(topic.topic_id.int)
                if found is None:
                    # An id we did not ask for: nothing to file it under.
                    self._client.request_metadata_update()
                    continue
                name = found
            topic_id = ids.get(name)
            for part in topic.partitions:
                tp = TopicPartition(name, part.partition_index)
                sent = plan.fetching.get(tp)
                if sent is None:
                    continue
                added |= self._handle_partition(
                    tp, part, sent, epochs.get(tp, -1), node_id, topic_id, hints
                )
        if hints:
            self._apply_hints(
                hints, resp.node_endpoints if version >= _FIRST_NODE_ENDPOINTS_VERSION else ()
            )
        if added:
            self.data_ready.notify()
        # Records that bring no complete batch past the fetch offset (a batch cut short, or
        # one before the offset) would be asked for again at once and come back the same:
        # with a broker that answers at once that is a busy loop. Back off instead, unless
        # other partitions made progress.
        return added or not self._stalled

    def _apply_hints(
        self, hints: list[tuple[TopicPartition, int, int]], endpoints: Iterable[Any]
    ) -> None:
        """KIP-951: move the partitions to the leaders the answer named; metadata is asked
        for only when a hint could not be taken (unknown broker, epoch not newer)."""
        moved = self._client.apply_leader_hints(hints, endpoints)
        if moved:
            self.leader_hints += len(moved)
            log.debug("new leaders from Fetch answers: %s", sorted(moved))
            self._changed.notify()
        if len(moved) < len(hints):
            self._client.request_metadata_update()

    def _handle_partition(
        self,
        tp: TopicPartition,
        part: PartitionData,
        sent: PartitionFetch,
        epoch: int,
        node_id: int = -1,
        topic_id: uuid.UUID | None = None,
        hints: list[tuple[TopicPartition, int, int]] | None = None,
    ) -> bool:
        st = self._subs.assignment.get(tp)
        if st is None or st.epoch != epoch:
            return False  # seeked, reset or revoked while the request was in flight
        code = part.error_code
        if code != _NONE and self._forget_replica(tp, node_id):
            # A replica we were told to read from failed us (it lags, or lost the
            # partition): the leader decides again, no reset (KIP-392).
            log.debug("%s: replica %s answered %s; back to the leader", tp, node_id, code)
            self.fetch_errors += 1
            return False
        replica = getattr(part, "preferred_read_replica", -1)
        if code == _NONE and replica >= 0 and replica != node_id:
            # The leader names a closer replica (KIP-392): its answer has no records.
            self._prefer(tp, replica)
            self._changed.notify()
            if not part.records:
                return False
        diverging = getattr(part, "diverging_epoch", None)
        if (
            code == _NONE
            and diverging is not None
            and (diverging.epoch >= 0 or diverging.end_offset >= 0)
        ):
            return self._diverged(tp, sent, epoch, diverging.epoch, diverging.end_offset)
        if code == _NONE:
            if topic_id is not None:
                # The position is now known good in this topic's log (see _recreated);
                # stored only when that changes (no allocation per answer).
                seen = self._fetched_ids.get(tp)
                if seen is None or seen[0] != epoch or seen[1] is not topic_id:
                    self._fetched_ids[tp] = (epoch, topic_id)
            st.high_watermark = part.high_watermark
            if part.last_stable_offset >= 0:
                st.last_stable_offset = part.last_stable_offset
            if part.log_start_offset >= 0:
                st.log_start_offset = part.log_start_offset
            records = part.records
            if not records:
                return False
            # A copy, not a view: a view would keep the whole response (up to
            # fetch_max_bytes) alive while this partition waits in the buffer, more than
            # buffered_bytes counts (docs/internals/consume-path.md).
            data = bytes(records)
            nxt, last_epoch = next_fetch_position(data, sent.fetch_offset)
            if nxt <= sent.fetch_offset:
                damage = _structural_damage(data, self._config.max_decompressed_size)
                if damage is not None:
                    # A length no broker writes (negative, too short for a header) is not
                    # a batch cut short: report it, as decoding would have.
                    self._add(
                        CompletedFetch(
                            tp, epoch, sent.fetch_offset, b"", sent.fetch_offset, error=damage
                        )
                    )
                    return True
                if len(data) >= sent.max_bytes:
                    # One batch is bigger than max_partition_fetch_bytes; a broker from
                    # KIP-74 on always returns the first batch whole, so this means an old
                    # broker: report it instead of fetching the same bytes forever.
                    self._add(
                        CompletedFetch(
                            tp,
                            epoch,
                            sent.fetch_offset,
                            b"",
                            sent.fetch_offset,
                            error=MessageTooLargeError(
                                f"{tp}: a batch at offset {sent.fetch_offset} is larger than "
                                f"max_partition_fetch_bytes={sent.max_bytes}",
                            ),
                        )
                    )
                    return True
                self._stalled = True
                self.fetch_stalls += 1
                return False
            self.bytes_fetched += len(data)
            aborted = None
            if self._config.isolation and part.aborted_transactions:
                aborted = [(a.producer_id, a.first_offset) for a in part.aborted_transactions]
            self._add(
                CompletedFetch(
                    tp,
                    epoch,
                    sent.fetch_offset,
                    data,
                    nxt,
                    aborted=aborted,
                    read_committed=bool(self._config.isolation),
                )
            )
            if last_epoch < 0:
                last_epoch = sent.last_fetched_epoch
            self._fetch_offsets[tp] = (epoch, nxt, last_epoch)
            return True
        self.fetch_errors += 1
        if code == _OFFSET_OUT_OF_RANGE:
            if self._subs.default_reset is not None:
                log.info("%s: offset %s out of range, resetting", tp, sent.fetch_offset)
                self._subs.request_reset(tp, None)
                self._changed.notify()
                return False
            self._add(
                CompletedFetch(
                    tp,
                    epoch,
                    sent.fetch_offset,
                    b"",
                    sent.fetch_offset,
                    error=OffsetOutOfRangeError(
                        f"{tp}: fetch offset {sent.fetch_offset} is out of range and "
                        "auto_offset_reset is 'none'"
                    ),
                )
            )
            return True
        if code in _METADATA_ERRORS:
            leader = part.current_leader if code in _LEADER_MOVED else None
            if hints is not None and leader is not None and leader.leader_id >= 0:
                # KIP-951: the answer names the new leader; taken after the whole answer.
                log.debug("%s: fetch error %s, leader now %s", tp, code, leader.leader_id)
                hints.append((tp, leader.leader_id, leader.leader_epoch))
                return False
            log.debug("%s: fetch error %s, refreshing metadata", tp, code)
            self._client.request_metadata_update()
            return False
        err = error_for_code(code, f"fetching {tp}")
        if err.retriable:
            return False
        self._add(CompletedFetch(tp, epoch, sent.fetch_offset, b"", sent.fetch_offset, error=err))
        return True

    def _diverged(
        self, tp: TopicPartition, sent: PartitionFetch, epoch: int, leader_epoch: int, end: int
    ) -> bool:
        """The leader's log forked from ours at ``end`` (the end of ``leader_epoch`` there):
        an unclean leader election truncated what we read. Move back, or report it."""
        self.truncations += 1
        log.warning(
            "%s: log truncated: the leader's epoch %s ends at %s, we read up to %s",
            tp,
            leader_epoch,
            end,
            sent.fetch_offset,
        )
        self._fetch_offsets.pop(tp, None)
        lost = self._subs.on_divergence(tp, epoch, leader_epoch, end)
        if lost is None:
            self._changed.notify()
            return False
        position, divergent = lost
        error = LogTruncationError(tp, position, divergent, leader_epoch)
        self._add(CompletedFetch(tp, epoch, position, b"", position, error=error))
        return True

    def statistics(self) -> Mapping[str, Any]:
        return {
            "fetch_loops": sorted(self._loops),
            "buffered_bytes": self._total_bytes,
            "buffered_fetches": len(self._buffer),
            "fetch_requests": self.fetch_requests,
            "fetch_errors": self.fetch_errors,
            "fetch_stalls": self.fetch_stalls,
            "truncations": self.truncations,
            "validations": self.validations,
            "fetches_by_node": dict(self.fetches_by_node),
            "fetches_by_version": dict(self.fetches_by_version),
            "leader_hints": self.leader_hints,
            "recreated_topics": self.recreated_topics,
            "preferred_replicas": {
                f"{tp.topic}-{tp.partition}": node for tp, (node, _) in self._preferred.items()
            },
            "bytes_fetched": self.bytes_fetched,
            "records_returned": self.records_returned,
            "last_fetch_latency_ms": round(self.last_fetch_latency_ms, 3),
            "sessions": {
                node: {
                    "session_id": s.session_id,
                    "epoch": s.epoch,
                    "full_requests": s.full_requests,
                    "incremental_requests": s.incremental_requests,
                    "by_topic_id": s.topic_ids is not None,
                    "replaced_partitions": s.replaced_partitions,
                }
                for node, s in self._loops.items()
            },
        }
