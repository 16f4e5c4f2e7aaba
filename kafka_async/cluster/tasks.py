"""``BackgroundTasks``: a task group that only its owner's ``close()`` stops.

Why: a client is entered with ``async with`` inside the application's cancel scopes (a
FastAPI lifespan, an outer ``move_on_after``). A plain task group entered there is a child
of those scopes, so cancelling them cancels the client's background tasks (connection
readers, coordinator lookups, the group coordinator loop) *before* ``close()`` runs, and
``close()`` can then neither commit nor leave the group.

Here the owner's task group holds exactly one task, the *host*, which sits in a shielded
cancel scope and opens the inner task group that every background task runs in. An outer
cancellation stops at the shield, including for tasks spawned later (``close()`` itself may
need new ones, e.g. a coordinator lookup). Only :meth:`BackgroundTasks.cancel` (called by
the owner's ``close()``) cancels the shielded scope; an exception raised by a background
task still propagates to the owner (it cancels the body of ``async with``), as with any
task group.

Usage (from the owning client's ``start``/``close``, in one task)::

    self._tasks = await stack.enter_async_context(BackgroundTasks("consumer"))
    self._tasks.start_soon(self._loop)
    ...
    self._tasks.cancel()   # in close(), after the shielded final work
    await stack.aclose()
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import Any

import anyio
import anyio.abc

from ..errors import ClientClosedError


class BackgroundTasks:
    """A task group shielded from the owner's cancel scopes; stopped by :meth:`cancel`."""

    def __init__(self, name: str = "background") -> None:
        self.name = name
        self._outer: anyio.abc.TaskGroup | None = None
        self._inner: anyio.abc.TaskGroup | None = None
        self._scope: anyio.CancelScope | None = None
        self._cancelled = False

    async def __aenter__(self) -> BackgroundTasks:
        if self._outer is not None:
            raise ClientClosedError(f"{self.name}: background tasks can only be entered once")
        outer = anyio.create_task_group()
        await outer.__aenter__()
        self._outer = outer
        try:
            await outer.start(self._host, name=f"{self.name} host")
        except BaseException:
            outer.cancel_scope.cancel()
            await outer.__aexit__(None, None, None)
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        self.cancel()
        assert self._outer is not None
        # Only the host task lives in the outer group; the caller's exception is kept out
        # of it so anyio does not wrap it in an ExceptionGroup.
        await self._outer.__aexit__(None, None, None)
        return None

    async def _host(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        with anyio.CancelScope(shield=True) as scope:
            self._scope = scope
            if self._cancelled:
                scope.cancel()
            async with anyio.create_task_group() as inner:
                self._inner = inner
                task_status.started()
                await anyio.sleep_forever()

    def cancel(self) -> None:
        """Cancel every background task (they finish their own shielded cleanup)."""
        self._cancelled = True
        if self._scope is not None:
            self._scope.cancel()

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def _group(self) -> anyio.abc.TaskGroup:
        if self._inner is None or self._cancelled:
            raise ClientClosedError(f"{self.name}: background tasks are stopped")
        return self._inner

    def start_soon(
        self, func: Callable[..., Coroutine[Any, Any, Any]], *args: Any, name: object = None
    ) -> None:
        """Run ``func(*args)`` in the background (``ClientClosedError`` once cancelled)."""
        self._group().start_soon(func, *args, name=name)

    async def start(
        self, func: Callable[..., Coroutine[Any, Any, Any]], *args: Any, name: object = None
    ) -> Any:
        """Like ``TaskGroup.start``: wait until ``func`` calls ``task_status.started()``."""
        return await self._group().start(func, *args, name=name)


__all__ = ["BackgroundTasks"]
