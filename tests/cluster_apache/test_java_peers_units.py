"""The pure parts of tests.harness.java_peers: parsing what the Java tools print and
turning the VerifiableProducer's outcomes into a ledger (no broker, no JVM)."""

from __future__ import annotations

from tests.harness.java_peers import (
    NULL,
    ConsoleRecord,
    ProducedRecord,
    _parse_console,
    _value_n,
    java_ledger,
)
from tests.harness.ledger import Observed


def test_console_lines_parse_nulls_headers_and_separators_in_values() -> None:
    line = f"Partition:2|Offset:17|h:one;h:{NULL};n0:|key-1|a b=c|d"
    assert _parse_console(line) == ConsoleRecord(
        2, 17, (("h", "one"), ("h", None), ("n0", "")), "key-1", "a b=c|d"
    )
    assert _parse_console(f"Partition:0|Offset:0|NO_HEADERS|{NULL}|") == ConsoleRecord(
        0, 0, (), None, ""
    )
    assert _parse_console("Processed a total of 3 messages") is None


def test_value_numbers_belong_to_one_prefix() -> None:
    assert _value_n("77.12", 77) == 12
    assert _value_n("78.12", 77) is None
    assert _value_n("77.x", 77) is None
    assert _value_n(None, 77) is None


def _obs(p: int, offset: int, value: str) -> Observed:
    return Observed(p, offset, value.encode())


def test_java_ledger_checks_like_ours() -> None:
    outcomes = [
        ProducedRecord(0, 0, 0, None),
        ProducedRecord(1, 1, 0, None),
        ProducedRecord(2, 0, 1, None),
        ProducedRecord(3, -1, -1, None, "TimeoutException"),  # the tool names no partition
        ProducedRecord(4, 1, 1, None),
    ]
    log = [_obs(0, 0, "5.0"), _obs(1, 0, "5.1"), _obs(0, 1, "5.2"), _obs(1, 1, "5.4")]
    ledger, translate = java_ledger(outcomes, 2, 5, log)
    assert ledger.check(translate(log)).ok
    # Record 2 lost, record 1 written twice, record 3 (failed) present: all counted.
    bad = [_obs(0, 0, "5.0"), _obs(1, 0, "5.1"), _obs(1, 1, "5.1"), _obs(1, 2, "5.3")]
    ledger, translate = java_ledger(outcomes, 2, 5, bad)
    report = ledger.check(translate(bad))
    assert (report.lost, report.duplicated, report.phantom) == (2, 1, 1)
    assert ledger.phantom_errors(translate(bad)) == {"TimeoutException": 1}
    # Another run's values are foreign, not ours to judge.
    assert ledger.check(translate([_obs(0, 0, "6.0")])).foreign == 1


def test_java_ledger_places_failures_of_a_single_partition() -> None:
    # Failures the log does not hold: only a one-partition topic tells where they belong.
    outcomes = [
        ProducedRecord(0, 0, 0, None),
        ProducedRecord(1, -1, -1, None, "TimeoutException"),
        ProducedRecord(2, 0, 1, None),
    ]
    log = [_obs(0, 0, "5.0"), _obs(0, 1, "5.2")]
    ledger, translate = java_ledger(outcomes, 1, 5, log)
    report = ledger.check(translate(log))
    assert (report.produced, report.acked, report.failed) == (3, 2, 1)
    assert report.ok
    ledger, _ = java_ledger([outcomes[0], ProducedRecord(1, -1, -1, None, "X")], 2, 5, log)
    assert ledger.check([]).produced == 1
