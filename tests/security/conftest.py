"""Fixtures for TLS tests: throwaway certificates and a stunnel-fronted Tansu broker."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from security_helpers import Certs, TLSBroker, TLSBrokerFactory

from kafka_async.testing import EmbeddedBroker
from kafka_async.testing.tls import StunnelProxy, StunnelUnavailableError, ensure_stunnel

trustme = pytest.importorskip("trustme")


@pytest.fixture(scope="session")
def stunnel_binary() -> str:
    """stunnel, installed with apt-get (Debian's stunnel4) when missing and we are root."""
    try:
        return ensure_stunnel(install=True)
    except StunnelUnavailableError as exc:
        pytest.skip(f"TLS tests need stunnel: {exc}")


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    d = tmp_path_factory.mktemp("pki")
    ca = trustme.CA()
    server = ca.issue_cert("127.0.0.1", "localhost")
    other = ca.issue_cert("kafka.other-host.test")
    client = ca.issue_cert("kafka-async-test-client")
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
    ca.cert_pem.write_to_path(str(paths.ca))
    trustme.CA().cert_pem.write_to_path(str(paths.unrelated_ca))
    for leaf, cert, key in (
        (server, paths.server_cert, paths.server_key),
        (other, paths.other_host_cert, paths.other_host_key),
        (client, paths.client_cert, paths.client_key),
    ):
        # The chain (leaf first) in one file, as stunnel and ssl.load_cert_chain expect.
        cert.write_bytes(b"".join(blob.bytes() for blob in leaf.cert_chain_pems))
        leaf.private_key_pem.write_to_path(str(key))
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
