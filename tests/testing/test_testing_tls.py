"""tests.harness.tls.CertificateAuthority: certificates a strict verifier accepts.

Every handshake here runs with ``ssl.VERIFY_X509_STRICT`` set explicitly (Python 3.13's
default context sets it; older ones do not), in memory (two ``ssl.MemoryBIO`` pairs), so the
checks are OpenSSL's own on every Python the matrix runs. A control certificate without an
authority key identifier shows the strict flag really is in force.
"""

from __future__ import annotations

import datetime
import ssl
from pathlib import Path

import pytest

from tests.harness.tls import CertificateAuthority

x509 = pytest.importorskip("cryptography.x509")
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID  # noqa: E402


def _strict_client(cafile: Path) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(cafile))
    ctx.verify_flags |= ssl.VERIFY_X509_STRICT
    return ctx


def _server(cert: Path, key: Path, *, client_ca: Path | None = None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
    if client_ca is not None:
        ctx.load_verify_locations(cafile=str(client_ca))
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.verify_flags |= ssl.VERIFY_X509_STRICT
    return ctx


def _handshake(
    client_ctx: ssl.SSLContext, server_ctx: ssl.SSLContext, server_hostname: str
) -> tuple[ssl.SSLObject, ssl.SSLObject]:
    """Run a TLS handshake between two in-memory ends; both ends when it completes.

    Raises what the failing end raised (``ssl.SSLCertVerificationError`` on the verifier).
    """
    to_server, to_client = ssl.MemoryBIO(), ssl.MemoryBIO()
    c_out, s_out = ssl.MemoryBIO(), ssl.MemoryBIO()
    client = client_ctx.wrap_bio(to_client, c_out, server_hostname=server_hostname)
    server = server_ctx.wrap_bio(to_server, s_out, server_side=True)
    done = {"client": False, "server": False}
    for _ in range(20):
        for name, end in (("client", client), ("server", server)):
            if not done[name]:
                try:
                    end.do_handshake()
                    done[name] = True
                except ssl.SSLWantReadError:
                    pass
        to_server.write(c_out.read())
        to_client.write(s_out.read())
        if all(done.values()) and not c_out.pending and not s_out.pending:
            # TLS 1.3: the server verifies a client certificate on the client's last
            # flight, and the client learns of a refusal on its next read.
            try:
                client.read(1)
            except ssl.SSLWantReadError:
                pass
            return client, server
    raise AssertionError("handshake did not finish in 20 rounds")


@pytest.fixture(scope="module")
def ca() -> CertificateAuthority:
    return CertificateAuthority()


@pytest.fixture
def ca_file(ca: CertificateAuthority, tmp_path: Path) -> Path:
    return ca.write(tmp_path / "ca.pem")


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_a_strict_client_accepts_the_server_certificate(
    ca: CertificateAuthority, ca_file: Path, tmp_path: Path, host: str
) -> None:
    cert, key = ca.issue("127.0.0.1", "localhost").write(tmp_path / "s.pem", tmp_path / "s.key")
    client_ctx = _strict_client(ca_file)
    assert client_ctx.verify_flags & ssl.VERIFY_X509_STRICT
    assert client_ctx.check_hostname

    client, _ = _handshake(client_ctx, _server(cert, key), host)

    peer = client.getpeercert()
    assert peer is not None
    assert ("IP Address", "127.0.0.1") in peer["subjectAltName"]
    assert ("DNS", "localhost") in peer["subjectAltName"]


def test_mutual_tls_with_strict_verification_on_both_ends(
    ca: CertificateAuthority, ca_file: Path, tmp_path: Path
) -> None:
    server_cert, server_key = ca.issue("localhost").write(tmp_path / "s.pem", tmp_path / "s.key")
    client_cert, client_key = ca.issue("kafka-async-test-client").write(
        tmp_path / "c.pem", tmp_path / "c.key"
    )
    client_ctx = _strict_client(ca_file)
    client_ctx.load_cert_chain(client_cert, client_key)

    _, server = _handshake(
        client_ctx, _server(server_cert, server_key, client_ca=ca_file), "localhost"
    )

    peer = server.getpeercert()
    assert peer is not None
    assert peer["subject"] == ((("commonName", "kafka-async-test-client"),),)


def test_a_client_without_a_certificate_is_refused_by_a_mutual_tls_server(
    ca: CertificateAuthority, ca_file: Path, tmp_path: Path
) -> None:
    cert, key = ca.issue("localhost").write(tmp_path / "s.pem", tmp_path / "s.key")
    with pytest.raises(ssl.SSLError):
        _handshake(_strict_client(ca_file), _server(cert, key, client_ca=ca_file), "localhost")


def test_the_wrong_host_name_is_refused(
    ca: CertificateAuthority, ca_file: Path, tmp_path: Path
) -> None:
    cert, key = ca.issue("kafka.other-host.test").write(tmp_path / "s.pem", tmp_path / "s.key")
    with pytest.raises(ssl.SSLCertVerificationError, match="mismatch"):
        _handshake(_strict_client(ca_file), _server(cert, key), "127.0.0.1")


def test_a_certificate_from_another_ca_is_refused(ca_file: Path, tmp_path: Path) -> None:
    other = CertificateAuthority("another test CA")
    cert, key = other.issue("localhost").write(tmp_path / "s.pem", tmp_path / "s.key")
    with pytest.raises(
        ssl.SSLCertVerificationError, match="self-signed certificate in certificate chain"
    ):
        _handshake(_strict_client(ca_file), _server(cert, key), "localhost")


def _chain_without_authority_key_identifier(tmp: Path) -> tuple[Path, Path, Path]:
    """A CA and a leaf like the ones CertificateAuthority makes, minus the leaf's AKI."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "control CA")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(True, False, False, False, False, True, True, False, False),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    paths = (tmp / "control-ca.pem", tmp / "control.pem", tmp / "control.key")
    paths[0].write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


def test_control_strict_verification_refuses_a_leaf_without_authority_key_identifier(
    tmp_path: Path,
) -> None:
    ca_file, cert, key = _chain_without_authority_key_identifier(tmp_path)
    with pytest.raises(ssl.SSLCertVerificationError, match="Authority Key Identifier"):
        _handshake(_strict_client(ca_file), _server(cert, key), "localhost")

    lenient = ssl.create_default_context(cafile=str(ca_file))
    lenient.verify_flags &= ~ssl.VERIFY_X509_STRICT
    _handshake(lenient, _server(cert, key), "localhost")


def test_the_extensions_a_strict_verifier_looks_for(ca: CertificateAuthority) -> None:
    root = ca.certificate
    ca_ski = root.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    basic = root.extensions.get_extension_for_class(x509.BasicConstraints)
    assert basic.critical
    assert basic.value.ca
    usage = root.extensions.get_extension_for_class(x509.KeyUsage)
    assert usage.critical
    assert usage.value.key_cert_sign
    assert root.version is x509.Version.v3

    leaf = x509.load_pem_x509_certificate(ca.issue("127.0.0.1").cert_pem)
    assert leaf.version is x509.Version.v3
    assert leaf.serial_number > 0
    aki = leaf.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier).value
    assert aki.key_identifier == ca_ski.digest
    leaf.extensions.get_extension_for_class(x509.SubjectKeyIdentifier)
    assert not leaf.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    leaf_usage = leaf.extensions.get_extension_for_class(x509.KeyUsage)
    assert leaf_usage.critical
    assert leaf_usage.value.digital_signature
    assert not leaf_usage.value.key_cert_sign
    eku = leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert set(eku) == {ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH}
    leaf.verify_directly_issued_by(root)


def test_the_chain_file_holds_the_leaf_then_the_ca(ca: CertificateAuthority) -> None:
    chain = x509.load_pem_x509_certificates(ca.issue("localhost").cert_pem)
    assert [c.subject for c in chain] == [
        x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]),
        ca.certificate.subject,
    ]


def test_an_encrypted_key_loads_with_its_password_only(
    ca: CertificateAuthority, tmp_path: Path
) -> None:
    cert, key = ca.issue("localhost").write(
        tmp_path / "s.pem", tmp_path / "s.key", password=b"s3cret"
    )
    assert b"ENCRYPTED" in key.read_bytes()
    assert key.stat().st_mode & 0o077 == 0
    ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(
        cert, key, password="s3cret"
    )
    with pytest.raises(ssl.SSLError):
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(
            cert, key, password="wrong"
        )


def test_bad_arguments_are_value_errors(ca: CertificateAuthority) -> None:
    with pytest.raises(ValueError, match="at least one"):
        ca.issue()
    with pytest.raises(ValueError, match="at least one"):
        ca.issue("")
    with pytest.raises(ValueError, match="positive"):
        ca.issue("localhost", valid_for=datetime.timedelta(0))
    with pytest.raises(ValueError, match="positive"):
        CertificateAuthority(valid_for=datetime.timedelta(seconds=-1))
