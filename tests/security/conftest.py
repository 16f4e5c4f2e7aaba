"""Fixtures for TLS tests: throwaway certificates and a stunnel-fronted Tansu broker."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from security_helpers import Certs, TLSBroker, TLSBrokerFactory

from kafka_async.testing import EmbeddedBroker
from kafka_async.testing.plugin import skip_or_fail
from tests.harness.tls import (
    CertificateAuthority,
    StunnelProxy,
    StunnelUnavailableError,
    ensure_stunnel,
)

pytest.importorskip("cryptography")


@pytest.fixture(scope="session")
def stunnel_binary() -> str:
    """stunnel, installed with apt-get (Debian's stunnel4) when missing and we are root."""
    try:
        return ensure_stunnel(install=True)
    except StunnelUnavailableError as exc:
        skip_or_fail(f"TLS tests need stunnel: {exc}")


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    d = tmp_path_factory.mktemp("pki")
    ca = CertificateAuthority()
    paths = Certs(
        ca=d / "ca.pem",
        server_cert=d / "server.pem",
        server_key=d / "server.key",
        other_host_cert=d / "other.pem",
        other_host_key=d / "other.key",
        client_cert=d / "client.pem",
        client_key=d / "client.key",
        unrelated_ca=d / "unrelated-ca.pem",
    )
    ca.write(paths.ca)
    CertificateAuthority("an unrelated test CA").write(paths.unrelated_ca)
    # Each chain (leaf first) in one file, as stunnel and ssl.load_cert_chain expect.
    ca.issue("127.0.0.1", "localhost").write(paths.server_cert, paths.server_key)
    ca.issue("kafka.other-host.test").write(paths.other_host_cert, paths.other_host_key)
    ca.issue("kafka-async-test-client").write(paths.client_cert, paths.client_key)
    return paths


@pytest.fixture
def tls_broker_factory(stunnel_binary: str, certs: Certs) -> Iterator[TLSBrokerFactory]:
    """``make(cert=..., key=..., client_ca=None, broker_args=())`` -> a started
    :class:`TLSBroker`."""
    with ExitStack() as stack:

        def make(
            *,
            cert: Path | None = None,
            key: Path | None = None,
            client_ca: Path | None = None,
            broker_args: tuple[str, ...] = (),
        ) -> TLSBroker:
            proxy = stack.enter_context(
                StunnelProxy(
                    cert=cert or certs.server_cert,
                    key=key or certs.server_key,
                    client_ca=client_ca,
                )
            )
            broker = stack.enter_context(
                EmbeddedBroker(
                    advertised_host="127.0.0.1", advertised_port=proxy.port, extra_args=broker_args
                )
            )
            proxy.set_target(broker.host, broker.port)
            return TLSBroker(proxy, broker)

        yield make
