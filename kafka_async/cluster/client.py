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

Which broker a refresh asks: the known brokers (least loaded first); the bootstrap servers
for the first refresh, and again when metadata recovery says so (KIP-899, KIP-1102: every
known broker failing, REBOOTSTRAP_REQUIRED, ``metadata_recovery_rebootstrap_trigger_ms``
without metadata; see ``recovery.py``). An answer listing no broker counts as a failure.

Which topics a refresh asks for: the tracked set (topics named in ``refresh_metadata``,
``wait_for_topic``, ``add_topics`` or ``set_topics``), or all topics after
``set_topics(None)`` (pattern subscriptions). Metadata requests never create topics unless
``allow_auto_topic_creation=True``.
"""

from __future__ import annotations

import dataclasses
import logging
import random
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal, overload

import anyio
import anyio.abc

from ..errors import (
    BackgroundTaskError,
    BootstrapUnreachableError,
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
from ..net.pool import ConnectionPool
from ..protocol.apis import FIND_COORDINATOR, METADATA
from ..protocol.apis.find_coordinator import FindCoordinatorRequest
from ..protocol.apis.metadata import MetadataRequest, MetadataRequestTopic, MetadataResponse
from ..protocol.schema import AnyApi, Api, ReqT, RespT
from ..structs import ClientState, TopicPartition
from .lifecycle import Lifecycle
from .metadata import BrokerInfo, ClusterMetadata, TopicInfo
from .recovery import REBOOTSTRAP_REQUIRED, RecoveryPolicy, RecoveryState, Target, cluster_changed
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
        # Rebuilt the way pickle would (an error with fields of its own, such as
        # BootstrapUnreachableError, has a __reduce__ that says how).
        reduced = err.__reduce__()
        assert isinstance(reduced, tuple)
        rebuild: Callable[..., BaseException] = reduced[0]
        copy = rebuild(*reduced[1])
        copy.__cause__ = err.__cause__
        return copy
    return err


def missing_topic_changes(
    expected: Collection[str],
    reported: Collection[str],
    unknown: Collection[str],
    known: Collection[str],
) -> tuple[frozenset[str], frozenset[str]]:
    """Of the ``expected`` topics: those newly missing (``unknown`` to the broker and not
    ``reported`` yet), and those ``reported`` missing that are ``known`` now."""
    missing = frozenset(t for t in expected if t in unknown and t not in reported)
    appeared = frozenset(t for t in reported if t in known)
    return missing, appeared


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
        #: Topics the user expects to exist (a consumer's subscription): the first snapshot
        #: without one logs a WARNING, the one where it appears an INFO (``expect_topics``).
        self._expected: frozenset[str] = frozenset()
        #: The expected topics reported missing and not seen since.
        self._missing: frozenset[str] = frozenset()
        self._refresh: _Refresh | None = None
        self._update_requested = anyio.Event()
        self._updated = anyio.Event()
        self._last_refresh = float("-inf")
        self._refreshes = 0
        self._refresh_failures = 0
        self._leader_hints = 0
        self._recovery = RecoveryState(RecoveryPolicy.from_config(config))
        self._coordinators: dict[tuple[int, str], int] = {}
        self._lookups: dict[tuple[int, str], _Lookup] = {}
        self._life = Lifecycle("cluster client")
        self._tg: BackgroundTasks | None = None

    # -- lifecycle -------------------------------------------------------------------------

    async def __aenter__(self) -> ClusterClient:
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
        """Bootstrap and start background refreshes (``async with`` calls this); once."""
        await self._life.start(self._start, self._stop)

    async def _start(self) -> None:
        # Background tasks in a task of their own (see tasks.py): cancelling the scope
        # around the owner (``async with Consumer(...)`` in a cancelled scope) must not stop
        # the connection readers, refreshes and coordinator lookups its close() relies on,
        # and close() may run in any task or scope. The pool is entered inside that group,
        # so its reader tasks are too.
        tasks = self._tg = BackgroundTasks("cluster client", on_error=self._background_failed)
        await tasks.__aenter__()
        await tasks.start(self._run_pool)
        await self.refresh_metadata()
        tasks.start_soon(self._refresher)

    async def _run_pool(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        async with self._pool:
            task_status.started()
            await anyio.sleep_forever()

    async def close(self) -> None:
        """Stop background work and close every connection. Never hangs; may be called
        from any task and inside any cancel scope (see ``lifecycle.py``)."""
        await self._life.close(self._stop)

    async def _stop(self) -> None:
        # Connections first (the pool shields this and bounds it), so waiters fail with a
        # connection error rather than a cancellation; then the background tasks (their
        # aclose is shielded and bounded too).
        await self._pool.close()
        if self._tg is not None:
            await self._tg.aclose()

    def _background_failed(self, error: BackgroundTaskError) -> None:
        """A background task failed unexpectedly: every later call raises ``error``."""
        self._life.fail(error)
        self._updated.set()

    def _check_open(self) -> BackgroundTasks:
        # Calls made by start() itself (the first metadata refresh) are allowed.
        self._life.check(starting=True)
        if self._tg is None:
            raise ClientClosedError("the cluster client is not started")
        return self._tg

    @property
    def state(self) -> ClientState:
        """Where the client is in its life (``new``, ``running``, ``closed``...)."""
        return self._life.state

    @property
    def closed(self) -> bool:
        return self._life.closed

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

    def expect_topics(self, topics: Iterable[str]) -> None:
        """Topics the user expects to exist (a consumer's subscription, replaced by each
        call): one the broker says does not exist is logged at WARNING once, and again at
        INFO once it appears (checked at each metadata refresh)."""
        self._expected = frozenset(topics)
        self._missing &= self._expected

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

    async def _metadata_round(
        self, refresh: _Refresh
    ) -> tuple[MetadataResponse, frozenset[str] | None]:
        """Ask known brokers (least loaded first) until one answers or ``request_timeout_ms``
        has passed (then ``NoBrokersAvailableError``); the bootstrap servers at first, and
        again when metadata recovery says so (a rebootstrap, see ``recovery.py``)."""
        topics = refresh.topics
        names = None if topics is None else sorted(topics)
        deadline = anyio.current_time() + self.config.request_timeout
        failed: set[int] = set()
        last_error: BaseException | None = None
        recovery = self._recovery
        recovery.attempt(anyio.current_time())
        while (remaining := deadline - anyio.current_time()) > 0:
            node = self._pool.least_loaded_node()
            if node is None or node in failed:
                candidates = [n for n in self._pool.known_nodes if n not in failed]
                node = candidates[0] if candidates else None
            target, reason = recovery.choose(
                anyio.current_time(),
                have_brokers=bool(self._pool.known_nodes),
                known_left=node is not None,
            )
            if reason is not None:
                await self._rebootstrap(reason.value)
            if target is Target.RETRY_KNOWN:
                # Strategy "none": every known broker failed; start over with them.
                failed.clear()
                await anyio.sleep(min(self.config.retry_backoff_ms / 1000.0, remaining))
                continue
            if target is Target.BOOTSTRAP:
                node = None
            try:
                if node is None:
                    failed.clear()
                    # At start (nothing known yet), every server refusing ends it at once.
                    _, conn = await self._pool.bootstrap(
                        timeout=remaining, fail_fast=self._life.state is ClientState.STARTING
                    )
                else:
                    conn = await self._pool.get(node, timeout=remaining)
                remaining = deadline - anyio.current_time()
                response = await self._send_metadata(conn, names, remaining)
                code = getattr(response, "error_code", 0)
                if code == REBOOTSTRAP_REQUIRED and recovery.rebootstrap_required():
                    log.info("broker %s answered Metadata with REBOOTSTRAP_REQUIRED", node)
                    continue
                if not code and response.brokers:
                    return response, topics
                # A top-level error (v13+), or no broker listed (a broker shutting down or
                # not yet registered answers so; the Java client ignores such an answer
                # too): this server gave no metadata; try another.
                last_error = (
                    error_for_code(code, None)
                    if code
                    else KafkaConnectionError(f"node {node} answered Metadata without brokers")
                )
                log.info("metadata request to node %s failed: %s", node, last_error)
                if node is not None:
                    failed.add(node)
            except (KafkaConnectionError, KafkaTimeoutError) as exc:
                if not exc.retriable or isinstance(exc, BootstrapUnreachableError):
                    # A refused TLS certificate, or at start every bootstrap server refusing:
                    # retrying until the deadline cannot help.
                    raise
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

    async def _rebootstrap(self, reason: str) -> None:
        """Begin a rebootstrap: say why, and close every connection to a known broker (the
        next Metadata requests go to the bootstrap servers, see ``recovery.py``)."""
        servers = ",".join(f"{h}:{p}" for h, p in self.config.addresses)
        log.warning(
            "client %s: rebootstrapping from bootstrap servers %s (%s; rebootstrap #%d)",
            self.config.client_id,
            servers,
            reason,
            self._recovery.rebootstraps,
        )
        for node in self._pool.known_nodes:
            await self._pool.close_node(node)

    async def _send_metadata(
        self,
        conn: BrokerConnection,
        names: list[str] | None,
        timeout: float | None = None,  # noqa: ASYNC109 - what is left of the refresh deadline
    ) -> MetadataResponse:
        # v0 cannot ask for brokers only (an empty list means all topics); every broker
        # that answers ApiVersions (0.10+) speaks v1.
        version = conn.version_for(METADATA, min_version=1)
        body = MetadataRequest(
            topics=None if names is None else [MetadataRequestTopic(name=n) for n in names],
            # v0-3 have no such field: the broker always auto-creates (its default, true).
            allow_auto_topic_creation=self.allow_auto_topic_creation or version < 4,
        )
        return await conn.request(METADATA, body, version=version, timeout=timeout)

    def _install(self, response: MetadataResponse, requested: frozenset[str] | None) -> None:
        old_cluster = self._metadata.cluster_id
        self._metadata = self._metadata.merge(response, requested)
        if self._recovery.answered():
            log.warning(
                "client %s: rebootstrap done: cluster %s, brokers %s",
                self.config.client_id,
                self._metadata.cluster_id,
                ", ".join(
                    f"{b.node_id}@{b.host}:{b.port}" for b in self._metadata.brokers.values()
                ),
            )
        if cluster_changed(old_cluster, self._metadata.cluster_id):
            log.warning(
                "the bootstrap servers now lead to another cluster: id %s, was %s",
                self._metadata.cluster_id,
                old_cluster,
            )
        self._pool.update_brokers(
            {b.node_id: (b.host, b.port) for b in self._metadata.brokers.values()}
        )
        self._last_refresh = anyio.current_time()
        self._refreshes += 1
        if self._expected:
            self._report_missing(requested)
        updated, self._updated = self._updated, anyio.Event()
        updated.set()

    def _report_missing(self, requested: frozenset[str] | None) -> None:
        md = self._metadata
        asked = self._expected if requested is None else self._expected & requested
        missing, appeared = missing_topic_changes(
            asked, self._missing, md.unknown_topics, md.topics.keys()
        )
        for topic in sorted(missing):
            log.warning(
                "topic %r does not exist (the broker answered UNKNOWN_TOPIC_OR_PARTITION); "
                "nothing is read from it until it is created",
                topic,
            )
        for topic in sorted(appeared):
            log.info("topic %r exists now", topic)
        self._missing = (self._missing | missing) - appeared

    def apply_leader_hints(
        self,
        leaders: Iterable[tuple[TopicPartition, int, int]],
        endpoints: Iterable[Any] = (),
    ) -> frozenset[TopicPartition]:
        """KIP-951: install the new leaders a Produce (v10+) or Fetch (v16+) answer named
        with NOT_LEADER_OR_FOLLOWER (``(partition, leader id, leader epoch)``, and the
        answer's node endpoints), so the retry goes to the new leader without waiting for a
        metadata refresh. Returns the partitions whose leader moved."""
        brokers = [
            BrokerInfo(e.node_id, e.host, e.port, getattr(e, "rack", None)) for e in endpoints
        ]
        new, moved = self._metadata.with_new_leaders(leaders, brokers)
        if not moved:
            return moved
        self._metadata = new
        self._pool.update_brokers({b.node_id: (b.host, b.port) for b in new.brokers.values()})
        self._leader_hints += len(moved)
        updated, self._updated = self._updated, anyio.Event()
        updated.set()
        return moved

    def metadata_update_event(self) -> anyio.Event:
        """The event the next installed snapshot (a refresh or a leader hint) sets; take it
        before checking the metadata so an update in between is not missed."""
        return self._updated

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
                if self._life.closed:
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

    @overload
    async def request(
        self,
        node_id: int,
        api: Api[ReqT, RespT],
        body: ReqT,
        *,
        purpose: str = ...,
        version: int | None = ...,
        min_version: int | None = ...,
        max_version: int | None = ...,
        timeout: float | None = ...,  # noqa: ASYNC109
        expect_response: Literal[True] = ...,
    ) -> RespT: ...

    @overload
    async def request(
        self,
        node_id: int,
        api: Api[ReqT, RespT],
        body: ReqT,
        *,
        purpose: str = ...,
        version: int | None = ...,
        min_version: int | None = ...,
        max_version: int | None = ...,
        timeout: float | None = ...,  # noqa: ASYNC109
        expect_response: bool,
    ) -> RespT | None: ...

    async def request(
        self,
        node_id: int,
        api: Api[ReqT, RespT],
        body: ReqT,
        *,
        purpose: str = "default",
        version: int | None = None,
        min_version: int | None = None,
        max_version: int | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - per-request deadline, by design
        expect_response: bool = True,
    ) -> RespT | None:
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
        api: Api[ReqT, RespT],
        body: ReqT,
        *,
        version: int | None = None,
        min_version: int | None = None,
        max_version: int | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - per-request deadline, by design
    ) -> RespT:
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
        api: AnyApi,
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
        api: AnyApi,
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
            body = FindCoordinatorRequest(key_type=key_type, coordinator_keys=[key])
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
            # v0 has no key_type: groups only (min_version above keeps others at v1+).
            body = FindCoordinatorRequest(key=key, key_type=key_type)
            resp = await conn.request(FIND_COORDINATOR, body, version=version)
            code = resp.error_code
            message = resp.error_message
            node_id, host, port = resp.node_id, resp.host, resp.port
        if code:
            raise error_for_code(code, message)
        return node_id, host, port

    # -- introspection ---------------------------------------------------------------------

    def statistics(self) -> dict[str, Any]:
        """A snapshot for debugging: state, metadata age, refresh counts, coordinators and
        the connection pool (plain values, like every client's ``statistics()``)."""
        md = self._metadata
        return {
            "state": self._life.state.value,
            "metadata_generation": md.generation,
            "brokers": sorted(md.brokers),
            "topics": sorted(md.topics),
            "tracked_topics": None if self._tracked is None else sorted(self._tracked),
            "refreshes": self._refreshes,
            "refresh_failures": self._refresh_failures,
            "seconds_since_refresh": anyio.current_time() - self._last_refresh,
            "refresh_in_flight": self._refresh is not None,
            # Leaders learnt from NOT_LEADER_OR_FOLLOWER answers (KIP-951), no refresh.
            "leader_hints": self._leader_hints,
            # Metadata recovery (KIP-899, KIP-1102): rebootstraps begun, and why the last.
            "rebootstraps": self._recovery.rebootstraps,
            "last_rebootstrap_reason": (
                None if self._recovery.last_reason is None else self._recovery.last_reason.value
            ),
            "seconds_without_metadata": self._recovery.seconds_without_metadata(
                anyio.current_time()
            ),
            "coordinators": dict(self._coordinators),
            "pool": dataclasses.asdict(self._pool.statistics()),
        }

    def __repr__(self) -> str:
        return f"<ClusterClient {self._life.state.value} {self._metadata!r}>"
