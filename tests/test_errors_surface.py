"""The public surface of ``kafka_async.errors``, recorded before it became generated.

``tests/errors_surface.json`` holds, for every public class and function of the module, what
a user can observe: the class's MRO by name, its module, ``code``, ``name``, the three flags
(``retriable``, ``invalid_metadata``, ``invalid_coordinator``), its docstring, and what
``for_code`` maps each code to. The table-driven generation of the broker classes
(``tools/generate_errors.py``) must leave all of it as it was; a deliberate change of the
surface edits the JSON file in the same commit.
"""

from __future__ import annotations

import inspect
import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from kafka_async import errors

SNAPSHOT = Path(__file__).with_name("errors_surface.json")
FLAGS = ("code", "name", "retriable", "invalid_metadata", "invalid_coordinator")


def surface() -> dict[str, Any]:
    """What the module shows today, as plain data."""
    classes: dict[str, Any] = {}
    functions: dict[str, str] = {}
    for attr, obj in sorted(vars(errors).items()):
        if attr.startswith("_") or getattr(obj, "__module__", None) != errors.__name__:
            continue
        if inspect.isclass(obj):
            classes[attr] = {
                "mro": [f"{k.__module__}.{k.__qualname__}" for k in obj.__mro__],
                # cleandoc: Python 3.13 strips docstring indentation at compile time.
                "doc": inspect.cleandoc(obj.__doc__) if obj.__doc__ else None,
                **{f: getattr(obj, f) for f in FLAGS if hasattr(obj, f)},
            }
        elif inspect.isfunction(obj):
            functions[attr] = str(inspect.signature(obj))
    return {
        "classes": classes,
        "functions": functions,
        "for_code": {
            str(code): (None if cls is None else cls.__name__)
            for code in range(-2, 200)
            for cls in [errors.for_code(code)]
        },
        "INVALID_METADATA_CODES": sorted(errors.INVALID_METADATA_CODES),
    }


@pytest.fixture(scope="module")
def recorded() -> dict[str, Any]:
    return json.loads(SNAPSHOT.read_text())  # type: ignore[no-any-return]


@pytest.mark.parametrize("part", ["classes", "functions", "for_code", "INVALID_METADATA_CODES"])
def test_surface_is_unchanged(recorded: dict[str, Any], part: str) -> None:
    now = json.loads(json.dumps(surface()))[part]
    was = recorded[part]
    if isinstance(was, dict):
        assert sorted(now) == sorted(was), "names added or removed"
        for key in was:
            assert now[key] == was[key], key
    else:
        assert now == was


def test_broker_errors_raise_pickle_and_map_as_before() -> None:
    """Behaviour beside the data: the message format, pickling and the unknown-code path."""
    err = errors.error_for_code(6, "moved")
    assert isinstance(err, errors.NotLeaderOrFollowerError)
    assert isinstance(err, errors.BrokerResponseError)
    assert isinstance(err, errors.KafkaError)
    assert str(err) == "[Error 6] NOT_LEADER_OR_FOLLOWER: moved"
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is type(err)
    assert str(again) == str(err)
    with pytest.raises(errors.UnknownBrokerError) as info:
        errors.raise_for_code(31999, "new")
    assert info.value.unknown_code == 31999
    assert str(info.value) == "[Error 31999] UNKNOWN_ERROR_CODE: new"
    errors.raise_for_code(0)
    with pytest.raises(TypeError, match="already belongs"):
        type("Twin", (errors.BrokerResponseError,), {"code": 6})
