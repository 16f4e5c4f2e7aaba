"""TLS for broker connections: building the context and naming handshake failures.

A context built here is strict by default (certificate chain and host name verified, TLS 1.2
or newer); ``insecure_skip_verify`` is the only way to loosen it and the config logs a
warning when it is used. :func:`open_tls_stream` turns OpenSSL's exceptions into
:class:`TLSHandshakeError` with the host dialled and the reason, so a wrong CA or a
certificate for another host reads as what it is.
"""

from __future__ import annotations

import ssl

import anyio
import anyio.abc

from ..errors import ConfigError, KafkaConnectionError

__all__ = ["TLSHandshakeError", "build_context", "open_tls_stream"]


class TLSHandshakeError(KafkaConnectionError):
    """The TLS handshake with a broker failed: its certificate was refused (unknown CA,
    wrong host name, expired) or it refused ours.

    Not retriable: trying again gives the same answer until the configuration changes, so
    clients raise it at once instead of retrying until a deadline.
    """

    retriable = False


def build_context(
    *,
    cafile: str | None = None,
    certfile: str | None = None,
    keyfile: str | None = None,
    password: str | None = None,
    insecure_skip_verify: bool = False,
) -> ssl.SSLContext:
    """A client context: ``cafile`` (or the system CAs) as trust, an optional client
    certificate, TLS 1.2+, host names checked unless ``insecure_skip_verify``.

    Raises ``ConfigError`` for unreadable files or a wrong key password (the password itself
    never appears in the message).
    """
    try:
        ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=cafile)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"ssl_cafile: cannot load {cafile!r}: {_reason(exc)}") from None
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    if certfile is not None:
        try:
            ctx.load_cert_chain(certfile, keyfile, password)
        except (OSError, ssl.SSLError) as exc:
            # The exception text comes from OpenSSL and never contains the password, but
            # keep the chained exception off anyway: its args are not ours to vouch for.
            raise ConfigError(
                f"ssl_certfile/ssl_keyfile: cannot load {certfile!r}"
                + (f" / {keyfile!r}" if keyfile else "")
                + f": {_reason(exc)} (a wrong ssl_password reads as a bad key)"
            ) from None
    if insecure_skip_verify:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    return ctx


def _reason(exc: BaseException) -> str:
    if isinstance(exc, ssl.SSLCertVerificationError) and exc.verify_message:
        return str(exc.verify_message)
    if isinstance(exc, ssl.SSLError) and exc.reason:
        return str(exc.reason)
    if isinstance(exc, OSError) and exc.strerror:
        return str(exc.strerror)
    return str(exc) or type(exc).__name__


def describe_handshake_error(host: str, port: int, exc: BaseException) -> str:
    """A one-line explanation of a failed TLS handshake with ``host:port``."""
    where = f"{host}:{port}"
    if isinstance(exc, ssl.SSLCertVerificationError):
        reason = _reason(exc)
        if "hostname" in reason.lower() or "ip address mismatch" in reason.lower():
            hint = "the certificate does not name this host (wrong host name)"
        elif "issuer" in reason.lower() or "self-signed" in reason.lower():
            hint = "the certificate is not signed by a trusted CA (check ssl_cafile)"
        else:
            hint = "the certificate was refused"
        return f"{where}: cannot connect: TLS handshake failed: {hint}: {reason}"
    return f"{where}: cannot connect: TLS handshake failed: {_reason(exc)}"


async def open_tls_stream(host: str, port: int, ctx: ssl.SSLContext) -> anyio.abc.ByteStream:
    """TCP to ``host:port``, then a TLS handshake with ``host`` as the expected name.

    Raises :class:`TLSHandshakeError` when the handshake is refused, ``OSError`` when the
    TCP connect fails and ``KafkaConnectionError`` when the peer hangs up mid-handshake.
    """
    try:
        # tls_standard_compatible=False: Kafka brokers often drop the socket without a TLS
        # close_notify, which is harmless here since every frame carries its own length.
        return await anyio.connect_tcp(
            host, port, ssl_context=ctx, tls_standard_compatible=False, tls_hostname=host
        )
    except ssl.SSLEOFError as exc:
        raise KafkaConnectionError(
            f"{host}:{port}: the peer closed the connection during the TLS handshake"
        ) from exc
    except ssl.SSLError as exc:
        raise TLSHandshakeError(describe_handshake_error(host, port, exc)) from exc
    except (anyio.EndOfStream, anyio.BrokenResourceError) as exc:
        raise KafkaConnectionError(
            f"{host}:{port}: the peer closed the connection during the TLS handshake "
            "(is this a TLS port? does it want a client certificate?)"
        ) from exc
