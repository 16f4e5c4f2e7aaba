"""The one lifecycle of every client: ``cluster/lifecycle.py`` alone, then the four clients
(producer, consumer, admin client, cluster client) on a real broker behaving alike."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import anyio
import pytest

from kafka_async import AdminClient, ClientState, Consumer, Producer
from kafka_async.cluster import ClusterClient
from kafka_async.cluster.lifecycle import Lifecycle
from kafka_async.errors import BackgroundTaskError, ClientClosedError
from kafka_async.net.config import ClientConfig

pytestmark = pytest.mark.anyio


async def _nothing() -> None:
    pass


async def test_start_runs_once() -> None:
    life = Lifecycle("widget")
    runs: list[str] = []

    async def run() -> None:
        runs.append("run")

    await life.start(run, _nothing)
    assert life.state is ClientState.RUNNING
    with pytest.raises(ClientClosedError, match="can only be started once"):
        await life.start(run, _nothing)
    assert runs == ["run"]


async def test_failed_start_undoes_and_ends_closed() -> None:
    life = Lifecycle("widget")
    undone: list[ClientState] = []

    async def run() -> None:
        raise OSError("no route")

    async def undo() -> None:
        undone.append(life.state)

    with pytest.raises(OSError, match="no route"):
        await life.start(run, undo)
    assert undone == [ClientState.CLOSING]
    assert life.state is ClientState.CLOSED
    with pytest.raises(ClientClosedError, match="widget is closed"):
        life.check()


async def test_cancelled_start_still_undoes() -> None:
    life = Lifecycle("widget")
    undone: list[bool] = []

    async def run() -> None:
        await anyio.sleep_forever()

    async def undo() -> None:
        await anyio.sleep(0.01)  # shielded: the cancellation does not cut the undo short
        undone.append(True)

    with anyio.move_on_after(0.05):
        await life.start(run, undo)
    assert undone == [True]
    assert life.state is ClientState.CLOSED


async def test_one_error_per_state() -> None:
    life = Lifecycle("widget")
    with pytest.raises(ClientClosedError, match="widget is not started"):
        life.check()
    await life.start(_nothing, _nothing)
    life.check()
    failure = BackgroundTaskError("a task failed")
    life.fail(failure)
    with pytest.raises(BackgroundTaskError):
        life.check()
    await life.close(_nothing)
    assert life.closed


async def test_close_before_start_closes_at_once() -> None:
    life = Lifecycle("widget")
    assert await life.close(_nothing) is False
    assert life.state is ClientState.CLOSED
    with pytest.raises(ClientClosedError, match="can only be started once"):
        await life.start(_nothing, _nothing)


async def test_concurrent_close_waits_for_the_first() -> None:
    life = Lifecycle("widget")
    await life.start(_nothing, _nothing)
    release = anyio.Event()
    order: list[str] = []

    async def phases() -> None:
        order.append("phases started")
        await release.wait()
        order.append("phases done")

    async def first() -> None:
        assert await life.close(phases) is True
        order.append("first returned")

    async def second() -> None:
        assert await life.close(phases) is False  # the phases run once
        order.append("second returned")

    async with anyio.create_task_group() as tg:
        tg.start_soon(first)
        await anyio.wait_all_tasks_blocked()
        tg.start_soon(second)
        await anyio.wait_all_tasks_blocked()
        assert life.state is ClientState.CLOSING
        assert order == ["phases started"]  # the second close is still waiting
        release.set()
    assert order[:2] == ["phases started", "phases done"]
    assert set(order[2:]) == {"first returned", "second returned"}
    assert life.state is ClientState.CLOSED


async def test_close_in_a_cancelled_scope_finishes_then_raises_the_cancellation() -> None:
    life = Lifecycle("widget")
    await life.start(_nothing, _nothing)
    done: list[bool] = []

    async def phases() -> None:
        await anyio.sleep(0.02)
        done.append(True)

    after_close: list[bool] = []
    with anyio.CancelScope() as scope:
        scope.cancel()
        await life.close(phases)
        after_close.append(True)  # not reached: the cancellation is raised after closing
    assert done == [True]
    assert after_close == []
    assert life.state is ClientState.CLOSED


async def test_close_waits_for_a_start_in_progress() -> None:
    life = Lifecycle("widget")
    go = anyio.Event()
    closed_phases: list[ClientState] = []

    async def run() -> None:
        await go.wait()

    async def phases() -> None:
        closed_phases.append(life.state)

    async with anyio.create_task_group() as tg:
        tg.start_soon(life.start, run, _nothing)
        await anyio.wait_all_tasks_blocked()
        assert life.state is ClientState.STARTING
        tg.start_soon(life.close, phases)
        await anyio.wait_all_tasks_blocked()
        assert life.state is ClientState.STARTING
        go.set()
    assert closed_phases == [ClientState.CLOSING]
    assert life.state is ClientState.CLOSED


async def test_a_phase_is_bounded(caplog: pytest.LogCaptureFixture) -> None:
    life = Lifecycle("widget")
    with caplog.at_level(logging.WARNING, logger="kafka_async.cluster.lifecycle"):
        assert await life.phase("waiting forever", 0.02, anyio.sleep_forever) is False
        assert await life.phase("nothing", 1.0, _nothing) is True
    assert "widget close(): waiting forever did not finish within 0.020 s" in caplog.text


# -- the four clients ------------------------------------------------------------------------

Client = Producer | Consumer[bytes, bytes] | AdminClient | ClusterClient


def _clients(bootstrap: str) -> dict[str, Callable[[], Client]]:
    return {
        "producer": lambda: Producer(bootstrap),
        "consumer": lambda: Consumer(bootstrap_servers=bootstrap),
        "admin": lambda: AdminClient(bootstrap),
        "cluster": lambda: ClusterClient(ClientConfig(bootstrap_servers=bootstrap)),
    }


def _use(client: Client) -> Callable[[], Awaitable[object]]:
    """One ordinary call of each client, which must fail once the client is closed."""
    if isinstance(client, Producer):
        return lambda: client.send("lifecycle", b"v")
    if isinstance(client, Consumer):
        return lambda: client.getmany(timeout_ms=10)
    if isinstance(client, AdminClient):
        return lambda: client.list_topics()
    return lambda: client.refresh_metadata()


@pytest.mark.integration
@pytest.mark.parametrize("kind", ["producer", "consumer", "admin", "cluster"])
async def test_every_client_has_the_same_lifecycle(kafka_broker: str, kind: str) -> None:
    client = _clients(kafka_broker)[kind]()
    use = _use(client)
    assert client.state.value == "new"
    with pytest.raises(ClientClosedError, match="not started"):
        await use()
    with anyio.fail_after(30):
        await client.start()
        assert client.state is ClientState.RUNNING
        with pytest.raises(ClientClosedError, match="can only be started once"):
            await client.start()
        # Close from two other tasks at once, inside a scope that is already cancelled:
        # both return once the client is closed.
        states: list[ClientState] = []

        async def close() -> None:
            with anyio.CancelScope() as scope:
                scope.cancel()
                await client.close()
            states.append(client.state)

        async with anyio.create_task_group() as tg:
            tg.start_soon(close)
            tg.start_soon(close)
    assert states == [ClientState.CLOSED, ClientState.CLOSED]
    with pytest.raises(ClientClosedError, match="is closed"):
        await use()
    await client.close()  # again: nothing to do
    with pytest.raises(ClientClosedError, match="can only be started once"):
        await client.start()
