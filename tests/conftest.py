"""Shared test configuration.

Async tests use anyio's pytest plugin (``@pytest.mark.anyio``). ``anyio_backend`` defaults to
asyncio; core integration tests ask for ``anyio_backend_all`` semantics by parametrizing with
``pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])``. The ``kafka_broker`` fixture
(bootstrap servers of a real broker) comes from kafka_async's own pytest plugin.
"""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
