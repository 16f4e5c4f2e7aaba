"""``Consumer``: the public consumer (group member or manual assignment).

::

    async with Consumer("orders", bootstrap_servers="...", group_id="billing") as consumer:
        async for record in consumer:
            ...

Inside, beside the cluster client (connections, metadata; its own task group), the
consumer's anyio task group holds: the fetcher (one Fetch loop per leader broker), the
group coordinator (join/sync/heartbeat) when ``group_id`` is set, a position task that
turns "no position yet" into one (committed offset, or ``auto_offset_reset``), and the
auto-commit task. ``getmany``/``getone``/``async
for`` only drain the fetcher's buffer and wait for it; they never do network I/O themselves.

Positions and commits: a record counts as consumed once it is returned to the caller.
``async for`` takes records from ``getmany`` in chunks, and a chunk's records that were not
yet yielded are not committed (manual or auto commit, or on revocation): commits use the
offset of the first record still waiting in the chunk.

Shutdown: the background tasks (and the cluster client's connection readers) run in
``cluster.tasks.BackgroundTasks``, a task group in a task of its own that the scopes around
``async with`` do not reach. When such a scope is cancelled (an application's shutdown, an
outer ``move_on_after``), they keep running until ``close()`` has made its final auto commit,
committed on revocation and sent LeaveGroup (all within ``close_timeout_ms``); then they are
cancelled and the outer cancellation goes on from ``close()``. ``close()`` may be called from
any task and inside any cancel scope (``with anyio.fail_after(5): await consumer.close()``).
If a background task fails unexpectedly (a bug), the consumer's calls raise
:class:`~kafka_async.errors.BackgroundTaskError` from then on.

Observability (``hooks=``, a :class:`~kafka_async.observability.ClientHooks`): the consumer
hands its ``statistics`` to ``client_started`` once started and to ``client_closed`` when
closing, and reports one ``ConsumeEvent`` per partition each time ``getmany`` returns
records fresh from the fetch buffer. ``getone`` and ``async for`` take records from the
buffer through ``getmany`` in chunks (up to 500), so they report per partition per chunk,
when the chunk is taken, never per record: a span per record would cost ten times what
handing the record out costs. Records of a chunk that a revocation puts back before they
were yielded are reported again when read again. Without hooks, ``getmany`` tests one
attribute for None on the way in and one local on the way out.
"""

from __future__ import annotations

import logging
import re
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

import anyio
import anyio.abc
import anyio.lowlevel

from ..cluster.client import ClusterClient
from ..cluster.lifecycle import Lifecycle
from ..cluster.tasks import BackgroundTasks
from ..errors import (
    BackgroundTaskError,
    ClientClosedError,
    ConfigError,
    IncompatibleBrokerVersionError,
    KafkaError,
    KafkaTimeoutError,
    RecordDeserializationError,
)
from ..observability import ClientHooks, ConsumeEvent, call_hook
from ..observability.telemetry import MetricsPusher, close_budget, consumer_pusher
from ..records.batch import ready as _ready
from ..serialization import NeedsResolution, UnresolvedSerializerError, resolve_within
from ..structs import ClientState, ConsumerRecord, OffsetAndMetadata, TopicPartition
from ._signal import Signal
from .config import ConsumerConfig, ConsumerSettings, Deserializer
from .errors import CommitFailedError, LogTruncationError, NoOffsetForPartitionError
from .fetcher import Fetcher
from .group.coordinator import GroupCoordinator
from .group.driver import GroupDriver
from .group.heartbeat_coordinator import HeartbeatCoordinator
from .offsets import OffsetClient
from .positions import EARLIEST, LATEST, SubscriptionState

if TYPE_CHECKING:
    from typing_extensions import Unpack

log = logging.getLogger(__name__)

K = TypeVar("K")
V = TypeVar("V")

#: Records ``async for`` takes from the buffer at a time.
_ITER_CHUNK = 500
#: Records decoded between two checkpoints in ``getmany``.
_DRAIN_SLICE = 1000


@dataclass(frozen=True, slots=True)
class OffsetAndTimestamp:
    """``offsets_for_times`` result: the first offset with a timestamp >= the one asked."""

    offset: int
    timestamp: int


@dataclass(frozen=True, slots=True)
class ConsumerGroupMetadata:
    """The member's place in its group (KIP-447), for
    ``Producer.send_offsets_to_transaction``: the broker fences a transactional commit made
    with a stale generation, so a zombie that lost its partitions cannot commit for them.

    Take it right before each transaction's commit; it changes with every rebalance.
    Before the member has joined, ``generation_id`` is -1 and ``member_id`` is empty.
    """

    group_id: str
    generation_id: int = -1
    member_id: str = ""
    group_instance_id: str | None = None


class Consumer(Generic[K, V]):
    """An asyncio/trio Kafka consumer. See the module docstring and ``ConsumerConfig``.

    Settings are typed by :class:`~kafka_async.consumer.config.ConsumerSettings`;
    ``key_deserializer`` / ``value_deserializer`` (callables on ``bytes | None``) make the
    consumer a ``Consumer[K, V]`` of their return types, ``Consumer[bytes, bytes]`` without.
    ``topics`` subscribes at start (group mode, needs ``group_id``); or call
    ``subscribe``/``assign`` before or after ``start``. Use as ``async with`` or call
    ``start()``/``close()`` from one task.

    A deserializer that raises: ``getmany``, ``getone`` and ``async for`` first hand out the
    records before the bad one, then raise
    :class:`~kafka_async.errors.RecordDeserializationError` (``topic``, ``partition``,
    ``offset``, ``origin`` "key" or "value", the deserializer's exception as ``cause`` and
    ``__cause__``). The position stays AT the bad record, so every read raises the same error
    until ``seek(error.topic_partition, error.offset + 1)`` skips it: no record is lost or
    skipped silently (the Java client's ``RecordDeserializationException``).

    Settings (names and defaults follow aiokafka; times in milliseconds): the connection and
    security settings of :class:`~kafka_async.net.config.ClientConfig` and the consumer's own:

    .. settings:consumer begin (make generate writes this list from consumer/settings.py)

    * ``group_id`` (None): the consumer group to join; None: no group.
    * ``group_instance_id`` (None): static membership (KIP-345): a restart within the session
      keeps the partitions.
    * ``group_protocol`` ("classic"): 'classic' (JoinGroup/SyncGroup) or 'consumer' (KIP-848, the
      broker assigns).
    * ``group_remote_assignor`` (None): 'consumer' protocol: the broker's assignor ('uniform',
      'range'); None: its default.
    * ``client_rack`` (None): the rack this consumer runs in: fetch from a replica there
      (KIP-392).
    * ``key_deserializer`` (None): turns key bytes (or None) into the consumer's K.
    * ``value_deserializer`` (None): turns value bytes (or None) into the consumer's V.
    * ``fetch_max_wait_ms`` (500): how long the broker may hold a Fetch waiting for
      fetch_min_bytes.
    * ``fetch_max_bytes`` (50 MiB): bytes one Fetch response may carry.
    * ``fetch_min_bytes`` (1): bytes the broker waits for before it answers a Fetch.
    * ``max_partition_fetch_bytes`` (1 MiB): bytes one Fetch may carry per partition.
    * ``max_poll_records`` (None): records one getmany() returns at most; None: no limit.
    * ``auto_offset_reset`` ("latest"): where to start without a committed offset: 'earliest',
      'latest' or 'none' (raise).
    * ``enable_auto_commit`` (True): commit the offsets of records handed out every
      auto_commit_interval_ms.
    * ``auto_commit_interval_ms`` (5000): how often auto commit runs.
    * ``check_crcs`` (True): verify each record batch's CRC.
    * ``partition_assignment_strategy`` (("range", "cooperative-sticky")): classic protocol:
      assignors in order of preference (names, classes or instances).
    * ``max_poll_interval_ms`` (300000): longest gap between polls before the member leaves the
      group.
    * ``rebalance_timeout_ms`` (max_poll_interval_ms): how long the coordinator waits for members
      to rejoin.
    * ``session_timeout_ms`` (10000): the group drops a member silent this long.
    * ``heartbeat_interval_ms`` (3000): time between heartbeats (below session_timeout_ms).
    * ``isolation_level`` ("read_uncommitted"): 'read_committed': skip aborted transactions and
      stop at the first open one.
    * ``exclude_internal_topics`` (True): a subscription pattern never matches internal topics
      (__consumer_offsets).
    * ``enable_fetch_sessions`` (True): incremental fetch sessions (KIP-227); off for brokers that
      mishandle them.
    * ``max_decompressed_size`` (64 MiB): a compressed batch inflating past this is refused
      (decompression-bomb guard).
    * ``close_timeout_ms`` (5000): how long close() may take (final commit, LeaveGroup).
    * ``default_api_timeout_ms`` (60000): deadline of commit(), committed(), position() and the
      offset lookups unless they give timeout_ms; a moving coordinator or leader is asked again
      until then.
    * ``hooks`` (None): observability hooks (OpenTelemetry spans and metrics); None: off.
    * ``enable_metrics_push`` (True): push the metrics a broker's client-metrics subscription asks
      for (KIP-714).

    .. settings:consumer end
    """

    # Without deserializers keys and values stay bytes; each deserializer given sets K or V
    # to its return type. They are parameters rather than ConsumerSettings keys because mypy
    # picks K and V (and the bytes default when absent) by matching these overloads.
    @overload
    def __init__(
        self: Consumer[bytes, bytes],
        *topics: str,
        listener: object | None = None,
        key_deserializer: None = None,
        value_deserializer: None = None,
        **config: Unpack[ConsumerSettings],
    ) -> None: ...
    @overload
    def __init__(
        self: Consumer[K, bytes],
        *topics: str,
        listener: object | None = None,
        key_deserializer: Callable[[bytes | None], K],
        value_deserializer: None = None,
        **config: Unpack[ConsumerSettings],
    ) -> None: ...
    @overload
    def __init__(
        self: Consumer[bytes, V],
        *topics: str,
        listener: object | None = None,
        key_deserializer: None = None,
        value_deserializer: Callable[[bytes | None], V],
        **config: Unpack[ConsumerSettings],
    ) -> None: ...
    @overload
    def __init__(
        self,
        *topics: str,
        listener: object | None = None,
        key_deserializer: Callable[[bytes | None], K],
        value_deserializer: Callable[[bytes | None], V],
        **config: Unpack[ConsumerSettings],
    ) -> None: ...
    def __init__(
        self,
        *topics: str,
        listener: object | None = None,
        key_deserializer: Deserializer | None = None,
        value_deserializer: Deserializer | None = None,
        **config: Unpack[ConsumerSettings],
    ) -> None:
        self._config = ConsumerConfig.from_kwargs(
            key_deserializer=key_deserializer, value_deserializer=value_deserializer, **config
        )
        cfg = self._config
        self._subs = SubscriptionState(cfg.auto_offset_reset)
        self._changed = Signal()
        self._client = ClusterClient(cfg.client)
        self._offsets = OffsetClient(
            self._client,
            cfg.group_id,
            isolation_level=cfg.isolation,
            request_timeout=cfg.client.request_timeout,
            retry_backoff=cfg.client.retry_backoff_ms / 1000,
        )
        self._offsets.on_committed = self._on_committed
        self._fetcher = Fetcher(self._client, self._subs, cfg, self._changed)
        self._coordinator: GroupDriver | None = None
        if cfg.group_id is not None:
            # The two group protocols, one surface: classic (JoinGroup/SyncGroup) or
            # "consumer" (KIP-848, ConsumerGroupHeartbeat; the broker assigns).
            coordinator_class = (
                HeartbeatCoordinator if cfg.group_protocol == "consumer" else GroupCoordinator
            )
            self._coordinator = coordinator_class(
                self._client,
                cfg,
                self._subs,
                self._offsets,
                self._changed,
                on_revoke=self._on_revoke,
                committable=self._uncommitted,
            )
        self._life = Lifecycle("consumer")
        self._tg: BackgroundTasks | None = None
        #: The KIP-714 metrics push loop (``enable_metrics_push``), in ``_tg``.
        self._telemetry: MetricsPusher | None = None
        #: The API is closed: set by close() once its final commit and LeaveGroup are done
        #: (while they run, the API, commit() in the listener, still works).
        self._closed = False
        #: Bumped by subscribe()/assign(): a background unsubscribe must not undo them.
        self._sub_epoch = 0
        #: The epoch an unsubscribe() still in progress was made in, and its partitions
        #: (hidden from ``assignment()`` while their revocation runs).
        self._unsubscribed_at: int | None = None
        self._unsubscribing: frozenset[TopicPartition] = frozenset()
        #: Records taken from the buffer by ``async for``/``getone`` and not yet yielded.
        self._iter: deque[ConsumerRecord[K, V]] = deque()
        #: False while no partition can be paused (pause() was never called, or everything
        #: was resumed since): ``async for`` then hands out ``_iter`` without a per-record
        #: pause check.
        self._maybe_paused = False
        self._position_error: BaseException | None = None
        self._last_committed: dict[TopicPartition, int] = {}
        self._hooks = cfg.hooks
        if topics:
            self.subscribe(topics=topics, listener=listener)
        elif listener is not None:
            raise ConfigError("listener given without topics; pass it to subscribe()")

    # -- lifecycle ---------------------------------------------------------------------------

    @property
    def state(self) -> ClientState:
        """Where the consumer is in its life (``ClientState.RUNNING`` between start and
        close)."""
        return self._life.state

    @property
    def cluster(self) -> ClusterClient:
        """The consumer's cluster client (metadata, connections), for the layers built on
        the consumer (the aiokafka drop-in, the Spark pool). Internal: its API may change."""
        return self._client

    def raise_pending(self, *, retriable: bool = True) -> None:
        """Raise what the background tasks left for the application, as ``getmany()`` does
        (a failed task, a group error, a positions error); nothing when all is well. For the
        layers built on the consumer that wait on their own (the aiokafka drop-in's
        ``start()``); ``retriable=False`` leaves a retriable positions error to the retry."""
        self._raise_pending(retriable=retriable)

    async def __aenter__(self) -> Consumer[K, V]:
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
        """Connect (bootstrap) and start the background tasks; once."""
        await self._life.start(self._start, self._stop_background)
        if self._hooks is not None:
            call_hook(
                self._hooks.client_started,
                "consumer",
                self._config.client.client_id,
                self.statistics,
            )

    async def _start(self) -> None:
        await self._client.start()
        # Detached (see cluster/tasks.py), beside the cluster client's own group: cancelling
        # the scope around ``async with Consumer`` must leave the fetcher and the group
        # coordinator running until close() has committed and left the group.
        tg = self._tg = BackgroundTasks("consumer", on_error=self._background_failed)
        await tg.__aenter__()
        self._track_topics()
        await tg.start(self._fetcher.run)
        tg.start_soon(self._position_loop)
        if self._coordinator is not None:
            await tg.start(self._coordinator.run)
            if self._config.enable_auto_commit:
                tg.start_soon(self._auto_commit_loop)
        if self._config.enable_metrics_push:
            self._telemetry = consumer_pusher(
                self._client,
                self.statistics,
                client_id=self._config.client.client_id,
                group_id=self._config.group_id,
                group_instance_id=self._config.group_instance_id,
            )
            await tg.start(self._telemetry.run)

    async def _stop_background(self) -> None:
        """Close the API, stop the background tasks, then the cluster client (each
        shielded and bounded by itself)."""
        self._closed = True
        if self._tg is not None:
            await self._tg.aclose()
        await self._client.close()

    async def close(self) -> None:
        """Commit (auto commit), leave the group, stop everything. Returns within
        ``close_timeout_ms`` (plus a little) even when the brokers are gone; may be called
        from any task and inside any cancel scope (see ``cluster/lifecycle.py``)."""
        await self._life.close(self._close)
        self._closed = True

    async def _close(self) -> None:
        # One budget for the commit, LeaveGroup and the last metrics push together.
        deadline = anyio.current_time() + self._config.close_timeout_ms / 1000
        try:
            # Shielded by the lifecycle: close() often runs because the scope around ``async
            # with`` was cancelled; the background tasks are detached, so the final commit
            # and LeaveGroup still reach the broker. The deadline keeps it bounded.
            coordinator = self._coordinator
            if coordinator is not None:
                await self._life.phase(
                    "the final commit and LeaveGroup",
                    self._config.close_timeout_ms / 1000,
                    partial(self._commit_and_leave, coordinator),
                )
            if self._telemetry is not None:
                # The last metrics push, marked terminating, while connections are open.
                await self._telemetry.terminate(close_budget(deadline))
            await self._stop_background()
        finally:
            # After the final commit, so a last metric collection still sees it; in a
            # finally so an exporter never keeps reading a consumer that is gone.
            if self._hooks is not None:
                call_hook(
                    self._hooks.client_closed,
                    "consumer",
                    self._config.client.client_id,
                    self.statistics,
                )

    async def _commit_and_leave(self, coordinator: GroupDriver) -> None:
        deadline = self._config.close_timeout_ms / 1000
        end = time.monotonic() + deadline
        if self._config.enable_auto_commit:
            await self._final_commit(coordinator, deadline)
        await coordinator.leave_group(max(0.0, end - time.monotonic()))

    async def _final_commit(
        self,
        coordinator: GroupDriver,
        timeout: float,  # noqa: ASYNC109
    ) -> None:
        """close(): commit what the application received, when there is anything to commit
        and a generation to commit it in (else there is nothing to lose: a member that never
        joined owns no partitions)."""
        if self._subs.is_group_managed and coordinator.commit_refusal() is not None:
            return
        try:
            await self._commit_consumed(timeout=timeout, only_changed=True)
        except KafkaError as exc:
            log.warning("final commit failed: %s", exc)

    def _check_not_closed(self) -> None:
        """For calls that also work before ``start()`` (on a manual assignment)."""
        if self._closed:
            raise ClientClosedError("the consumer is closed")

    def _check_open(self) -> None:
        if self._closed:
            raise ClientClosedError("the consumer is closed")
        self._life.check(closing=True)

    def _track_topics(self) -> None:
        if self._subs.pattern is not None:
            self._client.set_topics(None)
            self._client.expect_topics(())
        elif self._subs.topics:
            self._client.add_topics(self._subs.topics)
            # A subscribed or assigned topic that does not exist is logged (WARNING once).
            self._client.expect_topics(self._subs.topics)

    # -- subscription ------------------------------------------------------------------------

    def subscribe(
        self,
        topics: Iterable[str] = (),
        pattern: str | re.Pattern[str] | None = None,
        listener: object | None = None,
    ) -> None:
        """Join the group for ``topics`` or for every topic matching ``pattern``.

        ``listener`` gets ``on_partitions_revoked``/``on_partitions_assigned`` (and
        ``on_partitions_lost``) calls, async or plain (see ``ConsumerRebalanceListener``).
        """
        if self._closed:
            raise ClientClosedError("the consumer is closed")
        if self._coordinator is None:
            raise ConfigError("subscribe() needs a group_id; use assign() without one")
        if isinstance(topics, str):
            topics = (topics,)
        topics = tuple(topics)
        if (pattern is None) == (not topics):
            raise ConfigError("subscribe: give either topics or pattern (exactly one)")
        if listener is not None and not (
            hasattr(listener, "on_partitions_revoked")
            and hasattr(listener, "on_partitions_assigned")
        ):
            raise ConfigError(
                "listener must have on_partitions_revoked and on_partitions_assigned methods"
            )
        self._sub_epoch += 1
        if pattern is not None:
            self._subs.subscribe_pattern(pattern)
            self._subs.match_pattern(self._client.metadata.topics)
        else:
            self._subs.subscribe(topics)
        self._coordinator.listener = listener
        if self._life.state is not ClientState.NEW:
            self._track_topics()
        self._coordinator.subscription_changed()
        self._changed.notify()

    def unsubscribe(self) -> None:
        """Stop consuming: give up every partition (and leave the group, in the background).

        No record of the partitions is returned from now on. Their revocation (the auto
        commit, then ``on_partitions_revoked``) runs in the group's task with the assignment
        and generation still in place, so a commit made by the listener lands.
        """
        if self._closed:
            raise ClientClosedError("the consumer is closed")
        self._client.expect_topics(())
        tps = set(self._subs.assignment)
        coordinator = self._coordinator
        tg = self._tg
        if coordinator is None or tg is None or not self._subs.is_group_managed:
            self._on_revoke(tps)
            self._subs.unsubscribe()
            if coordinator is not None:
                coordinator.membership.reset()
            self._changed.notify()
            return
        # Freeze the partitions at once (records taken by ``async for`` are put back), so
        # the commit on revocation covers exactly what the application received.
        self._subs.mark_revoking(tps)
        self._on_revoke(tps)
        epoch = self._sub_epoch
        self._unsubscribed_at = epoch
        self._unsubscribing = self._unsubscribing | tps

        def after() -> None:
            # In the group's task, once revoked and left: clear the subscription unless
            # subscribe()/assign() came meanwhile (they replaced it already).
            self._unsubscribing = self._unsubscribing - tps
            if self._sub_epoch == epoch:
                self._subs.unsubscribe()
                self._unsubscribed_at = None
            self._changed.notify()

        async def leave() -> None:
            await coordinator.leave_group(
                self._config.close_timeout_ms / 1000, reset=True, after=after
            )

        tg.start_soon(leave)
        self._changed.notify()

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Read exactly these partitions (no group membership). With a group_id the
        committed offsets are the starting points; else ``auto_offset_reset``."""
        if self._closed:
            raise ClientClosedError("the consumer is closed")
        tps = list(partitions)
        old = set(self._subs.assignment)
        self._sub_epoch += 1
        self._subs.assign_from_user(tps, awaiting_committed=self._config.group_id is not None)
        if self._config.group_id is None:
            for tp in tps:
                st = self._subs.assignment[tp]
                if st.position is None and st.reset_to is None:
                    st.reset_to = self._subs.default_reset
        self._on_revoke(old - set(tps))
        if self._life.state is not ClientState.NEW:
            self._track_topics()
        self._changed.notify()

    def assignment(self) -> set[TopicPartition]:
        """The partitions currently assigned to this consumer."""
        if self._unsubscribing:
            return set(self._subs.assignment) - self._unsubscribing
        return set(self._subs.assignment)

    def subscription(self) -> set[str]:
        """The subscribed topics (for a pattern: the topics it matches now)."""
        if self._unsubscribed_at == self._sub_epoch:
            return set()
        return set(self._subs.topics)

    def _on_revoke(self, tps: set[TopicPartition]) -> None:
        """Partitions are being given up: drop their buffered data. Records already taken
        by ``async for`` but not yet yielded are put back (the position is rewound to the
        first of them), so a commit now covers exactly what the application received."""
        if not tps:
            return
        self._fetcher.discard(tps)
        if self._iter:
            rewind: dict[TopicPartition, int] = {}
            keep: deque[ConsumerRecord[K, V]] = deque()
            for r in self._iter:
                tp = r.topic_partition
                if tp in tps:
                    rewind.setdefault(tp, r.offset)
                else:
                    keep.append(r)
            self._iter = keep
            for tp, offset in rewind.items():
                st = self._subs.assignment.get(tp)
                if st is not None:
                    st.position = offset
                    st.epoch += 1

    # -- positions ---------------------------------------------------------------------------

    def seek(self, partition: TopicPartition, offset: int) -> None:
        """Consume ``partition`` from ``offset`` on (the next getmany/iteration).

        ``ConfigError`` if ``partition`` is not assigned (before the first assignment,
        after a revocation: seek in ``on_partitions_assigned``), ``ClientClosedError``
        after close."""
        self._check_not_closed()
        self._subs.seek(partition, offset)
        self._last_committed.pop(partition, None)
        self._fetcher.discard({partition})
        self._drop_iter({partition})
        self._changed.notify()

    def _drop_iter(self, tps: set[TopicPartition]) -> None:
        if self._iter:
            self._iter = deque(r for r in self._iter if r.topic_partition not in tps)

    def _tps(self, partitions: tuple[TopicPartition, ...]) -> list[TopicPartition]:
        tps = list(partitions) or list(self._subs.assignment)
        for tp in tps:
            self._subs.state(tp)  # raises for an unassigned partition
        return tps

    async def seek_to_beginning(self, *partitions: TopicPartition) -> None:
        """Move to the earliest offset (of ``partitions``, or every assigned one: none
        before the first assignment)."""
        self._check_not_closed()
        for tp in self._tps(partitions):
            self._subs.request_reset(tp, EARLIEST)
            self._last_committed.pop(tp, None)
            self._fetcher.discard({tp})
            self._drop_iter({tp})
        self._changed.notify()

    async def seek_to_end(self, *partitions: TopicPartition) -> None:
        """Move to the end (only records produced from now on are read), for
        ``partitions`` or every assigned one."""
        self._check_not_closed()
        for tp in self._tps(partitions):
            self._subs.request_reset(tp, LATEST)
            self._last_committed.pop(tp, None)
            self._fetcher.discard({tp})
            self._drop_iter({tp})
        self._changed.notify()

    def _committable(self) -> dict[TopicPartition, OffsetAndMetadata]:
        """Positions of records handed to the caller (records taken by ``async for`` but not
        yet yielded do not count)."""
        offsets = self._subs.consumed_offsets()
        if self._iter:
            seen: set[TopicPartition] = set()
            for r in self._iter:
                tp = r.topic_partition
                if tp not in seen:
                    seen.add(tp)
                    if tp in offsets:
                        offsets[tp] = OffsetAndMetadata(r.offset, "", offsets[tp].leader_epoch)
        return offsets

    def _uncommitted(self) -> dict[TopicPartition, OffsetAndMetadata]:
        """Like ``_committable``, without partitions whose offset is already committed (the
        commit on revocation skips them)."""
        last = self._last_committed
        return {tp: om for tp, om in self._committable().items() if last.get(tp) != om.offset}

    async def position(
        self,
        partition: TopicPartition,
        timeout_ms: int | None = None,
    ) -> int:
        """The offset of the next record that will be returned for ``partition`` (waits
        until it is known: committed offset or reset).

        Waits up to ``timeout_ms`` (default ``default_api_timeout_ms``, 60 s, as Java's
        ``position``): a coordinator or leader that does not answer meanwhile is asked again
        by the background task, and only a non-retriable error (``NoOffsetForPartitionError``,
        an authorization error) ends the wait early; ``KafkaTimeoutError`` once it passes.
        """
        self._check_open()
        st = self._subs.state(partition)
        timeout = self._timeout("position", timeout_ms)
        with anyio.move_on_after(timeout):
            while True:
                self._raise_pending(retriable=False)
                st = self._subs.state(partition)
                if st.has_position and st.position is not None:
                    committable = self._committable().get(partition)
                    return committable.offset if committable else st.position
                event = self._changed.current()
                await self._changed.wait(0.5, event)
        last = self._position_error
        raise KafkaTimeoutError(
            f"position of {partition} unknown after {timeout:.3f} s"
            + (f" (last error: {last})" if last is not None else "")
        )

    def _timeout(self, what: str, timeout_ms: int | None) -> float:
        """The deadline in seconds of a call taking ``timeout_ms``: by default
        ``default_api_timeout_ms`` (Java's ``default.api.timeout.ms``), not one request's
        timeout, so a coordinator or leader moving meanwhile is waited out."""
        if timeout_ms is None:
            return self._config.default_api_timeout_ms / 1000
        if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int) or timeout_ms < 0:
            raise ConfigError(f"{what}: timeout_ms must be an integer >= 0, got {timeout_ms!r}")
        return timeout_ms / 1000

    @overload
    async def committed(
        self, partition: TopicPartition, timeout_ms: int | None = None
    ) -> int | None: ...

    @overload
    async def committed(
        self, partition: Iterable[TopicPartition], timeout_ms: int | None = None
    ) -> dict[TopicPartition, OffsetAndMetadata | None]: ...

    async def committed(
        self,
        partition: TopicPartition | Iterable[TopicPartition],
        timeout_ms: int | None = None,
    ) -> int | dict[TopicPartition, OffsetAndMetadata | None] | None:
        """The group's committed offsets, asked in one OffsetFetch request.

        Two forms:

        - one partition, ``await consumer.committed(tp)``: its committed offset as an
          ``int``, or None when nothing is committed (the form aiokafka has);
        - a collection of partitions, ``await consumer.committed([tp1, tp2])``: a dict with
          an entry for every partition asked, ``tp -> OffsetAndMetadata`` (offset, metadata
          and leader epoch), or ``tp -> None`` where nothing is committed (the Java client's
          ``committed(Set<TopicPartition>)``).

        Retries a moving or loading coordinator for up to ``timeout_ms`` (default
        ``default_api_timeout_ms``), then ``KafkaTimeoutError``."""
        self._check_open()
        timeout = self._timeout("committed", timeout_ms)
        # A TopicPartition is itself a tuple (an iterable): test for it before the collection.
        if isinstance(partition, TopicPartition):
            got = await self._offsets.fetch_committed([partition], timeout)
            om = got.get(partition)
            return None if om is None else om.offset
        wanted = list(partition)
        for tp in wanted:
            if not isinstance(tp, TopicPartition):
                raise ConfigError(f"committed: expected TopicPartition items, got {tp!r}")
        got = await self._offsets.fetch_committed(wanted, timeout)
        return {tp: got.get(tp) for tp in wanted}

    async def beginning_offsets(
        self, partitions: Iterable[TopicPartition], timeout_ms: int | None = None
    ) -> dict[TopicPartition, int]:
        """The earliest available offset of each partition.

        Retries leader changes for up to ``timeout_ms`` (default ``default_api_timeout_ms``),
        then ``KafkaTimeoutError``; the same holds for ``end_offsets`` and
        ``offsets_for_times``."""
        return await self._list(partitions, EARLIEST, timeout_ms, "beginning_offsets")

    async def end_offsets(
        self, partitions: Iterable[TopicPartition], timeout_ms: int | None = None
    ) -> dict[TopicPartition, int]:
        """The offset after the last record of each partition (the last stable offset
        under read_committed)."""
        return await self._list(partitions, LATEST, timeout_ms, "end_offsets")

    async def _list(
        self, partitions: Iterable[TopicPartition], ts: int, timeout_ms: int | None, what: str
    ) -> dict[TopicPartition, int]:
        self._check_open()
        timeout = self._timeout(what, timeout_ms)
        tps = list(partitions)
        got = await self._offsets.list_offsets(dict.fromkeys(tps, ts), timeout)
        return {tp: v[0] for tp, v in got.items() if v is not None}

    async def offsets_for_times(
        self, timestamps: Mapping[TopicPartition, int], timeout_ms: int | None = None
    ) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        """For each partition, the earliest offset whose timestamp is >= the given one
        (milliseconds since the epoch), or None if there is none."""
        self._check_open()
        timeout = self._timeout("offsets_for_times", timeout_ms)
        for tp, ts in timestamps.items():
            if isinstance(ts, bool) or not isinstance(ts, int) or ts < 0:
                raise ConfigError(f"offsets_for_times: bad timestamp {ts!r} for {tp}")
        got = await self._offsets.list_offsets(dict(timestamps), timeout)
        return {
            tp: (None if v is None else OffsetAndTimestamp(v[0], v[1])) for tp, v in got.items()
        }

    def highwater(self, partition: TopicPartition) -> int | None:
        """The partition's high watermark as of the last fetch (None before one)."""
        hw = self._subs.state(partition).high_watermark
        return None if hw < 0 else hw

    def last_stable_offset(self, partition: TopicPartition) -> int | None:
        """The partition's last stable offset as of the last fetch (None before one)."""
        lso = self._subs.state(partition).last_stable_offset
        return None if lso < 0 else lso

    # -- pause -------------------------------------------------------------------------------

    def pause(self, *partitions: TopicPartition) -> None:
        """Stop returning (and fetching) records of these partitions until ``resume``.

        ``ConfigError`` for a partition not assigned. A partition revoked and assigned
        again by a rebalance starts unpaused (as in the Java client)."""
        self._check_not_closed()
        self._subs.pause(partitions)
        self._maybe_paused = True
        self._changed.notify()

    def resume(self, *partitions: TopicPartition) -> None:
        """Return (and fetch) records of these paused partitions again."""
        self._check_not_closed()
        self._subs.resume(partitions)
        if not self._subs.paused():
            self._maybe_paused = False
        self._changed.notify()

    def paused(self) -> set[TopicPartition]:
        """The assigned partitions paused by ``pause``."""
        return set(self._subs.paused())

    # -- consuming ---------------------------------------------------------------------------

    def _background_failed(self, error: BackgroundTaskError) -> None:
        """A background task failed unexpectedly: getmany and friends raise ``error``."""
        self._life.fail(error)
        self._fetcher.data_ready.notify()

    def _raise_pending(self, *, retriable: bool = True) -> None:
        """Raise what the background tasks left for the application. ``retriable=False``
        (``getmany()``, ``position()``): a retriable positions error (a request timed out)
        stays for the background task to retry instead of ending the caller's wait."""
        if self._life.failure is not None:
            raise self._life.failure
        if self._coordinator is not None and self._coordinator.error is not None:
            err = self._coordinator.error
            if not isinstance(err, KafkaError) or self._coordinator.membership.failure is None:
                self._coordinator.error = None  # a listener error is raised once
            raise err
        if self._position_error is not None:
            err = self._position_error
            if not retriable and isinstance(err, KafkaError) and err.retriable:
                return
            self._position_error = None
            raise err

    async def getmany(
        self,
        *partitions: TopicPartition,
        timeout_ms: int = 0,
        max_records: int | None = None,
    ) -> dict[TopicPartition, list[ConsumerRecord[K, V]]]:
        """Records by partition: what is buffered now, else what arrives within
        ``timeout_ms`` (an empty dict if nothing does). ``partitions`` limits the result to
        those partitions; ``max_records`` (default ``max_poll_records``) caps the count."""
        self._check_open()
        if max_records is None:
            max_records = self._config.max_poll_records or 1_000_000_000
        elif max_records < 1:
            raise ConfigError(f"max_records must be >= 1, got {max_records}")
        only = frozenset(partitions) if partitions else None
        hooks = self._hooks
        start_ns = time.time_ns() if hooks is not None else 0
        if self._coordinator is not None:
            self._coordinator.polled()
        # Always a checkpoint, even when records are buffered: a caller looping over
        # getmany must not starve the fetch and socket-reader tasks of the event loop.
        await anyio.lowlevel.checkpoint()
        deadline = time.monotonic() + timeout_ms / 1000
        resolved: tuple[TopicPartition, int, str] | None = None
        while True:
            # A retriable positions error (a request that timed out) is not raised here: the
            # positions task retries it, as the Java client's poll does (it logs it).
            self._raise_pending(retriable=False)
            event = self._fetcher.data_ready.current()
            out = self._take_iter(max_records, only)
            # Records taken back from the iterator were reported when the iterator took
            # them from the buffer: only what follows them per partition is new.
            seen = {tp: len(r) for tp, r in out.items()} if out and hooks is not None else None
            count = sum(map(len, out.values()))
            while count < max_records:
                # Decoding is CPU work; a slice at a time with a checkpoint in between, so
                # the socket reader keeps pulling the next response in meanwhile (each
                # event-loop turn moves only one chunk of a large fetch response).
                try:
                    more = self._fetcher.drain(
                        min(max_records - count, _DRAIN_SLICE), only, holding=count > 0
                    )
                except RecordDeserializationError as exc:
                    # Raised only with nothing held (count == 0), position AT the record.
                    if not isinstance(exc.cause, NeedsResolution):
                        raise
                    resolved = await self._resolve_deserializer(exc, resolved)
                    continue
                if not more:
                    break
                for tp, recs in more.items():
                    count += len(recs)
                    if tp in out:
                        out[tp].extend(recs)
                    else:
                        out[tp] = recs
                if count < max_records and self._fetcher.has_data():
                    await anyio.lowlevel.checkpoint()
            if out:
                if hooks is not None:
                    self._report_consumed(hooks, out, seen, start_ns)
                return out
            left = deadline - time.monotonic()
            if left <= 0:
                return {}
            await self._fetcher.data_ready.wait(min(left, 0.5), event)

    async def _resolve_deserializer(
        self, exc: RecordDeserializationError, resolved: tuple[TopicPartition, int, str] | None
    ) -> tuple[TopicPartition, int, str]:
        """A deserializer needs async I/O for the record ``exc`` names (a schema id it has not
        cached): do it within ``default_api_timeout_ms``, without moving any position, so
        the next drain deserializes the same record again. A failure is that record's
        ``RecordDeserializationError`` with the resolver's error as ``cause``."""
        need = exc.cause
        assert isinstance(need, NeedsResolution)
        at = (exc.topic_partition, exc.offset, exc.origin)
        if at == resolved:
            cause: Exception = UnresolvedSerializerError(
                f"the {exc.origin} deserializer needs a resolution again right after it "
                f"resolved: {need}"
            )
            raise RecordDeserializationError(
                exc.topic, exc.partition, exc.offset, exc.origin, cause
            ) from cause
        try:
            await resolve_within(need, self._config.default_api_timeout_ms / 1000)
        except Exception as err:
            raise RecordDeserializationError(
                exc.topic, exc.partition, exc.offset, exc.origin, err
            ) from err
        return at

    def _report_consumed(
        self,
        hooks: ClientHooks,
        out: Mapping[TopicPartition, list[ConsumerRecord[K, V]]],
        seen: Mapping[TopicPartition, int] | None,
        start_ns: int,
    ) -> None:
        """One ``ConsumeEvent`` per partition with records new from the fetch buffer."""
        end_ns = time.time_ns()
        client_id = self._config.client.client_id
        group_id = self._config.group_id
        for tp, recs in out.items():
            skip = seen.get(tp, 0) if seen else 0
            if len(recs) <= skip:
                continue
            event = ConsumeEvent(
                client_id,
                group_id,
                tp.topic,
                tp.partition,
                len(recs) - skip,
                recs[skip].offset,
                recs[-1].offset,
                start_ns,
                end_ns,
            )
            call_hook(hooks.on_consume, event)

    def _take_iter(
        self, max_records: int, only: frozenset[TopicPartition] | None
    ) -> dict[TopicPartition, list[ConsumerRecord[K, V]]]:
        """Records already taken by ``async for`` go first, so nothing is reordered."""
        out: dict[TopicPartition, list[ConsumerRecord[K, V]]] = {}
        if not self._iter:
            return out
        keep: deque[ConsumerRecord[K, V]] = deque()
        n = 0
        # Records of paused partitions stay (for resume()): not returned, not skipped.
        paused = self._subs.paused()
        for r in self._iter:
            tp = r.topic_partition
            if n < max_records and (only is None or tp in only) and tp not in paused:
                out.setdefault(r.topic_partition, []).append(r)
                n += 1
            else:
                keep.append(r)
        self._iter = keep
        return out

    def _pop_iter(self) -> ConsumerRecord[K, V] | None:
        """The next record taken by ``async for`` that is not of a paused partition."""
        it = self._iter
        assignment = self._subs.assignment
        st = assignment.get(it[0].topic_partition)
        if st is None or not st.paused:
            record = it.popleft()
        else:
            # pause() came after these were taken: leave them in place for resume().
            paused = self._subs.paused()
            index = next((i for i, r in enumerate(it) if r.topic_partition not in paused), None)
            if index is None:
                return None
            record = it[index]
            del it[index]
        if self._coordinator is not None:
            self._coordinator.polled()
        return record

    async def getone(self, *partitions: TopicPartition) -> ConsumerRecord[K, V]:
        """The next record (of ``partitions``, if given); waits as long as it takes."""
        self._check_open()
        while True:
            if not partitions and self._iter:
                record = self._pop_iter()
                if record is not None:
                    return record
            batch = await self.getmany(
                *partitions, timeout_ms=1000, max_records=1 if partitions else _ITER_CHUNK
            )
            if not batch:
                continue
            it = self._iter
            if it:
                # Records of paused partitions kept back: the new ones go before them.
                records = [r for recs in batch.values() for r in recs]
                it.extendleft(reversed(records[1:]))
                return records[0]
            for recs in batch.values():
                it.extend(recs)
            return it.popleft()

    def __aiter__(self) -> Consumer[K, V]:
        return self

    def __anext__(self) -> Awaitable[ConsumerRecord[K, V]]:
        # Not a coroutine function: the common case (a record taken already, no partition
        # paused, so it is the next to hand out) answers with an awaitable that is done
        # already (records.batch.ready, in C: no coroutine per record); the rest waits.
        it = self._iter
        if it and not self._maybe_paused and not self._closed:
            coordinator = self._coordinator
            if coordinator is not None:
                coordinator.polled()
            return _ready(it.popleft())
        return self._next_record()

    async def _next_record(self) -> ConsumerRecord[K, V]:
        """``__anext__`` beyond the common case: closed, paused partitions, or nothing taken."""
        if self._closed:
            raise StopAsyncIteration
        if self._iter:
            record = self._pop_iter()
            if record is not None:
                return record
        try:
            return await self.getone()
        except ClientClosedError:
            raise StopAsyncIteration from None

    # -- commits -----------------------------------------------------------------------------

    async def commit(
        self,
        offsets: Mapping[TopicPartition, int | OffsetAndMetadata | tuple[int, str]] | None = None,
        *,
        timeout_ms: int | None = None,
    ) -> None:
        """Commit ``offsets`` (the next offset to read per partition, optionally with a
        metadata string), or the positions of every record returned so far.

        With nothing to commit (no record returned yet, before the first assignment, while
        a rebalance has taken the partitions away, ``offsets`` empty) it returns at once
        without a request, in any window, as the Java client and aiokafka do; so a
        ``getmany`` + ``commit()`` loop runs from start-up through rebalances.

        Raises ``CommitFailedError`` when offsets cannot be committed in the member's
        generation: the group rebalanced since these records were handed out (they will be
        read again by the partition's next owner), a partition in ``offsets`` is not
        assigned to this member, or the member holds no generation. Its ``cause`` is a
        ``RebalanceInProgressError`` when a rebalance the member takes part in is under way:
        commit again once it has its new assignment. ``ConfigError`` without a group_id.

        The commit has ``timeout_ms`` (default ``default_api_timeout_ms``, 60 s) to
        succeed, as Java's ``commitSync``: within it a moving or restarting coordinator
        (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS, a
        request timeout, a dropped connection) is looked up again and the commit resent;
        ``KafkaTimeoutError`` naming the deadline once it passes.
        """
        self._check_open()
        if self._config.group_id is None:
            raise ConfigError("commit() needs a group_id")
        deadline = self._timeout("commit", timeout_ms)
        if offsets is None:
            await self._commit_consumed(timeout=deadline)
            return
        normalized: dict[TopicPartition, OffsetAndMetadata] = {}
        for tp, value in offsets.items():
            if not isinstance(tp, TopicPartition):
                raise ConfigError(f"commit: keys must be TopicPartition, got {tp!r}")
            if isinstance(value, OffsetAndMetadata):
                om = value
            elif isinstance(value, tuple):
                om = OffsetAndMetadata(int(value[0]), str(value[1]))
            elif isinstance(value, int) and not isinstance(value, bool):
                om = OffsetAndMetadata(value)
            else:
                raise ConfigError(f"commit: bad offset {value!r} for {tp}")
            if om.offset < 0:
                raise ConfigError(f"commit: negative offset {om.offset} for {tp}")
            if self._subs.is_group_managed and tp not in self._subs.assignment:
                raise CommitFailedError(f"commit: {tp} is not assigned to this member")
            normalized[tp] = om
        await self._commit(normalized, deadline)

    async def _commit_consumed(
        self,
        timeout: float,  # noqa: ASYNC109 - a deadline
        *,
        only_changed: bool = False,
    ) -> None:
        def offsets() -> dict[TopicPartition, OffsetAndMetadata]:
            got = self._committable()
            if only_changed:
                got = {
                    tp: om for tp, om in got.items() if self._last_committed.get(tp) != om.offset
                }
            return got

        if not offsets():
            return  # nothing to commit: a no-op in any window (no generation needed)
        # Read again when the commit's turn comes (see OffsetClient.commit).
        await self._commit(offsets, timeout)

    async def _commit(
        self,
        offsets: Mapping[TopicPartition, OffsetAndMetadata]
        | Callable[[], Mapping[TopicPartition, OffsetAndMetadata]],
        timeout: float,  # noqa: ASYNC109 - a deadline
    ) -> None:
        if not callable(offsets) and not offsets:
            return
        gen, member, instance = -1, "", None
        coordinator = self._coordinator
        on_generation_error: Callable[[int], None] | None = None
        if coordinator is not None and self._subs.is_group_managed:
            refusal = coordinator.commit_refusal()
            if refusal is not None:
                raise refusal
            gen, member, instance = coordinator.generation()

            def on_generation_error(code: int) -> None:
                coordinator.on_commit_error(code, gen, member)

        await self._offsets.commit(
            offsets,
            generation_id=gen,
            member_id=member,
            group_instance_id=instance,
            timeout=timeout,
            on_generation_error=on_generation_error,
            current_generation=coordinator.current_generation if coordinator else None,
            # A refused partition is resent under a newer epoch only while it is still ours.
            assigned=self.assignment if self._subs.is_group_managed else None,
        )

    def _on_committed(self, offsets: Mapping[TopicPartition, OffsetAndMetadata]) -> None:
        for tp, om in offsets.items():
            self._last_committed[tp] = om.offset

    async def _auto_commit_loop(self) -> None:
        interval = self._config.auto_commit_interval_ms / 1000
        while True:
            await anyio.sleep(interval)
            if self._subs.is_group_managed and (
                self._coordinator is None or self._coordinator.commit_refusal() is not None
            ):
                continue  # no generation to commit in now (the revocation commits)
            try:
                await self._commit_consumed(self._config.client.request_timeout, only_changed=True)
            except KafkaError as exc:
                log.warning("auto commit failed: %s", exc)

    # -- positions task ----------------------------------------------------------------------

    async def _position_loop(self) -> None:
        """Give every assigned partition a position: committed offset, else reset."""
        backoff = self._config.client.retry_backoff_ms / 1000
        while True:
            event = self._changed.current()
            try:
                progressed = await self._update_positions()
            except KafkaError as exc:
                log.warning("could not determine positions: %s", exc)
                self._position_error = exc
                self._fetcher.data_ready.notify()
                await anyio.sleep(backoff)
                continue
            last = self._position_error
            if isinstance(last, KafkaError) and last.retriable:
                self._position_error = None  # retried and answered: no longer the last error
            if progressed:
                self._changed.notify()
                continue
            await self._changed.wait(1.0, event)

    async def _update_positions(self) -> bool:
        subs = self._subs
        progressed = False
        need = subs.needing_committed()
        if need and self._config.group_id is not None:
            got = await self._offsets.fetch_committed(need)
            missing = []
            for tp in need:
                st = subs.assignment.get(tp)
                om = got.get(tp)
                if st is not None and st.awaiting_committed:
                    # What the group has committed is known: a commit of the same offset
                    # (nothing consumed since) can be skipped.
                    if om is not None and om.offset >= 0:
                        self._last_committed[tp] = om.offset
                    else:
                        self._last_committed.pop(tp, None)
                if not subs.set_committed_or_reset(tp, om):
                    missing.append(tp)
            progressed = True
            if missing:
                self._position_error = NoOffsetForPartitionError(missing)
                self._fetcher.data_ready.notify()
        elif need:
            for tp in need:
                subs.set_committed_or_reset(tp, None)
            progressed = True
        resets = subs.needing_reset()
        if resets:
            epochs = {tp: subs.assignment[tp].epoch for tp in resets}
            got_offsets = await self._offsets.list_offsets(resets)
            for tp, value in got_offsets.items():
                if value is not None:
                    subs.set_reset_position(tp, value[0], epochs[tp])
            progressed = True
        if await self._validate_positions():
            progressed = True
        return progressed

    async def _validate_positions(self) -> bool:
        """KIP-320: ask the leaders where the epoch of each awaiting position ends
        (OffsetForLeaderEpoch) and let the subscription state decide: position good, moved
        back to where the logs part, or a LogTruncationError for the application
        (``auto_offset_reset="none"``; asked again once the application has seen it, until
        it seeks). True when something was asked."""
        subs = self._subs
        fetcher = self._fetcher
        waiting = {
            tp: v for tp, v in subs.needing_validation().items() if not fetcher.error_waiting(tp)
        }
        if not waiting:
            return False
        md = self._client.metadata
        asked = {tp: (md.leader_epoch_for(tp), last) for tp, (last, _, _) in waiting.items()}
        try:
            answers = await self._offsets.epoch_end_offsets(asked)
        except IncompatibleBrokerVersionError as exc:
            log.info("cannot validate positions (%s): fetching without it", exc)
            for tp, (_, _, epoch) in waiting.items():
                subs.skip_validation(tp, epoch)
            return True
        again = False
        for tp, answer in answers.items():
            last, position, epoch = waiting[tp]
            if answer is None or (isinstance(answer, KafkaError) and answer.retriable):
                again = True  # no leader, or fenced / unknown epoch: newer metadata first
                continue
            if isinstance(answer, KafkaError):
                fetcher.report(tp, answer)
                continue
            end_epoch, end_offset = answer
            st = subs.assignment.get(tp)
            current = st is not None and st.epoch == epoch and st.awaiting_validation
            lost = subs.complete_validation(tp, epoch, end_epoch, end_offset)
            if current and (end_epoch < 0 or end_offset < position):
                fetcher.truncations += 1
                log.warning(
                    "%s: log truncated: epoch %s (asked %s) ends at %s on the leader, below "
                    "the position %s",
                    tp,
                    end_epoch,
                    last,
                    end_offset,
                    position,
                )
            if lost is not None:
                fetcher.report(tp, LogTruncationError(tp, lost[0], lost[1], end_epoch))
        if again:
            self._client.request_metadata_update()
            await anyio.sleep(self._config.client.retry_backoff_ms / 1000)
        return True

    # -- introspection -----------------------------------------------------------------------

    def group_metadata(self) -> ConsumerGroupMetadata:
        """The current group id, generation, member id and group instance id (KIP-447).

        Raises ``ConfigError`` for a consumer without ``group_id``.
        """
        group_id = self._config.group_id
        if group_id is None or self._coordinator is None:
            raise ConfigError("group_metadata() needs a consumer with a group_id")
        generation, member, instance = self._coordinator.generation()
        return ConsumerGroupMetadata(group_id, generation, member, instance)

    def statistics(self) -> dict[str, Any]:
        """State at a glance: group, assignment with positions, buffer, fetch sessions."""
        parts = {}
        for tp, st in sorted(self._subs.assignment.items()):
            parts[f"{tp.topic}-{tp.partition}"] = {
                "position": st.position,
                "high_watermark": st.high_watermark,
                "lag": (st.high_watermark - st.position)
                if st.position is not None and st.high_watermark >= 0
                else None,
                "paused": st.paused,
                "awaiting_committed": st.awaiting_committed,
                "reset_to": st.reset_to,
                "committed": self._last_committed.get(tp),
            }
        return {
            "state": self._life.state.value,
            "closed": self._closed,
            "subscription": sorted(self._subs.topics),
            "pattern": self._subs.pattern.pattern if self._subs.pattern else None,
            "group": self._coordinator.statistics() if self._coordinator else None,
            "partitions": parts,
            "iterator_buffered": len(self._iter),
            "fetcher": self._fetcher.statistics(),
            "commits": self._offsets.commits,
            "commit_failures": self._offsets.commit_failures,
        }

    def __repr__(self) -> str:
        state = self._life.state.value
        group = f" group={self._config.group_id!r}" if self._config.group_id else ""
        return f"<Consumer {state}{group} partitions={len(self._subs.assignment)}>"

    # -- used by tests and the demo ----------------------------------------------------------

    async def wait_for_assignment(self, timeout: float = 30.0) -> set[TopicPartition]:  # noqa: ASYNC109
        """Wait until the group assigned this member at least one partition."""
        self._check_open()
        with anyio.move_on_after(timeout):
            while True:
                self._raise_pending()
                event = self._changed.current()
                if self._subs.assignment and (
                    self._coordinator is None or self._coordinator.stable
                ):
                    return set(self._subs.assignment)
                await self._changed.wait(0.2, event)
        raise KafkaTimeoutError(f"no partitions assigned within {timeout:.3f} s")
