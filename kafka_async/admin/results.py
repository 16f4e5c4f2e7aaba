"""Values returned *by* the admin client.

Batch operations return a :class:`ResultMap`: a read-only mapping from each item asked about
(topic name, group id, :class:`~kafka_async.structs.TopicPartition`, config resource, ACL)
to a frozen result dataclass whose ``error`` is None on success or the typed
:class:`~kafka_async.errors.KafkaError` for that item alone. One failed topic never hides
the others' results; call :meth:`ResultMap.raise_first` (or pass ``raise_on_error=True``)
to turn the first failure into an exception.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Generic, Protocol, TypeVar

from ..errors import KafkaError
from ..structs import OffsetAndMetadata, TopicPartition
from .types import (
    AclBinding,
    AclBindingFilter,
    ConfigResource,
    ConfigSource,
    ConfigType,
)

__all__ = [
    "AclCreationResult",
    "AclDeletionResult",
    "AlterConfigsResult",
    "BrokerDescription",
    "ClusterDescription",
    "ConfigDescription",
    "ConfigEntry",
    "ConfigSynonym",
    "CreatePartitionsResult",
    "CreateTopicResult",
    "DeleteGroupResult",
    "DeleteRecordsResult",
    "DeleteTopicResult",
    "GroupDescription",
    "GroupListing",
    "GroupOffset",
    "ListOffsetsResult",
    "MemberDescription",
    "PartitionDescription",
    "PartitionResult",
    "ResultMap",
    "TopicDescription",
    "TopicListing",
]


class _HasError(Protocol):
    @property
    def error(self) -> KafkaError | None: ...


K = TypeVar("K")
R = TypeVar("R", bound=_HasError)


class ResultMap(Mapping[K, R], Generic[K, R]):
    """Per-item results of a batch admin call, in request order."""

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[K, R] | Iterable[tuple[K, R]] = ()) -> None:
        self._items: dict[K, R] = dict(items)

    def __getitem__(self, key: K) -> R:
        return self._items[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    @property
    def errors(self) -> dict[K, KafkaError]:
        """The items that failed, with their errors."""
        return {k: r.error for k, r in self._items.items() if r.error is not None}

    @property
    def succeeded(self) -> dict[K, R]:
        """The items that succeeded."""
        return {k: r for k, r in self._items.items() if r.error is None}

    @property
    def ok(self) -> bool:
        """True when no item failed."""
        return all(r.error is None for r in self._items.values())

    def raise_first(self) -> ResultMap[K, R]:
        """Raise the first item's error, if any; otherwise return self (for chaining)."""
        for r in self._items.values():
            if r.error is not None:
                raise r.error
        return self

    def __repr__(self) -> str:
        return f"ResultMap({self._items!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ResultMap):
            return self._items == other._items
        if isinstance(other, Mapping):
            return self._items == dict(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


# --------------------------------------------------------------------------------------------
# Topics
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CreateTopicResult:
    """Outcome of creating one topic. Counts and configs are filled by brokers on
    CreateTopics v5+ (-1 / empty otherwise)."""

    name: str
    topic_id: uuid.UUID | None = None
    num_partitions: int = -1
    replication_factor: int = -1
    configs: Mapping[str, str | None] = field(default_factory=lambda: MappingProxyType({}))
    error: KafkaError | None = None


@dataclass(frozen=True)
class DeleteTopicResult:
    """Outcome of deleting one topic."""

    name: str
    topic_id: uuid.UUID | None = None
    error: KafkaError | None = None


@dataclass(frozen=True)
class CreatePartitionsResult:
    """Outcome of growing one topic's partition count."""

    name: str
    error: KafkaError | None = None


@dataclass(frozen=True)
class TopicListing:
    """A topic as listed by :meth:`AdminClient.list_topics`."""

    name: str
    topic_id: uuid.UUID | None
    is_internal: bool
    num_partitions: int


@dataclass(frozen=True)
class PartitionDescription:
    """One partition: its leader (-1: none), leader epoch, replicas and in-sync replicas."""

    partition: int
    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()
    error: KafkaError | None = None
    #: KIP-966's eligible leader replicas and last known ones (only
    #: :meth:`AdminClient.describe_topic_partitions` fills them; None when not reported).
    eligible_leader_replicas: tuple[int, ...] | None = None
    last_known_elr: tuple[int, ...] | None = None


@dataclass(frozen=True)
class TopicDescription:
    """A topic's partitions; ``authorized_operations`` only when asked for."""

    name: str
    topic_id: uuid.UUID | None = None
    is_internal: bool = False
    partitions: tuple[PartitionDescription, ...] = ()
    authorized_operations: frozenset[int] | None = None
    error: KafkaError | None = None


# --------------------------------------------------------------------------------------------
# Cluster
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BrokerDescription:
    """One broker of the cluster."""

    node_id: int
    host: str
    port: int
    rack: str | None = None


@dataclass(frozen=True)
class ClusterDescription:
    """Cluster id, controller (-1: unknown) and brokers, sorted by node id."""

    cluster_id: str | None
    controller_id: int
    brokers: tuple[BrokerDescription, ...]

    @property
    def controller(self) -> BrokerDescription | None:
        for b in self.brokers:
            if b.node_id == self.controller_id:
                return b
        return None


# --------------------------------------------------------------------------------------------
# Groups
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GroupListing:
    """A group as listed by :meth:`AdminClient.list_groups`, with the broker that
    coordinates it. ``state`` and ``type`` need ListGroups v4/v5 (None otherwise)."""

    group_id: str
    protocol_type: str
    state: str | None = None
    type: str | None = None
    coordinator: int = -1


@dataclass(frozen=True)
class MemberDescription:
    """A group member. ``assignment`` is decoded when the group uses the consumer protocol."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    assignment: tuple[TopicPartition, ...] = ()
    metadata: bytes = b""
    raw_assignment: bytes = b""


@dataclass(frozen=True)
class GroupDescription:
    """A group's state, protocol and members, and the broker coordinating it."""

    group_id: str
    state: str = ""
    protocol_type: str = ""
    protocol: str = ""
    members: tuple[MemberDescription, ...] = ()
    coordinator: int = -1
    authorized_operations: frozenset[int] | None = None
    error: KafkaError | None = None

    @property
    def is_simple_consumer_group(self) -> bool:
        return self.protocol_type == ""


#: ConsumerGroupDescribe's MemberType (KIP-1099): how a member of a "consumer" group joined.
MEMBER_TYPES = {0: "classic", 1: "consumer"}


@dataclass(frozen=True)
class ConsumerGroupMember:
    """A member of a consumer group as :meth:`AdminClient.describe_consumer_groups` shows it.

    For a group on the consumer protocol (KIP-848) every field is filled in from
    ConsumerGroupDescribe; for a classic group the epoch, rack, subscription and target
    fields stay empty (DescribeGroups has none of them)."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    assignment: tuple[TopicPartition, ...] = ()
    #: Consumer protocol: what the coordinator will give the member once others release it.
    target_assignment: tuple[TopicPartition, ...] = ()
    member_epoch: int = -1
    rack_id: str | None = None
    subscribed_topics: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None
    #: "consumer" or "classic" (a classic-protocol member inside a consumer group); None
    #: when the broker does not tell (ConsumerGroupDescribe v0, or a classic group).
    member_type: str | None = None


@dataclass(frozen=True)
class ConsumerGroupDescription:
    """A consumer group, whichever protocol it runs: ``group_type`` is "consumer" (KIP-848,
    described with ConsumerGroupDescribe) or "classic" (described with DescribeGroups)."""

    group_id: str
    group_type: str = ""
    state: str = ""
    #: The assignor: the broker's (consumer protocol) or the one the members chose (classic).
    assignor: str = ""
    #: Consumer protocol: the group epoch and the epoch of its target assignment (-1 classic).
    group_epoch: int = -1
    assignment_epoch: int = -1
    members: tuple[ConsumerGroupMember, ...] = ()
    coordinator: int = -1
    authorized_operations: frozenset[int] | None = None
    error: KafkaError | None = None


@dataclass(frozen=True)
class DeleteGroupResult:
    """Outcome of deleting one group."""

    group_id: str
    error: KafkaError | None = None


@dataclass(frozen=True)
class GroupOffset:
    """A committed offset of a group on one partition (``offset`` -1: none committed)."""

    topic: str
    partition: int
    offset: int = -1
    leader_epoch: int = -1
    metadata: str | None = None
    error: KafkaError | None = None

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)

    def to_offset_and_metadata(self) -> OffsetAndMetadata:
        return OffsetAndMetadata(self.offset, self.metadata or "", self.leader_epoch)


@dataclass(frozen=True)
class PartitionResult:
    """Outcome of an operation on one partition."""

    topic: str
    partition: int
    error: KafkaError | None = None


# --------------------------------------------------------------------------------------------
# Configs
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConfigSynonym:
    """A config that supplies (or would supply) a value, in precedence order."""

    name: str
    value: str | None
    source: ConfigSource


@dataclass(frozen=True)
class ConfigEntry:
    """One config value of a resource; ``value`` is None for sensitive or unset ones."""

    name: str
    value: str | None
    read_only: bool = False
    is_default: bool = False
    source: ConfigSource = ConfigSource.UNKNOWN
    is_sensitive: bool = False
    synonyms: tuple[ConfigSynonym, ...] = ()
    type: ConfigType = ConfigType.UNKNOWN
    documentation: str | None = None


@dataclass(frozen=True)
class ConfigDescription:
    """The config entries of one resource, by name."""

    resource: ConfigResource
    entries: Mapping[str, ConfigEntry] = field(default_factory=lambda: MappingProxyType({}))
    error: KafkaError | None = None


@dataclass(frozen=True)
class AlterConfigsResult:
    """Outcome of changing one resource's configs."""

    resource: ConfigResource
    error: KafkaError | None = None


# --------------------------------------------------------------------------------------------
# Offsets and records
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ListOffsetsResult:
    """The offset found for one partition; ``offset`` -1 when no record matches a timestamp."""

    topic: str
    partition: int
    offset: int = -1
    timestamp: int = -1
    leader_epoch: int = -1
    error: KafkaError | None = None


@dataclass(frozen=True)
class DeleteRecordsResult:
    """Outcome of deleting records of one partition: its new low watermark."""

    topic: str
    partition: int
    low_watermark: int = -1
    error: KafkaError | None = None


@dataclass(frozen=True)
class ElectLeadersResult:
    """Outcome of a leader election for one partition (``error`` is None when a leader was
    elected; ElectionNotNeededError when the chosen replica already leads)."""

    topic: str
    partition: int
    error: KafkaError | None = None


# --------------------------------------------------------------------------------------------
# ACLs
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AclCreationResult:
    """Outcome of creating one ACL."""

    acl: AclBinding
    error: KafkaError | None = None


@dataclass(frozen=True)
class AclDeletionResult:
    """ACLs removed by one filter; ``match_errors`` holds per-ACL failures, if any."""

    filter: AclBindingFilter
    deleted: tuple[AclBinding, ...] = ()
    match_errors: tuple[tuple[AclBinding, KafkaError], ...] = ()
    error: KafkaError | None = None
