"""aiokafka's value types (``aiokafka.structs``), shaped as aiokafka shapes them.

``TopicPartition`` is kafka_async's own (both are the named tuple ``(topic, partition)``, so
they compare and hash alike). The others are separate types with aiokafka's fields in
aiokafka's order, because code indexes and unpacks them: ``RecordMetadata`` carries
``topic_partition`` and ``log_start_offset`` as fields, ``OffsetAndMetadata`` is the pair
``(offset, metadata)``, ``ConsumerRecord`` has ``checksum`` (always None here) and accepts
extra attributes (frameworks attach the consumer to a record).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, NamedTuple, TypeVar

from kafka_async.structs import TopicPartition

from .errors import KafkaError

__all__ = [
    "BrokerMetadata",
    "ConsumerRecord",
    "OffsetAndMetadata",
    "OffsetAndTimestamp",
    "PartitionMetadata",
    "RecordMetadata",
    "TopicPartition",
]

KT = TypeVar("KT")
VT = TypeVar("VT")


class BrokerMetadata(NamedTuple):
    """A broker as the cluster metadata lists it."""

    nodeId: int | str  # aiokafka's field name
    host: str
    port: int
    rack: str | None


class PartitionMetadata(NamedTuple):
    """One partition's leader, replicas and in-sync replicas."""

    topic: str
    partition: int
    leader: int
    replicas: list[int]
    isr: list[int]
    error: KafkaError | None


class OffsetAndMetadata(NamedTuple):
    """An offset to commit (the next one to read) and its metadata string."""

    offset: int
    metadata: str


class RecordMetadata(NamedTuple):
    """Where a sent record (or the first record of a sent batch) landed."""

    topic: str
    partition: int
    topic_partition: TopicPartition
    offset: int
    #: Create time (ms) as sent, or the broker's log-append time when the topic uses it.
    timestamp: int | None
    #: 0: create time, 1: log-append time.
    timestamp_type: int
    #: Not reported by kafka_async's producer: always None.
    log_start_offset: int | None


class OffsetAndTimestamp(NamedTuple):
    """``offsets_for_times`` result for one partition."""

    offset: int
    timestamp: int | None


@dataclass
class ConsumerRecord(Generic[KT, VT]):
    """One consumed record, with aiokafka's fields."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: int
    key: KT | None
    value: VT | None
    #: Deprecated in aiokafka; always None here.
    checksum: int | None
    serialized_key_size: int
    serialized_value_size: int
    headers: Sequence[tuple[str, bytes]]
