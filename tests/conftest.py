"""Shared test configuration.

Async tests use anyio's pytest plugin (``@pytest.mark.anyio``). ``anyio_backend`` defaults to
asyncio; core integration tests ask for ``anyio_backend_all`` semantics by parametrizing with
``pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])``. The ``kafka_broker`` fixture
(bootstrap servers of a real broker) comes from kafka_async's own pytest plugin.

The project's own harness lives in ``tests/harness`` (not in the wheel) and is imported as
``tests.harness.<module>``: the repository's root is put at the END of ``sys.path``, so an
installed kafka_async (``tools/dist_check.py`` runs these tests against the built wheel)
still wins over the source tree beside it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.append(_ROOT)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
