"""aiokafka's abstract classes (``aiokafka.abc``)."""

from __future__ import annotations

import abc
from typing import Any

from kafka_async.structs import TopicPartition

__all__ = ["AbstractTokenProvider", "ConsumerRebalanceListener"]


class ConsumerRebalanceListener(abc.ABC):
    """Told when the group changes this consumer's partitions, as aiokafka tells it.

    Both methods may be plain or ``async``. The drop-in calls them as aiokafka does (eager
    rebalancing): ``on_partitions_revoked`` before every join with the whole previous
    assignment (an empty set before the first one), after the auto commit; then
    ``on_partitions_assigned`` with the whole new assignment (possibly empty). Neither is
    called by ``stop()``. An exception from either is logged, not raised.
    """

    @abc.abstractmethod
    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> Any:
        """The partitions owned until now are about to be given up (commit here)."""

    @abc.abstractmethod
    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> Any:
        """The partitions owned from now on (seek here)."""


class AbstractTokenProvider(abc.ABC):
    """Gives SASL/OAUTHBEARER tokens: ``async token()`` returns the token string;
    ``extensions()`` optional key-value pairs sent with it."""

    @abc.abstractmethod
    async def token(self) -> str:
        """A current (unexpired) token."""

    def extensions(self) -> dict[str, str]:
        """SASL extensions to send with the token (none by default)."""
        return {}
