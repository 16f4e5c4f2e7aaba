"""Share group membership (KIP-932, ShareGroupHeartbeat), as pure transitions.

Shaped like ``consumer/group/heartbeat_state.py`` (the KIP-848 consumer group member) but
simpler, because a share group does not give partitions to one member alone: the coordinator
assigns each partition to one or more members, and records (not partitions) are what a
member holds, each under an acquisition lock with its own expiry. So there is no revocation
to carry out and no commit to make before a partition moves: a new assignment only changes
which partitions the member fetches from. States::

    UNJOINED --subscribe--> JOINING --heartbeat ok--> STABLE --(each answer: new assignment?)
                               ^                        |
                               +-- UNKNOWN_MEMBER_ID / FENCED_MEMBER_EPOCH: rejoin with
                                   epoch 0 and the same member id (the assignment is dropped)
    LEAVING: close(): the leave heartbeat (epoch -1) goes out
    LEFT:    out of the group
    FAILED:  a fatal error (authorization, an invalid request, the group is full or of
             another type); the consumer raises it to the application

``ShareMembership`` holds what the member knows and turns each event (a heartbeat answer, a
heartbeat without an answer, metadata that names new topic ids, a close) into a new state and
a list of actions for the I/O loop (``share/heartbeat.py``). It does no I/O, never waits and
reads no clock (times come in as arguments), so every transition is unit tested.

The member id, the epoch, the heartbeat interval and what each error of an answer means
(fenced, the coordinator moved or is loading, a fatal error) are the KIP-848 member's:
``heartbeat_state.EpochMembership``, shared with ``HeartbeatMembership``. This module adds
what a share group does differently: no revocation, an assignment that only says where to
fetch from.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ...errors import KafkaError
from ..group.heartbeat_state import (
    FENCING_ERRORS,
    JOIN_EPOCH,
    LEAVE_EPOCH,
    NONE,
    EpochMembership,
    Fail,
    FindCoordinator,
    HeartbeatResponse,
    error_name,
    name_topics,
)


class ShareMemberState(enum.Enum):
    UNJOINED = "unjoined"
    JOINING = "joining"
    STABLE = "stable"
    LEAVING = "leaving"
    LEFT = "left"
    FAILED = "failed"


_HEARTBEATING = frozenset({ShareMemberState.JOINING, ShareMemberState.STABLE})


@dataclass(frozen=True)
class ShareHeartbeatRequest:
    """What to send; ``subscribed_topic_names`` is None when unchanged since the last
    answered heartbeat."""

    member_id: str
    member_epoch: int
    rack_id: str | None = None
    subscribed_topic_names: tuple[str, ...] | None = None


#: What came back: the fields of a KIP-848 answer (``assignment`` by topic id; None when it
#: did not change).
ShareHeartbeatResponse = HeartbeatResponse


# -- actions (``FindCoordinator`` and ``Fail`` are the group member's) ---------------------------


@dataclass(frozen=True)
class Assignment:
    """Fetch from exactly these partitions from now on (topic names resolved)."""

    partitions: frozenset[tuple[str, int]]


@dataclass(frozen=True)
class ResolveTopics:
    """The assignment names topic ids the metadata does not know: refresh it, then call
    :meth:`ShareMembership.resolve`."""

    topic_ids: frozenset[uuid.UUID]


Action = FindCoordinator | Assignment | ResolveTopics | Fail


@dataclass
class ShareMembership(EpochMembership[Action]):
    """One member's view of its share group. Mutated only by the methods below (the
    heartbeat interval is the group's share.heartbeat.interval.ms)."""

    _api = "ShareGroupHeartbeat"

    rack_id: str | None = None
    state: ShareMemberState = ShareMemberState.UNJOINED
    topics: tuple[str, ...] = ()
    #: The assignment the coordinator sent last, by topic id.
    target: dict[uuid.UUID, frozenset[int]] = field(default_factory=dict)
    #: The assignment as topic names (what the fetcher reads from).
    assigned: frozenset[tuple[str, int]] = frozenset()
    #: Joins so far (the first and every rejoin); why the last happened is ``join_reason``.
    joins: int = 0
    heartbeats_sent: int = 0
    #: The subscription the coordinator has (as of the last answered heartbeat).
    _sent_topics: tuple[str, ...] | None = None
    _in_flight_topics: tuple[str, ...] | None = None

    # -- queries -----------------------------------------------------------------------------

    @property
    def in_group(self) -> bool:
        return self.state is ShareMemberState.STABLE and self.member_epoch > 0

    @property
    def heartbeating(self) -> bool:
        return self.state in _HEARTBEATING

    # -- joining -----------------------------------------------------------------------------

    def subscribe(self, topics: Sequence[str]) -> None:
        """Set the subscription: join, or tell the coordinator with the next heartbeat."""
        self.topics = tuple(sorted(set(topics)))
        if self.state in (ShareMemberState.UNJOINED, ShareMemberState.LEFT):
            self._join("subscribed")
        elif self.state in _HEARTBEATING:
            self.next_heartbeat_at = 0.0

    def _join(self, reason: str) -> None:
        self.state = ShareMemberState.JOINING
        self.joins += 1
        self._join_epoch(reason)

    def _forget_sent(self) -> None:
        self._sent_topics = None
        self._in_flight_topics = None

    # -- heartbeats --------------------------------------------------------------------------

    def build_heartbeat(self, now: float) -> ShareHeartbeatRequest:
        """The next heartbeat: a join carries the subscription and rack, later ones only a
        changed subscription."""
        joining = self.state is ShareMemberState.JOINING
        topics = self.topics if joining or self.topics != self._sent_topics else None
        self._in_flight_topics = self.topics
        self.heartbeats_sent += 1
        self.next_heartbeat_at = now + self.heartbeat_interval_ms / 1000
        return ShareHeartbeatRequest(
            member_id=self.member_id,
            member_epoch=self.member_epoch,
            rack_id=self.rack_id if joining else None,
            subscribed_topic_names=topics,
        )

    def on_heartbeat_response(
        self, response: ShareHeartbeatResponse, now: float, names: Mapping[uuid.UUID, str]
    ) -> list[Action]:
        """A heartbeat was answered; ``names`` maps the topic ids the metadata knows."""
        in_flight, self._in_flight_topics = self._in_flight_topics, None
        if self.state not in _HEARTBEATING:
            return []  # a straggler: the member left or failed meanwhile
        if response.error_code != NONE:
            return self._refused(response, now)
        self._sent_topics = in_flight
        self._accept(response, now)
        self.state = ShareMemberState.STABLE
        if response.assignment is not None:
            self.target = {t: frozenset(ps) for t, ps in response.assignment.items()}
            return self.resolve(names)
        return []

    def _fenced(self, code: int) -> list[Action]:
        # Rejoin with epoch 0 and the same member id; the assignment is dropped.
        self._join(f"heartbeat answered {error_name(code)}")
        self.target = {}
        return self._set_assigned(frozenset())

    def fail(self, error: KafkaError) -> list[Action]:
        """A fatal error (also one found outside an answer: the broker lacks the API)."""
        self.state = ShareMemberState.FAILED
        self.failure = error
        self.target = {}
        return [*self._set_assigned(frozenset()), Fail(error)]

    # -- the assignment ----------------------------------------------------------------------

    def resolve(self, names: Mapping[uuid.UUID, str]) -> list[Action]:
        """Turn the last assignment into topic names; ids the metadata does not know yet are
        left out, and a ``ResolveTopics`` asks for them."""
        known, unknown = name_topics(self.target, names)
        actions = self._set_assigned(frozenset((name, p) for _, name, ps in known for p in ps))
        if unknown:
            actions.append(ResolveTopics(unknown))
        return actions

    def _set_assigned(self, assigned: frozenset[tuple[str, int]]) -> list[Action]:
        if assigned == self.assigned:
            return []
        self.assigned = assigned
        return [Assignment(assigned)]

    # -- leaving -----------------------------------------------------------------------------

    def leave(self) -> ShareHeartbeatRequest | None:
        """close(): stop heartbeating; the request to send (epoch -1), or None when the
        member never joined (nothing to leave)."""
        if self.state in (ShareMemberState.UNJOINED, ShareMemberState.LEFT):
            return None
        if self.state is ShareMemberState.FAILED:
            return None
        self.state = ShareMemberState.LEAVING
        if self.heartbeats_sent == 0:
            return None  # the coordinator never heard of this member
        return ShareHeartbeatRequest(member_id=self.member_id, member_epoch=LEAVE_EPOCH)

    def finish_leave(self) -> list[Action]:
        """The leave heartbeat was sent (or abandoned)."""
        if self.state is ShareMemberState.FAILED:
            return []
        self.state = ShareMemberState.LEFT
        self.member_epoch = JOIN_EPOCH
        self.target = {}
        return self._set_assigned(frozenset())


__all__ = [
    "FENCING_ERRORS",
    "Action",
    "Assignment",
    "Fail",
    "FindCoordinator",
    "ResolveTopics",
    "ShareHeartbeatRequest",
    "ShareHeartbeatResponse",
    "ShareMemberState",
    "ShareMembership",
]
