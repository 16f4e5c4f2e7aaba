"""pytest plugin: real Kafka brokers as fixtures.

Opt-in: installing kafka-async-client does not change anybody's pytest runs. A test suite
asks for the plugin with ``-p kafka_async.testing.plugin`` (on the command line or in
``addopts``), or with ``pytest_plugins = ["kafka_async.testing.plugin"]`` in its top-level
conftest.py; then these fixtures are available:

Choosing the broker for the whole run: ``--kafka-broker=apache|tansu`` (or the environment
variable ``KAFKA_ASYNC_BROKER``). When neither is given the run gets Apache Kafka wherever a
Java 17+ is found (the reference broker), else the embedded Tansu of the ``[broker]`` extra,
with one header line saying which answers Tansu bends. pytest's header names the
distribution (``kafka-async-client``), the broker's kind and version. ``$KAFKA_BOOTSTRAP_SERVERS``
(any Kafka-compatible broker you run) and ``KAFKA_TESTCONTAINERS=1`` still win over both.

``kafka_service`` (session scope) -> :class:`KafkaService`
    The run's broker: ``kind`` ("apache", "tansu" or "external"), ``version``,
    ``bootstrap_servers``, the advertised APIs, and for Apache Kafka the
    :class:`~kafka_async.testing.apache.ApacheKafka` itself (``handle``: its TLS files, SASL
    listeners, ``kill_node`` ...). The Apache broker of a run opens every listener of
    ``ApacheKafka(security=True)``, so security tests share it.

``kafka_broker`` (session scope) -> ``str``
    ``kafka_service.bootstrap_servers``.

``@pytest.mark.requires_api("DeleteRecords", min_version=0)``
    Runs the test only where the run's broker advertises the API (ApiVersions); elsewhere the
    test is skipped with what kafka_async and librdkafka each saw in ApiVersions.

``apache_kafka`` (function scope) -> :class:`~kafka_async.testing.apache.ApacheKafka`
    A fresh single-node Apache Kafka of the test's own, to kill and restart at will (about
    five seconds to start). Skipped with one line where Java or Maven is missing.

``apache_cluster`` (function scope) -> :class:`~kafka_async.testing.apache.ApacheKafka`
    A three-node Apache Kafka cluster (combined broker+controller nodes, replication factor
    3, ``FAST_FAILOVER`` settings: a dead node is fenced within 3 s) shared by the whole
    session and handed to each test whole: nodes an earlier test killed or stopped are
    started again and every partition is back in sync first. Kill, stop and restart nodes at
    will (``kill_node``, ``stop_node``, ``restart_node``, ``leader_of``, ``coordinator_of``).

``apache_cluster_factory`` (function scope) -> ``Callable[..., ApacheKafka]``
    ``make(nodes=3, **ApacheKafka_kwargs)`` starts a cluster of the test's own (for tests
    that must change broker settings or break the cluster beyond repair); every cluster it
    made is stopped after the test. The session's cluster is stopped first
    (:func:`stop_session_cluster`; ``apache_cluster`` starts a fresh one when asked again).

``embedded_broker`` (function scope) -> ``EmbeddedBroker``
    A fresh, started, in-memory Tansu broker of the test's own, to ``kill()``, ``restart()``
    or ``stop()`` at will; stopped after the test.

``durable_broker`` (function scope) -> ``EmbeddedBroker``
    Like ``embedded_broker`` but S3-backed (local moto server): data survives ``kill()`` +
    ``restart()``.

``proxied_broker`` (function scope) -> ``ProxiedBroker``
    A fresh in-memory broker that advertises a :class:`~kafka_async.testing.FaultProxy`
    running in a thread: bootstrap from ``proxied_broker.bootstrap_servers`` (the proxy) and
    inject faults with ``proxied_broker.proxy.set_delay(...)`` etc.; ``proxied_broker.broker``
    is the ``EmbeddedBroker``. Parametrize it indirectly with a dict of ``EmbeddedBroker``
    arguments, e.g. ``{"durable": True}``, for a durable one.

``new_topic`` (function scope) -> ``Callable[..., str]``
    A factory: ``new_topic(partitions=1, *, prefix="t", configs=None) -> name`` creates a
    topic with a unique name on ``kafka_broker`` and waits until every partition has a
    leader.

When a test that used one of these brokers fails, the last lines of that broker's log are added
to its failure report (section "kafka_async broker log").

With ``CI=true`` in the environment, a missing prerequisite (Java, Maven, the Maven registry)
fails the tests that need it instead of skipping them: :func:`skip_or_fail` is the one place
that decides, and test suites use it for their own prerequisites too (``importorskip_or_fail``
for a module; both work at module level, where a test module checks on import).

Nothing heavy is imported until a fixture is used, so the plugin costs test suites that do not
use it nothing.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

if TYPE_CHECKING:
    from .apache import ApacheKafka
    from .broker import EmbeddedBroker
    from .proxy import ProxiedBroker

_TOPIC_COUNTER = itertools.count()
#: The session's own broker, when kafka_service started one (for failure reports).
_SESSION_BROKER: list[EmbeddedBroker | ApacheKafka] = []
#: The session's three-node cluster, once apache_cluster started it (for failure reports).
_SESSION_CLUSTER: list[ApacheKafka] = []
_LOG_LINES = 40
BROKER_KINDS = ("tansu", "apache")
_ENV_BROKER = "KAFKA_ASYNC_BROKER"
#: The distribution's name on PyPI (the import package is ``kafka_async``).
_DIST = "kafka-async-client"
#: The broker kind picked when none was chosen, and why Tansu when it is Tansu.
_AUTO_KIND = pytest.StashKey[tuple[str, "str | None"]]()


def in_ci() -> bool:
    """True when ``CI`` is set to a true value (``CI=true`` on every CI service)."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def skip_or_fail(reason: str) -> NoReturn:
    """Skip the test for a missing prerequisite; with ``CI=true`` fail it instead.

    On a user's machine a missing Java or stunnel is a fact to report in one line; in CI,
    where the project's own files install everything, it is a broken install step.
    """
    if in_ci():
        pytest.fail(f"CI=true and a prerequisite is missing: {reason}", pytrace=False)
    # Allowed at module level too, where a test module checks its prerequisites on import.
    pytest.skip(reason, allow_module_level=True)


def importorskip_or_fail(module: str, reason: str | None = None) -> Any:
    """``pytest.importorskip`` for a prerequisite: the module, or :func:`skip_or_fail`."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        skip_or_fail(reason or f"cannot import {module}: {exc}")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kafka_async", "kafka_async brokers")
    group.addoption(
        "--kafka-broker",
        choices=BROKER_KINDS,
        default=None,
        help=f"the broker of the run: apache (Apache Kafka from Maven Central) or tansu "
        f"(embedded); default ${_ENV_BROKER}, else apache where Java 17+ is found, else tansu",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "requires_api(api, min_version=0): run only where the broker advertises the API",
    )


def chosen_kind(config: pytest.Config) -> str:
    """``external``, ``testcontainers``, or the broker kind of the run.

    When none is chosen (no ``--kafka-broker``, no ``$KAFKA_ASYNC_BROKER``) the run gets
    Apache Kafka where a Java 17+ is found, else Tansu, and the header says what Tansu bends.
    """
    if os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "").strip():
        return "external"
    if os.environ.get("KAFKA_TESTCONTAINERS", "").strip() in ("1", "true", "yes"):
        return "testcontainers"
    kind = config.getoption("kafka_broker") or os.environ.get(_ENV_BROKER, "").strip()
    if not kind:
        from .apache import choose_broker_kind

        cached = config.stash.get(_AUTO_KIND, None)
        if cached is None:
            cached = choose_broker_kind()
            config.stash[_AUTO_KIND] = cached
        return cached[0]
    if kind not in BROKER_KINDS:
        raise pytest.UsageError(f"{_ENV_BROKER}={kind!r}: expected one of {BROKER_KINDS}")
    return str(kind)


def _tansu_fallback(config: pytest.Config) -> str | None:
    """Why the run fell back to Tansu (no Java 17+), or None when Tansu was chosen."""
    cached = config.stash.get(_AUTO_KIND, None)
    return cached[1] if cached is not None else None


def _tansu_version() -> str:
    from .broker import tansu_version

    return tansu_version()


def _dist_version() -> str:
    try:
        from importlib.metadata import version

        return version(_DIST)
    except Exception:  # a source tree that is not installed
        from .. import __version__

        return f"{__version__} (not installed)"


def pytest_report_header(config: pytest.Config) -> list[str]:
    kind = chosen_kind(config)
    who = f"{_DIST} {_dist_version()}"
    if kind == "apache":
        from .apache import cache_root, default_mode, default_version

        version = default_version()
        shape = (
            "KRaft, 1 combined node"
            if default_mode(version) == "kraft"
            else "ZooKeeper mode, 1 broker and 1 ZooKeeper"
        )
        return [
            f"{who}: broker Apache Kafka {version} ({shape}, "
            f"from Maven Central; jars cached in {cache_root() / 'apache-kafka'})"
        ]
    if kind == "tansu":
        from .broker import TANSU_BENDS

        why = _tansu_fallback(config)
        return [
            f"{who}: broker Tansu {_tansu_version()} (embedded, in-memory)",
            f"{who}: {'no Java 17+ for Apache Kafka, so ' if why else ''}{TANSU_BENDS}",
        ]
    if kind == "external":
        return [f"{who}: broker external at {os.environ['KAFKA_BOOTSTRAP_SERVERS']}"]
    return [f"{who}: broker testcontainers KafkaContainer"]


@dataclass
class KafkaService:
    """The run's broker: what it is and where it listens."""

    #: ``"apache"``, ``"tansu"``, ``"external"`` or ``"testcontainers"``.
    kind: str
    #: The broker's version as far as it is known (``"4.1.1"``, ``"0.6.0"``, ``"?"``).
    version: str
    #: Bootstrap servers of its PLAINTEXT listener.
    bootstrap_servers: str
    #: The broker object when this run started it.
    handle: ApacheKafka | EmbeddedBroker | None = None
    _apis: dict[int, tuple[int, int]] | None = field(default=None, repr=False)

    @property
    def apache(self) -> ApacheKafka:
        """The :class:`ApacheKafka` of the run (skips the test on any other broker)."""
        from .apache import ApacheKafka

        if not isinstance(self.handle, ApacheKafka):
            pytest.skip(f"needs the run's broker to be Apache Kafka; it is {self.kind}")
        return self.handle

    def apis(self) -> dict[int, tuple[int, int]]:
        """Advertised API key -> (min, max) version (asked once)."""
        if self._apis is None:
            from .capabilities import advertised_apis

            self._apis = advertised_apis(self.bootstrap_servers)
        return self._apis

    def supports(self, api: str | int, min_version: int = 0) -> bool:
        """True when the broker advertises ``api`` at ``min_version`` or newer."""
        from .capabilities import api_key_of

        have = self.apis().get(api_key_of(api))
        return have is not None and have[1] >= min_version


def _testcontainers_kafka() -> Iterator[str]:
    try:
        import docker  # type: ignore[import-untyped]
        from testcontainers.community.kafka import KafkaContainer
    except ImportError as exc:
        pytest.skip(f"KAFKA_TESTCONTAINERS=1 but testcontainers is not installed: {exc}")
    try:
        docker.from_env().ping()
    except Exception as exc:  # any failure to reach Docker means: skip, with the reason
        pytest.skip(f"KAFKA_TESTCONTAINERS=1 but Docker is not reachable: {exc}")
    image = os.environ.get("KAFKA_TESTCONTAINERS_IMAGE", "confluentinc/cp-kafka:7.6.0")
    # KRaft: one container, no ZooKeeper, as on current Kafka.
    container = KafkaContainer(image).with_kraft()
    with container:
        yield str(container.get_bootstrap_server())


def _start_apache(**kwargs: Any) -> ApacheKafka:
    """A started ApacheKafka, or a skip (a failure with CI=true) when Java/Maven are missing."""
    from .apache import ApacheKafka, KafkaPrerequisiteError

    kafka = ApacheKafka(**kwargs)
    try:
        return kafka.start()
    except KafkaPrerequisiteError as exc:
        skip_or_fail(f"Apache Kafka cannot run here: {exc}")


@pytest.fixture(scope="session")
def kafka_service(request: pytest.FixtureRequest) -> Iterator[KafkaService]:
    """The run's broker (see the module docstring)."""
    kind = chosen_kind(request.config)
    if kind == "external":
        yield KafkaService("external", "?", os.environ["KAFKA_BOOTSTRAP_SERVERS"].strip())
        return
    if kind == "testcontainers":
        for servers in _testcontainers_kafka():
            yield KafkaService("testcontainers", "?", servers)
        return
    if kind == "apache":
        kafka = _start_apache(security=True)
        _SESSION_BROKER.append(kafka)
        try:
            yield KafkaService("apache", kafka.version, kafka.bootstrap_servers, kafka)
        finally:
            _SESSION_BROKER.remove(kafka)
            kafka.stop()
        return
    from .broker import EmbeddedBroker

    with EmbeddedBroker() as broker:
        _SESSION_BROKER.append(broker)
        try:
            yield KafkaService("tansu", _tansu_version(), broker.bootstrap_servers, broker)
        finally:
            _SESSION_BROKER.remove(broker)


@pytest.fixture(scope="session")
def kafka_broker(kafka_service: KafkaService) -> str:
    """Bootstrap servers of the run's broker (see the module docstring)."""
    return kafka_service.bootstrap_servers


@pytest.fixture(autouse=True)
def _kafka_requires_api(request: pytest.FixtureRequest) -> None:
    """Skip a ``requires_api``-marked test where the broker does not advertise the API."""
    markers = list(request.node.iter_markers("requires_api"))
    if not markers:
        return
    service: KafkaService = request.getfixturevalue("kafka_service")
    from .capabilities import describe_gap

    for marker in markers:
        api = marker.args[0] if marker.args else marker.kwargs["api"]
        min_version = int(
            marker.kwargs.get("min_version", (marker.args[1:2] and marker.args[1]) or 0)
        )
        gap = describe_gap(service.bootstrap_servers, api, min_version, service.apis())
        if gap is not None:
            pytest.skip(f"{service.kind} {service.version}: {gap}")


@pytest.fixture
def apache_kafka() -> Iterator[ApacheKafka]:
    """A fresh single-node Apache Kafka for this test only (PLAINTEXT listener)."""
    kafka = _start_apache()
    try:
        yield kafka
    finally:
        kafka.stop()


def _start_cluster(nodes: int = 3, **kwargs: Any) -> ApacheKafka:
    from .apache import FAST_FAILOVER

    config = {**FAST_FAILOVER, **kwargs.pop("broker_config", {})}
    return _start_apache(nodes=nodes, broker_config=config, **kwargs)


@pytest.fixture(scope="session")
def _apache_cluster_session() -> Iterator[ApacheKafka]:
    kafka = _start_cluster()
    _SESSION_CLUSTER.append(kafka)
    try:
        yield kafka
    finally:
        _SESSION_CLUSTER.remove(kafka)
        kafka.stop()


def start_cluster(nodes: int = 3, **kwargs: Any) -> ApacheKafka:
    """A cluster of the caller's own (``ApacheKafka`` arguments, with ``FAST_FAILOVER``
    settings), after stopping the session's (:func:`stop_session_cluster`); the caller
    stops it. For module-scoped fixtures; tests use ``apache_cluster_factory``."""
    stop_session_cluster()
    return _start_cluster(nodes, **kwargs)


def stop_session_cluster() -> None:
    """Stop the session's three-node cluster if it runs (one cluster at a time on a small
    machine: a test starting a cluster of its own calls this first); ``apache_cluster``
    starts it again, fresh, when a later test asks for it."""
    for kafka in _SESSION_CLUSTER:
        if kafka.running:
            kafka.stop()


@pytest.fixture
def apache_cluster(_apache_cluster_session: ApacheKafka) -> ApacheKafka:
    """The session's three-node cluster, every node running and every partition in sync."""
    kafka = _apache_cluster_session
    if not kafka.running:
        kafka.start()  # stopped for a cluster of another test's own: a fresh one
    kafka.start_stopped()
    kafka.wait_in_sync(timeout=90.0)
    return kafka


@pytest.fixture
def apache_cluster_factory() -> Iterator[Callable[..., ApacheKafka]]:
    """Start clusters of the test's own (``make(nodes=3, **kwargs)``); stopped afterwards."""
    made: list[ApacheKafka] = []

    def make(nodes: int = 3, **kwargs: Any) -> ApacheKafka:
        stop_session_cluster()
        kafka = _start_cluster(nodes, **kwargs)
        made.append(kafka)
        return kafka

    try:
        yield make
    finally:
        for kafka in made:
            kafka.stop()


@pytest.fixture
def embedded_broker() -> Iterator[EmbeddedBroker]:
    """A fresh in-memory Tansu broker for this test only."""
    from .broker import EmbeddedBroker

    with EmbeddedBroker() as broker:
        yield broker


@pytest.fixture
def durable_broker() -> Iterator[EmbeddedBroker]:
    """A fresh S3-backed (moto) Tansu broker for this test only; skipped (failed with
    ``CI=true``) with one line naming moto where ``moto[server]`` is not installed."""
    from .broker import BrokerPrerequisiteError, EmbeddedBroker

    broker = EmbeddedBroker(durable=True)
    try:
        broker.start()
    except BrokerPrerequisiteError as exc:
        skip_or_fail(f"durable_broker cannot run here: {exc}")
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture
def proxied_broker(request: pytest.FixtureRequest) -> Iterator[ProxiedBroker]:
    """A fresh broker behind a threaded FaultProxy (see the module docstring)."""
    from .proxy import start_proxied_broker

    kwargs = dict(getattr(request, "param", None) or {})
    pb = start_proxied_broker(**kwargs)
    try:
        yield pb
    finally:
        pb.close()


@pytest.fixture
def new_topic(kafka_broker: str) -> Callable[..., str]:
    """Factory creating uniquely named topics on ``kafka_broker``."""
    from .topics import create_topic

    def make(
        partitions: int = 1,
        *,
        prefix: str = "t",
        configs: Mapping[str, str] | None = None,
    ) -> str:
        name = f"{prefix}-{uuid.uuid4().hex[:10]}-{next(_TOPIC_COUNTER)}"
        create_topic(kafka_broker, name, partitions, configs=configs)
        return name

    return make


#: Seconds past a test's pytest-timeout deadline after which the watchdog ends the run
#: (``$KAFKA_ASYNC_WATCHDOG_GRACE`` overrides it).
WATCHDOG_GRACE = 90.0


def _test_deadline(item: pytest.Item) -> float | None:
    marker = item.get_closest_marker("timeout")
    if marker is not None and marker.args:
        return float(marker.args[0]) or None
    try:
        value = item.config.getini("timeout")
    except ValueError:  # pytest-timeout is not installed: no deadline to back up
        return None
    return float(value) if value else None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    """Back up pytest-timeout: a test still running ``WATCHDOG_GRACE`` s after its deadline
    ends the whole run with every thread's stack.

    pytest-timeout interrupts the test's main thread; an event loop then cancels the test's
    tasks and waits for them. A task that ignores cancellation would make that wait, and the
    run, last forever: CI's budget is better spent failing loudly.
    """
    deadline = _test_deadline(item)
    if deadline is None:
        yield
        return
    import faulthandler
    import sys
    import threading

    def expire() -> None:
        # Output capture would swallow what follows: give the terminal back first (the run
        # ends here, so no test's capture is needed any more).
        capture = item.config.pluginmanager.getplugin("capturemanager")
        if capture is not None:
            with contextlib.suppress(Exception):
                capture.suspend_global_capture(in_=False)
        sys.stderr.write(
            f"\nkafka_async watchdog: {item.nodeid} still runs {grace:.0f} s after "
            f"its {deadline:.0f} s timeout; ending the run. Stacks:\n"
        )
        faulthandler.dump_traceback(all_threads=True)
        sys.stderr.flush()
        os._exit(3)

    grace = float(os.environ.get("KAFKA_ASYNC_WATCHDOG_GRACE", "") or WATCHDOG_GRACE)
    timer = threading.Timer(deadline + grace, expire)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Attach the log tail of the brokers a failed test used to its report."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if not report.failed:
        return
    funcargs = getattr(item, "funcargs", {})
    brokers: list[tuple[str, EmbeddedBroker | ApacheKafka]] = []
    from .apache import ApacheKafka
    from .broker import EmbeddedBroker  # lazy: only when a test failed

    # A user's own fixture may reuse these names for something else: only attach the log of
    # what really is one of our brokers, never fail the report over it.
    for name in ("embedded_broker", "durable_broker", "apache_kafka"):
        if isinstance(funcargs.get(name), EmbeddedBroker | ApacheKafka):
            brokers.append((name, funcargs[name]))
    proxied = getattr(funcargs.get("proxied_broker"), "broker", None)
    if isinstance(proxied, EmbeddedBroker):
        brokers.append(("proxied_broker", proxied))
    if _SESSION_BROKER and ({"kafka_broker", "kafka_service"} & set(funcargs)):
        brokers.append(("kafka_broker", _SESSION_BROKER[0]))
    if _SESSION_CLUSTER and "apache_cluster" in funcargs:
        brokers.append(("apache_cluster", _SESSION_CLUSTER[0]))
    for name, broker in brokers:
        where = broker.log_path if isinstance(broker, EmbeddedBroker) else broker.log_path(1)
        report.sections.append(
            (f"kafka_async broker log ({name}: {where})", broker.log_tail(_LOG_LINES))
        )
