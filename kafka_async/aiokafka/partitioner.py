"""aiokafka's ``DefaultPartitioner`` (``aiokafka.partitioner``).

A callable ``(key_bytes, all_partitions, available_partitions) -> int``. Given to
:class:`~kafka_async.aiokafka.AIOKafkaProducer` (it is the default), the producer uses
kafka_async's default partitioner instead, which picks the same partition for a keyed record
(murmur2, as the Java client and aiokafka) and spreads records without a key batch by batch
(uniform sticky, KIP-480) where aiokafka picks a random partition per record.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from kafka_async.producer.partitioner import murmur2

__all__ = ["DefaultPartitioner", "murmur2"]


class DefaultPartitioner:
    """murmur2 of the key over all partitions; a random available partition without a key."""

    def __call__(
        self,
        key: bytes | bytearray | memoryview | None,
        all_partitions: Sequence[int],
        available: Sequence[int],
    ) -> int:
        """The partition for a record with the serialized ``key``."""
        if key is None:
            return random.choice(list(available or all_partitions))
        idx = (murmur2(key) & 0x7FFFFFFF) % len(all_partitions)
        return sorted(all_partitions)[idx]
