"""Consumer-specific errors (kafka_async.errors has the broker error codes).

Both derive from :class:`~kafka_async.errors.KafkaError`, so ``except KafkaError`` catches
them too.
"""

from __future__ import annotations

from ..errors import BrokerResponseError, KafkaError
from ..structs import TopicPartition


class CommitFailedError(KafkaError):
    """A commit was refused because this member's generation is over (the group rebalanced,
    or the member was evicted). The partitions may now belong to another member, which
    will re-read from the last successful commit; ``cause`` is the broker's error."""

    def __init__(self, message: str, cause: BrokerResponseError | None = None) -> None:
        super().__init__(message)
        self.cause = cause


class NoOffsetForPartitionError(KafkaError):
    """A partition has no committed offset (or it is out of range) and
    ``auto_offset_reset="none"`` forbids choosing one."""

    def __init__(self, partitions: list[TopicPartition]) -> None:
        super().__init__(
            "no committed offset and auto_offset_reset='none' for "
            + ", ".join(f"{tp.topic}-{tp.partition}" for tp in sorted(partitions))
        )
        self.partitions = partitions


__all__ = ["CommitFailedError", "NoOffsetForPartitionError"]
