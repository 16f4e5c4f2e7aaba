"""kafka_async: an asyncio-native Apache Kafka client built on anyio (runs on asyncio and trio).

The public API::

    from kafka_async import Producer, Consumer, AdminClient, NewTopic
    from kafka_async import RecordMetadata, ConsumerRecord, TopicPartition, OffsetAndMetadata
    from kafka_async import ProducerSettings, ConsumerSettings, AdminSettings, ClientSettings

Clients are imported lazily, so ``import kafka_async`` stays cheap for code that only needs
the value types or the errors.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import errors
from .errors import KafkaError
from .structs import (
    ConsumerRecord,
    OffsetAndMetadata,
    RecordMetadata,
    TimestampType,
    TopicPartition,
)

if TYPE_CHECKING:
    from .admin import AdminClient, AdminSettings, NewTopic
    from .consumer import Consumer, ConsumerGroupMetadata, ConsumerSettings
    from .net.config import ClientSettings
    from .producer import Producer, ProducerSettings

__version__ = "0.1.0"

_LAZY = {
    "Producer": "kafka_async.producer",
    "Consumer": "kafka_async.consumer",
    "ConsumerGroupMetadata": "kafka_async.consumer",
    "AdminClient": "kafka_async.admin",
    "NewTopic": "kafka_async.admin",
    "ClientSettings": "kafka_async.net.config",
    "ProducerSettings": "kafka_async.producer.config",
    "ConsumerSettings": "kafka_async.consumer.config",
    "AdminSettings": "kafka_async.admin.config",
}

__all__ = [
    "AdminClient",
    "AdminSettings",
    "ClientSettings",
    "Consumer",
    "ConsumerGroupMetadata",
    "ConsumerRecord",
    "ConsumerSettings",
    "KafkaError",
    "NewTopic",
    "OffsetAndMetadata",
    "Producer",
    "ProducerSettings",
    "RecordMetadata",
    "TimestampType",
    "TopicPartition",
    "__version__",
    "errors",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kafka_async' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
