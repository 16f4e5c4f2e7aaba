"""The ledger checker on synthetic ledgers: every kind of damage is counted, and only it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.harness.ledger import (
    Ledger,
    Observed,
    encode_value,
    parse_value,
)


def _ledger(per_partition: int, partitions: int = 2) -> tuple[Ledger, list[Observed]]:
    """A ledger whose records were all acknowledged, and the clean log that matches it."""
    ledger = Ledger(partitions, run_id="run1")
    log: list[Observed] = []
    for p in range(partitions):
        for offset in range(per_partition):
            seq, value = ledger.next_record(p, size=32)
            ledger.acked(p, seq, offset)
            log.append(Observed(p, offset, value))
    return ledger, log


def test_value_round_trip_and_padding() -> None:
    value = encode_value("abc", 3, 42, size=64)
    assert len(value) == 64
    assert parse_value(value) == ("abc", 3, 42)
    assert parse_value(b"garbage") is None
    assert parse_value(None) is None
    assert parse_value(b"KAL1|r|x|1|") is None
    with pytest.raises(ValueError):
        encode_value("a|b", 0, 0)


def test_clean_log_is_ok() -> None:
    ledger, log = _ledger(5)
    report = ledger.check(log)
    assert report.ok, report.summary()
    assert (report.acked, report.present, report.lost) == (10, 10, 0)


def test_lost_record() -> None:
    ledger, log = _ledger(5)
    del log[2]
    report = ledger.check(log)
    assert not report.ok
    assert report.lost == 1
    assert report.examples["lost"] == [(0, 2)]
    assert report.duplicated == report.reordered == report.phantom == 0


def test_duplicate_record() -> None:
    ledger, log = _ledger(3)
    log.append(Observed(0, 3, log[1].value))  # seq 1 written again at offset 3
    report = ledger.check(log)
    assert report.duplicated == 1
    assert report.lost == 0
    assert report.reordered == 0
    assert not report.ok


def test_same_offset_read_twice_is_not_a_duplicate() -> None:
    # A reader that re-fetches after a reconnect may hand out one record twice; the log
    # still holds it once.
    ledger, log = _ledger(3)
    log.append(log[1])
    assert ledger.check(log).ok


def test_reordered_records() -> None:
    ledger, log = _ledger(4, partitions=1)
    # Swap the values at offsets 1 and 2 (seq 2 written before seq 1).
    log[1], log[2] = Observed(0, 1, log[2].value), Observed(0, 2, log[1].value)
    report = ledger.check(log)
    assert report.reordered == 1
    assert report.offset_mismatch == 2  # the acks said otherwise
    assert not report.ok


def test_reorder_across_partitions_is_not_counted() -> None:
    ledger, log = _ledger(3)
    assert ledger.check(reversed(log)).ok  # interleaving/reader order does not matter


def test_phantom_record() -> None:
    ledger = Ledger(1, run_id="r")
    seq, value = ledger.next_record(0)
    ledger.failed(0, seq, TimeoutError("gave up"))
    report = ledger.check([Observed(0, 0, value)])
    assert report.phantom == 1
    assert not report.ok
    assert ledger.failures() == {"TimeoutError": 1}


def test_failed_and_absent_is_fine_and_pending_is_neither() -> None:
    ledger = Ledger(1, run_id="r")
    s0, _ = ledger.next_record(0)
    ledger.failed(0, s0, "boom")
    _s1, v1 = ledger.next_record(0)  # never resolved; present
    ledger.next_record(0)  # never resolved; absent
    report = ledger.check([Observed(0, 0, v1)])
    assert report.ok, report.summary()
    assert report.unresolved == 2
    assert report.failed == 1
    assert report.present == 1


def test_misrouted_unknown_and_foreign() -> None:
    ledger, log = _ledger(2)
    log.append(Observed(1, 2, encode_value("run1", 0, 99)))  # never reserved
    log.append(Observed(1, 3, encode_value("other-run", 0, 0)))  # another run
    log.append(Observed(1, 4, b"not a ledger record"))
    wrong = Observed(0, 2, log[2].value)  # partition 1's seq 0 found in partition 0
    log.append(wrong)
    report = ledger.check(log)
    assert report.unknown == 1
    assert report.foreign == 2
    assert report.misrouted == 2  # the unknown one (tagged 0, found in 1) and the moved copy
    assert report.duplicated == 1
    assert not report.ok


def test_ack_without_offset_does_not_count_as_mismatch() -> None:
    ledger = Ledger(1, run_id="r")
    seq, value = ledger.next_record(0)
    ledger.acked(0, seq)  # acks=0: no offset
    assert ledger.check([Observed(0, 17, value)]).ok


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        Ledger(0)
    ledger = Ledger(1)
    with pytest.raises(ValueError):
        ledger.next_record(1)
    with pytest.raises(KeyError):
        ledger.acked(0, 5, 0)


def test_expected_present_and_counts() -> None:
    ledger = Ledger(2, run_id="r")
    a, _ = ledger.next_record(0)
    b, _ = ledger.next_record(1)
    ledger.next_record(1)
    ledger.acked(0, a, 0)
    ledger.failed(1, b, "x")
    assert ledger.expected_present() == {0: {0}, 1: set()}
    assert ledger.counts() == {"pending": 1, "acked": 1, "failed": 1}
    assert ledger.acked_count() == 1
    assert "r" in repr(ledger)


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(1, 30),
    drops=st.sets(st.integers(0, 29)),
    dups=st.sets(st.integers(0, 29)),
)
def test_counts_match_injected_damage(n: int, drops: set[int], dups: set[int]) -> None:
    """Whatever is dropped is lost, whatever is appended again is duplicated, nothing else."""
    ledger, log = _ledger(n, partitions=1)
    drops = {d for d in drops if d < n}
    dups = {d for d in dups if d < n and d not in drops}
    damaged = [o for o in log if o.offset not in drops]
    next_offset = n
    for d in sorted(dups):
        damaged.append(Observed(0, next_offset, log[d].value))
        next_offset += 1
    report = ledger.check(damaged)
    assert report.lost == len(drops)
    assert report.duplicated == len(dups)
    assert report.reordered == 0
    assert report.phantom == 0
    assert report.ok == (not drops and not dups)


def test_lost_offsets_reused() -> None:
    ledger = Ledger(1, run_id="r")
    s0, v0 = ledger.next_record(0)
    s1, _v1 = ledger.next_record(0)
    s2, v2 = ledger.next_record(0)
    s3, _v3 = ledger.next_record(0)
    for s, off in ((s0, 0), (s1, 1), (s2, 2), (s3, -1)):
        ledger.acked(0, s, off)
    # seq 1 lost and its offset 1 now holds seq 2; seq 3 lost without a known offset.
    log = [Observed(0, 0, v0), Observed(0, 1, v2)]
    assert ledger.lost_offsets_reused(log) == (1, 1)
    assert ledger.acked_offset(0, s2) == 2
    # Nothing at the lost record's offset: not reused.
    assert ledger.lost_offsets_reused([Observed(0, 0, v0), Observed(0, 2, v2)]) == (1, 0)


def test_lost_in_offset_holes() -> None:
    """A run of lost records in a hole of exactly its size between present neighbours is
    the broker's; a hole of another size, an occupied hole or a lost tail is not proven."""
    ledger, log = _ledger(10, partitions=1)
    # Seqs 3..5 missing, their offsets 3..5 empty, seq 6 at offset 6: proven.
    holed = [o for o in log if o.offset not in (3, 4, 5)]
    assert ledger.check(holed).lost == 3
    assert ledger.lost_in_offset_holes(holed) == 3
    # The same records lost but the log shifted (no hole left): not proven.
    shifted = [o if o.offset < 3 else Observed(0, o.offset - 3, o.value) for o in holed]
    assert ledger.lost_in_offset_holes(shifted) == 0
    # A foreign record in the hole: not proven.
    occupied = [*holed, Observed(0, 4, b"someone else")]
    assert ledger.lost_in_offset_holes(occupied) == 0
    # A lost tail has no neighbour after it: not proven.
    tail = [o for o in log if o.offset < 8]
    assert ledger.check(tail).lost == 2
    assert ledger.lost_in_offset_holes(tail) == 0
    # Nothing lost: nothing to prove.
    assert ledger.lost_in_offset_holes(log) == 0
