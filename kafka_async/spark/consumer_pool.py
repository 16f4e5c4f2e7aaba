"""Read consumers kept from one Spark task to the next, per Python worker process.

PySpark runs a read task in a Python worker process and, by default
(``spark.python.worker.reuse``), runs the next task of the same executor in the same
process, one task at a time. Without a pool every task started an event loop, connected a
fresh :class:`~kafka_async.consumer.Consumer` (bootstrap, ApiVersions, metadata, the leader's
connection, a first fetch), read its range and closed it all again: for a streaming query
that is paid by every partition in every micro-batch. Spark's own connector keeps a pool of
consumers per executor instead; this module is ours.

Two layers, so the rules can be tested without a broker:

* :class:`PoolBook` is pure bookkeeping: which idle consumer belongs to which key, when it
  was given back, how many are lent out, and which ones must go (idle longer than the
  timeout, or the least recently used beyond the capacity). It never does I/O: its methods
  return what the caller has to close.
* :class:`ConsumerPool` is the I/O edge: one event loop in a daemon thread per process
  (started lazily, stopped at interpreter exit), consumers created, checked and closed in it,
  every wait under a deadline, and an evictor task that closes idle consumers even while the
  process runs no task.

A consumer is keyed by the client configuration (everything that changes what or how it
reads) and its one topic-partition. A task *leases* it (exclusive use), reads, and gives it
back with its position and whatever it prefetched past the range's end; the next task whose
range starts exactly at that position reads on from the buffered records. A task that failed
closes its consumer instead of giving it back.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, TypeVar
from uuid import UUID

import anyio
from anyio.from_thread import BlockingPortal

from ..consumer import Consumer
from ..errors import KafkaTimeoutError
from ..structs import TopicPartition

if TYPE_CHECKING:
    from .options import SourceOptions

log = logging.getLogger("kafka_async.spark")

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")

#: Deadline for the pool's event loop thread to come up.
LOOP_START_TIMEOUT_S = 10.0
#: Deadline for connecting a new consumer (bootstrap and its first metadata).
CONNECT_TIMEOUT_S = 60.0
#: Deadline for the checks a pooled consumer passes before a task reuses it.
CHECK_TIMEOUT_S = 10.0
#: Deadline for closing one consumer (close() bounds itself too; this guards the caller).
CLOSE_TIMEOUT_S = 10.0
#: Deadline for closing everything when the process exits.
SHUTDOWN_TIMEOUT_S = 15.0
#: Longest pause between two runs of the idle evictor (Spark's evictor runs every minute).
EVICT_INTERVAL_S = 60.0


@dataclass
class PoolStats:
    """Counters of one process's pool (for tests and logs)."""

    #: Consumers created because the pool had none for the key.
    created: int = 0
    #: Leases served by a pooled consumer.
    reused: int = 0
    #: Reuses whose range started where the consumer stood (no seek; buffered records used).
    contiguous: int = 0
    #: Consumers closed because they sat idle longer than the timeout.
    evicted_idle: int = 0
    #: Consumers closed to stay within the capacity.
    evicted_capacity: int = 0
    #: Consumers closed because their task failed or a check before reuse failed.
    discarded: int = 0


@dataclass
class _Idle(Generic[T]):
    item: T
    since: float


class PoolBook(Generic[K, T]):
    """Pure bookkeeping of a keyed pool with a capacity and an idle timeout.

    At most one idle item per key (a process runs one task at a time; a second one given back
    under the same key replaces the first, which must be closed). Items lent out count
    towards the capacity but are never evicted. Times come from the caller (``now``, in
    seconds on any monotonic clock), so tests drive the clock. Every method returns the items
    the caller must close.
    """

    def __init__(self, capacity: int, idle_timeout_s: float) -> None:
        self.capacity = capacity
        self.idle_timeout_s = idle_timeout_s
        self.stats = PoolStats()
        self._idle: OrderedDict[K, _Idle[T]] = OrderedDict()  # least recently used first
        self._lent = 0

    def configure(self, capacity: int, idle_timeout_s: float) -> None:
        """New bounds (applied by the next :meth:`take`, :meth:`give_back` or :meth:`expire`)."""
        if capacity < 1 or idle_timeout_s <= 0:
            raise ValueError(f"bad pool bounds: capacity {capacity}, timeout {idle_timeout_s}")
        self.capacity = capacity
        self.idle_timeout_s = idle_timeout_s

    @property
    def idle(self) -> int:
        """Items waiting in the pool."""
        return len(self._idle)

    @property
    def lent(self) -> int:
        """Items out with a task."""
        return self._lent

    def keys(self) -> list[K]:
        """Keys of the idle items, least recently used first."""
        return list(self._idle)

    def take(self, key: K, now: float) -> tuple[T | None, list[T]]:
        """Lend the idle item of ``key`` (None: the caller creates one, which counts as lent).

        Also returns the items that expired by ``now``, to close.
        """
        expired = self.expire(now)
        entry = self._idle.pop(key, None)
        self._lent += 1
        if entry is None:
            self.stats.created += 1
            return None, expired
        self.stats.reused += 1
        return entry.item, expired

    def give_back(self, key: K, item: T, now: float) -> list[T]:
        """Put a lent item back as the most recently used; returns the items to close."""
        self._lent = max(0, self._lent - 1)
        out = self.expire(now)
        previous = self._idle.pop(key, None)
        if previous is not None:
            out.append(previous.item)
            self.stats.evicted_capacity += 1
        self._idle[key] = _Idle(item, now)
        while self._idle and len(self._idle) + self._lent > self.capacity:
            _key, oldest = self._idle.popitem(last=False)
            out.append(oldest.item)
            self.stats.evicted_capacity += 1
        return out

    def discard(self) -> None:
        """A lent item will not come back (its task failed; the caller closes it)."""
        self._lent = max(0, self._lent - 1)
        self.stats.discarded += 1

    def rejected(self) -> None:
        """The item :meth:`take` lent failed the caller's check: it is closed and a new one
        is lent in its place (counted as created, not reused)."""
        self.stats.reused -= 1
        self.stats.created += 1
        self.stats.discarded += 1

    def expire(self, now: float) -> list[T]:
        """Remove and return the items idle for longer than the timeout."""
        out: list[T] = []
        while self._idle:
            key, oldest = next(iter(self._idle.items()))
            if now - oldest.since <= self.idle_timeout_s:
                break
            del self._idle[key]
            out.append(oldest.item)
            self.stats.evicted_idle += 1
        return out

    def next_expiry(self) -> float | None:
        """When the least recently used idle item expires (None when the pool is empty)."""
        for entry in self._idle.values():
            return entry.since + self.idle_timeout_s
        return None

    def drain(self) -> list[T]:
        """Remove and return every idle item."""
        out = [entry.item for entry in self._idle.values()]
        self._idle.clear()
        return out


# --------------------------------------------------------------------------------------------
# The I/O edge
# --------------------------------------------------------------------------------------------

#: A pool key: the client configuration (as sorted name/value text) and the partition.
PoolKey = tuple[tuple[tuple[str, str], ...], TopicPartition]


def pool_key(config: Mapping[str, object], tp: TopicPartition) -> PoolKey:
    """The key of a consumer reading ``tp`` with the client options ``config``."""
    return tuple(sorted((str(k), repr(v)) for k, v in config.items())), tp


@dataclass
class PooledConsumer:
    """A started consumer assigned to exactly one partition, and what the pool knows of it."""

    consumer: Consumer[bytes, bytes]
    tp: TopicPartition
    #: The topic's id when the consumer was last given back (None: unknown, or never read).
    topic_id: UUID | None = None
    #: True when it comes from the pool (it is assigned and holds a position).
    reused: bool = False
    #: Set by the reader when the range started at the consumer's position (no seek).
    contiguous: bool = field(default=False, repr=False)

    def remember_topic_id(self) -> None:
        """Note the topic's id from the consumer's metadata (before its first fetch, so
        everything it buffers later belongs to that topic or is reported as recreated)."""
        if self.topic_id is None:
            # The pool only reads the metadata of the consumer's cluster client.
            self.topic_id = self.consumer.cluster.metadata.topic_id(self.tp.topic)


async def _refresh_topic_id(consumer: Consumer[bytes, bytes], topic: str) -> UUID | None:
    metadata = await consumer.cluster.refresh_metadata([topic])
    return metadata.topic_id(topic)


async def _open(config: dict[str, object], tp: TopicPartition) -> PooledConsumer:
    from .kafka_io import read_consumer

    consumer = read_consumer(config)
    try:
        with anyio.fail_after(CONNECT_TIMEOUT_S):
            await consumer.start()
    except BaseException:
        await _close(consumer)
        raise
    return PooledConsumer(consumer, tp)


async def _close(consumer: Consumer[bytes, bytes]) -> None:
    with anyio.CancelScope(shield=True), anyio.move_on_after(CLOSE_TIMEOUT_S) as scope:
        try:
            await consumer.close()
        except Exception as exc:  # closing is best effort: log, never fail a task for it
            log.warning("closing a pooled consumer failed: %r", exc)
    if scope.cancelled_caught:
        log.warning("a pooled consumer did not close within %s s", CLOSE_TIMEOUT_S)


async def _close_all(items: list[PooledConsumer]) -> None:
    async with anyio.create_task_group() as tg:
        for item in items:
            tg.start_soon(_close, item.consumer)


async def _usable(item: PooledConsumer) -> bool:
    """Whether a pooled consumer may serve another task (its topic was not recreated)."""
    with anyio.fail_after(CHECK_TIMEOUT_S):
        now = await _refresh_topic_id(item.consumer, item.tp.topic)
    if item.topic_id is not None and now is not None and now != item.topic_id:
        log.info("%s: topic recreated (id %s -> %s): new consumer", item.tp, item.topic_id, now)
        return False
    if item.topic_id is None or now is None:
        # No topic ids to compare (an older broker): the buffered records cannot be told
        # from a recreated topic's, so the reader seeks, which drops them.
        item.topic_id = None
    return True


async def _park(item: PooledConsumer) -> bool:
    """Pause the partition of a consumer going back to the pool: what it fetched past the
    range stays buffered for the next one, and it fetches nothing more while it waits (work
    a range starting elsewhere would throw away, taken from the tasks that run meanwhile).
    The next reader resumes it only after deciding where to read: resumed before a seek, it
    would first send a fetch at the old position, and a fetch at the log's end waits
    ``fetch_max_wait_ms`` (500 ms) at the broker before the seek's own fetch can go."""
    try:
        item.consumer.pause(item.tp)
    except Exception as exc:
        log.info("%s: cannot pause the consumer (%r): closing it", item.tp, exc)
        return False
    return True


class _LoopThread:
    """An event loop in a daemon thread, reachable through a blocking portal.

    A daemon thread never holds the interpreter's exit up; :meth:`stop` ends it with a
    deadline (called at exit, after the pool closed its consumers).
    """

    def __init__(self) -> None:
        self.portal: BlockingPortal | None = None
        self._error: BaseException | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name="kafka_async-spark-consumer-pool", daemon=True
        )
        self._thread.start()
        if not self._ready.wait(LOOP_START_TIMEOUT_S):
            raise KafkaTimeoutError(
                f"the consumer pool's event loop did not start within {LOOP_START_TIMEOUT_S} s"
            )
        if self._error is not None:
            raise self._error

    def _run(self) -> None:
        try:
            anyio.run(self._main)
        except BaseException as exc:
            self._error = exc
        finally:
            self._ready.set()

    async def _main(self) -> None:
        async with BlockingPortal() as portal:
            self.portal = portal
            self._ready.set()
            await portal.sleep_until_stopped()

    @property
    def alive(self) -> bool:
        return self.portal is not None and self._thread.is_alive()

    def stop(self, timeout: float) -> None:
        portal = self.portal
        if portal is None or not self._thread.is_alive():
            return
        try:
            portal.start_task_soon(portal.stop, True).result(timeout)
        except Exception as exc:  # gone, stuck or cancelled: the daemon thread dies with us
            log.debug("stopping the consumer pool's event loop: %r", exc)
        self._thread.join(timeout)


class ConsumerPool:
    """The read consumers of one Python worker process (see the module docstring).

    Thread-safe; normally used through :func:`shared`. ``clock`` is injectable for tests.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._book: PoolBook[PoolKey, PooledConsumer] = PoolBook(64, 300.0)
        self._loop: _LoopThread | None = None
        self._pid = os.getpid()
        self._evictor_started = False

    @property
    def stats(self) -> PoolStats:
        """The pool's counters so far."""
        return self._book.stats

    @property
    def idle(self) -> int:
        """Consumers waiting in the pool now."""
        return self._book.idle

    def portal(self) -> BlockingPortal:
        """The pool's event loop (started on first use, and again in a forked child)."""
        with self._lock:
            if self._pid != os.getpid():
                # A forked copy: the parent's thread and sockets are not ours to use.
                self._book = PoolBook(self._book.capacity, self._book.idle_timeout_s)
                self._loop = None
                self._pid = os.getpid()
                self._evictor_started = False
            if self._loop is None or not self._loop.alive:
                self._loop = _LoopThread()
                self._evictor_started = False
            portal = self._loop.portal
            assert portal is not None
            if not self._evictor_started:
                portal.start_task_soon(self._evict_loop)
                self._evictor_started = True
            return portal

    @contextmanager
    def lease(
        self, opts: SourceOptions, tp: TopicPartition
    ) -> Iterator[tuple[BlockingPortal, PooledConsumer]]:
        """A consumer for ``tp`` for the ``with`` block's exclusive use, with its portal.

        Given back when the block ends normally (or by ``GeneratorExit``: a reader Spark
        closed early leaves the consumer at a consistent position); closed on any other
        exception.
        """
        portal = self.portal()
        key = pool_key(opts.consumer_config, tp)
        with self._lock:
            self._book.configure(
                opts.consumer_cache_capacity, opts.consumer_cache_timeout_ms / 1000
            )
            item, stale = self._book.take(key, self._clock())
        if stale:
            portal.call(_close_all, stale)
        if item is not None and not self._check(portal, item):
            with self._lock:
                self._book.rejected()
            portal.call(_close, item.consumer)
            item = None
        try:
            if item is None:
                item = portal.call(_open, opts.consumer_config, tp)
        except BaseException:
            with self._lock:
                self._book.discard()
            raise
        try:
            yield portal, item
        except GeneratorExit:
            self._give_back(portal, key, item)
            raise
        except BaseException:
            with self._lock:
                self._book.discard()
            portal.call(_close, item.consumer)
            raise
        else:
            self._give_back(portal, key, item)

    def _check(self, portal: BlockingPortal, item: PooledConsumer) -> bool:
        try:
            return portal.call(_usable, item)
        except Exception as exc:
            log.info("%s: pooled consumer failed its check (%r): closing it", item.tp, exc)
            return False

    def _give_back(self, portal: BlockingPortal, key: PoolKey, item: PooledConsumer) -> None:
        if item.contiguous:
            with self._lock:
                self._book.stats.contiguous += 1
        item.reused = True
        item.contiguous = False
        if not portal.call(_park, item):
            with self._lock:
                self._book.discard()
            portal.call(_close, item.consumer)
            return
        with self._lock:
            out = self._book.give_back(key, item, self._clock())
        if out:
            portal.call(_close_all, out)

    async def _evict_loop(self) -> None:
        while True:
            with self._lock:
                wake = self._book.next_expiry()
                timeout = self._book.idle_timeout_s
            delay = EVICT_INTERVAL_S if wake is None else wake - self._clock() + 0.01
            await anyio.sleep(max(0.05, min(delay, EVICT_INTERVAL_S, timeout)))
            with self._lock:
                out = self._book.expire(self._clock())
            if out:
                await _close_all(out)

    def clear(self, timeout: float = SHUTDOWN_TIMEOUT_S) -> None:
        """Close every idle consumer (bounded by ``timeout``); the loop stays up."""
        with self._lock:
            loop = self._loop if self._pid == os.getpid() else None
            out = self._book.drain()
        if loop is None or loop.portal is None or not out:
            return
        try:
            loop.portal.start_task_soon(_close_all, out).result(timeout)
        except Exception as exc:
            log.warning("closing the pooled consumers did not finish: %r", exc)

    def shutdown(self, timeout: float = SHUTDOWN_TIMEOUT_S) -> None:
        """Close every idle consumer and stop the event loop, each step bounded."""
        self.clear(timeout)
        with self._lock:
            loop = self._loop if self._pid == os.getpid() else None
            self._loop = None
            self._evictor_started = False
        if loop is not None:
            loop.stop(timeout)


_shared: ConsumerPool | None = None
_shared_lock = threading.Lock()


def shared() -> ConsumerPool:
    """This process's pool (created on first use; shut down at interpreter exit)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = ConsumerPool()
            atexit.register(_shared.shutdown)
        return _shared
