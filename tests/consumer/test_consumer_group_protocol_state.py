"""Every transition of the KIP-848 member state machine (``heartbeat_state``), no broker."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from kafka_async.consumer import Consumer
from kafka_async.consumer.group.heartbeat_state import (
    Assign,
    Fail,
    FindCoordinator,
    HeartbeatMembership,
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
from kafka_async.errors import ConfigError, UnsupportedAssignorError
from kafka_async.protocol.apis import CONSUMER_GROUP_HEARTBEAT
from kafka_async.protocol.apis.consumer_group_heartbeat import (
    Assignment,
    ConsumerGroupHeartbeatResponse,
    TopicPartitions,
)
from kafka_async.structs import TopicPartition as TP

T_ID, U_ID = uuid.uuid4(), uuid.uuid4()
NAMES = {T_ID: "t", U_ID: "u"}
T0, T1, T2, U0 = TP("t", 0), TP("t", 1), TP("t", 2), TP("u", 0)


def state_of(m: HeartbeatMembership) -> MemberState:
    # Through a call, so mypy does not keep the state narrowed across transitions.
    return m.state


def ok(epoch: int, assignment: dict[uuid.UUID, set[int]] | None = None) -> HeartbeatResponse:
    return HeartbeatResponse(
        0,
        member_epoch=epoch,
        heartbeat_interval_ms=500,
        assignment=None
        if assignment is None
        else {t: frozenset(ps) for t, ps in assignment.items()},
    )


def joined(
    assignment: dict[uuid.UUID, set[int]], *, instance: str | None = None
) -> HeartbeatMembership:
    """A member that joined and reconciled ``assignment``."""
    m = HeartbeatMembership(group_instance_id=instance, server_assignor="uniform")
    m.subscribe(["t", "u"])
    m.build_heartbeat(0.0)
    actions = m.on_heartbeat_response(ok(1, assignment), 0.0, NAMES)
    done = actions[-1]
    assert isinstance(done, Reconciled)
    assert m.on_reconciled(done, NAMES) == []
    m.build_heartbeat(0.0)  # the acknowledgement
    m.on_heartbeat_response(ok(1), 0.0, NAMES)
    return m


def test_join_sends_every_field_then_only_changes() -> None:
    m = HeartbeatMembership(
        group_instance_id="i-1", rack_id="r1", server_assignor="range", rebalance_timeout_ms=9000
    )
    assert state_of(m) is MemberState.UNJOINED
    assert not m.heartbeat_due(0.0)
    m.subscribe(["b", "a"])
    assert state_of(m) is MemberState.JOINING
    assert m.heartbeat_due(0.0)
    req = m.build_heartbeat(10.0)
    assert req.member_epoch == 0
    assert req.member_id == m.member_id
    assert len(m.member_id) == 22
    assert req.instance_id == "i-1"
    assert req.rack_id == "r1"
    assert req.rebalance_timeout_ms == 9000
    assert req.subscribed_topic_names == ("a", "b")
    assert req.subscribed_topic_regex is None
    assert req.server_assignor == "range"
    assert req.topic_partitions == ()  # a join reports "owns nothing", never null
    # Not answered yet: the next heartbeat still carries everything.
    assert m.generation() == -1
    m.on_heartbeat_response(ok(3, {}), 10.0, NAMES)
    assert state_of(m) is MemberState.RECONCILING
    assert m.member_epoch == 3
    req = m.build_heartbeat(11.0)
    assert req.member_epoch == 3
    assert req.subscribed_topic_names is None
    assert req.server_assignor is None
    assert req.rebalance_timeout_ms == -1
    assert req.rack_id is None
    assert req.instance_id == "i-1"  # always sent by a static member
    assert m.next_heartbeat_at == pytest.approx(11.5)  # the coordinator's interval


def test_first_assignment_assigns_and_is_acknowledged_at_once() -> None:
    m = HeartbeatMembership()
    m.subscribe(["t"])
    m.build_heartbeat(0.0)
    actions = m.on_heartbeat_response(ok(1, {T_ID: {0, 1}}), 0.0, NAMES)
    assert actions == [Assign(frozenset({T0, T1})), Reconciled(frozenset({T0, T1}), 0)]
    assert m.generation() == 1  # commits may carry the epoch while reconciling
    done = actions[-1]
    assert isinstance(done, Reconciled)
    assert m.on_reconciled(done, NAMES) == []
    assert state_of(m) is MemberState.STABLE
    assert m.heartbeat_due(0.0)  # the acknowledgement goes out now
    req = m.build_heartbeat(0.0)
    assert req.topic_partitions == ((T_ID, (0, 1)),)


def test_an_empty_first_assignment_still_tells_the_listener() -> None:
    m = HeartbeatMembership()
    m.subscribe(["t"])
    m.build_heartbeat(0.0)
    assert m.on_heartbeat_response(ok(1, {}), 0.0, NAMES) == [
        Assign(frozenset()),
        Reconciled(frozenset(), 0),
    ]


def test_revoke_comes_before_acquire() -> None:
    m = joined({T_ID: {0, 1}})
    actions = m.on_heartbeat_response(ok(2, {T_ID: {1}, U_ID: {0}}), 1.0, NAMES)
    assert actions == [
        Revoke(frozenset({T0})),
        Assign(frozenset({U0})),
        Reconciled(frozenset({T1, U0}), 0),
    ]
    # Heartbeats meanwhile still report what is owned (unchanged: null).
    assert m.build_heartbeat(1.5).topic_partitions is None
    done = actions[-1]
    assert isinstance(done, Reconciled)
    m.on_reconciled(done, NAMES)
    assert m.owned == {T1, U0}
    assert m.build_heartbeat(1.6).topic_partitions == ((T_ID, (1,)), (U_ID, (0,)))


def test_unchanged_assignment_and_epoch_bump_do_nothing() -> None:
    m = joined({T_ID: {0}})
    assert m.on_heartbeat_response(ok(5, {T_ID: {0}}), 1.0, NAMES) == []
    assert m.on_heartbeat_response(ok(6), 2.0, NAMES) == []
    assert m.generation() == 6


def test_assignment_during_reconciliation_waits_for_it() -> None:
    m = joined({T_ID: {0, 1}})
    first = m.on_heartbeat_response(ok(2, {T_ID: {1}}), 1.0, NAMES)
    assert first[0] == Revoke(frozenset({T0}))
    # Another assignment arrives while the revocation runs: nothing starts yet.
    assert m.on_heartbeat_response(ok(3, {T_ID: {1, 2}}), 1.5, NAMES) == []
    done = first[-1]
    assert isinstance(done, Reconciled)
    after = m.on_reconciled(done, NAMES)
    assert after == [Assign(frozenset({T2})), Reconciled(frozenset({T1, T2}), 0)]


def test_unknown_topic_ids_reconcile_later() -> None:
    m = HeartbeatMembership()
    m.subscribe(["t", "u"])
    m.build_heartbeat(0.0)
    actions = m.on_heartbeat_response(ok(1, {T_ID: {0}, U_ID: {0}}), 0.0, {T_ID: "t"})
    assert actions == [
        Assign(frozenset({T0})),
        Reconciled(frozenset({T0}), 0),
        ResolveTopics(frozenset({U_ID})),
    ]
    done = actions[1]
    assert isinstance(done, Reconciled)
    # The metadata now knows the other topic.
    assert m.on_reconciled(done, NAMES) == [
        Assign(frozenset({U0})),
        Reconciled(frozenset({T0, U0}), 0),
    ]


@pytest.mark.parametrize("code", [25, 110])
def test_fenced_member_loses_everything_and_rejoins_with_epoch_zero(code: int) -> None:
    m = joined({T_ID: {0, 1}})
    pending = m.on_heartbeat_response(ok(2, {T_ID: {1}}), 1.0, NAMES)
    member_id = m.member_id
    actions = m.on_heartbeat_response(HeartbeatResponse(code), 2.0, NAMES)
    assert actions == [Lose(), Rejoin(0)]
    assert state_of(m) is MemberState.FENCED
    assert m.generation() == -1
    assert m.owned == frozenset()
    assert not m.heartbeat_due(2.0)  # no join before the partitions are released
    # The reconciliation that was under way is moot now.
    done = pending[-1]
    assert isinstance(done, Reconciled)
    assert m.on_reconciled(done, NAMES) == []
    rejoin = actions[-1]
    assert isinstance(rejoin, Rejoin)
    m.rejoin(rejoin)
    assert state_of(m) is MemberState.JOINING
    req = m.build_heartbeat(2.0)
    assert req.member_epoch == 0
    assert req.member_id == member_id
    assert req.subscribed_topic_names == ("t", "u")
    assert req.topic_partitions == ()


def test_session_lost_fences_locally() -> None:
    m = joined({T_ID: {0}})
    assert m.on_session_lost() == [Lose(), Rejoin(m.join_count)]
    assert m.on_session_lost() == []  # once


def test_coordinator_errors_look_it_up_again_and_resend_everything() -> None:
    m = joined({T_ID: {0}})
    assert m.on_heartbeat_response(HeartbeatResponse(16), 3.0, NAMES) == [FindCoordinator()]
    assert m.next_heartbeat_at == pytest.approx(3.1)
    req = m.build_heartbeat(3.1)
    assert req.subscribed_topic_names == ("t", "u")
    assert req.topic_partitions == ((T_ID, (0,)),)
    assert req.server_assignor == "uniform"
    assert m.on_heartbeat_response(HeartbeatResponse(14), 3.2, NAMES) == []
    assert state_of(m) is MemberState.STABLE
    assert m.on_heartbeat_failed(4.0) == [FindCoordinator()]


def test_fatal_errors_are_typed() -> None:
    m = HeartbeatMembership(server_assignor="nope")
    m.subscribe(["t"])
    m.build_heartbeat(0.0)
    actions = m.on_heartbeat_response(
        HeartbeatResponse(112, error_message="Unsupported assignor nope"), 0.0, NAMES
    )
    assert isinstance(actions[-1], Fail)
    assert isinstance(actions[-1].error, UnsupportedAssignorError)
    assert "nope" in str(actions[-1].error)
    assert state_of(m) is MemberState.FAILED
    assert not m.heartbeat_due(10.0)


def test_regex_subscription_and_switching_back_to_names() -> None:
    m = HeartbeatMembership()
    m.subscribe(regex="orders-.*")
    req = m.build_heartbeat(0.0)
    assert req.subscribed_topic_regex == "orders-.*"
    assert req.subscribed_topic_names is None
    m.on_heartbeat_response(ok(1, {}), 0.0, NAMES)
    m.subscribe(["t"])
    req = m.build_heartbeat(0.1)
    assert req.subscribed_topic_names == ("t",)
    assert req.subscribed_topic_regex == ""  # clears the regex the coordinator holds


@pytest.mark.parametrize(("instance", "epoch"), [(None, -1), ("i-1", -2)])
def test_leave_revokes_then_sends_the_leave_epoch(instance: str | None, epoch: int) -> None:
    m = joined({T_ID: {0}}, instance=instance)
    actions = m.leave()
    assert actions == [Revoke(None), SendLeave(epoch), Left(False)]
    # Commits made during the revocation still carry the epoch.
    assert m.generation() == 1
    assert not m.heartbeat_due(100.0)
    assert m.leave_request(epoch).member_epoch == epoch
    m.finish_leave(Left(False))
    assert state_of(m) is MemberState.LEFT
    assert m.generation() == -1
    assert m.leave() == []


def test_leave_before_any_heartbeat_sends_nothing() -> None:
    m = HeartbeatMembership()
    m.subscribe(["t"])
    assert m.leave() == [Revoke(None), Left(False)]


def test_poll_timeout_leaves_and_the_next_poll_rejoins() -> None:
    m = joined({T_ID: {0}})
    assert m.on_poll_timeout() == [Revoke(None), SendLeave(-1), Left(True)]
    m.finish_leave(Left(True))
    assert state_of(m) is MemberState.LEFT
    assert m.left_on_poll_timeout
    m.on_poll()
    assert state_of(m) is MemberState.JOINING
    assert m.build_heartbeat(0.0).member_epoch == 0


def test_stragglers_after_leaving_are_ignored() -> None:
    m = joined({T_ID: {0}})
    m.leave()
    assert m.on_heartbeat_response(ok(9, {T_ID: {1}}), 1.0, NAMES) == []
    assert m.on_heartbeat_response(HeartbeatResponse(110), 1.0, NAMES) == []


def test_reset_forgets_the_subscription() -> None:
    m = joined({T_ID: {0}})
    m.leave()
    m.finish_leave(Left(False))
    m.reset()
    assert state_of(m) is MemberState.UNJOINED
    assert m.topics == ()
    m.subscribe(["t"])
    assert state_of(m) is MemberState.JOINING


def test_the_wire_format_round_trips() -> None:
    body = {
        "group_id": "g",
        "member_id": "m",
        "member_epoch": 0,
        "instance_id": None,
        "rack_id": "r",
        "rebalance_timeout_ms": 1000,
        "subscribed_topic_names": None,
        "subscribed_topic_regex": "a.*",
        "server_assignor": "uniform",
        "topic_partitions": [{"topic_id": T_ID, "partitions": [0, 2]}],
    }
    decoded = CONSUMER_GROUP_HEARTBEAT.decode_request(
        1, CONSUMER_GROUP_HEARTBEAT.encode_request(1, body)
    )
    assert decoded.subscribed_topic_regex == "a.*"
    assert decoded.topic_partitions is not None
    assert decoded.topic_partitions[0].topic_id == T_ID
    assert decoded.subscribed_topic_names is None
    resp = ConsumerGroupHeartbeatResponse(
        error_code=0,
        member_epoch=4,
        heartbeat_interval_ms=500,
        assignment=Assignment(topic_partitions=[TopicPartitions(topic_id=U_ID, partitions=[1])]),
    )
    got = CONSUMER_GROUP_HEARTBEAT.decode_response(
        1, CONSUMER_GROUP_HEARTBEAT.encode_response(1, resp)
    )
    assert got.assignment is not None
    assert got.assignment.topic_partitions[0].partitions == [1]
    nothing = CONSUMER_GROUP_HEARTBEAT.decode_response(
        1, CONSUMER_GROUP_HEARTBEAT.encode_response(1, ConsumerGroupHeartbeatResponse())
    )
    assert nothing.assignment is None


def test_bad_settings_are_typed_errors() -> None:
    bad: dict[str, Any] = {"group_protocol": "next"}
    with pytest.raises(ConfigError, match="group_protocol"):
        Consumer(group_id="g", **bad)
    with pytest.raises(ConfigError, match="group_remote_assignor"):
        Consumer(group_id="g", group_remote_assignor="uniform")
