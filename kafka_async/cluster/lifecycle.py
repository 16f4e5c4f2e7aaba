"""``Lifecycle``: the one start/close protocol of every client.

The producer, the consumer, the admin client and the cluster client each own one of these.
It holds the client's :class:`~kafka_async.structs.ClientState` and decides, synchronously
and before any I/O, what a ``start()`` or ``close()`` call does; the client only supplies
the I/O:

- ``start()`` runs once: a second call (or a call after close) raises
  :class:`~kafka_async.errors.ClientClosedError`. If the client's start-up fails or is
  cancelled, the client is closed (its undo runs shielded) and the error propagates.
- ``close()`` may be called from any task and inside any cancel scope, any number of times.
  The first call moves the state to ``CLOSING`` and runs the client's close phases inside a
  shielded scope, so a cancelled caller (the usual reason to close) still flushes, commits
  and leaves; every phase has its own deadline, so close always returns. A concurrent
  ``close()`` waits until the first has finished, cancelled or not (a caller expects a
  closed client afterwards); later calls return at once. A cancellation that reached a
  closing task meanwhile is raised once the phases are done.
- Every public call checks :meth:`Lifecycle.check` first: one error for "not started", one
  for "closed", and the background failure (a
  :class:`~kafka_async.errors.BackgroundTaskError`) once one happened.

Background tasks are not part of this: each client that has some owns one
:class:`~kafka_async.cluster.tasks.BackgroundTasks` group (detached from the caller's
scopes) and stops it in a close phase; no client's group runs inside another's.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import anyio
import anyio.lowlevel

from ..errors import BackgroundTaskError, ClientClosedError
from ..structs import ClientState

log = logging.getLogger(__name__)


class Lifecycle:
    """State and start/close protocol of one client named ``name`` ("producer", ...)."""

    __slots__ = ("_close_done", "_start_done", "failure", "name", "state")

    def __init__(self, name: str) -> None:
        self.name = name
        self.state = ClientState.NEW
        #: The unexpected background error that stopped the client, if any.
        self.failure: BackgroundTaskError | None = None
        self._start_done: anyio.Event | None = None
        self._close_done: anyio.Event | None = None

    def __repr__(self) -> str:
        return f"<Lifecycle {self.name} {self.state.value}>"

    # -- queries ---------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """Started and not closing: the client's calls work."""
        return self.state is ClientState.RUNNING

    @property
    def closed(self) -> bool:
        """Closing or closed."""
        return self.state in (ClientState.CLOSING, ClientState.CLOSED)

    def check(self, *, starting: bool = False, closing: bool = False) -> None:
        """Raise unless the client is running: ``ClientClosedError`` before ``start()`` and
        after ``close()``, the background failure once one happened. ``starting`` also
        allows the start-up's own calls; ``closing`` the calls of the close phases (a
        consumer's final commit, made by its rebalance listener)."""
        if self.failure is not None:
            raise self.failure
        state = self.state
        if (
            state is ClientState.RUNNING
            or (starting and state is ClientState.STARTING)
            or (closing and state is ClientState.CLOSING)
        ):
            return
        if state in (ClientState.NEW, ClientState.STARTING):
            raise ClientClosedError(f"the {self.name} is not started (use 'async with' or start())")
        raise ClientClosedError(f"the {self.name} is closed")

    def check_not_closed(self) -> None:
        """Raise ``ClientClosedError`` after ``close()`` (calls that also work before start)."""
        if self.closed:
            raise ClientClosedError(f"the {self.name} is closed")

    def fail(self, error: BackgroundTaskError) -> None:
        """A background task failed unexpectedly: every later :meth:`check` raises ``error``."""
        if self.failure is None:
            self.failure = error

    # -- start -----------------------------------------------------------------------------

    async def start(
        self, run: Callable[[], Awaitable[None]], undo: Callable[[], Awaitable[None]]
    ) -> None:
        """Run the client's start-up ``run()`` once.

        If it raises (or is cancelled), ``undo()`` runs shielded to release what was
        acquired, the client ends ``CLOSED`` and the error propagates.
        """
        if self.state is not ClientState.NEW:
            raise ClientClosedError(
                f"a {self.name} can only be started once (it is {self.state.value})"
            )
        self.state = ClientState.STARTING
        done = self._start_done = anyio.Event()
        try:
            await run()
        except BaseException:
            self.state = ClientState.CLOSING
            try:
                with anyio.CancelScope(shield=True):
                    await undo()
            finally:
                self.state = ClientState.CLOSED
                done.set()
            raise
        self.state = ClientState.RUNNING
        done.set()

    # -- close -----------------------------------------------------------------------------

    async def close(self, phases: Callable[[], Awaitable[None]]) -> bool:
        """Close once: run ``phases()`` shielded; a concurrent call waits for the first.

        Returns True in the call that ran the phases. A client never started is closed at
        once; a start-up still running in another task is waited for first (it is bounded
        by the client's request timeout), then closed.
        """
        if self.state is ClientState.STARTING:
            assert self._start_done is not None
            with anyio.CancelScope(shield=True):
                await self._start_done.wait()
        if self.state is ClientState.CLOSING:
            # Closing in another task: return once it is done (it is bounded), even when
            # this caller is cancelled meanwhile, like the first one; then raise that.
            if self._close_done is not None:
                with anyio.CancelScope(shield=True):
                    await self._close_done.wait()
            await anyio.lowlevel.checkpoint_if_cancelled()
            return False
        if self.state is ClientState.CLOSED:
            return False
        if self.state is ClientState.NEW:
            self.state = ClientState.CLOSED
            return False
        self.state = ClientState.CLOSING
        done = self._close_done = anyio.Event()
        try:
            with anyio.CancelScope(shield=True):
                await phases()
        finally:
            self.state = ClientState.CLOSED
            done.set()
        # A cancellation that reached the caller while closing propagates now.
        await anyio.lowlevel.checkpoint_if_cancelled()
        return True

    async def phase(self, what: str, seconds: float, step: Callable[[], Awaitable[None]]) -> bool:
        """One bounded close phase: ``step()`` gets ``seconds``; past that it is cancelled
        and a warning names it. Returns True when it finished in time."""
        finished = False
        with anyio.move_on_after(max(seconds, 0.0)):
            await step()
            finished = True
        if not finished:
            log.warning("%s close(): %s did not finish within %.3f s", self.name, what, seconds)
        return finished


__all__ = ["ClientState", "Lifecycle"]
