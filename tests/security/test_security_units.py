"""Security settings and SASL mechanisms without a network: validation, message formats,
and the checks a client makes on what a broker sends."""

from __future__ import annotations

import ssl
import sys

import anyio
import pytest
from security_helpers import Certs

from kafka_async.errors import ConfigError, SaslAuthenticationFailedError
from kafka_async.net import sasl
from kafka_async.net.config import ClientConfig


def test_default_tls_context_is_strict() -> None:
    ctx = ClientConfig(security_protocol="SSL").tls_context()
    assert ctx is not None
    assert ctx.check_hostname is True
    assert ctx.verify_mode == ssl.CERT_REQUIRED
    assert ctx.minimum_version >= ssl.TLSVersion.TLSv1_2


def test_insecure_skip_verify_is_explicit_and_turns_both_checks_off() -> None:
    ctx = ClientConfig(security_protocol="SSL", ssl_insecure_skip_verify=True).tls_context()
    assert ctx is not None
    assert ctx.check_hostname is False
    assert ctx.verify_mode == ssl.CERT_NONE
    with pytest.raises(ConfigError, match="ssl_insecure_skip_verify"):
        ClientConfig(security_protocol="SSL", ssl_insecure_skip_verify="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("settings", "match"),
    [
        ({"ssl_cafile": "ca.pem"}, "ssl_cafile: set but security_protocol is PLAINTEXT"),
        (
            {"security_protocol": "SSL", "ssl_cafile": "/nonexistent/ca.pem"},
            "ssl_cafile: cannot load",
        ),
        (
            {"security_protocol": "SSL", "ssl_keyfile": "k.pem"},
            "ssl_certfile is missing",
        ),
        (
            {
                "security_protocol": "SSL",
                "ssl_context": ssl.create_default_context(),
                "ssl_insecure_skip_verify": True,
            },
            "either ssl_context or the ssl_\\* settings",
        ),
        (
            {"security_protocol": "SASL_SSL", "sasl_mechanism": "OAUTHBEARER"},
            "sasl_oauth_token_provider is required",
        ),
        (
            {
                "security_protocol": "SASL_PLAINTEXT",
                "sasl_mechanism": "OAUTHBEARER",
                "sasl_oauth_token_provider": "not a provider",
            },
            "async token\\(\\) method",
        ),
        (
            {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "SCRAM-SHA-256"},
            "sasl_plain_username and sasl_plain_password are required",
        ),
        ({"sasl_mechanism": "SCRAM-SHA-1"}, "sasl_mechanism: expected one of"),
    ],
)
def test_bad_security_settings_are_config_errors(settings: dict[str, object], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        ClientConfig(**settings)  # type: ignore[arg-type]


def test_client_certificate_files_load(certs: Certs) -> None:
    cfg = ClientConfig(
        security_protocol="SSL",
        ssl_cafile=str(certs.ca),
        ssl_certfile=str(certs.client_cert),
        ssl_keyfile=str(certs.client_key),
    )
    assert cfg.tls_context() is not None
    # Built once, at validation: every connection shares it.
    assert cfg.tls_context() is cfg.tls_context()


def test_scram_without_scramp_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "scramp", None)
    with pytest.raises(ConfigError, match=r"kafka-async-client\[scram\]"):
        ClientConfig(
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="SCRAM-SHA-512",
            sasl_plain_username="u",
            sasl_plain_password="p",
        )


# -- SCRAM -----------------------------------------------------------------------------------


def _scram(name: str = "SCRAM-SHA-256") -> sasl.ScramMechanism:
    pytest.importorskip("scramp")
    return sasl.ScramMechanism(name, "alice", "pw")


def _nonce(first: bytes) -> str:
    return first.decode().split("r=", 1)[1]


def test_scram_refuses_an_absurd_iteration_count() -> None:
    mech = _scram()
    first = mech.step(None)
    assert first is not None
    assert first.startswith(b"n,,n=alice,r=")
    server_first = f"r={_nonce(first)}srv,s=c2FsdA==,i=50000000".encode()
    with pytest.raises(SaslAuthenticationFailedError, match="50000000 iterations"):
        mech.step(server_first)


def test_scram_refuses_a_weak_iteration_count() -> None:
    mech = _scram()
    first = mech.step(None)
    assert first is not None
    with pytest.raises(SaslAuthenticationFailedError, match="only 1 iterations"):
        mech.step(f"r={_nonce(first)}srv,s=c2FsdA==,i=1".encode())


def test_scram_refuses_a_server_nonce_not_extending_ours() -> None:
    mech = _scram("SCRAM-SHA-512")
    mech.step(None)
    with pytest.raises(SaslAuthenticationFailedError, match="invalid message from the broker"):
        mech.step(b"r=someone-elses-nonce,s=c2FsdA==,i=4096")


def test_scram_server_error_is_a_typed_refusal() -> None:
    mech = _scram()
    mech.step(None)
    with pytest.raises(SaslAuthenticationFailedError, match="unknown-user"):
        mech.step(b"e=unknown-user")


def test_scram_username_is_escaped() -> None:
    pytest.importorskip("scramp")
    mech = sasl.ScramMechanism("SCRAM-SHA-256", "a=b,c", "pw")
    first = mech.step(None)
    assert first is not None
    assert first.startswith(b"n,,n=a=3Db=2Cc,r=")


# -- OAUTHBEARER -----------------------------------------------------------------------------


class _Provider:
    def __init__(self, token: str, extensions: dict[str, str] | None = None) -> None:
        self._token = token
        self._extensions = extensions

    async def token(self) -> str:
        return self._token

    async def extensions(self) -> dict[str, str]:
        return self._extensions or {}


@pytest.mark.anyio
async def test_oauthbearer_message_format() -> None:
    mech = sasl.OAuthBearerMechanism(_Provider("abc.def.ghi", {"traceId": "t1", "org": "x y"}))
    await mech.prepare()
    assert mech.step(None) == b"n,,\x01auth=Bearer abc.def.ghi\x01traceId=t1\x01org=x y\x01\x01"
    # An empty server answer completes the exchange.
    assert mech.step(b"") is None


@pytest.mark.anyio
async def test_oauthbearer_error_document_is_acknowledged_then_reported() -> None:
    mech = sasl.OAuthBearerMechanism(_Provider("abc"))
    await mech.prepare()
    mech.step(None)
    assert mech.step(b'{"status":"invalid_token"}') == b"\x01"
    with pytest.raises(SaslAuthenticationFailedError, match="invalid_token"):
        mech.step(b"")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("provider", "error", "match"),
    [
        (_Provider("has space"), SaslAuthenticationFailedError, "whitespace"),
        (_Provider("ok", {"auth": "x"}), ConfigError, "invalid key 'auth'"),
        (_Provider("ok", {"bad-key": "x"}), ConfigError, "invalid key"),
        (_Provider("ok", {"k": "\x01"}), ConfigError, "invalid value"),
    ],
)
async def test_oauthbearer_refuses_malformed_tokens_and_extensions(
    provider: _Provider, error: type[Exception], match: str
) -> None:
    mech = sasl.OAuthBearerMechanism(provider)
    with pytest.raises(error, match=match):
        await mech.prepare()


@pytest.mark.anyio
async def test_mechanism_reprs_hide_credentials() -> None:
    assert "s3cr3t" not in repr(sasl.PlainMechanism("alice", "s3cr3t"))
    oauth = sasl.OAuthBearerMechanism(_Provider("tkn-123"))
    await oauth.prepare()
    assert "tkn-123" not in repr(oauth)
    pytest.importorskip("scramp")
    assert "s3cr3t" not in repr(sasl.ScramMechanism("SCRAM-SHA-256", "alice", "s3cr3t"))


# -- RefreshingTokenProvider -----------------------------------------------------------------


@pytest.mark.anyio
async def test_refreshing_token_provider_refreshes_before_expiry() -> None:
    now = [1000.0]
    issued: list[str] = []

    async def fetch() -> tuple[str, float]:
        issued.append(f"t{len(issued) + 1}")
        return issued[-1], 100.0

    provider = sasl.RefreshingTokenProvider(fetch, clock=lambda: now[0], extensions={"a": "b"})
    assert await provider.token() == "t1"
    now[0] += 79.0  # before 80% of the 100 s lifetime: cached
    assert await provider.token() == "t1"
    now[0] += 1.5  # past 80%, still 19 s before expiry: a new one
    assert await provider.token() == "t2"
    assert provider.fetches == 2
    assert provider.extensions() == {"a": "b"}
    assert "t2" not in repr(provider)


@pytest.mark.anyio
async def test_refreshing_token_provider_shares_one_fetch() -> None:
    calls = 0

    async def fetch() -> tuple[str, float]:
        nonlocal calls
        calls += 1
        await anyio.sleep(0.05)
        return "shared", 60.0

    provider = sasl.RefreshingTokenProvider(fetch)
    got: list[str] = []

    async def take() -> None:
        got.append(await provider.token())

    async with anyio.create_task_group() as tg:
        for _ in range(5):
            tg.start_soon(take)
    assert got == ["shared"] * 5
    assert calls == 1


@pytest.mark.anyio
async def test_refreshing_token_provider_refuses_empty_tokens() -> None:
    async def fetch() -> tuple[str, float]:
        return "", 60.0

    with pytest.raises(SaslAuthenticationFailedError, match="no token"):
        await sasl.RefreshingTokenProvider(fetch).token()
    with pytest.raises(ConfigError, match="refresh_fraction"):
        sasl.RefreshingTokenProvider(fetch, refresh_fraction=1.5)


# -- stunnel set-up --------------------------------------------------------------------------


def test_ensure_stunnel_explains_why_it_cannot_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import shutil

    from tests.harness import tls as tls_helpers

    real_which = shutil.which

    def which(name: str) -> str | None:
        return None if name.startswith("stunnel") else real_which(name)

    monkeypatch.setattr(shutil, "which", which)
    with pytest.raises(tls_helpers.StunnelUnavailableError, match="stunnel4"):
        tls_helpers.ensure_stunnel(install=False)
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    if real_which("apt-get"):
        with pytest.raises(tls_helpers.StunnelUnavailableError, match="needs root"):
            tls_helpers.ensure_stunnel(install=True)


def test_config_with_tls_files_pickles(certs: Certs) -> None:
    """Spark ships configs to executors: the context built from files is rebuilt there."""
    import pickle

    cfg = ClientConfig(
        bootstrap_servers="h:9093",
        security_protocol="SASL_SSL",
        ssl_cafile=str(certs.ca),
        sasl_mechanism="PLAIN",
        sasl_plain_username="u",
        sasl_plain_password="p",
    )
    copy = pickle.loads(pickle.dumps(cfg))
    assert copy == cfg
    ctx = copy.tls_context()
    assert ctx is not None
    assert ctx is not cfg.tls_context()
    assert ctx.verify_mode == ssl.CERT_REQUIRED
