"""ConnectionPool: pure bookkeeping (PoolState) and the pool over in-memory fake brokers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, cast

import anyio
import anyio.abc
import pytest
from netfakes import FakeBroker, FakeNetwork, echo_metadata

from kafka_async.errors import (
    ClientClosedError,
    KafkaConnectionError,
    KafkaTimeoutError,
    NoBrokersAvailableError,
)
from kafka_async.net.backoff import ExponentialBackoff
from kafka_async.net.config import ClientConfig
from kafka_async.net.connection import BrokerConnection
from kafka_async.net.pool import Backoff, ConnectionPool, Join, PoolState, Ready, Start
from kafka_async.protocol.apis import METADATA
from kafka_async.protocol.apis.metadata import MetadataRequest, MetadataRequestTopic

# -- PoolState (pure) ---------------------------------------------------------------------------


class _Conn:
    """Just the attributes PoolState reads from a BrokerConnection."""

    def __init__(self, in_flight: int = 0, last_activity: float = 0.0) -> None:
        self.ready = True
        self.in_flight = in_flight
        self.last_activity = last_activity


def _conn(in_flight: int = 0, last_activity: float = 0.0) -> BrokerConnection:
    """A ``_Conn`` typed as the BrokerConnection PoolState takes: PoolState reads only the
    attributes above (and sets ``node_id`` when it adopts a bootstrap connection)."""
    return cast(BrokerConnection, _Conn(in_flight, last_activity))


def _state() -> PoolState:
    st = PoolState(ExponentialBackoff(0.1, 1.0, jitter=0.2), rand=lambda: 0.5)
    st.set_addresses({1: ("h1", 1), 2: ("h2", 2)}, replace=True)
    return st


@pytest.mark.anyio
async def test_plan_starts_once_then_joins() -> None:
    st = _state()
    first = st.plan((1, "default"), now=0.0)
    assert isinstance(first, Start)
    assert (first.host, first.port) == ("h1", 1)
    second = st.plan((1, "default"), now=0.0)
    assert isinstance(second, Join)
    assert second.done is first.done
    # Another purpose is another connection.
    assert isinstance(st.plan((1, "fetch"), now=0.0), Start)
    fake = _Conn()
    conn = cast(BrokerConnection, fake)  # as _conn() does, keeping the fake to change it
    st.connected((1, "default"), conn)
    ready = st.plan((1, "default"), now=0.0)
    assert isinstance(ready, Ready)
    assert ready.conn is conn
    # A connection that died is replaced by a new connect.
    fake.ready = False
    assert isinstance(st.plan((1, "default"), now=0.0), Start)


@pytest.mark.anyio
async def test_failure_puts_the_node_in_growing_backoff() -> None:
    st = _state()
    st.plan((1, "default"), now=0.0)
    delay = st.failed((1, "default"), OSError("refused"), now=10.0)
    assert delay == pytest.approx(0.1)  # rand=0.5 -> no jitter offset
    plan = st.plan((1, "fetch"), now=10.04)  # backoff is per node, all purposes
    assert isinstance(plan, Backoff)
    assert plan.delay == pytest.approx(0.06)
    assert isinstance(st.outcome((1, "default")), OSError)
    assert isinstance(st.plan((1, "default"), now=10.2), Start)
    assert st.failed((1, "default"), OSError(), now=20.0) == pytest.approx(0.2)
    st.connected((1, "default"), _conn())
    assert st.backoff[1].failures == 0


@pytest.mark.anyio
async def test_unknown_node_is_an_error() -> None:
    with pytest.raises(KafkaConnectionError, match="node 9"):
        _state().plan((9, "default"), now=0.0)


@pytest.mark.anyio
async def test_idle_connections_are_handed_out_for_closing() -> None:
    st = _state()
    busy, quiet, fresh = _conn(1, 0.0), _conn(0, 0.0), _conn(0, 95.0)
    st.connected((1, "default"), busy)
    st.connected((1, "fetch"), quiet)
    st.connected((2, "default"), fresh)
    assert st.idle(now=100.0, max_idle=10.0) == [quiet]
    assert st.connection((1, "fetch")) is None
    assert st.connection((1, "default")) is busy


@pytest.mark.anyio
async def test_address_changes_close_old_connections() -> None:
    st = _state()
    c1, c2 = _conn(), _conn()
    st.connected((1, "default"), c1)
    st.connected((2, "default"), c2)
    st.set_addresses({-1: ("boot", 9)}, replace=False)
    to_close = st.set_addresses({1: ("h1-moved", 1)}, replace=True)
    assert set(map(id, to_close)) == {id(c1), id(c2)}  # 1 moved, 2 left the cluster
    assert st.addresses == {1: ("h1-moved", 1), -1: ("boot", 9)}


@pytest.mark.anyio
async def test_least_loaded_prefers_open_idle_connections() -> None:
    st = _state()
    st.set_addresses({3: ("h3", 3)}, replace=False)
    assert st.least_loaded(now=0.0) in {1, 2, 3}
    st.connected((1, "default"), _conn(in_flight=5))
    st.connected((2, "default"), _conn(in_flight=1))
    assert st.least_loaded(now=0.0) == 2
    empty = PoolState(ExponentialBackoff(0.1, 1.0))
    empty.set_addresses({-1: ("boot", 1)}, replace=False)
    assert empty.least_loaded(now=0.0) is None  # bootstrap placeholders do not count


# -- ConnectionPool over fake brokers ------------------------------------------------------------

pool_backends = pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])


@asynccontextmanager
async def fake_pool(
    brokers: dict[tuple[str, int], FakeBroker], bootstrap: str = "h1:1", **cfg: Any
) -> AsyncIterator[tuple[ConnectionPool, FakeNetwork]]:
    async with anyio.create_task_group() as tg:
        net = FakeNetwork(tg, brokers=brokers)
        config = ClientConfig(bootstrap_servers=bootstrap, **cfg)
        async with ConnectionPool(config, stream_factory=net, rand=lambda: 0.5) as pool:
            yield pool, net
        tg.cancel_scope.cancel()


def _broker() -> FakeBroker:
    return FakeBroker(handlers={3: echo_metadata})


@pytest.mark.anyio
@pool_backends
async def test_concurrent_callers_share_one_connect() -> None:
    async with fake_pool({("h1", 1): _broker()}) as (pool, net):
        net.connect_delay = 0.05
        pool.update_brokers({1: ("h1", 1)})
        got = []

        async def get() -> None:
            got.append(await pool.get(1))

        async with anyio.create_task_group() as tg:
            for _ in range(20):
                tg.start_soon(get)
        assert len(net.connects) == 1
        assert len({id(c) for c in got}) == 1
        assert got[0].ready


@pytest.mark.anyio
@pool_backends
async def test_purposes_get_separate_connections() -> None:
    broker = _broker()
    async with fake_pool({("h1", 1): broker}) as (pool, _):
        pool.update_brokers({1: ("h1", 1)})
        conns = [await pool.get(1, p) for p in ("default", "fetch", "group")]
        assert len({id(c) for c in conns}) == 3
        assert len(broker.streams) == 3
        assert await pool.get(1, "fetch") is conns[1]
        with pytest.raises(ValueError, match="purpose"):
            await pool.get(1, "bulk")


@pytest.mark.anyio
@pool_backends
async def test_bootstrap_skips_dead_servers() -> None:
    async with fake_pool({("good", 2): _broker()}, bootstrap="dead:1,good:2") as (pool, _):
        node, conn = await pool.bootstrap(timeout=5)
        assert pool.address(node) == ("good", 2)
        assert conn.ready
        assert node < 0


@pytest.mark.anyio
@pool_backends
async def test_bootstrap_gives_up_at_the_deadline() -> None:
    async with fake_pool({}, bootstrap="dead:1,dead:2", reconnect_backoff_ms=20) as (pool, net):
        start = anyio.current_time()
        with pytest.raises(NoBrokersAvailableError, match="dead:1, dead:2"):
            await pool.bootstrap(timeout=0.3)
        assert anyio.current_time() - start < 3.0  # the deadline, plus a loaded machine's slack
        assert len(net.connects) >= 4  # both servers retried, with backoff in between
        assert pool.statistics().backoff_failures


@pytest.mark.anyio
@pool_backends
async def test_failed_connect_backs_off_then_reconnects() -> None:
    async with fake_pool({}, reconnect_backoff_ms=100, reconnect_backoff_max_ms=1000) as (
        pool,
        net,
    ):
        pool.update_brokers({1: ("late", 1)})
        with pytest.raises(KafkaConnectionError, match="cannot connect"):
            await pool.get(1)
        net.brokers[("late", 1)] = _broker()
        start = anyio.current_time()
        conn = await pool.get(1)  # waits out the backoff (100 ms, rand=0.5 -> no jitter)
        assert anyio.current_time() - start >= 0.09
        assert conn.ready
        assert len(net.connects) == 2
        # A deadline shorter than the backoff gives a timeout, not a hang.
        await conn.close()
        del net.brokers[("late", 1)]
        with pytest.raises(KafkaConnectionError):
            await pool.get(1)
        with pytest.raises(KafkaTimeoutError):
            await pool.get(1, timeout=0.01)


@pytest.mark.anyio
@pool_backends
async def test_broken_connection_is_replaced_on_next_get() -> None:
    broker = _broker()
    async with fake_pool({("h1", 1): broker}) as (pool, _):
        pool.update_brokers({1: ("h1", 1)})
        conn = await pool.get(1)
        await broker.streams[0].aclose()
        with anyio.fail_after(6):
            await conn.wait_closed()
        again = await pool.get(1)
        assert again is not conn
        assert again.ready
        resp = await again.request(
            METADATA, MetadataRequest(topics=[MetadataRequestTopic(name="4")])
        )
        assert resp.brokers[0].node_id == 4


@pytest.mark.anyio
@pool_backends
async def test_idle_connections_are_closed() -> None:
    async with fake_pool({("h1", 1): _broker()}, connections_max_idle_ms=100) as (pool, _):
        pool.update_brokers({1: ("h1", 1)})
        conn = await pool.get(1)
        with anyio.fail_after(6):
            await conn.wait_closed()
        assert pool.connection(1) is None
        assert (await pool.get(1)).ready


@pytest.mark.anyio
@pool_backends
async def test_close_closes_everything_and_refuses_new_work() -> None:
    async with fake_pool({("h1", 1): _broker()}) as (pool, _):
        pool.update_brokers({1: ("h1", 1)})
        conns = [await pool.get(1, p) for p in ("default", "fetch")]
        with anyio.fail_after(6):
            await pool.close()
        assert all(c.closed for c in conns)
        with pytest.raises(ClientClosedError):
            await pool.get(1, "group")


@pytest.mark.anyio
async def test_bootstrap_connections_are_adopted_by_the_broker_at_that_address() -> None:
    st = PoolState(ExponentialBackoff(0.1, 1.0))
    st.set_addresses({-1: ("a", 1), -2: ("z", 9)}, replace=False)
    same, other, busy = _conn(), _conn(), _conn(in_flight=1)
    st.connected((-1, "default"), same)
    st.connected((-2, "default"), other)
    st.connected((-2, "fetch"), busy)
    st.set_addresses({7: ("a", 1)}, replace=True)
    to_close = st.adopt_bootstrap()
    assert st.connection((7, "default")) is same
    assert same.node_id == 7
    assert to_close == [other]  # no broker at z:9
    assert st.connection((-2, "fetch")) is busy  # in use: left alone for now
