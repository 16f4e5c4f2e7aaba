"""Consumer protocol Subscription/Assignment bytes, checked against aiokafka's encoder."""

from __future__ import annotations

import pytest
from aiokafka.coordinator.protocol import (
    ConsumerProtocolMemberAssignment,
    ConsumerProtocolMemberMetadata,
)
from hypothesis import given
from hypothesis import strategies as st

from kafka_async.errors import ProtocolDecodeError
from kafka_async.protocol.consumer_protocol import (
    Assignment,
    CooperativeStickyUserData,
    StickyUserData,
    Subscription,
)
from kafka_async.structs import TopicPartition as TP

topics = st.lists(st.text(min_size=1, max_size=8), max_size=5, unique=True)
tps = st.lists(
    st.builds(TP, st.text(min_size=1, max_size=5), st.integers(0, 2**31 - 1)),
    max_size=10,
    unique=True,
)


def test_subscription_v0_is_aiokafka_bytes() -> None:
    ours = Subscription(("orders", "payments"), b"ud").encode(0)
    theirs = ConsumerProtocolMemberMetadata(0, ["orders", "payments"], b"ud").encode()
    assert ours == theirs


def test_aiokafka_decodes_our_v3_subscription() -> None:
    sub = Subscription(("a", "b"), b"xy", (TP("a", 1),), generation_id=7, rack_id="r1")
    decoded = ConsumerProtocolMemberMetadata.decode(sub.encode())
    assert decoded.version == 3
    assert list(decoded.subscription) == ["a", "b"]
    assert decoded.user_data == b"xy"


def test_we_decode_aiokafka_subscription() -> None:
    data = ConsumerProtocolMemberMetadata(0, ["t1", "t2"], b"").encode()
    sub = Subscription.decode(data)
    assert sub.topics == ("t1", "t2")
    assert sub.user_data == b""
    assert sub.owned_partitions == ()
    assert sub.generation_id == -1
    assert sub.version == 0


def test_subscription_v3_exact_bytes() -> None:
    data = Subscription(("a",), None, (TP("a", 2), TP("a", 1)), 5, "r").encode(3)
    assert data == (
        b"\x00\x03"  # version
        b"\x00\x00\x00\x01\x00\x01a"  # topics
        b"\xff\xff\xff\xff"  # null user data
        b"\x00\x00\x00\x01\x00\x01a\x00\x00\x00\x02\x00\x00\x00\x01\x00\x00\x00\x02"  # owned
        b"\x00\x00\x00\x05"  # generation
        b"\x00\x01r"  # rack
    )


def test_lower_version_drops_newer_fields() -> None:
    sub = Subscription(("a",), None, (TP("a", 0),), 5, "r")
    back = Subscription.decode(sub.encode(1))
    assert back.owned_partitions == (TP("a", 0),)
    assert back.generation_id == -1
    assert back.rack_id is None


def test_newer_version_read_with_known_fields() -> None:
    data = bytearray(Subscription(("a",), b"u", (), 3, "r").encode(3))
    data[0:2] = b"\x00\x09"  # a future version with extra trailing fields
    data += b"\x00\x00\x00\x2a"
    sub = Subscription.decode(bytes(data))
    assert sub.version == 9
    assert sub.topics == ("a",)
    assert sub.rack_id == "r"


@given(topics, st.one_of(st.none(), st.binary(max_size=20)), tps, st.integers(-1, 1000))
def test_subscription_round_trip(
    ts: list[str], user_data: bytes | None, owned: list[TP], gen: int
) -> None:
    sub = Subscription(tuple(ts), user_data, tuple(sorted(owned)), gen, "rack")
    back = Subscription.decode(sub.encode())
    assert back.topics == sub.topics
    assert back.user_data == user_data
    assert sorted(back.owned_partitions) == sorted(owned)
    assert back.generation_id == gen


@given(tps, st.one_of(st.none(), st.binary(max_size=20)))
def test_assignment_round_trip_and_aiokafka(parts: list[TP], user_data: bytes | None) -> None:
    a = Assignment(tuple(parts), user_data)
    assert sorted(Assignment.decode(a.encode()).partitions) == sorted(parts)
    theirs = ConsumerProtocolMemberAssignment.decode(a.encode(0))
    got = sorted(TP(t, p) for t, ps in theirs.assignment for p in ps)
    assert got == sorted(parts)


def test_we_decode_aiokafka_assignment() -> None:
    data = ConsumerProtocolMemberAssignment(0, [("a", [0, 1]), ("b", [2])], b"").encode()
    a = Assignment.decode(data)
    assert sorted(a.partitions) == [TP("a", 0), TP("a", 1), TP("b", 2)]


def test_empty_assignment_bytes() -> None:
    assert Assignment.decode(b"").partitions == ()


@pytest.mark.parametrize("data", [b"\x00", b"\x00\x00\x00\x00\x00\x05", b"\xff\xff"])
def test_bad_bytes_raise_typed_error(data: bytes) -> None:
    with pytest.raises(ProtocolDecodeError):
        Subscription.decode(data)
    with pytest.raises(ProtocolDecodeError):
        Assignment.decode(data)


def test_sticky_user_data_versions() -> None:
    v1 = StickyUserData((TP("a", 0), TP("b", 1)), 4)
    assert StickyUserData.decode(v1.encode()) == v1
    v0 = StickyUserData((TP("a", 0),))
    assert StickyUserData.decode(v0.encode()) == v0
    assert CooperativeStickyUserData.decode(CooperativeStickyUserData(9).encode()).generation == 9
