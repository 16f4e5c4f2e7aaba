"""Shared test configuration.

Async tests use anyio's pytest plugin (``@pytest.mark.anyio``). ``anyio_backend`` defaults to
asyncio; core integration tests ask for ``anyio_backend_all`` semantics by parametrizing with
``pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])``. The ``kafka_broker`` fixture
(bootstrap servers of a real broker) comes from kafka_async's own pytest plugin.

The project's own harness lives in ``tests/harness`` (not in the wheel) and is imported as
``tests.harness.<module>``: the repository's root is put at the END of ``sys.path``, so an
installed kafka_async (``tools/dist_check.py`` runs these tests against the built wheel)
still wins over the source tree beside it.

``--kafka-broker-tests-only`` (this project's runs, not the user plugin's) deselects the tests
that do not use the run's broker: ``make tansu`` and CI's second run of the integration tests
against another broker. ``--no-embedded-broker-tests`` (``make compat``) deselects the tests
that start an embedded Tansu broker of their own and do not use the run's broker: whatever
release the run names, they test Tansu.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.append(_ROOT)

# Spark (the Spark tests' sessions and the child drivers they start) binds its driver to the
# address SPARK_LOCAL_IP names; without it, to the machine's outward interface.
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


#: Fixtures that mean "this test uses the run's broker".
_BROKER_FIXTURES = frozenset({"kafka_service", "kafka_broker", "new_topic"})
#: Fixtures that start an embedded Tansu broker of the test's own, whatever the run's broker.
_EMBEDDED_FIXTURES = frozenset({"embedded_broker", "durable_broker", "proxied_broker"})


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("kafka_async").addoption(
        "--kafka-broker-tests-only",
        action="store_true",
        default=False,
        help="run only the tests that use the run's broker (kafka_broker, new_topic, ...)",
    )
    parser.getgroup("kafka_async").addoption(
        "--no-embedded-broker-tests",
        action="store_true",
        default=False,
        help="deselect the tests that start an embedded Tansu broker of their own and do not "
        "use the run's broker (make compat: they test Tansu, not the release under test)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    only_broker = config.getoption("kafka_broker_tests_only")
    no_embedded = config.getoption("no_embedded_broker_tests")
    if not (only_broker or no_embedded):
        return
    keep: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        uses_run_broker = bool(names & _BROKER_FIXTURES)
        embedded_only = bool(names & _EMBEDDED_FIXTURES) and not uses_run_broker
        drop = (only_broker and not uses_run_broker) or (no_embedded and embedded_only)
        (dropped if drop else keep).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep
