"""The group member engine: what a consumer does with partitions, whatever protocol moves them.

A consumer in a group takes part in one of two protocols: the classic one (JoinGroup and
SyncGroup, ``coordinator.GroupCoordinator``; the leader assigns) or KIP-848's
(ConsumerGroupHeartbeat, ``heartbeat_coordinator.HeartbeatCoordinator``; the broker
assigns). The protocols differ in how a member learns its partitions; what it then does
with them does not, and lives here once (the Java client's ``AbstractMembershipManager``,
franz-go's ``consumer_group.go`` beside ``consumer_group_848.go``):

* the action queue and the leave requests that the driver's ``run`` task serves, so that a
  revocation never races an assignment and a leave never races a listener;
* revoking (stop handing out records, commit the consumed offsets when auto commit is on,
  ``on_partitions_revoked``, stop fetching), losing (no commit: someone else may own them;
  ``on_partitions_lost``) and assigning (start fetching, ``on_partitions_assigned``);
* listener calls, whose exceptions reach the application through the consumer;
* ``leave_group`` for close() and unsubscribe(), and finishing a leave;
* the part of the commit refusal every protocol shares (a failed member, no generation);
* the poll-interval and session clocks, and the shared half of ``statistics()``.

A driver (a subclass) brings the protocol: its state machine (``state.GroupMembership`` or
``heartbeat_state.HeartbeatMembership``, pure, I/O-free), the requests, the ``run`` and
heartbeat tasks, and the few hooks below. The consumer talks to either through
``driver.GroupDriver``.
"""

from __future__ import annotations

import abc
import enum
import inspect
import logging
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

import anyio
import anyio.abc

from ...cluster.client import ClusterClient
from ...errors import KafkaError, RebalanceInProgressError
from ...structs import TopicPartition
from .._signal import Signal
from ..config import ConsumerConfig
from ..errors import CommitFailedError
from ..offsets import OffsetClient
from ..positions import SubscriptionState
from .state import FindCoordinator


@runtime_checkable
class RebalanceListenerProtocol(Protocol):
    """Anything with these methods (async or plain) can be a rebalance listener."""

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> Any: ...

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> Any: ...


class ConsumerRebalanceListener:
    """Base class for rebalance listeners; override what you need.

    ``on_partitions_revoked`` runs before partitions are given up in an orderly way (commit
    here if you commit manually); ``on_partitions_assigned`` after new ones arrive (seek
    here to start elsewhere than the committed offset); ``on_partitions_lost`` when the
    member's generation ended under it (the partitions may belong to someone else already,
    so do not commit). Its default calls ``on_partitions_revoked``, as Java's does.
    """

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        """Partitions about to be given up (their consumed offsets still committable)."""

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        """Partitions newly assigned to this member (empty on a no-change rebalance)."""

    async def on_partitions_lost(self, lost: set[TopicPartition]) -> None:
        """Partitions lost without an orderly revocation."""
        await self.on_partitions_revoked(lost)


async def call_listener(listener: object, name: str, tps: set[TopicPartition]) -> None:
    """Call the listener's ``name`` method (async or plain); ``on_partitions_lost`` falls
    back to ``on_partitions_revoked`` when the listener lacks it."""
    method = getattr(listener, name, None)
    if method is None:
        if name == "on_partitions_lost":
            method = getattr(listener, "on_partitions_revoked", None)
        if method is None:
            return
    result = method(tps)
    if inspect.isawaitable(result):
        await result


class MembershipMachine(Protocol):
    """What the engine reads and calls of a protocol's pure state machine (both
    ``GroupMembership`` and ``HeartbeatMembership`` have it). The actions they return are
    the driver's own types, hence ``Any`` here."""

    member_id: str
    group_instance_id: str | None
    owned: frozenset[TopicPartition]
    left_on_poll_timeout: bool
    failure: KafkaError | None

    @property
    def state(self) -> enum.Enum: ...

    def on_poll(self) -> None: ...

    def on_poll_timeout(self) -> list[Any]: ...

    def on_session_lost(self) -> list[Any]: ...

    def finish_leave(self, left: Any) -> None: ...

    def reset(self) -> None: ...


class LeaveRequest:
    """A leave queued for ``run``; ``after`` runs in ``run``'s task once it is done."""

    def __init__(self, reset: bool, after: Callable[[], None] | None) -> None:
        self.reset = reset
        self.after = after
        self.done = anyio.Event()


#: The driver's action type (its state machine's ``Action`` union).
A = TypeVar("A")
#: The driver's state machine.
M = TypeVar("M", bound=MembershipMachine)


class GroupMember(abc.ABC, Generic[A, M]):
    """Membership of one consumer in its group: the engine every protocol driver runs on."""

    #: Commit refusals say the member "is not in a group generation" / "holds no member
    #: epoch" (the protocol's word for what a commit carries).
    _outside_group = "is not in a group generation"
    #: The driver's module logger (log records keep the name they always had).
    _log: logging.Logger
    #: What the log says when the session expired.
    _session_lost = "no heartbeat answered within the session"

    def __init__(
        self,
        client: ClusterClient,
        config: ConsumerConfig,
        subscriptions: SubscriptionState,
        offsets: OffsetClient,
        changed: Signal,
        *,
        on_revoke: Any = None,
        committable: Any = None,
    ) -> None:
        assert config.group_id is not None
        self.group_id: str = config.group_id
        self._client = client
        self._config = config
        self._subs = subscriptions
        self._offsets = offsets
        self._changed = changed
        #: Called with the revoked partitions before the listener (the consumer discards
        #: their buffered records there).
        self._on_revoke = on_revoke
        #: The consumer's positions of records actually handed out (what commits write).
        self._committable = committable or subscriptions.consumed_offsets
        self.listener: object | None = None
        #: Actions for ``run`` to carry out, in order.
        self._pending: deque[A] = deque()
        #: Wakes ``run``.
        self._wake = Signal()
        self._leave_requests: deque[LeaveRequest] = deque()
        self._last_heartbeat_ok = time.monotonic()
        self.last_poll = time.monotonic()
        #: When the member last left for want of a poll (a later poll rejoins).
        self._poll_timeout_at = 0.0
        #: A fatal error (fenced, authorization...) or a listener's exception, raised by the
        #: consumer to the application.
        self.error: BaseException | None = None
        self.heartbeats = 0
        self.heartbeat_failures = 0
        #: The protocol's pure state machine; only the member's tasks change it.
        self.membership: M = self._start_protocol(config)

    # -- the protocol's part (the driver) ----------------------------------------------------

    @abc.abstractmethod
    def _start_protocol(self, config: ConsumerConfig) -> M:
        """Set up the protocol's part (the driver's own fields) and return its state
        machine; called once, at the end of ``__init__``."""

    @abc.abstractmethod
    async def _step(self) -> bool:
        """One turn of ``run``'s task: carry out what is queued or due; False when there
        was nothing to do (``run`` then waits for a wake, ``_idle_wait`` at most)."""

    def _idle_wait(self) -> float | None:
        """How long ``run`` waits for a wake when idle (None: until woken)."""
        return 1.0

    @abc.abstractmethod
    async def _heartbeat_loop(self) -> None:
        """The heartbeat task: heartbeats, and the session and poll-interval clocks."""

    @abc.abstractmethod
    def subscription_changed(self) -> None:
        """The consumer's subscription changed: tell the state machine (and the group)."""

    @abc.abstractmethod
    def on_commit_error(self, code: int, generation_id: int, member_id: str) -> None:
        """A commit made in ``generation_id`` came back with a generation error."""

    @property
    @abc.abstractmethod
    def stable(self) -> bool:
        """The member holds its assignment, with no rebalance under way."""

    @abc.abstractmethod
    def current_generation(self) -> int:
        """The generation (classic) or member epoch (KIP-848) a commit would carry now,
        -1 outside the group (see ``OffsetClient.commit``)."""

    @abc.abstractmethod
    def _failed(self) -> bool:
        """The state machine is in its FAILED state."""

    @abc.abstractmethod
    def _joining(self) -> bool:
        """The member holds no generation because it is joining (or rejoining)."""

    def _rebalance_refusal(self) -> KafkaError | None:
        """A commit refusal of the protocol's own, checked after a failure and before the
        lack of a generation (the classic protocol refuses while rejoining)."""
        return None

    def _rejoin_on_poll(self, now: float) -> bool:
        """The application polled at ``now``: let the state machine rejoin if it waits for
        that; True if it did (``run`` and the heartbeat are woken)."""
        m = self.membership
        if m.left_on_poll_timeout:
            m.on_poll()
            return True
        return False

    def _before_queue(self, actions: list[A]) -> None:
        """New actions are about to join the queue (KIP-848 drops moot ones on a fence)."""

    def _heartbeat_now(self) -> None:
        """The next heartbeat should go out at once (KIP-848; classic beats on a clock)."""

    def _abandon_step(self) -> None:
        """A leave is waiting: stop a step ``run`` may abandon (classic: a JoinGroup...)."""

    @abc.abstractmethod
    async def _leave_steps(self) -> None:
        """Carry out the leave: revoke what is held (committing, the listener told), tell
        the coordinator, finish (in ``run``'s task)."""

    @abc.abstractmethod
    def _protocol_statistics(self) -> dict[str, Any]:
        """The protocol's fields of ``statistics()``."""

    # -- API used by the consumer ------------------------------------------------------------

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """The member's two tasks, in the consumer's task group: the heartbeat loop, and
        this one, which carries out every action (``_step``), so that a revocation never
        races an assignment and a leave never races a listener."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._heartbeat_loop)
            task_status.started()
            while True:
                event = self._wake.current()
                if not await self._step():
                    await self._wake.wait(self._idle_wait(), event)

    def wake(self) -> None:
        self._wake.notify()

    def polled(self) -> None:
        """The application asked for records (resets the max_poll_interval_ms clock). A
        member that left on poll timeout rejoins (see ``_rejoin_on_poll``)."""
        now = time.monotonic()
        self.last_poll = now
        if self._rejoin_on_poll(now):
            self.wake()

    def commit_refusal(self) -> KafkaError | None:
        """Why a commit of offsets cannot be made now, or None when it can (in
        ``generation()``). Decided on the client, without a request, as the Java client
        does: the member failed (that error); the protocol's own refusal (the classic
        member refuses while it rejoins); it holds no generation (``CommitFailedError``,
        with REBALANCE_IN_PROGRESS as the cause while it is joining)."""
        m = self.membership
        if self._failed() or m.failure is not None:
            return m.failure or KafkaError("the group member failed")
        refusal = self._rebalance_refusal()
        if refusal is not None:
            return refusal
        if self.current_generation() < 0:
            joining = self._joining()
            return CommitFailedError(
                f"commit: this member {self._outside_group} ("
                + ("it is joining the group" if joining else "it has not joined or has left")
                + "); it owns no partitions to commit for",
                RebalanceInProgressError("commit refused while joining") if joining else None,
            )
        return None

    async def wait_stable(self, timeout: float) -> bool:  # noqa: ASYNC109 - a deadline
        """Wait until the member holds its assignment (used by tests and the demo)."""
        with anyio.move_on_after(timeout):
            while not self.stable:
                if self.error is not None:
                    raise self.error
                await self._changed.wait(0.1, self._changed.current())
            return True
        return False

    def generation(self) -> tuple[int, str, str | None]:
        """(generation or member epoch, -1 outside the group; member id; group instance
        id): what an OffsetCommit carries."""
        m = self.membership
        return self.current_generation(), m.member_id, m.group_instance_id

    async def leave_group(
        self,
        timeout: float,  # noqa: ASYNC109 - a deadline
        *,
        reset: bool = False,
        after: Callable[[], None] | None = None,
    ) -> bool:
        """close()/unsubscribe(): revoke (committing, the listener told) and leave, in
        ``run``'s task; errors are logged. ``after`` then runs there too, and with ``reset``
        the member goes back to unjoined (a later subscribe joins afresh). Returns False if
        that did not finish within ``timeout`` seconds (it goes on in the background)."""
        request = LeaveRequest(reset, after)
        self._leave_requests.append(request)
        self._abandon_step()
        self.wake()
        with anyio.move_on_after(timeout):
            await request.done.wait()
            return True
        self._log.warning("group %s: leaving did not finish within %.3f s", self.group_id, timeout)
        return False

    def statistics(self) -> Mapping[str, Any]:
        """The member at a glance: the protocol's fields, then heartbeats and the poll."""
        return {
            "group_id": self.group_id,
            **self._protocol_statistics(),
            "heartbeats": self.heartbeats,
            "heartbeat_failures": self.heartbeat_failures,
            "seconds_since_poll": round(time.monotonic() - self.last_poll, 3),
            "error": repr(self.error) if self.error else None,
        }

    # -- the queue ---------------------------------------------------------------------------

    def _queue(self, actions: Iterable[A]) -> None:
        actions = list(actions)
        if not actions:
            return
        self._before_queue(actions)
        self._pending.extend(actions)
        self._wake.notify()

    def _queue_answer(self, actions: Iterable[A]) -> None:
        """Queue what a heartbeat's answer decided; a coordinator to look up again is
        forgotten at once (the next request looks it up)."""
        actions = list(actions)
        if any(isinstance(a, FindCoordinator) for a in actions):
            self._client.invalidate_coordinator(self.group_id)
        self._queue(a for a in actions if not isinstance(a, FindCoordinator))

    async def _leave_now(self, request: LeaveRequest) -> None:
        try:
            await self._leave_steps()
            if request.after is not None:
                request.after()
            if request.reset:
                self.membership.reset()
        finally:
            request.done.set()
            self._changed.notify()

    # -- the clocks --------------------------------------------------------------------------

    def _poll_expired(self, now: float) -> bool:
        """The application has not polled within max_poll_interval_ms: leave the group
        (queued) until it polls again. True if so."""
        if now - self.last_poll <= self._config.max_poll_interval_ms / 1000:
            return False
        self._log.warning(
            "group %s: no poll for %.1f s (max_poll_interval_ms=%d); leaving the "
            "group until the application polls again",
            self.group_id,
            now - self.last_poll,
            self._config.max_poll_interval_ms,
        )
        self._poll_timeout_at = now
        self._queue(self.membership.on_poll_timeout())
        return True

    def _session_expired(self, now: float) -> bool:
        """No heartbeat was answered within session_timeout_ms: the coordinator has ended
        the session, so the partitions are lost (queued). True if so."""
        if now - self._last_heartbeat_ok <= self._config.session_timeout_ms / 1000:
            return False
        self._log.warning("group %s: %s", self.group_id, self._session_lost)
        self._queue(self.membership.on_session_lost())
        return True

    def _heartbeat_lost(self, exc: KafkaError) -> None:
        """A heartbeat got no answer (connection lost, timed out): look the coordinator
        up again."""
        self.heartbeat_failures += 1
        self._log.debug("group %s: heartbeat failed: %s", self.group_id, exc)
        self._client.invalidate_coordinator(self.group_id)

    # -- the steps ---------------------------------------------------------------------------

    async def _revoke(
        self,
        tps: set[TopicPartition],
        commit_as: tuple[int, str, str | None] | None,
        current_generation: Callable[[], int] | None = None,
    ) -> None:
        """Give up ``tps`` in an orderly way; their consumed offsets are committed first
        (auto commit) as ``commit_as`` (generation, member id, instance id), unless None."""
        if not tps:
            return
        self._log.info("group %s: revoking %s", self.group_id, sorted(tps))
        # First stop handing out records of these partitions (and take back any fetched
        # for the application but not yet returned), so the commit below covers exactly
        # what the application has seen: nothing is lost, nothing is read twice.
        self._subs.mark_revoking(tps)
        if self._on_revoke is not None:
            self._on_revoke(tps)
        if self._config.enable_auto_commit and commit_as is not None:
            generation, member_id, instance = commit_as

            def offsets() -> dict[TopicPartition, Any]:
                # Read when the commit's turn comes (see OffsetClient.commit).
                return {tp: om for tp, om in self._committable().items() if tp in tps}

            try:
                await self._offsets.commit(
                    offsets,
                    generation_id=generation,
                    member_id=member_id,
                    group_instance_id=instance,
                    timeout=self._config.client.request_timeout,
                    current_generation=current_generation,
                )
            except KafkaError as exc:
                # The partitions are given up regardless; records after the last good
                # commit will be re-read by their next owner.
                self._log.warning("group %s: commit on revoke failed: %s", self.group_id, exc)
        await self._call_listener("on_partitions_revoked", tps)
        self._give_up(tps)

    async def _lose(self, tps: set[TopicPartition]) -> None:
        """Partitions another member may own already: stop fetching, commit nothing."""
        if not tps:
            return
        self._log.warning("group %s: lost %s", self.group_id, sorted(tps))
        self._subs.mark_revoking(tps)
        if self._on_revoke is not None:
            self._on_revoke(tps)
        self._give_up(tps)
        await self._call_listener("on_partitions_lost", tps)

    def _give_up(self, tps: set[TopicPartition]) -> None:
        self._subs.remove(tps)
        self._changed.notify()

    async def _assign(self, tps: set[TopicPartition], held_as: str, *, always: bool) -> None:
        """Start fetching ``tps`` and tell the listener (also of an empty set). ``held_as``
        names the generation for the log; ``always`` updates the assignment when ``tps`` is
        empty too."""
        if tps or always:
            self._subs.assign_from_group(tps, add=True)
        self._log.info(
            "group %s %s: assigned %s (now own %d)",
            self.group_id,
            held_as,
            sorted(tps),
            len(self._subs.assignment),
        )
        self._changed.notify()
        await self._call_listener("on_partitions_assigned", tps)
        self._changed.notify()

    async def _call_listener(self, name: str, tps: set[TopicPartition]) -> None:
        if self.listener is None:
            return
        try:
            await call_listener(self.listener, name, tps)
        except Exception as exc:
            # Surfaced to the application by the consumer's next getmany/getone.
            self._log.exception("group %s: rebalance listener %s raised", self.group_id, name)
            self.error = exc
            self._changed.notify()

    def _finish_leave(self, left: Any) -> None:
        """The leave's revocation and its request are done: out of the group. After a poll
        timeout, a poll that came meanwhile rejoins at once."""
        m = self.membership
        m.finish_leave(left)
        if left.poll_timeout and self.last_poll > self._poll_timeout_at:
            m.on_poll()  # the application polled again while the leave ran
            self._heartbeat_now()
        self._changed.notify()

    def _record_failure(self, error: KafkaError) -> None:
        """A fatal error: kept for the consumer to raise on every call."""
        self._log.error("group %s: fatal: %s", self.group_id, error)
        self.error = error
        self._changed.notify()


__all__ = [
    "ConsumerRebalanceListener",
    "GroupMember",
    "LeaveRequest",
    "MembershipMachine",
    "RebalanceListenerProtocol",
    "call_listener",
]
