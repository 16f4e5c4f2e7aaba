"""What the wheel must not carry: the project's own test harness and its generators.

The wheel is the library and the user-facing, opt-in pytest plugin (``kafka_async.testing``:
the brokers, the fault proxy, topic helpers, the plugin). The harness our own tests use lives
in ``tests/harness`` and the generators in ``tools/``; this list names where each lived in
the package, so a module moved back (or a new generator put beside its output) shows.
``tools/dist_check.py`` checks every built wheel against it, and
``tests/testing/test_testing_wheel_contents.py`` checks the source tree.
"""

from __future__ import annotations

from collections.abc import Iterable

#: Harness modules of this project's own tests (now in ``tests/harness``).
HARNESS_MODULES = (
    "admin_scenes",
    "apt",
    "broker_gaps",
    "churn",
    "fake_broker",
    "java_peers",
    "ledger",
    "mutations",
    "sasl_server",
    "soak",
    "tls",
)

#: Paths (relative to the wheel's root) that must not be in it. A path ending in ``/`` is a
#: folder: nothing below it may be there.
FORBIDDEN = (
    *(f"kafka_async/testing/{name}.py" for name in HARNESS_MODULES),
    # The generators (tools/generate_protocol.py, tools/generate_settings.py) and their input.
    "kafka_async/protocol/generate.py",
    "kafka_async/settings/generate.py",
    "kafka_async/protocol/definitions/",
    # The project's folders beside the package.
    "tests/",
    "tools/",
    "benchmarks/",
    "examples/",
)


def forbidden_in(names: Iterable[str]) -> list[str]:
    """The entries of ``names`` (paths in a wheel, ``/``-separated) that ``FORBIDDEN`` names."""
    found = []
    for name in names:
        for path in FORBIDDEN:
            if name == path or (path.endswith("/") and name.startswith(path)):
                found.append(name)
                break
    return found
