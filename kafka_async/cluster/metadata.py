"""An immutable snapshot of cluster metadata, and how a Metadata response updates it (pure).

``ClusterMetadata.merge(response, requested_topics)`` returns a new snapshot; nothing is
mutated, so a task holding a snapshot sees a consistent picture while another task installs
the next one.

Merge rules:

* brokers, controller and cluster id are replaced by the response's (it lists them all);
* a topic in the response replaces the stored one, except that a partition whose stored
  leader epoch is newer than the response's keeps the stored state: a broker with stale
  metadata must never move us back to an older leader (KIP-320). A changed topic id means
  the topic was deleted and recreated, so then epochs start over;
* a topic answered with UNKNOWN_TOPIC_OR_PARTITION is dropped and listed in
  ``unknown_topics``; TOPIC_AUTHORIZATION_FAILED lands in ``unauthorized_topics`` and
  INVALID_TOPIC_EXCEPTION in ``invalid_topics``; other topic errors (LEADER_NOT_AVAILABLE
  while a new topic's leaders are elected) keep the topic with its ``error_code`` set;
* when all topics were requested (``requested_topics=None``), stored topics missing from
  the response are dropped; otherwise topics that were not requested are left as they were.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from .. import errors as E
from ..protocol.apis.metadata import MetadataResponse, MetadataResponseTopic
from ..structs import TopicPartition

UNKNOWN_TOPIC_OR_PARTITION = E.UnknownTopicOrPartitionError.code
LEADER_NOT_AVAILABLE = E.LeaderNotAvailableError.code
INVALID_TOPIC_EXCEPTION = E.InvalidTopicError.code
TOPIC_AUTHORIZATION_FAILED = E.TopicAuthorizationFailedError.code

_EMPTY: Mapping[Any, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class BrokerInfo:
    """A broker's node id and address."""

    node_id: int
    host: str
    port: int
    rack: str | None = None

    @property
    def address(self) -> tuple[str, int]:
        return self.host, self.port


@dataclass(frozen=True, slots=True)
class PartitionInfo:
    """One partition's leadership state. ``leader`` is -1 when there is none."""

    topic: str
    partition: int
    leader: int
    leader_epoch: int = -1
    replicas: tuple[int, ...] = ()
    isr: tuple[int, ...] = ()
    offline_replicas: tuple[int, ...] = ()
    error_code: int = 0

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)


@dataclass(frozen=True, slots=True)
class TopicInfo:
    """A topic's id, internal flag, partitions and (non-fatal) error code."""

    name: str
    topic_id: uuid.UUID | None = None
    is_internal: bool = False
    partitions: Mapping[int, PartitionInfo] = field(default_factory=lambda: _EMPTY)
    error_code: int = 0


@dataclass(frozen=True, slots=True)
class ClusterMetadata:
    """What the client knows about the cluster at one moment. Build new ones with merge()."""

    brokers: Mapping[int, BrokerInfo] = field(default_factory=lambda: _EMPTY)
    controller_id: int = -1
    cluster_id: str | None = None
    topics: Mapping[str, TopicInfo] = field(default_factory=lambda: _EMPTY)
    unknown_topics: frozenset[str] = frozenset()
    unauthorized_topics: frozenset[str] = frozenset()
    invalid_topics: frozenset[str] = frozenset()
    #: Counts merges; a newer snapshot has a larger generation.
    generation: int = 0

    # -- queries ---------------------------------------------------------------------------

    def broker(self, node_id: int) -> BrokerInfo | None:
        return self.brokers.get(node_id)

    def topic(self, name: str) -> TopicInfo | None:
        return self.topics.get(name)

    def partition(self, tp: TopicPartition) -> PartitionInfo | None:
        t = self.topics.get(tp.topic)
        return None if t is None else t.partitions.get(tp.partition)

    def leader_for(self, tp: TopicPartition) -> int | None:
        """The leader's node id, or None when unknown or there is no leader now."""
        p = self.partition(tp)
        if p is None or p.leader < 0:
            return None
        return p.leader

    def leader_epoch_for(self, tp: TopicPartition) -> int:
        """The known leader epoch (-1 when unknown)."""
        p = self.partition(tp)
        return -1 if p is None else p.leader_epoch

    def partitions_for(self, topic: str) -> frozenset[int] | None:
        """All partition ids of ``topic``, or None when the topic is not known."""
        t = self.topics.get(topic)
        return None if t is None else frozenset(t.partitions)

    def available_partitions_for(self, topic: str) -> frozenset[int]:
        """Partitions whose leader is a known broker (those a producer can send to now)."""
        t = self.topics.get(topic)
        if t is None:
            return frozenset()
        return frozenset(
            p.partition for p in t.partitions.values() if p.leader >= 0 and p.leader in self.brokers
        )

    def partitions_for_broker(self, node_id: int) -> frozenset[TopicPartition]:
        """Every partition ``node_id`` leads."""
        return frozenset(
            TopicPartition(t.name, p.partition)
            for t in self.topics.values()
            for p in t.partitions.values()
            if p.leader == node_id
        )

    def topic_id(self, topic: str) -> uuid.UUID | None:
        t = self.topics.get(topic)
        return None if t is None else t.topic_id

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        for t in self.topics.values():
            if t.topic_id == topic_id:
                return t.name
        return None

    # -- updates ---------------------------------------------------------------------------

    def with_brokers(self, brokers: Iterable[BrokerInfo]) -> ClusterMetadata:
        """A copy with these brokers added or updated (e.g. a coordinator's address)."""
        merged = dict(self.brokers)
        for b in brokers:
            merged[b.node_id] = b
        return ClusterMetadata(
            brokers=MappingProxyType(merged),
            controller_id=self.controller_id,
            cluster_id=self.cluster_id,
            topics=self.topics,
            unknown_topics=self.unknown_topics,
            unauthorized_topics=self.unauthorized_topics,
            invalid_topics=self.invalid_topics,
            generation=self.generation + 1,
        )

    def with_new_leaders(
        self,
        leaders: Iterable[tuple[TopicPartition, int, int]],
        brokers: Iterable[BrokerInfo] = (),
    ) -> tuple[ClusterMetadata, frozenset[TopicPartition]]:
        """KIP-951: a copy with the leaders a NOT_LEADER_OR_FOLLOWER answer named.

        ``leaders`` are ``(partition, leader id, leader epoch)``; one is taken only when its
        epoch is newer than the known one and its broker's address is known (here or in
        ``brokers``, the answer's node endpoints). Returns the copy (``self`` when nothing
        changed) and the partitions whose leader it moved."""
        merged_brokers = dict(self.brokers)
        for b in brokers:
            merged_brokers[b.node_id] = b
        topics = dict(self.topics)
        moved: set[TopicPartition] = set()
        for tp, leader, epoch in leaders:
            t = topics.get(tp.topic)
            p = None if t is None else t.partitions.get(tp.partition)
            if t is None or p is None or leader < 0 or leader not in merged_brokers:
                continue
            if epoch <= p.leader_epoch:
                continue  # not newer than what we know
            parts = dict(t.partitions)
            parts[tp.partition] = replace(p, leader=leader, leader_epoch=epoch)
            topics[tp.topic] = replace(t, partitions=MappingProxyType(parts))
            moved.add(tp)
        if not moved:
            return self, frozenset()
        return (
            ClusterMetadata(
                brokers=MappingProxyType(merged_brokers),
                controller_id=self.controller_id,
                cluster_id=self.cluster_id,
                topics=MappingProxyType(topics),
                unknown_topics=self.unknown_topics,
                unauthorized_topics=self.unauthorized_topics,
                invalid_topics=self.invalid_topics,
                generation=self.generation + 1,
            ),
            frozenset(moved),
        )

    def merge(
        self, response: MetadataResponse, requested_topics: Collection[str] | None = None
    ) -> ClusterMetadata:
        """The snapshot after a Metadata response to a request for ``requested_topics``.

        ``response`` is a decoded Metadata response (any version). ``None`` for
        ``requested_topics`` means all topics were requested.
        """
        brokers = {
            b.node_id: BrokerInfo(b.node_id, b.host, b.port, b.rack) for b in response.brokers
        }
        topics = dict(self.topics) if requested_topics is not None else {}
        unknown = set(self.unknown_topics)
        unauthorized = set(self.unauthorized_topics)
        invalid = set(self.invalid_topics)
        seen: set[str] = set()
        for t in response.topics:
            name = t.name
            if name is None:
                continue  # answered by topic id only; we always ask by name
            seen.add(name)
            code = t.error_code
            unknown.discard(name)
            unauthorized.discard(name)
            invalid.discard(name)
            if code == UNKNOWN_TOPIC_OR_PARTITION:
                topics.pop(name, None)
                unknown.add(name)
                continue
            if code == TOPIC_AUTHORIZATION_FAILED:
                topics.pop(name, None)
                unauthorized.add(name)
                continue
            if code == INVALID_TOPIC_EXCEPTION:
                topics.pop(name, None)
                invalid.add(name)
                continue
            topics[name] = _merge_topic(self.topics.get(name), name, t)
        if requested_topics is None:
            # Topics the broker no longer lists are gone.
            unknown -= seen
        else:
            for name in requested_topics:
                if name not in seen and name not in topics:
                    unknown.add(name)
        return ClusterMetadata(
            brokers=MappingProxyType(brokers),
            controller_id=response.controller_id,
            cluster_id=response.cluster_id,
            topics=MappingProxyType(topics),
            unknown_topics=frozenset(unknown),
            unauthorized_topics=frozenset(unauthorized),
            invalid_topics=frozenset(invalid),
            generation=self.generation + 1,
        )

    def __repr__(self) -> str:
        return (
            f"ClusterMetadata(generation={self.generation}, cluster_id={self.cluster_id!r}, "
            f"controller={self.controller_id}, brokers={sorted(self.brokers)}, "
            f"topics={sorted(self.topics)})"
        )


def _merge_topic(old: TopicInfo | None, name: str, t: MetadataResponseTopic) -> TopicInfo:
    topic_id = None if t.topic_id.int == 0 else t.topic_id
    recreated = (
        old is not None
        and old.topic_id is not None
        and topic_id is not None
        and old.topic_id != topic_id
    )
    old_parts = _EMPTY if old is None or recreated else old.partitions
    parts: dict[int, PartitionInfo] = {}
    for p in t.partitions:
        new = PartitionInfo(
            topic=name,
            partition=p.partition_index,
            leader=p.leader_id,
            leader_epoch=p.leader_epoch,
            replicas=tuple(p.replica_nodes),
            isr=tuple(p.isr_nodes),
            offline_replicas=tuple(p.offline_replicas),
            error_code=p.error_code,
        )
        prev = old_parts.get(p.partition_index)
        if prev is not None and new.leader_epoch >= 0 and prev.leader_epoch > new.leader_epoch:
            # This broker's view is older than one we already had: keep ours.
            new = prev
        parts[new.partition] = new
    if not parts and t.error_code == LEADER_NOT_AVAILABLE and old is not None and not recreated:
        # A transient answer without partitions; keep what we knew until a real one comes.
        parts = dict(old.partitions)
    return TopicInfo(
        name=name,
        topic_id=topic_id if topic_id is not None else (None if old is None else old.topic_id),
        is_internal=t.is_internal,
        partitions=MappingProxyType(parts),
        error_code=t.error_code,
    )
