"""Shared types of the security tests (imported by conftest and the test modules)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kafka_async.testing import EmbeddedBroker
from tests.harness.jars import class_mentions, first_class_present, jars_with_class
from tests.harness.tls import StunnelProxy

__all__ = [
    "AUTHORIZERS",
    "Certs",
    "TLSBroker",
    "TLSBrokerFactory",
    "class_mentions",
    "first_class_present",
    "jars_with_class",
]


@dataclass(frozen=True)
class Certs:
    """PEM files of a throwaway PKI."""

    ca: Path
    #: Server certificate for 127.0.0.1 and localhost, and its key.
    server_cert: Path
    server_key: Path
    #: Server certificate for another host name only.
    other_host_cert: Path
    other_host_key: Path
    #: Client certificate (for mutual TLS) and its key.
    client_cert: Path
    client_key: Path
    #: A CA that signed nothing here (a wrong trust anchor).
    unrelated_ca: Path


@dataclass
class TLSBroker:
    """A Tansu broker reachable only through stunnel (it advertises the TLS port)."""

    proxy: StunnelProxy
    broker: EmbeddedBroker

    @property
    def address(self) -> str:
        return self.proxy.address


TLSBrokerFactory = Callable[..., TLSBroker]


#: The authorizer of each broker mode: KRaft's reads ACLs from the metadata log, ZooKeeper
#: mode's (which needs zookeeper.connect) from ZooKeeper.
AUTHORIZERS = {
    "kraft": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "zookeeper": "kafka.security.authorizer.AclAuthorizer",
}
