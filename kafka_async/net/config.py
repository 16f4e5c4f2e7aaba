"""Connection and client settings shared by the producer, consumer and admin client.

``ClientConfig`` is frozen and validated on construction: a wrong value raises
:class:`~kafka_async.errors.ConfigError` naming the setting. Names follow aiokafka's where
one exists, so code moves over with few edits.

Each setting is declared once, in :mod:`kafka_async.net.settings` (name, type, default,
check, meaning); the fields of ``ClientConfig`` and :class:`ClientSettings`, the
``TypedDict`` that types the clients' ``**settings`` (extended by ``ProducerSettings``,
``ConsumerSettings`` and ``AdminSettings``), are generated from it (:mod:`kafka_async.settings`).

Security
--------
``security_protocol`` is PLAINTEXT, SSL (TLS), SASL_PLAINTEXT or SASL_SSL (SASL over TLS).
TLS applies to every connection, bootstrap servers included.

* TLS: pass an ``ssl_context`` you built, or let the client build one from ``ssl_cafile``
  (CA bundle; the system's CAs when omitted), ``ssl_certfile`` / ``ssl_keyfile`` /
  ``ssl_password`` (a client certificate for mutual TLS). A context built here verifies the
  broker's certificate chain *and* that the certificate names the host dialled (the
  bootstrap host, then the host each broker advertises). Turning both checks off takes
  ``ssl_insecure_skip_verify=True``, which logs a warning every time a config with it is
  made; use it against test brokers only. A refused certificate raises
  :class:`~kafka_async.net.tls.TLSHandshakeError` (a non-retriable
  ``KafkaConnectionError``) naming the host and OpenSSL's reason, at once rather than after
  the bootstrap deadline.
* SASL: ``sasl_mechanism`` PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 (with
  ``sasl_plain_username`` / ``sasl_plain_password``; SCRAM needs the ``scramp`` package,
  the ``kafka-async-client[scram]`` extra) or OAUTHBEARER (with ``sasl_oauth_token_provider``, an
  object with ``async token() -> str`` and optionally ``extensions() -> dict``, asked for a
  token at every authentication, so it decides when to refresh;
  :class:`~kafka_async.net.sasl.RefreshingTokenProvider` caches a token and fetches a new one
  at 80% of its lifetime). SCRAM checks the broker's
  signature: a broker that does not know the password is refused with
  ``SaslAuthenticationFailedError``. Wrong credentials raise
  ``SaslAuthenticationFailedError`` to the caller at once; the pool does not retry them in
  a loop (the next attempt waits for the node's reconnect backoff). When the broker gives
  the session a lifetime (KIP-368, ``connections.max.reauth.ms`` or a token's expiry), the
  connection authenticates again on the same socket at 85-95% of that lifetime: writes
  pause, responses to requests already sent keep flowing, then writes resume.
* Secrets (``sasl_plain_password``, ``ssl_password``, the token provider and its tokens)
  never appear in ``repr``, ``to_dict()``, log records, exception messages or statistics.

Limits against a broken or hostile broker (on by default)
----------------------------------------------------------
* ``max_response_size`` (default 100 MiB): a response frame announcing more is refused from
  its 4-byte size prefix, before any of the body is read, with ``ResponseTooLargeError``;
  frames above 1 MiB are read into memory as their bytes arrive, so a peer announcing a
  large frame and sending little costs little.
* ``max_decompressed_size`` (consumer, default 64 MiB): a compressed record batch that
  inflates past it is refused with ``DecompressionLimitError`` (a ``CorruptRecordError``,
  raised by ``getmany``/``getone`` after the records before it were handed out) instead of
  exhausting memory: a decompression bomb costs at most about that much.
* ``fetch_max_bytes`` / ``max_partition_fetch_bytes`` (consumer) bound what one Fetch asks
  for; the response-size limit above still applies if a broker sends more.
* ``connect_timeout_ms`` bounds the TCP connect and TLS handshake, ``request_timeout_ms``
  every request including ApiVersions and the SASL exchange: a silent broker cannot hang a
  connect or a request.
* A SASL exchange longer than 16 rounds is abandoned; a SCRAM iteration count above
  1,000,000 is refused (a hostile broker could otherwise make the client burn CPU), and one
  below Kafka's minimum of 4096 too (it would yield a proof that is cheap to crack).
"""

from __future__ import annotations

import dataclasses
import logging
import ssl
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import ConfigError
from . import sasl, tls
from .settings import (
    DEFAULT_BOOTSTRAP_SERVERS,
    DEFAULT_MAX_RESPONSE_SIZE,
    SCHEMA,
    SECURITY_PROTOCOLS,
)
from .settings_generated import ClientFields, ClientSettings, SaslMechanismName, SecurityProtocol

__all__ = [
    "DEFAULT_BOOTSTRAP_SERVERS",
    "DEFAULT_MAX_RESPONSE_SIZE",
    "SECURITY_PROTOCOLS",
    "ClientConfig",
    "ClientSettings",
    "SaslMechanismName",
    "SecurityProtocol",
    "parse_bootstrap_servers",
    "with_bootstrap_servers",
]

log = logging.getLogger(__name__)


def parse_bootstrap_servers(value: str | Sequence[str]) -> tuple[tuple[str, int], ...]:
    """``"h1:9092,h2"`` or ``["h1:9092", "[::1]:9093"]`` -> ``((host, port), ...)``.

    A missing port means 9092. IPv6 literals go in brackets.
    """
    if isinstance(value, str):
        items = [part.strip() for part in value.split(",")]
    elif isinstance(value, Sequence):
        items = []
        for part in value:
            if not isinstance(part, str):
                raise ConfigError(f"bootstrap_servers: expected strings, got {part!r}")
            items.extend(p.strip() for p in part.split(","))
    else:
        raise ConfigError(
            f"bootstrap_servers: expected 'host:port,...' or a list of them, got {value!r}"
        )
    result: list[tuple[str, int]] = []
    for item in items:
        if not item:
            continue
        result.append(_parse_address(item))
    if not result:
        raise ConfigError("bootstrap_servers: at least one 'host:port' is required")
    return tuple(result)


def _parse_address(item: str) -> tuple[str, int]:
    port_text = "9092"
    if item.startswith("["):
        close = item.find("]")
        if close < 0:
            raise ConfigError(f"bootstrap_servers: unclosed '[' in {item!r}")
        host = item[1:close]
        rest = item[close + 1 :]
        if rest:
            if not rest.startswith(":"):
                raise ConfigError(f"bootstrap_servers: bad address {item!r}")
            port_text = rest[1:]
    elif item.count(":") == 1:
        host, port_text = item.split(":")
    elif ":" in item:
        raise ConfigError(f"bootstrap_servers: put IPv6 addresses in brackets: {item!r}")
    else:
        host = item
    if not host:
        raise ConfigError(f"bootstrap_servers: missing host in {item!r}")
    try:
        port = int(port_text)
    except ValueError:
        raise ConfigError(f"bootstrap_servers: bad port in {item!r}") from None
    if not 0 < port < 65536:
        raise ConfigError(f"bootstrap_servers: port out of range in {item!r}")
    return host, port


class ClientConfig(ClientFields):
    """Settings every client (producer, consumer, admin) shares. All times in milliseconds.

    Each setting is declared once, in :mod:`kafka_async.net.settings` (the fields come from
    there through ``settings_generated.py``); this class adds what relates settings to each
    other (TLS files need a TLS protocol, SASL needs credentials) and what is derived from
    them: ``addresses`` (the parsed ``bootstrap_servers``) and the TLS context.

    .. settings:client begin (make generate writes this list from net/settings.py)

    * ``bootstrap_servers`` ("localhost:9092"): brokers to bootstrap from: 'host:port,...' or a
      list; no port means 9092, IPv6 in brackets.
    * ``client_id`` ("kafka-async"): sent with every request (broker logs, quotas); printable
      ASCII.
    * ``request_timeout_ms`` (30000): deadline of one request, ApiVersions and the SASL exchange
      included.
    * ``connections_max_idle_ms`` (540000): close a connection idle this long.
    * ``metadata_max_age_ms`` (300000): refresh cluster metadata at least this often.
    * ``retry_backoff_ms`` (100): wait before retrying a failed request.
    * ``reconnect_backoff_ms`` (50): first wait before reconnecting to a broker (doubles per
      failure).
    * ``reconnect_backoff_max_ms`` (1000): longest wait between reconnects (>=
      reconnect_backoff_ms).
    * ``connect_timeout_ms`` (10000): deadline of the TCP connect and TLS handshake.
    * ``metadata_recovery_strategy`` ("rebootstrap"): 'rebootstrap': when no known broker gives
      metadata, go back to bootstrap_servers (KIP-899); 'none': keep retrying the known brokers.
    * ``metadata_recovery_rebootstrap_trigger_ms`` (300000): rebootstrap after this long without
      metadata from any known broker (KIP-1102).
    * ``max_response_size`` (100 MiB): a response frame announcing more bytes is refused before it
      is read.
    * ``api_version`` ("auto"): 'auto' or the oldest broker expected ('2.8.0'); versions are
      negotiated per connection either way.
    * ``security_protocol`` ("PLAINTEXT"): PLAINTEXT, SSL (TLS), SASL_PLAINTEXT or SASL_SSL.
    * ``ssl_context`` (None): a TLS context you configured (instead of the ssl_* files).
    * ``ssl_cafile`` (None): CA bundle (PEM) to verify brokers with; None: the system's CAs.
    * ``ssl_certfile`` (None): client certificate chain (PEM) for mutual TLS.
    * ``ssl_keyfile`` (None): private key (PEM) of the client certificate, if not in ssl_certfile.
    * ``ssl_password`` (None): password of ssl_keyfile.
    * ``ssl_insecure_skip_verify`` (False): accept any certificate for any host name (test brokers
      only; logs a warning).
    * ``sasl_mechanism`` ("PLAIN"): PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER.
    * ``sasl_plain_username`` (None): user name for PLAIN and SCRAM.
    * ``sasl_plain_password`` (None): password for PLAIN and SCRAM.
    * ``sasl_scram_token_auth`` (False): SCRAM: log in with a delegation token (user name: token
      id, password: base64 HMAC).
    * ``sasl_oauth_token_provider`` (None): OAUTHBEARER: an object with async token() (asked at
      every authentication).
    * ``sasl_kerberos_service_name`` ("kafka"): GSSAPI: the broker's Kerberos service name
      (service/host@REALM).
    * ``sasl_kerberos_domain_name`` (None): GSSAPI: host name for the broker's principal instead
      of the broker's own.
    * ``sasl_kerberos_principal`` (None): GSSAPI: the client's principal (client@REALM); None: the
      keytab's or cache's.
    * ``sasl_kerberos_keytab`` (None): GSSAPI: keytab file to log in with (tickets renewed from it
      as needed).
    * ``sasl_kerberos_ticket_cache`` (None): GSSAPI: ticket cache ('FILE:/path'); None:
      KRB5CCNAME's, or a private one with a keytab.
    * ``sasl_oauthbearer_method`` ("default"): OAUTHBEARER: 'default' (sasl_oauth_token_provider
      gives tokens) or 'oidc' (fetched from sasl_oauthbearer_token_endpoint_url).
    * ``sasl_oauthbearer_token_endpoint_url`` (None): OIDC: the identity provider's token endpoint
      (http:// or https://).
    * ``sasl_oauthbearer_grant_type`` ("client_credentials"): OIDC: 'client_credentials' (KIP-768)
      or 'urn:ietf:params:oauth:grant-type:jwt-bearer' (KIP-1139).
    * ``sasl_oauthbearer_client_id`` (None): OIDC client_credentials: the client id.
    * ``sasl_oauthbearer_client_secret`` (None): OIDC client_credentials: the client secret.
    * ``sasl_oauthbearer_scope`` (None): OIDC: the scope asked for (sent only when set).
    * ``sasl_oauthbearer_extensions`` (None): OIDC: SASL extensions sent with the token (KIP-342),
      'k=v,k2=v2' or a dict.
    * ``sasl_oauthbearer_header_urlencode`` (False): OIDC client_credentials: form-urlencode id
      and secret in the Basic header (RFC 6749 2.3.1).
    * ``sasl_oauthbearer_assertion_algorithm`` ("RS256"): OIDC jwt-bearer: how the assertion is
      signed.
    * ``sasl_oauthbearer_assertion_private_key_file`` (None): OIDC jwt-bearer: PEM private key
      (PKCS#8 or traditional) signing the assertion; read at every fetch.
    * ``sasl_oauthbearer_assertion_private_key_pem`` (None): OIDC jwt-bearer: the private key
      itself, PEM text (instead of the file).
    * ``sasl_oauthbearer_assertion_private_key_passphrase`` (None): OIDC jwt-bearer: passphrase of
      an encrypted private key.
    * ``sasl_oauthbearer_assertion_file`` (None): OIDC jwt-bearer: a file holding a ready-made
      assertion (read at every fetch; the other assertion settings are then unused).
    * ``sasl_oauthbearer_assertion_claim_aud`` (None): OIDC jwt-bearer: the assertion's aud claim.
    * ``sasl_oauthbearer_assertion_claim_iss`` (None): OIDC jwt-bearer: the assertion's iss claim.
    * ``sasl_oauthbearer_assertion_claim_sub`` (None): OIDC jwt-bearer: the assertion's sub claim.
    * ``sasl_oauthbearer_assertion_claim_exp_seconds`` (300): OIDC jwt-bearer: the assertion's
      exp, seconds after now.
    * ``sasl_oauthbearer_assertion_claim_nbf_seconds`` (60): OIDC jwt-bearer: the assertion's nbf,
      seconds before now.
    * ``sasl_oauthbearer_assertion_claim_jti_include`` (False): OIDC jwt-bearer: give the
      assertion a random jti claim.
    * ``https_ca_location`` (None): OIDC: CA bundle (PEM) verifying an https:// token endpoint;
      None: the system's CAs.
    * ``sasl_login_connect_timeout_ms`` (10000): OIDC: deadline of connecting to the token
      endpoint.
    * ``sasl_login_read_timeout_ms`` (10000): OIDC: deadline of each read of the token endpoint's
      answer.
    * ``sasl_login_retry_backoff_ms`` (100): OIDC: first wait before asking the token endpoint
      again (doubles per attempt).
    * ``sasl_login_retry_backoff_max_ms`` (10000): OIDC: longest wait between attempts, and how
      long retries go on.
    * ``sasl_aws_region`` (None): AWS_MSK_IAM: the cluster's AWS region; None: read from the
      broker host name (...kafka.<region>.amazonaws.com), else the configured one (AWS_REGION,
      profile).
    * ``sasl_aws_profile`` (None): AWS_MSK_IAM: the shared config/credentials profile to take
      credentials from; None: the default chain.
    * ``sasl_aws_role_arn`` (None): AWS_MSK_IAM: an IAM role to assume through STS with the
      resolved credentials.
    * ``sasl_aws_role_session_name`` (None): AWS_MSK_IAM: the session name when assuming
      sasl_aws_role_arn; None: kafka-async-<epoch ms>.
    * ``sasl_aws_sts_region`` (None): AWS_MSK_IAM: the STS region for assuming sasl_aws_role_arn;
      None: the cluster's region.
    * ``sasl_aws_access_key_id`` (None): AWS_MSK_IAM: an explicit access key id (with
      sasl_aws_secret_access_key) instead of the AWS credential chain.
    * ``sasl_aws_secret_access_key`` (None): AWS_MSK_IAM: the secret of sasl_aws_access_key_id.
    * ``sasl_aws_session_token`` (None): AWS_MSK_IAM: the session token of temporary explicit
      credentials.

    .. settings:client end
    """

    # A plain subclass (the generated dataclass gives __init__, repr, equality); the two
    # derived values are set once, in __post_init__, and frozen like the fields.
    __slots__ = ("_tls", "addresses")
    addresses: tuple[tuple[str, int], ...]
    _tls: ssl.SSLContext | None

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "addresses", parse_bootstrap_servers(self.bootstrap_servers))
        object.__setattr__(self, "_tls", None)
        if self.reconnect_backoff_max_ms < self.reconnect_backoff_ms:
            raise ConfigError(
                f"reconnect_backoff_max_ms ({self.reconnect_backoff_max_ms}) must be >= "
                f"reconnect_backoff_ms ({self.reconnect_backoff_ms})"
            )
        self._check_tls()
        self._check_sasl()

    def __setattr__(self, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

    def _check_tls(self) -> None:
        file_settings = [
            name
            for name in ("ssl_cafile", "ssl_certfile", "ssl_keyfile", "ssl_password")
            if getattr(self, name) is not None
        ]
        if self.ssl_insecure_skip_verify:
            file_settings.append("ssl_insecure_skip_verify")
        tls_settings = file_settings + (["ssl_context"] if self.ssl_context is not None else [])
        if tls_settings and not self.uses_tls:
            raise ConfigError(
                f"{tls_settings[0]}: set but security_protocol is {self.security_protocol}; "
                "use SSL or SASL_SSL"
            )
        if self.ssl_context is not None and file_settings:
            raise ConfigError(
                f"{file_settings[0]}: give either ssl_context or the ssl_* settings, not both "
                "(configure the context you pass yourself)"
            )
        if (self.ssl_keyfile or self.ssl_password) and not self.ssl_certfile:
            raise ConfigError("ssl_keyfile/ssl_password: set but ssl_certfile is missing")
        if not self.uses_tls:
            return
        if self.ssl_context is not None:
            object.__setattr__(self, "_tls", self.ssl_context)
            return
        object.__setattr__(
            self,
            "_tls",
            tls.build_context(
                cafile=self.ssl_cafile,
                certfile=self.ssl_certfile,
                keyfile=self.ssl_keyfile,
                password=self.ssl_password,
                insecure_skip_verify=self.ssl_insecure_skip_verify,
            ),
        )
        if self.ssl_insecure_skip_verify:
            log.warning(
                "ssl_insecure_skip_verify=True: broker certificates and host names are NOT "
                "verified; anyone on the network path can read and change the traffic"
            )

    def _check_sasl(self) -> None:
        if self.uses_sasl:
            sasl.validate_config(self)

    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]:
        # Rebuilt from the settings on unpickling: the TLS context built from the ssl_*
        # files cannot be pickled, the file names can (a given ssl_context still cannot).
        return (_rebuild_config, ({name: getattr(self, name) for name in self.field_names()},))

    # -- derived ---------------------------------------------------------------------------

    @property
    def uses_tls(self) -> bool:
        """True for SSL and SASL_SSL."""
        return self.security_protocol in ("SSL", "SASL_SSL")

    @property
    def uses_sasl(self) -> bool:
        """True for SASL_PLAINTEXT and SASL_SSL."""
        return self.security_protocol.startswith("SASL_")

    @property
    def request_timeout(self) -> float:
        """``request_timeout_ms`` in seconds."""
        return self.request_timeout_ms / 1000.0

    @property
    def connect_timeout(self) -> float:
        """``connect_timeout_ms`` in seconds."""
        return self.connect_timeout_ms / 1000.0

    def tls_context(self) -> ssl.SSLContext | None:
        """The context to wrap sockets with (None without TLS).

        The ``ssl_context`` given, else one built once from the ssl_* settings: certificate
        chain and host name checked, TLS 1.2 or newer.
        """
        return self._tls

    # -- construction ----------------------------------------------------------------------

    @classmethod
    def field_names(cls) -> frozenset[str]:
        """The keyword arguments ``ClientConfig`` accepts (the declared settings)."""
        return SCHEMA.names

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> tuple[ClientConfig, dict[str, Any]]:
        """Build a config from the settings it knows; return it and the unused kwargs."""
        own = {k: v for k, v in kwargs.items() if k in SCHEMA.names}
        rest = {k: v for k, v in kwargs.items() if k not in SCHEMA.names}
        return cls(**own), rest

    def replace(self, **changes: Any) -> ClientConfig:
        """A copy with some settings changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> Mapping[str, Any]:
        """The settings as a dict, with passwords and the token provider masked (safe to log)."""
        out = {name: getattr(self, name) for name in sorted(self.field_names())}
        for setting in SCHEMA.settings:
            if setting.secret and out[setting.name] is not None:
                out[setting.name] = "********"
        return out


def with_bootstrap_servers(
    positional: str | Sequence[str] | None, settings: Mapping[str, Any]
) -> dict[str, Any]:
    """``settings`` with ``bootstrap_servers`` taken from a client's first positional argument.

    Producer and AdminClient take ``bootstrap_servers`` positionally (``Producer("h:9092")``)
    or as a keyword that lands in their typed ``**settings``; the parameter is positional-only
    so the two cannot clash for mypy, and this keeps the run-time rule that both at once is a
    ``TypeError``. ``positional`` is None when not given (the default address then applies).
    """
    out = dict(settings)
    if positional is not None:
        if "bootstrap_servers" in out:
            raise TypeError("bootstrap_servers given both positionally and as a keyword")
        out["bootstrap_servers"] = positional
    return out


def _rebuild_config(settings: dict[str, Any]) -> ClientConfig:
    return ClientConfig(**settings)
