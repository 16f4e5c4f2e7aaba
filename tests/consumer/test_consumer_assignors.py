"""Assignors: completeness, balance, stickiness, cooperative handover, Java-compatible order."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_async.consumer.group.assignors import (
    Assignor,
    CooperativeStickyAssignor,
    MemberInfo,
    RangeAssignor,
    RebalanceProtocol,
    RoundRobinAssignor,
    StickyAssignor,
    rebalance_protocol,
    resolve_assignors,
    withhold_moving,
)
from kafka_async.errors import ConfigError
from kafka_async.protocol.consumer_protocol import StickyUserData, Subscription
from kafka_async.structs import TopicPartition as TP

ALL = [RangeAssignor(), RoundRobinAssignor(), StickyAssignor(), CooperativeStickyAssignor()]


def members(
    n: int,
    topics: Sequence[str],
    owned: Mapping[str, Sequence[TP]] | None = None,
    generation: int = 1,
) -> list[MemberInfo]:
    owned = owned or {}
    return [
        MemberInfo(
            f"m{i:02d}",
            Subscription(tuple(topics), None, tuple(owned.get(f"m{i:02d}", ())), generation),
        )
        for i in range(n)
    ]


def flat(result: Mapping[str, object]) -> dict[str, list[TP]]:
    return {mid: list(a.partitions) for mid, a in result.items()}  # type: ignore[attr-defined]


def check_complete(counts: Mapping[str, int], out: Mapping[str, list[TP]]) -> None:
    seen = Counter(tp for tps in out.values() for tp in tps)
    expected = {TP(t, p) for t, n in counts.items() for p in range(n)}
    assert set(seen) == expected
    assert all(c == 1 for c in seen.values()), "a partition was assigned twice"


def test_range_matches_java_layout() -> None:
    out = flat(RangeAssignor().assign({"t0": 3, "t1": 3}, members(2, ["t0", "t1"])))
    assert out == {
        "m00": [TP("t0", 0), TP("t0", 1), TP("t1", 0), TP("t1", 1)],
        "m01": [TP("t0", 2), TP("t1", 2)],
    }


def test_roundrobin_matches_java_layout() -> None:
    out = flat(RoundRobinAssignor().assign({"t0": 3, "t1": 3}, members(2, ["t0", "t1"])))
    assert out == {
        "m00": [TP("t0", 0), TP("t0", 2), TP("t1", 1)],
        "m01": [TP("t0", 1), TP("t1", 0), TP("t1", 2)],
    }


def test_roundrobin_skips_members_not_subscribed() -> None:
    ms = [
        MemberInfo("a", Subscription(("t0",))),
        MemberInfo("b", Subscription(("t0", "t1"))),
    ]
    out = flat(RoundRobinAssignor().assign({"t0": 2, "t1": 2}, ms))
    assert out == {"a": [TP("t0", 0)], "b": [TP("t0", 1), TP("t1", 0), TP("t1", 1)]}


def test_static_members_ordered_by_instance_id() -> None:
    ms = [
        MemberInfo("zzz", Subscription(("t",)), group_instance_id="a"),
        MemberInfo("aaa", Subscription(("t",)), group_instance_id="b"),
    ]
    out = flat(RangeAssignor().assign({"t": 2}, ms))
    assert out == {"zzz": [TP("t", 0)], "aaa": [TP("t", 1)]}


def test_every_member_gets_an_entry_even_if_empty() -> None:
    for a in ALL:
        out = flat(a.assign({"t": 1}, members(3, ["t"])))
        assert set(out) == {"m00", "m01", "m02"}
        assert sum(len(v) for v in out.values()) == 1


def test_unknown_topics_ignored() -> None:
    for a in ALL:
        out = flat(a.assign({}, members(2, ["missing"])))
        assert out == {"m00": [], "m01": []}


topic_counts = st.dictionaries(
    st.sampled_from(["a", "b", "c", "d"]), st.integers(0, 12), min_size=1
)


@settings(max_examples=150, deadline=None)
@given(topic_counts, st.integers(1, 7), st.sampled_from(ALL))
def test_every_partition_assigned_exactly_once(
    counts: dict[str, int], n: int, assignor: Assignor
) -> None:
    out = flat(assignor.assign(counts, members(n, sorted(counts))))
    check_complete(counts, out)


@settings(max_examples=150, deadline=None)
@given(
    topic_counts,
    st.integers(1, 7),
    st.sampled_from([RoundRobinAssignor(), StickyAssignor(), CooperativeStickyAssignor()]),
)
def test_balanced_within_one(counts: dict[str, int], n: int, assignor: Assignor) -> None:
    out = flat(assignor.assign(counts, members(n, sorted(counts))))
    loads = [len(v) for v in out.values()]
    assert max(loads) - min(loads) <= 1


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["a", "b", "c"]), st.integers(1, 10), min_size=1),
    st.lists(st.sets(st.sampled_from(["a", "b", "c"]), min_size=1), min_size=1, max_size=6),
)
def test_sticky_mixed_subscriptions_complete(counts: dict[str, int], subs: list[set[str]]) -> None:
    ms = [MemberInfo(f"m{i}", Subscription(tuple(sorted(s)))) for i, s in enumerate(subs)]
    out = flat(StickyAssignor().assign(counts, ms))
    for m in ms:
        assert all(tp.topic in m.subscription.topics for tp in out[m.member_id])
    subscribed = {t: n for t, n in counts.items() if any(t in s for s in subs)}
    check_complete(subscribed, out)


def _sticky_round(
    assignor: Assignor,
    counts: dict[str, int],
    ids: list[str],
    owned: Mapping[str, list[TP]],
    gen: int,
) -> dict[str, list[TP]]:
    ms = [
        MemberInfo(mid, Subscription(tuple(sorted(counts)), None, tuple(owned.get(mid, ())), gen))
        for mid in ids
    ]
    return flat(assignor.assign(counts, ms))


@settings(max_examples=100, deadline=None)
@given(topic_counts, st.integers(1, 6), st.integers(0, 5), st.booleans())
def test_sticky_minimal_movement(counts: dict[str, int], n: int, victim: int, join: bool) -> None:
    assignor = StickyAssignor()
    ids = [f"m{i}" for i in range(n)]
    first = _sticky_round(assignor, counts, ids, {}, 1)
    if join:
        new_ids = [*ids, "new"]
    else:
        if n == 1:
            return
        new_ids = [mid for i, mid in enumerate(ids) if i != victim % n]
    second = _sticky_round(assignor, counts, new_ids, first, 2)
    check_complete(counts, second)
    total = sum(counts.values())
    floor = total // len(new_ids)
    for mid in new_ids:
        if mid in first:
            kept = len(set(first[mid]) & set(second[mid]))
            # A surviving member keeps everything it owned, up to the new fair share.
            assert kept >= min(len(first[mid]), floor)
    if not join:
        # Only the leaver's partitions move.
        moved = sum(1 for mid in new_ids for tp in second[mid] if tp not in first[mid])
        gone = ids[victim % n]
        assert moved == len(first[gone])


def test_sticky_reads_legacy_user_data() -> None:
    prev = (TP("t", 0), TP("t", 1))
    ms = [
        MemberInfo("b", Subscription(("t",), StickyUserData(prev, 3).encode(), (), -1, None, 0)),
        MemberInfo("a", Subscription(("t",), None, (), -1, None, 0)),
    ]
    out = flat(StickyAssignor().assign({"t": 4}, ms))
    assert set(prev) <= set(out["b"])


def test_sticky_conflict_higher_generation_wins() -> None:
    ms = [
        MemberInfo("a", Subscription(("t",), None, (TP("t", 0),), 1)),
        MemberInfo("b", Subscription(("t",), None, (TP("t", 0),), 2)),
    ]
    out = flat(StickyAssignor().assign({"t": 2}, ms))
    assert out["b"] == [TP("t", 0)]
    assert out["a"] == [TP("t", 1)]


def test_cooperative_two_phase_join() -> None:
    assignor = CooperativeStickyAssignor()
    counts = {"t": 6}
    first = _sticky_round(assignor, counts, ["a", "b"], {}, 1)
    assert sorted(len(v) for v in first.values()) == [3, 3]
    # "c" joins: phase one withholds the partitions that move, the owners keep the rest.
    phase1 = _sticky_round(assignor, counts, ["a", "b", "c"], first, 2)
    assert phase1["c"] == []
    revoked = {mid: set(first[mid]) - set(phase1[mid]) for mid in ("a", "b")}
    assert sum(len(r) for r in revoked.values()) == 2
    for mid in ("a", "b"):
        assert set(phase1[mid]) <= set(first[mid]), "nothing new is assigned in phase one"
    # Phase two: a and b rejoin owning only what they kept; c receives the withheld ones.
    phase2 = _sticky_round(assignor, counts, ["a", "b", "c"], phase1, 3)
    check_complete(counts, phase2)
    assert set(phase2["c"]) == revoked["a"] | revoked["b"]
    assert phase2["a"] == phase1["a"]
    assert phase2["b"] == phase1["b"]


def test_withhold_moving_never_double_owns() -> None:
    target = {"a": [TP("t", 0)], "b": [TP("t", 1), TP("t", 2)]}
    previous = {"a": (1, [TP("t", 0), TP("t", 1)]), "b": (1, [TP("t", 2)])}
    assert withhold_moving(target, previous) == {"a": [TP("t", 0)], "b": [TP("t", 2)]}


def test_resolve_and_protocols() -> None:
    assert [a.name for a in resolve_assignors(["range", RoundRobinAssignor])] == [
        "range",
        "roundrobin",
    ]
    assert [a.name for a in resolve_assignors("cooperative-sticky")] == ["cooperative-sticky"]
    assert rebalance_protocol(resolve_assignors("cooperative-sticky")) is (
        RebalanceProtocol.COOPERATIVE
    )
    assert rebalance_protocol(resolve_assignors(["cooperative-sticky", "range"])) is (
        RebalanceProtocol.EAGER
    )
    with pytest.raises(ConfigError):
        resolve_assignors("bogus")
    with pytest.raises(ConfigError):
        resolve_assignors([])
    with pytest.raises(ConfigError):
        resolve_assignors(["range", "range"])
