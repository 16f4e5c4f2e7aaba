"""The connection and security settings every client takes, each declared once.

``SCHEMA`` is the source: :class:`~kafka_async.net.config.ClientConfig` validates with it,
and ``make generate`` writes ``ClientSettings`` / ``ClientFields``
(``settings_generated.py``) and the README table from it. Relations between settings (TLS
files only with a TLS protocol, credentials with SASL) are checked by ``ClientConfig``.
See :mod:`kafka_async.settings`.
"""

from __future__ import annotations

import re
import ssl
from collections.abc import Sequence
from typing import Any

from ..errors import ConfigError
from ..settings.spec import Bool, Choice, Custom, Instance, Int, Schema, Setting
from . import aws_msk_iam, gssapi, oidc, sasl

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
#: ``metadata_recovery_strategy`` values (KIP-899), as the Java client spells them.
METADATA_RECOVERY_STRATEGIES = ("rebootstrap", "none")
#: The built-in SASL mechanisms; one added with ``sasl.register_mechanism`` works at run time
#: but needs a ``cast`` to pass mypy.
SASL_MECHANISMS = (
    "AWS_MSK_IAM",
    "GSSAPI",
    "OAUTHBEARER",
    "PLAIN",
    "SCRAM-SHA-256",
    "SCRAM-SHA-512",
)

DEFAULT_MAX_RESPONSE_SIZE = 100 * 1024 * 1024
DEFAULT_BOOTSTRAP_SERVERS = "localhost:9092"

_CLIENT_ID_RE = re.compile(r"^[\x20-\x7e]*$")
_API_VERSION_RE = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?$")

#: Imports the generated module needs for the annotations below.
IMPORTS = (
    "import ssl",
    "from collections.abc import Sequence",
    "from . import sasl",
)


def _bootstrap_servers(name: str, value: Any) -> Any:
    # Parsed into addresses by ClientConfig (which reports a bad one); here only the shape.
    if isinstance(value, str):
        return value
    if isinstance(value, Sequence):
        for part in value:
            if not isinstance(part, str):
                raise ConfigError(f"{name}: expected strings, got {part!r}")
        return value
    raise ConfigError(f"{name}: expected 'host:port,...' or a list of them, got {value!r}")


def _client_id(name: str, value: Any) -> Any:
    if not isinstance(value, str) or not _CLIENT_ID_RE.match(value):
        raise ConfigError(f"{name}: expected a printable ASCII string, got {value!r}")
    return value


def _api_version(name: str, value: Any) -> Any:
    if value == "auto":
        return value
    match = _API_VERSION_RE.match(value) if isinstance(value, str) else None
    if match is None:
        raise ConfigError(f"{name}: expected 'auto' or a version like '2.8.0', got {value!r}")
    if (int(match.group(1)), int(match.group(2))) < (0, 10):
        raise ConfigError(f"{name}: brokers older than 0.10 are not supported, got {value!r}")
    return value


def _string(name: str, value: Any) -> Any:
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"{name}: expected a string, got {type(value).__name__}")
    return value


def _sasl_mechanism(name: str, value: Any) -> Any:
    # Registered mechanisms count too, so the choices are read at check time.
    if not isinstance(value, str) or value not in sasl.mechanism_names():
        raise ConfigError(
            f"{name}: expected one of {', '.join(sasl.mechanism_names())}, got {value!r}"
        )
    return value


def _token_provider(name: str, value: Any) -> Any:
    if value is not None and not callable(getattr(value, "token", None)):
        raise ConfigError(
            f"{name}: expected an object with an async token() method, got {type(value).__name__}"
        )
    return value


_STRING = Custom("str | None", _string)

SCHEMA = Schema(
    "client",
    [
        Setting(
            "bootstrap_servers",
            Custom("str | Sequence[str]", _bootstrap_servers),
            DEFAULT_BOOTSTRAP_SERVERS,
            "brokers to bootstrap from: 'host:port,...' or a list; no port means 9092, IPv6 "
            "in brackets",
        ),
        Setting(
            "client_id",
            Custom("str", _client_id),
            "kafka-async",
            "sent with every request (broker logs, quotas); printable ASCII",
        ),
        Setting(
            "request_timeout_ms",
            Int(low=1),
            30_000,
            "deadline of one request, ApiVersions and the SASL exchange included",
        ),
        Setting(
            "connections_max_idle_ms",
            Int(low=1),
            540_000,
            "close a connection idle this long",
        ),
        Setting(
            "metadata_max_age_ms",
            Int(low=0),
            300_000,
            "refresh cluster metadata at least this often",
        ),
        Setting("retry_backoff_ms", Int(low=0), 100, "wait before retrying a failed request"),
        Setting(
            "reconnect_backoff_ms",
            Int(low=0),
            50,
            "first wait before reconnecting to a broker (doubles per failure)",
        ),
        Setting(
            "reconnect_backoff_max_ms",
            Int(low=0),
            1_000,
            "longest wait between reconnects (>= reconnect_backoff_ms)",
        ),
        Setting(
            "connect_timeout_ms",
            Int(low=1),
            10_000,
            "deadline of the TCP connect and TLS handshake",
            java="socket.connection.setup.timeout.ms",
        ),
        Setting(
            "metadata_recovery_strategy",
            Choice(METADATA_RECOVERY_STRATEGIES, "MetadataRecoveryStrategy"),
            "rebootstrap",
            "'rebootstrap': when no known broker gives metadata, go back to bootstrap_servers "
            "(KIP-899); 'none': keep retrying the known brokers",
        ),
        Setting(
            "metadata_recovery_rebootstrap_trigger_ms",
            Int(low=0),
            300_000,
            "rebootstrap after this long without metadata from any known broker (KIP-1102)",
        ),
        Setting(
            "max_response_size",
            Int(low=1024, high=0x7FFFFFFF),
            DEFAULT_MAX_RESPONSE_SIZE,
            "a response frame announcing more bytes is refused before it is read",
            java="receive.message.max.bytes (librdkafka)",
            default_doc="100 MiB",
        ),
        Setting(
            "api_version",
            Custom("str", _api_version),
            "auto",
            "'auto' or the oldest broker expected ('2.8.0'); versions are negotiated per "
            "connection either way",
            java="",
        ),
        Setting(
            "security_protocol",
            Choice(SECURITY_PROTOCOLS, "SecurityProtocol"),
            "PLAINTEXT",
            "PLAINTEXT, SSL (TLS), SASL_PLAINTEXT or SASL_SSL",
        ),
        Setting(
            "ssl_context",
            Instance(ssl.SSLContext, "ssl.SSLContext | None"),
            None,
            "a TLS context you configured (instead of the ssl_* files)",
            java="",
        ),
        Setting(
            "ssl_cafile",
            _STRING,
            None,
            "CA bundle (PEM) to verify brokers with; None: the system's CAs",
            java="ssl.truststore.location",
        ),
        Setting(
            "ssl_certfile",
            _STRING,
            None,
            "client certificate chain (PEM) for mutual TLS",
            java="ssl.keystore.location",
        ),
        Setting(
            "ssl_keyfile",
            _STRING,
            None,
            "private key (PEM) of the client certificate, if not in ssl_certfile",
            java="ssl.key.location (librdkafka)",
        ),
        Setting(
            "ssl_password",
            _STRING,
            None,
            "password of ssl_keyfile",
            java="ssl.key.password",
            secret=True,
        ),
        Setting(
            "ssl_insecure_skip_verify",
            Bool(),
            False,
            "accept any certificate for any host name (test brokers only; logs a warning)",
            java="enable.ssl.certificate.verification=false (librdkafka)",
        ),
        Setting(
            "sasl_mechanism",
            Custom("SaslMechanismName", _sasl_mechanism, stored_as="str"),
            "PLAIN",
            "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER",
        ),
        Setting(
            "sasl_plain_username",
            _STRING,
            None,
            "user name for PLAIN and SCRAM",
            java="sasl.username (librdkafka)",
        ),
        Setting(
            "sasl_plain_password",
            _STRING,
            None,
            "password for PLAIN and SCRAM",
            java="sasl.password (librdkafka)",
            secret=True,
        ),
        Setting(
            "sasl_scram_token_auth",
            Bool(),
            False,
            "SCRAM: log in with a delegation token (user name: token id, password: base64 HMAC)",
            java="ScramLoginModule tokenauth=true",
        ),
        Setting(
            "sasl_oauth_token_provider",
            Custom("sasl.TokenProvider | None", _token_provider, stored_as="Any"),
            None,
            "OAUTHBEARER: an object with async token() (asked at every authentication)",
            java="sasl.login.callback.handler.class",
            secret=True,
        ),
        # Each mechanism module declares the settings only it reads.
        *gssapi.SETTINGS,
        *oidc.SETTINGS,
        *aws_msk_iam.SETTINGS,
    ],
)

#: Literal aliases the generated module defines besides the Choice ones.
ALIASES = {
    "SaslMechanismName": "Literal[" + ", ".join(f'"{m}"' for m in SASL_MECHANISMS) + "]",
}
