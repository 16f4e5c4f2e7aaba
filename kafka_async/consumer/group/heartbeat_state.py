"""The member state machine of the consumer group protocol (KIP-848), as pure transitions.

Beside ``state.py`` (the classic JoinGroup/SyncGroup protocol) and shaped like it: a
``HeartbeatMembership`` holds what one member knows (its member id and epoch, the partitions
it owns, the assignment the coordinator last sent) and turns each event (a heartbeat
response, a finished reconciliation, a poll timeout, a close) into a new state plus a list of
*actions* for the coordinator loop to carry out in order. It does no I/O, never waits and
reads no clock: times come in as arguments, so every transition is unit tested.

In this protocol the broker computes the assignment; the member only heartbeats
(ConsumerGroupHeartbeat), and each heartbeat reports the partitions it owns. States::

    UNJOINED --subscribe--> JOINING --heartbeat ok--> STABLE <--reconciled-- RECONCILING
                               ^                        |  `--new assignment--^
                               |                        |
                    rejoin <-- FENCED <-- UNKNOWN_MEMBER_ID / FENCED_MEMBER_EPOCH / session lost
    LEAVING: close()/unsubscribe()/poll timeout revoking (commit + listener), then the leave
        heartbeat (epoch -1; -2 for a static member, which keeps its assignment reserved for
        the session timeout)
    LEFT: left; after a poll timeout the next poll rejoins (epoch 0, same member id)
    FAILED: a fatal error (authorization, an unknown assignor, a fenced static member)

Reconciliation (the member's half of a rebalance), one at a time, with the assignment the
coordinator sent last (it only sends partitions that are free to use now):

1. ``Revoke`` what is owned but no longer assigned: the executor commits their consumed
   offsets with the current member epoch, calls ``on_partitions_revoked``, stops fetching;
2. ``Assign`` what is assigned but not owned: start fetching, call ``on_partitions_assigned``
   (also with an empty set after a (re)join, as the classic path does);
3. ``Reconciled``: the member now owns exactly that; the next heartbeat, sent at once,
   reports it, which is what lets the coordinator hand the revoked partitions to their next
   owner. An assignment that arrived meanwhile starts the next reconciliation.

Lost partitions (fenced: the coordinator has already given them away) are not committed;
the listener's ``on_partitions_lost`` runs, then the member rejoins with epoch 0.

Heartbeats carry only what changed since the last one that was answered (the broker keeps
the rest); a join, and any error, resets that, so the next heartbeat carries everything.
"""

from __future__ import annotations

import base64
import enum
import uuid
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Generic, TypeVar

from ...errors import KafkaError, error_for_code
from ...structs import TopicPartition

# The two actions both protocols' machines give, one class each (the engine handles them).
from .state import Fail, FindCoordinator

# Error codes this machine acts on (Kafka's numbering).
NONE = 0
COORDINATOR_LOAD_IN_PROGRESS = 14
COORDINATOR_NOT_AVAILABLE = 15
NOT_COORDINATOR = 16
UNKNOWN_MEMBER_ID = 25
FENCED_MEMBER_EPOCH = 110

_COORDINATOR_ERRORS = frozenset({COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR})
#: The coordinator no longer counts this member (or this epoch) in the group.
FENCING_ERRORS = frozenset({UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH})

#: The epoch a member joins with, and the ones it leaves with.
JOIN_EPOCH = 0
LEAVE_EPOCH = -1
STATIC_LEAVE_EPOCH = -2


class MemberState(enum.Enum):
    UNJOINED = "unjoined"
    JOINING = "joining"
    STABLE = "stable"
    RECONCILING = "reconciling"
    FENCED = "fenced"
    LEAVING = "leaving"
    LEFT = "left"
    FAILED = "failed"


#: States in which the member heartbeats on its interval.
HEARTBEAT_STATES = frozenset({MemberState.JOINING, MemberState.STABLE, MemberState.RECONCILING})
#: States in which the member holds an epoch that commits may carry.
_IN_GROUP = frozenset({MemberState.STABLE, MemberState.RECONCILING, MemberState.LEAVING})


def new_member_id() -> str:
    """A member id as Kafka clients make them (KIP-1082): a random UUID, URL-safe base64."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()


# -- the heartbeat request and response, as the machine sees them ----------------------------


@dataclass(frozen=True)
class HeartbeatRequest:
    """What to send; None fields are "unchanged since the last heartbeat"."""

    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: tuple[str, ...] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    #: ``((topic_id, (partition, ...)), ...)``: the partitions the member owns.
    topic_partitions: tuple[tuple[uuid.UUID, tuple[int, ...]], ...] | None = None


@dataclass(frozen=True)
class HeartbeatResponse:
    """What came back (``assignment`` is None when it did not change)."""

    error_code: int
    member_epoch: int = -1
    heartbeat_interval_ms: int = 0
    member_id: str | None = None
    error_message: str | None = None
    assignment: Mapping[uuid.UUID, frozenset[int]] | None = None


# -- actions ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Revoke:
    """Commit consumed offsets of, call ``on_partitions_revoked`` for, and stop fetching
    these partitions (None: every partition the member holds when the action runs)."""

    partitions: frozenset[TopicPartition] | None


@dataclass(frozen=True)
class Lose:
    """Stop fetching every partition the member holds, commit nothing (someone else may own
    them already), call ``on_partitions_lost``."""


@dataclass(frozen=True)
class Assign:
    """Start fetching these partitions and tell the listener."""

    partitions: frozenset[TopicPartition]


@dataclass(frozen=True)
class Reconciled:
    """The reconciliation is carried out: the member owns ``owned`` now."""

    owned: frozenset[TopicPartition]
    #: The join this reconciliation belongs to (a fence in between makes it moot).
    join_count: int = field(compare=False)


@dataclass(frozen=True)
class ResolveTopics:
    """The assignment names topic ids the metadata does not know: refresh it, reconcile."""

    topic_ids: frozenset[uuid.UUID]


@dataclass(frozen=True)
class Rejoin:
    """The lost partitions are released: join again with epoch 0."""

    join_count: int = field(compare=False)


@dataclass(frozen=True)
class SendLeave:
    """Send the leaving heartbeat (epoch -1, or -2 for a static member)."""

    member_epoch: int


@dataclass(frozen=True)
class Left:
    """The revocation and the leave heartbeat are done: the member is out of the group."""

    poll_timeout: bool = False


Action = (
    FindCoordinator
    | Revoke
    | Lose
    | Assign
    | Reconciled
    | ResolveTopics
    | Rejoin
    | SendLeave
    | Left
    | Fail
)


@dataclass
class _Sent:
    """The fields the coordinator has as of the last answered heartbeat (None: unknown)."""

    rebalance_timeout_ms: int | None = None
    subscription: tuple[str, ...] | str | None = None
    server_assignor: str | None = None
    owned: frozenset[TopicPartition] | None = None


#: The actions of the protocol built on ``EpochMembership``.
A = TypeVar("A")


@dataclass
class EpochMembership(ABC, Generic[A]):
    """The core of a member in the heartbeat protocols: KIP-848's consumer groups (below)
    and KIP-932's share groups (``consumer/share/membership.py``).

    The member makes its own id; the coordinator gives it an epoch (0 to join, -1 to leave)
    and the heartbeat interval, and answers each heartbeat. An answer's error says the
    member was fenced (it rejoins at epoch 0; the protocol says what becomes of its
    partitions), the coordinator moved or is away (look it up again, retry after the
    backoff), it is still loading (retry after the backoff), or the member cannot go on
    (it fails). Pure like the rest: times come in as arguments."""

    member_id: str = field(default_factory=new_member_id)
    retry_backoff_ms: int = 100
    member_epoch: int = JOIN_EPOCH
    #: As the coordinator last told (its group's heartbeat interval).
    heartbeat_interval_ms: int = 5_000
    #: The next heartbeat is due at this time (monotonic seconds); 0 means now.
    next_heartbeat_at: float = 0.0
    #: Why the member last (re)joined (shown by ``statistics()``).
    join_reason: str = ""
    failure: KafkaError | None = field(default=None, repr=False)

    #: The heartbeat API, for error messages.
    _api: ClassVar[str] = "ConsumerGroupHeartbeat"

    @property
    @abstractmethod
    def heartbeating(self) -> bool:
        """The member is in a state that heartbeats (joining or in the group)."""

    def heartbeat_due(self, now: float) -> bool:
        return self.heartbeating and now >= self.next_heartbeat_at

    @abstractmethod
    def fail(self, error: KafkaError) -> list[A]:
        """A fatal error (also one found outside a response: the broker lacks the API)."""

    @abstractmethod
    def _fenced(self, code: int) -> list[A]:
        """The coordinator no longer counts this member (FENCING_ERRORS): rejoin."""

    @abstractmethod
    def _forget_sent(self) -> None:
        """Nothing is known to have reached the coordinator: the next heartbeat carries
        every field again (a join, any error)."""

    def _join_epoch(self, reason: str) -> None:
        """(Re)join: epoch 0, a heartbeat at once with every field."""
        self.member_epoch = JOIN_EPOCH
        self.join_reason = reason
        self._forget_sent()
        self.next_heartbeat_at = 0.0

    def _accept(self, response: HeartbeatResponse, now: float) -> None:
        """A heartbeat was answered without error: take the id, epoch and interval."""
        if response.member_id:
            self.member_id = response.member_id
        self.member_epoch = response.member_epoch
        if response.heartbeat_interval_ms > 0:
            self.heartbeat_interval_ms = response.heartbeat_interval_ms
            self.next_heartbeat_at = min(
                self.next_heartbeat_at, now + response.heartbeat_interval_ms / 1000
            )

    def _refused(self, response: HeartbeatResponse, now: float) -> list[A | FindCoordinator]:
        """A heartbeat was answered with an error."""
        self._forget_sent()
        code = response.error_code
        if code in FENCING_ERRORS:
            return [*self._fenced(code)]
        if code in _COORDINATOR_ERRORS:
            self.next_heartbeat_at = now + self.retry_backoff_ms / 1000
            return [FindCoordinator()]
        if code == COORDINATOR_LOAD_IN_PROGRESS:
            self.next_heartbeat_at = now + self.retry_backoff_ms / 1000
            return []
        text = f"{self._api} failed with {error_name(code)}"
        if response.error_message:
            text += f": {response.error_message}"
        return [*self.fail(error_for_code(code, text))]

    def on_heartbeat_failed(self, now: float) -> list[A | FindCoordinator]:
        """The heartbeat got no answer (connection lost, timed out): look the coordinator
        up again and retry after the backoff, sending every field."""
        self._forget_sent()
        if not self.heartbeating:
            return []
        self.next_heartbeat_at = now + self.retry_backoff_ms / 1000
        return [FindCoordinator()]


@dataclass
class HeartbeatMembership(EpochMembership[Action]):
    """One member's view of its KIP-848 group. Mutated only by the methods below."""

    group_instance_id: str | None = None
    rack_id: str | None = None
    server_assignor: str | None = None
    rebalance_timeout_ms: int = 300_000
    state: MemberState = MemberState.UNJOINED
    #: The subscription: topic names, or a regular expression the broker evaluates.
    topics: tuple[str, ...] = ()
    regex: str | None = None
    #: The partitions the member owns (as of the last finished reconciliation).
    owned: frozenset[TopicPartition] = frozenset()
    #: Topic ids of the owned partitions' topics (heartbeats name topics by id).
    topic_ids: dict[str, uuid.UUID] = field(default_factory=dict)
    #: The assignment the coordinator sent last, by topic id (None: none since joining).
    target: dict[uuid.UUID, frozenset[int]] | None = None
    #: Bumped on every (re)join: actions of an earlier one are moot.
    join_count: int = 0
    left_on_poll_timeout: bool = False
    #: Whether the listener has heard of this join's first assignment.
    _assigned_since_join: bool = False
    _sent: _Sent = field(default_factory=_Sent)
    #: What the heartbeat in flight carries (becomes ``_sent`` when it is answered).
    _in_flight: _Sent | None = None

    # -- queries -----------------------------------------------------------------------------

    @property
    def in_group(self) -> bool:
        """The member holds an epoch that commits may carry."""
        return self.state in _IN_GROUP and self.member_epoch > 0

    def generation(self) -> int:
        """The member epoch for commits, or -1 outside the group."""
        return self.member_epoch if self.in_group else -1

    @property
    def heartbeating(self) -> bool:
        return self.state in HEARTBEAT_STATES

    @property
    def leave_epoch(self) -> int:
        return STATIC_LEAVE_EPOCH if self.group_instance_id is not None else LEAVE_EPOCH

    # -- subscription and joining ------------------------------------------------------------

    def subscribe(self, topics: Sequence[str] = (), regex: str | None = None) -> None:
        """Set the subscription; the member joins, or its next heartbeat tells the change."""
        self.topics = tuple(sorted(topics))
        self.regex = regex
        if self.state in (MemberState.UNJOINED, MemberState.LEFT):
            self._join("subscribed")
        elif self.state in HEARTBEAT_STATES:
            self.next_heartbeat_at = 0.0

    def _join(self, reason: str, *, new_join: bool = True) -> None:
        self.state = MemberState.JOINING
        self._join_epoch(reason)
        self.target = None
        if new_join:
            self.join_count += 1
        self.left_on_poll_timeout = False
        self._assigned_since_join = False

    def _forget_sent(self) -> None:
        self._sent = _Sent()
        self._in_flight = None

    def _subscription(self) -> tuple[str, ...] | str:
        return self.regex if self.regex is not None else self.topics

    # -- heartbeats --------------------------------------------------------------------------

    def build_heartbeat(self, now: float) -> HeartbeatRequest:
        """The next heartbeat; only what changed since the last answered one is filled in."""
        full = self.state is MemberState.JOINING
        sent = _Sent() if full else self._sent
        sub = self._subscription()
        owned = self.owned if not full else frozenset()
        names: tuple[str, ...] | None = None
        regex: str | None = None
        if sub != sent.subscription:
            if isinstance(sub, str):
                regex = sub
                # Switching from names to a regex: clear the names the broker holds.
                names = () if sent.subscription is not None else None
            else:
                names = sub
                regex = "" if isinstance(sent.subscription, str) else None
        timeout = self.rebalance_timeout_ms
        assignor = self.server_assignor
        self._in_flight = _Sent(timeout, sub, assignor, owned)
        self.next_heartbeat_at = now + self.heartbeat_interval_ms / 1000
        return HeartbeatRequest(
            member_id=self.member_id,
            member_epoch=self.member_epoch,
            instance_id=self.group_instance_id,
            rack_id=self.rack_id if full else None,
            rebalance_timeout_ms=timeout if timeout != sent.rebalance_timeout_ms else -1,
            subscribed_topic_names=names,
            subscribed_topic_regex=regex,
            server_assignor=assignor if assignor != sent.server_assignor else None,
            topic_partitions=None if owned == sent.owned else self._by_topic_id(owned),
        )

    def _by_topic_id(
        self, tps: frozenset[TopicPartition]
    ) -> tuple[tuple[uuid.UUID, tuple[int, ...]], ...]:
        by_topic: dict[str, list[int]] = {}
        for tp in tps:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        return tuple(
            (self.topic_ids[t], tuple(sorted(ps)))
            for t, ps in sorted(by_topic.items())
            if t in self.topic_ids
        )

    def on_heartbeat_response(
        self,
        response: HeartbeatResponse,
        now: float,
        names: Mapping[uuid.UUID, str],
    ) -> list[Action]:
        """A heartbeat came back. ``names`` maps the topic ids the metadata knows."""
        in_flight, self._in_flight = self._in_flight, None
        if self.state not in HEARTBEAT_STATES:
            return []  # a straggler: the member left, failed or was fenced meanwhile
        if response.error_code != NONE:
            return self._refused(response, now)
        if in_flight is not None:
            self._sent = in_flight
        self._accept(response, now)
        if self.state is MemberState.JOINING:
            self.state = MemberState.STABLE
        if response.assignment is not None:
            self.target = {t: frozenset(ps) for t, ps in response.assignment.items()}
        return self.maybe_reconcile(names)

    def on_session_lost(self) -> list[Action]:
        """No heartbeat answered within the session timeout: the coordinator has surely
        removed the member, so its partitions may belong to someone else."""
        if self.state not in (MemberState.STABLE, MemberState.RECONCILING):
            return []
        return self._fence("session timeout without a heartbeat answered")

    def _fenced(self, code: int) -> list[Action]:
        return self._fence(f"heartbeat: {error_name(code)}")

    def _fence(self, reason: str) -> list[Action]:
        self.state = MemberState.FENCED
        self.member_epoch = JOIN_EPOCH
        self.owned = frozenset()
        self.target = None
        self.join_reason = reason
        self.join_count += 1
        return [Lose(), Rejoin(self.join_count)]

    def rejoin(self, action: Rejoin) -> None:
        """The lost partitions are released (the ``Rejoin`` action): join with epoch 0."""
        if self.state is MemberState.FENCED and action.join_count == self.join_count:
            # The fence counted this join already (making earlier actions moot).
            self._join(self.join_reason, new_join=False)

    def fail(self, error: KafkaError) -> list[Action]:
        """A fatal error (also one found outside a response: the broker lacks the API)."""
        self.state = MemberState.FAILED
        self.failure = error
        self.owned = frozenset()
        return [Lose(), Fail(error)]

    # -- reconciliation ----------------------------------------------------------------------

    def maybe_reconcile(self, names: Mapping[uuid.UUID, str]) -> list[Action]:
        """Start reconciling the last assignment if it differs from what is owned."""
        if self.state is not MemberState.STABLE or self.target is None:
            return []
        known, unknown = name_topics(self.target, names)
        assigned: set[TopicPartition] = set()
        for topic_id, name, partitions in known:
            self.topic_ids[name] = topic_id
            assigned.update(TopicPartition(name, p) for p in partitions)
        target = frozenset(assigned)
        actions: list[Action] = []
        revoked = self.owned - target
        added = target - self.owned
        if revoked or added or not self._assigned_since_join:
            self.state = MemberState.RECONCILING
            self._assigned_since_join = True
            if revoked:
                actions.append(Revoke(frozenset(revoked)))
            actions.append(Assign(frozenset(added)))
            actions.append(Reconciled(target, self.join_count))
        if unknown:
            actions.append(ResolveTopics(unknown))
        return actions

    def on_reconciled(self, action: Reconciled, names: Mapping[uuid.UUID, str]) -> list[Action]:
        """The reconciliation's revocation and assignment ran: report it, and start the next
        one if the coordinator sent another assignment meanwhile."""
        if self.state is not MemberState.RECONCILING or action.join_count != self.join_count:
            return []
        self.owned = action.owned
        self.state = MemberState.STABLE
        self.next_heartbeat_at = 0.0  # acknowledge at once: others wait for what we gave up
        return self.maybe_reconcile(names)

    # -- leaving -----------------------------------------------------------------------------

    def leave(self) -> list[Action]:
        """close()/unsubscribe(): revoke (committing) what is held, then the leave heartbeat."""
        return self._begin_leave(poll_timeout=False)

    def on_poll_timeout(self) -> list[Action]:
        """The application did not poll within max_poll_interval_ms: leave the group so its
        partitions go to members that make progress; the next poll rejoins."""
        if self.state not in (MemberState.STABLE, MemberState.RECONCILING):
            return []
        return self._begin_leave(poll_timeout=True)

    def _begin_leave(self, *, poll_timeout: bool) -> list[Action]:
        if self.state in (MemberState.FAILED, MemberState.LEAVING, MemberState.UNJOINED):
            return []
        if self.state is MemberState.LEFT:
            self.left_on_poll_timeout = False  # an explicit leave: do not rejoin on poll
            return []
        joined = self.state is not MemberState.JOINING or self._in_flight is not None
        self.state = MemberState.LEAVING
        self.owned = frozenset()
        self.target = None
        actions: list[Action] = [Revoke(None)]
        if joined or self.member_epoch > 0:
            actions.append(SendLeave(self.leave_epoch))
        actions.append(Left(poll_timeout))
        return actions

    def leave_request(self, member_epoch: int) -> HeartbeatRequest:
        """The heartbeat that leaves the group (only ids and the epoch matter)."""
        return HeartbeatRequest(
            member_id=self.member_id,
            member_epoch=member_epoch,
            instance_id=self.group_instance_id,
        )

    def finish_leave(self, left: Left) -> None:
        """The leave's revocation and heartbeat are done (or abandoned)."""
        if self.state is MemberState.FAILED:
            return
        self.state = MemberState.LEFT
        self.member_epoch = JOIN_EPOCH
        self.left_on_poll_timeout = left.poll_timeout
        self._sent = _Sent()

    def on_poll(self) -> None:
        """The application polled: a member that left on poll timeout rejoins."""
        if self.state is MemberState.LEFT and self.left_on_poll_timeout:
            self._join("application resumed polling")

    def reset(self) -> None:
        """Back to unjoined after unsubscribe (a later subscribe joins afresh)."""
        self.state = MemberState.UNJOINED
        self.member_epoch = JOIN_EPOCH
        self.owned = frozenset()
        self.target = None
        self.left_on_poll_timeout = False
        self.failure = None
        self.topics = ()
        self.regex = None


def name_topics(
    target: Mapping[uuid.UUID, frozenset[int]], names: Mapping[uuid.UUID, str]
) -> tuple[list[tuple[uuid.UUID, str, frozenset[int]]], frozenset[uuid.UUID]]:
    """An assignment by topic id, as far as ``names`` (the metadata's ids) knows it: (topic
    id, name, partitions) of each known topic, and the ids not known yet."""
    known: list[tuple[uuid.UUID, str, frozenset[int]]] = []
    unknown: set[uuid.UUID] = set()
    for topic_id, partitions in target.items():
        name = names.get(topic_id)
        if name is None:
            unknown.add(topic_id)
        else:
            known.append((topic_id, name, partitions))
    return known, frozenset(unknown)


def error_name(code: int) -> str:
    """Kafka's name for an error code (as its error class says), for messages."""
    return str(getattr(error_for_code(code), "name", code))


__all__ = [
    "FENCING_ERRORS",
    "Action",
    "Assign",
    "EpochMembership",
    "Fail",
    "FindCoordinator",
    "HeartbeatMembership",
    "HeartbeatRequest",
    "HeartbeatResponse",
    "Left",
    "Lose",
    "MemberState",
    "Reconciled",
    "Rejoin",
    "ResolveTopics",
    "Revoke",
    "SendLeave",
    "error_name",
    "name_topics",
    "new_member_id",
]
