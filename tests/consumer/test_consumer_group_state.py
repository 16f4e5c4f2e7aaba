"""Every transition of the group membership state machine."""

from __future__ import annotations

import pytest

from kafka_async import errors as E
from kafka_async.consumer.group import state as s
from kafka_async.consumer.group.assignors import RebalanceProtocol
from kafka_async.consumer.group.state import (
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
)
from kafka_async.structs import TopicPartition as TP

A, B, C = TP("t", 0), TP("t", 1), TP("t", 2)


# The readers below go through a call so that mypy does not keep an asserted state or flag
# narrowed across the transitions that change it (it would then flag the next assertion as
# unreachable).


def state_of(m: GroupMembership) -> MemberState:
    return m.state


def rejoin_needed(m: GroupMembership) -> bool:
    return m.rejoin_needed


def failure_of(m: GroupMembership) -> E.KafkaError | None:
    return m.failure


def joined(
    owned: frozenset[TP] = frozenset({A, B}),
    protocol: RebalanceProtocol = RebalanceProtocol.EAGER,
    instance: str | None = None,
) -> GroupMembership:
    m = GroupMembership(protocol=protocol, group_instance_id=instance)
    m.begin_join()
    m.on_join_sent()
    m.on_join_response(0, member_id="me", generation_id=3, protocol_name="range", leader_id="me")
    m.on_sync_response(0, sorted(owned))
    assert state_of(m) is MemberState.STABLE
    return m


def test_initial_join_flow() -> None:
    m = GroupMembership()
    assert state_of(m) is MemberState.UNJOINED
    assert rejoin_needed(m)
    assert m.begin_join() == [SendJoin()]
    assert state_of(m) is MemberState.JOINING
    assert not rejoin_needed(m)
    acts = m.on_join_response(
        0, member_id="me", generation_id=1, protocol_name="range", leader_id="other"
    )
    assert acts == [SendSync(is_leader=False)]
    assert state_of(m) is MemberState.SYNCING
    assert (m.member_id, m.generation_id, m.protocol_name) == ("me", 1, "range")
    assert m.on_sync_response(0, [A]) == [Assign(frozenset({A}))]
    assert state_of(m) is MemberState.STABLE
    assert m.owned == {A}
    assert m.in_group


def test_leader_flag() -> None:
    m = GroupMembership()
    m.begin_join()
    assert m.on_join_response(0, member_id="me", generation_id=1, leader_id="me") == [
        SendSync(is_leader=True)
    ]


def test_empty_assignment_still_reported() -> None:
    m = GroupMembership()
    m.begin_join()
    m.on_join_response(0, member_id="me", generation_id=1, leader_id="x")
    assert m.on_sync_response(0, []) == [Assign(frozenset())]


def test_member_id_required_retries_with_id() -> None:
    m = GroupMembership()
    m.begin_join()
    assert m.on_join_response(s.MEMBER_ID_REQUIRED, member_id="given") == [SendJoin()]
    assert m.member_id == "given"
    assert state_of(m) is MemberState.JOINING


def test_join_unknown_member_resets_id() -> None:
    m = GroupMembership(member_id="old")
    m.begin_join()
    assert m.on_join_response(s.UNKNOWN_MEMBER_ID) == [SendJoin()]
    assert m.member_id == ""


def test_join_illegal_generation_resets_generation() -> None:
    m = GroupMembership(member_id="x", generation_id=4)
    m.begin_join()
    assert m.on_join_response(s.ILLEGAL_GENERATION) == [SendJoin()]
    assert m.generation_id == -1
    assert m.member_id == "x"


@pytest.mark.parametrize("code", [s.NOT_COORDINATOR, s.COORDINATOR_NOT_AVAILABLE])
def test_join_coordinator_moved(code: int) -> None:
    m = GroupMembership()
    m.begin_join()
    assert m.on_join_response(code) == [FindCoordinator(), SendJoin()]
    assert state_of(m) is MemberState.JOINING


@pytest.mark.parametrize("code", [s.COORDINATOR_LOAD_IN_PROGRESS, s.REBALANCE_IN_PROGRESS])
def test_join_retriable(code: int) -> None:
    m = GroupMembership(retry_backoff_ms=42)
    m.begin_join()
    assert m.on_join_response(code) == [Backoff(42), SendJoin()]


@pytest.mark.parametrize(
    "code",
    [
        s.FENCED_INSTANCE_ID,
        s.INCONSISTENT_GROUP_PROTOCOL,
        s.INVALID_SESSION_TIMEOUT,
        s.GROUP_AUTHORIZATION_FAILED,
        s.GROUP_MAX_SIZE_REACHED,
        s.INVALID_GROUP_ID,
    ],
)
def test_join_fatal(code: int) -> None:
    m = GroupMembership()
    m.begin_join()
    acts = m.on_join_response(code)
    assert len(acts) == 1
    assert isinstance(acts[0], Fail)
    assert state_of(m) is MemberState.FAILED
    assert m.failure is acts[0].error
    assert s.error_name(code) in str(m.failure) or str(code) in str(m.failure)
    # A failed member stays failed: another join attempt reports the same error.
    assert m.begin_join() == [Fail(m.failure)]


@pytest.mark.parametrize(
    "code",
    [s.FENCED_INSTANCE_ID, s.INCONSISTENT_GROUP_PROTOCOL, s.GROUP_MAX_SIZE_REACHED],
)
def test_failed_member_stays_failed_across_polls(code: int) -> None:
    m = GroupMembership()
    m.begin_join()
    m.on_join_response(code)
    failure = m.failure
    m.on_poll()
    assert state_of(m) is MemberState.FAILED
    assert not m.retry_on_poll
    assert not rejoin_needed(m)
    assert m.failure is failure


def test_group_authorization_failure_is_tried_again_on_poll() -> None:
    """The Java client looks the coordinator up and joins again on every poll; an ACL
    granted meanwhile lets the member in. The failure stays (and is raised) until then."""
    m = GroupMembership()
    m.begin_join()
    refused = E.GroupAuthorizationFailedError("FindCoordinator refused")
    assert m.fail(refused) == [Fail(refused)]
    assert state_of(m) is MemberState.FAILED
    assert m.retry_on_poll
    m.on_poll()
    assert state_of(m) is MemberState.UNJOINED
    assert rejoin_needed(m)
    assert failure_of(m) is refused
    assert m.begin_join() == [SendJoin()]
    # Refused again (by the JoinGroup this time): failed again, and again tried on a poll.
    acts = m.on_join_response(s.GROUP_AUTHORIZATION_FAILED)
    assert isinstance(acts[-1], Fail)
    assert m.retry_on_poll
    m.on_poll()
    m.begin_join()
    # Let in: no failure any more.
    assert m.on_join_response(0, member_id="me", generation_id=1, leader_id="me") == [
        SendSync(True)
    ]
    assert failure_of(m) is None
    assert not m.retry_on_poll


def test_group_authorization_failure_in_a_generation_loses_the_partitions() -> None:
    m = joined()
    acts = m.on_heartbeat_response(s.GROUP_AUTHORIZATION_FAILED)
    assert acts[0] == Lose(frozenset({A, B}))
    assert isinstance(acts[1], Fail)
    assert m.retry_on_poll
    m.on_poll()
    assert m.begin_join() == [SendJoin()]  # nothing left to revoke


def test_late_join_response_ignored() -> None:
    m = joined()
    assert m.on_join_response(0, member_id="x", generation_id=9) == []
    assert m.generation_id == 3


def test_eager_rejoin_revokes_everything_first() -> None:
    m = joined()
    m.on_heartbeat_response(s.REBALANCE_IN_PROGRESS)
    assert rejoin_needed(m)
    assert state_of(m) is MemberState.STABLE
    assert m.owned == {A, B}
    assert m.begin_join() == [Revoke(frozenset({A, B})), SendJoin()]
    assert state_of(m) is MemberState.REVOKING
    assert m.owned == frozenset()
    m.on_join_sent()
    assert state_of(m) is MemberState.JOINING


def test_cooperative_keeps_partitions_through_rebalance() -> None:
    m = joined(protocol=RebalanceProtocol.COOPERATIVE)
    m.request_rejoin("test")
    assert m.begin_join() == [SendJoin()]
    assert m.owned == {A, B}
    m.on_join_response(0, member_id="me", generation_id=4, leader_id="me")
    # The new assignment drops B (moving to another member) and adds nothing.
    acts = m.on_sync_response(0, [A])
    assert acts == [Revoke(frozenset({B}))]
    assert m.owned == {A}
    assert m.rejoin_needed, "a cooperative member that revoked must rejoin"
    # Second phase: nothing more is revoked.
    m.begin_join()
    m.on_join_response(0, member_id="me", generation_id=5, leader_id="me")
    assert m.on_sync_response(0, [A]) == [Assign(frozenset())]
    assert not rejoin_needed(m)


def test_cooperative_gain_only() -> None:
    m = joined(owned=frozenset({A}), protocol=RebalanceProtocol.COOPERATIVE)
    m.request_rejoin("test")
    m.begin_join()
    m.on_join_response(0, member_id="me", generation_id=4, leader_id="x")
    assert m.on_sync_response(0, [A, C]) == [Assign(frozenset({C}))]
    assert not rejoin_needed(m)


def test_sync_rebalance_in_progress_rejoins() -> None:
    m = GroupMembership()
    m.begin_join()
    m.on_join_response(0, member_id="me", generation_id=1, leader_id="x")
    assert m.on_sync_response(s.REBALANCE_IN_PROGRESS) == [SendJoin()]
    assert state_of(m) is MemberState.JOINING


@pytest.mark.parametrize("code", [s.ILLEGAL_GENERATION, s.UNKNOWN_MEMBER_ID])
def test_sync_generation_errors_rejoin(code: int) -> None:
    m = GroupMembership()
    m.begin_join()
    m.on_join_response(0, member_id="me", generation_id=1, leader_id="x")
    assert m.on_sync_response(code) == [SendJoin()]
    assert m.generation_id == -1
    assert (m.member_id == "") == (code == s.UNKNOWN_MEMBER_ID)


def test_sync_fenced_is_fatal() -> None:
    m = GroupMembership(group_instance_id="i")
    m.begin_join()
    m.on_join_response(0, member_id="me", generation_id=1, leader_id="x")
    acts = m.on_sync_response(s.FENCED_INSTANCE_ID)
    assert isinstance(acts[-1], Fail)
    assert state_of(m) is MemberState.FAILED


def test_sync_coordinator_errors() -> None:
    m = GroupMembership()
    m.begin_join()
    m.on_join_response(0, member_id="me", generation_id=1, leader_id="x")
    assert m.on_sync_response(s.NOT_COORDINATOR) == [FindCoordinator(), SendJoin()]
    m.on_join_response(0, member_id="me", generation_id=1, leader_id="x")
    assert m.on_sync_response(s.COORDINATOR_LOAD_IN_PROGRESS) == [Backoff(100), SendJoin()]


def test_sync_unknown_error_fatal() -> None:
    m = GroupMembership()
    m.begin_join()
    m.on_join_response(0, member_id="me", generation_id=1, leader_id="x")
    acts = m.on_sync_response(30)
    assert isinstance(acts[0], Fail)


def test_late_sync_ignored() -> None:
    m = joined()
    assert m.on_sync_response(0, [C]) == []
    assert m.owned == {A, B}


def test_heartbeat_ok_and_stragglers() -> None:
    m = joined()
    assert m.on_heartbeat_response(0) == []
    m2 = GroupMembership()
    assert m2.on_heartbeat_response(s.ILLEGAL_GENERATION) == []


def test_heartbeat_rebalance_while_syncing_rejoins_at_once() -> None:
    """A heartbeat answered REBALANCE_IN_PROGRESS for the generation being synced ends the
    wait for SyncGroup, as that SyncGroup's own answer would: the member rejoins within the
    new join phase instead of after a broker that holds the SyncGroup lets it go (Tansu:
    the session timeout), which livelocked a churning group (test_group_churn_small)."""
    m = GroupMembership()
    m.begin_join()
    m.on_join_sent()
    m.on_join_response(0, member_id="me", generation_id=4, protocol_name="range", leader_id="x")
    assert (m.state, m.generation_id) == (MemberState.SYNCING, 4)
    assert m.on_heartbeat_response(s.REBALANCE_IN_PROGRESS) == [SendJoin()]
    assert m.state is MemberState.JOINING
    assert not m.rejoin_needed  # the SendJoin above is the rejoin; no second one
    assert (m.member_id, m.generation_id) == ("me", 4)  # kept, as for the SyncGroup's 27
    # The held SyncGroup's answer, should it still arrive, is for a generation left behind.
    assert m.on_sync_response(0, [A]) == []
    assert m.owned == frozenset()


def test_heartbeat_rebalance_while_syncing_keeps_cooperative_partitions() -> None:
    m = joined(protocol=RebalanceProtocol.COOPERATIVE)
    m.request_rejoin("test")
    assert m.begin_join() == [SendJoin()]
    m.on_join_sent()
    m.on_join_response(0, member_id="me", generation_id=4, protocol_name="range", leader_id="x")
    assert m.on_heartbeat_response(s.REBALANCE_IN_PROGRESS) == [SendJoin()]
    assert m.owned == {A, B}  # nothing revoked or lost: they are offered again in the join


@pytest.mark.parametrize("state", [MemberState.JOINING, MemberState.REVOKING])
def test_heartbeat_rebalance_outside_sync_and_stable_ignored(state: MemberState) -> None:
    m = GroupMembership()
    m.state = state
    assert m.on_heartbeat_response(s.REBALANCE_IN_PROGRESS) == []
    assert m.state is state


@pytest.mark.parametrize("code", [s.ILLEGAL_GENERATION, s.UNKNOWN_MEMBER_ID])
def test_heartbeat_generation_errors_lose_partitions(code: int) -> None:
    m = joined()
    assert m.on_heartbeat_response(code) == [Lose(frozenset({A, B}))]
    assert state_of(m) is MemberState.UNJOINED
    assert rejoin_needed(m)
    assert m.owned == frozenset()
    assert m.generation_id == -1
    assert (m.member_id == "") == (code == s.UNKNOWN_MEMBER_ID)
    # Lost partitions are not revoked again on the next join.
    assert m.begin_join() == [SendJoin()]


def test_heartbeat_fenced_fatal() -> None:
    m = joined(instance="i1")
    acts = m.on_heartbeat_response(s.FENCED_INSTANCE_ID)
    assert acts[0] == Lose(frozenset({A, B}))
    assert isinstance(acts[1], Fail)
    assert state_of(m) is MemberState.FAILED


def test_heartbeat_coordinator_errors() -> None:
    m = joined()
    assert m.on_heartbeat_response(s.NOT_COORDINATOR) == [FindCoordinator()]
    assert m.on_heartbeat_response(s.COORDINATOR_NOT_AVAILABLE) == [FindCoordinator()]
    assert m.on_heartbeat_response(s.COORDINATOR_LOAD_IN_PROGRESS) == [Backoff(100)]
    assert state_of(m) is MemberState.STABLE
    assert m.owned == {A, B}


def test_heartbeat_unknown_error_fatal() -> None:
    m = joined()
    assert isinstance(m.on_heartbeat_response(30)[-1], Fail)


def test_session_lost() -> None:
    m = joined()
    assert m.on_session_lost() == [Lose(frozenset({A, B}))]
    assert m.member_id == ""
    assert rejoin_needed(m)
    assert GroupMembership().on_session_lost() == []


def test_poll_timeout_leaves_then_poll_rejoins() -> None:
    m = joined()
    acts = m.on_poll_timeout()
    assert acts == [Revoke(frozenset({A, B})), SendLeave(), Left(True, True)]
    # The generation stays until the revocation (the listener's commits) is done.
    assert state_of(m) is MemberState.LEAVING
    assert (m.generation_id, m.member_id) == (3, "me")
    assert m.on_poll_timeout() == []
    m.on_poll()
    assert state_of(m) is MemberState.LEAVING
    left = acts[-1]
    assert isinstance(left, Left)
    m.finish_leave(left)
    assert state_of(m) is MemberState.LEFT
    assert not rejoin_needed(m)
    assert m.member_id == ""
    assert m.on_poll_timeout() == []
    m.on_poll()
    assert state_of(m) is MemberState.UNJOINED
    assert rejoin_needed(m)
    assert m.begin_join() == [SendJoin()]


def test_static_member_poll_timeout_keeps_identity() -> None:
    m = joined(instance="i1")
    acts = m.on_poll_timeout()
    assert acts == [Revoke(frozenset({A, B})), Left(False, True)]
    left = acts[-1]
    assert isinstance(left, Left)
    m.finish_leave(left)
    assert m.member_id == "me"
    assert m.generation_id == -1


def test_leave() -> None:
    m = joined()
    acts = m.leave()
    assert acts == [Revoke(frozenset({A, B})), SendLeave(), Left(True, False)]
    assert isinstance(acts[0], Revoke)
    assert (acts[0].generation_id, acts[0].member_id) == (3, "me")
    assert isinstance(acts[1], SendLeave)
    assert acts[1].member_id == "me"
    m.request_rejoin("ignored while leaving")
    assert not rejoin_needed(m)
    # Heartbeat answers during the leave change nothing.
    assert m.on_heartbeat_response(27) == []
    assert m.on_session_lost() == []
    assert m.leave() == []  # a second leave: the one under way finishes the job
    assert state_of(m) is MemberState.LEAVING


def test_leave_keeps_generation_until_revoke_done() -> None:
    """Regression (issue 4): the generation used to be reset by leave() itself, before the
    Revoke action ran the listener, so a commit made in on_partitions_revoked on close()
    raised CommitFailedError."""
    m = joined()
    acts = m.leave()
    assert state_of(m) is MemberState.LEAVING
    assert (m.generation_id, m.member_id) == (3, "me")
    left = acts[-1]
    assert isinstance(left, Left)
    m.finish_leave(left)
    assert (m.generation_id, m.member_id) == (-1, "")
    assert state_of(m) is MemberState.LEFT
    m.request_rejoin("ignored after leaving")
    assert not rejoin_needed(m)
    m.reset()
    assert state_of(m) is MemberState.UNJOINED
    assert rejoin_needed(m)


def test_leave_static_member_sends_no_leave() -> None:
    m = joined(instance="i1")
    assert m.leave() == [Revoke(frozenset({A, B})), Left(False, False)]


def test_leave_before_join() -> None:
    assert GroupMembership().leave() == []


def test_subscription_change_requests_rejoin() -> None:
    m = joined()
    m.on_subscription_change()
    assert rejoin_needed(m)
    assert m.rejoin_reason == "subscription changed"
