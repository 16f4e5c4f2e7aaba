"""The epoch core both heartbeat protocols share (``heartbeat_state.EpochMembership``): a
KIP-848 consumer group member and a KIP-932 share group member read an answer's error the
same way, no broker. The protocol's own tests (``test_consumer_group_protocol_state.py``,
``tests/share/test_share_state.py``) cover what each does with its partitions."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from kafka_async.consumer.group.heartbeat_state import (
    EpochMembership,
    Fail,
    FindCoordinator,
    HeartbeatMembership,
    HeartbeatResponse,
)
from kafka_async.consumer.share.membership import ShareMembership
from kafka_async.errors import GroupAuthorizationFailedError

T = uuid.uuid4()


#: Either machine (both are ``EpochMembership``; their action types differ).
Member = Any


def test_both_members_are_epoch_members() -> None:
    assert isinstance(consumer_member(), EpochMembership)
    assert isinstance(share_member(), EpochMembership)


def consumer_member() -> Member:
    m = HeartbeatMembership(retry_backoff_ms=200)
    m.subscribe(["t"])
    return m


def share_member() -> Member:
    m = ShareMembership(retry_backoff_ms=200)
    m.subscribe(["t"])
    return m


MEMBERS = pytest.mark.parametrize(
    "make", [consumer_member, share_member], ids=["consumer-group", "share-group"]
)


def answer(m: Member, response: HeartbeatResponse, now: float) -> list[object]:
    return list(m.on_heartbeat_response(response, now, {T: "t"}))


def joined(make: Callable[[], Member]) -> Member:
    m = make()
    assert m.heartbeat_due(0.0)
    m.build_heartbeat(0.0)
    answer(m, HeartbeatResponse(0, member_epoch=4, heartbeat_interval_ms=1000, member_id="m"), 0.0)
    return m


@MEMBERS
def test_an_answer_gives_the_id_epoch_and_interval(make: Callable[[], Member]) -> None:
    m = joined(make)
    assert (m.member_id, m.member_epoch, m.heartbeat_interval_ms) == ("m", 4, 1000)
    assert not m.heartbeat_due(0.5)
    assert m.heartbeat_due(1.0)


@MEMBERS
@pytest.mark.parametrize("code", [15, 16])
def test_coordinator_errors_look_it_up_again_after_the_backoff(
    make: Callable[[], Member], code: int
) -> None:
    m = joined(make)
    m.build_heartbeat(1.0)
    assert answer(m, HeartbeatResponse(code), 1.0) == [FindCoordinator()]
    assert not m.heartbeat_due(1.1)
    assert m.heartbeat_due(1.2)
    assert m.member_epoch == 4  # still in the group


@MEMBERS
def test_a_loading_coordinator_is_asked_again_after_the_backoff(
    make: Callable[[], Member],
) -> None:
    m = joined(make)
    m.build_heartbeat(1.0)
    assert answer(m, HeartbeatResponse(14), 1.0) == []
    assert not m.heartbeat_due(1.1)
    assert m.heartbeat_due(1.2)


@MEMBERS
def test_a_heartbeat_without_answer_looks_the_coordinator_up_again(
    make: Callable[[], Member],
) -> None:
    m = joined(make)
    m.build_heartbeat(1.0)
    assert m.on_heartbeat_failed(1.0) == [FindCoordinator()]
    assert m.heartbeat_due(1.2)


@MEMBERS
@pytest.mark.parametrize("code", [25, 110])
def test_fenced_members_rejoin_at_epoch_zero_with_the_same_id(
    make: Callable[[], Member], code: int
) -> None:
    m = joined(make)
    m.build_heartbeat(1.0)
    answer(m, HeartbeatResponse(code), 1.0)
    assert m.member_epoch == 0
    assert m.member_id == "m"
    assert "heartbeat" in m.join_reason
    assert m.failure is None


@MEMBERS
def test_other_errors_fail_the_member_with_the_typed_error(
    make: Callable[[], Member],
) -> None:
    m = joined(make)
    m.build_heartbeat(1.0)
    actions = answer(m, HeartbeatResponse(30, error_message="denied"), 1.0)
    fail = actions[-1]
    assert isinstance(fail, Fail)
    assert isinstance(fail.error, GroupAuthorizationFailedError)
    assert m.failure is fail.error
    api = "ConsumerGroupHeartbeat" if isinstance(m, HeartbeatMembership) else "ShareGroupHeartbeat"
    assert f"{api} failed with GROUP_AUTHORIZATION_FAILED: denied" in str(fail.error)
    assert not m.heartbeat_due(99.0)
