"""README.md's supported-broker paragraph is the one ``make compat`` writes from the table.

The claim of which brokers are supported must come from the compatibility table
(docs/compatibility.md), never be written by hand: this checks that the paragraph between
the README's compat-summary markers is what ``tools/compat.py`` renders from the table's data,
and that the rendering counts failures and ignores partial runs.
"""

from __future__ import annotations

from tools import compat


def test_readme_paragraph_is_rendered_from_the_table() -> None:
    rows = list(compat.load_rows().values())
    assert rows, "docs/compatibility.md has no compat-data"
    assert compat.readme_summary() == compat.summary(rows)


def _row(release: str, mode: str = "kraft", failed: int = 0, **kw: object) -> compat.Row:
    return compat.Row(release, mode, "2026-12-07", passed=700, failed=failed, **kw)  # type: ignore[arg-type]


def test_summary_names_the_range_and_every_failure() -> None:
    text = compat.summary(
        [_row("4.4.0"), _row("2.8.2", "zookeeper", failed=2), _row("3.9.1", paths=["t.py"])]
    )
    assert text.startswith("Apache Kafka 2.8 to 4.4.")
    assert "2.8.2 in ZooKeeper mode and 4.4.0 in KRaft mode" in text
    assert "tests failed on 2.8.2 (2)" in text
    assert "3.9.1" not in text  # a partial run proves nothing about the release


def test_summary_without_failures_says_so() -> None:
    text = compat.summary([_row("4.3.1"), _row("4.4.0")])
    assert "no test failed" in text
    assert "failed on" not in text
