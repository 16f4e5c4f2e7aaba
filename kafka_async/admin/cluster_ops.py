"""Cluster-wide admin calls: log directories, features, the metadata quorum, and paged topic
descriptions.

:meth:`AdminClient.describe_log_dirs`, :meth:`~AdminClient.describe_features`,
:meth:`~AdminClient.update_features`, :meth:`~AdminClient.describe_metadata_quorum` and
:meth:`~AdminClient.describe_topic_partitions` delegate here: the result types, the pure
request building and response mapping, and the routing of each call:

- DescribeLogDirs goes to every broker asked about (the fan-out engine, one request per
  broker, concurrently): each broker answers for its own disks only.
- Features come from ApiVersions (v3+ carries the supported and finalized features,
  KIP-584), as the Java client's ``describeFeatures`` reads them; UpdateFeatures goes to any
  broker, which forwards it to the controller.
- DescribeQuorum goes to any broker (Kafka 4.x brokers forward it to the KRaft leader).
- DescribeTopicPartitions (KIP-966) pages: each response holds at most
  ``response_partition_limit`` partitions and a cursor where the next page starts; the call
  follows the cursor until the broker returns none and joins a topic split across pages.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from .. import errors as E
from ..cluster.routing import Router, error_code, error_or_none
from ..errors import ConfigError, KafkaError, error_for_code
from ..net.connection import CLIENT_SOFTWARE
from ..protocol import apis
from ..protocol.apis.api_versions import ApiVersionsRequest, ApiVersionsResponse
from ..protocol.apis.describe_log_dirs import DescribeLogDirsRequest, DescribeLogDirsResponse
from ..protocol.apis.describe_quorum import (
    DescribeQuorumRequest,
    DescribeQuorumResponse,
    PartitionData,
    ReplicaState,
    TopicData,
)
from ..protocol.apis.describe_topic_partitions import (
    Cursor,
    DescribeTopicPartitionsRequest,
    DescribeTopicPartitionsResponse,
    TopicRequest,
)
from ..protocol.apis.update_features import (
    FeatureUpdateKey,
    UpdateFeaturesRequest,
    UpdateFeaturesResponse,
)
from ..protocol.codec import ZERO_UUID
from ..structs import TopicPartition
from . import checks
from .mapping import authorized_ops, unsupported
from .results import PartitionDescription, ResultMap, TopicDescription

__all__ = [
    "BrokerLogDirs",
    "FeatureMetadata",
    "FeatureUpdate",
    "FeatureUpdateResult",
    "FeatureUpgradeType",
    "FinalizedVersionRange",
    "LogDirDescription",
    "QuorumInfo",
    "QuorumNode",
    "QuorumReplica",
    "ReplicaInfo",
    "SupportedVersionRange",
]

#: KRaft's metadata log: the one topic partition DescribeQuorum describes.
METADATA_TOPIC = "__cluster_metadata"


# --------------------------------------------------------------------------------------------
# Log directories
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReplicaInfo:
    """One replica in a log directory: its size, how far it lags, and whether it is a
    future replica (being moved into this directory)."""

    size: int
    offset_lag: int
    is_future: bool


@dataclass(frozen=True)
class LogDirDescription:
    """One log directory of a broker. ``total_bytes``/``usable_bytes`` are -1 on brokers
    before DescribeLogDirs v4."""

    path: str
    replicas: Mapping[TopicPartition, ReplicaInfo] = field(
        default_factory=lambda: MappingProxyType({})
    )
    total_bytes: int = -1
    usable_bytes: int = -1
    error: KafkaError | None = None


@dataclass(frozen=True)
class BrokerLogDirs:
    """A broker's log directories, by path (:meth:`AdminClient.describe_log_dirs`)."""

    broker: int
    log_dirs: Mapping[str, LogDirDescription] = field(default_factory=lambda: MappingProxyType({}))
    error: KafkaError | None = None


def log_dirs_request(topics: Mapping[str, list[int]] | None) -> DescribeLogDirsRequest:
    """DescribeLogDirs for ``topics`` (topic -> partitions), or every partition (None)."""
    from ..protocol.apis.describe_log_dirs import DescribableLogDirTopic

    if topics is None:
        return DescribeLogDirsRequest(topics=None)
    return DescribeLogDirsRequest(
        topics=[DescribableLogDirTopic(topic=t, partitions=ps) for t, ps in topics.items()]
    )


def broker_log_dirs(broker: int, resp: DescribeLogDirsResponse) -> BrokerLogDirs:
    """One broker's answer as a :class:`BrokerLogDirs` (a request-level error is the
    broker's item error)."""
    if resp.error_code:
        return BrokerLogDirs(broker, error=error_or_none(resp.error_code))
    dirs: dict[str, LogDirDescription] = {}
    for r in resp.results:
        replicas = {
            TopicPartition(t.name, p.partition_index): ReplicaInfo(
                p.partition_size, p.offset_lag, p.is_future_key
            )
            for t in r.topics
            for p in t.partitions
        }
        dirs[r.log_dir] = LogDirDescription(
            r.log_dir,
            MappingProxyType(dict(sorted(replicas.items()))),
            r.total_bytes,
            r.usable_bytes,
            error_or_none(r.error_code),
        )
    return BrokerLogDirs(broker, MappingProxyType(dirs))


async def describe_log_dirs(
    router: Router,
    brokers: Sequence[int] | None,
    partitions: Sequence[TopicPartition] | None,
    *,
    timeout_ms: int | None,
    raise_on_error: bool,
) -> ResultMap[int, BrokerLogDirs]:

    if brokers is not None:
        if isinstance(brokers, int):
            brokers = [brokers]
        for b in brokers:
            if isinstance(b, bool) or not isinstance(b, int) or b < 0:
                raise ConfigError(f"broker ids must be non-negative ints, got {b!r}")
        brokers = checks.unique(brokers, "broker")
    topics: dict[str, list[int]] | None = None
    if partitions is not None:
        topics = {}
        for tp in checks.unique((checks.topic_partition(p) for p in partitions), "partition"):
            topics.setdefault(tp.topic, []).append(tp.partition)
    body = log_dirs_request(topics)
    deadline = router.deadline(timeout_ms)

    async def send(node: int) -> BrokerLogDirs:
        _, resp = await router.send(node, apis.DESCRIBE_LOG_DIRS, lambda v: body, deadline)
        return broker_log_dirs(node, resp)

    got = await router.per_broker(
        brokers,
        send,
        lambda node, e: BrokerLogDirs(node, error=e),
        lambda r: error_code(r.error),
        deadline,
    )
    result = ResultMap(dict(sorted(got.items())))
    if raise_on_error:
        result.raise_first()
    return result


# --------------------------------------------------------------------------------------------
# Features (KIP-584)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SupportedVersionRange:
    """The feature levels a broker's software supports."""

    min_version: int
    max_version: int


@dataclass(frozen=True)
class FinalizedVersionRange:
    """The level the cluster runs a feature at (``max_version_level``; ``min_version_level``
    is what the broker reports as the lowest finalized level)."""

    min_version_level: int
    max_version_level: int


@dataclass(frozen=True)
class FeatureMetadata:
    """Supported and finalized features, as one broker reports them
    (:meth:`AdminClient.describe_features`). ``finalized_epoch`` is -1 when unknown."""

    finalized: Mapping[str, FinalizedVersionRange]
    finalized_epoch: int
    supported: Mapping[str, SupportedVersionRange]
    broker: int


class FeatureUpgradeType(enum.IntEnum):
    """How UpdateFeatures may move a feature's level (KIP-778)."""

    UPGRADE = 1
    SAFE_DOWNGRADE = 2
    UNSAFE_DOWNGRADE = 3


@dataclass(frozen=True)
class FeatureUpdate:
    """The new highest level of one feature (0 removes the feature), and how it may move."""

    max_version_level: int
    upgrade_type: FeatureUpgradeType = FeatureUpgradeType.UPGRADE

    def __post_init__(self) -> None:
        level = self.max_version_level
        if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < 2**15:
            raise ConfigError(f"max_version_level must be an int 0-32767, got {level!r}")
        object.__setattr__(self, "upgrade_type", FeatureUpgradeType(self.upgrade_type))


@dataclass(frozen=True)
class FeatureUpdateResult:
    """Outcome of one feature's update."""

    feature: str
    error: KafkaError | None = None


def feature_metadata(resp: ApiVersionsResponse, broker: int) -> FeatureMetadata:
    """The features of an ApiVersions (v3+) response."""
    if resp.error_code:
        raise error_for_code(resp.error_code)
    return FeatureMetadata(
        finalized=MappingProxyType(
            {
                f.name: FinalizedVersionRange(f.min_version_level, f.max_version_level)
                for f in sorted(resp.finalized_features, key=lambda f: f.name)
            }
        ),
        finalized_epoch=resp.finalized_features_epoch,
        supported=MappingProxyType(
            {
                f.name: SupportedVersionRange(f.min_version, f.max_version)
                for f in sorted(resp.supported_features, key=lambda f: f.name)
            }
        ),
        broker=broker,
    )


def update_features_request(
    updates: Mapping[str, FeatureUpdate], validate_only: bool, timeout_ms: int, version: int
) -> UpdateFeaturesRequest:
    """UpdateFeatures for ``updates``; a dry run needs v1+."""

    if validate_only and version < 1:
        raise unsupported("UpdateFeatures", "a dry run (validate_only)", version)
    keys: list[FeatureUpdateKey] = []
    for name, up in updates.items():
        if version < 1 and up.upgrade_type is FeatureUpgradeType.SAFE_DOWNGRADE:
            raise unsupported("UpdateFeatures", "a safe downgrade", version)
        keys.append(
            # v1+ replaced allow_downgrade (v0 only) with upgrade_type.
            FeatureUpdateKey(
                feature=name,
                max_version_level=up.max_version_level,
                upgrade_type=int(up.upgrade_type),
            )
            if version >= 1
            else FeatureUpdateKey(
                feature=name,
                max_version_level=up.max_version_level,
                allow_downgrade=up.upgrade_type is not FeatureUpgradeType.UPGRADE,
            )
        )
    return UpdateFeaturesRequest(
        timeout_ms=timeout_ms, feature_updates=keys, validate_only=bool(validate_only)
    )


def update_features_results(
    resp: UpdateFeaturesResponse, names: Sequence[str]
) -> dict[str, FeatureUpdateResult]:
    """Per-feature results. v2 responses carry only the top-level error, which then applies
    to every feature (the update is all or nothing)."""
    top = error_or_none(resp.error_code, resp.error_message)
    if top is not None:
        return {n: FeatureUpdateResult(n, top) for n in names}
    got = {
        r.feature: FeatureUpdateResult(r.feature, error_or_none(r.error_code, r.error_message))
        for r in resp.results
    }
    return {n: got.get(n) or FeatureUpdateResult(n) for n in names}


async def describe_features(router: Router, *, timeout_ms: int | None) -> FeatureMetadata:
    deadline = router.deadline(timeout_ms)
    body = ApiVersionsRequest(
        client_software_name=CLIENT_SOFTWARE[0], client_software_version=CLIENT_SOFTWARE[1]
    )

    async def call() -> tuple[int, tuple[int, ApiVersionsResponse]]:
        node = await router.cluster.any_node()
        return node, await router.send(
            node, apis.API_VERSIONS, lambda v: body, deadline, min_version=3
        )

    node, (_, resp) = await router.with_retries(deadline, call)
    return feature_metadata(resp, node)


async def update_features(
    router: Router,
    updates: Mapping[str, FeatureUpdate | int],
    *,
    validate_only: bool,
    timeout_ms: int | None,
    raise_on_error: bool,
) -> ResultMap[str, FeatureUpdateResult]:
    if not isinstance(updates, Mapping) or not updates:
        raise ConfigError("update_features expects a non-empty mapping of feature -> update")
    checked: dict[str, FeatureUpdate] = {}
    for name, up in updates.items():
        if not isinstance(name, str) or not name:
            raise ConfigError(f"feature names must be non-empty strings, got {name!r}")
        checked[name] = up if isinstance(up, FeatureUpdate) else FeatureUpdate(up)
    deadline = router.deadline(timeout_ms)

    async def call() -> tuple[int, UpdateFeaturesResponse]:
        return await router.send(
            None,
            apis.UPDATE_FEATURES,
            lambda v: update_features_request(checked, validate_only, deadline.remaining_ms(), v),
            deadline,
        )

    _, resp = await router.with_retries(deadline, call)
    got = update_features_results(resp, list(checked))
    router.note_errors(error_code(r.error) for r in got.values())
    result = ResultMap(got)
    if raise_on_error:
        result.raise_first()
    return result


# --------------------------------------------------------------------------------------------
# The metadata quorum (KRaft)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class QuorumReplica:
    """A voter or observer of the metadata quorum as the leader sees it. Timestamps are
    the leader's wall clock in ms, -1 when unknown; ``directory_id`` needs DescribeQuorum v2."""

    replica_id: int
    log_end_offset: int
    last_fetch_timestamp: int = -1
    last_caught_up_timestamp: int = -1
    directory_id: uuid.UUID | None = None


@dataclass(frozen=True)
class QuorumNode:
    """A quorum node's controller endpoints: listener name -> (host, port)."""

    node_id: int
    endpoints: Mapping[str, tuple[str, int]]


@dataclass(frozen=True)
class QuorumInfo:
    """The KRaft metadata quorum (:meth:`AdminClient.describe_metadata_quorum`)."""

    leader_id: int
    leader_epoch: int
    high_watermark: int
    voters: tuple[QuorumReplica, ...]
    observers: tuple[QuorumReplica, ...]
    nodes: Mapping[int, QuorumNode] = field(default_factory=lambda: MappingProxyType({}))


def quorum_request() -> DescribeQuorumRequest:
    """DescribeQuorum for the metadata log's one partition."""
    return DescribeQuorumRequest(
        topics=[TopicData(topic_name=METADATA_TOPIC, partitions=[PartitionData(partition_index=0)])]
    )


def _replica(r: ReplicaState) -> QuorumReplica:
    directory = None if r.replica_directory_id == ZERO_UUID else r.replica_directory_id
    return QuorumReplica(
        r.replica_id,
        r.log_end_offset,
        r.last_fetch_timestamp,
        r.last_caught_up_timestamp,
        directory,
    )


def quorum_info(resp: DescribeQuorumResponse) -> QuorumInfo:
    """The quorum of a DescribeQuorum response; raises its top-level or partition error."""
    if resp.error_code:
        raise error_for_code(resp.error_code, resp.error_message or None)
    for t in resp.topics:
        for p in t.partitions:
            if p.partition_index != 0 or t.topic_name != METADATA_TOPIC:
                continue
            if p.error_code:
                raise error_for_code(p.error_code, p.error_message or None)
            nodes = {
                n.node_id: QuorumNode(
                    n.node_id,
                    MappingProxyType({li.name: (li.host, li.port) for li in n.listeners}),
                )
                for n in resp.nodes
            }
            return QuorumInfo(
                leader_id=p.leader_id,
                leader_epoch=p.leader_epoch,
                high_watermark=p.high_watermark,
                voters=tuple(_replica(r) for r in p.current_voters),
                observers=tuple(_replica(r) for r in p.observers),
                nodes=MappingProxyType(dict(sorted(nodes.items()))),
            )
    raise E.UnknownServerError(f"DescribeQuorum answered without {METADATA_TOPIC}-0")


async def describe_metadata_quorum(router: Router, *, timeout_ms: int | None) -> QuorumInfo:
    deadline = router.deadline(timeout_ms)
    body = quorum_request()

    async def call() -> tuple[int, DescribeQuorumResponse]:
        return await router.send(None, apis.DESCRIBE_QUORUM, lambda v: body, deadline)

    _, resp = await router.with_retries(deadline, call)
    router.note_errors([resp.error_code])
    return quorum_info(resp)


# --------------------------------------------------------------------------------------------
# Paged topic descriptions (DescribeTopicPartitions, KIP-966)
# --------------------------------------------------------------------------------------------


def topic_partitions_request(
    topics: Sequence[str], limit: int, cursor: Cursor | None
) -> DescribeTopicPartitionsRequest:
    """One page's request: ``topics`` (empty: every topic), at most ``limit`` partitions,
    starting at ``cursor``."""
    return DescribeTopicPartitionsRequest(
        topics=[TopicRequest(name=t) for t in topics],
        response_partition_limit=limit,
        cursor=cursor,
    )


def merge_topic_partitions_page(
    acc: dict[str, TopicDescription], resp: DescribeTopicPartitionsResponse, with_ops: bool
) -> None:
    """Add one page to ``acc``; a topic continued from the previous page gets its further
    partitions appended."""

    for t in resp.topics:
        if t.name is None:
            continue
        parts = tuple(
            PartitionDescription(
                partition=p.partition_index,
                leader=p.leader_id,
                leader_epoch=p.leader_epoch,
                replicas=tuple(p.replica_nodes),
                isr=tuple(p.isr_nodes),
                offline_replicas=tuple(p.offline_replicas),
                error=error_or_none(p.error_code),
                eligible_leader_replicas=(
                    None
                    if p.eligible_leader_replicas is None
                    else tuple(p.eligible_leader_replicas)
                ),
                last_known_elr=None if p.last_known_elr is None else tuple(p.last_known_elr),
            )
            for p in t.partitions
        )
        before = acc.get(t.name)
        if before is not None and before.error is None:
            merged = tuple(sorted((*before.partitions, *parts), key=lambda p: p.partition))
            acc[t.name] = TopicDescription(
                name=before.name,
                topic_id=before.topic_id,
                is_internal=before.is_internal,
                partitions=merged,
                authorized_operations=before.authorized_operations,
            )
            continue
        acc[t.name] = TopicDescription(
            name=t.name,
            topic_id=None if t.topic_id == ZERO_UUID else t.topic_id,
            is_internal=t.is_internal,
            partitions=tuple(sorted(parts, key=lambda p: p.partition)),
            authorized_operations=authorized_ops(t.topic_authorized_operations)
            if with_ops
            else None,
            error=error_or_none(t.error_code),
        )


async def describe_topic_partitions(
    router: Router,
    topics: Sequence[str] | None,
    *,
    partition_limit: int,
    timeout_ms: int | None,
    raise_on_error: bool,
) -> ResultMap[str, TopicDescription]:

    if (
        isinstance(partition_limit, bool)
        or not isinstance(partition_limit, int)
        or not (1 <= partition_limit <= 2**31 - 1)
    ):
        raise ConfigError(f"partition_limit must be a positive int, got {partition_limit!r}")
    names = [] if topics is None else sorted(checks.topic_names(topics))
    if topics is not None and not names:
        return ResultMap()
    deadline = router.deadline(timeout_ms)
    acc: dict[str, TopicDescription] = {}
    cursor: Cursor | None = None
    seen: set[tuple[str, int]] = set()
    while True:
        body = topic_partitions_request(names, partition_limit, cursor)

        async def call(
            body: DescribeTopicPartitionsRequest = body,
        ) -> tuple[int, DescribeTopicPartitionsResponse]:
            return await router.send(None, apis.DESCRIBE_TOPIC_PARTITIONS, lambda v: body, deadline)

        _, resp = await router.with_retries(deadline, call)
        merge_topic_partitions_page(acc, resp, with_ops=False)
        nxt = resp.next_cursor
        if nxt is None:
            break
        where = (nxt.topic_name, nxt.partition_index)
        if where in seen:  # a broker that hands the same cursor back would loop forever
            raise E.UnknownServerError(f"DescribeTopicPartitions returned the cursor {where} twice")
        seen.add(where)
        cursor = Cursor(topic_name=nxt.topic_name, partition_index=nxt.partition_index)
    router.note_errors(error_code(t.error) for t in acc.values())
    if topics is None:
        out = {n: acc[n] for n in sorted(acc)}
    else:
        missing = E.UnknownTopicOrPartitionError
        out = {
            n: acc.get(n) or TopicDescription(n, error=missing())
            for n in checks.topic_names(topics)
        }
    result = ResultMap(out)
    if raise_on_error:
        result.raise_first()
    return result
