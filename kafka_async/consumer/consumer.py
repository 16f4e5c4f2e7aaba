"""``Consumer``: the public consumer (group member or manual assignment).

::

    async with Consumer("orders", bootstrap_servers="...", group_id="billing") as consumer:
        async for record in consumer:
            ...

Inside, one anyio task group holds: the cluster client (connections, metadata), the
fetcher (one Fetch loop per leader broker), the group coordinator (join/sync/heartbeat)
when ``group_id`` is set, a position task that turns "no position yet" into one (committed
offset, or ``auto_offset_reset``), and the auto-commit task. ``getmany``/``getone``/``async
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
from collections.abc import Callable, Iterable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

import anyio
import anyio.abc
import anyio.lowlevel

from ..cluster.client import ClusterClient
from ..cluster.tasks import BackgroundTasks
from ..errors import (
    BackgroundTaskError,
    ClientClosedError,
    ConfigError,
    KafkaError,
    KafkaTimeoutError,
)
from ..observability import ClientHooks, ConsumeEvent, call_hook
from ..structs import ConsumerRecord, OffsetAndMetadata, TopicPartition
from ._signal import Signal
from .config import ConsumerConfig, ConsumerSettings, Deserializer
from .errors import CommitFailedError, NoOffsetForPartitionError
from .fetcher import Fetcher
from .group.coordinator import GroupCoordinator
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
        self._coordinator: GroupCoordinator | None = None
        if cfg.group_id is not None:
            self._coordinator = GroupCoordinator(
                self._client,
                cfg,
                self._subs,
                self._offsets,
                self._changed,
                on_revoke=self._on_revoke,
                committable=self._uncommitted,
            )
        self._stack: AsyncExitStack | None = None
        self._tg: BackgroundTasks | None = None
        self._closed = False
        #: close() is committing and leaving: the API (commit() in the listener) still works.
        self._closing = False
        #: Set when close() has finished (a concurrent close() waits for it).
        self._close_done: anyio.Event | None = None
        self._started = False
        #: Bumped by subscribe()/assign(): a background unsubscribe must not undo them.
        self._sub_epoch = 0
        #: The epoch an unsubscribe() still in progress was made in, and its partitions
        #: (hidden from ``assignment()`` while their revocation runs).
        self._unsubscribed_at: int | None = None
        self._unsubscribing: frozenset[TopicPartition] = frozenset()
        #: Records taken from the buffer by ``async for``/``getone`` and not yet yielded.
        self._iter: deque[ConsumerRecord[K, V]] = deque()
        self._position_error: BaseException | None = None
        self._failure: BackgroundTaskError | None = None
        self._last_committed: dict[TopicPartition, int] = {}
        self._hooks = cfg.hooks
        if topics:
            self.subscribe(topics=topics, listener=listener)
        elif listener is not None:
            raise ConfigError("listener given without topics; pass it to subscribe()")

    # -- lifecycle ---------------------------------------------------------------------------

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
        """Connect (bootstrap) and start the background tasks."""
        if self._started or self._closed:
            raise ClientClosedError("a Consumer can only be started once")
        self._started = True
        stack = AsyncExitStack()
        await stack.__aenter__()
        try:
            await stack.enter_async_context(self._client)
            # Detached (see cluster/tasks.py): cancelling the scope around ``async with
            # Consumer`` must leave the fetcher and the group coordinator running until
            # close() has committed and left the group.
            tg = await stack.enter_async_context(
                BackgroundTasks("consumer", on_error=self._background_failed)
            )
            self._tg = tg
            self._stack = stack
            self._track_topics()
            await tg.start(self._fetcher.run)
            tg.start_soon(self._position_loop)
            if self._coordinator is not None:
                await tg.start(self._coordinator.run)
                if self._config.enable_auto_commit:
                    tg.start_soon(self._auto_commit_loop)
        except BaseException:
            started_tg, self._tg = self._tg, None
            self._stack = None
            self._closed = True
            if started_tg is not None:
                started_tg.cancel()
            await stack.aclose()
            raise
        if self._hooks is not None:
            call_hook(
                self._hooks.client_started,
                "consumer",
                self._config.client.client_id,
                self.statistics,
            )

    async def close(self) -> None:
        """Commit (auto commit), leave the group, stop everything. Returns within
        ``close_timeout_ms`` (plus a little) even when the brokers are gone."""
        if self._close_done is not None:
            # close() ran or runs in another task: return when it is done (it is bounded).
            await self._close_done.wait()
            return
        if self._closed:
            return
        # Not closed yet: the revocation below runs the listener, which may commit.
        self._closing = True
        close_done = self._close_done = anyio.Event()
        stack, self._stack = self._stack, None
        tg, self._tg = self._tg, None
        if stack is None:
            self._closed = True
            close_done.set()
            return
        deadline = self._config.close_timeout_ms / 1000
        end = time.monotonic() + deadline
        # Shielded: close() often runs because the scope around ``async with`` was
        # cancelled; the background tasks are shielded too (BackgroundTasks), so the final
        # commit and LeaveGroup still reach the broker. The deadline keeps it bounded.
        with anyio.CancelScope(shield=True):
            with anyio.move_on_after(deadline):
                coordinator = self._coordinator
                if coordinator is not None and self._config.enable_auto_commit:
                    await self._final_commit(coordinator, deadline)
                if coordinator is not None:
                    await coordinator.leave_group(max(0.0, end - time.monotonic()))
        self._closed = True
        if tg is not None:
            tg.cancel()
        # Leaving the background tasks and the cluster client waits (shielded, bounded)
        # until they are done; an outer cancellation is re-raised from here afterwards.
        try:
            await stack.aclose()
        finally:
            close_done.set()
            # After the final commit, so a last metric collection still sees it; in a
            # finally so an exporter never keeps reading a consumer that is gone.
            if self._hooks is not None:
                call_hook(
                    self._hooks.client_closed,
                    "consumer",
                    self._config.client.client_id,
                    self.statistics,
                )
        # An outer cancellation that arrived while closing propagates now that all is done.
        await anyio.lowlevel.checkpoint_if_cancelled()

    async def _final_commit(self, coordinator: GroupCoordinator, timeout: float) -> None:  # noqa: ASYNC109
        """close(): commit what the application received, when there is anything to commit
        and a generation to commit it in (else there is nothing to lose: a member that never
        joined owns no partitions)."""
        if self._subs.is_group_managed and coordinator.generation()[0] < 0:
            return
        try:
            await self._commit_consumed(timeout=timeout, only_changed=True)
        except KafkaError as exc:
            log.warning("final commit failed: %s", exc)

    def _check_open(self) -> None:
        if self._closed:
            raise ClientClosedError("the consumer is closed")
        if not self._started:
            raise ClientClosedError("the consumer is not started (use 'async with' or start())")
        if self._failure is not None:
            raise self._failure

    def _track_topics(self) -> None:
        if self._subs.pattern is not None:
            self._client.set_topics(None)
        elif self._subs.topics:
            self._client.add_topics(self._subs.topics)

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
        if self._started:
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
        if self._started:
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
        """Consume ``partition`` from ``offset`` on (the next getmany/iteration)."""
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
        """Move to the earliest offset (of ``partitions``, or every assigned one)."""
        for tp in self._tps(partitions):
            self._subs.request_reset(tp, EARLIEST)
            self._last_committed.pop(tp, None)
            self._fetcher.discard({tp})
            self._drop_iter({tp})
        self._changed.notify()

    async def seek_to_end(self, *partitions: TopicPartition) -> None:
        """Move to the end (only records produced from now on are read)."""
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
        until it is known: committed offset or reset)."""
        self._check_open()
        st = self._subs.state(partition)
        timeout = self._timeout(timeout_ms)
        with anyio.move_on_after(timeout):
            while True:
                self._raise_pending()
                st = self._subs.state(partition)
                if st.has_position and st.position is not None:
                    committable = self._committable().get(partition)
                    return committable.offset if committable else st.position
                event = self._changed.current()
                await self._changed.wait(0.5, event)
        raise KafkaTimeoutError(f"position of {partition} unknown after {timeout:.3f} s")

    def _timeout(self, timeout_ms: int | None) -> float:
        if timeout_ms is None:
            return self._config.client.request_timeout
        return timeout_ms / 1000

    async def committed(
        self, partition: TopicPartition, timeout_ms: int | None = None
    ) -> int | None:
        """The group's committed offset for ``partition`` (None when nothing is committed)."""
        self._check_open()
        got = await self._offsets.fetch_committed([partition], self._timeout(timeout_ms))
        om = got.get(partition)
        return None if om is None else om.offset

    async def beginning_offsets(
        self, partitions: Iterable[TopicPartition], timeout_ms: int | None = None
    ) -> dict[TopicPartition, int]:
        """The earliest available offset of each partition."""
        return await self._list(partitions, EARLIEST, timeout_ms)

    async def end_offsets(
        self, partitions: Iterable[TopicPartition], timeout_ms: int | None = None
    ) -> dict[TopicPartition, int]:
        """The offset after the last record of each partition (the last stable offset
        under read_committed)."""
        return await self._list(partitions, LATEST, timeout_ms)

    async def _list(
        self, partitions: Iterable[TopicPartition], ts: int, timeout_ms: int | None
    ) -> dict[TopicPartition, int]:
        self._check_open()
        tps = list(partitions)
        got = await self._offsets.list_offsets(dict.fromkeys(tps, ts), self._timeout(timeout_ms))
        return {tp: v[0] for tp, v in got.items() if v is not None}

    async def offsets_for_times(
        self, timestamps: Mapping[TopicPartition, int], timeout_ms: int | None = None
    ) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        """For each partition, the earliest offset whose timestamp is >= the given one
        (milliseconds since the epoch), or None if there is none."""
        self._check_open()
        for tp, ts in timestamps.items():
            if isinstance(ts, bool) or not isinstance(ts, int) or ts < 0:
                raise ConfigError(f"offsets_for_times: bad timestamp {ts!r} for {tp}")
        got = await self._offsets.list_offsets(dict(timestamps), self._timeout(timeout_ms))
        return {
            tp: (None if v is None else OffsetAndTimestamp(v[0], v[1])) for tp, v in got.items()
        }

    def highwater(self, partition: TopicPartition) -> int | None:
        """The partition's high watermark as of the last fetch (None before one)."""
        hw = self._subs.state(partition).high_watermark
        return None if hw < 0 else hw

    def last_stable_offset(self, partition: TopicPartition) -> int | None:
        lso = self._subs.state(partition).last_stable_offset
        return None if lso < 0 else lso

    # -- pause -------------------------------------------------------------------------------

    def pause(self, *partitions: TopicPartition) -> None:
        """Stop returning (and fetching) records of these partitions until ``resume``."""
        self._subs.pause(partitions)
        self._changed.notify()

    def resume(self, *partitions: TopicPartition) -> None:
        self._subs.resume(partitions)
        self._changed.notify()

    def paused(self) -> set[TopicPartition]:
        return set(self._subs.paused())

    # -- consuming ---------------------------------------------------------------------------

    def _background_failed(self, error: BackgroundTaskError) -> None:
        """A background task failed unexpectedly: getmany and friends raise ``error``."""
        self._failure = error
        self._fetcher.data_ready.notify()

    def _raise_pending(self) -> None:
        if self._failure is not None:
            raise self._failure
        if self._coordinator is not None and self._coordinator.error is not None:
            err = self._coordinator.error
            if not isinstance(err, KafkaError) or self._coordinator.membership.failure is None:
                self._coordinator.error = None  # a listener error is raised once
            raise err
        if self._position_error is not None:
            err = self._position_error
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
        while True:
            self._raise_pending()
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
                more = self._fetcher.drain(
                    min(max_records - count, _DRAIN_SLICE), only, holding=count > 0
                )
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
            records = [r for recs in batch.values() for r in recs]
            first = records[0]
            self._iter.extendleft(reversed(records[1:]))
            return first

    def __aiter__(self) -> Consumer[K, V]:
        return self

    async def __anext__(self) -> ConsumerRecord[K, V]:
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
    ) -> None:
        """Commit ``offsets`` (the next offset to read per partition, optionally with a
        metadata string), or the positions of every record returned so far.

        Raises ``CommitFailedError`` when the group rebalanced since these records were
        handed out (they will be read again by the partition's next owner).
        """
        self._check_open()
        if offsets is None:
            await self._commit_consumed(timeout=self._config.client.request_timeout)
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
        await self._commit(normalized, self._config.client.request_timeout)

    async def _commit_consumed(
        self,
        timeout: float,  # noqa: ASYNC109 - a deadline
        *,
        only_changed: bool = False,
    ) -> None:
        def offsets() -> dict[TopicPartition, OffsetAndMetadata]:
            # Read when the commit's turn comes (see OffsetClient.commit).
            got = self._committable()
            if only_changed:
                got = {
                    tp: om for tp, om in got.items() if self._last_committed.get(tp) != om.offset
                }
            return got

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
        if coordinator is not None and self._subs.is_group_managed:
            gen, member, instance = coordinator.generation()
            if gen < 0:
                raise CommitFailedError(
                    "commit: this member is not in a group generation (a rebalance is in "
                    "progress or it left the group); its partitions may be reassigned"
                )
        await self._offsets.commit(
            offsets,
            generation_id=gen,
            member_id=member,
            group_instance_id=instance,
            timeout=timeout,
            on_generation_error=coordinator.on_commit_error if coordinator else None,
        )

    def _on_committed(self, offsets: Mapping[TopicPartition, OffsetAndMetadata]) -> None:
        for tp, om in offsets.items():
            self._last_committed[tp] = om.offset

    async def _auto_commit_loop(self) -> None:
        interval = self._config.auto_commit_interval_ms / 1000
        while True:
            await anyio.sleep(interval)
            if self._subs.is_group_managed and (
                self._coordinator is None or self._coordinator.generation()[0] < 0
            ):
                continue
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
        return progressed

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
        state = "closed" if self._closed else ("running" if self._started else "new")
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
