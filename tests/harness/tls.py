"""TLS for tests: throwaway certificates, and a real TLS terminator (stunnel) for a broker.

:class:`CertificateAuthority` makes a CA and issues server and client certificates with the
extensions a real CA puts in (basic constraints, key usage, extended key usage, subject and
authority key identifiers, subject alternative names), so strict verification accepts them:
Python 3.13's default context sets ``ssl.VERIFY_X509_STRICT``, under which OpenSSL refuses a
chain whose certificates lack, for example, an authority key identifier. It needs the
``cryptography`` package::

    ca = CertificateAuthority()
    ca.write(tmp / "ca.pem")
    ca.issue("127.0.0.1", "localhost").write(tmp / "server.pem", tmp / "server.key")

The Tansu build we test with does not terminate TLS itself, so :class:`StunnelProxy` runs
``stunnel`` on a loopback port with a server certificate, forwarding the decrypted bytes to
the broker. Start the proxy first and give its port to the broker as
``EmbeddedBroker(advertised_port=proxy.port)`` so Metadata sends clients back through TLS::

    with StunnelProxy(cert=cert_pem, key=key_pem) as tls:
        with EmbeddedBroker(advertised_port=tls.port) as broker:
            tls.set_target(broker.host, broker.port)
            ...  # clients bootstrap from tls.address with security_protocol="SSL"

:func:`ensure_stunnel` finds the binary and, when it is missing and we are root on a
Debian-like system (CI), installs Debian's ``stunnel4`` package with apt-get.
"""

from __future__ import annotations

import datetime
import ipaddress
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from tests.harness.apt import apt_install

if TYPE_CHECKING:
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ec

__all__ = [
    "CertificateAuthority",
    "IssuedCertificate",
    "StunnelProxy",
    "StunnelUnavailableError",
    "ensure_stunnel",
    "find_stunnel",
]

_APT_TIMEOUT = 300.0


#: Certificates start this long before they are made, so a skewed clock still accepts them.
_BACKDATE = datetime.timedelta(minutes=5)


@dataclass(frozen=True)
class IssuedCertificate:
    """A certificate issued by a :class:`CertificateAuthority`, with its private key.

    Attributes:
        cert_pem: the chain as PEM, leaf first, then the CA certificate (what
            ``SSLContext.load_cert_chain`` and stunnel's ``cert`` expect).
        key_pem: the leaf's private key, unencrypted PKCS#8 PEM.
    """

    cert_pem: bytes
    key_pem: bytes

    def write(
        self, cert: str | Path, key: str | Path, *, password: bytes | None = None
    ) -> tuple[Path, Path]:
        """Write the chain and the key (encrypted with ``password`` when given); the paths."""
        cert_path, key_path = Path(cert), Path(key)
        cert_path.write_bytes(self.cert_pem)
        key_bytes = self.key_pem
        if password is not None:
            from cryptography.hazmat.primitives import serialization

            private = serialization.load_pem_private_key(self.key_pem, password=None)
            key_bytes = private.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.BestAvailableEncryption(password),
            )
        key_path.write_bytes(key_bytes)
        key_path.chmod(0o600)
        return cert_path, key_path


def _crypto() -> None:
    try:
        import cryptography  # noqa: F401
    except ImportError:
        raise ImportError(
            "tests.harness.tls.CertificateAuthority needs the 'cryptography' package"
        ) from None


class CertificateAuthority:
    """A throwaway certificate authority for tests (an EC P-256 key, kept in memory).

    Its certificate and every certificate it issues carry what a strict verifier
    (``ssl.VERIFY_X509_STRICT``, the default from Python 3.13 on) requires: version 3, a
    positive serial, critical basic constraints and key usage, subject and authority key
    identifiers; issued certificates also name their hosts as subject alternative names and
    allow both server and client authentication (extended key usage), so one CA serves
    mutual TLS too.

    Args:
        name: the CA's common name.
        valid_for: how long its certificate (and by default those it issues) stays valid.
    """

    def __init__(
        self,
        name: str = "kafka-async test CA",
        *,
        valid_for: datetime.timedelta = datetime.timedelta(days=1),
    ) -> None:
        _crypto()
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID

        if valid_for <= datetime.timedelta(0):
            raise ValueError(f"valid_for must be positive, not {valid_for}")
        self.valid_for = valid_for
        self._key: ec.EllipticCurvePrivateKey = ec.generate_private_key(ec.SECP256R1())
        self._name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        ski = x509.SubjectKeyIdentifier.from_public_key(self._key.public_key())
        now = datetime.datetime.now(datetime.timezone.utc)
        self._cert: x509.Certificate = (
            x509.CertificateBuilder()
            .subject_name(self._name)
            .issuer_name(self._name)
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - _BACKDATE)
            .not_valid_after(now + valid_for)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(ski, critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski),
                critical=False,
            )
            .sign(self._key, hashes.SHA256())
        )
        self.cert_pem: bytes = self._cert.public_bytes(serialization.Encoding.PEM)
        """The CA certificate as PEM (the trust anchor clients load as ``cafile``)."""

    @property
    def certificate(self) -> x509.Certificate:
        """The CA certificate (a ``cryptography`` object)."""
        return self._cert

    def write(self, path: str | Path) -> Path:
        """Write the CA certificate (PEM) to ``path``; the path."""
        out = Path(path)
        out.write_bytes(self.cert_pem)
        return out

    def issue(self, *names: str, valid_for: datetime.timedelta | None = None) -> IssuedCertificate:
        """A certificate for ``names`` (host names or IP addresses; the first is also the
        common name), valid for ``valid_for`` (default: the CA's), signed by this CA."""
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

        if not names or not all(isinstance(n, str) and n for n in names):
            raise ValueError("issue() needs at least one non-empty host name or IP address")
        lifetime = self.valid_for if valid_for is None else valid_for
        if lifetime <= datetime.timedelta(0):
            raise ValueError(f"valid_for must be positive, not {lifetime}")
        alt_names: list[x509.GeneralName] = []
        for name in names:
            try:
                alt_names.append(x509.IPAddress(ipaddress.ip_address(name)))
            except ValueError:
                alt_names.append(x509.DNSName(name))
        key = ec.generate_private_key(ec.SECP256R1())
        ca_ski = self._cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier)
        now = datetime.datetime.now(datetime.timezone.utc)
        cert = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]))
            .issuer_name(self._name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - _BACKDATE)
            .not_valid_after(now + lifetime)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=False,
                    crl_sign=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(
                x509.ExtendedKeyUsage(
                    [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
                ),
                critical=False,
            )
            .add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
            .add_extension(
                x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False
            )
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski.value),
                critical=False,
            )
            .sign(self._key, hashes.SHA256())
        )
        return IssuedCertificate(
            cert_pem=cert.public_bytes(serialization.Encoding.PEM) + self.cert_pem,
            key_pem=key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            ),
        )


class StunnelUnavailableError(RuntimeError):
    """stunnel is not installed and could not be installed (the message says why)."""


def find_stunnel() -> str | None:
    """Path of the stunnel binary, or None."""
    for name in ("stunnel", "stunnel4"):
        path = shutil.which(name)
        if path:
            return path
    return None


def ensure_stunnel(*, install: bool = True) -> str:
    """The stunnel binary; installs Debian's ``stunnel4`` if it is missing and allowed.

    Installing needs root and apt-get (as on a fresh Debian CI machine). Raises
    :class:`StunnelUnavailableError` with the reason otherwise.
    """
    if not install:
        path = find_stunnel()
        if path:
            return path
        raise StunnelUnavailableError("stunnel is not installed (Debian package stunnel4)")
    return apt_install("stunnel4", find_stunnel, StunnelUnavailableError, timeout=_APT_TIMEOUT)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class StunnelProxy:
    """stunnel accepting TLS on ``127.0.0.1:port`` and forwarding to a plaintext target.

    Args:
        cert, key: the server certificate chain and key (PEM files).
        client_ca: when given, clients must present a certificate signed by this CA
            (``verify = 2``: mutual TLS).
        target: ``(host, port)`` to forward to; may be set later with :meth:`set_target`
            (stunnel is started then), so the proxy's port can be known before the broker
            that must advertise it starts.
        startup_timeout: seconds to wait for stunnel to accept connections.
    """

    def __init__(
        self,
        *,
        cert: str | Path,
        key: str | Path,
        client_ca: str | Path | None = None,
        target: tuple[str, int] | None = None,
        startup_timeout: float = 10.0,
    ) -> None:
        self.cert = Path(cert)
        self.key = Path(key)
        self.client_ca = Path(client_ca) if client_ca is not None else None
        self.target = target
        self.startup_timeout = startup_timeout
        self.host = "127.0.0.1"
        self.port = _free_port()
        self._dir = Path(tempfile.mkdtemp(prefix="kafka-async-stunnel-"))
        self.log_path = self._dir / "stunnel.log"
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        """``"127.0.0.1:port"`` to bootstrap from."""
        return f"{self.host}:{self.port}"

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<StunnelProxy {self.address} -> {self.target} {state}>"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def log_tail(self, lines: int = 30) -> str:
        """The end of stunnel's log (handshake errors are logged there)."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def _config(self) -> str:
        assert self.target is not None
        lines = [
            "foreground = yes",
            "pid =",
            "debug = 5",
            f"output = {self.log_path}",
            "[kafka]",
            f"accept = {self.host}:{self.port}",
            f"connect = {self.target[0]}:{self.target[1]}",
            f"cert = {self.cert}",
            f"key = {self.key}",
        ]
        if self.client_ca is not None:
            lines += [f"CAfile = {self.client_ca}", "verify = 2"]
        return "\n".join(lines) + "\n"

    def set_target(self, host: str, port: int) -> None:
        """Forward to ``host:port`` and start stunnel (restart it if running)."""
        self.target = (host, port)
        self.stop()
        self.start()

    def start(self) -> StunnelProxy:
        """Start stunnel and wait until it accepts connections."""
        if self.target is None:
            raise RuntimeError("StunnelProxy: set a target first")
        binary = ensure_stunnel()
        conf = self._dir / "stunnel.conf"
        conf.write_text(self._config())
        self._proc = subprocess.Popen(
            [binary, str(conf)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(
                    f"stunnel exited with status {self._proc.returncode}:\n{self.log_tail()}"
                )
            try:
                with socket.create_connection((self.host, self.port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"stunnel not accepting within {self.startup_timeout} s")

    def stop(self) -> None:
        """Stop stunnel (SIGTERM, SIGKILL after 2 s)."""
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(2.0)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(2.0)

    def __enter__(self) -> StunnelProxy:
        if self.target is not None:
            self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
        shutil.rmtree(self._dir, ignore_errors=True)
