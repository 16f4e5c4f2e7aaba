"""Shutdown of the cluster client: background work survives an outer cancellation until
close(), and close() is quiet."""

from __future__ import annotations

import logging

import anyio
import pytest

from kafka_async.cluster.client import ClusterClient
from kafka_async.cluster.tasks import BackgroundTasks
from kafka_async.errors import ClientClosedError
from kafka_async.net.config import ClientConfig
from kafka_async.protocol.apis import API_VERSIONS

pytestmark = pytest.mark.anyio

BACKENDS = pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])


# -- BackgroundTasks (no broker) ------------------------------------------------------------


@BACKENDS
async def test_background_tasks_outlive_outer_cancel_until_cancel() -> None:
    ticks: list[int] = []
    stopped = anyio.Event()
    during_cleanup: list[int] = []

    async def ticker() -> None:
        try:
            while True:
                ticks.append(1)
                await anyio.sleep(0.01)
        finally:
            stopped.set()

    with anyio.CancelScope() as outer:
        async with BackgroundTasks("test") as tasks:
            tasks.start_soon(ticker)
            await anyio.sleep(0.05)
            outer.cancel()
            try:
                await anyio.sleep(1)
            finally:
                # What close() does: shielded final work, the background still running.
                with anyio.CancelScope(shield=True):
                    before = len(ticks)
                    # The ticker keeps going during cleanup: wait for 3 more ticks (with a
                    # deadline, not a fixed sleep a loaded machine could make too short).
                    with anyio.fail_after(6):
                        while True:
                            if len(ticks) - before >= 3:
                                break
                            await anyio.sleep(0.01)
                    during_cleanup.append(len(ticks) - before)
                    assert not stopped.is_set()
                    # Tasks started now are shielded too.
                    second = anyio.Event()

                    async def later() -> None:
                        await anyio.sleep(0.02)
                        second.set()

                    tasks.start_soon(later)
                    with anyio.fail_after(6):
                        await second.wait()
    assert outer.cancelled_caught
    assert during_cleanup[0] >= 3, during_cleanup
    assert stopped.is_set()
    with pytest.raises(ClientClosedError):
        tasks.start_soon(ticker)


@BACKENDS
async def test_background_tasks_errors_reach_the_owner() -> None:
    async def boom() -> None:
        await anyio.sleep(0.01)
        raise ValueError("boom")

    async def owner() -> None:
        async with BackgroundTasks("test") as tasks:
            tasks.start_soon(boom)
            await anyio.sleep(5)

    # anyio may wrap it in an exception group.
    with pytest.RaisesGroup(ValueError, allow_unwrapped=True, flatten_subgroups=True):
        await owner()


# -- ClusterClient against a broker ---------------------------------------------------------


@BACKENDS
@pytest.mark.integration
async def test_outer_cancel_keeps_connections_until_close(kafka_broker: str) -> None:
    """Regression: cancelling the scope around ``async with ClusterClient`` cancelled the
    connection readers and coordinator lookups before the owner's shielded close work."""
    client = ClusterClient(ClientConfig(bootstrap_servers=kafka_broker, request_timeout_ms=5000))
    answered: list[object] = []
    with anyio.CancelScope() as outer:
        async with client:
            node = await client.any_node()
            await client.request(node, API_VERSIONS, {}, version=0)
            outer.cancel()
            try:
                await anyio.sleep(5)
            finally:
                with anyio.CancelScope(shield=True), anyio.fail_after(10):
                    await anyio.sleep(0.1)  # every outer cancellation is delivered by now
                    resp = await client.request(node, API_VERSIONS, {}, version=0)
                    answered.append(resp.error_code)
                    # A new background task (the FindCoordinator lookup) works too.
                    answered.append(await client.coordinator("shutdown-test-group"))
    assert outer.cancelled_caught
    assert answered[0] == 0
    assert isinstance(answered[1], int)
    assert client.closed


@pytest.mark.integration
async def test_close_with_a_woken_refresher_logs_no_warning(
    kafka_broker: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Regression: a background refresh that had woken up when close() ran logged
    'background metadata refresh failed: the cluster client is closed or not started'."""
    caplog.set_level(logging.WARNING, logger="kafka_async")
    for _ in range(5):
        client = ClusterClient(ClientConfig(bootstrap_servers=kafka_broker))
        await client.start()
        await anyio.sleep(0.05)  # the refresher is waiting for a request
        client.request_metadata_update()
        await client.close()
    assert not [r for r in caplog.records if "refresh failed" in r.getMessage()]
