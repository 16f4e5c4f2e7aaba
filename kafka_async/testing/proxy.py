"""``FaultProxy``: a Kafka-aware TCP proxy that injects network and protocol faults.

Put it between a client and a broker, and make the broker advertise the proxy's address
(``EmbeddedBroker(advertised_port=proxy.port)``, or :func:`broker_behind_proxy`), so that
every connection the client opens, bootstrap and per-broker alike, goes through it::

    async with broker_behind_proxy() as (broker, proxy):
        proxy.set_delay(0.2, jitter=0.05)          # latency on every chunk
        proxy.drop_responses(PRODUCE.key, count=1) # the broker applies a Produce, the
                                                   # client never hears back
        use(proxy.address)                         # clients bootstrap via the proxy

Faults can be switched at any time and apply to open connections too:

* transport: :meth:`~FaultProxy.set_delay` (delay + jitter, order kept),
  :meth:`~FaultProxy.set_bandwidth` (bytes per second), :meth:`~FaultProxy.reset_connections`
  (TCP RST now), :meth:`~FaultProxy.reset_after_bytes`, :meth:`~FaultProxy.reset_periodically`
  (each connection lives a random 0.5-1.5 s by default), :meth:`~FaultProxy.set_blackhole`
  (accept, read, never answer: a half-open peer), :meth:`~FaultProxy.pause` /
  :meth:`~FaultProxy.resume` (a partition that heals: held bytes flow again in order);
* protocol (the proxy parses request frames, so it knows each response's API key, version
  and correlation id): :meth:`~FaultProxy.drop_requests` (never reaches the broker),
  :meth:`~FaultProxy.drop_responses` (applied by the broker, answer lost; optionally with a
  reset), :meth:`~FaultProxy.truncate_responses`, :meth:`~FaultProxy.corrupt_responses`,
  :meth:`~FaultProxy.rewrite_error` (decode, set every ``error_code``, re-encode with
  ``kafka_async.protocol``), and the general :meth:`~FaultProxy.mutate_responses` and
  :meth:`~FaultProxy.mutate_requests`. Each acts on the next ``count`` messages of an API key
  (None: all), after letting ``after`` of them pass;
* broker limits the broker under test lacks: :meth:`~FaultProxy.refuse_large_batches`
  (a topic's ``max.message.bytes``: oversized record batches never reach the broker and are
  answered MESSAGE_TOO_LARGE, as Kafka does).

The proxy runs in the task group of whoever enters it (``async with``), or in a thread of its
own (:meth:`FaultProxy.start_in_thread`, or ``with proxy.in_thread():``), which suits
synchronous tests and peer clients such as confluent-kafka. Every control method may be
called from any thread. :attr:`FaultProxy.stats` counts what happened.
"""

from __future__ import annotations

import contextlib
import random
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal

import anyio
import anyio.abc
from anyio.from_thread import BlockingPortal, start_blocking_portal
from anyio.streams.buffered import BufferedByteReceiveStream

from ..errors import MessageTooLargeError
from ..protocol import headers
from ..protocol.apis import BY_KEY, FIND_COORDINATOR, METADATA, PRODUCE
from ..protocol.apis.produce import PartitionProduceResponse, TopicProduceResponse
from ..protocol.codec import Reader
from ..protocol.schema import Message

__all__ = [
    "FaultProxy",
    "ProxiedBroker",
    "ProxyStats",
    "RequestInfo",
    "broker_behind_proxy",
    "start_proxied_broker",
]

Direction = Literal["both", "upstream", "downstream"]
_SIZE = struct.Struct(">i")
#: Frames above this are not Kafka traffic we can buffer; the connection is closed.
_MAX_FRAME = 512 * 1024 * 1024
_READ_CHUNK = 65536
#: Period of the housekeeping tick that enforces periodic resets.
_TICK = 0.01


@dataclass(frozen=True)
class RequestInfo:
    """What the proxy learned from a request header."""

    connection_id: int
    api_key: int
    api_version: int
    correlation_id: int
    expects_response: bool


@dataclass
class ProxyStats:
    """Counters since the proxy started (read them any time; they only grow)."""

    connections_accepted: int = 0
    connections_active: int = 0
    connections_reset: int = 0
    bytes_upstream: int = 0
    bytes_downstream: int = 0
    requests: int = 0
    responses: int = 0
    requests_dropped: int = 0
    responses_dropped: int = 0
    responses_truncated: int = 0
    responses_corrupted: int = 0
    responses_rewritten: int = 0
    requests_rewritten: int = 0
    #: Messages a rule wanted to rewrite but that did not decode (forwarded unchanged).
    rewrite_failures: int = 0
    #: Partitions of Produce requests refused by :meth:`FaultProxy.refuse_large_batches`.
    batches_refused: int = 0
    requests_by_api: dict[int, int] = field(default_factory=dict)


ResponseAction = Callable[["_Conn", RequestInfo, bytes], "bytes | None"]


@dataclass
class _Rule:
    """A fault on matching messages: lets ``skip`` pass, then acts on ``remaining`` (None: all)."""

    api_key: int | None
    remaining: int | None
    action: ResponseAction
    skip: int = 0

    def matches(self, info: RequestInfo) -> bool:
        if self.remaining is not None and self.remaining <= 0:
            return False
        return self.api_key is None or self.api_key == info.api_key


def _pick_rule(rules: list[_Rule], info: RequestInfo) -> tuple[_Rule | None, list[_Rule]]:
    """The rule that acts on this message (consuming a skip or a count), and the rules left.

    A rule still letting messages pass consumes this one's skip and does not shadow later
    rules. Call with the proxy lock held.
    """
    chosen = None
    for rule in rules:
        if not rule.matches(info):
            continue
        if rule.skip > 0:
            rule.skip -= 1
            continue
        chosen = rule
        if rule.remaining is not None:
            rule.remaining -= 1
        break
    return chosen, [r for r in rules if r.remaining is None or r.remaining > 0]


class _Conn:
    """One proxied client connection and its upstream twin."""

    def __init__(self, proxy: FaultProxy, cid: int, client: anyio.abc.SocketStream) -> None:
        self.proxy = proxy
        self.id = cid
        self.client = client
        self.upstream: anyio.abc.SocketStream | None = None
        self.scope = anyio.CancelScope()
        self.pending: deque[RequestInfo] = deque()
        self.blackholed = False
        self.was_reset = False
        #: Bytes this connection may still carry (both directions) before it is reset.
        self.byte_budget: int | None = None
        self.reset_at: float | None = None
        #: Release time of the last chunk per direction, so delays never reorder data.
        self.last_release = {"upstream": 0.0, "downstream": 0.0}

    def reset(self) -> None:
        """Abort both sockets with RST (SO_LINGER 0) and stop the pumps."""
        if self.was_reset:
            return
        self.was_reset = True
        self.proxy.stats.connections_reset += 1
        for stream in (self.client, self.upstream):
            if stream is None:
                continue
            with contextlib.suppress(Exception):
                sock = stream.extra(anyio.abc.SocketAttribute.raw_socket)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.scope.cancel()


class FaultProxy:
    """A fault-injecting proxy from ``listen_host:listen_port`` to ``target_host:target_port``.

    Args:
        target_host: the broker's host (changeable later through :attr:`target`).
        target_port: the broker's port.
        listen_host: where to listen.
        listen_port: the port to listen on; 0 (the default) picks a free one.
        seed: seed of the random generator used for jitter, periodic resets and corruption.
        connect_timeout: seconds to wait for the upstream connection.
    """

    def __init__(
        self,
        target_host: str,
        target_port: int,
        *,
        listen_host: str = "127.0.0.1",
        listen_port: int = 0,
        seed: int | None = None,
        connect_timeout: float = 10.0,
    ) -> None:
        self.target = (target_host, target_port)
        self.listen_host = listen_host
        self._listen_port = listen_port
        self.connect_timeout = connect_timeout
        self.stats = ProxyStats()
        #: The most recent requests seen (newest last), for assertions in tests.
        self.requests: deque[RequestInfo] = deque(maxlen=10_000)
        self._rng = random.Random(seed)
        self._lock = threading.RLock()
        self._conns: dict[int, _Conn] = {}
        self._next_id = 0
        self._rules: list[_Rule] = []
        self._request_rules: list[_Rule] = []
        #: Set while paused: writers wait for it before moving any byte.
        self._resume: anyio.Event | None = None
        self._delay = {"upstream": (0.0, 0.0), "downstream": (0.0, 0.0)}
        self._rate: dict[str, float | None] = {"upstream": None, "downstream": None}
        self._reset_after: int | None = None
        self._reset_period: tuple[float, float] | None = None
        self._blackhole = False
        self._listener: anyio.abc.SocketListener | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._loop_thread: int | None = None
        self._portal: BlockingPortal | None = None
        self._thread_stack: contextlib.ExitStack | None = None
        #: ``refuse_large_batches``: the limit, and per (connection id, correlation id) the
        #: (topic, partition) pairs taken out of a forwarded Produce request.
        self._max_batch_bytes: int | None = None
        self._refused: dict[tuple[int, int], list[tuple[str, int]]] = {}

    # -- addresses ---------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The listening port (known once started, or when given)."""
        if self._listener is not None:
            return int(self._listener.extra(anyio.abc.SocketAttribute.local_port))
        return self._listen_port

    @property
    def address(self) -> str:
        """``"host:port"`` clients should bootstrap from."""
        return f"{self.listen_host}:{self.port}"

    @property
    def connection_count(self) -> int:
        """Connections currently open through the proxy."""
        with self._lock:
            return len(self._conns)

    def __repr__(self) -> str:
        return (
            f"<FaultProxy {self.address} -> {self.target[0]}:{self.target[1]} "
            f"conns={self.connection_count} rules={len(self._rules)} "
            f"blackhole={self._blackhole}>"
        )

    # -- running in the caller's event loop ----------------------------------------------------

    async def __aenter__(self) -> FaultProxy:
        multi = await anyio.create_tcp_listener(
            local_host=self.listen_host, local_port=self._listen_port
        )
        # One concrete host gives one listener; its accept() lets us own every task.
        first = multi.listeners[0]
        assert isinstance(first, anyio.abc.SocketListener)
        for extra in multi.listeners[1:]:
            await extra.aclose()
        self._listener = first
        self._loop_thread = threading.get_ident()
        tg = anyio.create_task_group()
        await tg.__aenter__()
        self._tg = tg
        # The tasks get what they need as arguments: they may first run after __aexit__ began
        # (an exception right after entering), when the attributes are being torn down.
        tg.start_soon(self._accept_loop, first, tg)
        tg.start_soon(self._tick_loop)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        tg = self._tg
        assert tg is not None
        tg.cancel_scope.cancel()
        try:
            # The body's own exception is not handed to the task group, so it propagates
            # as itself rather than wrapped in an ExceptionGroup; our tasks only get cancelled.
            await tg.__aexit__(None, None, None)
            return None
        finally:
            self._tg = None
            with anyio.CancelScope(shield=True):
                if self._listener is not None:
                    await self._listener.aclose()
                    self._listener = None
            self._loop_thread = None

    # -- running in a thread of its own ------------------------------------------------------

    def start_in_thread(self, backend: str = "asyncio") -> FaultProxy:
        """Run the proxy in a background thread's event loop until :meth:`stop_thread`.

        ``backend`` is the anyio backend of that loop (``"asyncio"`` or ``"trio"``); it is
        independent of whatever loop the caller runs.
        """
        if self._thread_stack is not None:
            raise RuntimeError("the proxy already runs in a thread")
        stack = contextlib.ExitStack()
        try:
            self._portal = stack.enter_context(start_blocking_portal(backend))
            stack.enter_context(self._portal.wrap_async_context_manager(self))
        except BaseException:
            stack.close()
            self._portal = None
            raise
        self._thread_stack = stack
        return self

    def stop_thread(self) -> None:
        """Stop a proxy started with :meth:`start_in_thread` (closes every connection)."""
        stack, self._thread_stack = self._thread_stack, None
        if stack is not None:
            try:
                stack.close()
            finally:
                self._portal = None

    @contextlib.contextmanager
    def in_thread(self, backend: str = "asyncio") -> Iterator[FaultProxy]:
        """``with proxy.in_thread():`` runs it in a background thread for the block."""
        self.start_in_thread(backend)
        try:
            yield self
        finally:
            self.stop_thread()

    def _in_loop(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` in the proxy's event loop thread (cancel scopes are not thread-safe)."""
        if self._portal is not None and threading.get_ident() != self._loop_thread:
            self._portal.call(fn)
        else:
            fn()

    # -- control: transport faults -------------------------------------------------------------

    def set_delay(self, seconds: float, jitter: float = 0.0, direction: Direction = "both") -> None:
        """Delay every chunk by ``seconds`` +- ``jitter`` (uniform); order is preserved."""
        if seconds < 0 or jitter < 0:
            raise ValueError("delay and jitter must be >= 0")
        for d in self._directions(direction):
            self._delay[d] = (seconds, jitter)

    def set_bandwidth(self, bytes_per_second: float | None, direction: Direction = "both") -> None:
        """Throttle each connection to ``bytes_per_second`` per direction; None lifts it."""
        if bytes_per_second is not None and bytes_per_second <= 0:
            raise ValueError("bandwidth must be > 0 (or None for unlimited)")
        for d in self._directions(direction):
            self._rate[d] = bytes_per_second

    def reset_connections(self) -> int:
        """Reset (TCP RST) every open connection now; returns how many."""
        count = 0

        def do() -> None:
            nonlocal count
            with self._lock:
                conns = list(self._conns.values())
            for conn in conns:
                conn.reset()
            count = len(conns)

        self._in_loop(do)
        return count

    def reset_after_bytes(self, n: int | None) -> None:
        """Reset each connection once it has carried ``n`` more bytes (both directions).

        Applies to open connections (counting from now) and to each new one. None lifts it.
        """
        if n is not None and n < 0:
            raise ValueError("n must be >= 0")

        def do() -> None:
            self._reset_after = n
            with self._lock:
                for conn in self._conns.values():
                    conn.byte_budget = n
                    if n == 0:
                        conn.reset()

        self._in_loop(do)

    def reset_periodically(self, min_s: float = 0.5, max_s: float = 1.5) -> None:
        """Reset each connection after a random lifetime in ``[min_s, max_s]`` seconds."""
        if not 0 < min_s <= max_s:
            raise ValueError("need 0 < min_s <= max_s")

        def do() -> None:
            self._reset_period = (min_s, max_s)
            now = time.monotonic()
            with self._lock:
                for conn in self._conns.values():
                    conn.reset_at = now + self._rng.uniform(min_s, max_s)

        self._in_loop(do)

    def stop_periodic_resets(self) -> None:
        def do() -> None:
            self._reset_period = None
            with self._lock:
                for conn in self._conns.values():
                    conn.reset_at = None

        self._in_loop(do)

    def pause(self) -> None:
        """Hold every byte in both directions (a network partition without resets).

        Connections stay open and new ones are accepted; nothing moves until :meth:`resume`,
        when held data flows again in order. Clients see requests time out, then recover.
        """

        def do() -> None:
            if self._resume is None:
                self._resume = anyio.Event()

        self._in_loop(do)

    def resume(self) -> None:
        """Let held data flow again (see :meth:`pause`)."""

        def do() -> None:
            event, self._resume = self._resume, None
            if event is not None:
                event.set()

        self._in_loop(do)

    @property
    def paused(self) -> bool:
        return self._resume is not None

    def set_blackhole(self, enabled: bool = True) -> None:
        """Black-hole: accept and read, never forward or answer.

        Open connections become half-open for good (their streams lost bytes and cannot be
        trusted again); new ones are accepted but never connected upstream. Turning it off
        affects only connections opened afterwards.
        """

        def do() -> None:
            self._blackhole = enabled
            if enabled:
                with self._lock:
                    for conn in self._conns.values():
                        conn.blackholed = True

        self._in_loop(do)

    # -- control: protocol faults ----------------------------------------------------------------

    def drop_requests(
        self, api_key: int | None = None, count: int | None = 1, *, after: int = 0
    ) -> None:
        """Swallow matching requests: the broker never sees them, the client never hears back.

        Unlike :meth:`drop_responses`, the request is *not* applied (a produce is not written).
        ``after`` matching requests pass untouched first (as for every fault below).
        """

        def drop(conn: _Conn, info: RequestInfo, frame: bytes) -> bytes | None:
            self.stats.requests_dropped += 1
            return None

        self._add_rule("request", api_key, count, after, drop)

    def mutate_requests(
        self, api_key: int, fn: Callable[[Any], Any], count: int | None = 1, *, after: int = 0
    ) -> None:
        """Decode matching requests, pass them to ``fn``, forward the re-encoded result.

        ``fn`` gets the decoded request body (change it in place or return a new one; None
        means unchanged), e.g. to skew a Produce batch's base sequence. The broker answers the
        changed request; the response is matched as usual.
        """
        api = BY_KEY.get(api_key)
        if api is None:
            raise ValueError(f"unknown API key {api_key}")

        def mutate(conn: _Conn, info: RequestInfo, frame: bytes) -> bytes | None:
            try:
                r = Reader(memoryview(frame)[4:])
                _, version, correlation_id, client_id = headers.decode_request_header(r)
                if headers.request_header_version(api, version) >= 2:
                    headers.skip_tags(r)
                msg = api.decode_request(version, r)
                out = fn(msg)
                payload = headers.encode_request(
                    api, version, correlation_id, client_id, msg if out is None else out
                )
            except Exception:
                self.stats.rewrite_failures += 1
                return frame
            self.stats.requests_rewritten += 1
            return _SIZE.pack(len(payload)) + bytes(payload)

        self._add_rule("request", api_key, count, after, mutate)

    def drop_responses(
        self,
        api_key: int | None = None,
        count: int | None = 1,
        *,
        after: int = 0,
        reset: bool = False,
    ) -> None:
        """Forward matching requests, swallow their responses (``count`` None: all).

        The broker applied the request; the client never hears back. With ``reset=True`` the
        connection is also reset, as when a link dies between the broker's write and the
        client's read; otherwise it stays open and the client's request times out.
        """

        def drop(conn: _Conn, info: RequestInfo, frame: bytes) -> bytes | None:
            self.stats.responses_dropped += 1
            if reset:
                conn.reset()
            return None

        self._add_rule("response", api_key, count, after, drop)

    def truncate_responses(
        self,
        api_key: int | None = None,
        keep: int = 8,
        count: int | None = 1,
        *,
        reframe: bool = True,
        after: int = 0,
    ) -> None:
        """Cut matching responses to their first ``keep`` payload bytes.

        ``reframe=True`` sends a well-formed frame whose size says ``keep`` (the client's
        decoder meets a short message); ``reframe=False`` sends the original size prefix and
        only ``keep`` bytes, then resets the connection (a cut on the wire).
        """
        if keep < 0:
            raise ValueError("keep must be >= 0")

        def truncate(conn: _Conn, info: RequestInfo, frame: bytes) -> bytes | None:
            self.stats.responses_truncated += 1
            payload = frame[4 : 4 + keep]
            if reframe:
                return _SIZE.pack(len(payload)) + payload
            conn.byte_budget = 4 + len(payload)
            return frame[:4] + payload

        self._add_rule("response", api_key, count, after, truncate)

    def corrupt_responses(
        self,
        api_key: int | None = None,
        count: int | None = 1,
        *,
        offset: int | None = None,
        flips: int = 1,
        after: int = 0,
    ) -> None:
        """XOR bytes of matching responses with 0xFF.

        ``offset`` (into the payload after the size prefix) picks the byte; None picks
        ``flips`` random bytes past the correlation id, so the response still reaches its
        waiter and the body decoder has to cope.
        """

        def corrupt(conn: _Conn, info: RequestInfo, frame: bytes) -> bytes | None:
            data = bytearray(frame)
            body_start = 8  # size prefix + correlation id
            if offset is not None:
                positions = [4 + offset] if 4 + offset < len(data) else []
            elif len(data) > body_start:
                positions = [self._rng.randrange(body_start, len(data)) for _ in range(flips)]
            else:
                positions = []
            for pos in positions:
                data[pos] ^= 0xFF
            self.stats.responses_corrupted += 1
            return bytes(data)

        self._add_rule("response", api_key, count, after, corrupt)

    def mutate_responses(
        self, api_key: int, fn: Callable[[Any], Any], count: int | None = 1, *, after: int = 0
    ) -> None:
        """Decode matching responses, pass them to ``fn``, re-encode what it returns.

        ``fn`` gets the decoded message (``kafka_async.protocol`` value object) and may change
        it in place and return it, or return a new one (None means: unchanged).
        """
        api = BY_KEY.get(api_key)
        if api is None:
            raise ValueError(f"unknown API key {api_key}")

        def mutate(conn: _Conn, info: RequestInfo, frame: bytes) -> bytes | None:
            try:
                r = Reader(memoryview(frame)[4:])
                correlation_id = headers.read_response_header(r, api, info.api_version)
                msg = api.decode_response(info.api_version, r)
                out = fn(msg)
                body = headers.encode_response(
                    api, info.api_version, correlation_id, msg if out is None else out
                )
            except Exception:
                # A response we cannot decode is passed on as it is; the count shows it.
                self.stats.rewrite_failures += 1
                return frame
            self.stats.responses_rewritten += 1
            return _SIZE.pack(len(body)) + bytes(body)

        self._add_rule("response", api_key, count, after, mutate)

    def advertise_self(self) -> None:
        """Route every connection the client makes through this proxy: from now on, each
        broker address in Metadata answers and each coordinator address in FindCoordinator
        answers is replaced by the proxy's own. For a one-node broker (every broker address
        would lead to the same target); raises nothing itself, but a Metadata answer naming
        more than one broker is counted in ``stats.rewrite_failures`` and passed on as it is.

        FindCoordinator v4+ answers in its ``coordinators`` list, where the old top-level
        host and port must stay unset; v0-3 answer at the top level.
        """

        def metadata(msg: Any) -> Any:
            if len(msg.brokers) != 1:
                raise ValueError("advertise_self routes a one-node broker only")
            for broker in msg.brokers:
                broker.host, broker.port = self.listen_host, self.port
            return msg

        def find_coordinator(msg: Any) -> Any:
            if msg.coordinators:
                for coordinator in msg.coordinators:
                    if coordinator.node_id >= 0:
                        coordinator.host, coordinator.port = self.listen_host, self.port
            elif msg.node_id >= 0:
                msg.host, msg.port = self.listen_host, self.port
            return msg

        self.mutate_responses(METADATA.key, metadata, count=None)
        self.mutate_responses(FIND_COORDINATOR.key, find_coordinator, count=None)

    def rewrite_error(
        self, api_key: int, error_code: int, count: int | None = 1, *, after: int = 0
    ) -> None:
        """Set every ``error_code`` field (top level and nested) of matching responses."""

        def set_codes(msg: Any) -> Any:
            _set_error_codes(msg, error_code)
            return msg

        self.mutate_responses(api_key, set_codes, count, after=after)

    def refuse_large_batches(self, max_bytes: int | None) -> None:
        """Emulate a broker's ``max.message.bytes`` (which Tansu does not enforce).

        From now on, a partition of a Produce request carrying a record batch larger than
        ``max_bytes`` (its size on the wire, compressed) is taken out of the request, so the
        broker never writes it, and its entry in the broker's answer says MESSAGE_TOO_LARGE,
        as Kafka's answer would; the request's other partitions are written and answered
        as usual. A request left with no partition still goes to the broker (empty), which
        keeps responses in request order. None turns the limit off (so does :meth:`clear`).
        """
        if max_bytes is not None and max_bytes < 1:
            raise ValueError("max_bytes must be >= 1 (or None)")

        def do() -> None:
            self._max_batch_bytes = max_bytes

        self._in_loop(do)

    def _refuse_large(self, conn: _Conn, info: RequestInfo, frame: bytes) -> bytes:
        """``refuse_large_batches`` on one Produce request: the frame to forward."""
        limit = self._max_batch_bytes
        if limit is None or not _has_batch_over(frame, limit):
            return frame
        try:
            r = Reader(memoryview(frame)[4:])
            _, version, correlation_id, client_id = headers.decode_request_header(r)
            if headers.request_header_version(PRODUCE, version) >= 2:
                headers.skip_tags(r)
            body = PRODUCE.decode_request(version, r)
            refused: list[tuple[str, int]] = []
            topics = []
            for topic in body.topic_data:
                kept = []
                for part in topic.partition_data:
                    if part.records is not None and _largest_batch(part.records) > limit:
                        refused.append((topic.name, part.index))
                    else:
                        kept.append(part)
                if kept:
                    topic.partition_data = kept
                    topics.append(topic)
            body.topic_data = topics
            payload = headers.encode_request(PRODUCE, version, correlation_id, client_id, body)
        except Exception:
            self.stats.rewrite_failures += 1
            return frame
        self.stats.batches_refused += len(refused)
        if info.expects_response:
            self._refused[(conn.id, correlation_id)] = refused
        return _SIZE.pack(len(payload)) + bytes(payload)

    def _answer_refused(
        self, info: RequestInfo, frame: bytes, refused: list[tuple[str, int]]
    ) -> bytes:
        """Add the partitions ``_refuse_large`` took out to the broker's Produce answer."""
        try:
            r = Reader(memoryview(frame)[4:])
            correlation_id = headers.read_response_header(r, PRODUCE, info.api_version)
            body = PRODUCE.decode_response(info.api_version, r)
            by_name = {t.name: t for t in body.responses}
            for name, index in refused:
                topic = by_name.get(name)
                if topic is None:
                    topic = by_name[name] = TopicProduceResponse(name=name, partition_responses=[])
                    body.responses.append(topic)
                topic.partition_responses.append(
                    PartitionProduceResponse(
                        index=index,
                        error_code=MessageTooLargeError.code,
                        base_offset=-1,
                        # Ignorable: dropped below v8, which has no error_message.
                        error_message="the record batch is larger than max.message.bytes",
                    )
                )
            out = headers.encode_response(PRODUCE, info.api_version, correlation_id, body)
        except Exception:
            self.stats.rewrite_failures += 1
            return frame
        return _SIZE.pack(len(out)) + bytes(out)

    def clear(self) -> None:
        """Remove every fault (connections already black-holed stay so)."""

        def do() -> None:
            self._max_batch_bytes = None
            with self._lock:
                self._rules.clear()
                self._request_rules.clear()
                for conn in self._conns.values():
                    conn.byte_budget = None
                    conn.reset_at = None
            self._delay = {"upstream": (0.0, 0.0), "downstream": (0.0, 0.0)}
            self._rate = {"upstream": None, "downstream": None}
            self._reset_after = None
            self._reset_period = None
            self._blackhole = False
            event, self._resume = self._resume, None
            if event is not None:
                event.set()

        self._in_loop(do)

    def pending_rules(self) -> int:
        """Request and response faults still waiting for a matching message."""
        with self._lock:
            rules = self._rules + self._request_rules
            return sum(1 for r in rules if r.remaining is None or r.remaining > 0)

    def _add_rule(
        self,
        kind: Literal["request", "response"],
        api_key: int | None,
        count: int | None,
        after: int,
        action: ResponseAction,
    ) -> None:
        if count is not None and count < 1:
            raise ValueError("count must be >= 1 (or None for every matching message)")
        if after < 0:
            raise ValueError("after must be >= 0")
        rule = _Rule(api_key, count, action, after)
        with self._lock:
            if kind == "response":
                self._rules = [*self._rules, rule]
            else:
                self._request_rules = [*self._request_rules, rule]

    @staticmethod
    def _directions(direction: Direction) -> tuple[str, ...]:
        if direction == "both":
            return ("upstream", "downstream")
        if direction in ("upstream", "downstream"):
            return (direction,)
        raise ValueError(f"direction must be both, upstream or downstream, not {direction!r}")

    # -- the data path -----------------------------------------------------------------------

    async def _accept_loop(
        self, listener: anyio.abc.SocketListener, tg: anyio.abc.TaskGroup
    ) -> None:
        while True:
            client = await listener.accept()
            with self._lock:
                self._next_id += 1
                conn = _Conn(self, self._next_id, client)
                conn.byte_budget = self._reset_after
                if self._reset_period is not None:
                    conn.reset_at = time.monotonic() + self._rng.uniform(*self._reset_period)
                conn.blackholed = self._blackhole
                self._conns[conn.id] = conn
            self.stats.connections_accepted += 1
            self.stats.connections_active += 1
            tg.start_soon(self._serve, conn)

    async def _tick_loop(self) -> None:
        while True:
            await anyio.sleep(_TICK)
            now = time.monotonic()
            with self._lock:
                due = [
                    c for c in self._conns.values() if c.reset_at is not None and c.reset_at <= now
                ]
            for conn in due:
                conn.reset()

    async def _serve(self, conn: _Conn) -> None:
        try:
            with conn.scope:
                if conn.blackholed:
                    await self._swallow(conn)
                    return
                try:
                    with anyio.fail_after(self.connect_timeout):
                        conn.upstream = await anyio.connect_tcp(*self.target)
                except (OSError, TimeoutError):
                    return  # like a dead broker: the client sees its connection close
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._pump, conn, "upstream", tg.cancel_scope)
                    tg.start_soon(self._pump, conn, "downstream", tg.cancel_scope)
        finally:
            with self._lock:
                self._conns.pop(conn.id, None)
            self.stats.connections_active -= 1
            with anyio.CancelScope(shield=True):
                for stream in (conn.client, conn.upstream):
                    if stream is not None:
                        with contextlib.suppress(Exception):
                            await stream.aclose()

    async def _swallow(self, conn: _Conn) -> None:
        """Read and discard what the client sends until it gives up."""
        await _discard(conn.client)

    async def _pump(self, conn: _Conn, direction: str, conn_scope: anyio.CancelScope) -> None:
        """Frames from one side, through the faults, to the other side.

        A reader that meets EOF or an error lets its writer drain what is queued (delayed
        data still arrives), then the whole connection ends: Kafka never half-closes.
        """
        src = conn.client if direction == "upstream" else conn.upstream
        dst = conn.upstream if direction == "upstream" else conn.client
        assert src is not None
        assert dst is not None
        send, receive = anyio.create_memory_object_stream[tuple[float, bytes]](64)
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._writer, conn, direction, dst, receive, conn_scope)
            async with send:
                with contextlib.suppress(*_IO_ERRORS):
                    await self._read_loop(conn, direction, src, send)
        conn_scope.cancel()

    async def _read_loop(
        self,
        conn: _Conn,
        direction: str,
        src: anyio.abc.SocketStream,
        send: anyio.abc.ObjectSendStream[tuple[float, bytes]],
    ) -> None:
        rx = BufferedByteReceiveStream(src)
        while True:
            frame = await self._read_frame(rx)
            if conn.blackholed:
                # Keep reading so neither peer blocks on a full socket buffer; forward
                # nothing, ever again, on this connection.
                await _discard(src)
                await anyio.sleep_forever()
            if direction == "upstream":
                out: bytes | None = self._note_request(conn, frame)
            else:
                out = self._apply_rules(conn, frame)
            if out is not None:
                await send.send((self._release_time(conn, direction), out))

    async def _read_frame(self, rx: BufferedByteReceiveStream) -> bytes:
        head = await rx.receive_exactly(4)
        size = _SIZE.unpack(head)[0]
        if size < 0 or size > _MAX_FRAME:
            raise _BadFrame(size)
        return head + await rx.receive_exactly(size)

    def _release_time(self, conn: _Conn, direction: str) -> float:
        base, jitter = self._delay[direction]
        now = time.monotonic()
        if base == 0 and jitter == 0:
            at = now
        else:
            at = now + max(0.0, base + self._rng.uniform(-jitter, jitter))
        # Never before the previous chunk: delays must not reorder a TCP stream.
        at = max(at, conn.last_release[direction])
        conn.last_release[direction] = at
        return at

    async def _writer(
        self,
        conn: _Conn,
        direction: str,
        dst: anyio.abc.SocketStream,
        receive: anyio.abc.ObjectReceiveStream[tuple[float, bytes]],
        conn_scope: anyio.CancelScope,
    ) -> None:
        try:
            async with receive:
                async for release_at, data in receive:
                    wait = release_at - time.monotonic()
                    if wait > 0:
                        await anyio.sleep(wait)
                    while (held := self._resume) is not None:
                        await held.wait()
                    if not conn.blackholed:
                        await self._write(conn, direction, dst, data)
        except _IO_ERRORS:
            conn_scope.cancel()

    async def _write(
        self, conn: _Conn, direction: str, dst: anyio.abc.SocketStream, data: bytes
    ) -> None:
        view = memoryview(data)
        while view:
            rate = self._rate[direction]
            step = len(view) if rate is None else max(1, int(rate / 20))
            chunk = view[:step]
            budget = conn.byte_budget
            if budget is not None and len(chunk) >= budget:
                chunk = chunk[:budget]
                if chunk:
                    await dst.send(bytes(chunk))
                    self._count(direction, len(chunk))
                conn.byte_budget = 0
                conn.reset()
                await anyio.sleep_forever()  # cancelled by the reset
            await dst.send(bytes(chunk))
            self._count(direction, len(chunk))
            if budget is not None:
                conn.byte_budget = budget - len(chunk)
            view = view[len(chunk) :]
            if rate is not None:
                await anyio.sleep(len(chunk) / rate)

    def _count(self, direction: str, n: int) -> None:
        if direction == "upstream":
            self.stats.bytes_upstream += n
        else:
            self.stats.bytes_downstream += n

    def _note_request(self, conn: _Conn, frame: bytes) -> bytes | None:
        """Record a request and apply request rules; None when it must not be forwarded."""
        info = _parse_request(conn.id, frame)
        if info is None:
            return frame
        with self._lock:
            rule, self._request_rules = _pick_rule(self._request_rules, info)
        if rule is not None:
            out = rule.action(conn, info, frame)
            if out is None:
                return None
            frame = out
        if self._max_batch_bytes is not None and info.api_key == PRODUCE.key:
            frame = self._refuse_large(conn, info, frame)
        self.stats.requests += 1
        self.stats.requests_by_api[info.api_key] = (
            self.stats.requests_by_api.get(info.api_key, 0) + 1
        )
        self.requests.append(info)
        if info.expects_response:
            conn.pending.append(info)
        return frame

    def _apply_rules(self, conn: _Conn, frame: bytes) -> bytes | None:
        self.stats.responses += 1
        if len(frame) < 8:
            return frame
        correlation_id = _SIZE.unpack_from(frame, 4)[0]
        info = None
        # Responses come in request order; skip entries whose response never came (cannot
        # happen with a correct broker, but a stale entry must not shift every later match).
        while conn.pending:
            head = conn.pending.popleft()
            if head.correlation_id == correlation_id:
                info = head
                break
        if info is None:
            return frame
        if self._refused:
            refused = self._refused.pop((conn.id, info.correlation_id), None)
            if refused:
                frame = self._answer_refused(info, frame, refused)
        with self._lock:
            rule, self._rules = _pick_rule(self._rules, info)
        if rule is None:
            return frame
        return rule.action(conn, info, frame)


class _BadFrame(Exception):
    """A frame size no Kafka peer sends; the connection is closed."""


_IO_ERRORS = (
    anyio.EndOfStream,
    anyio.IncompleteRead,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    OSError,
    _BadFrame,
)


async def _discard(stream: anyio.abc.SocketStream) -> None:
    with contextlib.suppress(*_IO_ERRORS):
        while True:
            await stream.receive(_READ_CHUNK)


def _parse_request(conn_id: int, frame: bytes) -> RequestInfo | None:
    """Header facts of a request frame; None when it is not a Kafka request we can read."""
    r = Reader(memoryview(frame)[4:])
    try:
        api_key, version, correlation_id, _client_id = headers.decode_request_header(r)
    except Exception:
        return None
    expects = True
    api = BY_KEY.get(api_key)
    if api_key == PRODUCE.key and api is not None:
        # acks=0 produce requests get no response; the proxy must not wait for one.
        with contextlib.suppress(Exception):
            flexible = api.is_flexible(version)
            if headers.request_header_version(api, version) >= 2:
                headers.skip_tags(r)
            if version >= 3:  # transactional_id comes before acks from v3
                if flexible:
                    r.compact_nullable_string()
                else:
                    r.nullable_string()
            expects = r.int16() != 0
    return RequestInfo(conn_id, api_key, version, correlation_id, expects)


def _largest_batch(records: bytes | bytearray | memoryview) -> int:
    """Size of the largest record batch (v2) or message (v0/v1) in a records field."""
    largest = 0
    pos = 0
    # Every format starts with baseOffset (8 bytes) then a 4-byte length of the rest.
    while pos + 12 <= len(records):
        size = 12 + _SIZE.unpack_from(records, pos + 8)[0]
        largest = max(largest, size)
        pos += size
    return largest


def _has_batch_over(frame: bytes, limit: int) -> bool:
    """Cheap pre-check before decoding a Produce request: could any batch exceed ``limit``?"""
    return len(frame) - 4 > limit


def _set_error_codes(msg: Any, code: int) -> None:
    if isinstance(msg, list):
        for item in msg:
            _set_error_codes(item, code)
        return
    if not isinstance(msg, Message):
        return
    # A generated message's slots are its fields, in wire order (schema.py checks that).
    names: tuple[str, ...] = type(msg).__slots__
    for name in names:
        value = getattr(msg, name)
        if name == "error_code":
            object.__setattr__(msg, name, code)
        elif isinstance(value, Message | list):
            _set_error_codes(value, code)


@contextlib.asynccontextmanager
async def broker_behind_proxy(**broker_kwargs: Any) -> AsyncIterator[tuple[Any, FaultProxy]]:
    """An :class:`~kafka_async.testing.EmbeddedBroker` that advertises a :class:`FaultProxy`.

    Yields ``(broker, proxy)``; clients bootstrap from ``proxy.address``, and Metadata keeps
    them on the proxy. Keyword arguments go to ``EmbeddedBroker``.
    """
    from ._procs import free_port
    from .broker import EmbeddedBroker

    port = broker_kwargs.pop("port", None) or free_port()
    async with FaultProxy("127.0.0.1", port) as proxy:
        broker = EmbeddedBroker(port=port, advertised_port=proxy.port, **broker_kwargs)
        async with broker:
            try:
                yield broker, proxy
            finally:
                # Tansu's SIGTERM waits for open connections; don't make it wait for ours.
                proxy.reset_connections()


@dataclass
class ProxiedBroker:
    """An embedded broker whose advertised address is a :class:`FaultProxy` in a thread."""

    broker: Any
    proxy: FaultProxy

    @property
    def bootstrap_servers(self) -> str:
        """Where clients should bootstrap: the proxy."""
        return self.proxy.address

    def close(self) -> None:
        """Stop the broker, then the proxy (connections are reset first)."""
        try:
            self.proxy.reset_connections()
            self.broker.stop()
        finally:
            self.proxy.stop_thread()


def start_proxied_broker(**broker_kwargs: Any) -> ProxiedBroker:
    """Blocking twin of :func:`broker_behind_proxy`; the proxy runs in its own thread.

    Call :meth:`ProxiedBroker.close` when done.
    """
    from ._procs import free_port
    from .broker import EmbeddedBroker

    port = broker_kwargs.pop("port", None) or free_port()
    proxy = FaultProxy("127.0.0.1", port).start_in_thread()
    try:
        broker = EmbeddedBroker(port=port, advertised_port=proxy.port, **broker_kwargs)
        broker.start()
    except BaseException:
        proxy.stop_thread()
        raise
    return ProxiedBroker(broker, proxy)
