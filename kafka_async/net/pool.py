"""Connections to the brokers of one cluster, opened on demand and reused.

One connection per ``(node_id, purpose)``. Purposes keep long polls off the connection that
short requests use: ``"fetch"`` for Fetch, ``"group"`` for JoinGroup/SyncGroup (which the
coordinator may hold for a whole rebalance), ``"default"`` for everything else. Bootstrap
servers get negative node ids (-1, -2, ...) until metadata names the real brokers.

The bookkeeping (which connection to reuse, whether a connect is already under way, how
long a node is in backoff, what is idle) is :class:`PoolState`: synchronous methods on plain
data, unit-tested without sockets. :class:`ConnectionPool` only acts on its decisions:
it starts connects as tasks in its own task group, so concurrent callers wanting the same
missing connection share one attempt, and a caller that gives up (cancelled, timed out)
does not abort the attempt the others wait on.

Failures: a connect failure puts the node in exponential backoff with jitter
(``reconnect_backoff_ms`` .. ``reconnect_backoff_max_ms``); the next ``get`` for that node
waits the rest of the backoff (within its own deadline) and then makes one attempt. A
``get`` never makes more than one attempt: retry policy belongs to the caller. Errors keep
their type: refused credentials (``SaslAuthenticationFailedError``) and a refused
certificate (``TLSHandshakeError``) are not retriable, and ``bootstrap`` raises them at once
instead of cycling through the servers until its deadline, so wrong settings never turn
into a connect storm.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Literal

import anyio
import anyio.abc

from ..errors import (
    BootstrapUnreachableError,
    ClientClosedError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    NoBrokersAvailableError,
)
from .backoff import BackoffState, ExponentialBackoff
from .config import ClientConfig
from .connection import Authenticator, BrokerConnection, ConnectionStatistics, StreamFactory

log = logging.getLogger(__name__)

Purpose = Literal["default", "fetch", "group"]
PURPOSES: tuple[str, ...] = ("default", "fetch", "group")
Key = tuple[int, str]

_CLOSE_DEADLINE = 2.0


#: Seconds a client's start keeps retrying bootstrap servers that all refuse the connection
#: (or do not resolve) before it gives up: a broker restarting right now gets that long.
FAIL_FAST_WINDOW = 1.0


def refused_at_once(exc: BaseException) -> bool:
    """True when a connect failed at once (refused, unresolvable host, unreachable network):
    an ``OSError`` other than a timeout somewhere in the ``__cause__`` chain."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, OSError) and not isinstance(seen, TimeoutError):
            return True
        seen = seen.__cause__
    return False


def bootstrap_node_id(index: int) -> int:
    """The placeholder node id of the ``index``-th bootstrap server (-1, -2, ...)."""
    return -1 - index


# --------------------------------------------------------------------------------------------
# Pure bookkeeping
# --------------------------------------------------------------------------------------------


@dataclass(slots=True)
class Ready:
    """Use this connection."""

    conn: BrokerConnection


@dataclass(slots=True)
class Join:
    """A connect for this key is under way; wait for ``done``."""

    done: anyio.Event


@dataclass(slots=True)
class Backoff:
    """The node is in backoff; wait ``delay`` seconds, then plan again."""

    delay: float


@dataclass(slots=True)
class Start:
    """Start a connect to ``host:port``; ``done`` is set when it finished either way."""

    host: str
    port: int
    done: anyio.Event


Plan = Ready | Join | Backoff | Start


@dataclass(slots=True)
class _Slot:
    conn: BrokerConnection | None = None
    pending: anyio.Event | None = None
    error: BaseException | None = None


@dataclass
class PoolState:
    """Synchronous pool bookkeeping; every method is a state transition without I/O."""

    policy: ExponentialBackoff
    rand: Callable[[], float] = random.random
    addresses: dict[int, tuple[str, int]] = field(default_factory=dict)
    slots: dict[Key, _Slot] = field(default_factory=dict)
    backoff: dict[int, BackoffState] = field(default_factory=dict)

    def plan(self, key: Key, now: float) -> Plan:
        """What a caller wanting a connection for ``key`` should do now."""
        slot = self.slots.get(key)
        if slot is not None:
            if slot.conn is not None:
                if slot.conn.ready:
                    return Ready(slot.conn)
                slot.conn = None  # died since; connect again
            if slot.pending is not None:
                return Join(slot.pending)
        addr = self.addresses.get(key[0])
        if addr is None:
            raise KafkaConnectionError(f"no address known for broker node {key[0]}")
        state = self.backoff.get(key[0])
        if state is not None:
            remaining = state.remaining(now)
            if remaining > 0:
                return Backoff(remaining)
        if slot is None:
            slot = self.slots[key] = _Slot()
        slot.pending = anyio.Event()
        slot.error = None
        return Start(addr[0], addr[1], slot.pending)

    def connected(self, key: Key, conn: BrokerConnection) -> None:
        slot = self.slots.setdefault(key, _Slot())
        slot.conn = conn
        slot.pending = None
        slot.error = None
        self.backoff.setdefault(key[0], BackoffState()).record_success()

    def failed(self, key: Key, error: BaseException, now: float) -> float:
        """Record a failed connect; return the backoff delay for the node."""
        slot = self.slots.setdefault(key, _Slot())
        slot.pending = None
        slot.error = error
        return self.backoff.setdefault(key[0], BackoffState()).record_failure(
            self.policy, now, self.rand
        )

    def outcome(self, key: Key) -> BrokerConnection | BaseException:
        """After a joined connect finished: the connection, or the error it ended with."""
        slot = self.slots.get(key)
        if slot is not None and slot.conn is not None and slot.conn.ready:
            return slot.conn
        if slot is not None and slot.error is not None:
            return slot.error
        return KafkaConnectionError(f"connection to broker node {key[0]} closed while opening")

    def set_addresses(
        self, addresses: Mapping[int, tuple[str, int]], *, replace: bool
    ) -> list[BrokerConnection]:
        """Update node addresses; return connections to close (address changed or gone).

        Bootstrap placeholders (negative ids) are kept when ``replace`` is true.
        """
        to_close: list[BrokerConnection] = []
        new = dict(addresses)
        if replace:
            for node in list(self.addresses):
                if node >= 0 and node not in new:
                    del self.addresses[node]
                    to_close.extend(self._drop_node(node))
        for node, addr in new.items():
            old = self.addresses.get(node)
            if old is not None and old != addr:
                to_close.extend(self._drop_node(node))
            self.addresses[node] = addr
        return to_close

    def adopt_bootstrap(self) -> list[BrokerConnection]:
        """Once brokers are known, hand each idle bootstrap connection to the broker at the
        same address (saving a connect), and return the others for closing."""
        by_addr = {addr: node for node, addr in self.addresses.items() if node >= 0}
        to_close: list[BrokerConnection] = []
        for key in [k for k in self.slots if k[0] < 0]:
            slot = self.slots[key]
            conn = slot.conn
            if conn is None or slot.pending is not None or conn.in_flight:
                continue
            del self.slots[key]
            node = by_addr.get(self.addresses.get(key[0], ("", -1)))
            target = None if node is None else (node, key[1])
            if target is not None and target not in self.slots and conn.ready:
                conn.node_id = target[0]
                self.slots[target] = _Slot(conn=conn)
            else:
                to_close.append(conn)
        return to_close

    def _drop_node(self, node: int) -> list[BrokerConnection]:
        dropped = []
        for key in [k for k in self.slots if k[0] == node]:
            slot = self.slots[key]
            if slot.conn is not None:
                dropped.append(slot.conn)
            if slot.pending is None:
                del self.slots[key]
            else:
                slot.conn = None
        self.backoff.pop(node, None)
        return dropped

    def idle(self, now: float, max_idle: float) -> list[BrokerConnection]:
        """Remove and return ready connections with nothing in flight for ``max_idle`` s."""
        out: list[BrokerConnection] = []
        for key, slot in list(self.slots.items()):
            conn = slot.conn
            if conn is None:
                continue
            if not conn.ready:
                slot.conn = None
            elif conn.in_flight == 0 and now - conn.last_activity >= max_idle:
                out.append(conn)
                slot.conn = None
            if slot.conn is None and slot.pending is None:
                del self.slots[key]
        return out

    def connection(self, key: Key) -> BrokerConnection | None:
        slot = self.slots.get(key)
        if slot is not None and slot.conn is not None and slot.conn.ready:
            return slot.conn
        return None

    def least_loaded(self, now: float) -> int | None:
        """The known broker best placed to take a request (``None`` if none is known).

        A node with a ready default connection and the fewest requests in flight wins;
        next a node not in backoff (random, to spread load); last the node whose backoff
        ends first.
        """
        nodes = [n for n in self.addresses if n >= 0]
        if not nodes:
            return None
        best: tuple[int, int] | None = None
        for node in nodes:
            conn = self.connection((node, "default"))
            if conn is not None and (best is None or conn.in_flight < best[0]):
                best = (conn.in_flight, node)
        if best is not None:
            return best[1]
        free = [n for n in nodes if self.backoff_remaining(n, now) == 0]
        if free:
            return free[int(self.rand() * len(free)) % len(free)]
        return min(nodes, key=lambda n: self.backoff_remaining(n, now))

    def backoff_remaining(self, node: int, now: float) -> float:
        """Seconds until ``node`` may be tried again (0.0: now)."""
        state = self.backoff.get(node)
        return 0.0 if state is None else state.remaining(now)

    def all_connections(self) -> list[BrokerConnection]:
        return [s.conn for s in self.slots.values() if s.conn is not None]


# --------------------------------------------------------------------------------------------
# The pool
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PoolStatistics:
    """Connections by key, nodes in backoff and known addresses."""

    connections: Mapping[Key, ConnectionStatistics]
    connecting: tuple[Key, ...]
    backoff_failures: Mapping[int, int]
    addresses: Mapping[int, tuple[str, int]]


class ConnectionPool:
    """Connections per ``(node_id, purpose)``; use as ``async with ConnectionPool(cfg):``.

    Connection readers, connects and the idle reaper run in the pool's own task group.
    ``stream_factory`` replaces TCP (tests use in-memory streams).
    """

    def __init__(
        self,
        config: ClientConfig,
        *,
        stream_factory: StreamFactory | None = None,
        authenticator: Authenticator | None = None,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.config = config
        self._factory = stream_factory
        self._authenticator = authenticator
        self._state = PoolState(
            ExponentialBackoff.from_ms(
                config.reconnect_backoff_ms, config.reconnect_backoff_max_ms
            ),
            rand,
        )
        self._bootstrap_ids = tuple(bootstrap_node_id(i) for i in range(len(config.addresses)))
        self._state.set_addresses(
            dict(zip(self._bootstrap_ids, config.addresses, strict=True)), replace=False
        )
        self._tg: anyio.abc.TaskGroup | None = None
        self._closed = False
        self._rand = rand
        #: When the running client found no broker reachable (logged at WARNING); None
        #: while some broker answers. The next connection that opens logs the recovery.
        self._unreachable: float | None = None

    # -- lifecycle -------------------------------------------------------------------------

    async def __aenter__(self) -> ConnectionPool:
        if self._tg is not None or self._closed:
            raise ClientClosedError("a ConnectionPool can only be entered once")
        tg = anyio.create_task_group()
        await tg.__aenter__()
        self._tg = tg
        tg.start_soon(self._reap_idle)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        await self.close()
        assert self._tg is not None
        # Only our own background tasks live in the group (cancelled by close()); keep the
        # caller's exception out of it so it is not wrapped in an ExceptionGroup.
        await self._tg.__aexit__(None, None, None)
        return None

    async def close(self) -> None:
        """Close every connection and stop background work. Never hangs."""
        if self._closed:
            return
        self._closed = True
        conns = self._state.all_connections()
        self._state.slots.clear()
        with anyio.CancelScope(shield=True), anyio.move_on_after(_CLOSE_DEADLINE):
            for conn in conns:
                await conn.close()
        if self._tg is not None:
            self._tg.cancel_scope.cancel()

    @property
    def closed(self) -> bool:
        return self._closed

    # -- addresses -------------------------------------------------------------------------

    @property
    def bootstrap_ids(self) -> tuple[int, ...]:
        return self._bootstrap_ids

    def update_brokers(
        self, brokers: Mapping[int, tuple[str, int]], *, replace: bool = True
    ) -> None:
        """Set node id -> (host, port) from metadata (``replace=False`` adds/updates only).

        Connections to a node whose address changed or that left the cluster are closed.
        With ``replace``, idle bootstrap connections are reused for the broker at the same
        address or closed.
        """
        for conn in self._state.set_addresses(brokers, replace=replace):
            self._close_soon(conn)
        if replace and self.known_nodes:
            for conn in self._state.adopt_bootstrap():
                self._close_soon(conn)

    def address(self, node_id: int) -> tuple[str, int] | None:
        return self._state.addresses.get(node_id)

    @property
    def known_nodes(self) -> list[int]:
        """Broker node ids from metadata (bootstrap placeholders excluded)."""
        return sorted(n for n in self._state.addresses if n >= 0)

    # -- getting connections ---------------------------------------------------------------

    def connection(self, node_id: int, purpose: str = "default") -> BrokerConnection | None:
        """The open connection for the key, without connecting."""
        return self._state.connection((node_id, purpose))

    def least_loaded_node(self) -> int | None:
        """A broker node id to send a node-agnostic request to (None if none is known)."""
        return self._state.least_loaded(anyio.current_time())

    async def get(
        self,
        node_id: int,
        purpose: str = "default",
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - a deadline for backoff + connect
    ) -> BrokerConnection:
        """An open, negotiated connection to ``node_id`` for ``purpose``.

        Waits out the node's backoff, then opens (or joins the opening of) one connection.
        Raises ``KafkaConnectionError`` when that attempt fails, ``KafkaTimeoutError`` when
        ``timeout`` (default ``connect_timeout_ms + request_timeout_ms``) runs out first.
        """
        if purpose not in PURPOSES:
            raise ValueError(f"purpose must be one of {PURPOSES}, got {purpose!r}")
        key = (node_id, purpose)
        # Fast path: no deadline bookkeeping when the connection is already open.
        conn = self._state.connection(key)
        if conn is not None and not self._closed:
            return conn
        if timeout is None:
            timeout = self.config.connect_timeout + self.config.request_timeout
        with anyio.move_on_after(timeout):
            return await self._get(key)
        raise KafkaTimeoutError(
            f"no connection to broker node {node_id} ({purpose}) within {timeout:.3f} s"
        )

    async def _get(self, key: Key) -> BrokerConnection:
        while True:
            if self._closed or self._tg is None:
                raise ClientClosedError("the connection pool is closed")
            plan = self._state.plan(key, anyio.current_time())
            if isinstance(plan, Ready):
                return plan.conn
            if isinstance(plan, Backoff):
                await anyio.sleep(plan.delay)
                continue
            if isinstance(plan, Start):
                self._tg.start_soon(self._connect, key, plan.host, plan.port, plan.done)
                done = plan.done
            else:
                done = plan.done
            await done.wait()
            if self._closed:
                raise ClientClosedError("the connection pool closed while connecting")
            outcome = self._state.outcome(key)
            if isinstance(outcome, BrokerConnection):
                return outcome
            if isinstance(outcome, KafkaConnectionError):
                # A fresh error per caller (tracebacks are per raise), of the same type: a
                # TLSHandshakeError must stay one.
                raise type(outcome)(str(outcome)) from outcome
            if isinstance(outcome, KafkaError):
                raise outcome
            raise KafkaConnectionError(f"connect to node {key[0]} failed: {outcome!r}")

    async def _connect(self, key: Key, host: str, port: int, done: anyio.Event) -> None:
        assert self._tg is not None
        conn = BrokerConnection(
            host,
            port,
            self.config,
            node_id=key[0],
            stream_factory=self._factory,
            authenticator=self._authenticator,
        )
        try:
            await self._tg.start(conn.run)
        except BaseException as exc:
            delay = self._state.failed(key, exc, anyio.current_time())
            log.info(
                "connect to node %s (%s:%s) failed: %s; backoff %.3f s",
                key[0],
                host,
                port,
                exc,
                delay,
            )
            if not isinstance(exc, Exception):
                raise
        else:
            if self._closed:
                await conn.close()
                self._state.failed(key, ClientClosedError("pool closed"), anyio.current_time())
            else:
                self._state.connected(key, conn)
                if self._unreachable is not None:
                    log.info(
                        "broker node %s (%s:%s) reached after %.1f s without any broker",
                        key[0],
                        host,
                        port,
                        anyio.current_time() - self._unreachable,
                    )
                    self._unreachable = None
        finally:
            done.set()

    async def bootstrap(
        self,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - overall deadline for bootstrapping
        fail_fast: bool = False,
    ) -> tuple[int, BrokerConnection]:
        """A connection to any bootstrap server, trying each in turn until the deadline.

        Raises ``NoBrokersAvailableError`` (listing the last error per server) when none
        answers within ``timeout`` (default ``request_timeout_ms``). ``fail_fast`` (a
        client's start): once every server has refused the connection or failed to resolve,
        and at least :data:`FAIL_FAST_WINDOW` seconds have passed (retries with the usual
        backoff meanwhile), raise ``BootstrapUnreachableError`` naming each; a server that
        does not answer at all keeps the whole deadline.
        """
        if timeout is None:
            timeout = self.config.request_timeout
        started = anyio.current_time()
        deadline = started + timeout
        errors: dict[int, str] = {}
        #: The servers whose last attempt was refused or unresolvable (not a timeout).
        refused: set[int] = set()
        ids = list(self._bootstrap_ids)
        start = int(self._rand() * len(ids)) % len(ids)
        ids = ids[start:] + ids[:start]
        while True:
            for node in ids:
                conn = self._state.connection((node, "default"))
                if conn is not None:
                    return node, conn
            # Prefer a server not in backoff; otherwise wait for the earliest one.
            now = anyio.current_time()
            node = min(ids, key=lambda n: self._state.backoff_remaining(n, now))
            remaining = deadline - now
            if remaining <= 0:
                break
            try:
                conn = await self.get(node, "default", timeout=remaining)
            except (KafkaConnectionError, KafkaTimeoutError) as exc:
                if not exc.retriable:
                    # A refused certificate or an oversized answer: the same settings get
                    # the same answer from every server, so say so now, not at the deadline.
                    raise
                # A timeout waiting out the backoff says less than the connect error before.
                if node not in errors or not isinstance(exc, KafkaTimeoutError):
                    errors[node] = str(exc)
                if isinstance(exc, KafkaTimeoutError):
                    pass  # waiting out the backoff: says nothing new about the server
                elif refused_at_once(exc):
                    refused.add(node)
                else:
                    refused.discard(node)
                if errors.keys() >= set(ids):
                    addresses = self._state.addresses
                    # Connection errors start with the address already: say it once.
                    named = {
                        addr: errors[n].removeprefix(f"{addr}: ")
                        for n in ids
                        for addr in [f"{addresses[n][0]}:{addresses[n][1]}"]
                    }
                    if (
                        fail_fast
                        and refused >= set(ids)
                        and anyio.current_time() - started >= FAIL_FAST_WINDOW
                    ):
                        raise BootstrapUnreachableError(named) from exc
                    if not fail_fast and self._unreachable is None:
                        # Every known broker failed before the bootstrap servers were tried
                        # (that is when this runs), and now each of those has failed too:
                        # once per episode, until a connection opens again.
                        self._unreachable = anyio.current_time()
                        log.warning(
                            "no broker can be reached; retrying until one answers: %s",
                            "; ".join(f"{a}: {why}" for a, why in named.items()),
                        )
                continue
            return node, conn
        addrs = ", ".join(
            f"{h}:{p}" for h, p in (self._state.addresses[n] for n in self._bootstrap_ids)
        )
        detail = "; ".join(errors.values()) or "no attempt finished"
        raise NoBrokersAvailableError(
            f"no bootstrap server answered within {timeout:.3f} s ({addrs}): {detail}"
        )

    # -- background ------------------------------------------------------------------------

    def _close_soon(self, conn: BrokerConnection) -> None:
        if self._tg is not None and not self._closed:
            self._tg.start_soon(conn.close)

    async def _reap_idle(self) -> None:
        max_idle = self.config.connections_max_idle_ms / 1000.0
        interval = min(max(max_idle / 4, 0.01), 10.0)
        while True:
            await anyio.sleep(interval)
            for conn in self._state.idle(anyio.current_time(), max_idle):
                log.debug("closing idle connection %r", conn)
                await conn.close()

    async def close_node(self, node_id: int) -> None:
        """Close every connection to ``node_id`` (e.g. after it misbehaved)."""
        for key in [k for k in self._state.slots if k[0] == node_id]:
            slot = self._state.slots[key]
            if slot.conn is not None:
                conn, slot.conn = slot.conn, None
                await conn.close()

    # -- introspection ---------------------------------------------------------------------

    def statistics(self) -> PoolStatistics:
        conns = {
            key: slot.conn.statistics()
            for key, slot in self._state.slots.items()
            if slot.conn is not None
        }
        return PoolStatistics(
            connections=conns,
            connecting=tuple(k for k, s in self._state.slots.items() if s.pending is not None),
            backoff_failures={n: b.failures for n, b in self._state.backoff.items() if b.failures},
            addresses=dict(self._state.addresses),
        )

    def connections(self) -> Iterable[BrokerConnection]:
        return list(self._state.all_connections())
