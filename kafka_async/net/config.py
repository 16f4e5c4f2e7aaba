"""Connection and client settings shared by the producer, consumer and admin client.

``ClientConfig`` is frozen and validated on construction: a wrong value raises
:class:`~kafka_async.errors.ConfigError` naming the setting. Names follow aiokafka's where
one exists, so code moves over with few edits.

Higher-level configs build it from their own keyword arguments with
:meth:`ClientConfig.from_kwargs`, which takes the settings it knows and hands back the rest,
so validation lives in one place. :class:`ClientSettings` lists the same names as a
``TypedDict``: the clients' ``**settings`` are typed with it (and its extensions), so mypy
and editors know every name and value type before run time.

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
  the ``kafka-async[scram]`` extra) or OAUTHBEARER (with ``sasl_oauth_token_provider``, an
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
import re
import ssl
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

from ..errors import ConfigError
from . import sasl, tls

log = logging.getLogger(__name__)

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")

#: The values ``security_protocol`` accepts (``SECURITY_PROTOCOLS``; a test keeps them equal).
SecurityProtocol = Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]
#: The built-in SASL mechanisms (``sasl.mechanism_names()``). A mechanism added with
#: ``sasl.register_mechanism`` works at run time but needs a ``cast`` to pass mypy.
SaslMechanismName = Literal["OAUTHBEARER", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]


class ClientSettings(TypedDict, total=False):
    """The keyword arguments of :class:`ClientConfig`, typed for editors and mypy.

    Every client takes these (``Producer``, ``Consumer`` and ``AdminClient`` settings extend
    this); meaning, defaults and checks are those of the ``ClientConfig`` field of the same
    name. Values are still validated at run time (``ConfigError``), so untyped callers are
    as safe as before.
    """

    bootstrap_servers: str | Sequence[str]
    client_id: str
    request_timeout_ms: int
    connections_max_idle_ms: int
    metadata_max_age_ms: int
    retry_backoff_ms: int
    reconnect_backoff_ms: int
    reconnect_backoff_max_ms: int
    connect_timeout_ms: int
    max_response_size: int
    #: "auto" or a broker version such as "2.8.0".
    api_version: str
    security_protocol: SecurityProtocol
    ssl_context: ssl.SSLContext | None
    ssl_cafile: str | None
    ssl_certfile: str | None
    ssl_keyfile: str | None
    ssl_password: str | None
    ssl_insecure_skip_verify: bool
    sasl_mechanism: SaslMechanismName
    sasl_plain_username: str | None
    sasl_plain_password: str | None
    sasl_oauth_token_provider: sasl.TokenProvider | None


DEFAULT_MAX_RESPONSE_SIZE = 100 * 1024 * 1024
DEFAULT_BOOTSTRAP_SERVERS = "localhost:9092"

_CLIENT_ID_RE = re.compile(r"^[\x20-\x7e]*$")
_API_VERSION_RE = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?$")


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


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """Settings every client (producer, consumer, admin) shares. All times in milliseconds."""

    bootstrap_servers: str | Sequence[str] = DEFAULT_BOOTSTRAP_SERVERS
    client_id: str = "kafka-async"
    request_timeout_ms: int = 30_000
    connections_max_idle_ms: int = 540_000
    metadata_max_age_ms: int = 300_000
    retry_backoff_ms: int = 100
    reconnect_backoff_ms: int = 50
    reconnect_backoff_max_ms: int = 1_000
    connect_timeout_ms: int = 10_000
    max_response_size: int = DEFAULT_MAX_RESPONSE_SIZE
    #: "auto" (negotiate with ApiVersions) or a broker version such as "2.8.0"; versions are
    #: always negotiated per connection, so a fixed value only states the oldest broker
    #: expected, and anything older than 0.10 (which lacks ApiVersions) is rejected.
    api_version: str = "auto"
    security_protocol: str = "PLAINTEXT"
    ssl_context: ssl.SSLContext | None = None
    #: CA bundle (PEM) to verify brokers with; the system's CAs when None.
    ssl_cafile: str | None = None
    #: Client certificate chain (PEM) for mutual TLS.
    ssl_certfile: str | None = None
    #: Private key of the client certificate (PEM), if not in ``ssl_certfile``.
    ssl_keyfile: str | None = None
    #: Password of ``ssl_keyfile``.
    ssl_password: str | None = field(default=None, repr=False)
    #: Accept any certificate for any host name. Test brokers only: logs a warning.
    ssl_insecure_skip_verify: bool = False
    sasl_mechanism: str = "PLAIN"
    sasl_plain_username: str | None = None
    sasl_plain_password: str | None = field(default=None, repr=False)
    #: For OAUTHBEARER: an object with ``async token() -> str`` (and optionally
    #: ``extensions() -> dict[str, str]``), like aiokafka's ``AbstractTokenProvider``.
    sasl_oauth_token_provider: Any = field(default=None, repr=False)
    #: Parsed form of ``bootstrap_servers``, filled in by validation.
    addresses: tuple[tuple[str, int], ...] = field(default=(), init=False, compare=False)
    #: The TLS context built from the ssl_* settings (None without TLS).
    _tls: ssl.SSLContext | None = field(default=None, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "addresses", parse_bootstrap_servers(self.bootstrap_servers))
        if not isinstance(self.client_id, str) or not _CLIENT_ID_RE.match(self.client_id):
            raise ConfigError(
                f"client_id: expected a printable ASCII string, got {self.client_id!r}"
            )
        for name, low in (
            ("request_timeout_ms", 1),
            ("connections_max_idle_ms", 1),
            ("metadata_max_age_ms", 0),
            ("retry_backoff_ms", 0),
            ("reconnect_backoff_ms", 0),
            ("reconnect_backoff_max_ms", 0),
            ("connect_timeout_ms", 1),
            ("max_response_size", 1024),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"{name}: expected an integer, got {value!r}")
            if value < low:
                raise ConfigError(f"{name}: must be >= {low}, got {value}")
        if self.reconnect_backoff_max_ms < self.reconnect_backoff_ms:
            raise ConfigError(
                f"reconnect_backoff_max_ms ({self.reconnect_backoff_max_ms}) must be >= "
                f"reconnect_backoff_ms ({self.reconnect_backoff_ms})"
            )
        if self.max_response_size > 0x7FFFFFFF:
            raise ConfigError(
                f"max_response_size: must fit a signed 32-bit frame size, got "
                f"{self.max_response_size}"
            )
        self._check_api_version()
        if self.security_protocol not in SECURITY_PROTOCOLS:
            raise ConfigError(
                f"security_protocol: expected one of {', '.join(SECURITY_PROTOCOLS)}, "
                f"got {self.security_protocol!r}"
            )
        self._check_tls()
        self._check_sasl()

    def _check_tls(self) -> None:
        if self.ssl_context is not None and not isinstance(self.ssl_context, ssl.SSLContext):
            raise ConfigError(
                f"ssl_context: expected an ssl.SSLContext, got {type(self.ssl_context).__name__}"
            )
        for name in ("ssl_cafile", "ssl_certfile", "ssl_keyfile", "ssl_password"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise ConfigError(f"{name}: expected a string, got {type(value).__name__}")
        if not isinstance(self.ssl_insecure_skip_verify, bool):
            raise ConfigError(
                "ssl_insecure_skip_verify: expected True or False, got "
                f"{type(self.ssl_insecure_skip_verify).__name__}"
            )
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
        if not isinstance(self.sasl_mechanism, str):
            raise ConfigError(f"sasl_mechanism: expected a string, got {self.sasl_mechanism!r}")
        if self.sasl_mechanism not in sasl.mechanism_names():
            raise ConfigError(
                f"sasl_mechanism: expected one of {', '.join(sasl.mechanism_names())}, "
                f"got {self.sasl_mechanism!r}"
            )
        for name in ("sasl_plain_username", "sasl_plain_password"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise ConfigError(f"{name}: expected a string, got {type(value).__name__}")
        provider = self.sasl_oauth_token_provider
        if provider is not None and not callable(getattr(provider, "token", None)):
            raise ConfigError(
                "sasl_oauth_token_provider: expected an object with an async token() method, "
                f"got {type(provider).__name__}"
            )
        if not self.uses_sasl:
            return
        sasl.check_mechanism(self.sasl_mechanism)
        if self.sasl_mechanism == "OAUTHBEARER":
            if provider is None:
                raise ConfigError(
                    "sasl_oauth_token_provider is required when sasl_mechanism is OAUTHBEARER"
                )
        elif self.sasl_plain_username is None or self.sasl_plain_password is None:
            raise ConfigError(
                f"sasl_plain_username and sasl_plain_password are required when "
                f"security_protocol is {self.security_protocol} with {self.sasl_mechanism}"
            )

    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]:
        # Rebuilt from the settings on unpickling: the TLS context built from the ssl_*
        # files cannot be pickled, the file names can (a given ssl_context still cannot).
        return (_rebuild_config, ({name: getattr(self, name) for name in self.field_names()},))

    def _check_api_version(self) -> None:
        if self.api_version == "auto":
            return
        match = (
            _API_VERSION_RE.match(self.api_version) if isinstance(self.api_version, str) else None
        )
        if match is None:
            raise ConfigError(
                f"api_version: expected 'auto' or a version like '2.8.0', got {self.api_version!r}"
            )
        if (int(match.group(1)), int(match.group(2))) < (0, 10):
            raise ConfigError(
                f"api_version: brokers older than 0.10 are not supported, got {self.api_version!r}"
            )

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
        """The keyword arguments ``ClientConfig`` accepts."""
        return frozenset(f.name for f in dataclasses.fields(cls) if f.init)

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> tuple[ClientConfig, dict[str, Any]]:
        """Build a config from the settings it knows; return it and the unused kwargs.

        Producer/Consumer/Admin configs call this with all their keyword arguments and then
        validate only what is left, so shared settings are checked in one place.
        """
        names = cls.field_names()
        own = {k: v for k, v in kwargs.items() if k in names}
        rest = {k: v for k, v in kwargs.items() if k not in names}
        return cls(**own), rest

    def replace(self, **changes: Any) -> ClientConfig:
        """A copy with some settings changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> Mapping[str, Any]:
        """The settings as a dict, with passwords and the token provider masked (safe to log)."""
        out = {name: getattr(self, name) for name in sorted(self.field_names())}
        for name in ("sasl_plain_password", "ssl_password", "sasl_oauth_token_provider"):
            if out.get(name) is not None:
                out[name] = "********"
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
