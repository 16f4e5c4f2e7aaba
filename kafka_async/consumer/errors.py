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


class LogTruncationError(KafkaError):
    """The partition's log was truncated below the consumer's position (an unclean leader
    election lost records it had read), and ``auto_offset_reset="none"`` forbids moving on by
    itself (KIP-320).

    ``position`` is where the consumer stood, ``divergent_offset`` the end of the log the new
    leader shares with what the consumer read (records from there on differ or are gone),
    ``leader_epoch`` the last epoch both agree on (-1: none). Seek (to
    ``divergent_offset`` to read the new leader's records from the fork) to go on."""

    def __init__(
        self, partition: TopicPartition, position: int, divergent_offset: int, leader_epoch: int
    ) -> None:
        super().__init__(
            f"{partition.topic}-{partition.partition}: the log was truncated below the "
            f"position {position}; it matches what was read only up to offset "
            f"{divergent_offset} (leader epoch {leader_epoch}), and auto_offset_reset='none'"
        )
        self.partition = partition
        self.position = position
        self.divergent_offset = divergent_offset
        self.leader_epoch = leader_epoch


__all__ = ["CommitFailedError", "LogTruncationError", "NoOffsetForPartitionError"]
