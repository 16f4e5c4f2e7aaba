"""A level-free wake-up signal for tasks that wait for "something changed"."""

from __future__ import annotations

import anyio


class Signal:
    """``notify()`` wakes every task currently in ``wait()``; later waiters wait for the next.

    anyio events cannot be cleared, so each notification swaps in a fresh event. A waiter
    must take ``current()`` *before* checking its condition, then wait on that event: a
    notification in between is then never missed.
    """

    __slots__ = ("_event",)

    def __init__(self) -> None:
        self._event = anyio.Event()

    def current(self) -> anyio.Event:
        return self._event

    def notify(self) -> None:
        event = self._event
        self._event = anyio.Event()
        event.set()

    async def wait(self, timeout: float | None, event: anyio.Event | None = None) -> bool:  # noqa: ASYNC109
        """Wait for a notification (after ``event`` was taken, if given); False on timeout."""
        ev = event if event is not None else self._event
        with anyio.move_on_after(timeout):
            await ev.wait()
            return True
        return False


async def wait_any(events: tuple[anyio.Event, ...], timeout: float | None) -> bool:  # noqa: ASYNC109
    """Wait until one of ``events`` is set; False when ``timeout`` passes first."""
    if any(e.is_set() for e in events):
        return True
    with anyio.move_on_after(timeout):
        async with anyio.create_task_group() as tg:

            async def one(event: anyio.Event) -> None:
                await event.wait()
                tg.cancel_scope.cancel()

            for event in events:
                tg.start_soon(one, event)
        return True
    return False
