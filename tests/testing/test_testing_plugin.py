"""The pytest plugin's fixtures, used directly and through a child pytest run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from kafka_async.protocol.apis import METADATA
from kafka_async.protocol.apis.metadata import MetadataRequest
from kafka_async.testing import EmbeddedBroker, _wire, topic_partitions
from kafka_async.testing.plugin import importorskip_or_fail, skip_or_fail

pytestmark = pytest.mark.integration


def test_kafka_broker_answers(kafka_broker: str) -> None:
    host, _, port = kafka_broker.partition(":")
    assert host
    assert port.isdigit()
    assert _wire.probe(kafka_broker, timeout=5)


def test_new_topic_makes_unique_topics(kafka_broker: str, new_topic: Callable[..., str]) -> None:
    a = new_topic(3)
    b = new_topic(1, prefix="other")
    assert a != b
    assert b.startswith("other-")
    assert topic_partitions(kafka_broker, a) == 3
    assert topic_partitions(kafka_broker, b) == 1


def test_embedded_broker_fixture_is_private(
    kafka_broker: str, embedded_broker: EmbeddedBroker
) -> None:
    assert embedded_broker.running
    assert embedded_broker.bootstrap_servers != kafka_broker
    embedded_broker.restart()
    assert _wire.probe(embedded_broker.bootstrap_servers)


def _run_child_pytest(
    tmp_path: Path, body: str, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_child.py").write_text(textwrap.dedent(body))
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("KAFKA_", "PYTEST_"))}
    full_env.update(env)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-s",
            "-rs",
            "-p",
            "no:cacheprovider",
            "-p",
            "kafka_async.testing.plugin",
            # hypothesis's plugin alone takes seconds to import; the child needs only ours
            "-p",
            "no:hypothesispytest",
            str(tmp_path),
        ],
        cwd=tmp_path,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_env_bootstrap_servers_wins(tmp_path: Path) -> None:
    """A user's own broker via $KAFKA_BOOTSTRAP_SERVERS: kafka_broker and new_topic use it."""
    with EmbeddedBroker() as external:
        out = _run_child_pytest(
            tmp_path,
            f"""
            from kafka_async.testing import topic_partitions

            def test_it(kafka_broker, new_topic):
                assert kafka_broker == "{external.bootstrap_servers}"
                name = new_topic(2, prefix="from-child")
                assert topic_partitions(kafka_broker, name) == 2
                print("TOPIC=" + name)
            """,
            {"KAFKA_BOOTSTRAP_SERVERS": external.bootstrap_servers},
        )
        assert out.returncode == 0, out.stdout + out.stderr
        assert "1 passed" in out.stdout
        resp = _wire.request(
            external.bootstrap_servers, METADATA, MetadataRequest(topics=None), version=1
        )
        names = [t.name or "" for t in resp.topics]
        assert any(n.startswith("from-child-") for n in names), names


def test_testcontainers_without_docker_skips_with_reason(tmp_path: Path) -> None:
    out = _run_child_pytest(
        tmp_path,
        """
        def test_it(kafka_broker):
            raise AssertionError("must not run")
        """,
        # Point Docker at a socket that does not exist so the check fails fast and surely.
        {"KAFKA_TESTCONTAINERS": "1", "DOCKER_HOST": f"unix://{tmp_path}/no-docker.sock"},
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "1 skipped" in out.stdout
    assert "KAFKA_TESTCONTAINERS=1" in out.stdout


def test_plugin_import_is_light() -> None:
    code = (
        "import sys, kafka_async.testing.plugin;"
        "heavy = [m for m in ('kafka_async.testing.broker', 'anyio', 'kafka_async.protocol.schema',"
        " 'testcontainers', 'docker') if m in sys.modules];"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_failure_report_carries_broker_log(tmp_path: Path) -> None:
    out = _run_child_pytest(
        tmp_path,
        """
        def test_fails(embedded_broker):
            embedded_broker.kill()
            embedded_broker.start()
            assert False, "deliberate"
        """,
        {},
    )
    assert out.returncode == 1, out.stdout + out.stderr
    assert "kafka_async broker log (embedded_broker:" in out.stdout
    # The tail shows the harness's start markers: one per start of that broker.
    assert "start #2" in out.stdout


@pytest.mark.parametrize("ci", ["true", "TRUE", "1", "yes"])
def test_skip_or_fail_fails_in_ci(monkeypatch: pytest.MonkeyPatch, ci: str) -> None:
    monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.fail.Exception, match="CI=true and a prerequisite is missing: no X"):
        skip_or_fail("no X")


@pytest.mark.parametrize("ci", [None, "", "false", "0"])
def test_skip_or_fail_skips_elsewhere(monkeypatch: pytest.MonkeyPatch, ci: str | None) -> None:
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.skip.Exception, match=r"^no X$"):
        skip_or_fail("no X")


def test_importorskip_or_fail_returns_the_module(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    assert importorskip_or_fail("json") is json
    with pytest.raises(pytest.fail.Exception, match="cannot import no_such_module_xyz"):
        importorskip_or_fail("no_such_module_xyz")


@pytest.mark.parametrize("ci", ["true", "false"])
@pytest.mark.parametrize("where", ["test", "module"])
def test_skip_or_fail_in_a_child_run(tmp_path: Path, ci: str, where: str) -> None:
    """In a test, and at module level (a module checking its prerequisites on import): a
    skip with the reason on a user's machine, a failed run in CI."""
    if where == "test":
        body = """
        from kafka_async.testing.plugin import skip_or_fail

        def test_it():
            skip_or_fail("stunnel is missing")
        """
    else:
        body = """
        from kafka_async.testing.plugin import importorskip_or_fail

        importorskip_or_fail("no_such_module_xyz", "stunnel is missing")

        def test_it():
            raise AssertionError("must not run")
        """
    out = _run_child_pytest(tmp_path, body, {"CI": ci})
    if ci == "true":
        assert out.returncode != 0, out.stdout + out.stderr
        assert "CI=true and a prerequisite is missing: stunnel is missing" in out.stdout
        assert "skipped" not in out.stdout
    else:
        # 5: "no tests collected", pytest's status when a whole module is skipped.
        assert out.returncode == (0 if where == "test" else 5), out.stdout + out.stderr
        assert "1 skipped" in out.stdout
        assert "stunnel is missing" in out.stdout
