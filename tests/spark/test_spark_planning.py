"""Offset planning of the Spark source: exact coverage, splitting, rate limits, data loss."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_async.errors import ConfigError
from kafka_async.spark.planning import (
    DataLossError,
    OffsetRange,
    check_batch_ends,
    check_starts,
    plan_ranges,
    rate_limit,
    resolve_spec,
    resolve_timestamps,
    split_range,
)
from kafka_async.structs import TopicPartition as TP

A0, A1, B0 = TP("a", 0), TP("a", 1), TP("b", 0)


@st.composite
def start_end_maps(draw: st.DrawFn) -> tuple[dict[TP, int], dict[TP, int]]:
    n = draw(st.integers(min_value=0, max_value=6))
    starts: dict[TP, int] = {}
    ends: dict[TP, int] = {}
    for i in range(n):
        tp = TP(draw(st.sampled_from(["x", "y"])), i)
        s = draw(st.integers(min_value=0, max_value=10**12))
        starts[tp] = s
        ends[tp] = s + draw(st.integers(min_value=0, max_value=5000))
    return starts, ends


def _covered(ranges: list[OffsetRange]) -> dict[TP, list[tuple[int, int]]]:
    out: dict[TP, list[tuple[int, int]]] = {}
    for r in ranges:
        out.setdefault(r.topic_partition, []).append((r.start, r.end))
    return out


@given(
    start_end_maps(),
    st.one_of(st.none(), st.integers(min_value=1, max_value=64)),
    st.one_of(st.none(), st.integers(min_value=1, max_value=3000)),
)
def test_plan_covers_every_offset_exactly_once(
    maps: tuple[dict[TP, int], dict[TP, int]], min_parts: int | None, max_recs: int | None
) -> None:
    starts, ends = maps
    ranges = plan_ranges(starts, ends, min_partitions=min_parts, max_records_per_partition=max_recs)
    covered = _covered(ranges)
    for tp in ends:
        pieces = sorted(covered.get(tp, []))
        if ends[tp] == starts[tp]:
            assert pieces == []  # no task for an empty partition
            continue
        # contiguous, non-empty, non-overlapping, from start to end
        assert pieces[0][0] == starts[tp]
        assert pieces[-1][1] == ends[tp]
        for (_s1, e1), (s2, _e2) in itertools.pairwise(pieces):
            assert e1 == s2
        assert all(e > s for s, e in pieces)
    assert set(covered) <= set(ends)
    total = sum(ends[tp] - starts[tp] for tp in ends)
    assert sum(r.size for r in ranges) == total
    if min_parts is not None and total >= min_parts:
        assert len(ranges) >= min_parts
    if max_recs is not None:
        assert all(r.size <= max_recs for r in ranges)


def test_plan_without_options_is_one_range_per_nonempty_partition() -> None:
    ranges = plan_ranges({A0: 5, A1: 7, B0: 3}, {A0: 10, A1: 7, B0: 4})
    assert ranges == [OffsetRange("a", 0, 5, 10), OffsetRange("b", 0, 3, 4)]


def test_min_partitions_splits_in_proportion_to_size() -> None:
    ranges = plan_ranges({A0: 0, A1: 0}, {A0: 300, A1: 100}, min_partitions=4)
    sizes = [(r.partition, r.size) for r in ranges]
    assert sizes == [(0, 100), (0, 100), (0, 100), (1, 100)]


def test_min_partitions_not_applied_when_already_enough_ranges() -> None:
    ranges = plan_ranges({A0: 0, A1: 0, B0: 0}, {A0: 10, A1: 10, B0: 10}, min_partitions=2)
    assert len(ranges) == 3


def test_split_range_sizes_differ_by_at_most_one() -> None:
    pieces = split_range(OffsetRange("t", 0, 10, 20), 3)
    assert [(p.start, p.end) for p in pieces] == [(10, 13), (13, 16), (16, 20)]
    assert split_range(OffsetRange("t", 0, 10, 12), 5) == [
        OffsetRange("t", 0, 10, 11),
        OffsetRange("t", 0, 11, 12),
    ]


def test_plan_requires_a_start_for_every_end() -> None:
    with pytest.raises(ValueError, match="no start offset"):
        plan_ranges({}, {A0: 3})


@given(
    st.lists(st.tuples(st.integers(0, 10**9), st.integers(0, 10**5)), min_size=1, max_size=8),
    st.one_of(st.none(), st.integers(min_value=1, max_value=10**6)),
)
def test_rate_limit_admits_exactly_min_of_limit_and_lag(
    parts: list[tuple[int, int]], limit: int | None
) -> None:
    starts = {TP("t", i): s for i, (s, _lag) in enumerate(parts)}
    latest = {TP("t", i): s + lag for i, (s, lag) in enumerate(parts)}
    ends = rate_limit(starts, latest, limit)
    assert set(ends) == set(latest)
    for tp in latest:
        assert starts[tp] <= ends[tp] <= latest[tp]
    lag = sum(latest[tp] - starts[tp] for tp in latest)
    admitted = sum(ends[tp] - starts[tp] for tp in latest)
    assert admitted == (lag if limit is None else min(limit, lag))


def test_rate_limit_is_proportional_to_lag() -> None:
    ends = rate_limit({A0: 0, A1: 100}, {A0: 900, A1: 200}, 100)
    assert ends == {A0: 90, A1: 110}


def test_rate_limit_small_limit_still_advances() -> None:
    # 1 record over 3 equally lagging partitions: exactly one partition moves.
    ends = rate_limit({A0: 0, A1: 0, B0: 0}, {A0: 10, A1: 10, B0: 10}, 1)
    assert sum(ends.values()) == 1


def test_resolve_spec_earliest_latest_and_json_sentinels() -> None:
    earliest = {A0: 3, A1: 0}
    latest = {A0: 10, A1: 20}
    assert resolve_spec("earliest", [A0, A1], earliest, latest, "o") == {A0: 3, A1: 0}
    assert resolve_spec("latest", [A0, A1], earliest, latest, "o") == {A0: 10, A1: 20}
    assert resolve_spec({A0: -2, A1: -1}, [A0, A1], earliest, latest, "o") == {A0: 3, A1: 20}
    assert resolve_spec({A0: 5, A1: 7}, [A0, A1], earliest, latest, "o") == {A0: 5, A1: 7}


def test_resolve_spec_json_must_name_every_partition() -> None:
    with pytest.raises(ConfigError, match="every partition"):
        resolve_spec({A0: 5}, [A0, A1], {A0: 0, A1: 0}, {A0: 9, A1: 9}, "startingOffsets")


def test_resolve_timestamps_strategy() -> None:
    latest = {A0: 10, A1: 20}
    assert resolve_timestamps({A0: 4, A1: None}, latest, "latest", "o") == {A0: 4, A1: 20}
    with pytest.raises(ConfigError, match="timestamp"):
        resolve_timestamps({A0: 4, A1: None}, latest, "error", "o")


def test_check_starts_data_loss_fails_or_skips() -> None:
    earliest = {A0: 5, A1: 0}
    latest = {A0: 10, A1: 3}
    with pytest.raises(DataLossError, match="deleted"):
        check_starts({A0: 2, A1: 0}, earliest, latest, fail_on_data_loss=True)
    fixed, problems = check_starts({A0: 2, A1: 0}, earliest, latest, fail_on_data_loss=False)
    assert fixed == {A0: 5, A1: 0}
    assert len(problems) == 1
    # start past the end (topic recreated) and a vanished partition
    fixed, problems = check_starts({A0: 7, A1: 9, B0: 1}, earliest, latest, fail_on_data_loss=False)
    assert fixed == {A0: 7, A1: 0}
    assert len(problems) == 2
    with pytest.raises(DataLossError, match="no longer exists"):
        check_starts({B0: 1}, earliest, latest, fail_on_data_loss=True)


def test_check_batch_ends() -> None:
    check_batch_ends({A0: 1}, {A0: 5}, {A0: 5})
    with pytest.raises(ConfigError, match="ends at 5"):
        check_batch_ends({A0: 1}, {A0: 6}, {A0: 5})
    with pytest.raises(ConfigError, match="after ending"):
        check_batch_ends({A0: 4}, {A0: 3}, {A0: 5})
