"""The producer: partitioner -> accumulator -> sender -> :class:`Producer`.

See ``DESIGN.md`` ("The path of a produced record") for how a record travels.
"""

from __future__ import annotations

from ..structs import RecordMetadata
from .accumulator import BulkDelivery, Delivery
from .config import ProducerSettings
from .partitioner import (
    DefaultPartitioner,
    Partitioner,
    RoundRobinPartitioner,
    UniformStickyPartitioner,
    murmur2,
    murmur2_partition,
)
from .producer import Producer
from .transaction import GroupMetadata, TransactionStateError

__all__ = [
    "BulkDelivery",
    "DefaultPartitioner",
    "Delivery",
    "GroupMetadata",
    "Partitioner",
    "Producer",
    "ProducerSettings",
    "RecordMetadata",
    "RoundRobinPartitioner",
    "TransactionStateError",
    "UniformStickyPartitioner",
    "murmur2",
    "murmur2_partition",
]
