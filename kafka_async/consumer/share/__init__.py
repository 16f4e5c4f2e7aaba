"""Share groups (KIP-932, "queues for Kafka"): start at :class:`ShareConsumer`."""

from __future__ import annotations

from .acks import AcknowledgementCommitCallback, AcknowledgeType
from .config import (
    AcknowledgementMode,
    ShareAcquireMode,
    ShareConsumerConfig,
    ShareConsumerSettings,
)
from .consumer import ShareConsumer
from .errors import AcknowledgementStateError, NotSubscribedError, RecordDeserializationError
from .records import ShareRecord

__all__ = [
    "AcknowledgeType",
    "AcknowledgementCommitCallback",
    "AcknowledgementMode",
    "AcknowledgementStateError",
    "NotSubscribedError",
    "RecordDeserializationError",
    "ShareAcquireMode",
    "ShareConsumer",
    "ShareConsumerConfig",
    "ShareConsumerSettings",
    "ShareRecord",
]
