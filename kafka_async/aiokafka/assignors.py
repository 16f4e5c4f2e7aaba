"""aiokafka's assignor names (``aiokafka.coordinator.assignors.*``) bound to kafka_async's.

The classic-protocol assignors are named alike on the wire (``roundrobin``, ``range``,
``sticky``), so a group mixing aiokafka members and kafka_async members agrees on one.
aiokafka's own ``AbstractPartitionAssignor`` subclasses (custom assignors) have a different
interface and are refused with an error naming them; write a
:class:`kafka_async.consumer.group.assignors.Assignor` instead.
"""

from __future__ import annotations

from kafka_async.consumer.group.assignors import (
    Assignor,
    RangeAssignor,
    RoundRobinAssignor,
    StickyAssignor,
)

__all__ = [
    "AbstractPartitionAssignor",
    "RangePartitionAssignor",
    "RoundRobinPartitionAssignor",
    "StickyPartitionAssignor",
]

AbstractPartitionAssignor = Assignor
RoundRobinPartitionAssignor = RoundRobinAssignor
RangePartitionAssignor = RangeAssignor
StickyPartitionAssignor = StickyAssignor
