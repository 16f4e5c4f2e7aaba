"""``ClusterClient``: the connection pool plus metadata and coordinator caches.

``async with ClusterClient(config) as client:`` bootstraps (the first Metadata request must
succeed within ``request_timeout_ms``, else ``NoBrokersAvailableError``) and starts a
background task that refreshes metadata every ``metadata_max_age_ms`` and whenever
:meth:`ClusterClient.request_metadata_update` asks (callers do so after errors such as
NOT_LEADER_OR_FOLLOWER or UNKNOWN_TOPIC_OR_PARTITION). Triggered refreshes are at least
``retry_backoff_ms`` apart, so a burst of errors costs one refresh.

One refresh is in flight at a time. A caller of :meth:`refresh_metadata` joins the one in
flight when it already asks for the caller's topics; otherwise it waits for it and starts the
next. The refresh itself runs in the client's task group, so a caller that is cancelled does
not cancel it for the others.

Which topics a refresh asks for: the tracked set (topics named in ``refresh_metadata``,
``wait_for_topic``, ``add_topics`` or ``set_topics``), or all topics after
``set_topics(None)`` (pattern subscriptions). Metadata requests never create topics unless
``allow_auto_topic_creation=True``.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Iterable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import anyio
import anyio.abc

from ..errors import (
    BackgroundTaskError,
    ClientClosedError,
    CoordinatorLoadInProgressError,
    CoordinatorNotAvailableError,
    IncompatibleBrokerVersionError,
    InvalidTopicError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    NoBrokersAvailableError,
    TopicAuthorizationFailedError,
    error_for_code,
)
from ..net.config import ClientConfig
from ..net.connection import Authenticator, BrokerConnection, StreamFactory
from ..net.pool import ConnectionPool, PoolStatistics
from ..protocol.apis import FIND_COORDINATOR, METADATA
from ..protocol.schema import Api
from .metadata import ClusterMetadata, TopicInfo
from .tasks import BackgroundTasks

log = logging.getLogger(__name__)

#: FindCoordinator key types.
GROUP = 0
TRANSACTION = 1


@dataclass(slots=True)
class _Refresh:
    topics: frozenset[str] | None  # None: all topics
    done: anyio.Event
    error: BaseException | None = None


@dataclass(slots=True)
class _Lookup:
    done: anyio.Event
    node_id: int | None = None
    error: BaseException | None = None


@dataclass(frozen=True, slots=True)
class ClusterStatistics:
    """A snapshot for debugging: metadata age, refresh counts, coordinators, the pool."""

    metadata_generation: int
    brokers: tuple[int, ...]
    topics: tuple[str, ...]
    tracked_topics: tuple[str, ...] | None
    refreshes: int
    refresh_failures: int
    seconds_since_refresh: float
    refresh_in_flight: bool
    coordinators: dict[tuple[int, str], int]
    pool: PoolStatistics


def _key_type(key_type: int | str) -> int:
    """0/"group" or 1/"transaction" -> the FindCoordinator key type."""
    if key_type in (GROUP, "group"):
        return GROUP
    if key_type in (TRANSACTION, "transaction"):
        return TRANSACTION
    raise ValueError(f"key_type must be 0/'group' or 1/'transaction', got {key_type!r}")


def _fresh(err: BaseException) -> BaseException:
    """A copy of a shared error for one more caller (tracebacks are per raise)."""
    if isinstance(err, KafkaConnectionError | KafkaTimeoutError):
        copy = type(err)(str(err))
        copy.__cause__ = err.__cause__
        return copy
    return err


class ClusterClient:
    """Connections, metadata and coordinators of one cluster; the base of every client."""

    def __init__(
        self,
        config: ClientConfig,
        *,
        allow_auto_topic_creation: bool = False,
        stream_factory: StreamFactory | None = None,
        authenticator: Authenticator | None = None,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.config = config
        self.allow_auto_topic_creation = allow_auto_topic_creation
        self._pool = ConnectionPool(
            config, stream_factory=stream_factory, authenticator=authenticator, rand=rand
        )
        self._metadata = ClusterMetadata()
        self._tracked: set[str] | None = set()
        self._refresh: _Refresh | None = None
        self._update_requested = anyio.Event()
        self._updated = anyio.Event()
        self._last_refresh = float("-inf")
        self._refreshes = 0
        self._refresh_failures = 0
        self._coordinators: dict[tuple[int, str], int] = {}
        self._lookups: dict[tuple[int, str], _Lookup] = {}
        self._stack: AsyncExitStack | None = None
        self._tg: BackgroundTasks | None = None
        self._failure: BackgroundTaskError | None = None
        self._closed = False
        self._close_done: anyio.Event | None = None

    # -- lifecycle -------------------------------------------------------------------------

    async def __aenter__(self) -> ClusterClient:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        return await self._exit(exc_type, exc, tb)

    async def start(self) -> None:
        """Bootstrap and start background refreshes (``async with`` calls this)."""
        if self._stack is not None or self._closed:
            raise ClientClosedError("a ClusterClient can only be started once")
        stack = AsyncExitStack()
        await stack.__aenter__()
        self._stack = stack
        try:
            # Background tasks in a task of their own (see tasks.py): cancelling the scope
            # around the owner (``async with Consumer(...)`` in a cancelled scope) must not
            # stop the connection readers, refreshes and coordinator lookups its close()
            # relies on, and close() may run in any task or scope. The pool is entered
            # inside that group, so its reader tasks are too.
            tasks = await stack.enter_async_context(
                BackgroundTasks("cluster client", on_error=self._background_failed)
            )
            await tasks.start(self._run_pool)
            self._tg = tasks
            await self.refresh_metadata()
            tasks.start_soon(self._refresher)
        except BaseException:
            await self._exit(None, None, None)
            raise

    async def _run_pool(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        async with self._pool:
            task_status.started()
            await anyio.sleep_forever()

    async def close(self) -> None:
        """Stop background work and close every connection. Never hangs; may be called
        from any task and inside any cancel scope."""
        await self._exit(None, None, None)

    async def _exit(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        if self._close_done is not None:
            # Closing in another task: return once it is done (it is bounded).
            await self._close_done.wait()
            return None
        if self._closed:
            return None
        self._closed = True
        close_done = self._close_done = anyio.Event()
        stack, self._stack = self._stack, None
        if stack is None:
            close_done.set()
            return None
        # Connections first (the pool shields this and bounds it), so waiters fail with a
        # connection error rather than a cancellation; then the background tasks.
        await self._pool.close()
        if self._tg is not None:
            self._tg.cancel()
        # The caller's exception is not passed into the background tasks (they are ours,
        # cancelled above). Leaving them waits, shielded and bounded, until they are done.
        try:
            await stack.__aexit__(None, None, None)
        finally:
            close_done.set()
        return None

    def _background_failed(self, error: BackgroundTaskError) -> None:
        """A background task failed unexpectedly: every later call raises ``error``."""
        self._failure = error
        self._updated.set()

    def _check_open(self) -> BackgroundTasks:
        if self._failure is not None:
            raise self._failure
        if self._closed or self._tg is None:
            raise ClientClosedError("the cluster client is closed or not started")
        return self._tg

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def pool(self) -> ConnectionPool:
        return self._pool

    # -- metadata --------------------------------------------------------------------------

    @property
    def metadata(self) -> ClusterMetadata:
        """The current snapshot (immutable; a refresh installs a new one)."""
        return self._metadata

    def add_topics(self, topics: Iterable[str]) -> None:
        """Track more topics; a refresh is requested if any is new."""
        topics = set(topics)
        if self._tracked is not None and not topics <= self._tracked:
            self._tracked |= topics
            self.request_metadata_update()

    def set_topics(self, topics: Iterable[str] | None) -> None:
        """Replace the tracked topics; ``None`` tracks all topics in the cluster."""
        new = None if topics is None else set(topics)
        if new != self._tracked:
            self._tracked = new
            self.request_metadata_update()

    def request_metadata_update(self) -> None:
        """Ask the background task for a refresh soon (rate-limited by retry_backoff_ms)."""
        self._update_requested.set()

    async def refresh_metadata(self, topics: Iterable[str] | None = None) -> ClusterMetadata:
        """Refresh now (sharing an in-flight refresh that covers ``topics``); return it.

        ``topics`` are added to the tracked set. Raises ``NoBrokersAvailableError`` or
        ``KafkaTimeoutError`` when no broker answers within ``request_timeout_ms``.
        """
        tg = self._check_open()
        if topics is not None:
            wanted = set(topics)
            if self._tracked is not None:
                self._tracked |= wanted
        else:
            wanted = set()
        while True:
            current = self._refresh
            if current is None:
                current = self._refresh = _Refresh(self._request_topics(), anyio.Event())
                tg.start_soon(self._run_refresh, current)
                await current.done.wait()
                break
            await current.done.wait()
            if current.topics is None or wanted <= current.topics:
                break
        if current.error is not None:
            raise _fresh(current.error)
        return self._metadata

    def _request_topics(self) -> frozenset[str] | None:
        return None if self._tracked is None else frozenset(self._tracked)

    async def _run_refresh(self, refresh: _Refresh) -> None:
        try:
            response, requested = await self._metadata_round(refresh)
            self._install(response, requested)
        except Exception as exc:
            refresh.error = exc
        except BaseException:
            refresh.error = ClientClosedError("the cluster client closed during a refresh")
            raise
        finally:
            if refresh.error is not None:
                self._refresh_failures += 1
            if self._refresh is refresh:
                self._refresh = None
            refresh.done.set()

    async def _metadata_round(self, refresh: _Refresh) -> tuple[Any, frozenset[str] | None]:
        """Ask known brokers (least loaded first), then the bootstrap servers, until one
        answers or ``request_timeout_ms`` has passed (then ``NoBrokersAvailableError``)."""
        topics = refresh.topics
        names = None if topics is None else sorted(topics)
        deadline = anyio.current_time() + self.config.request_timeout
        failed: set[int] = set()
        last_error: BaseException | None = None
        while (remaining := deadline - anyio.current_time()) > 0:
            node = self._pool.least_loaded_node()
            if node is None or node in failed:
                candidates = [n for n in self._pool.known_nodes if n not in failed]
                node = candidates[0] if candidates else None
            try:
                if node is None:
                    # No known broker left to try: fall back to the bootstrap servers.
                    failed.clear()
                    _, conn = await self._pool.bootstrap(timeout=remaining)
                else:
                    conn = await self._pool.get(node, timeout=remaining)
                remaining = deadline - anyio.current_time()
                return await self._send_metadata(conn, names, remaining), topics
            except (KafkaConnectionError, KafkaTimeoutError) as exc:
                if not exc.retriable:
                    raise  # a refused TLS certificate: retrying until the deadline cannot help
                log.info("metadata request to node %s failed: %s", node, exc)
                last_error = exc
                if node is not None:
                    failed.add(node)
            await anyio.sleep(min(self.config.retry_backoff_ms / 1000.0, max(remaining, 0.0)))
        servers = ",".join(f"{h}:{p}" for h, p in self.config.addresses)
        raise NoBrokersAvailableError(
            f"no broker answered Metadata within {self.config.request_timeout_ms} ms "
            f"(bootstrap servers {servers})" + (f"; last error: {last_error}" if last_error else "")
        )

    async def _send_metadata(
        self,
        conn: BrokerConnection,
        names: list[str] | None,
        timeout: float | None = None,  # noqa: ASYNC109 - what is left of the refresh deadline
    ) -> Any:
        # v0 cannot ask for brokers only (an empty list means all topics); every broker
        # that answers ApiVersions (0.10+) speaks v1.
        version = conn.version_for(METADATA, min_version=1)
        topic_list = None if names is None else [{"name": n} for n in names]
        body = {
            "topics": topic_list,
            "allow_auto_topic_creation": self.allow_auto_topic_creation,
        }
        if version < 4 and self.allow_auto_topic_creation is False:
            body.pop("allow_auto_topic_creation")  # v0-3 always auto-create (broker side)
        return await conn.request(METADATA, body, version=version, timeout=timeout)

    def _install(self, response: Any, requested: frozenset[str] | None) -> None:
        self._metadata = self._metadata.merge(response, requested)
        self._pool.update_brokers(
            {b.node_id: (b.host, b.port) for b in self._metadata.brokers.values()}
        )
        self._last_refresh = anyio.current_time()
        self._refreshes += 1
        updated, self._updated = self._updated, anyio.Event()
        updated.set()

    async def wait_for_metadata_update(
        self,
        timeout: float | None = None,  # noqa: ASYNC109 - a deadline for the wait
    ) -> ClusterMetadata:
        """Wait until the next snapshot is installed (``KafkaTimeoutError`` after timeout)."""
        if timeout is None:
            timeout = self.config.request_timeout
        event = self._updated
        with anyio.move_on_after(timeout):
            await event.wait()
            self._check_open()
            return self._metadata
        raise KafkaTimeoutError(f"no metadata update within {timeout:.3f} s")

    async def _refresher(self) -> None:
        """Refresh on request (at most every retry_backoff_ms) and on metadata_max_age_ms."""
        max_age = self.config.metadata_max_age_ms / 1000.0
        backoff = self.config.retry_backoff_ms / 1000.0
        while True:
            wait = self._last_refresh + max_age - anyio.current_time()
            if wait > 0:
                with anyio.move_on_after(wait):
                    await self._update_requested.wait()
            self._update_requested = anyio.Event()
            try:
                await self.refresh_metadata()
            except KafkaError as exc:
                if self._closed:
                    # close() raced with a refresh that had already woken up.
                    return
                log.warning("background metadata refresh failed: %s", exc)
                self._update_requested.set()  # try again after the backoff
            await anyio.sleep(backoff)

    async def wait_for_topic(
        self,
        topic: str,
        timeout: float | None = None,  # noqa: ASYNC109 - a deadline for the wait
    ) -> TopicInfo:
        """Wait until ``topic`` has partitions that all have a leader; return its info.

        Raises ``TopicAuthorizationFailedError`` / ``InvalidTopicError`` at once, and
        ``KafkaTimeoutError`` when the topic is still unknown or leaderless at the deadline.
        """
        if timeout is None:
            timeout = self.config.request_timeout
        backoff = self.config.retry_backoff_ms / 1000.0
        last_error: BaseException | None = None
        with anyio.move_on_after(timeout):
            first = True
            while True:
                md = self._metadata
                info = self._topic_ready(md, topic)
                if info is not None:
                    return info
                if not first:
                    await anyio.sleep(backoff)
                first = False
                try:
                    md = await self.refresh_metadata([topic])
                except (KafkaConnectionError, KafkaTimeoutError) as exc:
                    if not exc.retriable:
                        raise
                    last_error = exc
                    continue
                info = self._topic_ready(md, topic)
                if info is not None:
                    return info
        state = "unknown" if topic in self._metadata.unknown_topics else "without leaders"
        detail = f" (last error: {last_error})" if last_error else ""
        raise KafkaTimeoutError(f"topic {topic!r} still {state} after {timeout:.3f} s{detail}")

    @staticmethod
    def _topic_ready(md: ClusterMetadata, topic: str) -> TopicInfo | None:
        if topic in md.unauthorized_topics:
            raise TopicAuthorizationFailedError(topic)
        if topic in md.invalid_topics:
            raise InvalidTopicError(topic)
        info = md.topic(topic)
        if info is None or not info.partitions:
            return None
        if len(md.available_partitions_for(topic)) != len(info.partitions):
            return None
        return info

    # -- requests --------------------------------------------------------------------------

    async def connection(self, node_id: int, purpose: str = "default") -> BrokerConnection:
        """The (opened on demand) connection to ``node_id`` for ``purpose``."""
        self._check_open()
        try:
            return await self._pool.get(node_id, purpose)
        except KafkaConnectionError:
            if self._pool.address(node_id) is None:
                self.request_metadata_update()
            raise

    async def request(
        self,
        node_id: int,
        api: Api,
        body: Any,
        *,
        purpose: str = "default",
        version: int | None = None,
        min_version: int | None = None,
        max_version: int | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - per-request deadline, by design
        expect_response: bool = True,
    ) -> Any:
        """Send ``body`` to broker ``node_id`` and return the decoded response.

        The connection is opened on demand (see ``ConnectionPool.get``). Without
        ``version``, the highest version both sides support within ``min_version`` ..
        ``max_version`` is used (``IncompatibleBrokerVersionError`` if none). ``timeout``
        (seconds) defaults to ``request_timeout_ms``. Error codes inside the response are
        the caller's to check. Returns None when ``expect_response`` is False.
        """
        conn = await self.connection(node_id, purpose)
        if version is None:
            version = conn.version_for(api, min_version, max_version)
        return await conn.request(
            api, body, version=version, timeout=timeout, expect_response=expect_response
        )

    def least_loaded_node(self) -> int | None:
        """A broker for a node-agnostic request: an open connection with the fewest
        requests in flight, else a broker not in backoff. None before any metadata."""
        return self._pool.least_loaded_node()

    async def any_node(self) -> int:
        """Like :meth:`least_loaded_node`, but refreshes metadata first when no broker is
        known yet (``NoBrokersAvailableError`` if that fails)."""
        node = self._pool.least_loaded_node()
        if node is None:
            await self.refresh_metadata()
            node = self._pool.least_loaded_node()
            if node is None:
                raise NoBrokersAvailableError("the cluster's metadata lists no brokers")
        return node

    async def request_any(
        self,
        api: Api,
        body: Any,
        *,
        version: int | None = None,
        min_version: int | None = None,
        max_version: int | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - per-request deadline, by design
    ) -> Any:
        """Send to the least loaded broker; return the decoded response."""
        self._check_open()
        node = await self.any_node()
        return await self.request(
            node,
            api,
            body,
            version=version,
            min_version=min_version,
            max_version=max_version,
            timeout=timeout,
        )

    least_loaded_request = request_any

    async def version_for(
        self,
        node_id: int | None,
        api: Api,
        *,
        min_version: int | None = None,
        max_version: int | None = None,
    ) -> int:
        """The version of ``api`` to use with ``node_id`` (any broker if None).

        Opens the connection if needed (versions are negotiated per connection). Raises
        ``IncompatibleBrokerVersionError`` when there is no common version.
        """
        if node_id is None:
            node_id = await self.any_node()
        conn = await self.connection(node_id)
        return conn.version_for(api, min_version, max_version)

    async def api_version(
        self,
        api: Api,
        node_id: int | None = None,
        *,
        min_version: int | None = None,
        max_version: int | None = None,
    ) -> int:
        """Same as :meth:`version_for`, arguments in (api, node_id) order."""
        return await self.version_for(
            node_id, api, min_version=min_version, max_version=max_version
        )

    # -- coordinators ----------------------------------------------------------------------

    async def coordinator(
        self,
        key: str,
        key_type: int | str = GROUP,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - a deadline for the lookup
    ) -> int:
        """The node id coordinating group (key_type 0) or transactional id (1) ``key``.

        Cached until :meth:`invalidate_coordinator`; concurrent lookups of one key share a
        FindCoordinator request. COORDINATOR_NOT_AVAILABLE and COORDINATOR_LOAD_IN_PROGRESS
        are retried until ``timeout`` (default ``request_timeout_ms``), then raised.
        """
        tg = self._check_open()
        ck = (_key_type(key_type), key)
        cached = self._coordinators.get(ck)
        if cached is not None:
            return cached
        lookup = self._lookups.get(ck)
        if lookup is None:
            lookup = self._lookups[ck] = _Lookup(anyio.Event())
            if timeout is None:
                timeout = self.config.request_timeout
            tg.start_soon(self._find_coordinator, ck, lookup, timeout)
        await lookup.done.wait()
        if lookup.error is not None:
            raise _fresh(lookup.error)
        assert lookup.node_id is not None
        return lookup.node_id

    def invalidate_coordinator(self, key: str, key_type: int | str = GROUP) -> None:
        """Forget the cached coordinator (after NOT_COORDINATOR or a connection error)."""
        self._coordinators.pop((_key_type(key_type), key), None)

    async def _find_coordinator(self, ck: tuple[int, str], lookup: _Lookup, limit: float) -> None:
        key_type, key = ck
        backoff = self.config.retry_backoff_ms / 1000.0
        last: BaseException | None = None
        try:
            with anyio.move_on_after(limit):
                while True:
                    try:
                        node_id, host, port = await self._find_coordinator_once(key, key_type)
                    except (
                        CoordinatorNotAvailableError,
                        CoordinatorLoadInProgressError,
                        KafkaConnectionError,
                        KafkaTimeoutError,
                    ) as exc:
                        last = exc
                        await anyio.sleep(backoff)
                        continue
                    self._pool.update_brokers({node_id: (host, port)}, replace=False)
                    self._coordinators[ck] = node_id
                    lookup.node_id = node_id
                    return
            kind = "group" if key_type == GROUP else "transactional id"
            lookup.error = KafkaTimeoutError(
                f"no coordinator found for {kind} {key!r} within {limit:.3f} s"
                + (f" (last error: {last})" if last else "")
            )
        except Exception as exc:
            lookup.error = exc
        except BaseException:
            lookup.error = ClientClosedError("the cluster client closed during the lookup")
            raise
        finally:
            if self._lookups.get(ck) is lookup:
                del self._lookups[ck]
            lookup.done.set()

    async def _find_coordinator_once(self, key: str, key_type: int) -> tuple[int, str, int]:
        conn = await self.connection(await self.any_node())
        min_version = 1 if key_type != GROUP else None
        try:
            version = conn.version_for(FIND_COORDINATOR, min_version=min_version)
        except IncompatibleBrokerVersionError:
            raise
        if version >= 4:
            body: dict[str, Any] = {"key_type": key_type, "coordinator_keys": [key]}
            resp = await conn.request(FIND_COORDINATOR, body, version=version)
            if len(resp.coordinators) != 1:
                raise KafkaConnectionError(
                    f"FindCoordinator returned {len(resp.coordinators)} coordinators for 1 key"
                )
            c = resp.coordinators[0]
            code, message, node_id, host, port = (
                c.error_code,
                c.error_message,
                c.node_id,
                c.host,
                c.port,
            )
        else:
            body = {"key": key, "key_type": key_type}
            if version == 0:
                body.pop("key_type")
            resp = await conn.request(FIND_COORDINATOR, body, version=version)
            code = resp.error_code
            message = getattr(resp, "error_message", None)
            node_id, host, port = resp.node_id, resp.host, resp.port
        if code:
            raise error_for_code(code, message)
        return node_id, host, port

    # -- introspection ---------------------------------------------------------------------

    def statistics(self) -> ClusterStatistics:
        md = self._metadata
        return ClusterStatistics(
            metadata_generation=md.generation,
            brokers=tuple(sorted(md.brokers)),
            topics=tuple(sorted(md.topics)),
            tracked_topics=None if self._tracked is None else tuple(sorted(self._tracked)),
            refreshes=self._refreshes,
            refresh_failures=self._refresh_failures,
            seconds_since_refresh=anyio.current_time() - self._last_refresh,
            refresh_in_flight=self._refresh is not None,
            coordinators=dict(self._coordinators),
            pool=self._pool.statistics(),
        )

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("open" if self._tg is not None else "new")
        return f"<ClusterClient {state} {self._metadata!r}>"
