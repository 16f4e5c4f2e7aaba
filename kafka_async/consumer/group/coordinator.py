"""The group coordinator loop: carries out what the membership state machine decides.

This is the classic protocol's driver on ``member.GroupMember``, which holds what every
protocol shares (the action queue and ``run``'s loop, revoke/lose/assign and the listener,
leaving, the commit refusal, the poll and session clocks); here are JoinGroup, SyncGroup,
Heartbeat and LeaveGroup, the leader's assignment, and the steps a leave may abandon.

Two tasks in the consumer's task group:

* ``run`` owns every action: it looks up the coordinator, sends JoinGroup (on the
  ``"group"`` connection, since the broker may hold it for a whole rebalance) and SyncGroup
  (the leader first runs the assignor), commits and revokes partitions, calls the rebalance
  listener, sends LeaveGroup. Because one task executes all actions, a revocation never
  races an assignment.
* ``_heartbeat_loop`` sends a Heartbeat every ``heartbeat_interval_ms`` while the member
  holds a generation: when stable, and also while it revokes before rejoining (a slow
  ``on_partitions_revoked``), while it waits for SyncGroup and while it leaves, as the Java
  client does (only from JoinGroup's sending until its answer there is none). It notices
  a session that expired (no successful heartbeat for
  ``session_timeout_ms``) and a poll interval that expired (the application stopped
  calling ``getmany``/``getone`` for ``max_poll_interval_ms``). It only feeds those events
  to the state machine and queues the resulting actions for ``run``; the one step it
  interrupts is a SyncGroup that a REBALANCE_IN_PROGRESS answer has made moot.

Leaving (``leave_group``, for close() and unsubscribe()) is a request to ``run``, so it never
races a JoinGroup/SyncGroup or a listener call: a pending JoinGroup, SyncGroup, coordinator
lookup or backoff is abandoned at once, a listener call or commit in progress finishes
first. The caller waits for it with a deadline.

The order on a revocation: commit the consumed offsets of the partitions being given up
(when auto commit is on), call ``on_partitions_revoked`` (the application may commit there
itself: the generation is still valid), then stop fetching them. Lost partitions (the
generation ended under us) are not committed: another member may already own them.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Mapping
from typing import Any

import anyio
import anyio.abc

from ...cluster.metadata import ClusterMetadata
from ...cluster.routing import send_request
from ...errors import (
    IncompatibleBrokerVersionError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    RebalanceInProgressError,
)
from ...protocol.apis import DESCRIBE_GROUPS, HEARTBEAT, JOIN_GROUP, LEAVE_GROUP, SYNC_GROUP
from ...protocol.apis.describe_groups import DescribeGroupsRequest
from ...protocol.apis.heartbeat import HeartbeatRequest
from ...protocol.apis.join_group import (
    JoinGroupRequest,
    JoinGroupRequestProtocol,
    JoinGroupResponseMember,
)
from ...protocol.apis.leave_group import LeaveGroupRequest, MemberIdentity
from ...protocol.apis.sync_group import SyncGroupRequest, SyncGroupRequestAssignment
from ...protocol.consumer_protocol import Assignment, Subscription
from ...structs import TopicPartition
from ..config import ConsumerConfig
from ..errors import CommitFailedError
from .assignors import Assignor, MemberInfo, RebalanceProtocol, rebalance_protocol, use_racks
from .member import (
    ConsumerRebalanceListener,
    GroupMember,
    RebalanceListenerProtocol,
    call_listener,
)
from .state import (
    INCONSISTENT_GROUP_PROTOCOL,
    NOT_COORDINATOR,
    REBALANCE_IN_PROGRESS,
    Action,
    Assign,
    Backoff,
    Fail,
    FindCoordinator,
    GroupMembership,
    Left,
    Lose,
    MemberState,
    Revoke,
    SendJoin,
    SendLeave,
    SendSync,
    inconsistent_protocol_error,
)

log = logging.getLogger(__name__)

PROTOCOL_TYPE = "consumer"


#: Steps a leave may abandon: nothing is decided or handed to the application during them.
_ABANDONABLE = (SendJoin, SendSync, FindCoordinator, Backoff)


_HEARTBEAT_STATES = frozenset({MemberState.REVOKING, MemberState.SYNCING, MemberState.LEAVING})


def _owner(cls: type, name: str) -> type | None:
    """The class in ``cls``'s MRO that defines ``name``."""
    return next((c for c in cls.__mro__ if name in vars(c)), None)


def _rack_aware(assignor: Assignor) -> bool:
    """Whether ``assignor``'s ``assign_with_racks`` is the assignment it means: false for a
    subclass that overrides ``assign`` below the class that made it rack-aware (its own
    ``assign`` must run, as before KIP-881), and for the base default (racks ignored)."""
    cls = type(assignor)
    racks_owner = _owner(cls, "assign_with_racks")
    assign_owner = _owner(cls, "assign")
    if racks_owner is None or racks_owner is Assignor or assign_owner is None:
        return False
    return issubclass(racks_owner, assign_owner)


def partition_racks(
    md: ClusterMetadata, counts: Mapping[str, int]
) -> dict[TopicPartition, frozenset[str]]:
    """The racks of each partition's replicas, from the brokers' ``broker.rack`` in the
    metadata (empty sets where no replica's broker has a rack): the rack-aware assignors'
    view of where a member can fetch locally (KIP-881)."""
    racks = {b.node_id: b.rack for b in md.brokers.values() if b.rack}
    out: dict[TopicPartition, frozenset[str]] = {}
    for topic in counts:
        t = md.topics.get(topic)
        if t is None:
            continue
        for p in t.partitions.values():
            out[TopicPartition(topic, p.partition)] = frozenset(
                r for n in p.replicas if (r := racks.get(n)) is not None
            )
    return out


class GroupCoordinator(GroupMember[Action, GroupMembership]):
    """Membership of one consumer in its group (classic protocol): the JoinGroup/SyncGroup
    driver of ``member.GroupMember``."""

    _log = log
    _session_lost = "session expired without a heartbeat"

    def _start_protocol(self, config: ConsumerConfig) -> GroupMembership:
        self.assignors: tuple[Assignor, ...] = config.partition_assignment_strategy
        self._join_members: list[JoinGroupResponseMember] = []
        #: Partition counts of the subscribed topics when this member last assigned (leader).
        self._assigned_snapshot: dict[str, int] = {}
        self.rebalances = 0
        self.last_rebalance_ms = 0.0
        #: How long the coordinator took to answer the last JoinGroup (a broker holds it
        #: until the members have rejoined, or for its own rebalance delay).
        self.last_join_ms = 0.0
        #: The scope of the abandonable step ``run`` is in (see ``_ABANDONABLE``).
        self._step_scope: anyio.CancelScope | None = None
        #: A heartbeat found the pending SyncGroup moot (see ``_drop_group_connection``).
        self._sync_moot = False
        self._sync_node: int | None = None
        #: A member refused by the group's ACL tries again on a poll from then on.
        self._retry_failed_at = 0.0
        return GroupMembership(
            protocol=rebalance_protocol(self.assignors),
            group_instance_id=config.group_instance_id,
            retry_backoff_ms=config.client.retry_backoff_ms,
        )

    # -- the protocol's part of the consumer's API -------------------------------------------

    def subscription_changed(self) -> None:
        self.membership.on_subscription_change()
        self.wake()

    def _rejoin_on_poll(self, now: float) -> bool:
        """A member that left on poll timeout rejoins; one refused by the group's ACL tries
        again, at most once per ``retry_backoff_ms`` (see ``GroupMembership.on_poll``)."""
        m = self.membership
        if m.left_on_poll_timeout or (m.retry_on_poll and now >= self._retry_failed_at):
            m.on_poll()
            return True
        return False

    def on_commit_error(self, code: int, generation_id: int, member_id: str) -> None:
        """A commit made in ``generation_id`` came back with a generation error: treat it
        like a heartbeat's, unless the member has moved on since (the answer is about a
        generation it no longer holds, as for a late heartbeat)."""
        m = self.membership
        if (m.generation_id, m.member_id) != (generation_id, member_id):
            return
        self._queue(m.on_heartbeat_response(code))

    def _rebalance_refusal(self) -> KafkaError | None:
        """Rejoining (JoinGroup sent or about to be) or syncing (JoinGroup answered,
        SyncGroup not yet) refuses a commit: ``CommitFailedError`` caused by
        ``RebalanceInProgressError`` (Java: ``RebalanceInProgressException``). A commit
        sent now could reach the broker after the JoinGroup ended the generation, and while
        syncing the broker answers REBALANCE_IN_PROGRESS; the pending SyncGroup stays valid
        either way. (Without a generation, ``commit_refusal`` says so, with
        REBALANCE_IN_PROGRESS as the cause while joining.)

        Revoking before a rejoin (the listener's ``on_partitions_revoked``) and leaving
        still commit in the generation held: Kafka accepts those until the rebalance
        completes, and the JoinGroup waits for them (``OffsetClient.commits_settled``)."""
        m = self.membership
        if m.state in (MemberState.JOINING, MemberState.SYNCING) and m.generation_id >= 0:
            return CommitFailedError(
                "commit: the group is rebalancing and this member is "
                + ("rejoining" if m.state is MemberState.JOINING else "waiting for SyncGroup")
                + "; commit again once the new assignment is in place",
                RebalanceInProgressError("commit refused during a rebalance"),
            )
        return None

    def _failed(self) -> bool:
        return self.membership.state is MemberState.FAILED

    def _joining(self) -> bool:
        return self.membership.state is MemberState.JOINING

    @property
    def stable(self) -> bool:
        return self.membership.state is MemberState.STABLE and not self.membership.rejoin_needed

    def current_generation(self) -> int:
        """The generation a commit would carry now (see ``OffsetClient.commit``)."""
        return self.membership.generation_id

    # -- main loop ---------------------------------------------------------------------------

    async def _step(self) -> bool:
        if self._pending:
            # With a leave waiting, what remains of a rebalance is dropped here;
            # revocations (a poll timeout's, say) still run before the leave.
            await self._execute(self._pending)
            return True
        if self._leave_requests:
            await self._leave_now(self._leave_requests.popleft())
            return True
        m = self.membership
        if m.state is MemberState.FAILED:
            return False  # until woken (see _idle_wait)
        if self._subs.is_group_managed:
            self._check_metadata()
            if m.rejoin_needed and m.state is not MemberState.LEFT:
                await self._rebalance()
                return True
        return False

    def _idle_wait(self) -> float | None:
        return None if self.membership.state is MemberState.FAILED else 1.0

    def _check_metadata(self) -> None:
        """Pattern subscriptions follow new topics; a leader notices partition counts grow."""
        md = self._client.metadata
        if self._subs.pattern is not None and self._subs.match_pattern(md.topics):
            self._client.add_topics(self._subs.topics)
            self.membership.on_subscription_change()
        if self.membership.is_leader and self._assigned_snapshot and self.stable:
            for topic, count in self._assigned_snapshot.items():
                parts = md.partitions_for(topic)
                if parts is not None and len(parts) != count:
                    self.membership.request_rejoin(f"partition count of {topic} changed")
                    break

    async def _rebalance(self) -> None:
        started = time.monotonic()
        self.rebalances += 1
        self._queue(self.membership.begin_join())
        await self._execute(self._pending)
        self.last_rebalance_ms = (time.monotonic() - started) * 1000
        self._changed.notify()

    async def _execute(self, queue: deque[Action]) -> None:
        m = self.membership
        while queue:
            if self._leave_requests:
                self._abandon_rebalance(queue)
                if not queue:
                    break
            action = queue.popleft()
            try:
                if isinstance(action, _ABANDONABLE):
                    with anyio.CancelScope() as scope:
                        self._step_scope = scope
                        try:
                            more = await self._do(action)
                        finally:
                            self._step_scope = None
                    if scope.cancelled_caught:
                        # A leave, or a heartbeat telling that the generation being
                        # synced is over, stopped it.
                        log.info("group %s: %s abandoned", self.group_id, action)
                        more = []
                        if isinstance(action, SendSync) and self._sync_moot:
                            await self._drop_group_connection()
                else:
                    more = await self._do(action)
            except (KafkaConnectionError, KafkaTimeoutError) as exc:
                # The coordinator went away mid-step: the state machine treats it like
                # NOT_COORDINATOR (look it up again, then redo the join).
                log.info("group %s: %s failed (%s)", self.group_id, action, exc)
                self._client.invalidate_coordinator(self.group_id)
                await anyio.sleep(self._config.client.retry_backoff_ms / 1000)
                if isinstance(action, SendJoin):
                    more = m.on_join_response(NOT_COORDINATOR)
                elif isinstance(action, SendSync):
                    more = m.on_sync_response(NOT_COORDINATOR)
                elif isinstance(action, FindCoordinator) and m.state in (
                    MemberState.JOINING,
                    MemberState.SYNCING,
                ):
                    more = [FindCoordinator()]
                else:
                    more = []
            except KafkaError as exc:
                # Not retriable (the coordinator lookup refused by an ACL, unsupported
                # versions, a protocol we lack): the member fails, and every call raises it.
                log.error("group %s: %s failed: %s", self.group_id, action, exc)
                more = m.fail(exc)
            queue.extendleft(reversed(more))

    async def _do(self, action: Action) -> list[Action]:
        if isinstance(action, FindCoordinator):
            self._client.invalidate_coordinator(self.group_id)
            await self._client.coordinator(self.group_id)
            return []
        if isinstance(action, SendJoin):
            failure = self.membership.failure
            more = await self._join()
            if failure is not None and self.membership.failure is None and self.error is failure:
                # Tried again after GROUP_AUTHORIZATION_FAILED and let in: no longer raised.
                self.error = None
                self._changed.notify()
            return more
        if isinstance(action, SendSync):
            return await self._sync(action.is_leader)
        if isinstance(action, Revoke):
            commit_as = (action.generation_id, action.member_id, self.membership.group_instance_id)
            await self._revoke(set(action.partitions), commit_as)
            return []
        if isinstance(action, Lose):
            await self._lose(set(action.partitions))
            return []
        if isinstance(action, Assign):
            self._last_heartbeat_ok = time.monotonic()
            held_as = f"generation {self.membership.generation_id}"
            await self._assign(set(action.partitions), held_as, always=True)
            return []
        if isinstance(action, SendLeave):
            await self._leave(action.member_id, action.group_instance_id)
            return []
        if isinstance(action, Left):
            self._finish_leave(action)
            return []
        if isinstance(action, Backoff):
            await anyio.sleep(action.ms / 1000)
            return []
        if isinstance(action, Fail):
            self._retry_failed_at = time.monotonic() + self._config.client.retry_backoff_ms / 1000
            self._record_failure(action.error)
            return []
        raise AssertionError(f"unknown action {action!r}")  # pragma: no cover

    # -- steps -------------------------------------------------------------------------------

    def _subscription_metadata(self, assignor: Assignor) -> bytes:
        m = self.membership
        owned = sorted(m.owned)
        return Subscription(
            topics=tuple(sorted(self._subs.topics)),
            user_data=assignor.subscription_user_data(owned, m.generation_id),
            owned_partitions=tuple(owned),
            generation_id=m.generation_id,
            # KIP-881: the leader's assignor prefers partitions with a replica in this rack.
            rack_id=self._config.client_rack,
        ).encode()

    async def _join(self) -> list[Action]:
        m = self.membership
        m.on_join_sent()
        cfg = self._config
        if m.generation_id >= 0:
            # Commits the application made in this generation (sent on another connection)
            # are answered before the JoinGroup that may end it; new ones are refused from
            # now on (``commit_refusal``). The Java client gets this from committing and
            # rejoining on one thread.
            await self._offsets.commits_settled(cfg.client.request_timeout)
        node = await self._client.coordinator(self.group_id)
        protocols = [
            JoinGroupRequestProtocol(name=a.name, metadata=self._subscription_metadata(a))
            for a in self.assignors
        ]

        def body(version: int) -> JoinGroupRequest:
            return JoinGroupRequest(
                group_id=self.group_id,
                session_timeout_ms=cfg.session_timeout_ms,
                rebalance_timeout_ms=cfg.rebalance_timeout,
                member_id=m.member_id,
                # v5 added static membership; older versions cannot carry the id.
                group_instance_id=m.group_instance_id if version >= 5 else None,
                protocol_type=PROTOCOL_TYPE,
                protocols=protocols,
                reason=m.rejoin_reason,
            )

        timeout = cfg.rebalance_timeout / 1000 + 5 + cfg.client.request_timeout
        sent_at = time.monotonic()
        _, resp = await send_request(
            self._client, node, JOIN_GROUP, body, purpose="group", timeout=timeout
        )
        self.last_join_ms = (time.monotonic() - sent_at) * 1000
        self._join_members = list(resp.members)
        log.debug(
            "group %s: JoinGroup -> error %s generation %s member %s leader %s (%d members)",
            self.group_id,
            resp.error_code,
            resp.generation_id,
            resp.member_id,
            resp.leader,
            len(self._join_members),
        )
        if resp.error_code == INCONSISTENT_GROUP_PROTOCOL and m.state is MemberState.JOINING:
            # Say what we offered and what the group uses: the bare code leaves a user in
            # the middle of a rolling migration guessing (issue 22).
            protocol_type, assignor = await self._group_protocol(node)
            return m.fail(
                inconsistent_protocol_error(
                    self.group_id, [a.name for a in self.assignors], protocol_type, assignor
                )
            )
        return m.on_join_response(
            resp.error_code,
            member_id=resp.member_id,
            generation_id=resp.generation_id,
            protocol_name=resp.protocol_name,
            leader_id=resp.leader,
        )

    async def _group_protocol(self, node: int) -> tuple[str, str]:
        """The group's protocol type and chosen assignor from DescribeGroups ("" where not
        known): best effort, for an error message, so bounded and never raising."""
        with anyio.move_on_after(min(5.0, self._config.client.request_timeout)):
            try:
                _, resp = await send_request(
                    self._client,
                    node,
                    DESCRIBE_GROUPS,
                    DescribeGroupsRequest(groups=[self.group_id]),
                    purpose="group",
                )
            except KafkaError as exc:
                log.debug("group %s: DescribeGroups for the error message: %s", self.group_id, exc)
                return "", ""
            for group in resp.groups:
                if group.group_id == self.group_id and group.error_code == 0:
                    return group.protocol_type, group.protocol_data
        return "", ""

    async def _sync(self, is_leader: bool) -> list[Action]:
        m = self.membership
        assignments: list[SyncGroupRequestAssignment] = []
        if is_leader:
            assignments = await self._assign_as_leader()
        node = await self._client.coordinator(self.group_id)

        def body(version: int) -> SyncGroupRequest:
            return SyncGroupRequest(
                group_id=self.group_id,
                generation_id=m.generation_id,
                member_id=m.member_id,
                # v3 added static membership; older versions cannot carry the id.
                group_instance_id=m.group_instance_id if version >= 3 else None,
                protocol_type=PROTOCOL_TYPE,
                protocol_name=m.protocol_name,
                assignments=assignments,
            )

        cfg = self._config
        timeout = cfg.rebalance_timeout / 1000 + 5 + cfg.client.request_timeout
        sent_at = time.monotonic()
        self._sync_node, self._sync_moot = node, False
        _, resp = await send_request(
            self._client, node, SYNC_GROUP, body, purpose="group", timeout=timeout
        )
        log.debug(
            "group %s: SyncGroup (generation %s) -> error %s after %.0f ms",
            self.group_id,
            m.generation_id,
            resp.error_code,
            (time.monotonic() - sent_at) * 1000,
        )
        assigned: tuple[TopicPartition, ...] = ()
        if resp.error_code == 0:
            assignment = Assignment.decode(resp.assignment)
            # Ignore partitions of topics we do not subscribe to (a leader with a stale view).
            assigned = tuple(tp for tp in assignment.partitions if tp.topic in self._subs.topics)
        return m.on_sync_response(resp.error_code, assigned)

    async def _drop_group_connection(self) -> None:
        """Close the "group" connection after abandoning a SyncGroup the broker still holds.

        A broker answers a connection's requests in order, so the rejoin's JoinGroup would
        otherwise wait behind the held SyncGroup (on Tansu until the session timeout) and
        miss the join phase it is meant for; the next request opens a fresh connection."""
        self._sync_moot = False
        node = self._sync_node
        conn = None if node is None else self._client.pool.connection(node, "group")
        if conn is not None:
            log.debug("group %s: closing the group connection (SyncGroup abandoned)", self.group_id)
            await conn.close()

    async def _assign_as_leader(self) -> list[SyncGroupRequestAssignment]:
        m = self.membership
        assignor = next((a for a in self.assignors if a.name == m.protocol_name), None)
        if assignor is None:
            raise KafkaError(f"the group chose protocol {m.protocol_name!r}, which we lack")
        members: list[MemberInfo] = []
        for raw in self._join_members:
            sub = Subscription.decode(raw.metadata)
            members.append(MemberInfo(raw.member_id, sub, raw.group_instance_id))
        topics = sorted({t for mi in members for t in mi.subscription.topics})
        self._client.add_topics(topics)
        md = self._client.metadata
        if any(md.partitions_for(t) is None for t in topics):
            try:
                md = await self._client.refresh_metadata(topics)
            except KafkaError as exc:
                log.warning(
                    "group %s: metadata refresh for assignment failed: %s", self.group_id, exc
                )
        counts: dict[str, int] = {}
        for t in topics:
            parts = md.partitions_for(t)
            if parts:
                counts[t] = len(parts)
        # A subscribed topic that does not exist (yet) counts as 0 partitions: once it is
        # created its count differs, and _check_metadata makes the leader rejoin to assign it.
        self._assigned_snapshot = {t: counts.get(t, 0) for t in topics}
        racks = partition_racks(md, counts)
        if use_racks(members, racks) and _rack_aware(assignor):
            result = assignor.assign_with_racks(counts, members, racks)
        else:
            result = assignor.assign(counts, members)
        versions = {mi.member_id: min(mi.subscription.version, 3) for mi in members}
        log.info(
            "group %s generation %s: leader assigned %s",
            self.group_id,
            m.generation_id,
            {mid: len(a.partitions) for mid, a in result.items()},
        )
        return [
            SyncGroupRequestAssignment(member_id=mid, assignment=a.encode(versions.get(mid, 3)))
            for mid, a in result.items()
        ]

    async def _leave(self, member_id: str, group_instance_id: str | None) -> None:
        if not member_id:
            return
        node = await self._client.coordinator(self.group_id)

        def body(version: int) -> LeaveGroupRequest:
            if version >= 3:
                return LeaveGroupRequest(
                    group_id=self.group_id,
                    members=[
                        MemberIdentity(
                            member_id=member_id,
                            group_instance_id=group_instance_id,
                            reason="the consumer is closing or stopped polling",
                        )
                    ],
                )
            return LeaveGroupRequest(group_id=self.group_id, member_id=member_id)

        _, resp = await send_request(self._client, node, LEAVE_GROUP, body)
        if resp.error_code:
            log.info("group %s: LeaveGroup answered %s", self.group_id, resp.error_code)

    # -- heartbeats --------------------------------------------------------------------------

    async def _heartbeat_loop(self) -> None:
        interval = self._config.heartbeat_interval_ms / 1000
        while True:
            m = self.membership
            now = time.monotonic()
            if m.state is MemberState.STABLE and m.generation_id >= 0:
                if not self._poll_expired(now) and not self._session_expired(now):
                    await self._heartbeat_once()
            elif m.state in _HEARTBEAT_STATES and m.generation_id >= 0 and m.member_id:
                # Revoking (a listener may take longer than the session), syncing or leaving:
                # the generation is still ours, so keep the session alive. Session and poll
                # timeouts are judged only when stable.
                await self._heartbeat_once()
            else:
                self._last_heartbeat_ok = now
            await anyio.sleep(interval)

    async def _heartbeat_once(self) -> None:
        m = self.membership
        generation, member_id = m.generation_id, m.member_id

        def body(version: int) -> HeartbeatRequest:
            return HeartbeatRequest(
                group_id=self.group_id,
                generation_id=generation,
                member_id=member_id,
                # v3 added static membership; older versions cannot carry the id.
                group_instance_id=m.group_instance_id if version >= 3 else None,
            )

        self.heartbeats += 1
        try:
            node = await self._client.coordinator(self.group_id)
            _, resp = await send_request(
                self._client,
                node,
                HEARTBEAT,
                body,
                timeout=self._config.client.request_timeout,
            )
        except (KafkaConnectionError, KafkaTimeoutError, IncompatibleBrokerVersionError) as exc:
            self._heartbeat_lost(exc)
            return
        if (m.generation_id, m.member_id) != (generation, member_id):
            return  # the generation changed while the heartbeat was in flight
        if resp.error_code == 0:
            self._last_heartbeat_ok = time.monotonic()
            return
        self.heartbeat_failures += 1
        if resp.error_code == REBALANCE_IN_PROGRESS:
            # A rebalance is under way: keep the session alive while we rejoin.
            self._last_heartbeat_ok = time.monotonic()
        log.info("group %s: heartbeat answered %s", self.group_id, resp.error_code)
        syncing = m.state is MemberState.SYNCING
        actions = m.on_heartbeat_response(resp.error_code)
        if syncing and m.state is not MemberState.SYNCING:
            # The SyncGroup still pending is moot (see on_heartbeat_response): stop waiting
            # for it, so ``run`` rejoins now, within the new rebalance's join phase.
            scope = self._step_scope
            if scope is not None:
                self._sync_moot = True
                scope.cancel()
        self._queue_answer(actions)
        self.wake()

    # -- closing -----------------------------------------------------------------------------

    def _abandon_step(self) -> None:
        # A pending JoinGroup, SyncGroup, coordinator lookup or backoff is abandoned at once.
        scope = self._step_scope
        if scope is not None:
            scope.cancel()

    def _abandon_rebalance(self, queue: deque[Action]) -> None:
        """A leave is waiting: drop the rest of a rebalance. Partitions assigned but not yet
        handed to the application are simply forgotten; revocations still run."""
        m = self.membership
        keep: deque[Action] = deque()
        for a in queue:
            if isinstance(a, Assign):
                m.owned = m.owned - a.partitions
            elif not isinstance(a, _ABANDONABLE):
                keep.append(a)
        queue.clear()
        queue.extend(keep)

    async def _leave_steps(self) -> None:
        actions = deque(self.membership.leave())
        while actions:
            a = actions.popleft()
            try:
                await self._do(a)
            except KafkaError as exc:
                log.info("group %s: %s during leave failed: %s", self.group_id, a, exc)

    def _protocol_statistics(self) -> dict[str, Any]:
        m = self.membership
        return {
            "state": m.state.value,
            "member_id": m.member_id,
            "generation_id": m.generation_id,
            "group_instance_id": m.group_instance_id,
            "protocol": m.protocol_name,
            "rebalance_protocol": m.protocol.value,
            "is_leader": m.is_leader,
            "rejoin_needed": m.rejoin_needed,
            "rejoin_reason": m.rejoin_reason,
            "owned_partitions": len(m.owned),
            "rebalances": self.rebalances,
            "last_rebalance_ms": round(self.last_rebalance_ms, 1),
            "last_join_ms": round(self.last_join_ms, 1),
        }


__all__ = [
    "ConsumerRebalanceListener",
    "GroupCoordinator",
    "RebalanceListenerProtocol",
    "RebalanceProtocol",
    "call_listener",
]
