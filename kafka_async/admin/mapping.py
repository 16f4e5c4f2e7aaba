"""Pure translation between admin arguments, request bodies and result dataclasses.

No I/O here: every function takes plain values (and the negotiated API version where the
wire shape depends on it) and returns a typed request message or result objects. The client
in ``client.py`` only routes, sends and retries; these functions are what the unit tests
exercise with hand-built responses.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType

from .. import errors as E
from ..cluster.routing import (
    CONTROLLER_MOVED,
    COORDINATOR_LOADING,
    COORDINATOR_MOVED,
    LEADER_MOVED,
    error_or_none,
)
from ..errors import IncompatibleBrokerVersionError, KafkaError, error_for_code
from ..protocol.apis import alter_configs as ac
from ..protocol.apis import consumer_group_describe as cgd
from ..protocol.apis import create_acls as ca
from ..protocol.apis import create_partitions as cp
from ..protocol.apis import create_topics as ct
from ..protocol.apis import delete_acls as da
from ..protocol.apis import delete_groups as dg
from ..protocol.apis import delete_records as dr
from ..protocol.apis import delete_topics as dt
from ..protocol.apis import describe_acls as dacl
from ..protocol.apis import describe_cluster as dc
from ..protocol.apis import describe_configs as dcf
from ..protocol.apis import describe_groups as dgr
from ..protocol.apis import incremental_alter_configs as iac
from ..protocol.apis import list_groups as lg
from ..protocol.apis import list_offsets as lo
from ..protocol.apis import metadata as md
from ..protocol.apis import offset_commit as oc
from ..protocol.apis import offset_delete as od
from ..protocol.apis import offset_fetch as of
from ..protocol.apis.elect_leaders import ElectLeadersRequest, ElectLeadersResponse
from ..protocol.apis.elect_leaders import TopicPartitions as ElectLeadersTopicPartitions
from ..protocol.codec import ZERO_UUID
from ..structs import OffsetAndMetadata, TopicPartition
from .results import (
    MEMBER_TYPES,
    AclCreationResult,
    AclDeletionResult,
    AlterConfigsResult,
    BrokerDescription,
    ClusterDescription,
    ConfigDescription,
    ConfigEntry,
    ConfigSynonym,
    ConsumerGroupDescription,
    ConsumerGroupMember,
    CreatePartitionsResult,
    CreateTopicResult,
    DeleteGroupResult,
    DeleteRecordsResult,
    DeleteTopicResult,
    ElectLeadersResult,
    GroupDescription,
    GroupListing,
    GroupOffset,
    ListOffsetsResult,
    MemberDescription,
    PartitionDescription,
    PartitionResult,
    TopicDescription,
    TopicListing,
)
from .types import (
    AclBinding,
    AclBindingFilter,
    AlterConfigOp,
    ConfigResource,
    ConfigResourceType,
    ConfigSource,
    ConfigType,
    IsolationLevel,
    NewPartitions,
    NewTopic,
    OffsetSpec,
    PatternType,
)

# Error codes by name from errors.py.
UNKNOWN_TOPIC_OR_PARTITION = E.UnknownTopicOrPartitionError.code
LEADER_NOT_AVAILABLE = E.LeaderNotAvailableError.code
NOT_LEADER_OR_FOLLOWER = E.NotLeaderOrFollowerError.code
REQUEST_TIMED_OUT = E.RequestTimedOutError.code
COORDINATOR_LOAD_IN_PROGRESS = E.CoordinatorLoadInProgressError.code
COORDINATOR_NOT_AVAILABLE = E.CoordinatorNotAvailableError.code
NOT_COORDINATOR = E.NotCoordinatorError.code
NOT_CONTROLLER = E.NotControllerError.code
FENCED_LEADER_EPOCH = E.FencedLeaderEpochError.code
UNKNOWN_LEADER_EPOCH = E.UnknownLeaderEpochError.code

# The retry sets live with the routing (derived from errors.py's flags there); these are
# the names this module and its tests have always used for them.
CONTROLLER_RETRY = CONTROLLER_MOVED
COORDINATOR_RETRY = COORDINATOR_MOVED
COORDINATOR_WAIT = COORDINATOR_LOADING
LEADER_RETRY = LEADER_MOVED

# Kafka encodes "no authorized operations requested" as INT32 min.
_NO_AUTHORIZED_OPS = -(2**31)


def _uuid(value: uuid.UUID | None) -> uuid.UUID | None:
    return None if value is None or value == ZERO_UUID else value


def authorized_ops(bits: int) -> frozenset[int] | None:
    """The operation codes set in an authorized-operations bit field (None: not asked)."""
    if bits == _NO_AUTHORIZED_OPS:
        return None
    return frozenset(i for i in range(32) if bits & (1 << i))


def unsupported(api_name: str, what: str, version: int) -> IncompatibleBrokerVersionError:
    """The error for an argument the negotiated ``version`` of ``api_name`` cannot carry."""
    return IncompatibleBrokerVersionError(
        f"{what} needs a newer {api_name} version than the broker supports (it speaks v{version})"
    )


# --------------------------------------------------------------------------------------------
# Topics
# --------------------------------------------------------------------------------------------


def create_topics_request(
    topics: Sequence[NewTopic], timeout_ms: int, validate_only: bool, version: int
) -> ct.CreateTopicsRequest:
    if validate_only and version < 1:
        raise unsupported("CreateTopics", "validate_only", version)
    if version < 4:
        # Before v4 the broker rejects -1 ("use the broker default") for the counts.
        for t in topics:
            if t.replica_assignment is None and (
                t.num_partitions == -1 or t.replication_factor == -1
            ):
                raise unsupported("CreateTopics", "broker-default partition counts", version)
    return ct.CreateTopicsRequest(
        topics=[
            ct.CreatableTopic(
                name=t.name,
                num_partitions=t.num_partitions,
                replication_factor=t.replication_factor,
                assignments=[
                    ct.CreatableReplicaAssignment(partition_index=p, broker_ids=list(ids))
                    for p, ids in sorted((t.replica_assignment or {}).items())
                ],
                configs=[ct.CreatableTopicConfig(name=k, value=v) for k, v in t.config.items()],
            )
            for t in topics
        ],
        timeout_ms=timeout_ms,
        validate_only=validate_only,
    )


def create_topics_results(resp: ct.CreateTopicsResponse) -> dict[str, CreateTopicResult]:
    out: dict[str, CreateTopicResult] = {}
    for t in resp.topics:
        configs = {c.name: c.value for c in t.configs or ()}
        out[t.name] = CreateTopicResult(
            name=t.name,
            topic_id=_uuid(t.topic_id),
            num_partitions=t.num_partitions,
            replication_factor=t.replication_factor,
            configs=MappingProxyType(configs),
            error=error_or_none(t.error_code, t.error_message),
        )
    return out


def delete_topics_request(
    names: Sequence[str], timeout_ms: int, version: int
) -> dt.DeleteTopicsRequest:
    if version >= 6:
        return dt.DeleteTopicsRequest(
            topics=[dt.DeleteTopicState(name=n) for n in names], timeout_ms=timeout_ms
        )
    return dt.DeleteTopicsRequest(topic_names=list(names), timeout_ms=timeout_ms)


def delete_topics_results(resp: dt.DeleteTopicsResponse) -> dict[str, DeleteTopicResult]:
    out: dict[str, DeleteTopicResult] = {}
    for r in resp.responses:
        name = r.name if r.name is not None else str(r.topic_id)
        out[name] = DeleteTopicResult(
            name=name,
            topic_id=_uuid(r.topic_id),
            error=error_or_none(r.error_code, r.error_message),
        )
    return out


def create_partitions_request(
    new_partitions: Mapping[str, NewPartitions], timeout_ms: int, validate_only: bool
) -> cp.CreatePartitionsRequest:
    return cp.CreatePartitionsRequest(
        topics=[
            cp.CreatePartitionsTopic(
                name=name,
                count=np.total_count,
                assignments=(
                    None
                    if np.assignments is None
                    else [cp.CreatePartitionsAssignment(broker_ids=list(a)) for a in np.assignments]
                ),
            )
            for name, np in new_partitions.items()
        ],
        timeout_ms=timeout_ms,
        validate_only=validate_only,
    )


def create_partitions_results(
    resp: cp.CreatePartitionsResponse,
) -> dict[str, CreatePartitionsResult]:
    return {
        r.name: CreatePartitionsResult(r.name, error_or_none(r.error_code, r.error_message))
        for r in resp.results
    }


def metadata_request(topics: Sequence[str] | None, version: int) -> md.MetadataRequest:
    """A Metadata request that never auto-creates topics (v4+; older brokers always may)."""
    return md.MetadataRequest(
        # v0 has no null array: an empty list means "all topics" there.
        topics=(
            (None if version >= 1 else [])
            if topics is None
            else [md.MetadataRequestTopic(name=t) for t in topics]
        ),
        allow_auto_topic_creation=version < 4,
    )


def topic_listings(resp: md.MetadataResponse, include_internal: bool) -> dict[str, TopicListing]:
    out: dict[str, TopicListing] = {}
    for t in sorted(resp.topics, key=lambda t: t.name or ""):
        if t.error_code != 0 or t.name is None:
            continue
        if t.is_internal and not include_internal:
            continue
        out[t.name] = TopicListing(
            t.name, _uuid(t.topic_id), bool(t.is_internal), len(t.partitions)
        )
    return out


def topic_descriptions(
    resp: md.MetadataResponse, asked: Sequence[str] | None, with_operations: bool = False
) -> dict[str, TopicDescription]:
    by_name = {t.name: t for t in resp.topics if t.name is not None}
    names = list(asked) if asked is not None else sorted(by_name)
    out: dict[str, TopicDescription] = {}
    for name in names:
        t = by_name.get(name)
        if t is None:
            out[name] = TopicDescription(name, error=error_for_code(UNKNOWN_TOPIC_OR_PARTITION))
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
            )
            for p in sorted(t.partitions, key=lambda p: p.partition_index)
        )
        out[name] = TopicDescription(
            name=name,
            topic_id=_uuid(t.topic_id),
            is_internal=bool(t.is_internal),
            partitions=parts,
            authorized_operations=(
                authorized_ops(t.topic_authorized_operations) if with_operations else None
            ),
            error=error_or_none(t.error_code),
        )
    return out


def cluster_from_describe_cluster(resp: dc.DescribeClusterResponse) -> ClusterDescription:
    return ClusterDescription(
        cluster_id=resp.cluster_id,
        controller_id=resp.controller_id,
        brokers=tuple(
            BrokerDescription(b.broker_id, b.host, b.port, b.rack)
            for b in sorted(resp.brokers, key=lambda b: b.broker_id)
        ),
    )


def cluster_from_metadata(resp: md.MetadataResponse) -> ClusterDescription:
    return ClusterDescription(
        cluster_id=resp.cluster_id,
        controller_id=resp.controller_id,
        brokers=tuple(
            BrokerDescription(b.node_id, b.host, b.port, b.rack)
            for b in sorted(resp.brokers, key=lambda b: b.node_id)
        ),
    )


# --------------------------------------------------------------------------------------------
# Groups
# --------------------------------------------------------------------------------------------


def list_groups_request(
    states: Sequence[str] | None, types: Sequence[str] | None, version: int
) -> lg.ListGroupsRequest:
    if states and version < 4:
        raise unsupported("ListGroups", "filtering by state", version)
    if types and version < 5:
        raise unsupported("ListGroups", "filtering by type", version)
    return lg.ListGroupsRequest(states_filter=list(states or ()), types_filter=list(types or ()))


def group_listings(resp: lg.ListGroupsResponse, coordinator: int) -> list[GroupListing]:
    return [
        GroupListing(
            group_id=g.group_id,
            protocol_type=g.protocol_type,
            state=g.group_state or None,
            type=g.group_type or None,
            coordinator=coordinator,
        )
        for g in resp.groups
    ]


def _decode_assignment(protocol_type: str, data: bytes) -> tuple[TopicPartition, ...]:
    if protocol_type != "consumer" or not data:
        return ()
    # Imported lazily: only describe_groups needs the consumer protocol structures.
    from ..protocol.consumer_protocol import Assignment

    try:
        return tuple(Assignment.decode(data).partitions)
    except (KafkaError, ValueError):
        # A member of a custom protocol that calls itself "consumer" must not break the
        # whole description; the raw bytes stay available.
        return ()


def describe_groups_request(
    groups: Sequence[str], include_authorized_operations: bool, version: int
) -> dgr.DescribeGroupsRequest:
    if include_authorized_operations and version < 3:
        raise unsupported("DescribeGroups", "include_authorized_operations", version)
    return dgr.DescribeGroupsRequest(
        groups=list(groups), include_authorized_operations=include_authorized_operations
    )


def group_descriptions(
    resp: dgr.DescribeGroupsResponse, coordinator: int, with_operations: bool = False
) -> dict[str, GroupDescription]:
    out: dict[str, GroupDescription] = {}
    for g in resp.groups:
        members = tuple(
            MemberDescription(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                assignment=_decode_assignment(g.protocol_type, bytes(m.member_assignment)),
                metadata=bytes(m.member_metadata),
                raw_assignment=bytes(m.member_assignment),
            )
            for m in g.members
        )
        out[g.group_id] = GroupDescription(
            group_id=g.group_id,
            state=g.group_state,
            protocol_type=g.protocol_type,
            protocol=g.protocol_data,
            members=members,
            coordinator=coordinator,
            # Only meaningful when asked for; some brokers fill the field regardless.
            authorized_operations=authorized_ops(g.authorized_operations)
            if with_operations
            else None,
            error=error_or_none(g.error_code),
        )
    return out


#: ConsumerGroupDescribe's answer for a group that is not a consumer-protocol group.
GROUP_ID_NOT_FOUND = 69


def _described_partitions(assignment: cgd.Assignment) -> tuple[TopicPartition, ...]:
    return tuple(
        TopicPartition(t.topic_name, p)
        for t in sorted(assignment.topic_partitions, key=lambda t: t.topic_name)
        for p in sorted(t.partitions)
    )


def consumer_group_descriptions_request(
    groups: Sequence[str], with_operations: bool
) -> cgd.ConsumerGroupDescribeRequest:
    return cgd.ConsumerGroupDescribeRequest(
        group_ids=list(groups), include_authorized_operations=with_operations
    )


def consumer_group_descriptions(
    resp: cgd.ConsumerGroupDescribeResponse, coordinator: int, with_operations: bool = False
) -> dict[str, ConsumerGroupDescription]:
    """ConsumerGroupDescribe's groups (those answered GROUP_ID_NOT_FOUND keep the error)."""
    out: dict[str, ConsumerGroupDescription] = {}
    for g in resp.groups:
        members = tuple(
            ConsumerGroupMember(
                member_id=mb.member_id,
                group_instance_id=mb.instance_id,
                client_id=mb.client_id,
                client_host=mb.client_host,
                assignment=_described_partitions(mb.assignment),
                target_assignment=_described_partitions(mb.target_assignment),
                member_epoch=mb.member_epoch,
                rack_id=mb.rack_id,
                subscribed_topics=tuple(mb.subscribed_topic_names),
                subscribed_topic_regex=mb.subscribed_topic_regex or None,
                member_type=MEMBER_TYPES.get(mb.member_type),
            )
            for mb in g.members
        )
        out[g.group_id] = ConsumerGroupDescription(
            group_id=g.group_id,
            group_type="consumer",
            state=g.group_state,
            assignor=g.assignor_name,
            group_epoch=g.group_epoch,
            assignment_epoch=g.assignment_epoch,
            members=members,
            coordinator=coordinator,
            authorized_operations=authorized_ops(g.authorized_operations)
            if with_operations
            else None,
            error=error_or_none(g.error_code, g.error_message),
        )
    return out


def consumer_group_from_classic(desc: GroupDescription) -> ConsumerGroupDescription:
    """A DescribeGroups answer in the shape of ``describe_consumer_groups``."""
    return ConsumerGroupDescription(
        group_id=desc.group_id,
        group_type="classic",
        state=desc.state,
        assignor=desc.protocol,
        members=tuple(
            ConsumerGroupMember(
                member_id=mb.member_id,
                group_instance_id=mb.group_instance_id,
                client_id=mb.client_id,
                client_host=mb.client_host,
                assignment=mb.assignment,
            )
            for mb in desc.members
        ),
        coordinator=desc.coordinator,
        authorized_operations=desc.authorized_operations,
        error=desc.error,
    )


def delete_groups_request(groups: Sequence[str]) -> dg.DeleteGroupsRequest:
    return dg.DeleteGroupsRequest(groups_names=list(groups))


def delete_groups_results(resp: dg.DeleteGroupsResponse) -> dict[str, DeleteGroupResult]:
    return {
        r.group_id: DeleteGroupResult(r.group_id, error_or_none(r.error_code)) for r in resp.results
    }


def _group_partitions(partitions: Iterable[TopicPartition]) -> dict[str, list[int]]:
    by_topic: dict[str, list[int]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return by_topic


def offset_fetch_request(
    group_id: str, partitions: Sequence[TopicPartition] | None, version: int
) -> of.OffsetFetchRequest:
    if partitions is None and version < 2:
        raise unsupported("OffsetFetch", "fetching all of a group's offsets", version)
    by_topic = None if partitions is None else _group_partitions(partitions).items()
    if version >= 8:
        topics = (
            None
            if by_topic is None
            else [of.OffsetFetchRequestTopics(name=t, partition_indexes=ps) for t, ps in by_topic]
        )
        return of.OffsetFetchRequest(
            groups=[of.OffsetFetchRequestGroup(group_id=group_id, topics=topics)]
        )
    return of.OffsetFetchRequest(
        group_id=group_id,
        topics=(
            None
            if by_topic is None
            else [of.OffsetFetchRequestTopic(name=t, partition_indexes=ps) for t, ps in by_topic]
        ),
    )


def offset_fetch_results(
    resp: of.OffsetFetchResponse, group_id: str, version: int
) -> tuple[KafkaError | None, dict[TopicPartition, GroupOffset]]:
    """(group-level error, per-partition offsets)."""
    topics: Sequence[of.OffsetFetchResponseTopic | of.OffsetFetchResponseTopics]
    if version >= 8:
        groups = [g for g in resp.groups if g.group_id == group_id] or list(resp.groups)
        if not groups:
            return None, {}
        group_error = error_or_none(groups[0].error_code)
        topics = groups[0].topics
    else:
        group_error = error_or_none(resp.error_code) if version >= 2 else None
        topics = resp.topics
    out: dict[TopicPartition, GroupOffset] = {}
    for t in topics:
        for p in t.partitions:
            tp = TopicPartition(t.name, p.partition_index)
            out[tp] = GroupOffset(
                topic=t.name,
                partition=p.partition_index,
                offset=p.committed_offset,
                leader_epoch=p.committed_leader_epoch,
                metadata=p.metadata,
                error=error_or_none(p.error_code),
            )
    return group_error, out


def offset_commit_request(
    group_id: str, offsets: Mapping[TopicPartition, OffsetAndMetadata], version: int
) -> oc.OffsetCommitRequest:
    by_topic: dict[str, list[oc.OffsetCommitRequestPartition]] = {}
    for tp, om in offsets.items():
        part = oc.OffsetCommitRequestPartition(
            partition_index=tp.partition,
            committed_offset=om.offset,
            committed_leader_epoch=om.leader_epoch,
            committed_metadata=om.metadata,
        )
        by_topic.setdefault(tp.topic, []).append(part)
    # generation -1 and an empty member id are how an admin (non-member) commits; Kafka
    # only accepts that while the group has no active members.
    return oc.OffsetCommitRequest(
        group_id=group_id,
        generation_id_or_member_epoch=-1,
        member_id="",
        topics=[oc.OffsetCommitRequestTopic(name=t, partitions=ps) for t, ps in by_topic.items()],
    )


def partition_results(
    resp_topics: Sequence[oc.OffsetCommitResponseTopic] | Sequence[od.OffsetDeleteResponseTopic],
) -> dict[TopicPartition, PartitionResult]:
    out: dict[TopicPartition, PartitionResult] = {}
    for t in resp_topics:
        for p in t.partitions:
            out[TopicPartition(t.name, p.partition_index)] = PartitionResult(
                t.name, p.partition_index, error_or_none(p.error_code)
            )
    return out


def offset_delete_request(
    group_id: str, partitions: Sequence[TopicPartition]
) -> od.OffsetDeleteRequest:
    return od.OffsetDeleteRequest(
        group_id=group_id,
        topics=[
            od.OffsetDeleteRequestTopic(
                name=t, partitions=[od.OffsetDeleteRequestPartition(partition_index=p) for p in ps]
            )
            for t, ps in _group_partitions(partitions).items()
        ],
    )


# --------------------------------------------------------------------------------------------
# Configs
# --------------------------------------------------------------------------------------------


def describe_configs_request(
    resources: Sequence[ConfigResource],
    keys: Sequence[str] | None,
    include_synonyms: bool,
    include_documentation: bool,
    version: int,
) -> dcf.DescribeConfigsRequest:
    if include_synonyms and version < 1:
        raise unsupported("DescribeConfigs", "include_synonyms", version)
    if include_documentation and version < 3:
        raise unsupported("DescribeConfigs", "include_documentation", version)
    return dcf.DescribeConfigsRequest(
        resources=[
            dcf.DescribeConfigsResource(
                resource_type=int(r.type),
                resource_name=r.name,
                configuration_keys=None if keys is None else list(keys),
            )
            for r in resources
        ],
        include_synonyms=include_synonyms,
        include_documentation=include_documentation,
    )


def _resource_key(resource_type: int, name: str) -> tuple[int, str]:
    return (resource_type, name)


def describe_configs_results(
    resp: dcf.DescribeConfigsResponse, asked: Sequence[ConfigResource], version: int
) -> dict[ConfigResource, ConfigDescription]:
    by_key = {_resource_key(r.resource_type, r.resource_name): r for r in resp.results}
    out: dict[ConfigResource, ConfigDescription] = {}
    for res in asked:
        r = by_key.get(_resource_key(int(res.type), res.name))
        if r is None:
            continue
        entries: dict[str, ConfigEntry] = {}
        for c in r.configs:
            if version >= 1:
                source = ConfigSource.from_wire(c.config_source)
                is_default = source is ConfigSource.DEFAULT_CONFIG
            else:
                is_default = bool(c.is_default)
                source = ConfigSource.DEFAULT_CONFIG if is_default else ConfigSource.UNKNOWN
            entries[c.name] = ConfigEntry(
                name=c.name,
                value=c.value,
                read_only=bool(c.read_only),
                is_default=is_default,
                source=source,
                is_sensitive=bool(c.is_sensitive),
                synonyms=tuple(
                    ConfigSynonym(s.name, s.value, ConfigSource.from_wire(s.source))
                    for s in c.synonyms
                ),
                type=ConfigType.from_wire(c.config_type),
                documentation=c.documentation,
            )
        out[res] = ConfigDescription(
            resource=res,
            entries=MappingProxyType(entries),
            error=error_or_none(r.error_code, r.error_message),
        )
    return out


def alter_configs_request(
    configs: Mapping[ConfigResource, Mapping[str, str | None]], validate_only: bool
) -> ac.AlterConfigsRequest:
    return ac.AlterConfigsRequest(
        resources=[
            ac.AlterConfigsResource(
                resource_type=int(res.type),
                resource_name=res.name,
                configs=[ac.AlterableConfig(name=k, value=v) for k, v in entries.items()],
            )
            for res, entries in configs.items()
        ],
        validate_only=validate_only,
    )


def incremental_alter_configs_request(
    changes: Mapping[ConfigResource, Sequence[AlterConfigOp]], validate_only: bool
) -> iac.IncrementalAlterConfigsRequest:
    return iac.IncrementalAlterConfigsRequest(
        resources=[
            iac.AlterConfigsResource(
                resource_type=int(res.type),
                resource_name=res.name,
                configs=[
                    iac.AlterableConfig(name=op.name, config_operation=int(op.op), value=op.value)
                    for op in ops
                ],
            )
            for res, ops in changes.items()
        ],
        validate_only=validate_only,
    )


def alter_configs_results(
    resp: ac.AlterConfigsResponse | iac.IncrementalAlterConfigsResponse,
    asked: Iterable[ConfigResource],
) -> dict[ConfigResource, AlterConfigsResult]:
    by_key = {_resource_key(r.resource_type, r.resource_name): r for r in resp.responses}
    out: dict[ConfigResource, AlterConfigsResult] = {}
    for res in asked:
        r = by_key.get(_resource_key(int(res.type), res.name))
        if r is not None:
            out[res] = AlterConfigsResult(res, error_or_none(r.error_code, r.error_message))
    return out


def resource_is_broker(res: ConfigResource) -> bool:
    return res.type in (ConfigResourceType.BROKER, ConfigResourceType.BROKER_LOGGER)


# --------------------------------------------------------------------------------------------
# Offsets and records
# --------------------------------------------------------------------------------------------


def list_offsets_request(
    specs: Mapping[TopicPartition, OffsetSpec],
    isolation_level: IsolationLevel,
    version: int,
    timeout_ms: int,
) -> lo.ListOffsetsRequest:
    by_topic: dict[str, list[lo.ListOffsetsPartition]] = {}
    for tp, spec in specs.items():
        if spec.timestamp == OffsetSpec.MAX_TIMESTAMP_TS and version < 7:
            raise unsupported("ListOffsets", "OffsetSpec.max_timestamp()", version)
        part = lo.ListOffsetsPartition(
            partition_index=tp.partition,
            timestamp=spec.timestamp,  # v0 asks for max_num_offsets=1, the default
        )
        by_topic.setdefault(tp.topic, []).append(part)
    if isolation_level is IsolationLevel.READ_COMMITTED and version < 2:
        raise unsupported("ListOffsets", "read_committed", version)
    return lo.ListOffsetsRequest(
        replica_id=-1,
        isolation_level=int(isolation_level),
        topics=[lo.ListOffsetsTopic(name=t, partitions=ps) for t, ps in by_topic.items()],
        timeout_ms=timeout_ms,
    )


def list_offsets_results(
    resp: lo.ListOffsetsResponse, version: int
) -> dict[TopicPartition, ListOffsetsResult]:
    out: dict[TopicPartition, ListOffsetsResult] = {}
    for t in resp.topics:
        for p in t.partitions:
            if version == 0:
                offset = p.old_style_offsets[0] if p.old_style_offsets else -1
                timestamp = -1
            else:
                offset, timestamp = p.offset, p.timestamp
            out[TopicPartition(t.name, p.partition_index)] = ListOffsetsResult(
                topic=t.name,
                partition=p.partition_index,
                offset=offset,
                timestamp=timestamp,
                leader_epoch=p.leader_epoch,
                error=error_or_none(p.error_code),
            )
    return out


def delete_records_request(
    offsets: Mapping[TopicPartition, int], timeout_ms: int
) -> dr.DeleteRecordsRequest:
    by_topic: dict[str, list[dr.DeleteRecordsPartition]] = {}
    for tp, off in offsets.items():
        by_topic.setdefault(tp.topic, []).append(
            dr.DeleteRecordsPartition(partition_index=tp.partition, offset=off)
        )
    return dr.DeleteRecordsRequest(
        topics=[dr.DeleteRecordsTopic(name=t, partitions=ps) for t, ps in by_topic.items()],
        timeout_ms=timeout_ms,
    )


def delete_records_results(
    resp: dr.DeleteRecordsResponse,
) -> dict[TopicPartition, DeleteRecordsResult]:
    out: dict[TopicPartition, DeleteRecordsResult] = {}
    for t in resp.topics:
        for p in t.partitions:
            out[TopicPartition(t.name, p.partition_index)] = DeleteRecordsResult(
                t.name, p.partition_index, p.low_watermark, error_or_none(p.error_code)
            )
    return out


def elect_leaders_request(
    election_type: int, partitions: Sequence[TopicPartition] | None, timeout_ms: int, version: int
) -> ElectLeadersRequest:
    if version < 1 and election_type != 0:
        raise unsupported("ElectLeaders", "an unclean election", version)
    topics: list[ElectLeadersTopicPartitions] | None = None
    if partitions is not None:
        by_topic: dict[str, list[int]] = {}
        for tp in partitions:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        topics = [ElectLeadersTopicPartitions(topic=t, partitions=ps) for t, ps in by_topic.items()]
    return ElectLeadersRequest(
        election_type=election_type, topic_partitions=topics, timeout_ms=timeout_ms
    )


def elect_leaders_results(resp: ElectLeadersResponse) -> dict[TopicPartition, ElectLeadersResult]:
    out: dict[TopicPartition, ElectLeadersResult] = {}
    for t in resp.replica_election_results:
        for p in t.partition_result:
            out[TopicPartition(t.topic, p.partition_id)] = ElectLeadersResult(
                t.topic, p.partition_id, error_or_none(p.error_code, p.error_message)
            )
    return out


# --------------------------------------------------------------------------------------------
# ACLs
# --------------------------------------------------------------------------------------------


def _pattern_for_version(pattern: PatternType, version: int, api: str) -> int:
    if version >= 1:
        return int(pattern)
    # v0 only knows literal names; ANY degrades to LITERAL, which is all v0 brokers hold.
    if pattern in (PatternType.LITERAL, PatternType.ANY):
        return int(PatternType.LITERAL)
    raise unsupported(api, f"pattern type {pattern.name}", version)


def describe_acls_request(flt: AclBindingFilter, version: int) -> dacl.DescribeAclsRequest:
    return dacl.DescribeAclsRequest(
        resource_type_filter=int(flt.pattern.resource_type),
        resource_name_filter=flt.pattern.name,
        pattern_type_filter=_pattern_for_version(flt.pattern.pattern_type, version, "DescribeAcls"),
        principal_filter=flt.principal,
        host_filter=flt.host,
        operation=int(flt.operation),
        permission_type=int(flt.permission_type),
    )


def delete_acls_request(filters: Sequence[AclBindingFilter], version: int) -> da.DeleteAclsRequest:
    return da.DeleteAclsRequest(
        filters=[
            da.DeleteAclsFilter(
                resource_type_filter=int(f.pattern.resource_type),
                resource_name_filter=f.pattern.name,
                pattern_type_filter=_pattern_for_version(
                    f.pattern.pattern_type, version, "DeleteAcls"
                ),
                principal_filter=f.principal,
                host_filter=f.host,
                operation=int(f.operation),
                permission_type=int(f.permission_type),
            )
            for f in filters
        ]
    )


def describe_acls_results(
    resp: dacl.DescribeAclsResponse,
) -> tuple[KafkaError | None, list[AclBinding]]:
    acls = [
        AclBinding.from_wire(
            r.resource_type,
            r.resource_name,
            r.pattern_type,
            a.principal,
            a.host,
            a.operation,
            a.permission_type,
        )
        for r in resp.resources
        for a in r.acls
    ]
    return error_or_none(resp.error_code, resp.error_message), acls


def create_acls_request(acls: Sequence[AclBinding], version: int) -> ca.CreateAclsRequest:
    return ca.CreateAclsRequest(
        creations=[
            ca.AclCreation(
                resource_type=int(a.pattern.resource_type),
                resource_name=a.pattern.name,
                resource_pattern_type=_pattern_for_version(
                    a.pattern.pattern_type, version, "CreateAcls"
                ),
                principal=a.principal,
                host=a.host,
                operation=int(a.operation),
                permission_type=int(a.permission_type),
            )
            for a in acls
        ]
    )


def create_acls_results(
    resp: ca.CreateAclsResponse, acls: Sequence[AclBinding]
) -> dict[AclBinding, AclCreationResult]:
    out: dict[AclBinding, AclCreationResult] = {}
    for acl, r in zip(acls, resp.results, strict=False):
        out[acl] = AclCreationResult(acl, error_or_none(r.error_code, r.error_message))
    return out


def delete_acls_results(
    resp: da.DeleteAclsResponse, filters: Sequence[AclBindingFilter]
) -> dict[AclBindingFilter, AclDeletionResult]:
    out: dict[AclBindingFilter, AclDeletionResult] = {}
    for flt, r in zip(filters, resp.filter_results, strict=False):
        deleted: list[AclBinding] = []
        failed: list[tuple[AclBinding, KafkaError]] = []
        for m in r.matching_acls:
            acl = AclBinding.from_wire(
                m.resource_type,
                m.resource_name,
                m.pattern_type,
                m.principal,
                m.host,
                m.operation,
                m.permission_type,
            )
            e = error_or_none(m.error_code, m.error_message)
            if e is None:
                deleted.append(acl)
            else:
                failed.append((acl, e))
        out[flt] = AclDeletionResult(
            filter=flt,
            deleted=tuple(deleted),
            match_errors=tuple(failed),
            error=error_or_none(r.error_code, r.error_message),
        )
    return out
