"""Fixtures of the records tests: every batch test runs against both record-loop
implementations (the C accelerator and the pure-Python fallback)."""

from __future__ import annotations

from types import ModuleType

import pytest

from kafka_async.records import _pure
from kafka_async.records import batch as batch_mod
from kafka_async.testing.plugin import skip_or_fail

try:
    from kafka_async.records import _speedups
except ImportError:
    _speedups = None  # type: ignore[assignment]

IMPLS: dict[str, ModuleType | None] = {"c": _speedups, "pure": _pure}


@pytest.fixture(params=sorted(IMPLS))
def impl(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Switch the records layer to one implementation for the duration of a test."""
    name: str = request.param
    module = IMPLS[name]
    if module is None:
        skip_or_fail("the C accelerator is not built (needs a C compiler at install)")
    monkeypatch.setattr(batch_mod, "_decode_records", module.decode_records)
    monkeypatch.setattr(batch_mod.BatchBuilder, "_writer_type", module.RecordWriter)
    return name
