"""Share sessions (KIP-932), one per broker, as plain data.

A member's ShareFetch and ShareAcknowledge requests to one broker form a session: the first
ShareFetch has epoch 0 and names every partition to read (the broker opens a session); each
later request carries the next epoch (1, 2, ... wrapping from 2**31-1 to 1) and names only
the partitions added since (``forgotten_topics_data`` the ones dropped); epoch -1 closes the
session (the broker releases what the member still holds there). A request with epoch 0
must not carry acknowledgements, and a ShareAcknowledge needs an open session.

SHARE_SESSION_NOT_FOUND or INVALID_SHARE_SESSION_EPOCH (the broker evicted the session, or a
request was lost after the broker applied it), and any request that got no answer, start a
new session: the next ShareFetch has epoch 0 and names every partition again.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass, field

from ...structs import TopicPartition

#: The epoch that opens a session, and the one that closes it.
INITIAL_EPOCH = 0
FINAL_EPOCH = -1
_MAX_EPOCH = 2**31 - 1

#: Error codes that end a share session on the broker's side.
SHARE_SESSION_NOT_FOUND = 122
INVALID_SHARE_SESSION_EPOCH = 123
SESSION_ERRORS = frozenset({SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH})

#: Request-level ShareFetch errors that trying again cannot change (the member fails with
#: them): INVALID_GROUP_ID, TOPIC_/GROUP_/CLUSTER_AUTHORIZATION_FAILED, UNSUPPORTED_VERSION,
#: INVALID_REQUEST. Any other (a session error, UNKNOWN_SERVER_ERROR as Apache Kafka 4.1
#: answers for a session whose topic was deleted, a retriable one) resets the session and
#: is retried after the backoff, as the Java client does.
FATAL_FETCH_ERRORS = frozenset({24, 29, 30, 31, 35, 42})


def next_epoch(epoch: int) -> int:
    """The epoch after ``epoch`` (the final epoch stays final)."""
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == _MAX_EPOCH else epoch + 1


@dataclass(frozen=True)
class FetchPlan:
    """What the next ShareFetch of a session carries."""

    epoch: int
    #: Partitions to name in ``topics`` (all of them when the epoch is 0).
    send: frozenset[TopicPartition]
    #: Partitions to drop from the session.
    forget: frozenset[TopicPartition]

    @property
    def may_acknowledge(self) -> bool:
        """Acknowledgements may ride on this request (not on one that opens a session)."""
        return self.epoch != INITIAL_EPOCH


@dataclass
class ShareSession:
    """The member's session with one broker."""

    node_id: int
    epoch: int = INITIAL_EPOCH
    #: The partitions the broker has in the session (as of the last answered request).
    partitions: frozenset[TopicPartition] = field(default_factory=frozenset)
    #: Sessions opened (epoch 0 requests answered), for statistics.
    opened: int = 0
    resets: int = 0

    @property
    def is_open(self) -> bool:
        return self.epoch > INITIAL_EPOCH

    def plan(self, wanted: Set[TopicPartition]) -> FetchPlan:
        """The next ShareFetch for reading ``wanted`` from this broker."""
        want = frozenset(wanted)
        if self.epoch == INITIAL_EPOCH:
            return FetchPlan(INITIAL_EPOCH, want, frozenset())
        return FetchPlan(self.epoch, want - self.partitions, self.partitions - want)

    def on_fetch_answered(self, plan: FetchPlan) -> None:
        """The ShareFetch of ``plan`` was answered without a request-level error."""
        if plan.epoch == INITIAL_EPOCH:
            self.opened += 1
            self.partitions = plan.send
        else:
            self.partitions = (self.partitions | plan.send) - plan.forget
        self.epoch = next_epoch(plan.epoch)

    def acknowledge_epoch(self) -> int | None:
        """The epoch for a ShareAcknowledge now (None: no session is open to carry it)."""
        return self.epoch if self.is_open else None

    def on_acknowledge_answered(self, epoch: int) -> None:
        """A ShareAcknowledge with ``epoch`` was answered without a request-level error."""
        if epoch == FINAL_EPOCH:
            self.close()
        elif epoch == self.epoch:
            self.epoch = next_epoch(epoch)

    def reset(self) -> None:
        """The session is gone (a session error, or a request without an answer): the next
        ShareFetch opens a new one."""
        if self.epoch != INITIAL_EPOCH:
            self.resets += 1
        self.epoch = INITIAL_EPOCH
        self.partitions = frozenset()

    def close(self) -> None:
        """The session was closed (epoch -1)."""
        self.epoch = INITIAL_EPOCH
        self.partitions = frozenset()


__all__ = [
    "FATAL_FETCH_ERRORS",
    "FINAL_EPOCH",
    "INITIAL_EPOCH",
    "SESSION_ERRORS",
    "FetchPlan",
    "ShareSession",
    "next_epoch",
]
