"""The typed settings (TypedDicts) match what the clients accept at run time.

The TypedDicts are what mypy and editors see; ``from_kwargs`` and the constructors are what
runs. These tests keep the two from drifting apart: same names, and Literal types that list
exactly the values the run-time checks take.
"""

from __future__ import annotations

import inspect
import typing
from typing import Any, Literal, get_args, get_origin, get_type_hints

import pytest

import kafka_async
from kafka_async import (
    AdminClient,
    AdminSettings,
    ClientSettings,
    Consumer,
    ConsumerSettings,
    Producer,
    ProducerSettings,
)
from kafka_async.consumer.config import ISOLATION_LEVELS, ConsumerConfig
from kafka_async.consumer.group.assignors import ASSIGNORS
from kafka_async.consumer.positions import RESET_STRATEGIES
from kafka_async.errors import ConfigError
from kafka_async.net import sasl
from kafka_async.net.config import SECURITY_PROTOCOLS, ClientConfig
from kafka_async.producer.config import COMPRESSION_TYPES, ProducerConfig

DESERIALIZERS = {"key_deserializer", "value_deserializer"}


def _keys(td: type) -> set[str]:
    keys: frozenset[str] = td.__optional_keys__  # type: ignore[attr-defined]
    assert not td.__required_keys__, f"{td.__name__} must be total=False"  # type: ignore[attr-defined]
    return set(keys)


def _literal_values(td: type, key: str) -> set[object]:
    """The values of the Literal in ``td[key]``'s type (None too when it is optional)."""
    hint = get_type_hints(td)[key]
    found: set[object] = set()
    for arm in get_args(hint) if get_origin(hint) is typing.Union else (hint,):
        if get_origin(arm) is Literal:
            found.update(get_args(arm))
        elif arm is type(None):
            found.add(None)
    assert found, f"{td.__name__}[{key!r}] has no Literal: {hint}"
    return found


# -- names -------------------------------------------------------------------------------


def test_client_settings_are_the_client_config_fields() -> None:
    assert _keys(ClientSettings) == set(ClientConfig.field_names())


def test_producer_settings_are_what_from_kwargs_accepts() -> None:
    assert _keys(ProducerSettings) == ClientConfig.field_names() | ProducerConfig.setting_names()


def test_consumer_settings_plus_the_deserializer_parameters_are_what_from_kwargs_accepts() -> None:
    accepted = ClientConfig.field_names() | ConsumerConfig.setting_names()
    assert _keys(ConsumerSettings) == accepted - DESERIALIZERS
    # The deserializers are Consumer.__init__ parameters (they decide K and V).
    params = inspect.signature(Consumer.__init__).parameters
    assert set(params) >= DESERIALIZERS
    assert not DESERIALIZERS & _keys(ConsumerSettings)


def test_admin_settings_are_client_settings_plus_the_admin_ones() -> None:
    own = {"default_api_timeout_ms", "enable_metrics_push"}
    assert _keys(AdminSettings) == set(ClientConfig.field_names()) | own


def test_settings_extend_client_settings() -> None:
    for td in (ProducerSettings, ConsumerSettings, AdminSettings):
        assert _keys(ClientSettings) <= _keys(td)


@pytest.mark.parametrize(
    ("td", "build"),
    [
        (ProducerSettings, lambda kw: ProducerConfig.from_kwargs(**kw)),
        (ConsumerSettings, lambda kw: ConsumerConfig.from_kwargs(**kw)),
        (AdminSettings, lambda kw: AdminClient(**kw)),
    ],
    ids=["producer", "consumer", "admin"],
)
def test_every_key_is_known_at_run_time(td: type, build: Any) -> None:
    # A value no setting accepts: whatever error comes back must be about the value, never
    # an unknown name (ConfigError "unknown ... setting(s)" or the dataclass's TypeError).
    unknown = []
    for key in _keys(td):
        try:
            build({key: object()})
        except (ConfigError, TypeError) as exc:
            if "setting(s)" in str(exc) or "unexpected keyword" in str(exc):
                unknown.append((key, str(exc)))
    assert not unknown
    with pytest.raises(ConfigError, match="setting"):
        build({"bootstrap_server": "h:9092"})


def test_type_hints_resolve_at_run_time() -> None:
    # Tools that read the annotations at run time (pydantic, docs) see real types.
    for td in (ClientSettings, ProducerSettings, ConsumerSettings, AdminSettings):
        assert set(get_type_hints(td)) == _keys(td)


def test_exported_from_the_package() -> None:
    for name in ("ClientSettings", "ProducerSettings", "ConsumerSettings", "AdminSettings"):
        assert name in kafka_async.__all__
        assert getattr(kafka_async, name).__name__ == name


# -- enumerated values -------------------------------------------------------------------


def test_security_protocol_values() -> None:
    assert _literal_values(ClientSettings, "security_protocol") == set(SECURITY_PROTOCOLS)


def test_sasl_mechanism_values_are_the_registered_mechanisms() -> None:
    assert _literal_values(ClientSettings, "sasl_mechanism") == set(sasl.mechanism_names())


def test_auto_offset_reset_values() -> None:
    assert _literal_values(ConsumerSettings, "auto_offset_reset") == set(RESET_STRATEGIES)


def test_isolation_level_values() -> None:
    assert _literal_values(ConsumerSettings, "isolation_level") == set(ISOLATION_LEVELS)


def test_assignor_names() -> None:
    values = _literal_values(ConsumerSettings, "partition_assignment_strategy")
    assert values == set(ASSIGNORS)


def test_compression_type_values() -> None:
    values = _literal_values(ProducerSettings, "compression_type")
    assert values == set(COMPRESSION_TYPES) | {"none"}
    for value in values:
        ProducerConfig.from_kwargs(compression_type=value)


def _accepted(name: str, candidates: list[object]) -> set[object]:
    ok = set()
    for value in candidates:
        try:
            ProducerConfig.from_kwargs(**{name: value})
        except ConfigError:
            continue
        ok.add(value)
    return ok


def test_acks_values_are_exactly_those_the_runtime_takes() -> None:
    values = _literal_values(ProducerSettings, "acks")
    near_misses: list[object] = [2, -2, "2", "ALL", "All", "", None, "none", b"1"]
    assert _accepted("acks", [*values, *near_misses]) == values


def test_partitioner_names_are_exactly_those_the_runtime_takes() -> None:
    values = _literal_values(ProducerSettings, "partitioner")
    near_misses: list[object] = ["murmur3", "sticky", "roundrobin", "random", ""]
    assert _accepted("partitioner", [*values, *near_misses]) == values


# -- the positional-only bootstrap_servers -----------------------------------------------


@pytest.mark.parametrize("client", [Producer, AdminClient], ids=["producer", "admin"])
def test_bootstrap_servers_positionally_or_by_keyword(client: Any) -> None:
    def addresses(obj: Any) -> object:
        cfg = obj._cfg.client if isinstance(obj, Producer) else obj.config
        return cfg.addresses

    assert addresses(client("a:1")) == (("a", 1),)
    assert addresses(client(bootstrap_servers="b:2")) == (("b", 2),)
    assert addresses(client()) == (("localhost", 9092),)
    with pytest.raises(TypeError, match="bootstrap_servers"):
        client("a:1", bootstrap_servers="b:2")
    # Even when the positional value is the default address.
    with pytest.raises(TypeError, match="bootstrap_servers"):
        client("localhost:9092", bootstrap_servers="b:2")
    with pytest.raises(ConfigError, match="bootstrap_servers"):
        client(bootstrap_servers=None)


def test_admin_settings_reach_the_client() -> None:
    admin = AdminClient("a:1", default_api_timeout_ms=1234)
    assert admin.default_api_timeout_ms == 1234
    assert admin.config.client_id == "kafka-async-admin"
    assert AdminClient(client_id="mine").config.client_id == "mine"


def test_consumer_deserializers_reach_the_config() -> None:
    def kd(b: bytes | None) -> str:
        return ""

    consumer = Consumer(key_deserializer=kd)
    assert consumer._config.key_deserializer is kd
    assert consumer._config.value_deserializer is None
    with pytest.raises(ConfigError, match="value_deserializer"):
        Consumer(value_deserializer=5)  # type: ignore[call-overload]
