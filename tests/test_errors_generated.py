"""``kafka_async/errors.py``'s broker-error classes match their table, ``tools/errors.def``.

``tools/generate_errors.py`` writes the classes from the table (``make generate``); a table
edited without regenerating, or a hand edit inside the GENERATED region, fails here. The
generator refuses a malformed table, and the table is checked against the facts Kafka
publishes: every error its message definitions name exists here, and the codes run without
a gap from -1 to the highest one.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_async import errors

ROOT = Path(__file__).resolve().parents[1]
GENERATOR = ROOT / "tools" / "generate_errors.py"
TABLE = ROOT / "tools" / "errors.def"
KAFKA_MESSAGES = ROOT.parent / "shared" / "kafka-protocol-4.1" / "message"


def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(GENERATOR), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _known() -> dict[int, type[errors.BrokerResponseError]]:
    found = {}
    for code in range(-1, 1000):
        cls = errors.for_code(code)
        if cls is not None:
            found[code] = cls
    return found


def test_errors_py_is_up_to_date() -> None:
    result = _run("--check")
    assert result.returncode == 0, result.stderr


def test_check_notices_an_edited_table_and_generate_fixes_it(tmp_path: Path) -> None:
    """The staleness test above can fail; regenerating puts the change where it belongs."""
    table = tmp_path / "errors.def"
    target = tmp_path / "errors.py"
    table.write_text(
        TABLE.read_text().replace(
            "NOT_CONTROLLER NotControllerError retriable", "NOT_CONTROLLER NotControllerError"
        )
    )
    shutil.copy(errors.__file__, target)
    stale = _run("--check", "--table", table, "--target", target)
    assert stale.returncode == 1
    assert "make generate" in stale.stderr
    assert _run("--table", table, "--target", target).returncode == 0
    assert _run("--check", "--table", table, "--target", target).returncode == 0
    text = target.read_text()
    block = text[text.index("class NotControllerError") :].split("\n\n\n", 1)[0]
    assert "retriable" not in block
    assert 'name = "NOT_CONTROLLER"' in block


def test_generated_classes_follow_the_table() -> None:
    rows = [
        line.split() for line in TABLE.read_text().splitlines() if line[:1] not in ("", "#", " ")
    ]
    known = _known()
    assert [int(r[0]) for r in rows] == sorted(known)
    for code_text, name, cls_name, *flags in rows:
        cls = known[int(code_text)]
        assert (cls.__name__, cls.name, cls.code) == (cls_name, name, int(code_text))
        assert cls.__bases__ == (errors.BrokerResponseError,)
        assert cls.__module__ == errors.__name__
        for flag in ("retriable", "invalid_metadata", "invalid_coordinator"):
            assert getattr(cls, flag) is (flag in flags), (cls_name, flag)
        assert cls.__doc__ is not None
        assert cls.__doc__.endswith(f"(code {code_text})")


ENTRY = "3 UNKNOWN_TOPIC_OR_PARTITION UnknownTopicOrPartitionError retriable invalid_metadata\n"


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (ENTRY + "    doc\n" + ENTRY + "    doc\n", "already used"),
        ("5 A AError\n    doc\n3 B BError\n    doc\n", "out of order"),
        ("0 NONE NoneError\n    doc\n", "not an error code"),
        ("3 X XError sometimes\n    doc\n", "unknown flag"),
        ("3 X XError invalid_metadata\n    doc\n", "implies retriable"),
        ("3 X Xerr\n    doc\n", "ending in Error"),
        ("3 lower XError\n    doc\n", "UPPER_SNAKE"),
        ("3 X XError\n", "no docstring"),
        ("    doc\n", "before any entry"),
        ('3 X XError\n    a """ b\n', "may not hold"),
    ],
)
def test_a_malformed_table_is_refused(tmp_path: Path, table: str, message: str) -> None:
    path = tmp_path / "errors.def"
    path.write_text(table)
    result = _run("--check", "--table", path)
    assert result.returncode == 2
    assert message in result.stderr
    assert "errors.def:" in result.stderr


def test_codes_run_without_a_gap() -> None:
    """Kafka numbers its codes consecutively from -1 (0 is "no error"), never reusing one."""
    codes = sorted(_known())
    assert codes == [-1, *range(1, codes[-1] + 1)]
    assert codes[-1] >= 133  # SHARE_SESSION_LIMIT_REACHED, the newest code of Kafka 4.1


@pytest.mark.skipif(not KAFKA_MESSAGES.is_dir(), reason="../shared/kafka-protocol-4.1 absent")
def test_every_error_kafkas_definitions_name_exists() -> None:
    """The error lists in Kafka 4.1's message definitions (``// - NAME (version N+)``)."""
    named: set[str] = set()
    for path in KAFKA_MESSAGES.glob("*.json"):
        named.update(re.findall(r"(?m)^\s*//\s*-\s+([A-Z][A-Z0-9_]+)\b", path.read_text()))
    assert len(named) > 20
    ours = {cls.name for cls in _known().values()}
    assert sorted(named - ours) == []
