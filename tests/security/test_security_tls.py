"""TLS against a real TLS server: stunnel (certificates made here) in front of Tansu, which
advertises the stunnel port, so every connection (bootstrap and broker) goes through TLS."""

from __future__ import annotations

import logging
import ssl
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from cryptography.hazmat.primitives import serialization
from security_helpers import Certs, TLSBrokerFactory

from kafka_async.cluster.client import ClusterClient
from kafka_async.consumer import Consumer
from kafka_async.errors import ConfigError, KafkaConnectionError, SaslAuthenticationFailedError
from kafka_async.net.config import ClientConfig
from kafka_async.net.tls import TLSHandshakeError
from kafka_async.producer import Producer
from kafka_async.protocol.apis import METADATA
from kafka_async.structs import ConsumerRecord, TopicPartition
from tests.harness.fake_broker import FakeBroker, FakeRequest
from tests.harness.sasl_server import SaslServer
from tests.harness.tls import StunnelProxy

pytestmark = [pytest.mark.integration, pytest.mark.anyio]


def _ctx(ca: Path) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(ca))


async def test_produce_and_consume_over_tls(
    tls_broker_factory: TLSBrokerFactory, certs: Certs
) -> None:
    tb = tls_broker_factory()
    tb.broker.create_topic("tls-topic", 2)
    settings: dict[str, Any] = {
        "bootstrap_servers": tb.address,
        "security_protocol": "SSL",
        "ssl_context": _ctx(certs.ca),
    }
    async with Producer(**settings, linger_ms=1) as producer:
        for i in range(20):
            await producer.send("tls-topic", value=f"v{i}".encode(), key=b"k", partition=i % 2)
    got: list[Any] = []
    consumer: Consumer[bytes, bytes]
    async with Consumer(**settings, auto_offset_reset="earliest") as consumer:
        consumer.assign([TopicPartition("tls-topic", 0), TopicPartition("tls-topic", 1)])
        with anyio.fail_after(30):
            while len(got) < 20:
                batch: dict[TopicPartition, list[Any]] = await consumer.getmany(timeout_ms=500)
                for tp in batch:
                    got.extend(r.value for r in batch[tp])
    assert sorted(got) == sorted(f"v{i}".encode() for i in range(20))


async def test_ssl_cafile_setting_builds_a_verifying_context(
    tls_broker_factory: TLSBrokerFactory, certs: Certs
) -> None:
    tb = tls_broker_factory()
    cfg = ClientConfig(
        bootstrap_servers=tb.address, security_protocol="SSL", ssl_cafile=str(certs.ca)
    )
    ctx = cfg.tls_context()
    assert ctx is not None
    assert ctx.check_hostname
    assert ctx.verify_mode == ssl.CERT_REQUIRED
    async with ClusterClient(cfg) as client:
        await client.refresh_metadata(None)
        assert client.metadata.brokers
        # Metadata points at the TLS port (not the broker's own), and every connection the
        # pool holds went there.
        stats = client.statistics()["pool"]
        assert set(stats["addresses"].values()) == {("127.0.0.1", tb.proxy.port)}
        assert stats["connections"]


async def test_wrong_ca_is_refused_at_once_with_a_clear_error(
    tls_broker_factory: TLSBrokerFactory, certs: Certs
) -> None:
    tb = tls_broker_factory()
    cfg = ClientConfig(
        bootstrap_servers=tb.address,
        security_protocol="SSL",
        ssl_cafile=str(certs.unrelated_ca),
        request_timeout_ms=20_000,
    )
    start = time.monotonic()
    with pytest.raises(TLSHandshakeError) as info:
        async with ClusterClient(cfg):
            pass
    # Not retried until the 20 s bootstrap deadline: a wrong CA stays wrong.
    assert time.monotonic() - start < 5
    assert isinstance(info.value, KafkaConnectionError)
    assert not info.value.retriable
    message = str(info.value)
    assert tb.address in message
    assert "not signed by a trusted CA" in message
    assert "ssl_cafile" in message


async def test_wrong_hostname_is_refused_by_default(
    tls_broker_factory: TLSBrokerFactory, certs: Certs
) -> None:
    # A certificate from the right CA, but for another host.
    tb = tls_broker_factory(cert=certs.other_host_cert, key=certs.other_host_key)
    cfg = ClientConfig(
        bootstrap_servers=tb.address, security_protocol="SSL", ssl_context=_ctx(certs.ca)
    )
    with pytest.raises(TLSHandshakeError, match="does not name this host"):
        async with ClusterClient(cfg):
            pass


async def test_insecure_skip_verify_connects_and_warns(
    tls_broker_factory: TLSBrokerFactory, certs: Certs, caplog: pytest.LogCaptureFixture
) -> None:
    tb = tls_broker_factory(cert=certs.other_host_cert, key=certs.other_host_key)
    with caplog.at_level(logging.WARNING, logger="kafka_async"):
        cfg = ClientConfig(
            bootstrap_servers=tb.address, security_protocol="SSL", ssl_insecure_skip_verify=True
        )
    assert any("NOT verified" in r.getMessage() for r in caplog.records)
    async with ClusterClient(cfg) as client:
        await client.refresh_metadata(None)
        assert client.metadata.brokers


async def test_mutual_tls_with_a_client_certificate(
    tls_broker_factory: TLSBrokerFactory, certs: Certs, tmp_path: Path
) -> None:
    tb = tls_broker_factory(client_ca=certs.ca)
    tb.broker.create_topic("mtls-topic", 1)
    # The client key encrypted with a password, given through ssl_password.
    key = serialization.load_pem_private_key(certs.client_key.read_bytes(), password=None)
    encrypted = tmp_path / "client-encrypted.key"
    encrypted.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"key-pass-123"),
        )
    )
    settings: dict[str, Any] = {
        "bootstrap_servers": tb.address,
        "security_protocol": "SSL",
        "ssl_cafile": str(certs.ca),
        "ssl_certfile": str(certs.client_cert),
        "ssl_keyfile": str(encrypted),
        "ssl_password": "key-pass-123",
    }
    async with Producer(**settings) as producer:
        meta = await producer.send("mtls-topic", value=b"over mutual TLS")
    consumer: Consumer[bytes, bytes]
    async with Consumer(**settings, auto_offset_reset="earliest") as consumer:
        consumer.assign([TopicPartition("mtls-topic", 0)])
        with anyio.fail_after(20):
            record: ConsumerRecord[bytes, bytes] = await consumer.getone()
    assert record.value == b"over mutual TLS"
    assert record.offset == meta.offset


async def test_mutual_tls_without_a_client_certificate_is_refused(
    tls_broker_factory: TLSBrokerFactory, certs: Certs
) -> None:
    tb = tls_broker_factory(client_ca=certs.ca)
    cfg = ClientConfig(
        bootstrap_servers=tb.address,
        security_protocol="SSL",
        ssl_cafile=str(certs.ca),
        request_timeout_ms=10_000,
    )
    start = time.monotonic()
    # TLS 1.3 reports the missing certificate after the client's handshake completed (on the
    # first read); it still surfaces as a TLS handshake error, at once.
    with pytest.raises(TLSHandshakeError, match="CERTIFICATE_REQUIRED") as info:
        async with ClusterClient(cfg):
            pass
    assert time.monotonic() - start < 5
    assert tb.address in str(info.value)


def test_wrong_key_password_is_a_config_error(certs: Certs, tmp_path: Path) -> None:
    key = serialization.load_pem_private_key(certs.client_key.read_bytes(), password=None)
    encrypted = tmp_path / "k.pem"
    encrypted.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"right-password"),
        )
    )
    with pytest.raises(ConfigError, match="ssl_certfile") as info:
        ClientConfig(
            security_protocol="SSL",
            ssl_cafile=str(certs.ca),
            ssl_certfile=str(certs.client_cert),
            ssl_keyfile=str(encrypted),
            ssl_password="wrong-password-xyz",
        )
    assert "wrong-password-xyz" not in str(info.value)
    assert info.value.__cause__ is None


async def test_sasl_ssl_scram_over_tls(stunnel_binary: str, certs: Certs) -> None:
    """SASL_SSL: SCRAM inside TLS, against the scripted SASL broker behind stunnel (Tansu
    cannot be given SCRAM users, see test_security_sasl_tansu.py)."""
    pytest.importorskip("scramp")
    async with FakeBroker(topics={"t": 1}) as broker:
        server = SaslServer(users={"alice": "tls-and-scram"})
        server.install(broker)
        with StunnelProxy(cert=certs.server_cert, key=certs.server_key) as proxy:

            def through_tls(req: FakeRequest) -> Any:
                body = broker.metadata_reply(req)
                for b in body.brokers:
                    b.port = proxy.port  # advertise the TLS port
                return body

            broker.set_default(METADATA.key, server.guard(through_tls))
            await anyio.to_thread.run_sync(proxy.set_target, broker.host, broker.port)
            cfg = ClientConfig(
                bootstrap_servers=proxy.address,
                security_protocol="SASL_SSL",
                ssl_cafile=str(certs.ca),
                sasl_mechanism="SCRAM-SHA-512",
                sasl_plain_username="alice",
                sasl_plain_password="tls-and-scram",
            )
            async with ClusterClient(cfg) as client:
                await client.refresh_metadata(["t"])
                assert client.metadata.partitions_for("t") == frozenset({0})
                stats = client.statistics()["pool"]
                assert set(stats["addresses"].values()) == {("127.0.0.1", proxy.port)}
    assert server.stats.successes == {"SCRAM-SHA-512": 1}
    assert server.stats.unauthenticated == 0


async def test_sasl_ssl_against_tansu_refuses_an_unknown_user_over_tls(
    tls_broker_factory: TLSBrokerFactory, certs: Certs
) -> None:
    """SASL_SSL against the real Tansu (--authentication) behind stunnel: the SCRAM exchange
    runs inside TLS and the refusal arrives typed (Tansu cannot be given users, see
    test_security_sasl_tansu.py)."""
    pytest.importorskip("scramp")
    tb = tls_broker_factory(broker_args=("--authentication",))
    cfg = ClientConfig(
        bootstrap_servers=tb.address,
        security_protocol="SASL_SSL",
        ssl_cafile=str(certs.ca),
        sasl_mechanism="SCRAM-SHA-256",
        sasl_plain_username="nobody",
        sasl_plain_password="not-a-user",
    )
    with pytest.raises(SaslAuthenticationFailedError, match="unknown-user"):
        async with ClusterClient(cfg):
            pass
