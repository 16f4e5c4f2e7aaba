"""The package holds the library and the user-facing plugin, not this project's machinery.

The wheel is built from ``kafka_async/``: a harness module or generator put back there would
ship to every user (``tools/dist_check.py`` checks the built wheels against the same list).
The option for this project's own runs lives in ``tests/conftest.py``, not in the plugin.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tools.wheel_contents import FORBIDDEN, HARNESS_MODULES, forbidden_in

ROOT = Path(__file__).resolve().parents[2]


def test_the_package_holds_no_harness_and_no_generator() -> None:
    # Python files only: the protocol definitions stay beside the generated modules in the
    # source tree; pyproject.toml leaves them out of the wheel (dist_check checks that).
    names = [p.relative_to(ROOT).as_posix() for p in (ROOT / "kafka_async").rglob("*.py")]
    assert "kafka_async/testing/plugin.py" in names
    assert forbidden_in(names) == []


def test_the_harness_lives_in_tests() -> None:
    for name in HARNESS_MODULES:
        assert (ROOT / "tests" / "harness" / f"{name}.py").is_file(), name
    for generator in ("generate_protocol", "generate_settings"):
        assert (ROOT / "tools" / f"{generator}.py").is_file(), generator


def _outside_imports(path: Path) -> list[str]:
    """Absolute imports of ``tests``, ``tools`` or ``benchmarks`` in one module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
        else:
            continue
        found += [n for n in names if n.split(".")[0] in ("tests", "tools", "benchmarks")]
    return found


def test_the_package_never_imports_the_harness_or_the_tools() -> None:
    """An installed package has no tests/ or tools/ beside it: importing them would fail for
    every user (the source tree hides that, as the repository's root is on sys.path here)."""
    bad = {
        str(path.relative_to(ROOT)): names
        for path in sorted((ROOT / "kafka_async").rglob("*.py"))
        if (names := _outside_imports(path))
    }
    assert bad == {}
    assert _outside_imports(ROOT / "tests" / "harness" / "java_peers.py")  # the check can see


def test_the_forbidden_list_catches_a_moved_back_module() -> None:
    """The check can fail: a harness module, a generator or a folder below a forbidden one."""
    names = [
        "kafka_async/testing/plugin.py",
        "kafka_async/testing/ledger.py",
        "kafka_async/protocol/generate.py",
        "kafka_async/protocol/definitions/produce.def",
        "tests/harness/ledger.py",
    ]
    assert forbidden_in(names) == names[1:]
    assert "kafka_async/protocol/generate.py" in FORBIDDEN


def _child(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "KAFKA_"))}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_broker_tests_only_deselects_the_tests_without_a_broker() -> None:
    """``--kafka-broker-tests-only`` (tests/conftest.py) keeps only the tests using the run's
    broker: the plugin's broker tests stay, the mutation tests go."""
    out = _child(
        [
            "--collect-only",
            "-q",
            "--kafka-broker-tests-only",
            "-p",
            "no:hypothesispytest",
            "tests/testing/test_testing_plugin.py",
            "tests/testing/test_testing_mutations.py",
        ],
        ROOT,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    collected = [line for line in out.stdout.splitlines() if "::" in line]
    assert "tests/testing/test_testing_plugin.py::test_kafka_broker_answers" in collected
    assert not [line for line in collected if "test_testing_mutations" in line]
    assert "deselected" in out.stdout


def test_the_user_plugin_has_no_option_of_this_projects_runs(tmp_path: Path) -> None:
    """A user's run with the plugin gets the broker options, not ``--kafka-broker-tests-only``."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_child.py").write_text(
        textwrap.dedent(
            """
            def test_options(pytestconfig):
                assert pytestconfig.getoption("kafka_broker") is None
            """
        )
    )
    plugin = ["-p", "kafka_async.testing.plugin", "-p", "no:hypothesispytest"]
    ok = _child([*plugin, "-q", "test_child.py"], tmp_path)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    refused = _child([*plugin, "-q", "--kafka-broker-tests-only", "test_child.py"], tmp_path)
    assert refused.returncode == 4, refused.stdout + refused.stderr  # a usage error
    assert "unrecognized arguments: --kafka-broker-tests-only" in refused.stderr
