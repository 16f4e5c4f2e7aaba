"""One connection to one broker: framing, correlation ids, pipelining, version negotiation.

Lifecycle
---------
``await task_group.start(conn.run)`` (or ``await conn.connect(task_group)``) opens the
stream, runs ApiVersions and, for SASL_* protocols, authentication, then reports started;
the rest of ``run`` is the reader loop, living in the caller's task group. ``run`` returns
when the connection closes for any reason; connection failures are never raised into the
task group, they are delivered to the waiting requests instead. ``async with conn:`` does the
same with a private task group. ``close()`` may be called from any task and returns within a
second.

Requests and responses
----------------------
Every request is one frame (size prefix + header + body built in one bytearray). The frame
and, if a response is expected, a waiter are queued in one synchronous step, so the waiter
FIFO order is the wire order; whoever holds the write lock then writes all queued frames
with one ``send`` (concurrent requests coalesce into one system call). Kafka answers
requests of one connection in order, so the reader hands each frame to the FIFO's head and a
correlation id mismatch means the stream is corrupt (fatal). ``expect_response=False``
(Produce with acks=0) adds no waiter.

Why cancellation cannot desynchronise the stream: a request cancelled (or timed out) before
its frame was written is taken back out of the queue, frame and waiter together; one
cancelled after that stays in the FIFO, marked abandoned, and the reader still reads its
response and drops it. The write itself is shielded (a half-written frame would corrupt the
stream) and bounded by the writer's deadline; if that passes mid-write, the connection is
closed.

Re-authentication (KIP-368)
---------------------------
When SASL authentication reports a session lifetime, a task in the connection's group
authenticates again at a random 85-95% of it. It first fetches what the mechanism needs (an
OAUTHBEARER token) without blocking anyone, then pauses: new requests wait (within their
deadlines) before being queued, frames already queued are written, and the SASL requests go
out alone. A request about to be queued once that point has passed starts the pause itself
(and wakes the task), as the Java client re-authenticates before its next write: on a busy
event loop the task's timer can fire late, and a request must not go out on a session the
broker is about to expire. Responses to requests sent earlier keep arriving in order ahead
of the SASL answers, so nothing in flight is disturbed. Writes resume when the exchange ends;
if it fails, the connection closes (the broker would close it at expiry anyway).

Throttling
----------
A response with ``throttle_time_ms > 0`` (the broker's quota was exceeded) holds further
writes on this connection until that time has passed, as KIP-219 asks of clients.

Timeouts
--------
Each request has a deadline (``timeout``, default ``request_timeout_ms``) covering the write
and the wait. On expiry the caller gets ``KafkaTimeoutError``. The connection is closed too,
but only when its *oldest* unanswered request is past its own deadline: then the broker has
stopped answering and everything queued behind is doomed. A request that timed out merely
because it queued behind a long poll (a Fetch or JoinGroup with a longer deadline) leaves the
connection open; its late response is read and dropped.

Errors
------
Any stream error (EOF, reset, oversized or malformed frame, unexpected correlation id) closes
the connection and fails every waiter with ``KafkaConnectionError``; the waiter whose
response was too large gets ``ResponseTooLargeError`` (checked from the size prefix, before
the body is read).
"""

from __future__ import annotations

import logging
import random
import ssl
import struct
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Literal, overload

import anyio
import anyio.abc
from anyio.abc import TaskStatus

from .._version import __version__
from ..errors import (
    IncompatibleBrokerVersionError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    ProtocolDecodeError,
    ResponseTooLargeError,
    UnsupportedFieldError,
    UnsupportedVersionError,
    raise_for_code,
)
from ..protocol import headers
from ..protocol.apis import API_VERSIONS, SASL_HANDSHAKE
from ..protocol.apis.api_versions import ApiVersionsRequest
from ..protocol.codec import Reader
from ..protocol.schema import AnyApi, Api, ReqT, RespT
from . import sasl
from .config import ClientConfig
from .tls import TLSHandshakeError, describe_handshake_error, open_tls_stream

log = logging.getLogger(__name__)

#: Opens a byte stream to ``host:port`` honouring the config's TLS settings. Injectable so
#: tests can run the connection and pool over in-memory streams.
StreamFactory = Callable[[str, int, ClientConfig], Awaitable[anyio.abc.ByteStream]]
#: Runs after ApiVersions on a fresh connection (SASL); raises to refuse the connection.
Authenticator = Callable[["BrokerConnection"], Awaitable[None]]

_SIZE = struct.Struct(">i")
_UNSUPPORTED_VERSION = UnsupportedVersionError.code
_READ_CHUNK = 65536
_READ_MAX = 262144
_PREALLOC_MAX = 1 << 20  # frames up to this size are read into one preallocated buffer
_CLOSE_GRACE = 1.0  # seconds close() and shutdown wait for the socket to close

_NEW, _CONNECTING, _READY, _CLOSED = "new", "connecting", "ready", "closed"


_CLIENT_SOFTWARE = ("kafka-async", __version__)
#: The client software name and version this library sends in ApiVersions (KIP-511).
CLIENT_SOFTWARE = _CLIENT_SOFTWARE


async def tcp_stream(host: str, port: int, config: ClientConfig) -> anyio.abc.ByteStream:
    """The default :data:`StreamFactory`: TCP via anyio, wrapped in TLS for SSL/SASL_SSL.

    A refused TLS handshake raises :class:`~kafka_async.net.tls.TLSHandshakeError`.
    """
    ctx = config.tls_context()
    if ctx is not None:
        return await open_tls_stream(host, port, ctx)
    return await anyio.connect_tcp(host, port)


def _peek_int16(reader: Reader) -> int:
    return int.from_bytes(reader.buf[reader.pos : reader.pos + 2], "big", signed=True)


class _Waiter:
    """A request waiting for its response frame."""

    __slots__ = (
        "abandoned",
        "api",
        "correlation_id",
        "deadline",
        "error",
        "event",
        "reader",
        "version",
    )

    def __init__(self, api: AnyApi, version: int, correlation_id: int, deadline: float) -> None:
        self.api = api
        self.version = version
        self.correlation_id = correlation_id
        self.deadline = deadline
        self.event = anyio.Event()
        self.reader: Reader | None = None
        self.error: KafkaError | None = None
        self.abandoned = False


@dataclass(frozen=True, slots=True)
class ConnectionStatistics:
    """A snapshot of one connection's state and counters."""

    address: str
    node_id: int | None
    state: str
    in_flight: int
    requests_sent: int
    writes: int
    throttles: int
    responses_received: int
    responses_dropped: int
    bytes_sent: int
    bytes_received: int
    api_versions: Mapping[int, tuple[int, int]]
    close_reason: str | None
    #: Successful SASL re-authentications on this connection (KIP-368).
    reauthentications: int = 0


class BrokerConnection:
    """A pipelined connection to one broker. See the module docstring for the rules."""

    def __init__(
        self,
        host: str,
        port: int,
        config: ClientConfig,
        *,
        node_id: int | None = None,
        stream_factory: StreamFactory | None = None,
        authenticator: Authenticator | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self.config = config
        self.node_id = node_id
        self._factory = stream_factory or tcp_stream
        # The built-in SASL client also re-authenticates; a custom authenticator does not.
        self._builtin_sasl = authenticator is None and config.uses_sasl
        self._authenticator = authenticator
        #: Session lifetime (ms) the broker granted at the last authentication; 0: none.
        self.sasl_session_lifetime_ms = 0
        #: Successful re-authentications (KIP-368).
        self.reauthentications = 0
        # Set while re-authenticating: requests wait on it before being queued.
        self._paused: anyio.Event | None = None
        self._reauth_requests = 0
        #: When the next re-authentication is due (``anyio.current_time()``); None: none is.
        self._reauth_at: float | None = None
        #: When the exchange that started the current session began: the session's lifetime
        #: counts from there, as in the Java client, so a late answer cannot make the client
        #: think its session lasts longer than the broker does.
        self._session_started = 0.0
        self._reauth_wake = anyio.Event()
        self._state = _NEW
        self._stream: anyio.abc.ByteStream | None = None
        self._write_lock = anyio.Lock()
        self._waiters: deque[_Waiter] = deque()
        self._rbuf = bytearray()
        # Frames queued for writing, with sequence numbers; see _send.
        self._outbox: list[tuple[int, bytearray]] = []
        self._queued_seq = 0
        self._flushed_seq = 0
        self._next_id = 0
        self._api_versions: dict[int, tuple[int, int]] = {}
        #: Feature levels the cluster finalized (ApiVersions v3+, KIP-584), with their epoch
        #: (-1: none reported); e.g. ``transaction.version`` for KIP-890 transactions.
        self.finalized_features: dict[str, int] = {}
        self.finalized_features_epoch = -1
        self._scope: anyio.CancelScope | None = None
        self._own_tg: anyio.abc.TaskGroup | None = None
        self._finished = anyio.Event()
        # Set by _fail, at once (``_finished`` waits for the socket): wakes a throttle wait.
        self._dead = anyio.Event()
        self._close_reason: str | None = None
        self._client_id = config.client_id
        self._max_response = config.max_response_size
        self._default_timeout = config.request_timeout
        # counters
        self.requests_sent = 0
        #: Socket writes; below ``requests_sent`` when concurrent requests were coalesced.
        self.writes = 0
        #: Responses that asked us to pause (throttle_time_ms > 0, KIP-219).
        self.throttles = 0
        self._throttled_until = 0.0
        self.responses_received = 0
        self.responses_dropped = 0
        self.bytes_sent = 0
        self.bytes_received = 0
        #: ``anyio.current_time()`` of the last frame sent or received (idle tracking).
        self.last_activity = 0.0

    # -- properties ------------------------------------------------------------------------

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def ready(self) -> bool:
        """True once negotiated and until closed."""
        return self._state == _READY

    @property
    def closed(self) -> bool:
        return self._state == _CLOSED

    @property
    def in_flight(self) -> int:
        """Requests queued or written whose responses have not been read (abandoned too)."""
        return len(self._waiters)

    @property
    def api_versions(self) -> Mapping[int, tuple[int, int]]:
        """api key -> (min, max) version the broker supports, from ApiVersions."""
        return self._api_versions

    @property
    def close_reason(self) -> str | None:
        return self._close_reason

    def __repr__(self) -> str:
        node = f" node={self.node_id}" if self.node_id is not None else ""
        return (
            f"<BrokerConnection {self.address}{node} {self._state} in_flight={len(self._waiters)}>"
        )

    # -- versions --------------------------------------------------------------------------

    def version_for(
        self, api: AnyApi, min_version: int | None = None, max_version: int | None = None
    ) -> int:
        """The highest version of ``api`` both sides support within the given bounds."""
        lo = api.min_version if min_version is None else max(api.min_version, min_version)
        hi = api.max_version if max_version is None else min(api.max_version, max_version)
        broker = self._api_versions.get(api.key)
        if broker is None:
            raise IncompatibleBrokerVersionError(
                f"{self.address}: broker does not support {api.name} (api key {api.key})"
            )
        lo = max(lo, broker[0])
        hi = min(hi, broker[1])
        if lo > hi:
            raise IncompatibleBrokerVersionError(
                f"{self.address}: no common version of {api.name}: broker supports "
                f"{broker[0]}-{broker[1]}, client needs {min_version or api.min_version}-"
                f"{max_version if max_version is not None else api.max_version}"
            )
        return hi

    # -- lifecycle -------------------------------------------------------------------------

    async def connect(self, task_group: anyio.abc.TaskGroup) -> None:
        """Open and negotiate; the reader runs in ``task_group``. Raises on failure."""
        await task_group.start(self.run)

    async def __aenter__(self) -> BrokerConnection:
        tg = self._own_tg = anyio.create_task_group()
        await tg.__aenter__()
        try:
            await tg.start(self.run)
        except BaseException:
            # Leave the private group cleanly, then raise the connect error itself rather
            # than an exception group.
            tg.cancel_scope.cancel()
            await tg.__aexit__(None, None, None)
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        await self.close()
        assert self._own_tg is not None
        # The private group only holds our reader (ended by close()); keeping the caller's
        # exception out of it avoids wrapping that in an ExceptionGroup.
        await self._own_tg.__aexit__(None, None, None)
        return None

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Connect, negotiate, report started, then read responses until closed."""
        if self._state != _NEW:
            raise KafkaConnectionError(f"{self.address}: a connection can only be run once")
        self._state = _CONNECTING
        try:
            try:
                # close() cancels this scope, so closing never waits for a slow connect.
                with anyio.CancelScope() as self._scope:
                    with anyio.fail_after(self.config.connect_timeout):
                        self._stream = await self._factory(self.host, self.port, self.config)
                if self._stream is None or self._state == _CLOSED:
                    if self._stream is not None:
                        with anyio.CancelScope(shield=True), anyio.move_on_after(_CLOSE_GRACE):
                            await self._stream.aclose()
                    raise KafkaConnectionError(f"{self.address}: closed while connecting")
            except TimeoutError:
                raise KafkaConnectionError(
                    f"{self.address}: connect timed out after {self.config.connect_timeout_ms} ms"
                ) from None
            except OSError as exc:
                # anyio reports "All connection attempts failed"; the reason is the cause.
                why = f"{exc} ({exc.__cause__})" if exc.__cause__ else str(exc)
                raise KafkaConnectionError(f"{self.address}: cannot connect: {why}") from exc
        except BaseException:
            if self._state != _CLOSED:
                self._state = _CLOSED
                self._close_reason = "connect failed"
            self._finished.set()
            raise
        self.last_activity = anyio.current_time()
        handshake_error: BaseException | None = None
        started = False
        try:
            async with anyio.create_task_group() as tg:
                self._scope = tg.cancel_scope
                tg.start_soon(self._read_loop)
                try:
                    await self._handshake()
                except Exception as exc:
                    # A silent or broken peer is a connection problem (retriable, triggers
                    # backoff); what the broker declared (no common version, bad
                    # credentials) is raised as is.
                    reason = KafkaConnectionError(f"{self.address}: handshake failed: {exc}")
                    reason.__cause__ = exc
                    if isinstance(exc, TLSHandshakeError):
                        handshake_error = exc
                    elif isinstance(exc, KafkaConnectionError | KafkaTimeoutError):
                        handshake_error = reason
                    else:
                        handshake_error = exc
                    self._fail(reason)
                else:
                    if self._state == _CONNECTING:
                        self._state = _READY
                        started = True
                        if self.sasl_session_lifetime_ms > 0:
                            tg.start_soon(self._reauth_loop)
                        task_status.started()
                    else:
                        handshake_error = KafkaConnectionError(
                            f"{self.address}: closed during handshake ({self._close_reason})"
                        )
        finally:
            if self._state != _CLOSED:
                self._fail(KafkaConnectionError(f"{self.address}: connection closed"))
            with anyio.CancelScope(shield=True), anyio.move_on_after(_CLOSE_GRACE):
                await self._stream.aclose()
            self._finished.set()
        if handshake_error is not None:
            raise handshake_error
        if not started:
            # close() interrupted the handshake.
            raise KafkaConnectionError(
                f"{self.address}: closed during handshake ({self._close_reason})"
            )

    async def close(self) -> None:
        """Close the connection; every waiter gets ``KafkaConnectionError``. Never hangs."""
        if self._state == _NEW:
            self._state = _CLOSED
            self._close_reason = "closed before connecting"
            self._finished.set()
            return
        if self._state != _CLOSED:
            self._fail(KafkaConnectionError(f"{self.address}: connection closed by the client"))
        with anyio.CancelScope(shield=True), anyio.move_on_after(_CLOSE_GRACE):
            await self._finished.wait()

    aclose = close

    async def wait_closed(self) -> None:
        """Wait until the connection has closed for any reason and its socket is released."""
        await self._finished.wait()

    def _fail(self, exc: KafkaConnectionError, head_error: KafkaError | None = None) -> None:
        """Close the connection: fail all waiters (the head one with ``head_error``).

        Synchronous so the reader, timed-out callers and ``close()`` can all call it; the
        socket itself is closed by ``run`` as the cancelled reader unwinds.
        """
        if self._state == _CLOSED:
            return
        log.debug("closing %r: %s", self, exc)
        self._state = _CLOSED
        self._close_reason = str(exc)
        self._dead.set()
        waiters = self._waiters
        self._waiters = deque()
        self._outbox = []
        first = True
        for waiter in waiters:
            if first and head_error is not None:
                waiter.error = head_error
            else:
                err = type(exc)(*exc.args)
                err.__cause__ = exc.__cause__
                waiter.error = err
            first = False
            waiter.event.set()
        if self._scope is not None:
            self._scope.cancel()

    # -- handshake -------------------------------------------------------------------------

    async def _handshake(self) -> None:
        await self._negotiate_versions()
        if self._builtin_sasl:
            started = anyio.current_time()
            self.sasl_session_lifetime_ms = await sasl.authenticate_session(self)
            self._session_started = started
        elif self._authenticator is not None:
            await self._authenticator(self)

    # -- re-authentication (KIP-368) -------------------------------------------------------

    async def _reauth_loop(self) -> None:
        """Authenticate again before each session runs out; close the connection on failure."""
        while self.sasl_session_lifetime_ms > 0:
            lifetime = self.sasl_session_lifetime_ms / 1000.0
            # Random 85-95%: connections opened together do not all re-authenticate at once.
            self._reauth_at = self._session_started + lifetime * (0.85 + 0.10 * random.random())
            wait = max(0.0, self._reauth_at - anyio.current_time())
            wake = self._reauth_wake = anyio.Event()
            with anyio.move_on_after(wait):
                await wake.wait()  # set by a request that found the time passed (_exchange)
            try:
                with anyio.fail_after(self._default_timeout):
                    await self._reauthenticate()
            except Exception as exc:
                log.warning("%s: SASL re-authentication failed: %s", self.address, exc)
                err = KafkaConnectionError(f"{self.address}: SASL re-authentication failed: {exc}")
                err.__cause__ = exc
                self._fail(err)
                return

    def _reauth_due(self) -> None:
        """A request found the re-authentication time passed: pause now, and wake the task."""
        self._reauth_at = None
        if self._paused is None:
            self._paused = anyio.Event()
        self._reauth_wake.set()

    async def _reauthenticate(self) -> None:
        self._reauth_at = None
        try:
            # Fetch what the mechanism needs (a token) before pausing anyone, unless a
            # request found the time passed and paused already.
            mechanism = await sasl.prepared_mechanism(self.config, self.host)
            if self._paused is None:
                self._paused = anyio.Event()
            # Re-authenticating is not use: an idle connection must still look idle to the
            # pool's reaper afterwards.
            last_activity = self.last_activity
            sent_before = self.requests_sent
            self._reauth_requests = 0
            async with self._write_lock:
                if self._outbox:
                    # Frames queued before the pause go first; their waiters precede ours.
                    await self._flush(anyio.current_time() + self._default_timeout, SASL_HANDSHAKE)
                started = anyio.current_time()
                self.sasl_session_lifetime_ms = await sasl.authenticate_session(
                    self, self._send_paused, mechanism=mechanism
                )
                self._session_started = started
            self.reauthentications += 1
            if self.requests_sent - sent_before == self._reauth_requests and not self.in_flight:
                self.last_activity = last_activity
            log.debug(
                "%s: re-authenticated; next session lifetime %d ms",
                self.address,
                self.sasl_session_lifetime_ms,
            )
        finally:
            paused, self._paused = self._paused, None
            if paused is not None:
                paused.set()

    async def _send_paused(self, api: Api[ReqT, RespT], body: ReqT, version: int) -> RespT:
        """A request sent by re-authentication, which holds the write lock."""
        self._reauth_requests += 1
        reader = await self._exchange(api, version, body, None, True, locked=True)
        assert reader is not None
        return api.decode_response(version, reader)

    async def _negotiate_versions(self) -> None:
        """ApiVersions with our newest version; on UNSUPPORTED_VERSION retry (KIP-511).

        A broker that does not know the version we sent answers with a v0 body carrying
        error 35 and its own ApiVersions range, which we then use.
        """
        version = API_VERSIONS.max_version
        body = ApiVersionsRequest(
            client_software_name=_CLIENT_SOFTWARE[0],
            client_software_version=_CLIENT_SOFTWARE[1],
        )
        for _ in range(3):
            reader = await self._exchange(API_VERSIONS, version, body, None, True)
            assert reader is not None
            if reader.remaining >= 2 and _peek_int16(reader) == _UNSUPPORTED_VERSION:
                fallback = API_VERSIONS.decode_response(0, reader)
                theirs = [k for k in fallback.api_keys if k.api_key == API_VERSIONS.key]
                new_version = min(API_VERSIONS.max_version, theirs[0].max_version) if theirs else 0
                if new_version >= version:
                    new_version = version - 1
                if new_version < 0:
                    raise IncompatibleBrokerVersionError(
                        f"{self.address}: broker rejected every ApiVersions version"
                    )
                version = new_version
                continue
            resp = API_VERSIONS.decode_response(version, reader)
            raise_for_code(resp.error_code)
            self._api_versions = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
            self.finalized_features = {
                f.name: f.max_version_level for f in resp.finalized_features or ()
            }
            self.finalized_features_epoch = resp.finalized_features_epoch
            return
        raise IncompatibleBrokerVersionError(f"{self.address}: ApiVersions negotiation failed")

    # -- requests --------------------------------------------------------------------------

    @overload
    async def request(
        self,
        api: Api[ReqT, RespT],
        body: ReqT,
        *,
        version: int | None = None,
        timeout: float | None = None,  # noqa: ASYNC109
        expect_response: Literal[True] = True,
    ) -> RespT: ...

    @overload
    async def request(
        self,
        api: Api[ReqT, RespT],
        body: ReqT,
        *,
        version: int | None = None,
        timeout: float | None = None,  # noqa: ASYNC109
        expect_response: bool,
    ) -> RespT | None: ...

    async def request(
        self,
        api: Api[ReqT, RespT],
        body: ReqT,
        *,
        version: int | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - a per-request deadline, by design
        expect_response: bool = True,
    ) -> RespT | None:
        """Send one request and return its decoded response (None if no response expected).

        ``version`` defaults to :meth:`version_for`. ``timeout`` (seconds) defaults to
        ``request_timeout_ms``; long polls pass their own (e.g. fetch max wait + timeout).
        Raises ``KafkaTimeoutError``, ``KafkaConnectionError``, ``UnsupportedFieldError``
        (the body does not fit the version), ``IncompatibleBrokerVersionError`` (the
        broker does not speak ``version``) or ``ProtocolDecodeError`` (a malformed body;
        the stream stays usable since the frame was complete).
        """
        if version is None:
            version = self.version_for(api)
        reader = await self._exchange(api, version, body, timeout, expect_response)
        if reader is None:
            return None
        response = api.decode_response(version, reader)
        throttle_ms = getattr(response, "throttle_time_ms", 0)
        if throttle_ms and throttle_ms > 0:
            self._throttle(throttle_ms)
        return response

    def _throttle(self, throttle_ms: int) -> None:
        """KIP-219: the broker answered but asks for a pause; hold our next writes.

        The pause is capped at half the default request timeout: a broker's quota
        throttles last about one quota window (seconds), so honest ones are honoured in
        full, while a broken or hostile value (2^31-1 ms is 24 days) cannot park the
        connection: a request made after the throttled response keeps at least half its
        default deadline for the exchange itself.
        """
        pause = min(throttle_ms / 1000.0, self._default_timeout / 2)
        until = anyio.current_time() + pause
        if until > self._throttled_until:
            self._throttled_until = until
        self.throttles += 1

    async def _exchange(
        self,
        api: AnyApi,
        version: int,
        body: object,
        timeout: float | None,  # noqa: ASYNC109
        expect_response: bool,
        *,
        locked: bool = False,
    ) -> Reader | None:
        if self._state not in (_READY, _CONNECTING) or self._stream is None:
            raise KafkaConnectionError(
                f"{self.address}: connection is {self._state}"
                + (f" ({self._close_reason})" if self._close_reason else "")
            )
        if version not in api.versions:
            raise UnsupportedFieldError(f"{api.name} has no version {version} ({api.versions})")
        broker = self._api_versions.get(api.key)
        if broker is not None and not broker[0] <= version <= broker[1]:
            raise IncompatibleBrokerVersionError(
                f"{self.address}: broker supports {api.name} {broker[0]}-{broker[1]}, "
                f"not v{version}"
            )
        cid = self._next_id
        self._next_id = (cid + 1) & 0x7FFFFFFF
        # Size prefix, header and body in one buffer: one allocation chain, one send.
        frame = bytearray(4)
        frame += headers.encode_request_header(api, version, cid, self._client_id)
        api.request.encoder_for(version, api.is_flexible(version))(frame, body)
        _SIZE.pack_into(frame, 0, len(frame) - 4)
        if timeout is None:
            timeout = self._default_timeout
        deadline = anyio.current_time() + timeout
        waiter = _Waiter(api, version, cid, deadline) if expect_response else None
        seq = 0  # 0: not queued yet
        with anyio.CancelScope(deadline=deadline):
            try:
                if not locked:
                    reauth_at = self._reauth_at
                    if reauth_at is not None and anyio.current_time() >= reauth_at:
                        self._reauth_due()
                    while self._paused is not None:
                        # Re-authenticating: queue nothing until it is done (see module doc).
                        await self._paused.wait()
                # Numbered only now, so every queued frame has a higher number than any
                # frame already written.
                seq = self._queued_seq = self._queued_seq + 1
                await self._send(seq, frame, waiter, deadline, api, locked=locked)
                if waiter is None:
                    return None
                await waiter.event.wait()
            except BaseException:
                # Cancelled or timed out: if the frame went out, the reader will read and
                # drop its response.
                if waiter is not None:
                    waiter.abandoned = True
                raise
        # Only the deadline gets here. Checked before any await: a frame taken back by
        # _send is not written, and no later flush can have happened yet.
        written = seq > 0 and self._flushed_seq >= seq
        if waiter is not None:
            if waiter.reader is not None:  # the response won the race with the deadline
                return waiter.reader
            if waiter.error is not None:
                raise waiter.error
        if not written:
            raise KafkaTimeoutError(
                f"{self.address}: {api.name} not sent within {timeout:.3f} s (write queue busy)"
            )
        self._on_timeout()
        raise KafkaTimeoutError(
            f"{self.address}: no response to {api.name} v{version} within {timeout:.3f} s"
        )

    async def _send(
        self,
        seq: int,
        frame: bytearray,
        waiter: _Waiter | None,
        deadline: float,
        api: AnyApi,
        *,
        locked: bool = False,
    ) -> None:
        """Queue ``frame`` and make sure it is written, coalescing concurrent writes.

        The frame (and its waiter) are queued synchronously, so queue order is wire order.
        Whoever holds the write lock writes everything queued so far in one send: under
        load, many pipelined requests cost one system call. A caller that finds its frame
        already written by an earlier lock holder returns at once; one that gives up before
        its frame was written takes it (and its waiter) back out of the queue. ``locked``:
        the caller (re-authentication) already holds the write lock.
        """
        if self._state == _CLOSED:
            raise KafkaConnectionError(f"{self.address}: connection closed ({self._close_reason})")
        self._check_throttle(deadline, api)
        self._outbox.append((seq, frame))
        if waiter is not None:
            self._waiters.append(waiter)
        try:
            if locked:
                await self._write_queued(seq, deadline, api)
            else:
                async with self._write_lock:
                    await self._write_queued(seq, deadline, api)
        except BaseException:
            if self._flushed_seq < seq:
                self._unqueue(seq, waiter)
            raise

    async def _write_queued(self, seq: int, deadline: float, api: AnyApi) -> None:
        """With the write lock held: write the queue unless frame ``seq`` already went out."""
        if self._flushed_seq >= seq:
            if self._state == _CLOSED:
                raise KafkaConnectionError(
                    f"{self.address}: connection closed ({self._close_reason})"
                )
            return
        if self._state == _CLOSED:
            raise KafkaConnectionError(f"{self.address}: connection closed ({self._close_reason})")
        if anyio.current_time() >= deadline:
            # Do not start a write the shielded scope below would have to abort.
            raise KafkaTimeoutError(f"{self.address}: {api.name} not sent before its deadline")
        self._check_throttle(deadline, api)
        pause = self._throttled_until - anyio.current_time()
        if pause > 0:
            # Still throttled: wait with the lock held, so everyone else's frames queue up
            # and leave together afterwards. Nothing is written yet, so the deadline (which
            # cancels this wait) takes our frame back. A connection that dies meanwhile
            # ends the wait at once: _fail has emptied the queue, so there is nothing to
            # write and the caller gets the typed error below.
            with anyio.move_on_after(pause):
                await self._dead.wait()
            if self._state == _CLOSED:
                raise KafkaConnectionError(
                    f"{self.address}: connection closed while throttled ({self._close_reason})"
                )
        await self._flush(deadline, api)

    def _check_throttle(self, deadline: float, api: AnyApi) -> None:
        """Fail at once a request whose deadline falls before the broker's pause ends.

        Waiting could only end in the same timeout, holding the caller for nothing. The
        connection stays open: the pause is capped (see ``_throttle``), so it ends by
        itself, and closing would also fail every request already in flight on it.
        """
        now = anyio.current_time()
        if self._throttled_until > now and self._throttled_until >= deadline:
            raise KafkaTimeoutError(
                f"{self.address}: {api.name} not sent: the broker throttled this connection "
                f"for {self._throttled_until - now:.3f} s more, past the request's deadline"
            )

    async def _flush(self, deadline: float, api: AnyApi) -> None:
        """Write every queued frame in one send (called with the write lock held)."""
        stream = self._stream
        if self._state == _CLOSED or stream is None or not self._outbox:
            # _fail empties the queue; write nothing rather than index an empty batch.
            raise KafkaConnectionError(f"{self.address}: connection closed ({self._close_reason})")
        batch, self._outbox = self._outbox, []
        self._flushed_seq = batch[-1][0]
        # One frame goes out as is; several are joined (a copy, far cheaper than a syscall).
        data = batch[0][1] if len(batch) == 1 else b"".join(f for _, f in batch)
        # Shielded: a frame cut short by cancellation would corrupt the stream for every
        # later request. The deadline still bounds it.
        with anyio.CancelScope(shield=True, deadline=deadline) as scope:
            try:
                # Every anyio stream accepts any bytes-like object; converting the
                # bytearray to bytes would copy the whole request.
                await stream.send(data)  # type: ignore[arg-type]
            except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
                self._fail(KafkaConnectionError(f"{self.address}: write failed: {exc!r}"))
                raise KafkaConnectionError(f"{self.address}: write failed: {exc!r}") from exc
        if scope.cancelled_caught:
            err = KafkaConnectionError(f"{self.address}: write of {api.name} timed out")
            self._fail(err)
            raise KafkaTimeoutError(f"{self.address}: write of {api.name} timed out")
        self.requests_sent += len(batch)
        self.writes += 1
        self.bytes_sent += len(data)
        self.last_activity = anyio.current_time()

    def _unqueue(self, seq: int, waiter: _Waiter | None) -> None:
        """Take back a frame that was never written (its caller gave up first)."""
        self._outbox = [entry for entry in self._outbox if entry[0] != seq]
        if waiter is not None:
            try:
                self._waiters.remove(waiter)
            except ValueError:
                pass  # already failed and cleared by _fail

    def _on_timeout(self) -> None:
        """A request timed out: close if the oldest unanswered request is overdue."""
        if self._state == _CLOSED or not self._waiters:
            return
        head = self._waiters[0]
        if head.deadline <= anyio.current_time():
            self._fail(
                KafkaConnectionError(
                    f"{self.address}: broker did not answer {head.api.name} before its deadline"
                )
            )

    # -- reading ---------------------------------------------------------------------------

    async def _read_exactly(self, n: int) -> bytearray:
        stream = self._stream
        assert stream is not None
        rbuf = self._rbuf
        have = len(rbuf)
        if have >= n:
            out = rbuf[:n]
            del rbuf[:n]
            return out
        if n > _PREALLOC_MAX:
            # Grow with what arrives rather than trusting the announced size: a peer that
            # announces 64 MiB and sends 1 KiB must not make us allocate 64 MiB.
            out = bytearray(rbuf)
            rbuf.clear()
            while len(out) < n:
                need = n - len(out)
                chunk = await stream.receive(min(max(need, _READ_CHUNK), _READ_MAX))
                self.bytes_received += len(chunk)
                if len(chunk) <= need:
                    out += chunk
                else:
                    out += memoryview(chunk)[:need]
                    rbuf += memoryview(chunk)[need:]
            return out
        out = bytearray(n)
        view = memoryview(out)
        view[:have] = rbuf
        rbuf.clear()
        while have < n:
            # Read ahead (at least 64 KiB) so many small pipelined responses cost few calls,
            # but at most 256 KiB per call: some backends allocate the full size per read.
            chunk = await stream.receive(min(max(n - have, _READ_CHUNK), _READ_MAX))
            self.bytes_received += len(chunk)
            take = min(len(chunk), n - have)
            view[have : have + take] = memoryview(chunk)[:take]
            have += take
            if take < len(chunk):
                rbuf += memoryview(chunk)[take:]
        return out

    async def _read_loop(self) -> None:
        try:
            while True:
                prefix = await self._read_exactly(4)
                size = _SIZE.unpack(prefix)[0]
                if size > self._max_response:
                    head = self._waiters[0] if self._waiters else None
                    what = f"{head.api.name} response" if head else "response"
                    msg = (
                        f"{self.address}: {what} of {size} bytes exceeds "
                        f"max_response_size={self._max_response}"
                    )
                    self._fail(KafkaConnectionError(msg), ResponseTooLargeError(msg))
                    return
                if size < 4:
                    raise ProtocolDecodeError(f"invalid response frame size {size}")
                if not self._waiters:
                    raise ProtocolDecodeError("response received with no request in flight")
                frame = await self._read_exactly(size)
                now = anyio.current_time()
                self.last_activity = now
                if self._state == _CLOSED:
                    # Closed while the frame was read (close() or a timeout failed every
                    # waiter and emptied the queue): nobody waits for this answer.
                    return
                if not self._waiters:
                    raise ProtocolDecodeError("response received with no request in flight")
                waiter = self._waiters[0]
                reader = Reader(frame)
                cid = headers.read_response_header(reader, waiter.api, waiter.version)
                if cid != waiter.correlation_id:
                    raise ProtocolDecodeError(
                        f"correlation id {cid} does not match the expected "
                        f"{waiter.correlation_id} ({waiter.api.name})"
                    )
                self._waiters.popleft()
                self.responses_received += 1
                if waiter.abandoned:
                    self.responses_dropped += 1
                else:
                    waiter.reader = reader
                    waiter.event.set()
        except anyio.EndOfStream:
            self._fail(KafkaConnectionError(f"{self.address}: broker closed the connection"))
        except ProtocolDecodeError as exc:
            err = KafkaConnectionError(f"{self.address}: corrupt response stream: {exc}")
            err.__cause__ = exc
            self._fail(err)
        except ssl.SSLError as exc:
            # An alert from the broker's TLS layer, such as "certificate required" when it
            # wants a client certificate (TLS 1.3 reports that after the handshake).
            msg = describe_handshake_error(self.host, self.port, exc)
            err = KafkaConnectionError(msg) if self._state == _READY else TLSHandshakeError(msg)
            err.__cause__ = exc
            self._fail(err)
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            err = KafkaConnectionError(f"{self.address}: read failed: {exc!r}")
            err.__cause__ = exc
            self._fail(err)

    # -- introspection ---------------------------------------------------------------------

    def statistics(self) -> ConnectionStatistics:
        return ConnectionStatistics(
            address=self.address,
            node_id=self.node_id,
            state=self._state,
            in_flight=len(self._waiters),
            requests_sent=self.requests_sent,
            writes=self.writes,
            throttles=self.throttles,
            responses_received=self.responses_received,
            responses_dropped=self.responses_dropped,
            bytes_sent=self.bytes_sent,
            bytes_received=self.bytes_received,
            api_versions=dict(self._api_versions),
            close_reason=self._close_reason,
            reauthentications=self.reauthentications,
        )
