"""Connection and client settings shared by the producer, consumer and admin client.

``ClientConfig`` is frozen and validated on construction: a wrong value raises
:class:`~kafka_async.errors.ConfigError` naming the setting. Names follow aiokafka's where
one exists, so code moves over with few edits.

Higher-level configs build it from their own keyword arguments with
:meth:`ClientConfig.from_kwargs`, which takes the settings it knows and hands back the rest,
so validation lives in one place.
"""

from __future__ import annotations

import dataclasses
import re
import ssl
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from . import sasl

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")

DEFAULT_MAX_RESPONSE_SIZE = 100 * 1024 * 1024

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

    bootstrap_servers: str | Sequence[str] = "localhost:9092"
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
    sasl_mechanism: str = "PLAIN"
    sasl_plain_username: str | None = None
    sasl_plain_password: str | None = field(default=None, repr=False)
    #: Parsed form of ``bootstrap_servers``, filled in by validation.
    addresses: tuple[tuple[str, int], ...] = field(default=(), init=False, compare=False)

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
        if self.ssl_context is not None and not isinstance(self.ssl_context, ssl.SSLContext):
            raise ConfigError(
                f"ssl_context: expected an ssl.SSLContext, got {type(self.ssl_context).__name__}"
            )
        if self.ssl_context is not None and not self.uses_tls:
            raise ConfigError(
                f"ssl_context: set but security_protocol is {self.security_protocol}; "
                "use SSL or SASL_SSL"
            )
        if self.sasl_mechanism not in sasl.mechanism_names():
            raise ConfigError(
                f"sasl_mechanism: expected one of {', '.join(sasl.mechanism_names())}, "
                f"got {self.sasl_mechanism!r}"
            )
        for name in ("sasl_plain_username", "sasl_plain_password"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise ConfigError(f"{name}: expected a string, got {type(value).__name__}")
        if self.uses_sasl and (
            self.sasl_plain_username is None or self.sasl_plain_password is None
        ):
            raise ConfigError(
                f"sasl_plain_username and sasl_plain_password are required when "
                f"security_protocol is {self.security_protocol}"
            )

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
        """The context to wrap sockets with: the configured one, a default one, or None."""
        if not self.uses_tls:
            return None
        return self.ssl_context or ssl.create_default_context()

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
        """The settings as a dict, with the SASL password masked (safe to log)."""
        out = {name: getattr(self, name) for name in sorted(self.field_names())}
        if out.get("sasl_plain_password") is not None:
            out["sasl_plain_password"] = "********"
        return out
