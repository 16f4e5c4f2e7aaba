"""The shared cores of group membership, no broker.

* ``heartbeat_state.EpochMembership``: a KIP-848 consumer group member and a KIP-932 share
  group member read an answer's error the same way (the protocols' own tests,
  ``test_consumer_group_protocol_state.py`` and ``tests/share/test_share_state.py``, cover
  what each does with its partitions);
* ``member.GroupMember``: the classic and KIP-848 drivers refuse commits, report
  statistics and leave the same way (the broker tests cover them in a group)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any, Literal

import anyio
import pytest

from kafka_async.cluster.client import ClusterClient
from kafka_async.consumer._signal import Signal
from kafka_async.consumer.config import ConsumerConfig
from kafka_async.consumer.errors import CommitFailedError
from kafka_async.consumer.group.coordinator import GroupCoordinator
from kafka_async.consumer.group.driver import GroupDriver
from kafka_async.consumer.group.heartbeat_coordinator import HeartbeatCoordinator
from kafka_async.consumer.group.heartbeat_state import (
    EpochMembership,
    Fail,
    FindCoordinator,
    HeartbeatMembership,
    HeartbeatResponse,
)
from kafka_async.consumer.group.member import GroupMember
from kafka_async.consumer.offsets import OffsetClient
from kafka_async.consumer.positions import SubscriptionState
from kafka_async.consumer.share.membership import ShareMembership
from kafka_async.errors import GroupAuthorizationFailedError
from kafka_async.net.config import ClientConfig

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


# -- the engine under both drivers ---------------------------------------------------------


GroupProtocolName = Literal["classic", "consumer"]


def driver(protocol: GroupProtocolName, **kw: Any) -> GroupDriver:
    """A group member as the consumer builds it (``Consumer.__init__``), never started."""
    cfg = ConsumerConfig(client=ClientConfig(), group_id="g", group_protocol=protocol, **kw)
    client = ClusterClient(cfg.client)
    subs = SubscriptionState(cfg.auto_offset_reset)
    offsets = OffsetClient(client, "g")
    cls = HeartbeatCoordinator if protocol == "consumer" else GroupCoordinator
    return cls(client, cfg, subs, offsets, Signal())


DRIVERS = pytest.mark.parametrize("protocol", ["classic", "consumer"])


@DRIVERS
def test_a_member_that_has_not_joined_refuses_commits(protocol: GroupProtocolName) -> None:
    d = driver(protocol)
    assert isinstance(d, GroupMember)
    assert d.generation() == (-1, d.membership.member_id if protocol == "consumer" else "", None)
    refusal = d.commit_refusal()
    assert isinstance(refusal, CommitFailedError)
    assert "it has not joined or has left" in str(refusal)
    assert not d.stable


@DRIVERS
def test_a_failed_member_refuses_commits_with_its_failure(protocol: GroupProtocolName) -> None:
    d = driver(protocol)
    err = GroupAuthorizationFailedError("denied")
    assert isinstance(d, GroupMember)
    d.membership.fail(err)
    assert d.commit_refusal() is err
    assert d.membership.failure is err


@DRIVERS
def test_statistics_show_the_protocols_fields_and_the_shared_ones(
    protocol: GroupProtocolName,
) -> None:
    d = driver(protocol, group_instance_id="static-1")
    stats = d.statistics()
    shared = {"group_id", "state", "member_id", "group_instance_id", "owned_partitions"}
    shared |= {"heartbeats", "heartbeat_failures", "seconds_since_poll", "error"}
    assert shared <= set(stats)
    assert (stats["group_id"], stats["state"], stats["group_instance_id"]) == (
        "g",
        "unjoined",
        "static-1",
    )
    assert ("member_epoch" in stats) == (protocol == "consumer")
    assert ("generation_id" in stats) == (protocol == "classic")


@DRIVERS
@pytest.mark.anyio
async def test_leaving_a_member_that_never_joined_finishes_in_its_task(
    protocol: GroupProtocolName,
) -> None:
    d = driver(protocol)
    ran: list[str] = []
    async with anyio.create_task_group() as tg:
        await tg.start(d.run)
        assert await d.leave_group(5.0, reset=True, after=lambda: ran.append("after"))
        tg.cancel_scope.cancel()
    assert ran == ["after"]
    assert d.statistics()["state"] == "unjoined"
