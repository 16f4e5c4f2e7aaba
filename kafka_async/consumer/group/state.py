"""The group membership state machine, as pure synchronous transitions.

``GroupMembership`` holds what a member knows about its group (member id, generation, the
partitions it owns, whether it must rejoin) and turns each event (a response, an error code,
a poll timeout, a close) into a new state plus a list of *actions* for the coordinator loop
to carry out in order. It does no I/O and never waits, so every transition is unit tested.

States::

    UNJOINED --begin_join--> JOINING --join ok--> SYNCING --sync ok--> STABLE
        ^                       |  ^                  |                  |
        |                       |  +--- rejoin -------+------------------+
        |                       +--- fatal error --> FAILED
        +------------- poll after GROUP_AUTHORIZATION_FAILED ---+
    REVOKING: an eager member giving up its partitions before it rejoins
    LEAVING: close()/unsubscribe()/poll timeout is revoking (commit + listener) and sending
        LeaveGroup; the generation is still held, so commits made by the listener land
    LEFT: closed (LeaveGroup sent), or left after max_poll_interval_ms; a poll rejoins

What happens to owned partitions:

* eager protocol: all are revoked (committed, listener told) before every JoinGroup;
* cooperative protocol: they are kept through the rebalance; after SyncGroup only those
  missing from the new assignment are revoked, and if any were, the member rejoins at once
  so the leader can hand them to their new owner;
* ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID / FENCED: they are *lost* (someone else may own
  them already), so nothing is committed for them; the listener's ``on_partitions_lost``
  runs.

A failed member stays failed: the consumer raises ``failure`` on every call, as the Java
client raises on every poll. GROUP_AUTHORIZATION_FAILED is the one failure a later poll tries
to get out of (an ACL may be granted meanwhile, and the Java client looks the coordinator up
and joins again on each poll): ``on_poll`` sends the member back to UNJOINED, ``failure``
still set (still raised), until a JoinGroup gets through.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field

from ... import errors as E
from ...errors import KafkaError, error_for_code
from ...structs import TopicPartition
from .assignors import ASSIGNORS, RebalanceProtocol

# Error codes this machine acts on, by name from errors.py.
NONE = 0
COORDINATOR_LOAD_IN_PROGRESS = E.CoordinatorLoadInProgressError.code
COORDINATOR_NOT_AVAILABLE = E.CoordinatorNotAvailableError.code
NOT_COORDINATOR = E.NotCoordinatorError.code
ILLEGAL_GENERATION = E.IllegalGenerationError.code
INCONSISTENT_GROUP_PROTOCOL = E.InconsistentGroupProtocolError.code
INVALID_GROUP_ID = E.InvalidGroupIdError.code
UNKNOWN_MEMBER_ID = E.UnknownMemberIdError.code
INVALID_SESSION_TIMEOUT = E.InvalidSessionTimeoutError.code
REBALANCE_IN_PROGRESS = E.RebalanceInProgressError.code
GROUP_AUTHORIZATION_FAILED = E.GroupAuthorizationFailedError.code
MEMBER_ID_REQUIRED = E.MemberIdRequiredError.code
GROUP_MAX_SIZE_REACHED = E.GroupMaxSizeReachedError.code
FENCED_INSTANCE_ID = E.FencedInstanceIdError.code

_COORDINATOR_ERRORS = frozenset({COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR})


def error_name(code: int) -> str:
    """Kafka's name for an error code (errors.py), else the number."""
    cls = E.for_code(code)
    return cls.name if cls is not None else str(code)


class MemberState(enum.Enum):
    UNJOINED = "unjoined"
    JOINING = "joining"
    SYNCING = "syncing"
    STABLE = "stable"
    REVOKING = "revoking"
    LEAVING = "leaving"
    LEFT = "left"
    FAILED = "failed"


# -- actions ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class FindCoordinator:
    """Forget the current coordinator and look it up again."""


@dataclass(frozen=True)
class SendJoin:
    """Send JoinGroup with the member id and generation now in the state."""


@dataclass(frozen=True)
class SendSync:
    """Send SyncGroup; the leader first runs the assignor on the members' subscriptions."""

    is_leader: bool


@dataclass(frozen=True)
class Revoke:
    """Commit consumed offsets of, stop fetching, and tell the listener about partitions
    this member gives up in an orderly way. The commit uses the generation the member held
    when it decided to revoke (carried here, since the state may have moved on)."""

    partitions: frozenset[TopicPartition]
    generation_id: int = field(default=-1, compare=False)
    member_id: str = field(default="", compare=False)


@dataclass(frozen=True)
class Lose:
    """Partitions another member may own already: stop fetching, commit nothing."""

    partitions: frozenset[TopicPartition]


@dataclass(frozen=True)
class Assign:
    """Start fetching newly owned partitions and tell the listener."""

    partitions: frozenset[TopicPartition]


@dataclass(frozen=True)
class SendLeave:
    """Send LeaveGroup so the group rebalances now rather than after the session timeout."""

    member_id: str = field(default="", compare=False)
    group_instance_id: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Left:
    """The revocation and LeaveGroup of a leave are done: now drop the generation.

    It comes last, so the listener's own commits in ``on_partitions_revoked`` still carry
    a valid generation."""

    reset_member_id: bool = False
    poll_timeout: bool = False


@dataclass(frozen=True)
class Backoff:
    """Wait before the next step (the coordinator is loading, or a retriable error)."""

    ms: int


@dataclass(frozen=True)
class Fail:
    """A fatal error: the member cannot continue; the consumer raises it to the caller."""

    error: KafkaError


Action = (
    FindCoordinator
    | SendJoin
    | SendSync
    | Revoke
    | Lose
    | Assign
    | SendLeave
    | Left
    | Backoff
    | Fail
)

NO_GENERATION = -1


def inconsistent_protocol_error(
    group_id: str,
    offered: Sequence[str],
    group_protocol_type: str = "",
    group_assignor: str = "",
) -> E.InconsistentGroupProtocolError:
    """The error for a JoinGroup refused with INCONSISTENT_GROUP_PROTOCOL, saying what this
    member offered and how to match the group. ``group_protocol_type`` and
    ``group_assignor`` are what DescribeGroups told of the group ("" when unknown).

    The broker refuses a member that shares no assignor with the members already in the
    group (or joins a group of another protocol type, e.g. Kafka Connect's). The common
    case is a rolling migration from another client whose default differs (aiokafka offers
    only "roundrobin"; the Java client and this one "range" and "cooperative-sticky")."""
    ours = ", ".join(repr(n) for n in offered)
    mine = f"partition_assignment_strategy=({ours}{',' if len(offered) == 1 else ''})"
    head = f"group {group_id!r}: JoinGroup failed with INCONSISTENT_GROUP_PROTOCOL: "
    if group_protocol_type and group_protocol_type != "consumer":
        return E.InconsistentGroupProtocolError(
            f"{head}the group has protocol type {group_protocol_type!r}, not 'consumer' (it "
            f"is not a consumer group; use another group_id). This consumer offered {mine}"
        )
    available = ", ".join(repr(n) for n in sorted(ASSIGNORS))
    if group_assignor:
        theirs = f"the group's members use the assignor {group_assignor!r}"
        if group_assignor in ASSIGNORS:
            fix = (
                f"set partition_assignment_strategy=({group_assignor!r},) to match them (or "
                f"list {group_assignor!r} beside the others, e.g. "
                f"({group_assignor!r}, {ours}), and drop it once every member offers the "
                "same list)"
            )
        else:
            fix = (
                f"kafka_async has no assignor named {group_assignor!r} (it has {available}): "
                f"pass an Assignor subclass whose name is {group_assignor!r}, or move the "
                "other members to one of these"
            )
    else:
        theirs = "the group's members offer none of these assignors"
        fix = (
            "set partition_assignment_strategy to an assignor every member offers (this "
            f"client has {available}; aiokafka's default is ('roundrobin',), the Java "
            "client's ('range', 'cooperative-sticky'))"
        )
    return E.InconsistentGroupProtocolError(
        f"{head}this consumer offered {mine}, and {theirs}. Every member of a group must "
        f"offer at least one assignor in common: {fix}"
    )


@dataclass
class GroupMembership:
    """One member's view of its group. Mutated only by the methods below."""

    protocol: RebalanceProtocol = RebalanceProtocol.EAGER
    group_instance_id: str | None = None
    retry_backoff_ms: int = 100
    state: MemberState = MemberState.UNJOINED
    member_id: str = ""
    generation_id: int = NO_GENERATION
    protocol_name: str | None = None
    leader_id: str = ""
    owned: frozenset[TopicPartition] = frozenset()
    #: True when the member must (re)join at the next opportunity.
    rejoin_needed: bool = True
    #: Why the last rejoin was requested (shown by ``statistics()``).
    rejoin_reason: str = "initial join"
    #: The member left because the application stopped polling; the next poll rejoins.
    left_on_poll_timeout: bool = False
    failure: KafkaError | None = field(default=None, repr=False)

    # -- helpers -----------------------------------------------------------------------------

    @property
    def is_leader(self) -> bool:
        return bool(self.member_id) and self.member_id == self.leader_id

    @property
    def in_group(self) -> bool:
        """A generation is held: heartbeats and generation-checked commits make sense."""
        return self.state is MemberState.STABLE and self.generation_id != NO_GENERATION

    def request_rejoin(self, reason: str) -> None:
        """Ask for a rejoin (metadata change, new subscription, rebalance in progress)."""
        if self.state in (MemberState.LEFT, MemberState.LEAVING, MemberState.FAILED):
            return
        self.rejoin_needed = True
        self.rejoin_reason = reason

    def _reset_generation(self, *, reset_member_id: bool) -> None:
        self.generation_id = NO_GENERATION
        self.leader_id = ""
        self.protocol_name = None
        if reset_member_id:
            self.member_id = ""

    def _revoke(self, partitions: frozenset[TopicPartition]) -> Revoke:
        return Revoke(partitions, self.generation_id, self.member_id)

    def _lose_all(self) -> list[Action]:
        lost = self.owned
        self.owned = frozenset()
        return [Lose(lost)] if lost else []

    def _fail(self, code: int, context: str) -> list[Action]:
        return self.fail(error_for_code(code, f"{context} failed with {error_name(code)}"))

    def fail(self, error: KafkaError) -> list[Action]:
        """A fatal error, from a response or found on the way (the coordinator lookup
        refused, the broker lacks an API): the member stops and owns nothing."""
        self.state = MemberState.FAILED
        self.rejoin_needed = False
        self.failure = error
        return [*self._lose_all(), Fail(error)]

    @property
    def retry_on_poll(self) -> bool:
        """Failed with GROUP_AUTHORIZATION_FAILED: the next poll tries to join again."""
        return self.state is MemberState.FAILED and isinstance(
            self.failure, E.GroupAuthorizationFailedError
        )

    def _generation_error(self, code: int, context: str) -> list[Action]:
        """ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID anywhere."""
        if code == FENCED_INSTANCE_ID:
            # Another process runs with our group_instance_id: continuing would make two
            # members read the same partitions, so this is fatal, as in the Java client.
            return self._fail(code, context)
        self._reset_generation(reset_member_id=code == UNKNOWN_MEMBER_ID)
        self.state = MemberState.UNJOINED
        self.request_rejoin(f"{context}: {error_name(code)}")
        return self._lose_all()

    # -- joining -----------------------------------------------------------------------------

    def begin_join(self) -> list[Action]:
        """The loop decided to (re)join now. Eager members revoke everything first."""
        if self.state is MemberState.FAILED:
            return [Fail(self.failure)] if self.failure else []
        self.rejoin_needed = False
        self.left_on_poll_timeout = False
        actions: list[Action] = []
        self.state = MemberState.JOINING
        if self.protocol is RebalanceProtocol.EAGER and self.owned:
            actions.append(self._revoke(self.owned))
            self.owned = frozenset()
            # Until the revocation (commit + listener) is done, no JoinGroup goes out.
            self.state = MemberState.REVOKING
        actions.append(SendJoin())
        return actions

    def on_join_sent(self) -> None:
        """The loop is sending JoinGroup now (after any revocation finished)."""
        if self.state in (MemberState.REVOKING, MemberState.UNJOINED, MemberState.JOINING):
            self.state = MemberState.JOINING

    def on_join_response(
        self,
        error_code: int,
        *,
        member_id: str = "",
        generation_id: int = NO_GENERATION,
        protocol_name: str | None = None,
        leader_id: str = "",
    ) -> list[Action]:
        """JoinGroup answered (or failed with ``error_code``)."""
        if self.state is not MemberState.JOINING:
            return []  # a late answer to a join we abandoned (closed, failed)
        if error_code == NONE:
            self.member_id = member_id
            self.generation_id = generation_id
            self.protocol_name = protocol_name
            self.leader_id = leader_id
            self.state = MemberState.SYNCING
            self.failure = None  # a retry after GROUP_AUTHORIZATION_FAILED got through
            return [SendSync(self.is_leader)]
        if error_code == MEMBER_ID_REQUIRED:
            # KIP-394: the broker hands out the id in the error response; join again with it.
            self.member_id = member_id
            return [SendJoin()]
        if error_code == UNKNOWN_MEMBER_ID:
            self.member_id = ""
            return [SendJoin()]
        if error_code == ILLEGAL_GENERATION:
            self._reset_generation(reset_member_id=False)
            return [SendJoin()]
        if error_code == FENCED_INSTANCE_ID:
            return self._fail(error_code, "JoinGroup")
        if error_code in _COORDINATOR_ERRORS:
            return [FindCoordinator(), SendJoin()]
        if error_code in (COORDINATOR_LOAD_IN_PROGRESS, REBALANCE_IN_PROGRESS):
            return [Backoff(self.retry_backoff_ms), SendJoin()]
        return self._fail(error_code, "JoinGroup")

    def on_sync_response(
        self, error_code: int, assigned: Sequence[TopicPartition] = ()
    ) -> list[Action]:
        """SyncGroup answered with this member's assignment (or an error)."""
        if self.state is not MemberState.SYNCING:
            return []
        if error_code == NONE:
            return self._install(frozenset(assigned))
        if error_code == REBALANCE_IN_PROGRESS:
            # Another member joined between our join and sync: join the new generation.
            self.state = MemberState.JOINING
            self.rejoin_needed = False
            return [SendJoin()]
        if error_code in (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID):
            actions = self._generation_error(error_code, "SyncGroup")
            if error_code != FENCED_INSTANCE_ID:
                return [*actions, *self.begin_join()]
            return actions
        if error_code in _COORDINATOR_ERRORS:
            self.state = MemberState.JOINING
            self.rejoin_needed = False
            return [FindCoordinator(), SendJoin()]
        if error_code == COORDINATOR_LOAD_IN_PROGRESS:
            self.state = MemberState.JOINING
            return [Backoff(self.retry_backoff_ms), SendJoin()]
        return self._fail(error_code, "SyncGroup")

    def _install(self, assigned: frozenset[TopicPartition]) -> list[Action]:
        self.state = MemberState.STABLE
        actions: list[Action] = []
        revoked = self.owned - assigned
        added = assigned - self.owned
        if revoked:
            # Only the cooperative protocol reaches here with owned partitions.
            actions.append(self._revoke(frozenset(revoked)))
        self.owned = assigned
        if added or not actions:
            # The listener hears about every generation's assignment, even an empty one.
            actions.append(Assign(frozenset(added)))
        if revoked and self.protocol is RebalanceProtocol.COOPERATIVE:
            # KIP-429 second phase: the leader withheld these from their new owner until we
            # give them up; rejoining now lets it hand them over.
            self.request_rejoin("cooperative rebalance: partitions revoked")
        return actions

    # -- stable ------------------------------------------------------------------------------

    def on_heartbeat_response(self, error_code: int) -> list[Action]:
        """A heartbeat (or a commit inside the generation) came back with ``error_code``."""
        if error_code == NONE:
            return []
        if self.state is MemberState.SYNCING and error_code == REBALANCE_IN_PROGRESS:
            # The generation we are syncing for is over: answer as the SyncGroup would.
            # Apache Kafka fails the pending SyncGroup at once; a broker that instead holds
            # it (Tansu: until the session timeout) would make the member miss the next join
            # phase, and two such members knock each other out of every generation after.
            return self.on_sync_response(REBALANCE_IN_PROGRESS)
        if self.state is not MemberState.STABLE:
            return []  # heartbeats are only meaningful in a generation; ignore stragglers
        if error_code == REBALANCE_IN_PROGRESS:
            self.request_rejoin("heartbeat: REBALANCE_IN_PROGRESS")
            return []
        if error_code in (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID):
            return self._generation_error(error_code, "Heartbeat")
        if error_code in _COORDINATOR_ERRORS:
            return [FindCoordinator()]
        if error_code == COORDINATOR_LOAD_IN_PROGRESS:
            return [Backoff(self.retry_backoff_ms)]
        return self._fail(error_code, "Heartbeat")

    def on_session_lost(self) -> list[Action]:
        """No successful heartbeat within the session timeout: the coordinator has surely
        evicted us, so our partitions may belong to someone else."""
        if self.state is not MemberState.STABLE:
            return []
        return self._generation_error(UNKNOWN_MEMBER_ID, "session timeout")

    def on_poll_timeout(self) -> list[Action]:
        """The application did not poll within max_poll_interval_ms: leave the group so its
        partitions go to members that make progress; the next poll rejoins."""
        if self.state in (
            MemberState.LEFT,
            MemberState.LEAVING,
            MemberState.FAILED,
            MemberState.UNJOINED,
        ):
            return []
        return self._begin_leave(poll_timeout=True)

    def _begin_leave(self, *, poll_timeout: bool) -> list[Action]:
        """Revoke (committing) what is owned, send LeaveGroup, and only then drop the
        generation (the final ``Left`` action, see ``finish_leave``): a listener committing
        in ``on_partitions_revoked`` needs the generation it still holds."""
        actions: list[Action] = []
        if self.owned:
            actions.append(self._revoke(self.owned))
            self.owned = frozenset()
        # A static member does not leave (the broker would not rebalance for it anyway); it
        # keeps its identity so a quick restart gets the same partitions back, and lets the
        # session timeout decide, like the Java client.
        if self.member_id and self.group_instance_id is None:
            actions.append(SendLeave(self.member_id, self.group_instance_id))
        self.rejoin_needed = False
        left = Left(reset_member_id=self.group_instance_id is None, poll_timeout=poll_timeout)
        if not actions:
            self.finish_leave(left)
            return []
        self.state = MemberState.LEAVING
        actions.append(left)
        return actions

    def finish_leave(self, left: Left) -> None:
        """The leave's revocation and LeaveGroup are done (or abandoned)."""
        if self.state is MemberState.FAILED:
            return
        self._reset_generation(reset_member_id=left.reset_member_id)
        self.state = MemberState.LEFT
        self.rejoin_needed = False
        self.left_on_poll_timeout = left.poll_timeout

    def on_poll(self) -> None:
        """The application polled: a member that left on poll timeout rejoins, and one that
        the group's ACL refused tries again (``failure`` stays until it gets in)."""
        if self.state is MemberState.LEFT and self.left_on_poll_timeout:
            self.state = MemberState.UNJOINED
            self.left_on_poll_timeout = False
            self.request_rejoin("application resumed polling")
        elif self.retry_on_poll:
            # Its partitions were lost when it failed; the generation went with them.
            self._reset_generation(reset_member_id=False)
            self.state = MemberState.UNJOINED
            self.request_rejoin("application polled after GROUP_AUTHORIZATION_FAILED")

    def on_subscription_change(self) -> None:
        self.request_rejoin("subscription changed")

    def leave(self) -> list[Action]:
        """close()/unsubscribe(): revoke owned partitions (committing them), then leave."""
        if self.state in (MemberState.FAILED, MemberState.LEAVING):
            return []  # LEAVING: the leave under way finishes the job
        return self._begin_leave(poll_timeout=False)

    def reset(self) -> None:
        """Back to unjoined after unsubscribe (a later subscribe joins afresh)."""
        self.state = MemberState.UNJOINED
        self.rejoin_needed = True
        self.rejoin_reason = "subscribed"
        self.left_on_poll_timeout = False
        self.failure = None


__all__ = [
    "Action",
    "Assign",
    "Backoff",
    "Fail",
    "FindCoordinator",
    "GroupMembership",
    "Left",
    "Lose",
    "MemberState",
    "Revoke",
    "SendJoin",
    "SendLeave",
    "SendSync",
    "error_name",
]
