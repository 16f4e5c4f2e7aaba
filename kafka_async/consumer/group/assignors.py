"""Partition assignors: who in a consumer group reads which partition.

The group leader runs the assignor named by the group's chosen protocol on every member's
``Subscription`` and sends each member its ``Assignment``. The names are the Java client's
(``range``, ``roundrobin``, ``sticky``, ``cooperative-sticky``) because the broker picks the
protocol by name among those every member offers, which is what makes a group of our
consumers and Java/librdkafka/aiokafka consumers agree.

All assignors are pure functions of (partition counts, member subscriptions). Members are
ordered by ``group_instance_id`` when they have one, then by member id, as Java does, so a
static member keeps its partitions across restarts under ``range`` and ``roundrobin``.

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
from collections.abc import Mapping, Sequence
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

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


def _sorted_members(members: Sequence[MemberInfo]) -> list[MemberInfo]:
    return sorted(members, key=lambda m: m.sort_key)


def _as_assignments(
    members: Sequence[MemberInfo], result: Mapping[str, list[TopicPartition]]
) -> dict[str, Assignment]:
    return {m.member_id: Assignment(tuple(sorted(result.get(m.member_id, ())))) for m in members}


class RangeAssignor(Assignor):
    """Per topic, consecutive ranges of partitions; the first members get one extra."""

    name = "range"

    def assign(
        self, partitions_per_topic: Mapping[str, int], members: Sequence[MemberInfo]
    ) -> dict[str, Assignment]:
        result: dict[str, list[TopicPartition]] = defaultdict(list)
        ordered = _sorted_members(members)
        for topic in sorted(partitions_per_topic):
            count = partitions_per_topic[topic]
            subscribers = [m for m in ordered if topic in m.subscription.topics]
            if not subscribers or count <= 0:
                continue
            per_member, extra = divmod(count, len(subscribers))
            for i, m in enumerate(subscribers):
                start = per_member * i + min(i, extra)
                length = per_member + (1 if i < extra else 0)
                result[m.member_id].extend(
                    TopicPartition(topic, p) for p in range(start, start + length)
                )
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
) -> dict[str, list[TopicPartition]]:
    """A balanced assignment that moves as few partitions as possible.

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
    subs = {m.member_id: set(m.subscription.topics) for m in ordered}
    all_partitions = [
        TopicPartition(t, p)
        for t in sorted(partitions_per_topic)
        if any(t in s for s in subs.values())
        for p in range(partitions_per_topic[t])
    ]
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
    for tp, mid in owner.items():
        assigned[mid].append(tp)

    unowned = [tp for tp in all_partitions if tp not in owner]
    candidates = {t: [mid for mid in ids if t in subs[mid]] for t in partitions_per_topic}
    unowned.sort(key=lambda tp: (len(candidates[tp.topic]), tp))
    order = {mid: i for i, mid in enumerate(ids)}
    for tp in unowned:
        cands = candidates[tp.topic]
        if not cands:
            continue
        best = min(cands, key=lambda mid: (len(assigned[mid]), order[mid]))
        assigned[best].append(tp)

    _rebalance(assigned, subs, order)
    return assigned


def _rebalance(
    assigned: dict[str, list[TopicPartition]],
    subs: Mapping[str, set[str]],
    order: Mapping[str, int],
) -> None:
    """Move partitions from over- to under-loaded members until no useful move is left."""
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
                keep = sorted(assigned[mid])
                pool.extend(keep[-excess:])
                assigned[mid] = keep[:-excess]
        pool.sort(reverse=True)
        for mid in by_load:
            while len(assigned[mid]) < quota[mid] and pool:
                assigned[mid].append(pool.pop())
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
                    tp = max(movable)
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
        previous = {m.member_id: self._previous(m) for m in members}
        result = sticky_assign(partitions_per_topic, members, previous)
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
        previous = {m.member_id: self._previous(m) for m in members}
        target = sticky_assign(partitions_per_topic, members, previous)
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
    "withhold_moving",
]
