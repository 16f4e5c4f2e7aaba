"""Shared types of the security tests (imported by conftest and the test modules)."""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kafka_async.testing import EmbeddedBroker
from tests.harness.tls import StunnelProxy


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


def jars_with_class(libs: Path, name: str) -> list[str]:
    """The jars in ``libs`` (a release's jars folder) that hold class ``name``."""
    entry = name.replace(".", "/") + ".class"
    found = []
    for jar in sorted(libs.glob("*.jar")):
        with zipfile.ZipFile(jar) as z:
            if entry in z.namelist():
                found.append(jar.name)
    return found


def class_mentions(libs: Path, name: str, text: str) -> bool:
    """True when class ``name`` in the jars of ``libs`` holds the string ``text`` (a
    constant, such as the key of a setting the release defines)."""
    entry = name.replace(".", "/") + ".class"
    for jar in sorted(libs.glob("*.jar")):
        with zipfile.ZipFile(jar) as z:
            if entry in z.namelist() and text.encode() in z.read(entry):
                return True
    return False


def first_class_present(libs: Path, *names: str) -> str | None:
    """The first of ``names`` some jar in ``libs`` holds, or None."""
    return next((n for n in names if jars_with_class(libs, n)), None)


#: The authorizer of each broker mode: KRaft's reads ACLs from the metadata log, ZooKeeper
#: mode's (which needs zookeeper.connect) from ZooKeeper.
AUTHORIZERS = {
    "kraft": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "zookeeper": "kafka.security.authorizer.AclAuthorizer",
}
