"""``Producer``: the public face of the produce path.

``send``/``enqueue`` serialize, pick a partition, check sizes, wait for buffer space and hand
the record to the accumulator; the sender task does the rest (see ``sender.py``).
Transactions (``transaction()``, ``send_offsets_to_transaction``) talk to the transaction
coordinator directly from the calling task.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Mapping, Sequence
from functools import partial
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import anyio
import anyio.abc
import anyio.lowlevel

from .. import errors as E
from ..cluster.client import GROUP, TRANSACTION, ClusterClient
from ..cluster.lifecycle import Lifecycle
from ..cluster.tasks import BackgroundTasks
from ..errors import (
    BackgroundTaskError,
    ClientClosedError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    ProduceFailedError,
    RecordTooLargeClientError,
    error_for_code,
)
from ..net.config import with_bootstrap_servers
from ..observability import ProduceEvent, call_hook
from ..observability.telemetry import MetricsPusher, close_budget, producer_pusher
from ..protocol.apis import ADD_OFFSETS_TO_TXN, END_TXN, INIT_PRODUCER_ID, TXN_OFFSET_COMMIT
from ..protocol.apis.add_offsets_to_txn import AddOffsetsToTxnRequest
from ..protocol.apis.end_txn import EndTxnRequest
from ..protocol.apis.init_producer_id import InitProducerIdRequest
from ..protocol.apis.txn_offset_commit import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitRequestPartition,
    TxnOffsetCommitRequestTopic,
    TxnOffsetCommitResponse,
)
from ..protocol.schema import Api, ReqT, RespT
from ..serialization import (
    MessageField,
    NeedsResolution,
    SerializationContext,
    UnresolvedSerializerError,
    resolve_within,
)
from ..serialization import Serializer as _ContextSerializer
from ..structs import ClientState, OffsetAndMetadata, RecordMetadata, TopicPartition
from .accumulator import (
    BATCH_OVERHEAD,
    RECORD_OVERHEAD,
    BulkDelivery,
    Delivery,
    PartitionState,
    ProducerBatch,
    RecordAccumulator,
    Segment,
    record_size,
)
from .config import ProducerConfig, ProducerSettings
from .fastpath import Enqueuer as _Enqueuer
from .fastpath import append_record as _append_record
from .fastpath import client_metadata as _client_metadata
from .fastpath import delivery_metadata as _delivery_metadata
from .partitioner import DefaultPartitioner, UniformStickyPartitioner, make_partitioner
from .sender import Sender
from .transaction import (
    TRANSACTION_VERSION_FEATURE,
    TV1_MAX_END_TXN,
    TV1_MAX_TXN_OFFSET_COMMIT,
    TransactionAbortedError,
    TransactionState,
    TransactionStateError,
    TxnState,
    as_fenced,
    coordinator_error_is_abortable,
    coordinator_error_is_fatal,
    group_metadata_fields,
    is_fatal_txn_error,
    newest_finalized_features,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

log = logging.getLogger(__name__)

# Bound once for the per-record path.
_time_ns = time.time_ns
_monotonic = time.monotonic
_checkpoint = anyio.lowlevel.checkpoint
_Future = asyncio.Future

__all__ = ["Producer"]

Headers = Sequence[tuple[str, bytes | None]]


async def _identity3(
    topic: str, value: Any, key: Any, partition: Any, timestamp_ms: Any, headers: Any
) -> tuple[Any, Any, Any]:
    """``_resolved_then``'s ``slow`` for enqueue_many: the serialized key, value, headers."""
    return key, value, headers


class _HasErrorCode(Protocol):
    error_code: int


def _first_partition_error(resp: TxnOffsetCommitResponse) -> int:
    """The first partition error code of a TxnOffsetCommit answer (0 when none failed)."""
    return next((p.error_code for t in resp.topics for p in t.partitions if p.error_code), 0)


_Coded = TypeVar("_Coded", bound=_HasErrorCode)


class Producer:
    """An asynchronous Kafka producer (anyio: runs on asyncio and trio).

    ::

        async with Producer(bootstrap_servers="localhost:9092") as producer:
            md = await producer.send("topic", value=b"v", key=b"k")      # waits for the ack
            delivery = await producer.enqueue("topic", value=b"v")        # waits for buffer space
            md = await delivery

    Settings (typed by :class:`~kafka_async.producer.config.ProducerSettings`; names follow
    aiokafka where one exists; times in milliseconds): ``bootstrap_servers`` (also the first
    positional argument), ``client_id``, ``request_timeout_ms``, ``retry_backoff_ms`` and the
    TLS/SASL settings of :class:`~kafka_async.net.config.ClientConfig`, and the producer's own:

    .. settings:producer begin (make generate writes this list from producer/settings.py)

    * ``acks`` ("all"): replicas that must have a batch before it counts as sent: 0, 1 or 'all'
      (-1).
    * ``compression_type`` (None): codec for record batches; None or 'none': uncompressed.
    * ``linger_ms`` (5): how long a batch waits for more records.
    * ``max_batch_size`` (256 KiB): bytes per batch (aiokafka and Java: 16 KiB; larger batches
      cost less per record).
    * ``max_request_size`` (1 MiB): bytes per Produce request; also the largest record.
    * ``retry_backoff_max_ms`` (1000): longest wait between retries of a batch (the wait doubles
      from retry_backoff_ms).
    * ``enable_idempotence`` (on, unless acks or max_in_flight_requests_per_connection rule it
      out): producer id and sequence numbers: retries neither duplicate nor reorder.
    * ``transactional_id`` (None): makes the producer transactional (needs idempotence).
    * ``transaction_timeout_ms`` (60000): the broker aborts a transaction left open this long.
    * ``partitioner`` ('default'): 'default' (murmur2 for keys, uniform sticky without),
      'uniform_sticky', 'round_robin', a Partitioner or a callable (key_bytes, all, available) ->
      int.
    * ``key_serializer`` (None): turns keys into bytes.
    * ``value_serializer`` (None): turns values into bytes.
    * ``buffer_memory`` (32 MiB): bytes of unsent records; send/enqueue wait for space beyond it.
    * ``delivery_timeout_ms`` (120000): from enqueue to acknowledgement, retries included.
    * ``max_in_flight_requests_per_connection`` (5): unanswered Produce requests per broker.
    * ``max_block_ms`` (60000): how long send/enqueue/produce may wait for a topic's metadata (a
      topic that does not exist) or for buffer space, and a transactional call (init, send offsets,
      commit, abort) for the coordinator's answer, retries included; then KafkaTimeoutError.
    * ``metadata_wait_ms`` (max_block_ms): how long a record for an unknown topic waits for it to
      appear (overrides max_block_ms for that wait only).
    * ``allow_auto_create_topics`` (True): metadata requests let a broker with
      auto.create.topics.enable create a topic.
    * ``hooks`` (None): observability hooks (OpenTelemetry spans and metrics); None: off.
    * ``enable_metrics_push`` (True): push the metrics a broker's client-metrics subscription asks
      for (KIP-714).

    .. settings:producer end

    Use as ``async with``, or call :meth:`start` and later :meth:`close` (from any task, inside
    any cancel scope).
    """

    def __init__(
        self,
        bootstrap_servers: str | Sequence[str] | None = None,
        /,
        **config: Unpack[ProducerSettings],
    ) -> None:
        settings = with_bootstrap_servers(bootstrap_servers, config)
        self._cfg = cfg = ProducerConfig.from_kwargs(**settings)
        self._partitioner = partitioner = make_partitioner(cfg.partitioner, cfg.max_batch_size)
        #: The sticky partitioner's per-topic [partition, bytes] (None for other partitioners,
        #: subclasses included): ``enqueue`` does its common case itself.
        self._sticky: dict[str, list[int]] | None = None
        self._sticky_bytes = 0
        if type(partitioner) in (DefaultPartitioner, UniformStickyPartitioner):
            assert isinstance(partitioner, UniformStickyPartitioner)
            self._sticky = partitioner.sticky_state()
            self._sticky_bytes = partitioner.sticky_bytes
        self._acc = RecordAccumulator(
            max_batch_size=cfg.max_batch_size,
            linger_ms=cfg.linger_ms,
            buffer_memory=cfg.buffer_memory,
            compression_type=cfg.compression_type,
            delivery_timeout_ms=cfg.delivery_timeout_ms,
            retry_backoff_ms=cfg.client.retry_backoff_ms,
            retry_backoff_max_ms=cfg.retry_backoff_max_ms,
            max_in_flight=cfg.max_in_flight_requests_per_connection,
            idempotent=cfg.idempotent,
            transactional=cfg.transactional_id is not None,
        )
        self._txn = (
            TransactionState(cfg.transactional_id, cfg.transaction_timeout_ms)
            if cfg.transactional_id is not None
            else None
        )
        self._key_ser = cfg.key_serializer
        self._value_ser = cfg.value_serializer
        #: A context-aware serializer (kafka_async.serialization.Serializer) is given: both
        #: run in Python (_serialize_ctx) before the C path, which then gets bytes.
        self._ctx_ser = isinstance(self._key_ser, _ContextSerializer) or isinstance(
            self._value_ser, _ContextSerializer
        )
        self._max_request_size = cfg.max_request_size
        #: Largest record estimate that fits a request next to one batch header.
        self._max_record_size = cfg.max_request_size - BATCH_OVERHEAD
        #: True only between a successful start() and close(); checked per record.
        self._running = False
        #: How long a record may wait for its topic's metadata (Java's max.block.ms).
        self._metadata_wait_ms = (
            cfg.metadata_wait_ms if cfg.metadata_wait_ms is not None else cfg.max_block_ms
        )
        self._metadata_wait = self._metadata_wait_ms / 1000.0
        self._client: ClusterClient | None = None
        self._sender: Sender | None = None
        #: The producer's own background task group (the sender); the cluster client has
        #: its own beside it, never inside it.
        self._tasks: BackgroundTasks | None = None
        self._sender_done: anyio.Event | None = None
        #: The KIP-714 metrics push loop (``enable_metrics_push``), in ``_tasks``.
        self._telemetry: MetricsPusher | None = None
        self._life = Lifecycle("producer")
        self._hooks = cfg.hooks
        if self._hooks is not None:
            self._acc.on_settle = self._report_batch
        # topic -> (TopicPartition per partition id, all partition ids, available ids), valid
        # for one metadata snapshot.
        self._topics: dict[str, tuple[dict[int, PartitionState], list[int], list[int]]] = {}
        self._topics_snapshot: object = None
        self._txn_offsets_added = False
        #: A send_offsets_to_transaction of the open transaction failed or was cancelled:
        #: a commit would carry its records without the offsets, so commit_transaction
        #: refuses it (and leaves the transaction abortable) until a later call succeeds.
        self._txn_offsets_unsent = False
        if _Enqueuer is not None:
            self._install_c_paths(partitioner)

    def _install_c_paths(self, partitioner: Any) -> None:
        """Shadow ``enqueue``, ``send`` and ``produce`` with their C common cases (see
        :meth:`enqueue`), each unless a subclass overrides the method (its override runs)."""
        assert _Enqueuer is not None
        cls = type(self)
        common = {
            "producer": self,
            "acc": self._acc,
            "topics": self._topics,
            "sticky": self._sticky,
            "sticky_bytes": self._sticky_bytes,
            "max_record_size": self._max_record_size,
            "key_serializer": None if self._ctx_ser else self._key_ser,
            "value_serializer": None if self._ctx_ser else self._value_ser,
            "choose": partitioner.choose,
            "delivery_cls": Delivery,
        }
        if cls.enqueue is Producer.enqueue:
            vars(self)["enqueue"] = _Enqueuer(
                **common, slow=self._enqueue_serialized, after_wakeup=self._after_wakeup
            )
        if cls.send is Producer.send:
            # The same steps, then a wait without a coroutine per record.
            vars(self)["send"] = _Enqueuer(
                **common,
                slow=self._send_serialized,
                after_wakeup=self._after_wakeup,
                mode="send",
                future_cls=_Future,
                metadata_cls=RecordMetadata,
                slow_wait=self._delivery_outcome,
            )
        if cls.produce is Producer.produce:
            vars(self)["produce"] = _Enqueuer(
                **common,
                slow=self._produce_serialized,
                after_wakeup=self._produced_after_wakeup,
                mode="produce",
            )
        if self._key_ser is not None or self._value_ser is not None:
            # A serializer may need async I/O first (NeedsResolution): only producers with
            # serializers get this wrapper; the plain-bytes path calls C directly.
            for name, slow in (
                ("enqueue", self._enqueue_serialized),
                ("send", self._send_serialized),
                ("produce", self._produce_serialized),
            ):
                c_path = vars(self).get(name)
                if c_path is not None:
                    vars(self)[name] = self._resolving(c_path, slow)

    def _resolving(self, c_path: Any, slow: Any) -> Any:
        """``c_path`` (a C enqueue/send/produce), and on a serializer's
        :class:`~kafka_async.serialization.NeedsResolution` its Python twin after the
        resolution (see :meth:`_serialize_resolved`)."""

        def call(
            topic: str,
            value: Any = None,
            key: Any = None,
            partition: int | None = None,
            timestamp_ms: int | None = None,
            headers: Headers | None = None,
        ) -> Any:
            try:
                return c_path(topic, value, key, partition, timestamp_ms, headers)
            except NeedsResolution:
                return self._resolved_then(
                    slow, topic, value, key, partition, timestamp_ms, headers
                )

        def call_ctx(
            topic: str,
            value: Any = None,
            key: Any = None,
            partition: int | None = None,
            timestamp_ms: int | None = None,
            headers: Headers | None = None,
        ) -> Any:
            # Context-aware serializers run here; the C path gets their bytes.
            try:
                k, v, h = self._serialize_ctx(topic, key, value, headers)
            except NeedsResolution:
                return self._resolved_then(
                    slow, topic, value, key, partition, timestamp_ms, headers
                )
            return c_path(topic, v, k, partition, timestamp_ms, h)

        if self._ctx_ser:
            call = call_ctx

        call.__doc__ = c_path.__doc__
        return call

    def __repr__(self) -> str:
        return (
            f"<Producer {self._life.state.value} {self._cfg.client.client_id!r} "
            f"buffer={self._acc.buffer_used}/{self._acc.buffer_memory} "
            f"batches={len(self._acc.incomplete)}>"
        )

    @property
    def config(self) -> ProducerConfig:
        """The validated settings."""
        return self._cfg

    @property
    def state(self) -> ClientState:
        """Where the producer is in its life (``ClientState.RUNNING`` between start and
        close)."""
        return self._life.state

    @property
    def transaction_state(self) -> TransactionState | None:
        """The transaction's state machine (``state``, ``in_transaction``, ``is_fatal``); None
        without a ``transactional_id``. Read it; the transaction methods drive it."""
        return self._txn

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect, fetch metadata, get a producer id (idempotent/transactional) and start the
        sender; once. :meth:`close` may later be called from any task and inside any cancel
        scope."""
        await self._life.start(self._start, self._stop_background)
        self._running = True
        if self._hooks is not None:
            call_hook(
                self._hooks.client_started, "producer", self._cfg.client.client_id, self.statistics
            )

    async def _start(self) -> None:
        # The asyncio loop, if that is the backend: awaited deliveries wait on its futures.
        try:
            self._acc.loop = asyncio.get_running_loop()
        except RuntimeError:  # not asyncio (trio)
            self._acc.loop = None
        client = self._client = ClusterClient(
            self._cfg.client, allow_auto_topic_creation=self._cfg.allow_auto_create_topics
        )
        await client.start()
        # A task group of the producer's own, detached like the cluster client's (see
        # cluster/tasks.py): the caller's scopes do not reach the sender, so close() can
        # still flush, and close() works from any task and scope.
        tasks = self._tasks = BackgroundTasks("producer", on_error=self._background_failed)
        await tasks.__aenter__()
        sender = self._sender = Sender(client, self._acc, self._cfg, self._txn)
        done = self._sender_done = anyio.Event()
        await tasks.start(self._run_sender, sender, done)
        if self._cfg.enable_metrics_push:
            self._telemetry = producer_pusher(
                client,
                self._acc,
                self.statistics,
                client_id=self._cfg.client.client_id,
                transactional_id=self._cfg.transactional_id,
            )
            await tasks.start(self._telemetry.run)
        if self._txn is not None:
            await self._init_transactions()

    async def _stop_background(self) -> None:
        """Stop the sender (cancelling its in-flight requests: their records fail with
        ClientClosedError), then close the connections; each bounded."""
        if self._tasks is not None:
            await self._tasks.aclose()
        if self._client is not None:
            # Shielded and bounded by the cluster client itself.
            await self._client.close()

    def _report_batch(self, batch: ProducerBatch) -> None:
        """The accumulator settled ``batch``: tell the hooks (only set when hooks exist)."""
        hooks = self._hooks
        assert hooks is not None
        now_ns = _time_ns()
        age_ns = int((_monotonic() - batch.created) * 1e9)
        event = ProduceEvent(
            self._cfg.client.client_id,
            batch.tp.topic,
            batch.tp.partition,
            batch.record_count,
            batch.size,
            batch.base_offset,
            batch.attempts + 1,
            now_ns - age_ns,
            now_ns,
            batch.error,
        )
        call_hook(hooks.on_produce, event)

    @staticmethod
    async def _run_sender(
        sender: Sender,
        done: anyio.Event,
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        try:
            await sender.run(task_status=task_status)
        finally:
            done.set()

    async def close(self, timeout: float | None = None) -> None:  # noqa: ASYNC109
        """Abort an open transaction, send what is queued and stop.

        Returns within ``timeout`` seconds (default: ``delivery_timeout_ms``) plus a short
        shutdown grace, even if the brokers are gone. May be called from any task and inside
        any cancel scope; runs to the end even when the calling task is being cancelled (the
        cancellation propagates once ``close`` is done).

        Records not acknowledged by then fail with :class:`~kafka_async.errors.KafkaTimeoutError`
        (queued) or :class:`~kafka_async.errors.ClientClosedError` (in flight), and a warning
        is logged on ``kafka_async.producer.producer``.
        """
        if timeout is None:
            timeout = self._cfg.delivery_timeout_ms / 1000.0
        self._running = False
        await self._life.close(partial(self._close, timeout))

    async def _close(self, timeout: float) -> None:  # noqa: ASYNC109
        """The close phases (shielded by the lifecycle): abort, flush, stop, settle."""
        sender = self._sender
        try:
            deadline = anyio.current_time() + timeout
            await self._abort_open_transaction(deadline)
            if sender is not None and self._sender_done is not None:
                self._acc.flushing += 1
                sender.stop()
                with anyio.move_on_after(max(deadline - anyio.current_time(), 0.0)):
                    await self._sender_done.wait()
                if not self._sender_done.is_set():
                    self._fail_at_deadline(sender, timeout)
            if self._telemetry is not None:
                # The last metrics push, marked terminating, while connections are open.
                await self._telemetry.terminate(close_budget(deadline))
            await self._stop_background()
        finally:
            # Anything still unsettled (should be nothing) must not hang its waiters.
            for batch in list(self._acc.incomplete):
                self._acc.fail(batch, ClientClosedError("the producer was closed"))
            if sender is not None:
                # Tasks waiting for buffer space wake up and see the producer is closed.
                sender.notify_space()
            count, first = self._acc.take_unreported()
            if first is not None:
                log.warning(
                    "close(): %d record(s) queued with produce() failed since the last "
                    "flush; the first with %r",
                    count,
                    first,
                )
            if self._hooks is not None:
                call_hook(
                    self._hooks.client_closed,
                    "producer",
                    self._cfg.client.client_id,
                    self.statistics,
                )

    def _fail_at_deadline(self, sender: Sender, timeout: float) -> None:
        """close() ran out of time: fail what is queued, count what is still in flight."""
        sender.abort_retries()
        error = KafkaTimeoutError(
            f"the producer closed after {timeout:.3f} s with records still unacknowledged"
        )
        queued_records = sum(b.record_count for b in self._acc.incomplete if not b.in_flight)
        failed = self._acc.fail_all_queued(error)
        in_flight = [b for b in self._acc.incomplete if not b.done]
        log.warning(
            "close() reached its deadline (%.3f s): %d queued batch(es) (%d records) failed "
            "with KafkaTimeoutError, %d in-flight batch(es) (%d records) fail with "
            "ClientClosedError",
            timeout,
            failed,
            queued_records,
            len(in_flight),
            sum(b.record_count for b in in_flight),
        )

    async def _abort_open_transaction(self, deadline: float) -> None:
        """close() with a transaction open: abort it now rather than leave it to the
        coordinator's transaction timeout (which would block read_committed consumers)."""
        txn = self._txn
        if txn is None or txn.is_fatal or not txn.in_transaction:
            return
        with anyio.move_on_after(max(deadline - anyio.current_time(), 0.0)) as scope:
            try:
                await self.abort_transaction()
            except KafkaError as exc:
                log.warning("close(): aborting the open transaction failed: %r", exc)
                return
            log.info("close(): the open transaction was aborted")
        if scope.cancelled_caught:
            log.warning(
                "close(): the open transaction could not be aborted in time; the coordinator "
                "aborts it after transaction_timeout_ms (%d)",
                txn.transaction_timeout_ms,
            )

    async def __aenter__(self) -> Producer:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # -- producing -------------------------------------------------------------------------

    def _background_failed(self, error: BackgroundTaskError) -> None:
        """The sender or a connection task failed unexpectedly (a bug): fail every record
        not yet settled with ``error`` and make every later call raise it."""
        sender = self._sender
        if sender is not None:
            sender.fail_fatal(error)
        for batch in list(self._acc.incomplete):
            if not batch.done:
                self._acc.fail(batch, error)
        if sender is not None:
            sender.notify_space()

    def _check_usable(self) -> Sender:
        self._life.check()
        sender = self._sender
        assert sender is not None
        if sender.fatal_error is not None:
            raise sender.fatal_error
        return sender

    async def _partitions(
        self, topic: str
    ) -> tuple[dict[int, PartitionState], list[int], list[int]]:
        client = self._client
        assert client is not None
        meta = client.metadata
        ids = meta.partitions_for(topic)
        if not ids:
            if not isinstance(topic, str) or not topic:
                raise TypeError(f"topic must be a non-empty string, got {topic!r}")
            try:
                await client.wait_for_topic(topic, self._metadata_wait)
            except KafkaTimeoutError:
                setting = (
                    "metadata_wait_ms" if self._cfg.metadata_wait_ms is not None else "max_block_ms"
                )
                raise KafkaTimeoutError(
                    f"topic {topic!r} not found in metadata within {setting}="
                    f"{self._metadata_wait_ms} (it does not exist, and the broker does not "
                    "create topics on first use, or allow_auto_create_topics=False)"
                ) from None
            meta = client.metadata
            ids = meta.partitions_for(topic)
            if not ids:
                raise KafkaTimeoutError(f"topic {topic!r} has no partitions in metadata")
        if meta is not self._topics_snapshot:
            self._topics.clear()
            self._topics_snapshot = meta
        all_ids = sorted(ids)
        available = sorted(meta.available_partitions_for(topic))
        acc = self._acc
        entry = ({p: acc.partition(TopicPartition(topic, p)) for p in all_ids}, all_ids, available)
        self._topics[topic] = entry
        return entry

    def enqueue(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
        headers: Headers | None = None,
    ) -> Coroutine[Any, Any, Delivery]:
        """Queue one record; waits only for buffer space (and for metadata of a new topic).

        ``await producer.enqueue(...)`` returns a
        :class:`~kafka_async.producer.accumulator.Delivery`: ``await`` it in turn for the
        :class:`~kafka_async.structs.RecordMetadata` or the typed error the record failed
        with. The serializers run in the call itself (their errors are raised by it); every
        other error is raised by the ``await``. A serializer that needs async I/O first (a
        schema registry's id not cached yet) raises
        :class:`~kafka_async.serialization.NeedsResolution`: the ``await`` then does that I/O
        within ``max_block_ms`` (or raises its typed error) and serializes again.

        With the C fast path, the common record (bytes or None key and value, no headers, no
        transaction, a known topic, room in the buffer and in the open batch) is queued by
        the call itself, in C, and the ``await`` returns at once without suspending; the
        awaitable it returns passes for a coroutine (``asyncio.create_task`` takes it). The
        rest takes this method's Python body; the two behave alike (tests compare them).
        """
        try:
            key, value, headers = self._serialize(topic, key, value, headers)
        except NeedsResolution:
            return self._resolved_then(
                self._enqueue_serialized, topic, value, key, partition, timestamp_ms, headers
            )
        return self._enqueue_serialized(topic, value, key, partition, timestamp_ms, headers)

    def _serialize(
        self, topic: str, key: Any, value: Any, headers: Headers | None
    ) -> tuple[Any, Any, Headers | None]:
        """The configured serializers applied (the Python paths of send/enqueue/produce)."""
        if self._ctx_ser:
            return self._serialize_ctx(topic, key, value, headers)
        if self._key_ser is not None:
            key = self._key_ser(key)
        if self._value_ser is not None:
            value = self._value_ser(value)
        return key, value, headers

    def _serialize_ctx(
        self, topic: str, key: Any, value: Any, headers: Headers | None
    ) -> tuple[Any, Any, Headers | None]:
        """The serializers applied when one is context-aware
        (:class:`~kafka_async.serialization.Serializer`): each gets a
        :class:`~kafka_async.serialization.SerializationContext` whose ``headers`` is a new
        list of the record's headers, which the record is sent with (None if it stays empty
        and none were given)."""
        hdrs: list[Any] = list(headers) if headers is not None else []
        ks = self._key_ser
        if ks is not None:
            if isinstance(ks, _ContextSerializer):
                key = ks.serialize(key, SerializationContext(topic, MessageField.KEY, hdrs))
            else:
                key = ks(key)
        vs = self._value_ser
        if vs is not None:
            if isinstance(vs, _ContextSerializer):
                value = vs.serialize(value, SerializationContext(topic, MessageField.VALUE, hdrs))
            else:
                value = vs(value)
        return key, value, (hdrs if hdrs or headers is not None else None)

    async def _serialize_many_ctx(
        self, topic: str, vals: list[Any], keys: Iterable[Any] | None, headers: Headers | None
    ) -> tuple[list[Any], list[Any] | None, Headers | None]:
        """``enqueue_many``'s serializers when one is context-aware: every record gets its
        own context; the records share one set of headers, so every record must end with the
        same headers (a registry serializer adds the same schema-id header to each)."""
        ks = list(keys) if keys is not None else None
        if ks is not None and len(ks) != len(vals):
            raise ValueError(f"got {len(ks)} keys for {len(vals)} values")
        out_v: list[Any] = []
        out_k: list[Any] | None = [] if ks is not None else None
        first: Headers | None = None
        for i, v in enumerate(vals):
            k = ks[i] if ks is not None else None
            try:
                sk, sv, h = self._serialize_ctx(topic, k, v, headers)
            except NeedsResolution:
                sk, sv, h = await self._resolved_then(_identity3, topic, v, k, None, None, headers)
            if i == 0:
                first = h
            elif h != first:
                raise ValueError(
                    "enqueue_many: the serializers gave records different headers (they share "
                    "one set); send such records with enqueue"
                )
            out_v.append(sv)
            if out_k is not None:
                out_k.append(sk)
        return out_v, out_k, first if vals else headers

    async def _serialize_resolved(
        self, ser: Any, obj: Any, ctx: SerializationContext | None = None
    ) -> Any:
        """``ser(obj)`` (``ser.serialize(obj, ctx)`` for a context-aware one); a
        :class:`~kafka_async.serialization.NeedsResolution` is resolved (within
        ``max_block_ms``: the resolver's typed error, e.g. the schema registry's, when it
        cannot) and the serializer called once more."""
        call = ser if ctx is None else (lambda o: ser.serialize(o, ctx))
        try:
            return call(obj)
        except NeedsResolution as exc:
            await resolve_within(exc, self._cfg.max_block_ms / 1000.0)
        try:
            return call(obj)
        except NeedsResolution as exc:
            raise UnresolvedSerializerError(
                f"the serializer {ser!r} needs a resolution again right after it resolved: {exc}"
            ) from exc

    async def _resolved_then(
        self,
        slow: Any,
        topic: str,
        value: Any,
        key: Any,
        partition: int | None,
        timestamp_ms: int | None,
        headers: Headers | None,
    ) -> Any:
        """A serializer raised :class:`~kafka_async.serialization.NeedsResolution`: serialize
        again with resolutions, then ``slow`` (the ``*_serialized`` body of the call)."""
        hdrs: list[Any] | None = None
        if self._ctx_ser:
            hdrs = list(headers) if headers is not None else []
        for field, ser in (
            (MessageField.KEY, self._key_ser),
            (MessageField.VALUE, self._value_ser),
        ):
            if ser is None:
                continue
            ctx = None
            if hdrs is not None and isinstance(ser, _ContextSerializer):
                ctx = SerializationContext(topic, field, hdrs)
            if field is MessageField.KEY:
                key = await self._serialize_resolved(ser, key, ctx)
            else:
                value = await self._serialize_resolved(ser, value, ctx)
        if hdrs is not None:
            headers = hdrs if hdrs or headers is not None else None
        return await slow(topic, value, key, partition, timestamp_ms, headers)

    async def _after_wakeup(self, delivery: Delivery) -> Delivery:
        """The C enqueue's answer when its record opened work for the sender: give the sender
        a turn (as the Python body does), then return the delivery."""
        await _checkpoint()
        return delivery

    async def _enqueue_serialized(
        self,
        topic: str,
        value: Any,
        key: Any,
        partition: int | None,
        timestamp_ms: int | None,
        headers: Headers | None,
    ) -> Delivery:
        """``enqueue`` after the serializers ran (the C enqueue's fallback too, with the
        partition it chose)."""
        sender = self._sender
        if not self._running or sender is None or sender.fatal_error is not None:
            sender = self._check_usable()
        txn = self._txn
        if txn is not None:
            txn.check_can_send()
        # Exact-type checks first: the common case costs two identity tests.
        if type(value) is bytes:
            size = 21 + len(value)
        elif value is None:
            size = 21
        elif isinstance(value, bytes | bytearray | memoryview):
            size = 21 + len(value)
        else:
            raise TypeError(
                f"value must be bytes (or set value_serializer), got {type(value).__name__}"
            )
        if key is not None:
            if type(key) is not bytes and not isinstance(key, bytearray | memoryview):
                raise TypeError(
                    f"key must be bytes (or set key_serializer), got {type(key).__name__}"
                )
            size += len(key)
        if headers is not None:
            headers = list(headers)
            size = record_size(key, value, headers)
        entry = self._topics.get(topic)
        # The snapshot behind ClusterClient.metadata, read directly: the property would cost
        # a Python frame per record.
        if entry is None or _client_metadata(self._client) is not self._topics_snapshot:
            entry = await self._partitions(topic)
        parts, all_ids, available = entry
        if partition is None:
            # The sticky partitioner's common case inlined (what its ``choose`` does for a
            # record without a key while the topic's sticky partition has room).
            sticky = self._sticky
            cur = sticky.get(topic) if sticky is not None and key is None else None
            if cur is not None and cur[1] < self._sticky_bytes:
                cur[1] += size
                partition = cur[0]
            else:
                partition = self._partitioner.choose(topic, key, all_ids, available, size)
        ps = parts.get(partition)
        if ps is None:
            raise E.UnknownTopicOrPartitionError(
                f"partition {partition!r} is not one of topic {topic!r}'s {len(all_ids)} partitions"
            )
        if size > self._max_record_size:
            raise RecordTooLargeClientError(
                f"the record is about {size + BATCH_OVERHEAD} bytes, more than "
                f"max_request_size={self._max_request_size}"
            )
        acc = self._acc
        if acc.buffer_used + size > acc.buffer_memory and acc.buffer_used:
            await self._wait_for_space(size, sender)
        # The accumulator's append_to, its common case inlined (the open batch takes the
        # record: one call into C writes it and makes its Delivery); append_to opens a batch.
        # A None timestamp is read as now inside that call.
        batches = ps.batches
        delivery = (
            _append_record(batches[-1], timestamp_ms, key, value, headers, size, Delivery)
            if batches
            else None
        )
        if delivery is None:
            delivery = acc.append_to(ps, timestamp_ms, key, value, headers, size)
        else:
            acc.buffer_used += size
        if txn is not None and ps.tp not in txn.partitions:
            txn.add_partition(ps.tp)
        if acc.wakeup_needed:
            acc.wakeup_needed = False
            sender.wakeup()
            # A batch opened or filled: give the sender a turn, so a tight enqueue loop
            # pipelines requests instead of filling the whole buffer first.
            await _checkpoint()
        return delivery

    #: ``enqueue`` for a record serialized already (the aiokafka drop-in's ``send_batch``):
    #: the same coroutine function as ``_enqueue_serialized``, the name the C enqueue calls.
    enqueue_serialized = _enqueue_serialized

    async def _wait_for_space(self, size: int, sender: Sender) -> None:
        acc = self._acc
        if size > acc.buffer_memory:
            raise RecordTooLargeClientError(
                f"the record is about {size} bytes, more than buffer_memory={acc.buffer_memory}"
            )
        deadline = self._cfg.max_block_ms / 1000.0
        with anyio.move_on_after(deadline):
            while acc.buffer_used and acc.buffer_used + size > acc.buffer_memory:
                # Waiting producers make every batch sendable now (like a flush).
                sender.wakeup()
                await sender.space.wait()
                self._check_usable()
            return
        raise KafkaTimeoutError(
            f"no buffer space for a {size}-byte record within max_block_ms "
            f"({self._cfg.max_block_ms}; buffer_memory={acc.buffer_memory})"
        )

    def send(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
        headers: Headers | None = None,
    ) -> Coroutine[Any, Any, RecordMetadata]:
        """Send one record and wait for the broker's acknowledgement (``acks``).

        ``await producer.send(...)`` returns the record's
        :class:`~kafka_async.structs.RecordMetadata` or raises the typed error it failed
        with. As with :meth:`enqueue`, the serializers run in the call itself and the
        common case is done in C (the fast path); waiting then costs no coroutine per record.
        Cancelling the await once the record is queued does not take it back: it is still
        sent, and only the wait for its acknowledgement is abandoned.
        """
        try:
            key, value, headers = self._serialize(topic, key, value, headers)
        except NeedsResolution:
            return self._resolved_then(
                self._send_serialized, topic, value, key, partition, timestamp_ms, headers
            )
        return self._send_serialized(topic, value, key, partition, timestamp_ms, headers)

    def produce(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
        headers: Headers | None = None,
    ) -> Coroutine[Any, Any, None]:
        """Queue one record without a delivery handle: the cheapest per-record path.

        Like :meth:`enqueue` (same checks, partitioner and waiting for buffer space; the
        serializers run in the call, other errors are raised by the ``await``), but nothing
        is made per record to report its outcome. Outcomes are counted per batch: when a
        batch holding such records fails, its records are counted, and the next
        :meth:`flush` raises :class:`~kafka_async.errors.ProduceFailedError` with that count
        and the first error, then counts from zero again (``close`` logs them instead).
        A batch that also holds records queued with ``enqueue``/``send`` counts those too.
        ``statistics()["records_failed_unreported"]`` shows the count so far.
        """
        try:
            key, value, headers = self._serialize(topic, key, value, headers)
        except NeedsResolution:
            return self._resolved_then(
                self._produce_serialized, topic, value, key, partition, timestamp_ms, headers
            )
        return self._produce_serialized(topic, value, key, partition, timestamp_ms, headers)

    async def _produce_serialized(
        self,
        topic: str,
        value: Any,
        key: Any,
        partition: int | None,
        timestamp_ms: int | None,
        headers: Headers | None,
    ) -> None:
        """``produce`` after the serializers ran (the C produce's fallback too)."""
        delivery = await self._enqueue_serialized(
            topic, value, key, partition, timestamp_ms, headers
        )
        delivery.batch.report_at_flush = True

    async def _produced_after_wakeup(self, _appended: object) -> None:
        """The C produce's answer when its record opened work for the sender."""
        await _checkpoint()

    async def _send_serialized(
        self,
        topic: str,
        value: Any,
        key: Any,
        partition: int | None,
        timestamp_ms: int | None,
        headers: Headers | None,
    ) -> RecordMetadata:
        """``send`` after the serializers ran (the C send's fallback too)."""
        delivery = await self._enqueue_serialized(
            topic, value, key, partition, timestamp_ms, headers
        )
        return await self._delivery_outcome(delivery)

    async def _delivery_outcome(self, delivery: Delivery) -> RecordMetadata:
        """Wait until ``delivery``'s batch is settled; its metadata, or raise its error."""
        # ``await delivery`` without its generator frame: a task resumed here resumes one
        # frame fewer, and the metadata comes from one call into the C fast path. (The C
        # send's Sending does all of this without a coroutine; this is its fallback.)
        batch = delivery.batch
        if not batch.done:
            # On asyncio a future of this task's own (see ProducerBatch.settled).
            await batch.settled()
        metadata = _delivery_metadata(delivery, RecordMetadata)
        return metadata if metadata is not None else delivery.result()

    async def enqueue_many(
        self,
        topic: str,
        values: Iterable[Any],
        *,
        keys: Iterable[Any] | None = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
        headers: Headers | None = None,
    ) -> BulkDelivery:
        """Queue many records of one topic in one call: the bulk path for pipelines.

        Same rules as :meth:`enqueue` (serializers, partitioner, size checks, waiting for
        buffer space) with one timestamp and one set of headers for all records. Records
        without a key go to the partitioner's choice per batch-sized chunk rather than per
        record. Returns a :class:`~kafka_async.producer.accumulator.BulkDelivery`: ``await``
        it to wait for all of them (raises the first error), ``results()`` for per-record
        metadata. No object is created per record, which makes this several times cheaper per
        record than ``enqueue``.
        """
        sender = self._check_usable()
        txn = self._txn
        if txn is not None:
            txn.check_can_send()
        vals = list(values)
        vser = self._value_ser
        if self._ctx_ser:
            vals, ks, headers = await self._serialize_many_ctx(topic, vals, keys, headers)
        else:
            if vser is not None:
                try:
                    vals = [vser(v) for v in vals]
                except NeedsResolution:
                    vals = [await self._serialize_resolved(vser, v) for v in vals]
            ks = None
            if keys is not None:
                ks = list(keys)
                kser = self._key_ser
                if kser is not None:
                    try:
                        ks = [kser(k) for k in ks]
                    except NeedsResolution:
                        ks = [await self._serialize_resolved(kser, k) for k in ks]
        if ks is not None and len(ks) != len(vals):
            raise ValueError(f"got {len(ks)} keys for {len(vals)} values")
        count = len(vals)
        if count == 0:
            return BulkDelivery(topic, -1, [], 0)
        hdrs = list(headers) if headers is not None else None
        header_bytes = record_size(None, None, hdrs) - RECORD_OVERHEAD
        # One pass for types and the largest record (the C writer needs bytes or None).
        largest = 0
        total = 0
        for i, v in enumerate(vals):
            if (
                type(v) is not bytes
                and v is not None
                and not isinstance(v, bytes | bytearray | memoryview)
            ):
                raise TypeError(
                    f"value must be bytes (or set value_serializer), got {type(v).__name__}"
                )
            n = 0 if v is None else len(v)
            if ks is not None:
                k = ks[i]
                if k is not None:
                    if type(k) is not bytes and not isinstance(k, bytearray | memoryview):
                        raise TypeError(
                            f"key must be bytes (or set key_serializer), got {type(k).__name__}"
                        )
                    n += len(k)
            total += n
            if n > largest:
                largest = n
        if RECORD_OVERHEAD + header_bytes + largest > self._max_record_size:
            raise RecordTooLargeClientError(
                f"a record is about {RECORD_OVERHEAD + header_bytes + largest + BATCH_OVERHEAD} "
                f"bytes, more than max_request_size={self._max_request_size}"
            )
        entry = self._topics.get(topic)
        if entry is None or _client_metadata(self._client) is not self._topics_snapshot:
            entry = await self._partitions(topic)
        parts, all_ids, available = entry
        if timestamp_ms is None:
            timestamp_ms = _time_ns() // 1_000_000
        avg = RECORD_OVERHEAD + header_bytes + total // count
        # About one batch per chunk: the unit of partition choice and of buffer waiting.
        chunk = max(1, self._cfg.max_batch_size // avg)

        # (partition, call indexes or None for "all, in order")
        groups: list[tuple[int, list[int] | None]]
        partitioner = self._partitioner
        if partition is not None:
            groups = [(partition, None)]
        elif ks is None and isinstance(partitioner, UniformStickyPartitioner | DefaultPartitioner):
            groups = []  # chosen chunk by chunk below
        else:
            by_partition: dict[int, list[int]] = {}
            for i in range(count):
                key = ks[i] if ks is not None else None
                p = partitioner.partition(topic, key, all_ids, available)
                by_partition.setdefault(p, []).append(i)
            groups = list(by_partition.items())

        acc = self._acc
        segments: list[Segment] = []
        order: list[int] | None = None
        appended = 0

        async def add(ps: PartitionState, idx: list[int] | None, start: int, stop: int) -> None:
            nonlocal appended
            if idx is None:
                cv = vals[start:stop]
                ck = ks[start:stop] if ks is not None else None
            else:
                cv = [vals[i] for i in idx[start:stop]]
                ck = [ks[i] for i in idx[start:stop]] if ks is not None else None
            need = avg * len(cv)
            if acc.buffer_used + need > acc.buffer_memory and acc.buffer_used:
                await self._wait_for_space(min(need, acc.buffer_memory), sender)
            acc.append_many_to(
                ps,
                timestamp_ms,
                ck,
                cv,
                hdrs,
                _monotonic(),
                segments,
                appended,
            )
            appended += len(cv)
            if txn is not None and ps.tp not in txn.partitions:
                txn.add_partition(ps.tp)
            if acc.wakeup_needed:
                acc.wakeup_needed = False
                sender.wakeup()
                await _checkpoint()

        def state_of(p: int) -> PartitionState:
            ps = parts.get(p)
            if ps is None:
                raise E.UnknownTopicOrPartitionError(
                    f"partition {p!r} is not one of topic {topic!r}'s {len(all_ids)} partitions"
                )
            return ps

        if not groups and partition is None and ks is None:
            for start in range(0, count, chunk):
                stop = min(start + chunk, count)
                p = partitioner.partition(topic, None, all_ids, available)
                await add(state_of(p), None, start, stop)
                partitioner.on_append(topic, p, avg * (stop - start))
        else:
            if len(groups) > 1 or groups[0][1] is not None:
                order = []
            for p, idx in groups:
                ps = state_of(p)
                n = count if idx is None else len(idx)
                if order is not None:
                    order.extend(range(count) if idx is None else idx)
                for start in range(0, n, chunk):
                    await add(ps, idx, start, min(start + chunk, n))
        return BulkDelivery(topic, timestamp_ms, segments, count, order)

    async def flush(self, timeout: float | None = None) -> None:  # noqa: ASYNC109
        """Send everything queued now (ignoring linger) and wait until it is settled.

        Records queued with ``enqueue`` or ``send`` that fail do not make ``flush`` raise:
        their deliveries hold the errors. Records queued with :meth:`produce` have no
        delivery: if any failed since the last ``flush``, it raises
        :class:`~kafka_async.errors.ProduceFailedError` (how many, the first error) once
        everything is settled. Raises :class:`~kafka_async.errors.KafkaTimeoutError` if
        ``timeout`` seconds pass.
        """
        sender = self._check_usable()
        acc = self._acc
        pending = list(acc.incomplete)
        if pending:
            acc.flushing += 1
            sender.wakeup()
            try:
                with anyio.move_on_after(timeout if timeout is not None else math.inf) as scope:
                    for batch in pending:
                        await batch.wait()
                if scope.cancelled_caught:
                    raise KafkaTimeoutError(f"flush did not finish within {timeout} s")
            finally:
                acc.flushing -= 1
        count, first = acc.take_unreported()
        if first is not None:
            raise ProduceFailedError(count, first) from first

    async def partitions_for(self, topic: str) -> set[int]:
        """The partition ids of ``topic`` (waits for its metadata like ``send`` does)."""
        self._check_usable()
        _, all_ids, _ = await self._partitions(topic)
        return set(all_ids)

    def statistics(self) -> dict[str, Any]:
        """A snapshot of the producer's state and counters (a new dict each call).

        ``state``; buffer: ``buffer_used`` / ``buffer_memory`` (bytes), ``buffered_records``,
        ``queued_batches``, ``in_flight_batches``, ``incomplete_batches``, ``flushing``,
        ``partitions``; outcomes: ``records_acked``, ``records_failed``,
        ``records_failed_unreported`` (records queued with ``produce`` that failed since the
        last ``flush``),
        ``records_failed_by_error`` (error name -> records), ``batch_splits`` (batches the
        broker refused as too large and that were split and sent again); requests:
        ``in_flight_requests`` (broker id -> Produce requests awaiting an answer),
        ``requests_sent``, ``batches_sent``, ``retries``, ``leader_hints`` (partitions whose
        new leader a NOT_LEADER_OR_FOLLOWER answer named, KIP-951: retried there at once,
        without a metadata refresh), ``errors_by_code`` (error name ->
        batches that met it, retried or not; Kafka's name for broker error codes such as
        ``NOT_LEADER_OR_FOLLOWER``, the class name for client-side errors);
        idempotence: ``producer_id``, ``producer_epoch``, ``epoch_bumps``,
        ``producer_id_resets``, ``fatal_error``; ``transaction`` when transactional.
        """
        stats: dict[str, Any] = {"state": self._life.state.value}
        stats.update(self._acc.statistics())
        if self._sender is not None:
            stats.update(self._sender.statistics())
        if self._txn is not None:
            stats["transaction"] = {
                "state": self._txn.state.value,
                "partitions": sorted(self._txn.partitions),
                "pending_partitions": sorted(self._txn.pending),
            }
        return stats

    # -- transactions ----------------------------------------------------------------------

    def _require_txn(self) -> TransactionState:
        if self._txn is None:
            raise TransactionStateError("transactions need a transactional_id")
        return self._txn

    async def _txn_call(
        self,
        api: Api[ReqT, _Coded],
        body: ReqT,
        what: str,
        *,
        aborting: bool = False,
        max_version: int | None = None,
    ) -> _Coded:
        """One request to the transaction coordinator, retried while the error is retriable.

        Returns the response (its error code is 0 or not retriable); raises fencing and
        other fatal errors as typed errors after moving the state to FATAL_ERROR, and
        errors that leave the transaction abortable (TRANSACTION_ABORTABLE...) after moving
        it to ABORTABLE_ERROR (``aborting``: the call is an abort's EndTxn, which no abort
        can follow, so TRANSACTION_ABORTABLE is fatal there, as in the Java client).
        """
        txn = self._require_txn()
        resp, err = await self._coordinator_call(
            txn.transactional_id,
            TRANSACTION,
            api,
            body,
            what,
            lambda r: r.error_code,
            max_version=max_version,
        )
        if err is None:
            return resp
        if coordinator_error_is_fatal(err, aborting=aborting):
            err = as_fenced(err)
            txn.fatal_error(err)
            if self._sender is not None:
                # The sender's own path: queued batches fail and space waiters wake now.
                self._sender.fail_fatal(err)
        elif coordinator_error_is_abortable(err):
            txn.abortable_error(err)
        raise err

    async def _coordinator_call(
        self,
        key: str,
        kind: int,
        api: Api[ReqT, RespT],
        body: ReqT,
        what: str,
        error_of: Callable[[RespT], int],
        *,
        max_version: int | None = None,
    ) -> tuple[RespT, KafkaError | None]:
        """Send ``body`` to the coordinator of ``key`` (``kind``: TRANSACTION or GROUP) until
        it answers with no error or a non-retriable one, within ``max_block_ms`` in all (as
        the Java client bounds its transactional calls by ``max.block.ms``).

        A lost connection, a request timeout and retriable answers are retried after
        ``retry_backoff_ms``, the coordinator found again when the answer or the failure says
        it moved. Returns the response and the error its ``error_of`` code names (None for
        0); raises a non-retriable client-side error as it is, and :class:`KafkaTimeoutError`
        naming the last failure when the deadline passes.
        """
        client = self._client
        assert client is not None
        backoff = self._cfg.client.retry_backoff_ms / 1000.0
        bound_ms = self._cfg.max_block_ms
        deadline = anyio.current_time() + bound_ms / 1000.0
        last: BaseException | None = None
        while (left := deadline - anyio.current_time()) > 0:
            resp: RespT | None = None
            with anyio.move_on_after(left):
                try:
                    node = await client.coordinator(key, kind)
                    resp = await client.request(node, api, body, max_version=max_version)
                except KafkaError as exc:
                    if not exc.retriable:
                        raise
                    if isinstance(exc, KafkaConnectionError | KafkaTimeoutError):
                        client.invalidate_coordinator(key, kind)
                    last = exc
            if resp is not None:
                code = error_of(resp)
                if code == 0:
                    return resp, None
                err = error_for_code(code)
                if getattr(err, "invalid_coordinator", False):
                    client.invalidate_coordinator(key, kind)
                if not err.retriable:
                    return resp, err
                last = err
            await anyio.sleep(min(backoff, max(0.0, deadline - anyio.current_time())))
        raise KafkaTimeoutError(
            f"{what}: no answer from the coordinator within max_block_ms ({bound_ms}); "
            f"last failure: {last!r}"
        )

    def _refresh_transaction_version(self, txn: TransactionState) -> None:
        """Take the cluster's ``transaction.version`` from the newest finalized features any
        connection reported (between transactions only; see transaction.py)."""
        client = self._client
        if client is None:
            return
        newest = newest_finalized_features(
            (c.finalized_features_epoch, c.finalized_features) for c in client.pool.connections()
        )
        if newest is not None:
            txn.update_transaction_version(newest[0], newest[1].get(TRANSACTION_VERSION_FEATURE))

    async def _init_transactions(self) -> None:
        txn = self._require_txn()
        resp = await self._txn_call(
            INIT_PRODUCER_ID,
            InitProducerIdRequest(
                transactional_id=txn.transactional_id,
                transaction_timeout_ms=txn.transaction_timeout_ms,
                producer_id=-1,
                producer_epoch=-1,
            ),
            "InitProducerId",
        )
        self._acc.reset_sequences(resp.producer_id, resp.producer_epoch)
        txn.initialized(resp.producer_id, resp.producer_epoch)
        self._refresh_transaction_version(txn)

    def begin_transaction(self) -> None:
        """Start a transaction (records sent until commit/abort belong to it)."""
        self._check_usable()
        txn = self._require_txn()
        txn.begin()
        self._refresh_transaction_version(txn)
        self._txn_offsets_added = False
        self._txn_offsets_unsent = False

    async def commit_transaction(self) -> None:
        """Flush, then commit; raises if a record of the transaction failed (then abort)."""
        txn = self._require_txn()
        self._check_usable()
        if self._txn_offsets_unsent and txn.state is TxnState.IN_TRANSACTION:
            # The records would commit without the offsets: the transaction can only be
            # aborted now (``transaction()`` does so).
            unsent = TransactionStateError(
                "cannot commit: send_offsets_to_transaction did not complete (the commit would "
                "carry the records without the offsets); abort"
            )
            txn.abortable_error(unsent)
            raise unsent
        if txn.state is not TxnState.COMMITTING:
            txn.begin_commit()
        await self.flush()
        if txn.state is TxnState.ABORTABLE_ERROR:
            raise TransactionStateError(
                f"cannot commit: a record of the transaction failed ({txn.last_error!r}); abort"
            ) from txn.last_error
        await self._end_txn(commit=True)

    async def abort_transaction(self) -> None:
        """Drop queued records of the transaction, wait for in-flight ones, and abort."""
        txn = self._require_txn()
        if txn.is_fatal:
            raise TransactionStateError(
                f"cannot abort: the producer hit a fatal error ({txn.last_error!r})"
            ) from txn.last_error
        txn.begin_abort()
        aborted = TransactionAbortedError("the transaction was aborted")
        if self._acc.fail_all_queued(aborted) and self._sender is not None:
            self._sender.wakeup()
        pending = list(self._acc.incomplete)
        with anyio.move_on_after(self._cfg.delivery_timeout_ms / 1000.0):
            for batch in pending:
                await batch.wait()
        await self._end_txn(commit=False)

    async def _end_txn(self, commit: bool) -> None:
        txn = self._require_txn()
        if txn.partitions or self._txn_offsets_added:
            resp = await self._txn_call(
                END_TXN,
                EndTxnRequest(
                    transactional_id=txn.transactional_id,
                    producer_id=txn.producer_id,
                    producer_epoch=txn.producer_epoch,
                    committed=commit,
                ),
                "EndTxn",
                aborting=not commit,
                max_version=None if txn.tv2 else TV1_MAX_END_TXN,
            )
            # Transactions version 2 (KIP-890, Kafka 4.x): every EndTxn (v5+) bumps the
            # epoch and answers with the id and epoch the next transaction must use; the old
            # epoch is fenced from then on. Older versions answer -1 and nothing changes.
            if resp.producer_epoch >= 0 and (
                resp.producer_id != txn.producer_id or resp.producer_epoch != txn.producer_epoch
            ):
                self._acc.reset_sequences(resp.producer_id, resp.producer_epoch)
                txn.epoch_bumped(resp.producer_id, resp.producer_epoch)
        txn.completed()
        self._txn_offsets_added = False
        self._txn_offsets_unsent = False

    async def _hand_off_transaction(self) -> tuple[int, int] | None:
        """Flush the open transaction and leave it open, for another process to commit or
        abort with EndTxn under the returned (producer id, epoch); None when it holds no
        record (the coordinator never heard of it). Internal: the Spark exactly-once sink's
        write tasks hand their transactions to the driver this way. Afterwards the producer
        can only be closed, and closing does not abort the transaction."""
        txn = self._require_txn()
        self._check_usable()
        await self.flush()
        if txn.state is TxnState.ABORTABLE_ERROR:
            raise TransactionStateError(
                f"cannot hand off: a record of the transaction failed ({txn.last_error!r})"
            ) from txn.last_error
        txn.handed_off()
        if not txn.partitions and not self._txn_offsets_added:
            return None
        return txn.producer_id, txn.producer_epoch

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[Producer]:
        """``async with producer.transaction():`` begins, commits on success, aborts on error.

        The abort runs shielded from cancellation (bounded by ``delivery_timeout_ms``), so a
        cancelled block still leaves no open transaction behind.
        """
        self.begin_transaction()
        try:
            yield self
        except BaseException:
            txn = self._require_txn()
            if not txn.is_fatal and txn.in_transaction:
                with anyio.CancelScope(shield=True):
                    with anyio.move_on_after(self._cfg.delivery_timeout_ms / 1000.0):
                        await self.abort_transaction()
            raise
        try:
            await self.commit_transaction()
        except BaseException:
            txn = self._require_txn()
            if txn.state is TxnState.ABORTABLE_ERROR:
                # A record of the transaction failed: the commit was refused, so abort.
                with anyio.CancelScope(shield=True):
                    with anyio.move_on_after(self._cfg.delivery_timeout_ms / 1000.0):
                        await self.abort_transaction()
            raise

    async def send_offsets_to_transaction(
        self,
        offsets: Mapping[TopicPartition, OffsetAndMetadata | int],
        group_metadata: Any,
    ) -> None:
        """Commit consumer offsets as part of the current transaction (exactly-once
        consume-transform-produce). ``group_metadata``: the consumer's group metadata
        (KIP-447: group id, generation id, member id, group instance id) as an object with
        those attributes, a dict, or just the group id.

        A lost connection, a request timeout and retriable answers are retried (the group
        coordinator found again) within ``max_block_ms``, as the other transaction calls. A fatal
        answer fails the producer and a refused commit (an unknown member, a stale
        generation...) leaves the transaction abortable; after any other error (the retries
        exhausted, a cancelled call) the transaction stays open without these offsets:
        call this again, or abort. A commit before a call succeeds would carry the records
        without the offsets: ``commit_transaction`` refuses it and leaves the transaction
        abortable."""
        txn = self._require_txn()
        self._check_usable()
        txn.check_can_add_offsets()
        group = group_metadata_fields(group_metadata)
        self._txn_offsets_unsent = True
        client = self._client
        assert client is not None
        if not txn.tv2:
            # Transactions version 2: TxnOffsetCommit v5 adds the group itself (KIP-890).
            await self._txn_call(
                ADD_OFFSETS_TO_TXN,
                AddOffsetsToTxnRequest(
                    transactional_id=txn.transactional_id,
                    producer_id=txn.producer_id,
                    producer_epoch=txn.producer_epoch,
                    group_id=group.group_id,
                ),
                "AddOffsetsToTxn",
            )
        self._txn_offsets_added = True
        by_topic: dict[str, list[TxnOffsetCommitRequestPartition]] = {}
        for tp, om in offsets.items():
            if isinstance(om, OffsetAndMetadata):
                offset, meta, epoch = om.offset, om.metadata, om.leader_epoch
            else:
                offset, meta, epoch = int(om), "", -1
            by_topic.setdefault(tp.topic, []).append(
                TxnOffsetCommitRequestPartition(
                    partition_index=tp.partition,
                    committed_offset=offset,
                    committed_leader_epoch=epoch,
                    committed_metadata=meta,
                )
            )
        body = TxnOffsetCommitRequest(
            transactional_id=txn.transactional_id,
            group_id=group.group_id,
            producer_id=txn.producer_id,
            producer_epoch=txn.producer_epoch,
            generation_id=group.generation_id,
            member_id=group.member_id,
            group_instance_id=group.group_instance_id,
            topics=[TxnOffsetCommitRequestTopic(name=t, partitions=p) for t, p in by_topic.items()],
        )
        # A lost connection or a request timeout is retried like the other transactional
        # calls (the broker may have applied the commit; the same offsets again are
        # harmless), the coordinator found again, as the Java client does.
        _resp, err = await self._coordinator_call(
            group.group_id,
            GROUP,
            TXN_OFFSET_COMMIT,
            body,
            "TxnOffsetCommit",
            _first_partition_error,
            max_version=None if txn.tv2 else TV1_MAX_TXN_OFFSET_COMMIT,
        )
        if err is None:
            self._txn_offsets_unsent = False
            return
        if is_fatal_txn_error(err):
            err = as_fenced(err)
            txn.fatal_error(err)
            if self._sender is not None:
                self._sender.fail_fatal(err)
        else:
            txn.abortable_error(err)
        raise err
