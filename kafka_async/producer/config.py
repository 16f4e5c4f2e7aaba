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

from typing import Any

from ..errors import ConfigError
from ..net.config import ClientConfig
from ..net.settings import SCHEMA as CLIENT_SCHEMA
from .settings import COMPRESSION_TYPES, SCHEMA, Serializer
from .settings_generated import (
    Acks,
    CompressionType,
    PartitionerName,
    ProducerFields,
    ProducerSettings,
)

__all__ = [
    "COMPRESSION_TYPES",
    "Acks",
    "CompressionType",
    "PartitionerName",
    "ProducerConfig",
    "ProducerSettings",
    "Serializer",
]


class ProducerConfig(ProducerFields):
    """Every producer setting, checked (see ``Producer`` for their meaning).

    The fields and each one's check come from :mod:`kafka_async.producer.settings`; this
    class resolves ``enable_idempotence`` and checks how settings relate to each other. (A
    plain subclass: the generated dataclass gives ``__init__``, ``repr``, equality and
    frozenness.)
    """

    __slots__ = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        self._resolve_idempotence()
        self._check_relations()

    @classmethod
    def setting_names(cls) -> frozenset[str]:
        """The producer's own keyword arguments (every field but ``client``)."""
        return SCHEMA.names

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> ProducerConfig:
        """Validate keyword arguments (shared ones go to ``ClientConfig``)."""
        own, shared = SCHEMA.split(kwargs, CLIENT_SCHEMA)
        return cls(client=ClientConfig(**shared), **own)

    def _resolve_idempotence(self) -> None:
        acks = self.acks
        in_flight = self.max_in_flight_requests_per_connection
        txn_id = self.transactional_id
        idem = self.enable_idempotence
        if idem is None:
            # Unset: on, unless something else the user asked for contradicts it.
            idem = acks == -1 and in_flight <= 5
            if txn_id is not None and not idem:
                raise ConfigError(
                    "transactional_id needs idempotence, which needs acks='all' and "
                    f"max_in_flight_requests_per_connection <= 5 (got acks={_acks_text(acks)}, "
                    f"max_in_flight_requests_per_connection={in_flight})"
                )
            object.__setattr__(self, "enable_idempotence", idem)
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
        return bool(self.enable_idempotence)


def _acks_text(acks: int) -> str:
    return "'all'" if acks == -1 else str(acks)
