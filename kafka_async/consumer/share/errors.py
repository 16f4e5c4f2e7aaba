"""Errors of the share consumer (broker error codes are in :mod:`kafka_async.errors`).

Each derives from :class:`~kafka_async.errors.KafkaError`, so ``except KafkaError`` catches
them too.
"""

from __future__ import annotations

from ...errors import KafkaError
from ...structs import TopicPartition


class AcknowledgementStateError(KafkaError, RuntimeError):
    """An acknowledgement the consumer cannot take: the record was not delivered by this
    consumer, or was acknowledged already; the wrong acknowledgement mode for the call; or,
    in explicit mode, a new poll while records of the previous one are still unacknowledged
    (the Java client's ``IllegalStateException`` in the same places)."""


class NotSubscribedError(KafkaError, RuntimeError):
    """A poll while the consumer is subscribed to no topic (none given to the constructor or
    ``subscribe()``, or after ``unsubscribe()``): the Java client's ``IllegalStateException``
    "Consumer is not subscribed to any topics"."""


class RecordDeserializationError(KafkaError):
    """A deserializer raised for a delivered record. The record was released (the broker
    delivers it again, to this or another member, up to the group's delivery attempt limit);
    the deserializer's exception is the ``__cause__``."""

    def __init__(self, partition: TopicPartition, offset: int, message: str) -> None:
        super().__init__(
            f"{partition.topic}-{partition.partition} offset {offset}: {message}; "
            "the record was released"
        )
        self.partition = partition
        self.offset = offset


__all__ = ["AcknowledgementStateError", "NotSubscribedError", "RecordDeserializationError"]
