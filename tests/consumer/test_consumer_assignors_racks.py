"""Rack-aware classic assignment (KIP-881): the pure assignors, no broker.

A member's rack is its subscription's ``rack_id`` (``client_rack``); a partition's racks are
those of its replicas' brokers. The rules checked: loads are exactly what they are without
racks (balance first), members get partitions in their rack where balance allows, owned
partitions stay put unless rack or balance moves them, and nothing changes when racks cannot
matter.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping

import pytest

from kafka_async.consumer.group.assignors import (
    Assignor,
    CooperativeStickyAssignor,
    MemberInfo,
    RangeAssignor,
    StickyAssignor,
    use_racks,
)
from kafka_async.protocol.consumer_protocol import Assignment, Subscription
from kafka_async.structs import TopicPartition

T = "t"


def tp(p: int, topic: str = T) -> TopicPartition:
    return TopicPartition(topic, p)


def member(
    mid: str,
    rack: str | None,
    topics: tuple[str, ...] = (T,),
    owned: tuple[TopicPartition, ...] = (),
    generation: int = -1,
) -> MemberInfo:
    sub = Subscription(
        topics=topics, owned_partitions=owned, generation_id=generation, rack_id=rack
    )
    return MemberInfo(mid, sub)


def racks_by_partition(
    layout: dict[int, str], topic: str = T
) -> dict[TopicPartition, frozenset[str]]:
    return {tp(p, topic): frozenset({r}) for p, r in layout.items()}


def parts(result: Mapping[str, Assignment], mid: str) -> list[TopicPartition]:
    return list(result[mid].partitions)


def test_use_racks_only_when_it_can_matter() -> None:
    racks = racks_by_partition({0: "a", 1: "b"})
    assert not use_racks([member("m1", None), member("m2", None)], racks)
    assert not use_racks([member("m1", "a")], {})
    # Every partition has a replica in every member's rack: nothing to gain.
    full = {tp(0): frozenset({"a", "b"}), tp(1): frozenset({"a", "b"})}
    assert not use_racks([member("m1", "a"), member("m2", "b")], full)
    assert use_racks([member("m1", "a"), member("m2", "b")], racks)


def test_range_gives_each_member_its_racks_partitions() -> None:
    # Replicas alternate racks: p0, p2 in b; p1, p3 in a. Without racks range gives m1
    # p0-p1 and m2 p2-p3 (half of the reads cross racks).
    racks = racks_by_partition({0: "b", 1: "a", 2: "b", 3: "a"})
    members = [member("m1", "a"), member("m2", "b")]
    plain = RangeAssignor().assign({T: 4}, members)
    assert parts(plain, "m1") == [tp(0), tp(1)]
    got = RangeAssignor().assign_with_racks({T: 4}, members, racks)
    assert parts(got, "m1") == [tp(1), tp(3)]
    assert parts(got, "m2") == [tp(0), tp(2)]


def test_range_keeps_its_shares_when_racks_are_uneven() -> None:
    # Five partitions all in rack a, three members (a, a, b): shares stay 2, 2, 1 as
    # without racks; the b member gets what is left.
    racks = racks_by_partition(dict.fromkeys(range(5), "a"))
    members = [member("m1", "a"), member("m2", "a"), member("m3", "b")]
    got = RangeAssignor().assign_with_racks({T: 5}, members, racks)
    assert [len(parts(got, m)) for m in ("m1", "m2", "m3")] == [2, 2, 1]
    assert sorted(p for m in ("m1", "m2", "m3") for p in parts(got, m)) == [tp(p) for p in range(5)]


@pytest.mark.parametrize("assignor", [StickyAssignor(), CooperativeStickyAssignor()])
def test_sticky_fresh_group_is_rack_aligned(assignor: Assignor) -> None:
    racks = racks_by_partition({p: "ba"[p % 2] for p in range(6)})  # odd ones in a
    members = [member("m1", "a"), member("m2", "b")]
    got = assignor.assign_with_racks({T: 6}, members, racks)
    assert parts(got, "m1") == [tp(1), tp(3), tp(5)]
    assert parts(got, "m2") == [tp(0), tp(2), tp(4)]


def test_cooperative_sticky_moves_out_of_rack_partitions_in_two_phases() -> None:
    # m1 (rack a) owns p0, p1; m2 (rack b) owns p2, p3. p0 is in b, p2 in a: they swap.
    racks = racks_by_partition({0: "b", 1: "a", 2: "a", 3: "b"})
    members = [
        member("m1", "a", owned=(tp(0), tp(1)), generation=3),
        member("m2", "b", owned=(tp(2), tp(3)), generation=3),
    ]
    assignor = CooperativeStickyAssignor()
    first = assignor.assign_with_racks({T: 4}, members, racks)
    # Phase one: each keeps what stays, the moving partitions are withheld from everyone.
    assert parts(first, "m1") == [tp(1)]
    assert parts(first, "m2") == [tp(3)]
    after = [
        member("m1", "a", owned=(tp(1),), generation=4),
        member("m2", "b", owned=(tp(3),), generation=4),
    ]
    second = assignor.assign_with_racks({T: 4}, after, racks)
    assert parts(second, "m1") == [tp(1), tp(2)]
    assert parts(second, "m2") == [tp(0), tp(3)]
    # Without racks nothing moves: stickiness.
    plain = assignor.assign({T: 4}, members)
    assert parts(plain, "m1") == [tp(0), tp(1)]


def test_sticky_never_trades_balance_for_racks() -> None:
    # Every partition is in rack a; one member in a, two in b: loads stay 2/2/2.
    racks = racks_by_partition(dict.fromkeys(range(6), "a"))
    members = [member("m1", "a"), member("m2", "b"), member("m3", "b")]
    got = CooperativeStickyAssignor().assign_with_racks({T: 6}, members, racks)
    assert sorted(len(parts(got, m)) for m in ("m1", "m2", "m3")) == [2, 2, 2]


@pytest.mark.parametrize("seed", range(40))
def test_random_layouts_stay_balanced_and_complete(seed: int) -> None:
    rng = random.Random(seed)
    rack_names = ["a", "b", "c"][: rng.randint(2, 3)]
    counts = {"t1": rng.randint(1, 12), "t2": rng.randint(0, 7)}
    racks: dict[TopicPartition, frozenset[str]] = {}
    for topic, n in counts.items():
        for p in range(n):
            racks[tp(p, topic)] = frozenset(rng.sample(rack_names, rng.randint(1, 2)))
    n_members = rng.randint(1, 5)
    members = [
        member(f"m{i}", rng.choice([*rack_names, None]), topics=("t1", "t2"))
        for i in range(n_members)
    ]
    every = sorted(tp(p, t) for t, n in counts.items() for p in range(n))
    for assignor in (RangeAssignor(), StickyAssignor()):
        plain = assignor.assign(counts, members)
        got = assignor.assign_with_racks(counts, members, racks)
        flat = [p for m in members for p in parts(got, m.member_id)]
        assert sorted(flat) == every, assignor  # every partition exactly once
        if isinstance(assignor, RangeAssignor):
            # Per topic, the same shares as without racks.
            for topic in counts:
                loads = Counter(
                    len([p for p in parts(got, m.member_id) if p.topic == topic]) for m in members
                )
                plain_loads = Counter(
                    len([p for p in parts(plain, m.member_id) if p.topic == topic]) for m in members
                )
                assert loads == plain_loads
        else:
            sizes = [len(parts(got, m.member_id)) for m in members]
            assert max(sizes) - min(sizes) <= 1

        def aligned(result: Mapping[str, Assignment]) -> int:
            return sum(
                1
                for m in members
                for p in parts(result, m.member_id)
                if m.subscription.rack_id is None or m.subscription.rack_id in racks[p]
            )

        assert aligned(got) >= aligned(plain), assignor
