"""Secrets (SASL passwords, OAUTHBEARER tokens, TLS key passwords) never show up in logs,
reprs, exceptions or statistics: every log record at DEBUG and every repr, statistics
snapshot and exception text (with its causes) of sessions that succeed, re-authenticate and
fail is searched for them."""

from __future__ import annotations

import logging
import traceback
from pathlib import Path
from typing import Any

import anyio
import pytest
from cryptography.hazmat.primitives import serialization
from security_helpers import Certs

from kafka_async.cluster.client import ClusterClient
from kafka_async.errors import KafkaError
from kafka_async.net import sasl
from kafka_async.net.config import ClientConfig
from kafka_async.net.connection import BrokerConnection
from tests.harness.fake_broker import FakeBroker
from tests.harness.sasl_server import SaslServer

pytest.importorskip("scramp")

pytestmark = pytest.mark.anyio

PASSWORD = "Pw-7f3a9c1e-very-secret"
WRONG_PASSWORD = "Wrong-5b2d8e40-also-secret"
TOKEN_PREFIX = "eyJ-token-c0ffee42"


class Provider:
    def __init__(self) -> None:
        self.calls = 0

    async def token(self) -> str:
        self.calls += 1
        return f"{TOKEN_PREFIX}-{self.calls}"

    def extensions(self) -> dict[str, str]:
        return {}


def texts_of(obj: Any) -> list[str]:
    return [repr(obj), str(obj)]


def exception_texts(exc: BaseException) -> list[str]:
    return ["".join(traceback.format_exception(exc)), repr(exc), str(exc)]


async def test_no_secret_in_logs_reprs_exceptions_or_statistics(
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen: list[str] = []
    caplog.set_level(logging.DEBUG)
    provider = Provider()

    def validate(token: str, extensions: Any) -> bool:
        return token.startswith(TOKEN_PREFIX)

    async with FakeBroker(topics={"t": 1}) as broker:
        server = SaslServer(
            users={"alice": PASSWORD}, token_validator=validate, session_lifetime_ms=300
        )
        server.install(broker)
        base: dict[str, Any] = {
            "bootstrap_servers": broker.address,
            "security_protocol": "SASL_PLAINTEXT",
            "request_timeout_ms": 5_000,
        }
        configs = [
            ClientConfig(
                **base,
                sasl_mechanism=mechanism,
                sasl_plain_username="alice",
                sasl_plain_password=PASSWORD,
            )
            for mechanism in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
        ]
        configs.append(
            ClientConfig(**base, sasl_mechanism="OAUTHBEARER", sasl_oauth_token_provider=provider)
        )
        for cfg in configs:
            seen += texts_of(cfg)
            seen.append(repr(cfg.to_dict()))
            mechanism = await sasl.prepared_mechanism(cfg)
            seen += texts_of(mechanism)
            async with ClusterClient(cfg) as client:
                await client.refresh_metadata(["t"])
                # Long enough for re-authentications (sessions of 300 ms).
                await anyio.sleep(0.7)
                await client.refresh_metadata(["t"])
                seen += texts_of(client)
                seen.append(repr(client.statistics()))
                for conn in client._pool.connections():
                    seen += texts_of(conn)
                    seen.append(repr(conn.statistics()))
        assert server.stats.reauthentications >= 4
        assert provider.calls >= 2

        # Failures: wrong password (PLAIN and SCRAM), refused token, impostor broker.
        failing = [
            ClientConfig(
                **base,
                sasl_mechanism=mechanism,
                sasl_plain_username="alice",
                sasl_plain_password=WRONG_PASSWORD,
            )
            for mechanism in ("PLAIN", "SCRAM-SHA-256")
        ]
        server.token_validator = lambda token, ext: False
        failing.append(
            ClientConfig(**base, sasl_mechanism="OAUTHBEARER", sasl_oauth_token_provider=provider)
        )
        for cfg in failing:
            with pytest.raises(KafkaError) as info:
                async with ClusterClient(cfg):
                    pass
            seen += exception_texts(info.value)
        server.tamper_server_signature = True
        host, port = broker.address.split(":")
        with pytest.raises(KafkaError) as info:
            async with BrokerConnection(host, int(port), configs[1]):
                pass
        seen += exception_texts(info.value)
        assert "signature" in str(info.value)

    seen += [r.getMessage() for r in caplog.records]
    seen.append(caplog.text)
    assert caplog.records, "DEBUG logging was captured"
    everything = "\n".join(seen)
    # The password appears nowhere, nor does any token the provider issued.
    for secret in (PASSWORD, WRONG_PASSWORD, TOKEN_PREFIX):
        assert secret not in everything
    # ... while the logs and errors did describe what happened.
    assert "SASL" in everything


def test_tls_key_password_and_token_provider_are_masked(certs: Certs, tmp_path: Path) -> None:
    key = serialization.load_pem_private_key(certs.client_key.read_bytes(), password=None)
    encrypted = tmp_path / "client.key"
    encrypted.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(PASSWORD.encode()),
        )
    )
    tls = ClientConfig(
        security_protocol="SSL",
        ssl_cafile=str(certs.ca),
        ssl_certfile=str(certs.client_cert),
        ssl_keyfile=str(encrypted),
        ssl_password=PASSWORD,
    )
    assert tls.tls_context() is not None
    assert PASSWORD not in repr(tls) + repr(tls.to_dict())
    assert tls.to_dict()["ssl_password"] == "********"
    cfg = ClientConfig(
        security_protocol="SASL_SSL",
        sasl_mechanism="OAUTHBEARER",
        sasl_oauth_token_provider=Provider(),
    )
    text = repr(cfg) + repr(cfg.to_dict())
    assert "Provider" not in text
    assert cfg.to_dict()["sasl_oauth_token_provider"] == "********"
    plain = ClientConfig(
        security_protocol="SASL_PLAINTEXT", sasl_plain_username="u", sasl_plain_password=PASSWORD
    )
    assert PASSWORD not in repr(plain) + repr(plain.to_dict())
