"""Partition assignors: who in a consumer group reads which partition.

The group leader runs the assignor named by the group's chosen protocol on every member's
``Subscription`` and sends each member its ``Assignment``. The names are the Java client's
(``range``, ``roundrobin``, ``sticky``, ``cooperative-sticky``) because the broker picks the
protocol by name among those every member offers, which is what makes a group of our
consumers and Java/librdkafka/aiokafka consumers agree.

All assignors are pure functions of (partition counts, member subscriptions). Members are
ordered by ``group_instance_id`` when they have one, then by member id, as Java does, so a
static member keeps its partitions across restarts under ``range`` and ``roundrobin``.

Rack awareness (KIP-881): a member's ``client_rack`` travels in its subscription (v3), and
the leader knows the racks of each partition's replicas from the metadata. ``range`` and
``cooperative-sticky`` (and ``sticky``) then prefer giving a member partitions with a replica
in its rack, so it can fetch from that replica (KIP-392) instead of across racks, as the Java
client's assignors do since 3.5: balance first (loads stay what they would be without racks),
rack alignment second, stickiness third. It applies only when it can matter: some member has
a rack, some partition's replicas have racks, and some partition lacks a replica in some
member's rack (otherwise the rack-less assignment is returned unchanged).

Rebalance protocols:

* ``EAGER`` (range, roundrobin, sticky): every member gives up everything before rejoining.
* ``COOPERATIVE`` (cooperative-sticky, KIP-429): members keep their partitions through a
  rebalance. The leader withholds any partition that changes owner; its old owner sees it
  missing from its assignment, revokes just that one and rejoins, and the second rebalance
  hands it to the new owner. No partition is ever owned by two members at once.
"""

from __future__ import annotations

import abc
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import ClassVar

from ...errors import ConfigError, ProtocolDecodeError
from ...protocol.consumer_protocol import (
    Assignment,
    CooperativeStickyUserData,
    StickyUserData,
    Subscription,
)
from ...structs import TopicPartition


class RebalanceProtocol(Enum):
    """How members hand partitions over during a rebalance."""

    EAGER = "eager"
    COOPERATIVE = "cooperative"


@dataclass(frozen=True)
class MemberInfo:
    """A member as the leader sees it: id, static instance id, decoded subscription."""

    member_id: str
    subscription: Subscription
    group_instance_id: str | None = None

    @property
    def sort_key(self) -> tuple[int, str, str]:
        # Static members first, ordered by instance id, as Java's MemberInfo compares.
        if self.group_instance_id is not None:
            return (0, self.group_instance_id, self.member_id)
        return (1, "", self.member_id)


class Assignor(abc.ABC):
    """Base class: a named, pure partition assignment strategy."""

    #: The protocol name sent in JoinGroup; shared with the Java client.
    name: ClassVar[str] = ""
    #: Rebalance protocols this assignor supports, preferred first.
    protocols: ClassVar[tuple[RebalanceProtocol, ...]] = (RebalanceProtocol.EAGER,)

    def subscription_user_data(
        self, owned: Sequence[TopicPartition], generation: int
    ) -> bytes | None:
        """Assignor-specific bytes to put in this member's subscription."""
        return None

    @abc.abstractmethod
    def assign(
        self, partitions_per_topic: Mapping[str, int], members: Sequence[MemberInfo]
    ) -> dict[str, Assignment]:
        """Map every member id to its assignment (every member gets one, maybe empty)."""

    def assign_with_racks(
        self,
        partitions_per_topic: Mapping[str, int],
        members: Sequence[MemberInfo],
        partition_racks: Mapping[TopicPartition, frozenset[str]],
    ) -> dict[str, Assignment]:
        """:meth:`assign` knowing the racks of each partition's replicas (KIP-881); members'
        racks are in their subscriptions (``rack_id``). This default ignores racks."""
        return self.assign(partitions_per_topic, members)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


def use_racks(
    members: Sequence[MemberInfo], partition_racks: Mapping[TopicPartition, frozenset[str]]
) -> bool:
    """Rack-aware assignment can change something: a member has a rack, a partition's
    replicas have racks, and some partition has no replica in some member's rack."""
    member_racks = {m.subscription.rack_id for m in members} - {None}
    if not member_racks or not any(partition_racks.values()):
        return False
    return any(not member_racks <= racks for racks in partition_racks.values())


def _rack_match(
    member: MemberInfo, tp: TopicPartition, partition_racks: Mapping[TopicPartition, frozenset[str]]
) -> bool:
    """The member can read ``tp`` in its own rack (a member without a rack matches all)."""
    rack = member.subscription.rack_id
    return rack is None or rack in partition_racks.get(tp, frozenset())


def _sorted_members(members: Sequence[MemberInfo]) -> list[MemberInfo]:
    return sorted(members, key=lambda m: m.sort_key)


def _as_assignments(
    members: Sequence[MemberInfo], result: Mapping[str, list[TopicPartition]]
) -> dict[str, Assignment]:
    return {m.member_id: Assignment(tuple(sorted(result.get(m.member_id, ())))) for m in members}


def _range_topic(
    topic: str,
    count: int,
    subscribers: Sequence[MemberInfo],
    partition_racks: Mapping[TopicPartition, frozenset[str]],
    racks: bool,
) -> list[tuple[str, list[TopicPartition]]]:
    """One topic's range shares: ``count // len(subscribers)`` each, one more for the first
    ``count % len(subscribers)`` members to reach it; rack-matching partitions first."""
    per_member, extra = divmod(count, len(subscribers))
    unassigned = [TopicPartition(topic, p) for p in range(count)]
    got: dict[str, list[TopicPartition]] = {m.member_id: [] for m in subscribers}
    passes = (True, False) if racks else (False,)
    for matching in passes:
        for m in subscribers:
            mine = got[m.member_id]
            room = per_member + (1 if extra > 0 else 0) - len(mine)
            if room <= 0:
                continue
            take = [tp for tp in unassigned if not matching or _rack_match(m, tp, partition_racks)][
                :room
            ]
            for tp in take:
                unassigned.remove(tp)
            mine.extend(take)
            if take and len(mine) == per_member + 1:
                extra -= 1
    for tp in unassigned:  # not reached: the shares add up to count
        min(got.values(), key=len).append(tp)
    return [(mid, sorted(tps)) for mid, tps in got.items()]


class RangeAssignor(Assignor):
    """Per topic, consecutive ranges of partitions; the first members get one extra.

    With racks (KIP-881) each member's share stays what it is without racks (``n // k``
    partitions, one more for the first ``n % k`` to reach it), but the shares are filled
    in two passes over the members in order: first with the lowest unassigned partitions
    that have a replica in the member's rack, then with the lowest left over."""

    name = "range"

    def assign(
        self, partitions_per_topic: Mapping[str, int], members: Sequence[MemberInfo]
    ) -> dict[str, Assignment]:
        return self.assign_with_racks(partitions_per_topic, members, {})

    def assign_with_racks(
        self,
        partitions_per_topic: Mapping[str, int],
        members: Sequence[MemberInfo],
        partition_racks: Mapping[TopicPartition, frozenset[str]],
    ) -> dict[str, Assignment]:
        result: dict[str, list[TopicPartition]] = defaultdict(list)
        ordered = _sorted_members(members)
        racks = use_racks(members, partition_racks)
        for topic in sorted(partitions_per_topic):
            count = partitions_per_topic[topic]
            subscribers = [m for m in ordered if topic in m.subscription.topics]
            if not subscribers or count <= 0:
                continue
            for mid, tps in _range_topic(topic, count, subscribers, partition_racks, racks):
                result[mid].extend(tps)
        return _as_assignments(members, result)


class RoundRobinAssignor(Assignor):
    """All partitions sorted, dealt out in turn to members subscribed to their topic."""

    name = "roundrobin"

    def assign(
        self, partitions_per_topic: Mapping[str, int], members: Sequence[MemberInfo]
    ) -> dict[str, Assignment]:
        result: dict[str, list[TopicPartition]] = defaultdict(list)
        ordered = _sorted_members(members)
        if not ordered:
            return {}
        cursor = 0
        for topic in sorted(partitions_per_topic):
            if not any(topic in m.subscription.topics for m in ordered):
                continue
            for p in range(partitions_per_topic[topic]):
                # Advance the shared cursor to the next member that reads this topic.
                while topic not in ordered[cursor % len(ordered)].subscription.topics:
                    cursor += 1
                result[ordered[cursor % len(ordered)].member_id].append(TopicPartition(topic, p))
                cursor += 1
        return _as_assignments(members, result)


def sticky_assign(
    partitions_per_topic: Mapping[str, int],
    members: Sequence[MemberInfo],
    previous: Mapping[str, tuple[int, Sequence[TopicPartition]]],
    partition_racks: Mapping[TopicPartition, frozenset[str]] | None = None,
) -> dict[str, list[TopicPartition]]:
    """A balanced assignment that moves as few partitions as possible.

    With ``partition_racks`` (KIP-881, see :func:`use_racks`) a member keeps only the owned
    partitions with a replica in its rack; the others join the unowned ones, each given to
    the least loaded candidate in its rack while that one is below the balanced load, else
    back to its previous owner while below it, else to the least loaded candidate; and the
    balancing moves give up out-of-rack partitions first and hand a member partitions in its
    rack first. Balance is never traded for racks.

    ``previous`` maps member id to (generation, partitions it owned). Steps:

    1. Every member keeps the partitions it owned that still exist and that it still
       subscribes to. When two members claim one partition, the higher generation wins
       (the other claim is stale).
    2. Each unowned partition goes to the least loaded member that subscribes to it,
       partitions with the fewest candidates first.
    3. While some member has at least two partitions more than another member that could
       take one of them, one partition moves. Each move strictly lowers the sum of squared
       loads, so this ends; when all members subscribe to the same topics it ends with loads
       within one of each other, having moved only the excess of over-full members.
    """
    ordered = _sorted_members(members)
    ids = [m.member_id for m in ordered]
    by_id = {m.member_id: m for m in ordered}
    subs = {m.member_id: set(m.subscription.topics) for m in ordered}
    all_partitions = [
        TopicPartition(t, p)
        for t in sorted(partitions_per_topic)
        if any(t in s for s in subs.values())
        for p in range(partitions_per_topic[t])
    ]
    racks = partition_racks or {}
    rack_aware = use_racks(members, racks)

    def local(mid: str, tp: TopicPartition) -> bool:
        return not rack_aware or _rack_match(by_id[mid], tp, racks)

    valid = set(all_partitions)
    owner: dict[TopicPartition, str] = {}
    owner_gen: dict[TopicPartition, int] = {}
    for mid in ids:
        gen, owned = previous.get(mid, (-1, ()))
        for tp in owned:
            if tp not in valid or tp.topic not in subs[mid]:
                continue
            if tp in owner and owner_gen[tp] >= gen:
                continue
            owner[tp] = mid
            owner_gen[tp] = gen
    assigned: dict[str, list[TopicPartition]] = {mid: [] for mid in ids}
    # Rack-aware: an owned partition outside its owner's rack is placed again below, with
    # its owner remembered as the fallback.
    previous_owner = {tp: mid for tp, mid in owner.items() if not local(mid, tp)}
    for tp, mid in owner.items():
        if tp not in previous_owner:
            assigned[mid].append(tp)

    unowned = [tp for tp in all_partitions if tp not in owner or tp in previous_owner]
    candidates = {t: [mid for mid in ids if t in subs[mid]] for t in partitions_per_topic}
    unowned.sort(key=lambda tp: (len(candidates[tp.topic]), tp))
    order = {mid: i for i, mid in enumerate(ids)}
    ceiling = -(-len(all_partitions) // len(ids)) if ids else 0
    for tp in unowned:
        cands = candidates[tp.topic]
        if not cands:
            continue
        best = min(cands, key=lambda mid: (len(assigned[mid]), order[mid]))
        if rack_aware:
            in_rack = [mid for mid in cands if local(mid, tp) and len(assigned[mid]) < ceiling]
            was = previous_owner.get(tp)
            if in_rack:
                best = min(in_rack, key=lambda mid: (len(assigned[mid]), order[mid]))
            elif was is not None and len(assigned[was]) < ceiling:
                best = was
        assigned[best].append(tp)

    _rebalance(assigned, subs, order, local if rack_aware else None)
    return assigned


def _rebalance(
    assigned: dict[str, list[TopicPartition]],
    subs: Mapping[str, set[str]],
    order: Mapping[str, int],
    local: Callable[[str, TopicPartition], bool] | None = None,
) -> None:
    """Move partitions from over- to under-loaded members until no useful move is left.
    With ``local`` (rack-aware) a member gives up partitions outside its rack first, and
    a member takes partitions in its rack first."""
    same_subscriptions = len({frozenset(s) for s in subs.values()}) <= 1
    if same_subscriptions and assigned:
        # Fast path: any partition may go anywhere. The quotas are floor or ceil of the
        # average; the fullest members get the ceil slots, so only true excess moves.
        total = sum(len(ps) for ps in assigned.values())
        floor, ceil_slots = divmod(total, len(assigned))
        by_load = sorted(assigned, key=lambda mid: (-len(assigned[mid]), order[mid]))
        quota = {mid: floor + (1 if i < ceil_slots else 0) for i, mid in enumerate(by_load)}
        pool: list[TopicPartition] = []
        for mid in by_load:
            excess = len(assigned[mid]) - quota[mid]
            if excess > 0:
                # Kept first: partitions in the member's rack, then the lowest.
                away = set() if local is None else {t for t in assigned[mid] if not local(mid, t)}
                keep = sorted(assigned[mid], key=lambda tp: (tp in away, tp))
                pool.extend(keep[-excess:])
                assigned[mid] = keep[:-excess]
        pool.sort(reverse=True)
        for mid in by_load:
            while len(assigned[mid]) < quota[mid] and pool:
                pick = len(pool) - 1
                if local is not None:
                    pick = next(
                        (i for i in range(len(pool) - 1, -1, -1) if local(mid, pool[i])), pick
                    )
                assigned[mid].append(pool.pop(pick))
        return
    while True:
        moved = False
        by_load = sorted(assigned, key=lambda mid: (-len(assigned[mid]), order[mid]))
        for hi in by_load:
            for lo in reversed(by_load):
                if len(assigned[hi]) - len(assigned[lo]) < 2:
                    break
                movable = [tp for tp in assigned[hi] if tp.topic in subs[lo]]
                if movable:
                    if local is None:
                        tp = max(movable)
                    else:
                        tp = max(movable, key=lambda t: (local(lo, t), not local(hi, t), t))
                    assigned[hi].remove(tp)
                    assigned[lo].append(tp)
                    moved = True
                    break
            if moved:
                break
        if not moved:
            return


class StickyAssignor(Assignor):
    """Balanced like roundrobin, but members keep what they owned (eager protocol)."""

    name = "sticky"

    def subscription_user_data(
        self, owned: Sequence[TopicPartition], generation: int
    ) -> bytes | None:
        # Java's sticky assignor also sends its previous assignment in user data, for group
        # members whose subscription version predates owned_partitions.
        return StickyUserData(tuple(owned), generation).encode()

    @staticmethod
    def _previous(m: MemberInfo) -> tuple[int, Sequence[TopicPartition]]:
        sub = m.subscription
        if sub.version >= 1 and (sub.owned_partitions or sub.generation_id >= 0):
            return sub.generation_id, sub.owned_partitions
        if sub.user_data:
            try:
                data = StickyUserData.decode(sub.user_data)
            except ProtocolDecodeError:
                return -1, ()
            return (data.generation if data.generation is not None else -1), (
                data.previous_assignment
            )
        return -1, sub.owned_partitions

    def assign(
        self, partitions_per_topic: Mapping[str, int], members: Sequence[MemberInfo]
    ) -> dict[str, Assignment]:
        return self.assign_with_racks(partitions_per_topic, members, {})

    def assign_with_racks(
        self,
        partitions_per_topic: Mapping[str, int],
        members: Sequence[MemberInfo],
        partition_racks: Mapping[TopicPartition, frozenset[str]],
    ) -> dict[str, Assignment]:
        previous = {m.member_id: self._previous(m) for m in members}
        result = sticky_assign(partitions_per_topic, members, previous, partition_racks)
        return _as_assignments(members, result)


class CooperativeStickyAssignor(Assignor):
    """Sticky, with incremental (KIP-429) handover: only moved partitions are revoked."""

    name = "cooperative-sticky"
    protocols = (RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER)

    def subscription_user_data(
        self, owned: Sequence[TopicPartition], generation: int
    ) -> bytes | None:
        return CooperativeStickyUserData(generation).encode()

    @staticmethod
    def _previous(m: MemberInfo) -> tuple[int, Sequence[TopicPartition]]:
        sub = m.subscription
        generation = sub.generation_id
        if generation < 0 and sub.user_data:
            try:
                generation = CooperativeStickyUserData.decode(sub.user_data).generation
            except ProtocolDecodeError:
                generation = -1
        return generation, sub.owned_partitions

    def assign(
        self, partitions_per_topic: Mapping[str, int], members: Sequence[MemberInfo]
    ) -> dict[str, Assignment]:
        return self.assign_with_racks(partitions_per_topic, members, {})

    def assign_with_racks(
        self,
        partitions_per_topic: Mapping[str, int],
        members: Sequence[MemberInfo],
        partition_racks: Mapping[TopicPartition, frozenset[str]],
    ) -> dict[str, Assignment]:
        previous = {m.member_id: self._previous(m) for m in members}
        target = sticky_assign(partitions_per_topic, members, previous, partition_racks)
        return _as_assignments(members, withhold_moving(target, previous))


def withhold_moving(
    target: Mapping[str, list[TopicPartition]],
    previous: Mapping[str, tuple[int, Sequence[TopicPartition]]],
) -> dict[str, list[TopicPartition]]:
    """The first phase of a cooperative rebalance.

    A partition whose target owner differs from a member that currently owns it is left
    out of everyone's assignment: the current owner revokes it (it is missing from its new
    assignment) and rejoins, and the next rebalance assigns it to its target owner.
    """
    owners: dict[TopicPartition, set[str]] = defaultdict(set)
    for mid, (_, owned) in previous.items():
        for tp in owned:
            owners[tp].add(mid)
    return {
        mid: [tp for tp in tps if not (owners.get(tp, set()) - {mid})]
        for mid, tps in target.items()
    }


ASSIGNORS: dict[str, type[Assignor]] = {
    cls.name: cls
    for cls in (RangeAssignor, RoundRobinAssignor, StickyAssignor, CooperativeStickyAssignor)
}


def resolve_assignors(strategy: object) -> tuple[Assignor, ...]:
    """Turn ``partition_assignment_strategy`` (names, classes or instances) into assignors.

    Accepts one item or a sequence; each item is a protocol name (``"range"``), an
    ``Assignor`` subclass or an ``Assignor`` instance. Order is preference order.
    """
    items = [strategy] if isinstance(strategy, (str, type, Assignor)) else strategy
    if not isinstance(items, (list, tuple)) or not items:
        raise ConfigError(
            "partition_assignment_strategy must name at least one assignor, "
            f"one of {sorted(ASSIGNORS)}"
        )
    out: list[Assignor] = []
    for item in items:
        if isinstance(item, Assignor):
            out.append(item)
        elif isinstance(item, type) and issubclass(item, Assignor):
            out.append(item())
        elif isinstance(item, str) and item in ASSIGNORS:
            out.append(ASSIGNORS[item]())
        else:
            raise ConfigError(
                f"unknown partition assignment strategy {item!r}; use one of {sorted(ASSIGNORS)} "
                "or an Assignor"
            )
    names = [a.name for a in out]
    if len(set(names)) != len(names):
        raise ConfigError(f"partition_assignment_strategy names an assignor twice: {names}")
    return tuple(out)


def rebalance_protocol(assignors: Sequence[Assignor]) -> RebalanceProtocol:
    """The protocol a member uses: cooperative only if every assignor it offers supports it."""
    if all(RebalanceProtocol.COOPERATIVE in a.protocols for a in assignors):
        return RebalanceProtocol.COOPERATIVE
    return RebalanceProtocol.EAGER


__all__ = [
    "ASSIGNORS",
    "Assignor",
    "CooperativeStickyAssignor",
    "MemberInfo",
    "RangeAssignor",
    "RebalanceProtocol",
    "RoundRobinAssignor",
    "StickyAssignor",
    "rebalance_protocol",
    "resolve_assignors",
    "sticky_assign",
    "use_racks",
    "withhold_moving",
]
