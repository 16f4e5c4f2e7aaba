"""What the consumer drives of its group member, whatever the group protocol.

Two drivers implement it, each on the shared engine ``member.GroupMember``:

* ``coordinator.GroupCoordinator``: the classic protocol (JoinGroup/SyncGroup; the group's
  leader runs the assignor), ``group_protocol="classic"``;
* ``heartbeat_coordinator.HeartbeatCoordinator``: KIP-848's consumer group protocol
  (ConsumerGroupHeartbeat; the broker assigns), ``group_protocol="consumer"``.

The consumer holds a ``GroupDriver`` and never asks which one it has.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

import anyio
import anyio.abc

from ...errors import KafkaError


class GroupMachine(Protocol):
    """What the consumer reads and calls of the member's state machine."""

    @property
    def failure(self) -> KafkaError | None:
        """The fatal error the member failed with (None: it has not failed)."""

    def reset(self) -> None:
        """Back to unjoined, without a request (unsubscribe() outside the group's task)."""


class GroupDriver(Protocol):
    """One consumer's membership in its group, as the consumer uses it."""

    group_id: str
    #: The rebalance listener (None: none), set by subscribe().
    listener: object | None
    #: A fatal error or a listener's exception, for the consumer to raise; it clears a
    #: listener's once raised.
    error: BaseException | None

    @property
    def membership(self) -> GroupMachine:
        """The protocol's pure state machine."""

    @property
    def stable(self) -> bool:
        """The member holds its assignment, with no rebalance under way."""

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """The member's tasks (actions, heartbeats), in the consumer's task group."""

    def wake(self) -> None:
        """Look at the state again now (something changed outside)."""

    def subscription_changed(self) -> None:
        """The consumer's subscription changed."""

    def polled(self) -> None:
        """The application asked for records (the max_poll_interval_ms clock restarts)."""

    def commit_refusal(self) -> KafkaError | None:
        """Why a commit cannot be made now, or None when it can (in ``generation()``)."""

    def generation(self) -> tuple[int, str, str | None]:
        """(generation or member epoch, -1 outside the group; member id; instance id)."""

    def current_generation(self) -> int:
        """The generation or member epoch a commit would carry now (-1 outside)."""

    def on_commit_error(self, code: int, generation_id: int, member_id: str) -> None:
        """A commit made in ``generation_id`` came back with a generation error."""

    async def wait_stable(self, timeout: float) -> bool:  # noqa: ASYNC109 - a deadline
        """Wait until ``stable``; False at the deadline."""

    async def leave_group(
        self,
        timeout: float,  # noqa: ASYNC109 - a deadline
        *,
        reset: bool = False,
        after: Callable[[], None] | None = None,
    ) -> bool:
        """close()/unsubscribe(): revoke and leave, in the member's task; False if that did
        not finish within ``timeout`` seconds."""

    def statistics(self) -> Mapping[str, Any]:
        """The member at a glance."""


__all__ = ["GroupDriver", "GroupMachine"]
