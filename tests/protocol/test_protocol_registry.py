"""The API registry is lazy: importing a client loads only the APIs it speaks.

``kafka_async/protocol/apis/__init__.py`` imports an API's module when its constant is first
used (PEP 562 ``__getattr__``); ``ALL_APIS`` and ``BY_KEY`` import every one.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from kafka_async.protocol import apis
from tools import generate_protocol as generate


def _api_modules_after(statement: str) -> int:
    code = (
        f"import sys; {statement}; "
        "print(sum(m.startswith('kafka_async.protocol.apis.') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(out.stdout)


def test_importing_the_producer_loads_only_its_apis() -> None:
    total = len(generate.load_definitions())
    loaded = _api_modules_after("import kafka_async.producer")
    assert 0 < loaded < total // 2, (loaded, total)
    assert _api_modules_after("from kafka_async.protocol.apis import BY_KEY") == total


def test_constants_resolve_to_their_module_and_stay() -> None:
    from kafka_async.protocol.apis.produce import PRODUCE

    assert apis.PRODUCE is PRODUCE
    assert apis.BY_KEY[PRODUCE.key] is PRODUCE
    assert [api.key for api in apis.ALL_APIS] == sorted(api.key for api in apis.ALL_APIS)
    assert "PRODUCE" in dir(apis)
    assert "PRODUCE" in vars(apis)  # cached as a plain global after the first use


def test_unknown_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NOT_AN_API"):
        apis.NOT_AN_API  # type: ignore[attr-defined]  # noqa: B018
    with pytest.raises(ImportError):
        from kafka_async.protocol.apis import NOT_AN_API  # type: ignore[attr-defined]  # noqa: F401
