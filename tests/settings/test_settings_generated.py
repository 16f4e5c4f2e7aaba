"""Each setting is declared once; what is derived from the declarations stays true to them.

``make generate`` writes ``<package>/settings_generated.py``, the tables of
docs/reference/settings.md and the clients' docstring lists from the ``SCHEMA`` of ``net``,
``producer``, ``consumer`` and ``admin``'s ``settings.py``; a declaration edited without
regenerating (or an output edited by hand) fails here. The run-time checks come from the
same declarations: every setting refuses a wrong value with a ``ConfigError`` naming it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from kafka_async import AdminClient, Consumer, Producer
from kafka_async.admin.config import AdminConfig
from kafka_async.consumer.config import ConsumerConfig
from kafka_async.consumer.share import ShareConsumer, ShareConsumerConfig
from kafka_async.errors import ConfigError
from kafka_async.net.config import ClientConfig
from kafka_async.producer.config import ProducerConfig
from kafka_async.settings.spec import Int, Schema, Setting
from tools import generate_protocol as ruff_generate
from tools import generate_settings as generate

GROUPS = {group.key: group for group in generate.GROUPS}
CONFIGS: dict[str, Any] = {
    "client": ClientConfig,
    "producer": ProducerConfig,
    "consumer": ConsumerConfig,
    "admin": AdminConfig,
    "share": ShareConsumerConfig,
}


def _needs_ruff() -> None:
    # The generator formats its output with ruff (a dev extra): an installed package tested
    # without the dev extras cannot regenerate, so it cannot compare either.
    try:
        ruff_generate._ruff()
    except RuntimeError:
        pytest.skip("ruff is not installed (the dev extra)")


def _schema(key: str) -> Schema:
    schema: Schema = generate.load(GROUPS[key]).SCHEMA
    return schema


def test_generated_outputs_are_up_to_date() -> None:
    _needs_ruff()
    problems = generate.stale(generate.render())
    assert not problems, "run `make generate`; stale: " + ", ".join(problems)


def test_stale_check_notices_an_edited_declaration(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test above can fail: a changed meaning changes the module, page and docstring."""
    _needs_ruff()
    real = generate.load

    def edited(group: generate.Group) -> ModuleType | SimpleNamespace:
        mod = real(group)
        if group.key != "producer":
            return mod
        settings = [
            s.replace(doc="how long a batch waits") if s.name == "linger_ms" else s
            for s in mod.SCHEMA.settings
        ]
        return SimpleNamespace(
            SCHEMA=Schema("producer", settings), IMPORTS=mod.IMPORTS, ALIASES=mod.ALIASES
        )

    monkeypatch.setattr(generate, "load", edited)
    problems = generate.stale(generate.render())
    assert str(GROUPS["producer"].output) in problems
    if generate.README.exists():  # not beside an installed package
        assert str(generate.README) in problems
    assert str(generate.PACKAGE_DIR / "producer" / "producer.py") in problems
    assert str(GROUPS["consumer"].output) not in problems


def test_a_missing_region_is_reported() -> None:
    with pytest.raises(generate.RegionError, match="settings:producer"):
        generate.replace_region("no markers\n", "<!-- settings:producer", list, Path("R.md"))


@pytest.mark.parametrize("key", sorted(GROUPS))
def test_config_fields_are_the_declared_settings(key: str) -> None:
    names = [s.name for s in _schema(key).settings]
    fields = [f.name for f in dataclasses.fields(CONFIGS[key]) if f.init and f.name != "client"]
    assert fields == names


@pytest.mark.parametrize("key", sorted(GROUPS))
def test_declarations_are_complete(key: str) -> None:
    for s in _schema(key).settings:
        assert s.doc, s.name
        assert "\n" not in s.doc, s.name
        assert not s.doc.endswith("."), s.name
        # The default passes the setting's own check (a required one has none).
        if s.required is None:
            s.kind(s.name, s.default)
        java = s.java_name.split(" ")[0]
        assert java == "" or all(part for part in java.split("=")[0].split(".")), s.name


@pytest.mark.parametrize("key", sorted(GROUPS))
def test_every_setting_refuses_a_wrong_value_by_name(key: str) -> None:
    builders: dict[str, Callable[[dict[str, Any]], object]] = {
        "client": lambda kw: ClientConfig(**kw),
        "producer": lambda kw: Producer(**kw),
        "consumer": lambda kw: Consumer(**kw),
        "admin": lambda kw: AdminClient(**kw),
        "share": lambda kw: ShareConsumer("t", **{"group_id": "g", **kw}),
    }
    build = builders[key]
    for s in _schema(key).settings:
        with pytest.raises(ConfigError) as info:
            build({s.name: object()})
        assert s.name in str(info.value), (s.name, str(info.value))


def test_a_required_setting_left_out_is_named() -> None:
    with pytest.raises(ConfigError, match=r"^group_id: a share consumer needs"):
        ShareConsumerConfig.from_kwargs(bootstrap_servers="x:1")
    assert ShareConsumerConfig.from_kwargs(group_id="g").group_id == "g"


def test_a_wrong_assignor_names_the_setting() -> None:
    with pytest.raises(ConfigError, match=r"^partition_assignment_strategy: unknown .*'ranger'"):
        ConsumerConfig.from_kwargs(partition_assignment_strategy=["ranger"])


def test_unknown_setting_names_the_nearest_known_one() -> None:
    with pytest.raises(ConfigError, match=r"unknown producer setting.*'linger_ms'"):
        Producer(linger_msec=5)  # type: ignore[call-arg]
    with pytest.raises(ConfigError, match=r"unknown consumer setting.*'request_timeout_ms'"):
        Consumer(request_timeout=5)  # type: ignore[call-overload]
    with pytest.raises(ConfigError, match=r"unknown admin client setting.*'client_id'"):
        AdminClient(client_idd="x")  # type: ignore[call-arg]


def test_checked_values_are_stored_in_their_stored_form() -> None:
    # Keyword arguments and direct construction go through the same checks.
    assert ProducerConfig.from_kwargs(acks="all").acks == -1
    assert ProducerConfig(client=ClientConfig(), acks="1").acks == 1  # type: ignore[arg-type]
    assert ProducerConfig.from_kwargs(compression_type="none").compression_type is None
    cfg = ConsumerConfig.from_kwargs(partition_assignment_strategy="sticky")
    assert [a.name for a in cfg.partition_assignment_strategy] == ["sticky"]
    with pytest.raises(ConfigError, match="linger_ms"):
        ProducerConfig(client=ClientConfig(), linger_ms=-1)


def test_defaults_are_fresh_per_config() -> None:
    # An assignor object is never shared by two consumers.
    one = ConsumerConfig.from_kwargs().partition_assignment_strategy
    two = ConsumerConfig.from_kwargs().partition_assignment_strategy
    assert [a.name for a in one] == ["range", "cooperative-sticky"]
    assert not set(map(id, one)) & set(map(id, two))


def test_int_kind_bounds() -> None:
    kind = Int(low=1, high=10, optional=True)
    assert kind("n", None) is None
    assert kind("n", 10) == 10
    for bad, message in ((0, ">= 1"), (11, "<= 10"), (True, "integer"), ("5", "integer")):
        with pytest.raises(ConfigError, match=f"n: .*{message}"):
            kind("n", bad)


def test_a_setting_declared_twice_is_refused() -> None:
    twice = [Setting("a", Int(low=0), 0, "m"), Setting("a", Int(low=0), 1, "m")]
    with pytest.raises(ValueError, match="twice"):
        Schema("x", twice)
