"""The coordinator loop of the consumer group protocol (KIP-848, ``group_protocol="consumer"``).

It carries out what ``heartbeat_state.HeartbeatMembership`` decides, with the same surface
as the classic ``GroupCoordinator`` (the consumer drives either one the same way). Two tasks
in the consumer's task group:

* ``_heartbeat_loop`` sends ConsumerGroupHeartbeat when one is due (at the interval the
  coordinator gives; at once to join, to acknowledge a reconciliation or to tell a new
  subscription) and feeds each answer to the state machine. It also notices a poll interval
  that expired (the application stopped calling ``getmany``/``getone`` for
  ``max_poll_interval_ms``) and a session the coordinator must have ended (no heartbeat
  answered within ``session_timeout_ms``). It never runs a listener or commits itself: the
  actions it gets go to ``run``'s queue.
* ``run`` executes the actions one at a time: revocations (commit with the member epoch,
  then ``on_partitions_revoked``, then stop fetching), assignments, the lost-partition path,
  the leave heartbeat. Because one task runs them all, a revocation never races an
  assignment, and heartbeats keep flowing while a slow listener runs.

Leaving (``leave_group``, for close() and unsubscribe()) is a request to ``run``: what is left
of a reconciliation that has not reached the application is dropped, what is held is revoked
(committed, the listener told), then the leave heartbeat goes out (epoch -1; -2 for a static
member).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import anyio
import anyio.abc

from ...cluster.client import ClusterClient
from ...errors import (
    BrokerResponseError,
    IncompatibleBrokerVersionError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    RebalanceInProgressError,
)
from ...protocol.apis import CONSUMER_GROUP_HEARTBEAT
from ...protocol.apis.consumer_group_heartbeat import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    TopicPartitions,
)
from ...structs import TopicPartition
from .._io import send
from .._signal import Signal
from ..config import ConsumerConfig
from ..errors import CommitFailedError
from ..offsets import OffsetClient
from ..positions import SubscriptionState
from .coordinator import call_listener
from .heartbeat_state import (
    FENCING_ERRORS,
    Action,
    Assign,
    Fail,
    FindCoordinator,
    HeartbeatMembership,
    HeartbeatRequest,
    HeartbeatResponse,
    Left,
    Lose,
    MemberState,
    Reconciled,
    Rejoin,
    ResolveTopics,
    Revoke,
    SendLeave,
)

log = logging.getLogger(__name__)

#: ConsumerGroupHeartbeat v1 (Kafka 4.0+): member ids made by the member, regex subscriptions.
MIN_HEARTBEAT_VERSION = 1

#: Actions of a reconciliation that has not reached the application yet: a leave or a
#: fence drops them (``Revoke`` and ``Lose`` always run).
_DROPPABLE = (Assign, Reconciled, ResolveTopics)


class _LeaveRequest:
    def __init__(self, reset: bool, after: Callable[[], None] | None) -> None:
        self.reset = reset
        self.after = after
        self.done = anyio.Event()


class HeartbeatCoordinator:
    """Membership of one consumer in a KIP-848 ("consumer" protocol) group."""

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
        self._on_revoke = on_revoke
        self._committable = committable or subscriptions.consumed_offsets
        self.membership = HeartbeatMembership(
            group_instance_id=config.group_instance_id,
            rack_id=config.client_rack,
            server_assignor=config.group_remote_assignor,
            rebalance_timeout_ms=config.rebalance_timeout,
            retry_backoff_ms=config.client.retry_backoff_ms,
        )
        self.listener: object | None = None
        self._pending: deque[Action] = deque()
        self._wake = Signal()
        #: Wakes the heartbeat loop (a heartbeat is due now).
        self._beat = Signal()
        self._leave_requests: deque[_LeaveRequest] = deque()
        self._last_heartbeat_ok = time.monotonic()
        self.last_poll = time.monotonic()
        self._poll_timeout_at = 0.0
        self._names: dict[uuid.UUID, str] = {}
        self._names_generation = -1
        #: A fatal error or a listener's exception, raised by the consumer to the application.
        self.error: BaseException | None = None
        self.heartbeats = 0
        self.heartbeat_failures = 0
        self.reconciliations = 0
        self.losses = 0
        self.last_reconcile_ms = 0.0
        self._reconcile_started = 0.0

    # -- API used by the consumer (as GroupCoordinator's) --------------------------------------

    def wake(self) -> None:
        self._wake.notify()
        self._beat.notify()

    def subscription_changed(self) -> None:
        pattern = self._subs.pattern
        if pattern is not None:
            self.membership.subscribe(regex=pattern.pattern)
        else:
            self.membership.subscribe(sorted(self._subs.topics))
        self.wake()

    def polled(self) -> None:
        """The application asked for records (resets the max_poll_interval_ms clock)."""
        self.last_poll = time.monotonic()
        if self.membership.left_on_poll_timeout:
            self.membership.on_poll()
            self._last_heartbeat_ok = time.monotonic()
            self.wake()

    def on_commit_error(self, code: int, generation_id: int, member_id: str) -> None:
        """A commit made at member epoch ``generation_id`` said the member is fenced: lose
        the partitions and rejoin (unless the member has moved on since)."""
        m = self.membership
        if (m.generation(), m.member_id) != (generation_id, member_id):
            return
        if code in FENCING_ERRORS:
            self._queue(m.on_heartbeat_response(HeartbeatResponse(code), 0.0, {}))

    def commit_refusal(self) -> KafkaError | None:
        """Why a commit cannot be made now (None: it can, at ``generation()``'s epoch): the
        member failed, or holds no epoch (joining, fenced, left). While it reconciles or
        leaves it still commits at the epoch it holds (revocations commit that way)."""
        m = self.membership
        if m.state is MemberState.FAILED:
            return m.failure or KafkaError("the group member failed")
        if m.generation() < 0:
            joining = m.state in (MemberState.JOINING, MemberState.FENCED)
            return CommitFailedError(
                "commit: this member holds no member epoch ("
                + ("it is joining the group" if joining else "it has not joined or has left")
                + "); it owns no partitions to commit for",
                RebalanceInProgressError("commit refused while joining") if joining else None,
            )
        return None

    @property
    def stable(self) -> bool:
        return self.membership.state is MemberState.STABLE

    async def wait_stable(self, timeout: float) -> bool:  # noqa: ASYNC109 - a deadline
        """Wait until the member's assignment is reconciled (tests and the demo)."""
        with anyio.move_on_after(timeout):
            while not self.stable:
                if self.error is not None:
                    raise self.error
                await self._changed.wait(0.1, self._changed.current())
            return True
        return False

    def generation(self) -> tuple[int, str, str | None]:
        """(member epoch or -1 outside the group, member id, group instance id): what an
        OffsetCommit v9+ carries as its generation."""
        m = self.membership
        return m.generation(), m.member_id, m.group_instance_id

    def _queue(self, actions: Iterable[Action]) -> None:
        actions = list(actions)
        if not actions:
            return
        if any(isinstance(a, Lose) for a in actions):
            # Fenced: nothing of an earlier reconciliation is worth doing any more (its
            # partitions are lost), and a revocation's commit would be refused.
            kept = [a for a in self._pending if not isinstance(a, (*_DROPPABLE, Revoke))]
            self._pending.clear()
            self._pending.extend(kept)
        self._pending.extend(actions)
        self._wake.notify()

    def _topic_names(self) -> Mapping[uuid.UUID, str]:
        md = self._client.metadata
        if md.generation != self._names_generation:
            self._names = {t.topic_id: name for name, t in md.topics.items() if t.topic_id}
            self._names_generation = md.generation
        return self._names

    # -- main loop ---------------------------------------------------------------------------

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._heartbeat_loop)
            task_status.started()
            while True:
                event = self._wake.current()
                if self._leave_requests:
                    await self._leave_now(self._leave_requests.popleft())
                    continue
                if self._pending:
                    action = self._pending.popleft()
                    await self._execute(action)
                    continue
                await self._wake.wait(1.0, event)

    async def _execute(self, action: Action) -> None:
        try:
            self._queue(await self._do(action))
        except KafkaError as exc:
            log.warning("group %s: %s failed: %s", self.group_id, action, exc)

    async def _do(self, action: Action) -> list[Action]:
        m = self.membership
        if isinstance(action, FindCoordinator):
            self._client.invalidate_coordinator(self.group_id)
            return []
        if isinstance(action, Revoke):
            held = set(self._subs.assignment) if action.partitions is None else action.partitions
            await self._revoke(set(held))
            return []
        if isinstance(action, Lose):
            await self._lose(set(self._subs.assignment))
            return []
        if isinstance(action, Assign):
            await self._assign(set(action.partitions))
            return []
        if isinstance(action, Reconciled):
            more = m.on_reconciled(action, self._topic_names())
            if m.state is MemberState.STABLE:
                self.last_reconcile_ms = (time.monotonic() - self._reconcile_started) * 1000
            self._changed.notify()
            self._beat.notify()
            return self._note_reconciling(more)
        if isinstance(action, ResolveTopics):
            await anyio.sleep(self._config.client.retry_backoff_ms / 1000)
            try:
                await self._client.refresh_metadata()
            except KafkaError as exc:
                log.info("group %s: metadata for assigned topics: %s", self.group_id, exc)
            return self._note_reconciling(m.maybe_reconcile(self._topic_names()))
        if isinstance(action, Rejoin):
            m.rejoin(action)
            self._last_heartbeat_ok = time.monotonic()
            self._beat.notify()
            return []
        if isinstance(action, SendLeave):
            await self._send_leave(action.member_epoch)
            return []
        if isinstance(action, Left):
            m.finish_leave(action)
            if action.poll_timeout and self.last_poll > self._poll_timeout_at:
                m.on_poll()  # the application polled again while the leave ran
                self._beat.notify()
            self._changed.notify()
            return []
        if isinstance(action, Fail):
            log.error("group %s: fatal: %s", self.group_id, action.error)
            self.error = action.error
            self._changed.notify()
            return []
        raise AssertionError(f"unknown action {action!r}")  # pragma: no cover

    def _note_reconciling(self, actions: list[Action]) -> list[Action]:
        if any(isinstance(a, Reconciled) for a in actions):
            self.reconciliations += 1
            self._reconcile_started = time.monotonic()
        return actions

    # -- steps -------------------------------------------------------------------------------

    async def _revoke(self, tps: set[TopicPartition]) -> None:
        if not tps:
            return
        log.info("group %s: revoking %s", self.group_id, sorted(tps))
        # Stop handing out their records first, so the commit covers exactly what the
        # application has seen (see GroupCoordinator._revoke).
        self._subs.mark_revoking(tps)
        if self._on_revoke is not None:
            self._on_revoke(tps)
        epoch, member_id, instance = self.generation()
        if self._config.enable_auto_commit and epoch > 0:

            def offsets() -> dict[TopicPartition, Any]:
                return {tp: om for tp, om in self._committable().items() if tp in tps}

            try:
                await self._offsets.commit(
                    offsets,
                    generation_id=epoch,
                    member_id=member_id,
                    group_instance_id=instance,
                    timeout=self._config.client.request_timeout,
                    current_generation=self.current_generation,
                )
            except KafkaError as exc:
                log.warning("group %s: commit on revoke failed: %s", self.group_id, exc)
        await self._call_listener("on_partitions_revoked", tps)
        self._subs.remove(tps)
        self._changed.notify()

    def current_generation(self) -> int:
        """The member epoch a commit would carry now (-1 outside the group)."""
        return self.membership.generation()

    async def _lose(self, tps: set[TopicPartition]) -> None:
        self.losses += 1
        if not tps:
            return
        log.warning("group %s: lost %s", self.group_id, sorted(tps))
        self._subs.mark_revoking(tps)
        if self._on_revoke is not None:
            self._on_revoke(tps)
        self._subs.remove(tps)
        self._changed.notify()
        await self._call_listener("on_partitions_lost", tps)

    async def _assign(self, tps: set[TopicPartition]) -> None:
        if tps:
            self._subs.assign_from_group(tps, add=True)
        log.info(
            "group %s epoch %s: assigned %s (now own %d)",
            self.group_id,
            self.membership.member_epoch,
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
            log.exception("group %s: rebalance listener %s raised", self.group_id, name)
            self.error = exc
            self._changed.notify()

    def _body(self, req: HeartbeatRequest) -> ConsumerGroupHeartbeatRequest:
        return ConsumerGroupHeartbeatRequest(
            group_id=self.group_id,
            member_id=req.member_id,
            member_epoch=req.member_epoch,
            instance_id=req.instance_id,
            rack_id=req.rack_id,
            rebalance_timeout_ms=req.rebalance_timeout_ms,
            subscribed_topic_names=None
            if req.subscribed_topic_names is None
            else list(req.subscribed_topic_names),
            subscribed_topic_regex=req.subscribed_topic_regex,
            server_assignor=req.server_assignor,
            topic_partitions=None
            if req.topic_partitions is None
            else [
                TopicPartitions(topic_id=t, partitions=list(ps)) for t, ps in req.topic_partitions
            ],
        )

    async def _send(self, req: HeartbeatRequest) -> ConsumerGroupHeartbeatResponse:
        node = await self._client.coordinator(self.group_id)
        _, resp = await send(
            self._client,
            node,
            CONSUMER_GROUP_HEARTBEAT,
            self._body(req),
            min_version=MIN_HEARTBEAT_VERSION,
            timeout=self._config.client.request_timeout,
        )
        return resp

    async def _send_leave(self, epoch: int) -> None:
        try:
            resp = await self._send(self.membership.leave_request(epoch))
        except KafkaError as exc:
            log.info("group %s: leave heartbeat failed: %s", self.group_id, exc)
            return
        if resp.error_code:
            log.info("group %s: leave heartbeat answered %s", self.group_id, resp.error_code)

    # -- heartbeats --------------------------------------------------------------------------

    async def _heartbeat_loop(self) -> None:
        cfg = self._config
        session = cfg.session_timeout_ms / 1000
        max_poll = cfg.max_poll_interval_ms / 1000
        while True:
            event = self._beat.current()
            m = self.membership
            now = time.monotonic()
            if m.state in (MemberState.STABLE, MemberState.RECONCILING):
                if now - self.last_poll > max_poll:
                    log.warning(
                        "group %s: no poll for %.1f s (max_poll_interval_ms=%d); leaving the "
                        "group until the application polls again",
                        self.group_id,
                        now - self.last_poll,
                        cfg.max_poll_interval_ms,
                    )
                    self._poll_timeout_at = now
                    self._queue(m.on_poll_timeout())
                    continue
                if now - self._last_heartbeat_ok > session:
                    log.warning("group %s: no heartbeat answered within the session", self.group_id)
                    self._queue(m.on_session_lost())
                    continue
            elif m.state is not MemberState.JOINING:
                self._last_heartbeat_ok = now
            if m.heartbeat_due(now):
                await self._heartbeat_once()
                continue
            wait = max(0.0, m.next_heartbeat_at - now) if m.state in _BEATING else 1.0
            await self._beat.wait(min(wait, 1.0), event)

    async def _heartbeat_once(self) -> None:
        m = self.membership
        join_count = m.join_count
        req = m.build_heartbeat(time.monotonic())
        self.heartbeats += 1
        try:
            resp = await self._send(req)
        except IncompatibleBrokerVersionError as exc:
            # The broker lacks the consumer group protocol: nothing will change that.
            err = IncompatibleBrokerVersionError(
                f"group {self.group_id}: the broker does not support the consumer group "
                f"protocol (ConsumerGroupHeartbeat v{MIN_HEARTBEAT_VERSION}+, Apache Kafka "
                f"4.0+); use group_protocol='classic' ({exc})"
            )
            self._queue(m.fail(err))
            return
        except (KafkaConnectionError, KafkaTimeoutError) as exc:
            self.heartbeat_failures += 1
            log.debug("group %s: heartbeat failed: %s", self.group_id, exc)
            self._client.invalidate_coordinator(self.group_id)
            m.on_heartbeat_failed(time.monotonic())
            return
        except BrokerResponseError as exc:
            self.heartbeat_failures += 1
            if exc.retriable or exc.invalid_coordinator:
                log.info("group %s: heartbeat failed: %s", self.group_id, exc)
                m.on_heartbeat_failed(time.monotonic())
                return
            # The coordinator lookup itself was refused (FindCoordinator answered e.g.
            # GROUP_AUTHORIZATION_FAILED): asking again gets the same answer, so the member
            # fails with that error, as a refused heartbeat would make it.
            self._queue(m.fail(exc))
            return
        except KafkaError as exc:
            self.heartbeat_failures += 1
            log.info("group %s: heartbeat failed: %s", self.group_id, exc)
            m.on_heartbeat_failed(time.monotonic())
            return
        if m.join_count != join_count:
            return  # the member left or was fenced while this was in flight
        assignment = None
        if resp.assignment is not None:
            assignment = {
                t.topic_id: frozenset(t.partitions) for t in resp.assignment.topic_partitions
            }
        answer = HeartbeatResponse(
            error_code=resp.error_code,
            member_epoch=resp.member_epoch,
            heartbeat_interval_ms=resp.heartbeat_interval_ms,
            member_id=resp.member_id,
            error_message=resp.error_message,
            assignment=assignment,
        )
        if resp.error_code == 0:
            self._last_heartbeat_ok = time.monotonic()
        else:
            self.heartbeat_failures += 1
            log.info(
                "group %s: heartbeat (epoch %d) answered %s %s",
                self.group_id,
                req.member_epoch,
                resp.error_code,
                resp.error_message or "",
            )
        before = m.state
        actions = m.on_heartbeat_response(answer, time.monotonic(), self._topic_names())
        if before is MemberState.JOINING and m.state is MemberState.STABLE:
            log.info("group %s: joined as %s, epoch %d", self.group_id, m.member_id, m.member_epoch)
            self._changed.notify()
        for a in actions:
            if isinstance(a, FindCoordinator):
                self._client.invalidate_coordinator(self.group_id)
        actions = [a for a in actions if not isinstance(a, FindCoordinator)]
        self._queue(self._note_reconciling(actions))

    # -- closing -----------------------------------------------------------------------------

    async def leave_group(
        self,
        timeout: float,  # noqa: ASYNC109 - a deadline
        *,
        reset: bool = False,
        after: Callable[[], None] | None = None,
    ) -> bool:
        """close()/unsubscribe(): revoke (committing, the listener told) and leave, in
        ``run``'s task; ``after`` then runs there too, and with ``reset`` the member goes
        back to unjoined. False if that did not finish within ``timeout`` seconds."""
        request = _LeaveRequest(reset, after)
        self._leave_requests.append(request)
        self.wake()
        with anyio.move_on_after(timeout):
            await request.done.wait()
            return True
        log.warning("group %s: leaving did not finish within %.3f s", self.group_id, timeout)
        return False

    async def _leave_now(self, request: _LeaveRequest) -> None:
        try:
            # What a reconciliation has not handed to the application yet is dropped; its
            # revocations and a pending loss still run first.
            kept = [a for a in self._pending if not isinstance(a, _DROPPABLE)]
            self._pending.clear()
            for a in kept:
                await self._execute(a)
            for step in self.membership.leave():
                await self._execute(step)
            if request.after is not None:
                request.after()
            if request.reset:
                self.membership.reset()
        finally:
            request.done.set()
            self._changed.notify()

    def statistics(self) -> Mapping[str, Any]:
        m = self.membership
        return {
            "group_id": self.group_id,
            "group_protocol": "consumer",
            "state": m.state.value,
            "member_id": m.member_id,
            "member_epoch": m.member_epoch,
            "group_instance_id": m.group_instance_id,
            "server_assignor": m.server_assignor,
            "subscription": m.regex if m.regex is not None else list(m.topics),
            "owned_partitions": len(m.owned),
            "assigned_partitions": sum(len(ps) for ps in (m.target or {}).values()),
            "join_reason": m.join_reason,
            "reconciliations": self.reconciliations,
            "last_reconcile_ms": round(self.last_reconcile_ms, 1),
            "losses": self.losses,
            "heartbeats": self.heartbeats,
            "heartbeat_failures": self.heartbeat_failures,
            "heartbeat_interval_ms": m.heartbeat_interval_ms,
            "seconds_since_poll": round(time.monotonic() - self.last_poll, 3),
            "error": repr(self.error) if self.error else None,
        }


_BEATING = frozenset({MemberState.JOINING, MemberState.STABLE, MemberState.RECONCILING})

__all__ = ["HeartbeatCoordinator"]
