"""Errors of the share consumer (broker error codes are in :mod:`kafka_async.errors`).

Each derives from :class:`~kafka_async.errors.KafkaError`, so ``except KafkaError`` catches
them too.
"""

from __future__ import annotations

from ...errors import KafkaError
from ...errors import RecordDeserializationError as _RecordDeserializationError


class AcknowledgementStateError(KafkaError, RuntimeError):
    """An acknowledgement the consumer cannot take: the record was not delivered by this
    consumer, or was acknowledged already; the wrong acknowledgement mode for the call; or,
    in explicit mode, a new poll while records of the previous one are still unacknowledged
    (the Java client's ``IllegalStateException`` in the same places)."""


class NotSubscribedError(KafkaError, RuntimeError):
    """A poll while the consumer is subscribed to no topic (none given to the constructor or
    ``subscribe()``, or after ``unsubscribe()``): the Java client's ``IllegalStateException``
    "Consumer is not subscribed to any topics"."""


class RecordDeserializationError(_RecordDeserializationError):
    """A deserializer raised for a delivered record (a
    :class:`kafka_async.errors.RecordDeserializationError`: ``topic``, ``partition``,
    ``offset``, ``origin`` ("key" or "value"), ``cause``, also the ``__cause__``).

    The share consumer has no position to hold: the record was released (the broker
    delivers it again, to this or another member, up to the group's delivery attempt
    limit, then archives it), as the Java share consumer does with a record that fails to
    deserialize. The records before it in the same poll were returned first."""

    @staticmethod
    def _what_now(offset: int) -> str:
        return "the record was released"


__all__ = ["AcknowledgementStateError", "NotSubscribedError", "RecordDeserializationError"]
