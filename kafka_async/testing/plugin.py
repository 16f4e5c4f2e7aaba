"""pytest plugin: real Kafka brokers as fixtures.

Installed with kafka_async (entry point ``pytest11``), so these fixtures are available in any
test suite once the package is installed:

``kafka_broker`` (session scope) -> ``str``
    Bootstrap servers (``"host:port"``) of a real broker, shared by the whole session:

    * ``$KAFKA_BOOTSTRAP_SERVERS`` when set (any Kafka-compatible broker you run);
    * else, with ``KAFKA_TESTCONTAINERS=1``, a Kafka container (KRaft mode) started through
      testcontainers' ``KafkaContainer``: image ``$KAFKA_TESTCONTAINERS_IMAGE`` (a Confluent
      ``cp-kafka`` tag >= 7.0, which that container class scripts) or
      ``confluentinc/cp-kafka:7.6.0``; tests that use it are skipped, with the reason, when
      Docker is not reachable;
    * else an :class:`~kafka_async.testing.EmbeddedBroker` (Tansu, in-memory) started once.

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

Nothing heavy is imported until a fixture is used, so the plugin costs test suites that do not
use it nothing.
"""

from __future__ import annotations

import itertools
import os
import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .broker import EmbeddedBroker
    from .proxy import ProxiedBroker

_TOPIC_COUNTER = itertools.count()
#: The session's embedded broker, when kafka_broker started one (for failure reports).
_SESSION_BROKER: list[EmbeddedBroker] = []
_LOG_LINES = 40


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


@pytest.fixture(scope="session")
def kafka_broker() -> Iterator[str]:
    """Bootstrap servers of a real broker for the whole session (see the module docstring)."""
    external = os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "").strip()
    if external:
        yield external
        return
    if os.environ.get("KAFKA_TESTCONTAINERS", "").strip() in ("1", "true", "yes"):
        yield from _testcontainers_kafka()
        return
    from .broker import EmbeddedBroker

    with EmbeddedBroker() as broker:
        _SESSION_BROKER.append(broker)
        try:
            yield broker.bootstrap_servers
        finally:
            _SESSION_BROKER.remove(broker)


@pytest.fixture
def embedded_broker() -> Iterator[EmbeddedBroker]:
    """A fresh in-memory Tansu broker for this test only."""
    from .broker import EmbeddedBroker

    with EmbeddedBroker() as broker:
        yield broker


@pytest.fixture
def durable_broker() -> Iterator[EmbeddedBroker]:
    """A fresh S3-backed (moto) Tansu broker for this test only."""
    from .broker import EmbeddedBroker

    with EmbeddedBroker(durable=True) as broker:
        yield broker


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


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Attach the log tail of the brokers a failed test used to its report."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if not report.failed:
        return
    funcargs = getattr(item, "funcargs", {})
    brokers: list[tuple[str, EmbeddedBroker]] = []
    from .broker import EmbeddedBroker  # lazy: only when a test failed

    # A user's own fixture may reuse these names for something else: only attach the log of
    # what really is one of our brokers, never fail the report over it.
    for name in ("embedded_broker", "durable_broker"):
        if isinstance(funcargs.get(name), EmbeddedBroker):
            brokers.append((name, funcargs[name]))
    proxied = getattr(funcargs.get("proxied_broker"), "broker", None)
    if isinstance(proxied, EmbeddedBroker):
        brokers.append(("proxied_broker", proxied))
    if "kafka_broker" in funcargs and _SESSION_BROKER:
        brokers.append(("kafka_broker", _SESSION_BROKER[0]))
    for name, broker in brokers:
        report.sections.append(
            (
                f"kafka_async broker log ({name}: {broker.log_path})",
                broker.log_tail(_LOG_LINES),
            )
        )
