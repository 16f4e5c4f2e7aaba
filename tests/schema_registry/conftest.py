"""Fixtures of the schema-registry tests: one registry (tests/harness/schema_registry.py) per
session on 127.0.0.1, and our client of it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from tests.harness.schema_registry import RegistryServer

pytest.importorskip("fastavro")
pytest.importorskip("jsonschema")
pytest.importorskip("google.protobuf")

from kafka_async.schema_registry import SchemaRegistryClient


@pytest.fixture(scope="session")
def registry() -> Iterator[RegistryServer]:
    """The session's registry (no authentication)."""
    with RegistryServer() as server:
        yield server


@pytest.fixture
async def sr(registry: RegistryServer) -> AsyncIterator[SchemaRegistryClient]:
    """Our client of the session's registry."""
    async with SchemaRegistryClient(registry.url, deadline_s=10) as client:
        yield client
