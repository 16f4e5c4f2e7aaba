"""Public value types shared by producer, consumer and admin client."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Generic, NamedTuple, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class TopicPartition(NamedTuple):
    """A topic name and partition index; hashable, ordered, cheap."""

    topic: str
    partition: int


class TimestampType:
    """Values of a batch's timestamp type (``RecordMetadata.timestamp_type``)."""

    NO_TIMESTAMP = -1
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1


class RecordMetadata(NamedTuple):
    """Where a produced record landed, as acknowledged by the broker.

    ``offset`` is -1 when ``acks=0`` (the broker does not answer). ``timestamp`` is the
    create time we sent, or the broker's log-append time when the topic uses it.

    A named tuple (immutable, hashable): the producer builds one per acknowledged record, and
    a tuple costs a fraction of a frozen dataclass to create.
    """

    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: int = TimestampType.CREATE_TIME
    serialized_key_size: int = -1
    serialized_value_size: int = -1

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)


@dataclass(slots=True)
class ConsumerRecord(Generic[K, V]):
    """One record handed to the application by the consumer."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: int
    key: K | None
    value: V | None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)
    leader_epoch: int | None = None
    serialized_key_size: int = -1
    serialized_value_size: int = -1

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)


@dataclass(frozen=True, slots=True)
class OffsetAndMetadata:
    """A committed offset (the next offset to consume) with optional metadata string."""

    offset: int
    metadata: str = ""
    leader_epoch: int = -1


class ClientState(enum.Enum):
    """Where a client (producer, consumer, admin or cluster client) is in its life; it only
    moves forward: ``new`` -> ``starting`` -> ``running`` -> ``closing`` -> ``closed``
    (``start()`` failing goes straight to ``closed``)."""

    NEW = "new"
    STARTING = "starting"
    RUNNING = "running"
    CLOSING = "closing"
    CLOSED = "closed"
