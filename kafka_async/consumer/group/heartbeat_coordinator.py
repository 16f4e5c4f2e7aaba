"""The coordinator loop of the consumer group protocol (KIP-848, ``group_protocol="consumer"``).

It carries out what ``heartbeat_state.HeartbeatMembership`` decides. It is the KIP-848
driver on ``member.GroupMember`` (which holds what the classic ``GroupCoordinator`` shares:
revoke/lose/assign and the listener, leaving, the commit refusal, the clocks), and the
consumer drives either through ``driver.GroupDriver``. Two tasks in the consumer's task
group:

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
from collections.abc import Mapping
from typing import Any

import anyio
import anyio.abc

from ...cluster.routing import send_request
from ...errors import (
    BrokerResponseError,
    IncompatibleBrokerVersionError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
)
from ...protocol.apis import CONSUMER_GROUP_HEARTBEAT
from ...protocol.apis.consumer_group_heartbeat import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    TopicPartitions,
)
from ...protocol.apis.share_group_heartbeat import ShareGroupHeartbeatResponse
from .._signal import Signal
from ..config import ConsumerConfig
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
from .member import GroupMember

log = logging.getLogger(__name__)

#: ConsumerGroupHeartbeat v1 (Kafka 4.0+): member ids made by the member, regex subscriptions.
MIN_HEARTBEAT_VERSION = 1

#: Actions of a reconciliation that has not reached the application yet: a leave or a
#: fence drops them (``Revoke`` and ``Lose`` always run).
_DROPPABLE = (Assign, Reconciled, ResolveTopics)


class HeartbeatCoordinator(GroupMember[Action, HeartbeatMembership]):
    """Membership of one consumer in a KIP-848 ("consumer" protocol) group: the
    ConsumerGroupHeartbeat driver of ``member.GroupMember``."""

    _log = log
    _outside_group = "holds no member epoch"

    def _start_protocol(self, config: ConsumerConfig) -> HeartbeatMembership:
        #: Wakes the heartbeat loop (a heartbeat is due now).
        self._beat = Signal()
        self._names: dict[uuid.UUID, str] = {}
        self._names_generation = -1
        self.reconciliations = 0
        self.losses = 0
        self.last_reconcile_ms = 0.0
        self._reconcile_started = 0.0
        return HeartbeatMembership(
            group_instance_id=config.group_instance_id,
            rack_id=config.client_rack,
            server_assignor=config.group_remote_assignor,
            rebalance_timeout_ms=config.rebalance_timeout,
            retry_backoff_ms=config.client.retry_backoff_ms,
        )

    # -- the protocol's part of the consumer's API -------------------------------------------

    def wake(self) -> None:
        super().wake()
        self._beat.notify()

    def _heartbeat_now(self) -> None:
        self._beat.notify()

    def subscription_changed(self) -> None:
        pattern = self._subs.pattern
        if pattern is not None:
            self.membership.subscribe(regex=pattern.pattern)
        else:
            self.membership.subscribe(sorted(self._subs.topics))
        self.wake()

    def _rejoin_on_poll(self, now: float) -> bool:
        if super()._rejoin_on_poll(now):
            self._last_heartbeat_ok = now  # a new session starts with the rejoin
            return True
        return False

    def on_commit_error(self, code: int, generation_id: int, member_id: str) -> None:
        """A commit made at member epoch ``generation_id`` said the member is fenced: lose
        the partitions and rejoin (unless the member has moved on since)."""
        m = self.membership
        if (m.generation(), m.member_id) != (generation_id, member_id):
            return
        if code in FENCING_ERRORS:
            self._queue(m.on_heartbeat_response(HeartbeatResponse(code), 0.0, {}))

    # A commit is refused when the member failed, or holds no epoch (joining, fenced, left).
    # While it reconciles or leaves it still commits at the epoch it holds (revocations
    # commit that way).

    def _failed(self) -> bool:
        return self.membership.state is MemberState.FAILED

    def _joining(self) -> bool:
        return self.membership.state in (MemberState.JOINING, MemberState.FENCED)

    @property
    def stable(self) -> bool:
        return self.membership.state is MemberState.STABLE

    def current_generation(self) -> int:
        """The member epoch a commit would carry now (-1 outside the group)."""
        return self.membership.generation()

    def _before_queue(self, actions: list[Action]) -> None:
        if any(isinstance(a, Lose) for a in actions):
            # Fenced: nothing of an earlier reconciliation is worth doing any more (its
            # partitions are lost), and a revocation's commit would be refused.
            kept = [a for a in self._pending if not isinstance(a, (*_DROPPABLE, Revoke))]
            self._pending.clear()
            self._pending.extend(kept)

    def _topic_names(self) -> Mapping[uuid.UUID, str]:
        md = self._client.metadata
        if md.generation != self._names_generation:
            self._names = {t.topic_id: name for name, t in md.topics.items() if t.topic_id}
            self._names_generation = md.generation
        return self._names

    # -- main loop ---------------------------------------------------------------------------

    async def _step(self) -> bool:
        if self._leave_requests:
            await self._leave_now(self._leave_requests.popleft())
            return True
        if self._pending:
            await self._execute(self._pending.popleft())
            return True
        return False

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
            # Committed at the epoch held (none without one), checked again when the
            # commit's turn comes.
            epoch, member_id, instance = self.generation()
            commit_as = (epoch, member_id, instance) if epoch > 0 else None
            await self._revoke(set(held), commit_as, self.current_generation)
            return []
        if isinstance(action, Lose):
            self.losses += 1
            await self._lose(set(self._subs.assignment))
            return []
        if isinstance(action, Assign):
            held_as = f"epoch {self.membership.member_epoch}"
            await self._assign(set(action.partitions), held_as, always=False)
            return []
        if isinstance(action, Reconciled):
            more = m.on_reconciled(action, self._topic_names())
            if m.state is MemberState.STABLE:
                self.last_reconcile_ms = (time.monotonic() - self._reconcile_started) * 1000
            self._changed.notify()
            self._heartbeat_now()
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
            self._heartbeat_now()
            return []
        if isinstance(action, SendLeave):
            await self._send_leave(action.member_epoch)
            return []
        if isinstance(action, Left):
            self._finish_leave(action)
            return []
        if isinstance(action, Fail):
            self._record_failure(action.error)
            return []
        raise AssertionError(f"unknown action {action!r}")  # pragma: no cover

    def _note_reconciling(self, actions: list[Action]) -> list[Action]:
        if any(isinstance(a, Reconciled) for a in actions):
            self.reconciliations += 1
            self._reconcile_started = time.monotonic()
        return actions

    # -- steps -------------------------------------------------------------------------------

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
        _, resp = await send_request(
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
        while True:
            event = self._beat.current()
            m = self.membership
            now = time.monotonic()
            if m.state in (MemberState.STABLE, MemberState.RECONCILING):
                if self._poll_expired(now) or self._session_expired(now):
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
            self._heartbeat_lost(exc)
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
        answer = heartbeat_answer(resp)
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
        self._queue_answer(self._note_reconciling(actions))

    # -- closing -----------------------------------------------------------------------------

    async def _leave_steps(self) -> None:
        # What a reconciliation has not handed to the application yet is dropped; its
        # revocations and a pending loss still run first.
        kept = [a for a in self._pending if not isinstance(a, _DROPPABLE)]
        self._pending.clear()
        for a in kept:
            await self._execute(a)
        for step in self.membership.leave():
            await self._execute(step)

    def _protocol_statistics(self) -> dict[str, Any]:
        m = self.membership
        return {
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
            "heartbeat_interval_ms": m.heartbeat_interval_ms,
        }


def heartbeat_answer(
    resp: ConsumerGroupHeartbeatResponse | ShareGroupHeartbeatResponse,
) -> HeartbeatResponse:
    """A ConsumerGroupHeartbeat or ShareGroupHeartbeat answer as the state machines read
    it (the two carry the same fields; ``assignment`` by topic id)."""
    assignment = None
    if resp.assignment is not None:
        assignment = {t.topic_id: frozenset(t.partitions) for t in resp.assignment.topic_partitions}
    return HeartbeatResponse(
        error_code=resp.error_code,
        member_epoch=resp.member_epoch,
        heartbeat_interval_ms=resp.heartbeat_interval_ms,
        member_id=resp.member_id,
        error_message=resp.error_message,
        assignment=assignment,
    )


_BEATING = frozenset({MemberState.JOINING, MemberState.STABLE, MemberState.RECONCILING})

__all__ = ["HeartbeatCoordinator", "heartbeat_answer"]
