"""ClientConfig validation, parsing and hand-off of leftover kwargs."""

from __future__ import annotations

import ssl

import pytest

from kafka_async.errors import ConfigError
from kafka_async.net.config import ClientConfig, parse_bootstrap_servers


def test_defaults_follow_aiokafka_names_and_values() -> None:
    cfg = ClientConfig()
    assert cfg.addresses == (("localhost", 9092),)
    assert cfg.client_id == "kafka-async"
    assert cfg.request_timeout_ms == 30_000
    assert cfg.metadata_max_age_ms == 300_000
    assert cfg.max_response_size == 100 * 1024 * 1024
    assert cfg.security_protocol == "PLAINTEXT"
    assert cfg.tls_context() is None
    assert cfg.request_timeout == 30.0


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("h1:1,h2:2", (("h1", 1), ("h2", 2))),
        (" h1:1 , ,h2 ", (("h1", 1), ("h2", 9092))),
        (["h1:1", "h2:2,h3:3"], (("h1", 1), ("h2", 2), ("h3", 3))),
        ("[::1]:9093,[fe80::1]", (("::1", 9093), ("fe80::1", 9092))),
    ],
)
def test_bootstrap_servers_parsing(value: str | list[str], expected: tuple[object, ...]) -> None:
    assert parse_bootstrap_servers(value) == expected
    assert ClientConfig(bootstrap_servers=value).addresses == expected


@pytest.mark.parametrize(
    "value", ["", " , ", "h:notaport", "h:0", "h:70000", "::1:9092", "[::1", ":9092", []]
)
def test_bad_bootstrap_servers_name_the_setting(value: object) -> None:
    with pytest.raises(ConfigError, match="bootstrap_servers"):
        ClientConfig(bootstrap_servers=value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("request_timeout_ms", 0),
        ("request_timeout_ms", "30"),
        ("request_timeout_ms", True),
        ("retry_backoff_ms", -1),
        ("connect_timeout_ms", 1.5),
        ("max_response_size", 10),
        ("max_response_size", 2**31),
        ("client_id", "caf\u00e9"),
        ("api_version", "0.9.0"),
        ("api_version", "latest"),
        ("security_protocol", "TLS"),
        ("sasl_mechanism", "GSSAPI-ish"),
        ("ssl_context", "not a context"),
    ],
)
def test_bad_values_raise_config_error_naming_the_setting(name: str, value: object) -> None:
    with pytest.raises(ConfigError, match=name):
        # Deliberately ill-typed: the run-time validation is under test.
        ClientConfig(**{name: value})  # type: ignore[arg-type]


def test_reconnect_backoff_max_below_initial_is_rejected() -> None:
    with pytest.raises(ConfigError, match="reconnect_backoff_max_ms"):
        ClientConfig(reconnect_backoff_ms=500, reconnect_backoff_max_ms=100)


def test_api_version_accepts_auto_and_modern_versions() -> None:
    assert ClientConfig(api_version="2.8.0").api_version == "2.8.0"
    assert ClientConfig(api_version="0.10").api_version == "0.10"


def test_sasl_needs_credentials_and_hides_the_password() -> None:
    with pytest.raises(ConfigError, match="sasl_plain_username"):
        ClientConfig(security_protocol="SASL_PLAINTEXT")
    cfg = ClientConfig(
        security_protocol="SASL_PLAINTEXT",
        sasl_plain_username="alice",
        sasl_plain_password="s3cret-pw",
    )
    assert cfg.uses_sasl
    assert not cfg.uses_tls
    assert "s3cret-pw" not in repr(cfg)
    assert "s3cret-pw" not in str(cfg.to_dict())
    assert "alice" in repr(cfg)


def test_tls_settings() -> None:
    ctx = ssl.create_default_context()
    cfg = ClientConfig(security_protocol="SSL", ssl_context=ctx)
    assert cfg.tls_context() is ctx
    assert isinstance(
        ClientConfig(
            security_protocol="SASL_SSL", sasl_plain_username="u", sasl_plain_password="p"
        ).tls_context(),
        ssl.SSLContext,
    )
    with pytest.raises(ConfigError, match="ssl_context"):
        ClientConfig(ssl_context=ctx)  # PLAINTEXT with a context is a mistake


def test_from_kwargs_returns_leftovers_for_the_caller() -> None:
    cfg, rest = ClientConfig.from_kwargs(
        bootstrap_servers="b:1", client_id="app", linger_ms=5, acks="all"
    )
    assert cfg.addresses == (("b", 1),)
    assert cfg.client_id == "app"
    assert rest == {"linger_ms": 5, "acks": "all"}
    assert "addresses" not in ClientConfig.field_names()


def test_from_kwargs_validates_shared_settings() -> None:
    with pytest.raises(ConfigError, match="request_timeout_ms"):
        ClientConfig.from_kwargs(request_timeout_ms=-5, linger_ms=5)


def test_config_is_frozen_and_replace_revalidates() -> None:
    cfg = ClientConfig()
    with pytest.raises(AttributeError):
        cfg.client_id = "x"  # type: ignore[misc]
    assert cfg.replace(client_id="other").client_id == "other"
    with pytest.raises(ConfigError, match="retry_backoff_ms"):
        cfg.replace(retry_backoff_ms=-1)
