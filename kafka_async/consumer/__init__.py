"""The consumer: group membership, fetching, offsets. Start at :class:`Consumer`."""

from __future__ import annotations

from .config import ConsumerSettings
from .consumer import Consumer, ConsumerGroupMetadata, OffsetAndTimestamp
from .errors import CommitFailedError, LogTruncationError, NoOffsetForPartitionError
from .group.assignors import (
    Assignor,
    CooperativeStickyAssignor,
    RangeAssignor,
    RoundRobinAssignor,
    StickyAssignor,
)
from .group.coordinator import ConsumerRebalanceListener

__all__ = [
    "Assignor",
    "CommitFailedError",
    "Consumer",
    "ConsumerGroupMetadata",
    "ConsumerRebalanceListener",
    "ConsumerSettings",
    "CooperativeStickyAssignor",
    "LogTruncationError",
    "NoOffsetForPartitionError",
    "OffsetAndTimestamp",
    "RangeAssignor",
    "RoundRobinAssignor",
    "StickyAssignor",
]
