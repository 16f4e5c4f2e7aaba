"""Share consumer settings, validated once at construction (``ConfigError`` names the
setting). Each is declared in :mod:`kafka_async.consumer.share.settings`; connection
settings come from :class:`~kafka_async.net.config.ClientConfig`.

Group-side behaviour is the share group's configuration on the broker, not the client's (as
with the Java ``KafkaShareConsumer``): where a new group starts reading
(``share.auto.offset.reset``, "latest" by default), how long a record stays locked to the
member that acquired it (``share.record.lock.duration.ms``), how many deliveries a record gets
(``share.delivery.count.limit``), the session timeout and heartbeat interval. Set them with
``AdminClient.incremental_alter_configs`` on the GROUP resource.
"""

from __future__ import annotations

from typing import Any

from ...net.config import ClientConfig
from ...net.settings import SCHEMA as CLIENT_SCHEMA
from .settings import ACKNOWLEDGEMENT_MODES, SCHEMA, SHARE_ACQUIRE_MODES
from .settings_generated import (
    AcknowledgementMode,
    ShareAcquireMode,
    ShareConsumerFields,
    ShareConsumerSettings,
)


class ShareConsumerConfig(ShareConsumerFields):
    """Every share consumer setting other than the shared connection ones, checked (the
    fields and their checks come from :mod:`kafka_async.consumer.share.settings`)."""

    __slots__ = ()

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> ShareConsumerConfig:
        """Validate keyword arguments (shared ones go to ``ClientConfig``)."""
        own, shared = SCHEMA.split(kwargs, CLIENT_SCHEMA)
        return cls(client=ClientConfig(**shared), **own)

    @property
    def explicit(self) -> bool:
        return self.share_acknowledgement_mode == "explicit"

    @property
    def record_limit(self) -> bool:
        """``max_poll_records`` is a strict limit on what one ShareFetch acquires."""
        return self.share_acquire_mode == "record_limit"


__all__ = [
    "ACKNOWLEDGEMENT_MODES",
    "SHARE_ACQUIRE_MODES",
    "AcknowledgementMode",
    "ShareAcquireMode",
    "ShareConsumerConfig",
    "ShareConsumerSettings",
]
