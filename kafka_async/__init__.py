"""kafka_async: an asyncio-native Apache Kafka client built on anyio (runs on asyncio and trio).

The public API::

    from kafka_async import Producer, Consumer, AdminClient, NewTopic
    from kafka_async import RecordMetadata, ConsumerRecord, TopicPartition, OffsetAndMetadata
    from kafka_async import ClientState  # Producer.state, Consumer.state, AdminClient.state
    from kafka_async import ProducerSettings, ConsumerSettings, AdminSettings, ClientSettings
    from kafka_async import ShareConsumer, ShareRecord, AcknowledgeType  # share groups (KIP-932)

Clients are imported lazily, so ``import kafka_async`` stays cheap for code that only needs
the value types or the errors.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import errors
from .errors import KafkaError, RecordDeserializationError
from .structs import (
    ClientState,
    ConsumerRecord,
    OffsetAndMetadata,
    RecordMetadata,
    TimestampType,
    TopicPartition,
)

if TYPE_CHECKING:
    from .admin import AdminClient, AdminSettings, NewTopic
    from .consumer import Consumer, ConsumerGroupMetadata, ConsumerSettings
    from .consumer.share import (
        AcknowledgeType,
        ShareConsumer,
        ShareConsumerSettings,
        ShareRecord,
    )
    from .net.config import ClientSettings
    from .producer import Producer, ProducerSettings

from ._version import __version__

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
    "ShareConsumer": "kafka_async.consumer.share",
    "ShareConsumerSettings": "kafka_async.consumer.share",
    "ShareRecord": "kafka_async.consumer.share",
    "AcknowledgeType": "kafka_async.consumer.share",
}

__all__ = [
    "AcknowledgeType",
    "AdminClient",
    "AdminSettings",
    "ClientSettings",
    "ClientState",
    "Consumer",
    "ConsumerGroupMetadata",
    "ConsumerRecord",
    "ConsumerSettings",
    "KafkaError",
    "NewTopic",
    "OffsetAndMetadata",
    "Producer",
    "ProducerSettings",
    "RecordDeserializationError",
    "RecordMetadata",
    "ShareConsumer",
    "ShareConsumerSettings",
    "ShareRecord",
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


def __dir__() -> list[str]:
    # The clients are lazy (module ``__getattr__``), so without this ``dir(kafka_async)`` and
    # REPL completion would list only what has been touched so far.
    return sorted(set(globals()) | set(__all__))
