"""``ShareConsumer``: a member of a share group (KIP-932, "queues for Kafka").

::

    async with ShareConsumer("jobs", bootstrap_servers="...", group_id="workers") as consumer:
        async for record in consumer:
            await handle(record)  # implicit mode: accepted when the next record is asked for

Many members read the same partitions; the broker hands each record to one member at a
time, under an acquisition lock (the group's ``share.record.lock.duration.ms``, 30 s by
default). The member acknowledges each record: ``accept`` (done), ``release`` (deliver it
again, to anyone) or ``reject`` (never again). A record whose lock expires before its
acknowledgement reaches the broker is delivered again (its delivery count goes up), up to
the group's ``share.delivery.count.limit``; a late acknowledgement of it fails
(``InvalidRecordStateError`` in ``commit()``'s result). Work that outlasts the lock renews it:
``await renew(record)`` (KIP-1222, ``AcknowledgeType.RENEW``; brokers with ShareAcknowledge
v2, Apache Kafka 4.2+) restarts the record's lock and the record stays with this member,
which acknowledges it as usual once done.

``share_acquire_mode``: ``"batch_optimized"`` (the default, as in the Java client) lets one
ShareFetch acquire whole record batches, so more than ``max_poll_records`` records may be
acquired (the extra ones wait, locked, in the buffer); ``"record_limit"`` (KIP-1206, brokers
with ShareFetch v2) makes ``max_poll_records`` a strict limit on what one fetch acquires.

Acknowledgement modes (``share_acknowledgement_mode``), as in the Java client:

* ``"implicit"`` (default): every record a poll (``getmany``, one step of ``async for``)
  delivered is accepted by the next poll, ``commit()`` or ``close()``; ``acknowledge`` is
  refused.
* ``"explicit"``: the application acknowledges every delivered record (``accept``,
  ``release``, ``reject`` or ``acknowledge(record, AcknowledgeType...)``) before it polls
  again; polling with records still unacknowledged raises ``AcknowledgementStateError``.

Acknowledgements ride on the next ShareFetch to the broker that delivered the records;
``commit()`` sends what is pending at once (ShareAcknowledge) and returns how each partition's
acknowledgements ended; ``commit_async()`` sends them without waiting. The acknowledgement
commit callback (``acknowledgement_commit_callback=`` or
``set_acknowledgement_commit_callback``) hears how every acknowledgement sent ended, however
it went (on a fetch, ``commit``, ``commit_async``, ``close``). ``close()`` accepts
(implicit) or releases (explicit) what was delivered and not acknowledged, releases what was
fetched but never delivered, closes the share sessions and leaves the group (epoch -1), all
within ``close_timeout_ms`` (or ``close(timeout=...)``).

The subscription: the constructor's topics, or ``subscribe(topics)`` at any time (a change
goes to the coordinator with the next heartbeat); ``unsubscribe()`` gives back what the
member holds (as close() does), closes its share sessions and leaves the group, in the
background; a later ``subscribe`` joins again. Polling with no subscription raises
``NotSubscribedError``. A poll is interrupted by cancelling it (anyio cancel scopes: the Java
client's ``wakeup()``); records it had not handed out stay buffered for the next poll.

Inside, beside the cluster client: the heartbeat task (``share/heartbeat.py`` driving the pure
``share/membership.py``) and the share fetcher (``share/fetcher.py``: one loop and one share
session per broker, the pure ``share/session.py``), in the consumer's ``BackgroundTasks``
group; the acknowledgement book (``share/acks.py``) is plain data. ``getmany`` and ``async
for`` only take from the fetcher's buffer and wait for it.

Observability (``hooks=``): ``client_started`` / ``client_closed`` with kind
``"share_consumer"`` and ``statistics``; one ``ConsumeEvent`` per partition per poll. With
``enable_metrics_push`` (on by default) the KIP-714 push loop
(``observability/telemetry.py``, ``share_consumer_pusher``) runs in the same group and
``close()`` makes its terminating push after the leave heartbeat.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

import anyio

from ...cluster.client import ClusterClient
from ...cluster.lifecycle import Lifecycle
from ...cluster.tasks import BackgroundTasks
from ...errors import BackgroundTaskError, ConfigError, KafkaError, KafkaTimeoutError
from ...observability import ConsumeEvent, call_hook
from ...observability.telemetry import MetricsPusher, close_budget, share_consumer_pusher
from ...serialization import (
    MessageField,
    NeedsResolution,
    UnresolvedSerializerError,
    deserialize,
    resolve_within,
)
from ...structs import ClientState, TopicPartition
from .._signal import Signal
from ..config import Deserializer
from .acks import UNSETTLED, AcknowledgementBook, AcknowledgementCommitCallback, AcknowledgeType
from .config import ShareConsumerConfig, ShareConsumerSettings
from .errors import AcknowledgementStateError, NotSubscribedError, RecordDeserializationError
from .fetcher import ShareFetcher
from .heartbeat import ShareHeartbeat
from .records import ShareRecord

if TYPE_CHECKING:
    from typing_extensions import Unpack

log = logging.getLogger(__name__)

K = TypeVar("K")
V = TypeVar("V")


class ShareConsumer(Generic[K, V]):
    """A share group member. See the module docstring and ``ShareConsumerConfig``.

    ``topics`` is the subscription (or call ``subscribe()`` later); ``group_id`` is required.
    ``key_deserializer`` / ``value_deserializer`` (callables on ``bytes | None``) make it a
    ``ShareConsumer[K, V]`` of their return types, ``ShareConsumer[bytes, bytes]`` without.
    A deserializer that raises: the poll returns the records before the bad one, and the
    next poll raises :class:`~kafka_async.consumer.share.RecordDeserializationError` (a
    :class:`kafka_async.errors.RecordDeserializationError`: ``topic``, ``partition``,
    ``offset``, ``origin``, ``cause``); the bad record was released, so the broker delivers
    it again (to this or another member) until the group's delivery attempt limit archives it.

    Settings (times in milliseconds): the connection and security settings of
    :class:`~kafka_async.net.config.ClientConfig` and the share consumer's own:

    .. settings:share begin (make generate writes this list from consumer/share/settings.py)

    * ``group_id`` (required): the share group to join.
    * ``share_acknowledgement_mode`` ("implicit"): 'implicit': a poll accepts the previous poll's
      records; 'explicit': the application acknowledges each record.
    * ``share_acquire_mode`` ("batch_optimized"): 'batch_optimized': a fetch acquires whole
      batches (may exceed max_poll_records); 'record_limit': never more than max_poll_records per
      fetch (brokers 4.2+).
    * ``client_rack`` (None): the rack this consumer runs in (sent to the coordinator when
      joining).
    * ``key_deserializer`` (None): turns key bytes (or None) into the share consumer's K.
    * ``value_deserializer`` (None): turns value bytes (or None) into the share consumer's V.
    * ``fetch_max_wait_ms`` (500): how long a ShareFetch may wait on the broker for
      fetch_min_bytes.
    * ``fetch_min_bytes`` (1): bytes the broker waits for before it answers a ShareFetch.
    * ``fetch_max_bytes`` (50 MiB): bytes one ShareFetch answer may carry.
    * ``max_poll_records`` (500): records one poll returns, and one ShareFetch acquires, at most.
    * ``check_crcs`` (True): verify each record batch's CRC.
    * ``max_decompressed_size`` (64 MiB): a compressed batch inflating past this is refused
      (decompression-bomb guard).
    * ``close_timeout_ms`` (5000): how long close() may take (acknowledgements, closing sessions,
      leaving).
    * ``acknowledgement_commit_callback`` (None): called with ({partition: offsets}, error or
      None) once per partition each time the broker answers acknowledgements (also
      set_acknowledgement_commit_callback()).
    * ``hooks`` (None): observability hooks (metrics, tracing); None: off.
    * ``enable_metrics_push`` (True): push the metrics a broker's client-metrics subscription asks
      for (KIP-714).

    .. settings:share end
    """

    @overload
    def __init__(
        self: ShareConsumer[bytes, bytes],
        *topics: str,
        key_deserializer: None = None,
        value_deserializer: None = None,
        **config: Unpack[ShareConsumerSettings],
    ) -> None: ...
    @overload
    def __init__(
        self: ShareConsumer[K, bytes],
        *topics: str,
        key_deserializer: Callable[[bytes | None], K],
        value_deserializer: None = None,
        **config: Unpack[ShareConsumerSettings],
    ) -> None: ...
    @overload
    def __init__(
        self: ShareConsumer[bytes, V],
        *topics: str,
        key_deserializer: None = None,
        value_deserializer: Callable[[bytes | None], V],
        **config: Unpack[ShareConsumerSettings],
    ) -> None: ...
    @overload
    def __init__(
        self,
        *topics: str,
        key_deserializer: Callable[[bytes | None], K],
        value_deserializer: Callable[[bytes | None], V],
        **config: Unpack[ShareConsumerSettings],
    ) -> None: ...
    def __init__(
        self,
        *topics: str,
        key_deserializer: Deserializer | None = None,
        value_deserializer: Deserializer | None = None,
        **config: Unpack[ShareConsumerSettings],
    ) -> None:
        self._config = ShareConsumerConfig.from_kwargs(
            key_deserializer=key_deserializer, value_deserializer=value_deserializer, **config
        )
        self._topics = _topic_names(topics)
        cfg = self._config
        self._changed = Signal()
        self._client = ClusterClient(cfg.client)
        self._book = AcknowledgementBook(listener=self._settled)
        self._ack_callback: AcknowledgementCommitCallback | None = (
            cfg.acknowledgement_commit_callback
        )
        #: An unsubscribe() is giving back what was held and leaving (a background task).
        self._leaving = False
        self._heartbeat = ShareHeartbeat(self._client, cfg, self._on_assignment, self._changed)
        self._fetcher = ShareFetcher(
            self._client,
            cfg,
            self._book,
            lambda: self._heartbeat.membership.member_id,
            self._changed,
        )
        self._life = Lifecycle("share consumer")
        self._tg: BackgroundTasks | None = None
        #: The KIP-714 metrics push loop (``enable_metrics_push``), in ``_tg``.
        self._telemetry: MetricsPusher | None = None
        self._hooks = cfg.hooks
        #: An error found while handing records out, raised by the next poll.
        self._deferred: KafkaError | None = None
        #: A deserializer's NeedsResolution met by _take (the record stays in the buffer):
        #: (the request, its partition, offset, "key"/"value").
        self._needs: tuple[NeedsResolution, TopicPartition, int, str] | None = None
        #: Why that resolution failed: _take then fails the record with it.
        self._resolve_failed: Exception | None = None
        self.records_delivered = 0
        self.polls = 0
        self.callback_errors = 0

    # -- lifecycle ---------------------------------------------------------------------------

    @property
    def state(self) -> ClientState:
        """Where the consumer is in its life."""
        return self._life.state

    @property
    def member_id(self) -> str:
        """This member's id in the share group (made by the client, fixed for its life)."""
        return self._heartbeat.membership.member_id

    def assignment(self) -> frozenset[TopicPartition]:
        """The partitions the coordinator assigned this member (others may share them)."""
        return self._fetcher.assigned

    def subscription(self) -> frozenset[str]:
        """The topics this member is subscribed to (empty after ``unsubscribe()``)."""
        return frozenset(self._topics)

    @property
    def acquisition_lock_timeout_ms(self) -> int | None:
        """The acquisition lock duration the brokers named in their last ShareFetch answer
        (the group's ``share.record.lock.duration.ms``); None before any answer."""
        ms = self._fetcher.lock_timeout_ms
        return ms if ms > 0 else None

    async def __aenter__(self) -> ShareConsumer[K, V]:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def start(self) -> None:
        """Connect and join the share group (returns before the first assignment); once."""
        await self._life.start(self._start, self._stop_background)
        if self._hooks is not None:
            call_hook(
                self._hooks.client_started,
                "share_consumer",
                self._config.client.client_id,
                self.statistics,
            )

    async def _start(self) -> None:
        await self._client.start()
        self._client.set_topics(self._topics)
        tg = self._tg = BackgroundTasks("share consumer", on_error=self._background_failed)
        await tg.__aenter__()
        await tg.start(self._fetcher.run)
        if self._topics:
            self._heartbeat.subscribe(self._topics)
        await tg.start(self._heartbeat.run)
        if self._config.enable_metrics_push:
            self._telemetry = share_consumer_pusher(
                self._client,
                self.statistics,
                client_id=self._config.client.client_id,
                group_id=self._config.group_id,
            )
            await tg.start(self._telemetry.run)

    def _background_failed(self, error: BackgroundTaskError) -> None:
        self._life.fail(error)
        self._changed.notify()

    async def _stop_background(self) -> None:
        if self._tg is not None:
            await self._tg.aclose()
        await self._client.close()

    async def close(self, timeout: float | None = None) -> None:  # noqa: ASYNC109 - a deadline
        """Acknowledge what was delivered (implicit: accept; explicit: release what is
        unacknowledged), release what was fetched but not delivered, close the share
        sessions, leave the group, stop. Returns within ``timeout`` seconds (default
        ``close_timeout_ms``; plus a little) even when the brokers are gone; callable from
        any task and cancel scope. A negative ``timeout`` is a ``ConfigError``."""
        if timeout is None:
            deadline = self._config.close_timeout_ms / 1000
        elif isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0:
            raise ConfigError(f"close: timeout must be seconds >= 0 or None, got {timeout!r}")
        else:
            deadline = float(timeout)
        await self._life.close(partial(self._close, deadline))

    async def _close(self, deadline: float) -> None:
        try:
            end = time.monotonic() + deadline
            # One budget for the acknowledgements, the leave and the last metrics push.
            push_deadline = anyio.current_time() + deadline
            if self._tg is not None and self._life.failure is None:
                await self._life.phase(
                    "releasing acquired records and closing share sessions",
                    deadline,
                    self._close_sessions,
                )
                await self._life.phase(
                    "the leave heartbeat",
                    max(0.0, end - time.monotonic()),
                    partial(self._heartbeat.leave, max(0.0, end - time.monotonic())),
                )
            if self._telemetry is not None:
                # The last metrics push, marked terminating, while connections are open.
                await self._telemetry.terminate(close_budget(push_deadline))
            await self._stop_background()
        finally:
            if self._hooks is not None:
                call_hook(
                    self._hooks.client_closed,
                    "share_consumer",
                    self._config.client.client_id,
                    self.statistics,
                )

    async def _close_sessions(self) -> None:
        self._settle_delivered()
        await self._fetcher.close_sessions()

    def _on_assignment(self, partitions: frozenset[TopicPartition]) -> None:
        # Unsubscribed: a straggling answer's assignment is not read from.
        self._fetcher.set_assignment(partitions if self._topics else frozenset())

    # -- the subscription --------------------------------------------------------------------

    def subscribe(self, topics: Iterable[str]) -> None:
        """Subscribe to exactly ``topics`` (a name or names), replacing the subscription.
        Before ``start()`` it is what the member joins with; later the new subscription
        goes to the coordinator with the next heartbeat (at once), which then assigns
        partitions of these topics. An empty ``topics`` is ``unsubscribe()``."""
        self._life.check_not_closed()
        names = _topic_names((topics,) if isinstance(topics, str) else tuple(topics))
        if not names:
            self.unsubscribe()
            return
        self._topics = names
        if self._running():
            self._client.set_topics(names)
            if not self._leaving:  # else the unsubscribe task joins again once it left
                self._heartbeat.subscribe(names)
        log.info("share consumer subscribed to %s", ", ".join(names))
        self._changed.notify()

    def unsubscribe(self) -> None:
        """Stop reading: what was delivered is acknowledged as ``close()`` does (implicit:
        accepted; explicit: the unacknowledged ones released), what was fetched but not
        delivered is released, the share sessions are closed and the member leaves the
        group, in the background (within ``close_timeout_ms``). From now on the assignment
        is empty and a poll raises ``NotSubscribedError`` until ``subscribe()``."""
        self._life.check_not_closed()
        had = self._topics
        self._topics = ()
        self._changed.notify()
        if not had or not self._running():
            return
        self._settle_delivered()
        self._fetcher.set_assignment(frozenset())
        log.info("share consumer unsubscribed (was %s)", ", ".join(had))
        if not self._leaving and self._tg is not None:
            self._leaving = True
            self._tg.start_soon(self._give_back_and_leave)

    def _running(self) -> bool:
        return self._tg is not None and self._life.state is ClientState.RUNNING

    def _settle_delivered(self) -> None:
        """close() and unsubscribe(): acknowledge what the application holds."""
        if self._config.explicit:
            released = self._book.acknowledge_delivered(AcknowledgeType.RELEASE)
            if released:
                log.info("share consumer: releasing %d unacknowledged records", released)
        else:
            self._book.acknowledge_delivered(AcknowledgeType.ACCEPT)

    async def _give_back_and_leave(self) -> None:
        """unsubscribe()'s task: release the buffer, close the share sessions (with what is
        pending), leave; then join again if ``subscribe()`` came meanwhile."""
        try:
            limit = self._config.close_timeout_ms / 1000
            end = time.monotonic() + limit
            with anyio.move_on_after(limit):
                await self._fetcher.close_sessions(stop=False)
            await self._heartbeat.leave(max(0.0, end - time.monotonic()))
        finally:
            self._leaving = False
        if self._topics and self._running():
            self._client.set_topics(self._topics)
            self._heartbeat.subscribe(self._topics)
        self._changed.notify()

    def _check(self) -> None:
        self._life.check()
        error = self._heartbeat.error or self._fetcher.error
        if error is not None:
            raise error

    # -- acknowledgements --------------------------------------------------------------------

    def set_acknowledgement_commit_callback(
        self, callback: AcknowledgementCommitCallback | None
    ) -> None:
        """Call ``callback({partition: offsets}, error)`` once per partition each time a
        broker answers acknowledgements (riding on a fetch, or sent by ``commit``,
        ``commit_async`` or ``close``; also when the request failed: ``error`` says why;
        None when the broker applied them). The offsets are the records acknowledged.
        It runs in the task that got the answer (a background task, or the one calling
        ``commit``/``close``), so it must not block; what it raises is logged and counted
        (``statistics()["acknowledgement_callback_errors"]``), never breaks the consumer.
        None removes it. Replaces ``acknowledgement_commit_callback=``."""
        if callback is not None and not callable(callback):
            raise ConfigError(
                f"acknowledgement commit callback: expected a callable or None, got {callback!r}"
            )
        self._ack_callback = callback

    def _settled(
        self, tp: TopicPartition, offsets: frozenset[int], error: KafkaError | None
    ) -> None:
        callback = self._ack_callback
        if callback is None:
            return
        try:
            callback({tp: offsets}, error)
        except Exception:
            self.callback_errors += 1
            log.exception("the acknowledgement commit callback raised (for %s)", tp)

    def acknowledge(
        self, record: ShareRecord[K, V], type: AcknowledgeType = AcknowledgeType.ACCEPT
    ) -> None:
        """Acknowledge one delivered record (explicit mode). It is sent with the next fetch
        from its broker, or by ``commit()``/``close()``. ``AcknowledgeType.RENEW`` keeps
        the record (still to be acknowledged) and has its lock renewed in the background at
        once; :meth:`renew` does the same and waits for the broker's answer."""
        self._life.check()
        if not self._config.explicit:
            raise AcknowledgementStateError(
                "acknowledge: this consumer uses implicit acknowledgement (each poll accepts "
                "the previous poll's records); set share_acknowledgement_mode='explicit'"
            )
        self._book.acknowledge(
            TopicPartition(record.topic, record.partition),
            record.offset,
            type,
            record.delivery_count,
        )
        if type is AcknowledgeType.RENEW:
            self._fetcher.wake()

    async def renew(
        self,
        *records: ShareRecord[K, V],
        timeout: float | None = None,  # noqa: ASYNC109 - a deadline
    ) -> None:
        """Extend the acquisition locks of delivered records (KIP-1222 RENEW): each lock
        starts again at the group's ``share.record.lock.duration.ms``, the record stays
        with this member and is still to be acknowledged (explicit mode: ``accept``,
        ``release`` or ``reject``; implicit mode: the next poll accepts it). Sends at once
        (a ShareAcknowledge v2 to each broker concerned, with what else is pending there)
        and returns when the brokers applied the renewals. Either mode.

        Raises ``AcknowledgementStateError`` for a record the consumer does not hold
        (already acknowledged, or a stale record object); ``IncompatibleBrokerVersionError``
        naming ShareAcknowledge v2 when a broker does not advertise it (nothing is sent);
        the broker's typed error when it refused (``InvalidRecordStateError``: the lock had
        already expired and the record may be with another member);
        ``KafkaTimeoutError`` after ``timeout`` seconds (default ``request_timeout_ms``)."""
        self._check()
        held: list[tuple[TopicPartition, int, int]] = []
        for record in records:
            tp = TopicPartition(record.topic, record.partition)
            node_id = self._book.holder(tp, record.offset, record.delivery_count)
            held.append((tp, record.offset, node_id))
        nodes = {node_id for _, _, node_id in held}
        for node_id in sorted(nodes):
            await self._fetcher.check_renew(node_id)
        for tp, offset, _ in held:
            self._book.renew(tp, offset)
            self._book.renewals[tp, offset] = UNSETTLED
        limit = self._config.client.request_timeout if timeout is None else timeout
        try:
            with anyio.move_on_after(limit):
                async with anyio.create_task_group() as tg:
                    for node_id in sorted(nodes):
                        tg.start_soon(self._fetcher.acknowledge, node_id)
            outcomes = [self._book.renewals.get((tp, offset), UNSETTLED) for tp, offset, _ in held]
        finally:
            for tp, offset, _ in held:
                self._book.renewals.pop((tp, offset), None)
        for (tp, offset, _), outcome in zip(held, outcomes, strict=True):
            if outcome is UNSETTLED:
                raise KafkaTimeoutError(
                    f"renew: no broker answered the renewal of {tp.topic}-{tp.partition} "
                    f"offset {offset} within {limit:.3f} s"
                )
            if isinstance(outcome, KafkaError):
                raise outcome

    def accept(self, record: ShareRecord[K, V]) -> None:
        """The record is processed: it is never delivered again."""
        self.acknowledge(record, AcknowledgeType.ACCEPT)

    def release(self, record: ShareRecord[K, V]) -> None:
        """Give the record back: the broker delivers it again (delivery count + 1)."""
        self.acknowledge(record, AcknowledgeType.RELEASE)

    def reject(self, record: ShareRecord[K, V]) -> None:
        """The record cannot be processed: it is never delivered again."""
        self.acknowledge(record, AcknowledgeType.REJECT)

    async def commit(
        self,
        timeout: float | None = None,  # noqa: ASYNC109 - a deadline
    ) -> dict[TopicPartition, KafkaError | None]:
        """Send every pending acknowledgement now (ShareAcknowledge to each broker) and
        return, per partition, how its acknowledgements ended since the last ``commit()``
        (those that rode on fetches too): None when the broker applied them, else the typed
        error (e.g. ``InvalidRecordStateError`` for a record whose lock had expired). In
        implicit mode the records delivered so far are accepted first. Raises
        ``KafkaTimeoutError`` when the brokers did not answer within ``timeout`` seconds
        (default ``request_timeout_ms``); the abandoned acknowledgements are then reported
        (as failed) by the next ``commit()``."""
        self._check()
        if not self._config.explicit:
            self._book.acknowledge_delivered(AcknowledgeType.ACCEPT)
        limit = self._config.client.request_timeout if timeout is None else timeout
        with anyio.move_on_after(limit):
            async with anyio.create_task_group() as tg:
                for node_id in self._book.pending_nodes():
                    tg.start_soon(self._fetcher.acknowledge, node_id)
            return self._book.take_results()
        raise KafkaTimeoutError(
            f"commit: the brokers did not answer within {limit:.3f} s; the acknowledgements "
            "not answered are reported as failed by the next commit()"
        )

    def commit_async(self) -> None:
        """Send every pending acknowledgement now (a ShareAcknowledge to each broker, in
        the background) without waiting for the answers; in implicit mode the records
        delivered so far are accepted first. How they ended goes to the acknowledgement
        commit callback and into the next ``commit()``'s result."""
        self._check()
        if not self._config.explicit:
            self._book.acknowledge_delivered(AcknowledgeType.ACCEPT)
        tg = self._tg
        assert tg is not None  # running (checked)
        for node_id in sorted(self._book.pending_nodes()):
            tg.start_soon(self._fetcher.acknowledge, node_id)

    # -- polling -----------------------------------------------------------------------------

    def _poll_step(self) -> None:
        """What every poll does first: implicit mode accepts what the last one delivered;
        explicit mode insists that all of it was acknowledged."""
        self._check()
        if not self._topics:
            raise NotSubscribedError(
                "the share consumer is not subscribed to any topic: subscribe() first"
            )
        if self._deferred is not None:
            error, self._deferred = self._deferred, None
            raise error
        if self._config.explicit:
            left = self._book.unacknowledged()
            if left:
                raise AcknowledgementStateError(
                    f"{left} record(s) delivered earlier are not acknowledged: in explicit "
                    "mode acknowledge every record (accept, release or reject) before polling "
                    "again"
                )
        elif self._book.acknowledge_delivered(AcknowledgeType.ACCEPT):
            self._fetcher.wake()

    async def getmany(
        self, timeout_ms: int = 0, max_records: int | None = None
    ) -> dict[TopicPartition, list[ShareRecord[K, V]]]:
        """Records acquired for this member, by partition (at most ``max_records``, default
        ``max_poll_records``), waiting up to ``timeout_ms`` for some; {} when none came."""
        self._poll_step()
        self.polls += 1
        limit = max_records or self._config.max_poll_records
        start_ns = time.time_ns() if self._hooks is not None else 0
        with anyio.move_on_after(max(timeout_ms, 0) / 1000):
            while not self._fetcher.buffer:
                event = self._changed.current()
                self._check()
                await self._changed.wait(None, event)
        self._check()
        out = self._take(limit)
        resolved: tuple[TopicPartition, int, str] | None = None
        while self._needs is not None and not out:
            # A deserializer needs async I/O (a schema id it has not cached) for the first
            # record: do it, then take again (the record waits in the buffer meanwhile).
            need, tp, offset, origin = self._needs
            self._needs = None
            if (tp, offset, origin) == resolved:
                self._resolve_failed = UnresolvedSerializerError(
                    f"the {origin} deserializer needs a resolution again right after it "
                    f"resolved: {need}"
                )
            else:
                try:
                    await resolve_within(need, self._config.client.request_timeout_ms / 1000)
                except Exception as err:
                    self._resolve_failed = err  # the record fails with it, as a raise would
                resolved = (tp, offset, origin)
            try:
                out = self._take(limit)
            finally:
                self._resolve_failed = None
        if self._hooks is not None and out:
            self._report(out, start_ns)
        return out

    def _take(self, limit: int) -> dict[TopicPartition, list[ShareRecord[K, V]]]:
        out: dict[TopicPartition, list[ShareRecord[K, V]]] = {}
        buffer = self._fetcher.buffer
        kd = self._config.key_deserializer
        vd = self._config.value_deserializer
        self._needs = None
        taken = 0
        while buffer and taken < limit:
            completed = buffer[0]
            tp = completed.tp
            node_id = completed.node_id
            records = completed.records
            bucket = out.setdefault(tp, [])
            n = 0
            while records and taken < limit:
                r = records.popleft()
                n += 1
                origin = "key"
                try:
                    key: Any = (
                        r.key
                        if kd is None
                        else deserialize(kd, r.key, tp.topic, MessageField.KEY, r.headers)
                    )
                    origin = "value"
                    value: Any = (
                        r.value
                        if vd is None
                        else deserialize(vd, r.value, tp.topic, MessageField.VALUE, r.headers)
                    )
                except Exception as exc:
                    if isinstance(exc, NeedsResolution):
                        if self._resolve_failed is None:
                            # Back into the buffer: getmany resolves, then takes it again.
                            records.appendleft(r)
                            n -= 1
                            self._needs = (exc, tp, r.offset, origin)
                            break
                        exc = self._resolve_failed
                    self._book.add(node_id, tp, r.offset, int(AcknowledgeType.RELEASE))
                    error = RecordDeserializationError(
                        tp.topic, tp.partition, r.offset, origin, exc
                    )
                    self._fetcher.delivered_from(node_id, n)
                    if not records:
                        buffer.popleft()
                    if not bucket:
                        del out[tp]
                    if out:
                        self._deferred = error
                        return out
                    raise error from exc
                bucket.append(
                    ShareRecord(
                        tp.topic,
                        tp.partition,
                        r.offset,
                        r.timestamp,
                        r.timestamp_type,
                        key,
                        value,
                        list(r.headers),
                        r.leader_epoch,
                        -1 if r.key is None else len(r.key),
                        -1 if r.value is None else len(r.value),
                        r.delivery_count,
                    )
                )
                self._book.deliver(tp, r.offset, node_id, r.delivery_count)
                taken += 1
            self._fetcher.delivered_from(node_id, n)
            if not records:
                buffer.popleft()
            if not bucket:
                del out[tp]
            if self._needs is not None:
                break
        self.records_delivered += taken
        return out

    def _report(self, out: Mapping[TopicPartition, list[ShareRecord[K, V]]], start_ns: int) -> None:
        assert self._hooks is not None
        end_ns = time.time_ns()
        for tp, records in out.items():
            call_hook(
                self._hooks.on_consume,
                ConsumeEvent(
                    self._config.client.client_id,
                    self._config.group_id,
                    tp.topic,
                    tp.partition,
                    len(records),
                    records[0].offset,
                    records[-1].offset,
                    start_ns,
                    end_ns,
                ),
            )

    async def getone(self, timeout_ms: int | None = None) -> ShareRecord[K, V] | None:
        """One record (a poll of one), waiting up to ``timeout_ms`` (None: until one
        comes); None when none came in time."""
        with anyio.move_on_after(None if timeout_ms is None else timeout_ms / 1000):
            while True:
                got = await self.getmany(timeout_ms=1000, max_records=1)
                for records in got.values():
                    return records[0]
        return None

    def __aiter__(self) -> ShareConsumer[K, V]:
        return self

    async def __anext__(self) -> ShareRecord[K, V]:
        """The next record: each step is a poll of one (implicit mode accepts the record
        before it; explicit mode needs it acknowledged). Ends when the consumer closes."""
        while True:
            if self._life.closed:
                raise StopAsyncIteration
            try:
                got = await self.getmany(timeout_ms=1000, max_records=1)
            except KafkaError:
                if self._life.closed:
                    raise StopAsyncIteration from None
                raise
            for records in got.values():
                return records[0]

    # -- introspection -----------------------------------------------------------------------

    def statistics(self) -> dict[str, Any]:
        """A plain dict: lifecycle ``state``, the membership, sessions and acknowledgements."""
        book = self._book
        return {
            "state": self._life.state.value,
            "client_id": self._config.client.client_id,
            "share_acknowledgement_mode": self._config.share_acknowledgement_mode,
            "subscription": sorted(self._topics),
            "group": dict(self._heartbeat.statistics()),
            "fetcher": dict(self._fetcher.statistics()),
            "polls": self.polls,
            "records_delivered": self.records_delivered,
            "unacknowledged": book.unacknowledged(),
            "pending_acknowledgements": book.pending_count(),
            "acknowledged": dict(book.sent),
            "acknowledgements_failed": book.failed,
            "acknowledgement_callback_errors": self.callback_errors,
            "cluster": self._client.statistics(),
        }


#: Kafka's rule for topic names: 1 to 249 of these characters, and not "." or "..".
_TOPIC_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
_MAX_TOPIC_NAME = 249


def _topic_names(topics: Iterable[object]) -> tuple[str, ...]:
    """Checked, sorted, distinct topic names. A name Kafka cannot have is refused here (the
    broker would accept it in the subscription and never assign anything)."""
    names: set[str] = set()
    for topic in topics:
        if not isinstance(topic, str) or not topic:
            raise ConfigError(f"topics: expected non-empty topic names, got {topic!r}")
        if (
            topic in (".", "..")
            or len(topic) > _MAX_TOPIC_NAME
            or not _TOPIC_CHARS.issuperset(topic)
        ):
            raise ConfigError(
                f"topics: {topic[:60]!r} is not a valid topic name (1 to {_MAX_TOPIC_NAME} "
                "ASCII letters, digits, '.', '_' and '-'; not '.' or '..')"
            )
        names.add(topic)
    return tuple(sorted(names))


__all__ = ["ShareConsumer"]
