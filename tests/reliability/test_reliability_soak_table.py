"""The soak table: results recorded by scenarios, stored as JSON lines, printed as a table."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness import soak


def test_record_load_and_format(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "results.jsonl"
    monkeypatch.setenv(soak.ENV_VAR, str(path))
    soak.record_result(
        "kill", runs=20, records=1000, lost=3, max_recovery_s=1.234, memory_growth_mb=2.5
    )
    soak.record_result(
        "gap", verdict="broker gap", evidence="librdkafka lost 7 too", extra_field="x"
    )
    soak.record_result("bad", ok=False)
    loaded = soak.load_results(path)
    assert [r.scenario for r in loaded] == ["kill", "gap", "bad"]
    assert loaded[1].extra == {"extra_field": "x"}
    table = soak.format_table(loaded)
    lines = table.splitlines()
    assert lines[0].split()[:2] == ["scenario", "runs"]
    kill = next(line for line in lines if line.startswith("kill"))
    assert kill.split() == ["kill", "20", "1000", "3", "0", "0", "1.23", "s", "2.5", "MB", "pass"]
    assert any(line.rstrip().endswith("broker gap") for line in lines)
    assert any(line.rstrip().endswith("FAIL") for line in lines)
    assert "* gap: librdkafka lost 7 too" in table
    md = soak.format_markdown(loaded, title="# T")
    assert md.startswith("# T\n")
    assert "| kill | 20 | 1000 | 3 |" in md
    assert "cores" in md


def test_print_mode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"scenario": "s1", "runs": 2}\n\n', encoding="utf-8")
    out_md = tmp_path / "out.md"
    assert soak.main(["--print", str(path), "--markdown", str(out_md)]) == 0
    assert "s1" in capsys.readouterr().out
    assert "| s1 | 2 |" in out_md.read_text(encoding="utf-8")
