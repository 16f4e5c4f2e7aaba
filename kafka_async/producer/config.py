"""Producer settings, validated once at construction.

Connection settings (``bootstrap_servers``, ``client_id``, ``request_timeout_ms``,
``retry_backoff_ms``, TLS/SASL, ...) belong to :class:`~kafka_async.net.config.ClientConfig`;
everything else here. A wrong value raises :class:`~kafka_async.errors.ConfigError` naming
the setting.

Idempotence follows the Java client: on by default, but when left unset and another setting
contradicts it (``acks`` other than ``"all"``, more than five requests in flight) it is
quietly turned off; set explicitly to True together with such a setting it is an error.

``max_batch_size`` defaults to 256 KiB (aiokafka and the Java client use 16 KiB, librdkafka
1 MB): with 100-byte records, 16 KiB batches cost four times the requests and a broker-side
round of work per 160 records, which capped throughput at a quarter of what 256 KiB reaches.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import ConfigError
from ..net.config import ClientConfig, ClientSettings
from ..observability import ClientHooks
from .partitioner import Partitioner

__all__ = ["COMPRESSION_TYPES", "ProducerConfig", "ProducerSettings"]

COMPRESSION_TYPES = (None, "gzip", "snappy", "lz4", "zstd")

Serializer = Callable[[Any], bytes | None]

#: What ``acks`` accepts: 0, 1, or all in-sync replicas as "all" / -1 (strings as the Java
#: client writes them are taken too).
Acks = Literal["all", 0, 1, -1, "0", "1", "-1"]
#: ``COMPRESSION_TYPES`` plus "none" (same as None).
CompressionType = Literal["gzip", "snappy", "lz4", "zstd", "none"]
#: The partitioner names ``make_partitioner`` knows (None is "default").
PartitionerName = Literal["default", "murmur2_random", "murmur2", "uniform_sticky", "round_robin"]


class ProducerSettings(ClientSettings, total=False):
    """The keyword arguments of ``Producer``, typed for editors and mypy.

    The shared connection/security settings of :class:`ClientSettings` plus one key per
    :class:`ProducerConfig` field (same name, same meaning; ``Producer``'s docstring lists
    the defaults). ``ProducerConfig.from_kwargs`` still validates every value at run time.
    """

    acks: Acks
    compression_type: CompressionType | None
    linger_ms: int
    max_batch_size: int
    max_request_size: int
    retry_backoff_max_ms: int
    #: None (the default): on unless ``acks`` or ``max_in_flight_requests_per_connection``
    #: rule it out.
    enable_idempotence: bool | None
    transactional_id: str | None
    transaction_timeout_ms: int
    #: A name, a ``Partitioner``, or aiokafka's callable
    #: ``(key_bytes, all_partitions, available_partitions) -> int``.
    partitioner: PartitionerName | Partitioner | Callable[..., int] | None
    key_serializer: Serializer | None
    value_serializer: Serializer | None
    buffer_memory: int
    delivery_timeout_ms: int
    max_in_flight_requests_per_connection: int
    metadata_wait_ms: int | None
    allow_auto_create_topics: bool
    hooks: ClientHooks | None


@dataclass(frozen=True, slots=True)
class ProducerConfig:
    """Every producer setting (see ``Producer`` for their meaning)."""

    client: ClientConfig
    acks: int = -1
    compression_type: str | None = None
    linger_ms: int = 5
    #: 256 KiB, not 16 KiB: see the module docstring.
    max_batch_size: int = 262144
    max_request_size: int = 1048576
    retry_backoff_max_ms: int = 1000
    enable_idempotence: bool = True
    transactional_id: str | None = None
    transaction_timeout_ms: int = 60_000
    partitioner: str | Partitioner | Callable[..., int] | None = None
    key_serializer: Serializer | None = None
    value_serializer: Serializer | None = None
    buffer_memory: int = 32 * 1024 * 1024
    delivery_timeout_ms: int = 120_000
    max_in_flight_requests_per_connection: int = 5
    metadata_wait_ms: int | None = None
    #: Like the Java producer's ``allow.auto.create.topics``: the metadata requests the
    #: producer makes let a broker with ``auto.create.topics.enable`` create a missing topic.
    allow_auto_create_topics: bool = True
    #: Observability hooks (tracing, metrics); None: off.
    hooks: ClientHooks | None = None

    @classmethod
    def setting_names(cls) -> frozenset[str]:
        """The producer's own keyword arguments (every field but ``client``)."""
        return frozenset(name for name in cls.__dataclass_fields__ if name != "client")

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> ProducerConfig:
        """Validate keyword arguments (shared ones go to ``ClientConfig``)."""
        client, rest = ClientConfig.from_kwargs(**kwargs)
        known = cls.setting_names()
        unknown = sorted(set(rest) - known)
        if unknown:
            raise ConfigError(
                f"unknown producer setting(s): {', '.join(unknown)}"
                + _did_you_mean(unknown[0], known | ClientConfig.field_names())
            )
        acks = _parse_acks(rest.pop("acks", "all"))
        for name in (
            "linger_ms",
            "max_batch_size",
            "max_request_size",
            "retry_backoff_max_ms",
            "transaction_timeout_ms",
            "buffer_memory",
            "delivery_timeout_ms",
            "max_in_flight_requests_per_connection",
        ):
            if name in rest:
                _check_int(name, rest[name])
        lows = {
            "linger_ms": 0,
            "max_batch_size": 100,
            "max_request_size": 100,
            "retry_backoff_max_ms": 0,
            "transaction_timeout_ms": 1,
            "buffer_memory": 1024,
            "delivery_timeout_ms": 1,
            "max_in_flight_requests_per_connection": 1,
        }
        for name, low in lows.items():
            if name in rest and rest[name] < low:
                raise ConfigError(f"{name}: must be >= {low}, got {rest[name]}")
        compression = rest.get("compression_type")
        if compression == "none":
            rest["compression_type"] = compression = None
        if compression not in COMPRESSION_TYPES:
            raise ConfigError(
                "compression_type: expected None, 'gzip', 'snappy', 'lz4' or 'zstd', "
                f"got {compression!r}"
            )
        for name in ("key_serializer", "value_serializer"):
            value = rest.get(name)
            if value is not None and not callable(value):
                raise ConfigError(f"{name}: expected a callable, got {type(value).__name__}")
        txn_id = rest.get("transactional_id")
        if txn_id is not None and (not isinstance(txn_id, str) or not txn_id):
            raise ConfigError(f"transactional_id: expected a non-empty string, got {txn_id!r}")
        metadata_wait = rest.get("metadata_wait_ms")
        if metadata_wait is not None:
            _check_int("metadata_wait_ms", metadata_wait)

        auto_create = rest.get("allow_auto_create_topics", True)
        if not isinstance(auto_create, bool):
            raise ConfigError(f"allow_auto_create_topics: expected a bool, got {auto_create!r}")

        hooks = rest.get("hooks")
        if hooks is not None and not isinstance(hooks, ClientHooks):
            raise ConfigError(
                "hooks: expected a kafka_async.observability.ClientHooks instance, "
                f"got {type(hooks).__name__}"
            )

        in_flight = rest.get("max_in_flight_requests_per_connection", 5)
        idem = rest.pop("enable_idempotence", None)
        if idem is not None and not isinstance(idem, bool):
            raise ConfigError(f"enable_idempotence: expected a bool, got {idem!r}")
        if idem is None:
            # Unset: on, unless something else the user asked for contradicts it.
            idem = acks == -1 and in_flight <= 5
            if txn_id is not None and not idem:
                raise ConfigError(
                    "transactional_id needs idempotence, which needs acks='all' and "
                    f"max_in_flight_requests_per_connection <= 5 (got acks={acks!r}, "
                    f"max_in_flight_requests_per_connection={in_flight})"
                )
        elif idem:
            if acks != -1:
                raise ConfigError(
                    f"enable_idempotence=True needs acks='all', got acks={_acks_text(acks)}"
                )
            if in_flight > 5:
                raise ConfigError(
                    "enable_idempotence=True needs max_in_flight_requests_per_connection <= 5, "
                    f"got {in_flight}"
                )
        elif txn_id is not None:
            raise ConfigError("transactional_id needs enable_idempotence=True (or unset)")

        cfg = cls(client=client, acks=acks, enable_idempotence=idem, **rest)
        cfg._check_relations()
        from .partitioner import make_partitioner

        make_partitioner(cfg.partitioner, cfg.max_batch_size)  # raises ConfigError if wrong
        return cfg

    def _check_relations(self) -> None:
        if self.max_batch_size > self.buffer_memory:
            raise ConfigError(
                f"max_batch_size ({self.max_batch_size}) must not exceed buffer_memory "
                f"({self.buffer_memory})"
            )
        if self.max_request_size > self.buffer_memory:
            raise ConfigError(
                f"max_request_size ({self.max_request_size}) must not exceed buffer_memory "
                f"({self.buffer_memory})"
            )
        needed = self.linger_ms + self.client.request_timeout_ms
        if self.delivery_timeout_ms < needed:
            raise ConfigError(
                f"delivery_timeout_ms ({self.delivery_timeout_ms}) must be >= linger_ms + "
                f"request_timeout_ms ({needed}), or records could expire before one attempt"
            )

    @property
    def idempotent(self) -> bool:
        """True when batches carry producer id, epoch and sequence numbers."""
        return self.enable_idempotence


def _acks_text(acks: int) -> str:
    return "'all'" if acks == -1 else str(acks)


def _parse_acks(value: Any) -> int:
    if value == "all" or (isinstance(value, int) and not isinstance(value, bool) and value == -1):
        return -1
    if isinstance(value, int) and not isinstance(value, bool) and value in (0, 1):
        return value
    if isinstance(value, str) and value in ("0", "1", "-1"):
        return int(value)
    raise ConfigError(f"acks: expected 0, 1 or 'all', got {value!r}")


def _check_int(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{name}: expected an integer, got {value!r}")


def _did_you_mean(name: str, choices: set[str] | frozenset[str]) -> str:
    import difflib

    close = difflib.get_close_matches(name, sorted(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
