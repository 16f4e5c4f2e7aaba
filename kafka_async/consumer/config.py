"""Consumer settings, validated once at construction.

Names and defaults follow aiokafka's ``AIOKafkaConsumer`` where it has the setting (so code
moves over with few edits); connection settings come from :class:`ClientConfig`. A wrong
value raises :class:`~kafka_async.errors.ConfigError` naming the setting.
"""

from __future__ import annotations

from typing import Any

from ..errors import ConfigError
from ..net.config import ClientConfig
from ..net.settings import SCHEMA as CLIENT_SCHEMA
from .settings import GROUP_PROTOCOLS, ISOLATION_LEVELS, SCHEMA, Deserializer
from .settings_generated import (
    AssignorName,
    AssignorSpec,
    AutoOffsetReset,
    ConsumerFields,
    ConsumerSettings,
    GroupProtocol,
    IsolationLevelName,
)

__all__ = [
    "GROUP_PROTOCOLS",
    "ISOLATION_LEVELS",
    "AssignorName",
    "AssignorSpec",
    "AutoOffsetReset",
    "ConsumerConfig",
    "ConsumerSettings",
    "Deserializer",
    "GroupProtocol",
    "IsolationLevelName",
]


class ConsumerConfig(ConsumerFields):
    """Every consumer setting other than the shared connection ones, checked.

    The fields and each one's check come from :mod:`kafka_async.consumer.settings`; this
    class checks how settings relate to each other.
    """

    __slots__ = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.group_instance_id is not None and self.group_id is None:
            raise ConfigError("group_instance_id requires group_id")
        if self.group_remote_assignor is not None and self.group_protocol != "consumer":
            raise ConfigError(
                "group_remote_assignor applies to group_protocol='consumer' only (the classic "
                "protocol's assignors run in the client: partition_assignment_strategy)"
            )
        if self.heartbeat_interval_ms >= self.session_timeout_ms:
            raise ConfigError(
                f"heartbeat_interval_ms ({self.heartbeat_interval_ms}) must be lower than "
                f"session_timeout_ms ({self.session_timeout_ms})"
            )

    @classmethod
    def setting_names(cls) -> frozenset[str]:
        """The consumer's own keyword arguments (every field but ``client``)."""
        return SCHEMA.names

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> ConsumerConfig:
        """Validate keyword arguments (shared ones go to ``ClientConfig``)."""
        own, shared = SCHEMA.split(kwargs, CLIENT_SCHEMA)
        return cls(client=ClientConfig(**shared), **own)

    @property
    def isolation(self) -> int:
        """The wire value of ``isolation_level``."""
        return ISOLATION_LEVELS[self.isolation_level]

    @property
    def rebalance_timeout(self) -> int:
        """How long the coordinator waits for members to rejoin (defaults to the poll
        interval, as in the Java client)."""
        return self.rebalance_timeout_ms or self.max_poll_interval_ms
