"""Shutdown of the cluster client: background work survives an outer cancellation until
close(), and close() is quiet."""

from __future__ import annotations

import logging

import anyio
import anyio.abc
import pytest

from kafka_async.cluster.client import ClusterClient
from kafka_async.cluster.tasks import BackgroundTasks
from kafka_async.errors import BackgroundTaskError, ClientClosedError
from kafka_async.net.config import ClientConfig
from kafka_async.protocol.apis import API_VERSIONS
from kafka_async.protocol.apis.api_versions import ApiVersionsRequest

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
    """An unexpected error stops the group, reaches ``on_error`` as a BackgroundTaskError
    with the original cause, and later calls raise it."""
    seen: list[BackgroundTaskError] = []
    failed = anyio.Event()
    stopped = anyio.Event()

    async def boom() -> None:
        await anyio.sleep(0.01)
        raise ValueError("boom")

    async def sibling() -> None:
        try:
            await anyio.sleep_forever()
        finally:
            stopped.set()

    def on_error(error: BackgroundTaskError) -> None:
        seen.append(error)
        failed.set()

    async with BackgroundTasks("test", on_error=on_error) as tasks:
        tasks.start_soon(sibling)
        tasks.start_soon(boom)
        with anyio.fail_after(5):
            await failed.wait()
            await stopped.wait()
        assert isinstance(seen[0].__cause__, ValueError)
        with pytest.raises(BackgroundTaskError):
            tasks.start_soon(sibling)
    assert tasks.closed


@BACKENDS
async def test_background_tasks_error_without_owner_callback_raises_on_exit() -> None:
    raised = anyio.Event()

    async def boom() -> None:
        raised.set()
        raise ValueError("boom")

    tasks = BackgroundTasks("test")
    await tasks.__aenter__()
    tasks.start_soon(boom)
    with anyio.fail_after(5):
        await raised.wait()
        await tasks.aclose()  # returns once the failed group has stopped
    with pytest.raises(BackgroundTaskError) as info:
        await tasks.__aexit__(None, None, None)
    assert isinstance(info.value.__cause__, ValueError)


@BACKENDS
async def test_background_tasks_close_inside_a_later_scope_and_another_task() -> None:
    """Entered in one place, closed inside a cancel scope opened later, or from another
    task: both return once the tasks have finished (anyio forbids this for a task group
    entered in the caller's task)."""
    for where in ("scope", "task"):
        finished = anyio.Event()

        async def worker(finished: anyio.Event = finished) -> None:
            try:
                await anyio.sleep_forever()
            finally:
                finished.set()

        tasks = BackgroundTasks("test")
        await tasks.__aenter__()
        tasks.start_soon(worker)
        await anyio.sleep(0.01)
        if where == "scope":
            with anyio.fail_after(5):
                await tasks.__aexit__(None, None, None)
        else:
            async with anyio.create_task_group() as tg:
                tg.start_soon(tasks.aclose)
        assert finished.is_set()
        assert tasks.closed


@BACKENDS
async def test_background_tasks_start_cancelled_with_its_caller() -> None:
    """``start()``: a caller cancelled while waiting cancels the started task too."""
    cancelled = anyio.Event()

    async def slow_start(*, task_status: anyio.abc.TaskStatus[None]) -> None:
        try:
            await anyio.sleep(30)
            task_status.started()
        finally:
            cancelled.set()

    async with BackgroundTasks("test") as tasks:
        with anyio.move_on_after(0.05):
            await tasks.start(slow_start)
        with anyio.fail_after(5):
            await cancelled.wait()


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
            await client.request(node, API_VERSIONS, ApiVersionsRequest(), version=0)
            outer.cancel()
            try:
                await anyio.sleep(5)
            finally:
                with anyio.CancelScope(shield=True), anyio.fail_after(10):
                    await anyio.sleep(0.1)  # every outer cancellation is delivered by now
                    resp = await client.request(node, API_VERSIONS, ApiVersionsRequest(), version=0)
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
