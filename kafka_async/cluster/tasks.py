"""``BackgroundTasks``: a client's background task group, owned by the client, not the caller.

Why it is detached. A client is started in one place and closed in another, and the two
are rarely at the same cancel-scope level of the same task:

- ``async with Producer(...)`` inside a FastAPI lifespan or an outer ``move_on_after``: a
  task group entered there is a child of those scopes, so cancelling them would cancel the
  connection readers, the sender, the fetcher and the group coordinator *before* ``close()``
  runs, and ``close()`` could then neither flush, commit nor leave the group;
- ``await producer.start()`` in one place and ``with anyio.fail_after(5): await
  producer.close()`` (or ``close()`` from a shutdown task) elsewhere: anyio requires a task
  group to be exited from the scope, and the task, it was entered in, so a task group
  entered by ``start()`` could not be exited there at all.

So the task group lives in a *host* task of its own, spawned on the running event loop
(``loop.create_task`` on asyncio, ``trio.lowlevel.spawn_system_task`` on trio) rather than in
the caller's task tree. The caller's scopes never reach it; only :meth:`cancel` (called by
the owner's ``close()``) stops it, and :meth:`aclose` waits, with a deadline, until every
background task has finished its own cleanup. It is still structured inside: every
background task runs in the one task group, and none outlives ``close()``.

Errors. A background task is written not to fail (each loop handles and logs the errors
it expects). An unexpected one stops the whole group; it is logged, kept in :attr:`error`
and handed to the owner's ``on_error`` callback, which marks the client failed (its calls
then raise :class:`~kafka_async.errors.BackgroundTaskError`) and wakes anything waiting on
it. Without ``on_error``, leaving ``async with`` raises it.

Usage (from the owning client's ``start``/``close``; the two may run in any task)::

    self._tasks = await stack.enter_async_context(BackgroundTasks("consumer", on_error=...))
    self._tasks.start_soon(self._loop)
    ...
    self._tasks.cancel()   # in close(), after the final work that needs the tasks
    await stack.aclose()   # waits (bounded) until they have finished
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel

from ..errors import BackgroundTaskError, ClientClosedError

log = logging.getLogger(__name__)

#: How long :meth:`BackgroundTasks.aclose` waits for the tasks to finish their cleanup
#: (each bounds its own cleanup well below this; the wait only guards against a bug).
CLOSE_DEADLINE = 10.0


def _spawn_detached(host: Callable[[], Coroutine[Any, Any, None]], name: str) -> object:
    """Start ``host()`` as a task of the running event loop, outside the caller's scopes."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    if loop is not None:
        # The returned task is kept by the caller: the loop holds only weak references.
        return loop.create_task(host(), name=name)
    import trio  # only reached on the trio backend

    trio.lowlevel.spawn_system_task(host, name=name, context=contextvars.copy_context())
    return None


class BackgroundTasks:
    """A task group in a task of its own: the caller's cancel scopes never reach it and it
    can be closed from any task and scope. Stopped by :meth:`cancel` / :meth:`aclose`.

    ``on_error(error)`` is called (synchronously, in the host task) when a background task
    fails unexpectedly; ``error`` is a :class:`~kafka_async.errors.BackgroundTaskError`
    whose ``__cause__`` is the original exception.
    """

    def __init__(
        self,
        name: str = "background",
        *,
        on_error: Callable[[BackgroundTaskError], None] | None = None,
        close_deadline: float = CLOSE_DEADLINE,
    ) -> None:
        self.name = name
        self._on_error = on_error
        self._close_deadline = close_deadline
        self._entered = False
        self._inner: anyio.abc.TaskGroup | None = None
        self._scope: anyio.CancelScope | None = None
        self._cancelled = False
        self._ready: anyio.Event | None = None
        self._done: anyio.Event | None = None
        self._task: object = None
        #: The unexpected error that stopped the background tasks, if any.
        self.error: BackgroundTaskError | None = None

    async def __aenter__(self) -> BackgroundTasks:
        if self._entered:
            raise ClientClosedError(f"{self.name}: background tasks can only be entered once")
        self._entered = True
        ready = self._ready = anyio.Event()
        self._done = anyio.Event()
        self._task = _spawn_detached(self._host, f"{self.name} host")
        # The host only opens its task group before setting ``ready``: no I/O, no waiting.
        # Shielded so a caller cancelled right now still gets a group it can close.
        with anyio.fail_after(self._close_deadline, shield=True):
            await ready.wait()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        if exc is None and self.error is not None and self._on_error is None:
            raise self.error
        return None

    async def _host(self) -> None:
        assert self._ready is not None
        assert self._done is not None
        try:
            with anyio.CancelScope() as scope:
                self._scope = scope
                if self._cancelled:
                    scope.cancel()
                async with anyio.create_task_group() as inner:
                    self._inner = inner
                    self._ready.set()
                    await anyio.sleep_forever()
        except Exception as exc:  # reported to the owner, see the module doc
            self._failed(exc)
        finally:
            self._inner = None
            self._cancelled = True
            self._ready.set()
            self._done.set()

    def _failed(self, exc: Exception) -> None:
        cause: BaseException = exc
        # anyio wraps a task's error in an exception group (duck-typed: 3.10 has no builtin).
        inner = getattr(cause, "exceptions", None)
        while isinstance(inner, tuple) and len(inner) == 1 and isinstance(inner[0], BaseException):
            cause = inner[0]
            inner = getattr(cause, "exceptions", None)
        error = BackgroundTaskError(f"{self.name}: a background task failed: {cause!r}")
        error.__cause__ = cause
        self.error = error
        log.error("%s: a background task failed; the client stops", self.name, exc_info=cause)
        if self._on_error is not None:
            try:
                self._on_error(error)
            except Exception:
                log.exception("%s: the on_error callback failed", self.name)

    def cancel(self) -> None:
        """Cancel every background task (they finish their own shielded cleanup)."""
        self._cancelled = True
        if self._scope is not None:
            self._scope.cancel()

    async def aclose(self) -> None:
        """Cancel, then wait until every background task has finished (bounded; shielded,
        so it completes even when the calling task is being cancelled; it does not raise
        that cancellation)."""
        self.cancel()
        done = self._done
        if done is None:
            return
        with anyio.CancelScope(shield=True):
            with anyio.move_on_after(self._close_deadline):
                await done.wait()
            if not done.is_set():
                log.warning(
                    "%s: background tasks did not finish within %.1f s of close()",
                    self.name,
                    self._close_deadline,
                )
            # One more turn so the host task itself has returned (no task left behind).
            await anyio.lowlevel.checkpoint()
        # An outer cancellation that arrived meanwhile is not raised here: the owner's
        # close() has more cleanup to do, and its caller's next checkpoint raises it.

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    @property
    def closed(self) -> bool:
        """True once every background task has finished."""
        return self._done is not None and self._done.is_set()

    def _group(self) -> anyio.abc.TaskGroup:
        if self.error is not None:
            raise self.error
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
        """Like ``TaskGroup.start``: wait until ``func`` calls ``task_status.started()``.
        If the caller is cancelled meanwhile, ``func`` is cancelled too."""
        return await self._group().start(func, *args, name=name)


__all__ = ["CLOSE_DEADLINE", "BackgroundTasks"]
