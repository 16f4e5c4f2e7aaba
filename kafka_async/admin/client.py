"""``AdminClient``: topics, partitions, groups, offsets, configs, records, ACLs, SCRAM users,
and (delegated to one module per topic) client quotas, log dirs, features, the metadata
quorum, transactions and producers, and share groups.

Routing follows Kafka's rules: topic creation/deletion and partition changes go to the
controller when metadata names one (any broker otherwise; modern brokers forward), group
operations go to the group's coordinator (FindCoordinator), ``list_offsets`` and
``delete_records`` go to each partition's leader, one request per leader, sent
concurrently. Broker configs go to that broker.

Every call has one deadline (``timeout_ms``, default ``default_api_timeout_ms``). Routing
errors (NOT_CONTROLLER, NOT_COORDINATOR, NOT_LEADER_OR_FOLLOWER, a dropped connection, ...)
are retried against refreshed metadata with backoff until that deadline; every other error
is final and reported *per item* in the returned :class:`~kafka_async.admin.ResultMap`, so
one failed topic never hides the others. ``raise_on_error=True`` raises the first item
error instead. Request bodies and result mapping live in the pure ``mapping`` module (and
the topic modules), argument checks in ``checks``; the routing, the deadlines, the backoff and
the retry rules in the cluster layer's :class:`~kafka_async.cluster.routing.Router`, which
this client and its topic modules send every request through.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from ..cluster.client import ClusterClient
from ..cluster.lifecycle import Lifecycle
from ..cluster.routing import (
    COORDINATOR_LOADING,
    COORDINATOR_MOVED,
    Deadline,
    Router,
    error_code,
)
from ..cluster.tasks import BackgroundTasks
from ..errors import (
    ConfigError,
    IncompatibleBrokerVersionError,
    KafkaError,
    UnsupportedVersionError,
    error_for_code,
)
from ..net.config import ClientConfig, with_bootstrap_servers
from ..net.connection import StreamFactory
from ..observability.telemetry import MetricsPusher, admin_pusher, close_budget
from ..protocol import apis
from ..protocol.apis.alter_configs import AlterConfigsResponse
from ..protocol.apis.alter_user_scram_credentials import (
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
    ScramCredentialDeletion,
    ScramCredentialUpsertion,
)
from ..protocol.apis.create_acls import CreateAclsResponse
from ..protocol.apis.delete_acls import DeleteAclsResponse
from ..protocol.apis.describe_acls import DescribeAclsResponse
from ..protocol.apis.describe_cluster import DescribeClusterRequest
from ..protocol.apis.describe_user_scram_credentials import DescribeUserScramCredentialsResponse
from ..protocol.apis.incremental_alter_configs import IncrementalAlterConfigsResponse
from ..protocol.apis.metadata import MetadataResponse
from ..protocol.apis.offset_fetch import OffsetFetchResponse
from ..protocol.schema import Api, ReqT
from ..structs import ClientState, OffsetAndMetadata, TopicPartition
from . import (
    checks,
    cluster_ops,
    delegation_tokens,
    group_members,
    quotas,
    scram,
    share_groups,
    transactions,
)
from . import mapping as m
from . import reassignments as ra
from .cluster_ops import (
    BrokerLogDirs,
    FeatureMetadata,
    FeatureUpdate,
    FeatureUpdateResult,
    QuorumInfo,
)
from .config import AdminConfig, AdminSettings
from .delegation_tokens import DelegationToken
from .group_members import MemberToRemove, RemoveMemberResult
from .quotas import (
    ClientQuotaAlteration,
    ClientQuotaAlterResult,
    ClientQuotaEntity,
    ClientQuotaFilter,
)
from .reassignments import PartitionReassignment, ReassignmentResult
from .results import (
    AclCreationResult,
    AclDeletionResult,
    AlterConfigsResult,
    ClusterDescription,
    ConfigDescription,
    ConsumerGroupDescription,
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
    PartitionResult,
    ResultMap,
    TopicDescription,
    TopicListing,
)
from .scram import ScramDeletion, ScramUpsertion, UserScramCredentials, UserScramResult
from .share_groups import ShareGroupDescription, ShareGroupOffset, ShareGroupTopicResult
from .transactions import (
    AbortTransactionSpec,
    FenceProducerResult,
    PartitionProducers,
    TransactionDescription,
    TransactionListing,
)
from .types import (
    AclBinding,
    AclBindingFilter,
    AlterConfigOp,
    ConfigResource,
    ConfigResourceType,
    ElectionType,
    IsolationLevel,
    NewPartitions,
    NewTopic,
    OffsetSpec,
    OffsetSpecLike,
    validate_topic_name,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["AdminClient"]

log = logging.getLogger("kafka_async.admin")

K = TypeVar("K")
R = TypeVar("R")
_AlterResp = TypeVar("_AlterResp", AlterConfigsResponse, IncrementalAlterConfigsResponse)


class AdminClient:
    """Administer a Kafka cluster.

    ::

        async with AdminClient(bootstrap_servers="localhost:9092") as admin:
            results = await admin.create_topics([NewTopic("orders", num_partitions=6)])
            results.raise_first()

    Config (typed as :class:`~kafka_async.admin.config.AdminSettings`): every
    :class:`~kafka_async.net.config.ClientConfig` setting
    (``bootstrap_servers``, ``client_id``, ``request_timeout_ms``, security settings, ...)
    plus the admin client's own:

    .. settings:admin begin (make generate writes this list from admin/settings.py)

    * ``default_api_timeout_ms`` (60000): deadline of an admin call, retries included, when it
      passes no timeout_ms.
    * ``enable_metrics_push`` (True): push the metrics a broker's client-metrics subscription asks
      for (KIP-714).
    * ``client_id`` defaults to "kafka-async-admin" here.

    .. settings:admin end

    ``stream_factory`` replaces the TCP transport (tests run the client over in-memory
    fake brokers with it).
    """

    def __init__(
        self,
        bootstrap_servers: str | Sequence[str] | None = None,
        /,
        *,
        stream_factory: StreamFactory | None = None,
        **config: Unpack[AdminSettings],
    ) -> None:
        cfg = AdminConfig.from_kwargs(**with_bootstrap_servers(bootstrap_servers, config))
        #: The shared connection settings.
        self.config: ClientConfig = cfg.client
        self.default_api_timeout_ms = cfg.default_api_timeout_ms
        self._enable_metrics_push = cfg.enable_metrics_push
        self._cluster = ClusterClient(self.config, stream_factory=stream_factory)
        self._life = Lifecycle("admin client")
        #: The background group of the KIP-714 metrics push loop (``enable_metrics_push``;
        #: the admin client has no other background task).
        self._tg: BackgroundTasks | None = None
        self._telemetry: MetricsPusher | None = None
        #: Where requests go, with the deadline, backoff and retry rules of every call.
        self._router = Router(
            self._cluster,
            retry_backoff_ms=self.config.retry_backoff_ms,
            default_timeout_ms=self.default_api_timeout_ms,
            check_open=self._life.check,
        )

    def __repr__(self) -> str:
        state = self._life.state.value
        return f"<AdminClient {self.config.bootstrap_servers!r} {state}>"

    @property
    def router(self) -> Router:
        """The router this client sends with (the cluster layer's
        :class:`~kafka_async.cluster.routing.Router`): for a request the admin client has no
        method for, with the same deadline, backoff and retry rules."""
        return self._router

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def state(self) -> ClientState:
        """Where the admin client is in its life (``ClientState.RUNNING`` between start and
        close)."""
        return self._life.state

    async def start(self) -> None:
        """Connect to the cluster (fetches metadata); once. :meth:`close` may run in any
        task and inside any cancel scope."""
        await self._life.start(self._start, self._stop_background)

    async def _start(self) -> None:
        await self._cluster.start()
        if self._enable_metrics_push:
            tg = self._tg = BackgroundTasks("admin client", on_error=self._life.fail)
            await tg.__aenter__()
            self._telemetry = admin_pusher(self._cluster, client_id=self.config.client_id)
            await tg.start(self._telemetry.run)

    async def _stop_background(self) -> None:
        if self._tg is not None:
            await self._tg.aclose()
        await self._cluster.close()

    async def close(self) -> None:
        """Close every connection; always returns (a concurrent call returns once the
        connections are closed). With ``enable_metrics_push`` the last metrics push
        (KIP-714, marked terminating) goes first, within the request timeout and at most
        5 s."""
        await self._life.close(self._close)

    async def _close(self) -> None:
        if self._telemetry is not None:
            # While the connections are open; bounded like a request.
            deadline = anyio.current_time() + self.config.request_timeout_ms / 1000
            await self._telemetry.terminate(close_budget(deadline))
        await self._stop_background()

    async def __aenter__(self) -> AdminClient:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def statistics(self) -> dict[str, Any]:
        """State, requests sent per API, retries, error codes seen, requests in flight and
        the cluster client's statistics (plain values, like every client's
        ``statistics()``)."""
        running = self._life.running
        return {
            "state": self._life.state.value,
            "requests": dict(self._router.requests),
            "retries": self._router.retries,
            "errors_by_code": dict(self._router.errors_by_code),
            "in_flight": self._router.in_flight,
            "known_brokers": len(self._cluster.metadata.brokers) if running else 0,
            "cluster": self._cluster.statistics() if running else None,
        }

    # -- topics ----------------------------------------------------------------------------

    async def create_topics(
        self,
        new_topics: Sequence[NewTopic],
        *,
        timeout_ms: int | None = None,
        validate_only: bool = False,
        raise_on_error: bool = False,
    ) -> ResultMap[str, CreateTopicResult]:
        """Create topics; per-topic results (TOPIC_ALREADY_EXISTS is an item error)."""
        if isinstance(new_topics, NewTopic):
            new_topics = [new_topics]
        topics = list(new_topics)
        for t in topics:
            if not isinstance(t, NewTopic):
                raise ConfigError(f"create_topics expects NewTopic values, got {t!r}")
        checks.unique((t.name for t in topics), "topic")
        deadline = self._router.deadline(timeout_ms)
        by_name = {t.name: t for t in topics}
        broker_timeout = deadline.remaining_ms()
        got = await self._router.per_controller(
            apis.CREATE_TOPICS,
            list(by_name),
            lambda names, v: m.create_topics_request(
                [by_name[n] for n in names], broker_timeout, validate_only, v
            ),
            m.create_topics_results,
            lambda r: error_code(r.error),
            deadline,
            lambda n, e: CreateTopicResult(n, error=e),
        )
        self._cluster.request_metadata_update()
        return self._finish(ResultMap(got), raise_on_error)

    async def delete_topics(
        self,
        topics: Sequence[str],
        *,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[str, DeleteTopicResult]:
        """Delete topics by name; per-topic results."""
        names = checks.topic_names(topics)
        deadline = self._router.deadline(timeout_ms)
        broker_timeout = deadline.remaining_ms()
        got = await self._router.per_controller(
            apis.DELETE_TOPICS,
            names,
            lambda ns, v: m.delete_topics_request(ns, broker_timeout, v),
            m.delete_topics_results,
            lambda r: error_code(r.error),
            deadline,
            lambda n, e: DeleteTopicResult(n, error=e),
        )
        self._cluster.request_metadata_update()
        return self._finish(ResultMap(got), raise_on_error)

    async def create_partitions(
        self,
        new_partitions: Mapping[str, NewPartitions | int],
        *,
        timeout_ms: int | None = None,
        validate_only: bool = False,
        raise_on_error: bool = False,
    ) -> ResultMap[str, CreatePartitionsResult]:
        """Grow topics to the given total partition counts."""
        if not isinstance(new_partitions, Mapping):
            raise ConfigError("create_partitions expects a mapping of topic -> NewPartitions")
        specs: dict[str, NewPartitions] = {}
        for name, spec in new_partitions.items():
            validate_topic_name(name)
            specs[name] = spec if isinstance(spec, NewPartitions) else NewPartitions(spec)
        deadline = self._router.deadline(timeout_ms)
        broker_timeout = deadline.remaining_ms()
        got = await self._router.per_controller(
            apis.CREATE_PARTITIONS,
            list(specs),
            lambda ns, v: m.create_partitions_request(
                {n: specs[n] for n in ns}, broker_timeout, validate_only
            ),
            m.create_partitions_results,
            lambda r: error_code(r.error),
            deadline,
            lambda n, e: CreatePartitionsResult(n, error=e),
        )
        self._cluster.request_metadata_update()
        return self._finish(ResultMap(got), raise_on_error)

    async def _metadata(self, topics: Sequence[str] | None, deadline: Deadline) -> MetadataResponse:
        async def call() -> tuple[int, MetadataResponse]:
            return await self._router.send(
                None, apis.METADATA, lambda v: m.metadata_request(topics, v), deadline
            )

        _, resp = await self._router.with_retries(deadline, call, refresh=False)
        return resp

    async def list_topics(
        self, *, include_internal: bool = False, timeout_ms: int | None = None
    ) -> dict[str, TopicListing]:
        """Every topic of the cluster, by name (sorted)."""
        resp = await self._metadata(None, self._router.deadline(timeout_ms))
        return m.topic_listings(resp, include_internal)

    async def describe_topics(
        self,
        topics: Sequence[str] | None = None,
        *,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[str, TopicDescription]:
        """Partitions, leaders, replicas and ISR of ``topics`` (None: every topic).

        A topic that does not exist gets UNKNOWN_TOPIC_OR_PARTITION as its item error.
        """
        names = None if topics is None else checks.topic_names(topics)
        resp = await self._metadata(names, self._router.deadline(timeout_ms))
        return self._finish(ResultMap(m.topic_descriptions(resp, names)), raise_on_error)

    async def describe_cluster(self, *, timeout_ms: int | None = None) -> ClusterDescription:
        """Cluster id, controller and brokers (DescribeCluster, or Metadata on old brokers)."""
        deadline = self._router.deadline(timeout_ms)
        try:
            _, resp = await self._router.send(
                None, apis.DESCRIBE_CLUSTER, lambda v: DescribeClusterRequest(), deadline
            )
        except IncompatibleBrokerVersionError:
            return m.cluster_from_metadata(await self._metadata([], deadline))
        if resp.error_code:
            self._router.note_errors([resp.error_code])
            raise error_for_code(resp.error_code, resp.error_message)
        return m.cluster_from_describe_cluster(resp)

    # -- groups ----------------------------------------------------------------------------

    async def list_groups(
        self,
        *,
        states: Sequence[str] | None = None,
        types: Sequence[str] | None = None,
        timeout_ms: int | None = None,
    ) -> list[GroupListing]:
        """Every group of every broker (ListGroups is answered per coordinator), sorted by id.

        ``states`` (e.g. ``["Stable", "Empty"]``) and ``types`` (``["classic"]``) filter on
        brokers that support it. A broker that fails makes the whole call raise, since its
        groups would silently be missing otherwise.
        """
        deadline = self._router.deadline(timeout_ms)

        # Each broker's answer is its listings or its error (the router retries a
        # coordinator still loading and a dropped connection).
        async def send(node: int) -> list[GroupListing] | KafkaError:
            _, resp = await self._router.send(
                node, apis.LIST_GROUPS, lambda v: m.list_groups_request(states, types, v), deadline
            )
            if resp.error_code:
                return error_for_code(resp.error_code)
            return m.group_listings(resp, node)

        answers = await self._router.per_broker(
            None,
            send,
            lambda node, e: e,
            lambda r: error_code(r) if isinstance(r, KafkaError) else 0,
            deadline,
            retry_codes=COORDINATOR_LOADING,
        )
        found: dict[str, GroupListing] = {}
        for node in sorted(answers):
            got = answers[node]
            if isinstance(got, KafkaError):
                raise got
            for g in got:
                found.setdefault(g.group_id, g)
        return [found[g] for g in sorted(found)]

    async def describe_groups(
        self,
        group_ids: Sequence[str],
        *,
        include_authorized_operations: bool = False,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[str, GroupDescription]:
        """State, protocol and members (with decoded assignments) of each group."""
        groups = checks.group_ids(group_ids)
        deadline = self._router.deadline(timeout_ms)

        async def send(node: int, gs: Sequence[str]) -> Mapping[str, GroupDescription]:
            _, resp = await self._router.send(
                node,
                apis.DESCRIBE_GROUPS,
                lambda v: m.describe_groups_request(gs, include_authorized_operations, v),
                deadline,
            )
            return m.group_descriptions(resp, node, include_authorized_operations)

        got = await self._router.per_coordinator(
            groups,
            send,
            lambda r: error_code(r.error),
            deadline,
            lambda g, e: GroupDescription(g, error=e),
        )
        return self._finish(ResultMap(got), raise_on_error)

    async def describe_consumer_groups(
        self,
        group_ids: Sequence[str],
        *,
        include_authorized_operations: bool = False,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[str, ConsumerGroupDescription]:
        """Consumer groups of either protocol, in one shape.

        Groups on the consumer protocol (KIP-848) come from ConsumerGroupDescribe: member
        epochs, assignments and target assignments, subscriptions, the broker's assignor.
        Classic groups (the broker answers GROUP_ID_NOT_FOUND to ConsumerGroupDescribe for
        them), every group on a broker without ConsumerGroupDescribe, and every group on a
        broker that advertises it but answers UNSUPPORTED_VERSION (the consumer protocol not
        enabled: Apache Kafka 3.9 does this) are described with DescribeGroups instead, as
        the Java client falls back; ``group_type`` tells which.
        """
        groups = checks.group_ids(group_ids)
        deadline = self._router.deadline(timeout_ms)

        async def send(node: int, gs: Sequence[str]) -> Mapping[str, ConsumerGroupDescription]:
            request = m.consumer_group_descriptions_request(gs, include_authorized_operations)
            _, resp = await self._router.send(
                node, apis.CONSUMER_GROUP_DESCRIBE, lambda _v: request, deadline
            )
            return m.consumer_group_descriptions(resp, node, include_authorized_operations)

        try:
            got = await self._router.per_coordinator(
                groups,
                send,
                lambda r: error_code(r.error),
                deadline,
                lambda g, e: ConsumerGroupDescription(g, error=e),
            )
        except (IncompatibleBrokerVersionError, UnsupportedVersionError):
            got = {}
        classic = [
            g
            for g in groups
            if g not in got
            or isinstance(got[g].error, IncompatibleBrokerVersionError)
            or error_code(got[g].error) in (m.GROUP_ID_NOT_FOUND, UnsupportedVersionError.code)
        ]
        if classic:
            described = await self.describe_groups(
                classic,
                include_authorized_operations=include_authorized_operations,
                timeout_ms=deadline.remaining_ms(),
            )
            for g in classic:
                got[g] = m.consumer_group_from_classic(described[g])
        return self._finish(ResultMap({g: got[g] for g in groups}), raise_on_error)

    async def delete_groups(
        self,
        group_ids: Sequence[str],
        *,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[str, DeleteGroupResult]:
        """Delete empty groups (a group with members gets NON_EMPTY_GROUP)."""
        groups = checks.group_ids(group_ids)
        deadline = self._router.deadline(timeout_ms)

        async def send(node: int, gs: Sequence[str]) -> Mapping[str, DeleteGroupResult]:
            _, resp = await self._router.send(
                node, apis.DELETE_GROUPS, lambda v: m.delete_groups_request(gs), deadline
            )
            return m.delete_groups_results(resp)

        got = await self._router.per_coordinator(
            groups,
            send,
            lambda r: error_code(r.error),
            deadline,
            lambda g, e: DeleteGroupResult(g, error=e),
        )
        return self._finish(ResultMap(got), raise_on_error)

    async def list_consumer_group_offsets(
        self,
        group_id: str,
        partitions: Sequence[TopicPartition] | None = None,
        *,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[TopicPartition, GroupOffset]:
        """Committed offsets of a group (all of its partitions when ``partitions`` is None).

        A group-level error (e.g. GROUP_AUTHORIZATION_FAILED) raises; partition-level ones
        are item errors.
        """
        tps = (
            None
            if partitions is None
            else checks.unique((checks.topic_partition(p) for p in partitions), "partition")
        )
        deadline = self._router.deadline(timeout_ms)

        def moved(version: int, resp: OffsetFetchResponse) -> bool:
            group_error, got = m.offset_fetch_results(resp, group_id, version)
            if error_code(group_error) in COORDINATOR_MOVED | COORDINATOR_LOADING:
                return True
            # Partition-level NOT_COORDINATOR: the group moved while answering.
            return group_error is None and any(
                error_code(r.error) in COORDINATOR_MOVED for r in got.values()
            )

        version, resp = await self._router.to_coordinator(
            checks.group_id(group_id),
            apis.OFFSET_FETCH,
            lambda v: m.offset_fetch_request(group_id, tps, v),
            deadline,
            moved=moved,
        )
        group_error, got = m.offset_fetch_results(resp, group_id, version)
        if group_error is not None:
            self._router.note_errors([error_code(group_error)])
            raise group_error
        self._router.note_errors(error_code(r.error) for r in got.values())
        if tps is not None:
            got = {tp: got.get(tp, GroupOffset(tp.topic, tp.partition)) for tp in tps}
        else:
            got = {tp: got[tp] for tp in sorted(got)}
        return self._finish(ResultMap(got), raise_on_error)

    async def alter_consumer_group_offsets(
        self,
        group_id: str,
        offsets: Mapping[TopicPartition, int | OffsetAndMetadata],
        *,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[TopicPartition, PartitionResult]:
        """Set a group's committed offsets. Kafka allows this only while the group has no
        active members (otherwise UNKNOWN_MEMBER_ID / REBALANCE_IN_PROGRESS per partition)."""
        if not isinstance(offsets, Mapping) or not offsets:
            raise ConfigError("alter_consumer_group_offsets expects a non-empty mapping")
        commits: dict[TopicPartition, OffsetAndMetadata] = {}
        for key, value in offsets.items():
            tp = checks.topic_partition(key)
            om = value if isinstance(value, OffsetAndMetadata) else OffsetAndMetadata(value)
            if not isinstance(om.offset, int) or om.offset < 0:
                raise ConfigError(f"offset for {tp} must be a non-negative int, got {om.offset!r}")
            commits[tp] = om
        deadline = self._router.deadline(timeout_ms)
        _, resp = await self._router.to_coordinator(
            checks.group_id(group_id),
            apis.OFFSET_COMMIT,
            lambda v: m.offset_commit_request(group_id, commits, v),
            deadline,
            moved=lambda v, r: any(
                error_code(p.error) in COORDINATOR_MOVED | COORDINATOR_LOADING
                for p in m.partition_results(r.topics).values()
            ),
        )
        got = m.partition_results(resp.topics)
        self._router.note_errors(error_code(r.error) for r in got.values())
        out = {tp: got.get(tp, PartitionResult(tp.topic, tp.partition)) for tp in commits}
        return self._finish(ResultMap(out), raise_on_error)

    async def delete_consumer_group_offsets(
        self,
        group_id: str,
        partitions: Sequence[TopicPartition],
        *,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[TopicPartition, PartitionResult]:
        """Remove a group's committed offsets for some partitions (OffsetDelete, Kafka 2.4+).

        Partitions the group is still subscribed to get GROUP_SUBSCRIBED_TO_TOPIC.
        """
        tps = checks.unique((checks.topic_partition(p) for p in partitions), "partition")
        if not tps:
            raise ConfigError("delete_consumer_group_offsets needs at least one partition")
        deadline = self._router.deadline(timeout_ms)
        _, resp = await self._router.to_coordinator(
            checks.group_id(group_id),
            apis.OFFSET_DELETE,
            lambda v: m.offset_delete_request(group_id, tps),
            deadline,
            moved=lambda v, r: r.error_code in COORDINATOR_MOVED | COORDINATOR_LOADING,
        )
        if resp.error_code:
            self._router.note_errors([resp.error_code])
            raise error_for_code(resp.error_code)
        got = m.partition_results(resp.topics)
        self._router.note_errors(error_code(r.error) for r in got.values())
        out = {tp: got.get(tp, PartitionResult(tp.topic, tp.partition)) for tp in tps}
        return self._finish(ResultMap(out), raise_on_error)

    async def remove_members_from_consumer_group(
        self,
        group_id: str,
        members: Sequence[str | MemberToRemove] | None = None,
        *,
        reason: str | None = None,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[str, RemoveMemberResult]:
        """Remove members from a consumer group, as Java's ``removeMembersFromConsumerGroup``
        (LeaveGroup v3+, Kafka 2.4+, sent for them): ``members`` are static members'
        instance ids (``group.instance.id``) or :class:`MemberToRemove` values; None removes
        every member the group has now (described first). Their partitions are reassigned at
        once instead of after a static member's session timeout. Results are keyed by
        instance id (member id for a dynamic member); an unknown member gets
        UNKNOWN_MEMBER_ID. ``reason`` is logged by the broker (LeaveGroup v5+)."""
        group = checks.group_id(group_id)
        deadline = self._router.deadline(timeout_ms)
        if members is None:
            described = await self.describe_consumer_groups(
                [group], timeout_ms=deadline.remaining_ms(), raise_on_error=True
            )
            chosen = [
                MemberToRemove(group_instance_id=mb.group_instance_id, member_id=mb.member_id)
                for mb in described[group].members
            ]
        else:
            chosen = group_members.members_to_remove(members)
            if not chosen:
                raise ConfigError("remove_members_from_consumer_group: no member named")
        got = await group_members.remove_members(
            self._router, group, chosen, reason=reason, deadline=deadline
        )
        return self._finish(got, raise_on_error)

    # -- configs ---------------------------------------------------------------------------

    def _resources(self, resources: Iterable[ConfigResource]) -> list[ConfigResource]:
        out = checks.unique(resources, "config resource")
        for r in out:
            if not isinstance(r, ConfigResource):
                raise ConfigError(f"expected ConfigResource values, got {r!r}")
        return out

    async def describe_configs(
        self,
        resources: Sequence[ConfigResource],
        *,
        config_names: Sequence[str] | None = None,
        include_synonyms: bool = False,
        include_documentation: bool = False,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[ConfigResource, ConfigDescription]:
        """Config entries of topics, brokers, broker loggers or groups."""
        rs = self._resources(resources)
        deadline = self._router.deadline(timeout_ms)

        async def send(
            node: int | None, batch: Sequence[ConfigResource]
        ) -> Mapping[ConfigResource, ConfigDescription]:
            version, resp = await self._router.send(
                node,
                apis.DESCRIBE_CONFIGS,
                lambda v: m.describe_configs_request(
                    batch, config_names, include_synonyms, include_documentation, v
                ),
                deadline,
            )
            return m.describe_configs_results(resp, batch, version)

        got = await self._router.per_node(
            rs,
            lambda r: r.broker_id,
            send,
            lambda r, e: ConfigDescription(r, error=e),
            lambda r: error_code(r.error),
            deadline,
        )
        return self._finish(ResultMap(got), raise_on_error)

    async def list_config_resources(
        self,
        resource_types: Sequence[ConfigResourceType] = (),
        *,
        timeout_ms: int | None = None,
    ) -> list[ConfigResource]:
        """The config resources the cluster has of ``resource_types`` (none given: every
        type the broker lists: topics, brokers, groups, client metrics), sorted by type and
        name (ListConfigResources, KIP-1142, Kafka 4.1+). A broker with only
        ListClientMetricsResources (Kafka 3.7-4.0) answers for ``CLIENT_METRICS`` alone;
        otherwise ``IncompatibleBrokerVersionError`` names what the broker lacks."""
        return await group_members.list_config_resources(
            self._router, resource_types, self._router.deadline(timeout_ms)
        )

    async def _alter(
        self,
        api: Api[ReqT, _AlterResp],
        rs: Sequence[ConfigResource],
        build: Callable[[Sequence[ConfigResource]], ReqT],
        deadline: Deadline,
    ) -> dict[ConfigResource, AlterConfigsResult]:
        async def send(
            node: int | None, batch: Sequence[ConfigResource]
        ) -> Mapping[ConfigResource, AlterConfigsResult]:
            _, resp = await self._router.send(node, api, lambda v: build(batch), deadline)
            return m.alter_configs_results(resp, batch)

        return await self._router.per_node(
            rs,
            lambda r: r.broker_id,
            send,
            lambda r, e: AlterConfigsResult(r, e),
            lambda r: error_code(r.error),
            deadline,
        )

    async def alter_configs(
        self,
        configs: Mapping[ConfigResource, Mapping[str, str | None]],
        *,
        validate_only: bool = False,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[ConfigResource, AlterConfigsResult]:
        """Replace the whole dynamic config of each resource (deprecated by Kafka in favour of
        :meth:`incremental_alter_configs`; entries not given are reset to defaults)."""
        if not isinstance(configs, Mapping):
            raise ConfigError("alter_configs expects a mapping of ConfigResource -> {name: value}")
        rs = self._resources(configs)
        clean: dict[ConfigResource, dict[str, str | None]] = {}
        for r in rs:
            entries = configs[r]
            if not isinstance(entries, Mapping):
                raise ConfigError(f"configs for {r} must be a mapping of name -> value")
            clean[r] = dict(entries)
        got = await self._alter(
            apis.ALTER_CONFIGS,
            rs,
            lambda batch: m.alter_configs_request({r: clean[r] for r in batch}, validate_only),
            self._router.deadline(timeout_ms),
        )
        return self._finish(ResultMap(got), raise_on_error)

    async def incremental_alter_configs(
        self,
        changes: Mapping[ConfigResource, Sequence[AlterConfigOp] | Mapping[str, str | None]],
        *,
        validate_only: bool = False,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[ConfigResource, AlterConfigsResult]:
        """Change single config entries. Per resource give a list of
        :class:`AlterConfigOp`, or a mapping ``{name: value}`` where None resets to default."""
        if not isinstance(changes, Mapping):
            raise ConfigError("incremental_alter_configs expects a mapping of ConfigResource")
        rs = self._resources(changes)
        ops: dict[ConfigResource, list[AlterConfigOp]] = {}
        for r in rs:
            spec = changes[r]
            if isinstance(spec, Mapping):
                ops[r] = [
                    AlterConfigOp.delete(k) if v is None else AlterConfigOp.set(k, v)
                    for k, v in spec.items()
                ]
            else:
                items = list(spec)
                for op in items:
                    if not isinstance(op, AlterConfigOp):
                        raise ConfigError(f"expected AlterConfigOp values for {r}, got {op!r}")
                ops[r] = items
            if not ops[r]:
                raise ConfigError(f"no config changes given for {r}")
        got = await self._alter(
            apis.INCREMENTAL_ALTER_CONFIGS,
            rs,
            lambda batch: m.incremental_alter_configs_request(
                {r: ops[r] for r in batch}, validate_only
            ),
            self._router.deadline(timeout_ms),
        )
        return self._finish(ResultMap(got), raise_on_error)

    # -- offsets and records ---------------------------------------------------------------

    async def list_offsets(
        self,
        specs: Mapping[TopicPartition, OffsetSpecLike],
        *,
        isolation_level: IsolationLevel = IsolationLevel.READ_UNCOMMITTED,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[TopicPartition, ListOffsetsResult]:
        """Look up offsets per partition: ``OffsetSpec.earliest()``, ``.latest()``,
        ``.max_timestamp()``, ``.for_timestamp(ms)`` (or "earliest"/"latest"/a ms int).

        For a timestamp with no record at or after it the result has ``offset == -1``.
        """
        if not isinstance(specs, Mapping):
            raise ConfigError("list_offsets expects a mapping of TopicPartition -> OffsetSpec")
        clean = {checks.topic_partition(tp): OffsetSpec.coerce(s) for tp, s in specs.items()}
        level = IsolationLevel(isolation_level)
        deadline = self._router.deadline(timeout_ms)

        async def send(
            node: int, tps: Sequence[TopicPartition]
        ) -> Mapping[TopicPartition, ListOffsetsResult]:
            need_max = any(clean[tp].timestamp == OffsetSpec.MAX_TIMESTAMP_TS for tp in tps)
            version, resp = await self._router.send(
                node,
                apis.LIST_OFFSETS,
                lambda v: m.list_offsets_request(
                    {tp: clean[tp] for tp in tps}, level, v, deadline.remaining_ms()
                ),
                deadline,
                min_version=7 if need_max else None,
            )
            return m.list_offsets_results(resp, version)

        got = await self._router.per_leader(
            list(clean),
            send,
            lambda r: error_code(r.error),
            deadline,
            lambda tp, e: ListOffsetsResult(tp.topic, tp.partition, error=e),
        )
        return self._finish(ResultMap(got), raise_on_error)

    async def delete_records(
        self,
        before_offsets: Mapping[TopicPartition, int],
        *,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[TopicPartition, DeleteRecordsResult]:
        """Delete every record before the given offset of each partition (-1: up to the high
        watermark); results carry each partition's new low watermark."""
        if not isinstance(before_offsets, Mapping):
            raise ConfigError("delete_records expects a mapping of TopicPartition -> offset")
        clean: dict[TopicPartition, int] = {}
        for key, off in before_offsets.items():
            tp = checks.topic_partition(key)
            if not isinstance(off, int) or isinstance(off, bool) or off < -1:
                raise ConfigError(f"offset for {tp} must be >= 0 (or -1 for the end), got {off!r}")
            clean[tp] = off
        deadline = self._router.deadline(timeout_ms)

        async def send(
            node: int, tps: Sequence[TopicPartition]
        ) -> Mapping[TopicPartition, DeleteRecordsResult]:
            _, resp = await self._router.send(
                node,
                apis.DELETE_RECORDS,
                lambda v: m.delete_records_request(
                    {tp: clean[tp] for tp in tps}, deadline.remaining_ms()
                ),
                deadline,
            )
            return m.delete_records_results(resp)

        got = await self._router.per_leader(
            list(clean),
            send,
            lambda r: error_code(r.error),
            deadline,
            lambda tp, e: DeleteRecordsResult(tp.topic, tp.partition, error=e),
        )
        return self._finish(ResultMap(got), raise_on_error)

    # -- leaders ---------------------------------------------------------------------------

    async def elect_leaders(
        self,
        partitions: Iterable[TopicPartition] | None = None,
        *,
        election_type: ElectionType = ElectionType.PREFERRED,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[TopicPartition, ElectLeadersResult]:
        """Elect leaders (ElectLeaders): by default make each partition's preferred replica
        (the first of its replicas) its leader again, e.g. after a broker came back.

        ``partitions`` None means every partition of the cluster (the broker answers for
        those whose leader it changed or could not change). A partition whose preferred
        replica already leads gets ElectionNotNeededError as its item error; one whose
        preferred replica is down or out of sync gets PreferredLeaderNotAvailableError.
        """
        tps = None if partitions is None else [checks.topic_partition(p) for p in partitions]
        if tps is not None:
            if not tps:
                raise ConfigError("elect_leaders needs at least one partition (or None: all)")
            checks.unique(tps, "partition")
        kind = ElectionType(election_type)
        deadline = self._router.deadline(timeout_ms)

        def moved_or_top(resp: Any) -> int:
            # The election is the controller's: a ZooKeeper-mode broker that is not the
            # controller answers NOT_CONTROLLER for every partition (no top-level error; v0
            # has none at all), so that is resent to the controller named by fresh metadata.
            code = int(getattr(resp, "error_code", 0) or 0)
            if code:
                return code
            results = resp.replica_election_results
            items = {p.error_code for t in results for p in t.partition_result}
            return m.NOT_CONTROLLER if m.NOT_CONTROLLER in items else 0

        version, resp = await self._router.to_controller(
            apis.ELECT_LEADERS,
            lambda v: m.elect_leaders_request(int(kind), tps, deadline.remaining_ms(), v),
            moved_or_top,
            deadline,
        )
        code = getattr(resp, "error_code", 0) if version >= 1 else 0
        if code:
            raise error_for_code(code)
        got = m.elect_leaders_results(resp)
        self._router.note_errors(error_code(r.error) for r in got.values())
        self._cluster.request_metadata_update()
        if tps is not None:
            for tp in tps:
                if tp not in got:
                    got[tp] = ElectLeadersResult(
                        tp.topic, tp.partition, error_for_code(-1, "no result for this partition")
                    )
        return self._finish(ResultMap(got), raise_on_error)

    # -- partition reassignments -------------------------------------------------------

    async def alter_partition_reassignments(
        self,
        reassignments: Mapping[TopicPartition, Sequence[int] | None],
        *,
        allow_replication_factor_change: bool = True,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[TopicPartition, ReassignmentResult]:
        """Move partitions to other brokers (AlterPartitionReassignments, KIP-455).

        ``reassignments`` maps each partition to its target replicas (broker ids, the first
        one preferred as leader), or to None to cancel that partition's move in progress.
        The controller accepts or refuses each partition at once and carries the move out
        in the background: new replicas copy the log and join the ISR, then the old ones
        leave (a leader that is not a target hands leadership to one first). Watch it with
        :meth:`list_partition_reassignments`; producers and consumers follow the leader as
        it moves.

        ``allow_replication_factor_change=False`` makes the controller refuse a target
        whose length differs from the partition's replica count (Kafka 3.9+ brokers).
        Per-partition refusals (an unknown broker id: InvalidReplicaAssignmentError; no
        move to cancel: NoReassignmentInProgressError) are item errors.
        """
        targets = ra.check_targets(reassignments)
        if not isinstance(allow_replication_factor_change, bool):
            raise ConfigError(
                "allow_replication_factor_change must be a bool, got "
                f"{allow_replication_factor_change!r}"
            )
        deadline = self._router.deadline(timeout_ms)
        _, resp = await self._router.to_controller(
            apis.ALTER_PARTITION_REASSIGNMENTS,
            lambda v: ra.alter_request(
                targets, allow_replication_factor_change, deadline.remaining_ms(), v
            ),
            lambda r: r.error_code,
            deadline,
        )
        top, got = ra.alter_results(resp, targets)
        if top is not None:
            raise top
        self._router.note_errors(error_code(r.error) for r in got.values())
        self._cluster.request_metadata_update()
        return self._finish(ResultMap(got), raise_on_error)

    async def list_partition_reassignments(
        self,
        partitions: Iterable[TopicPartition] | None = None,
        *,
        timeout_ms: int | None = None,
    ) -> dict[TopicPartition, PartitionReassignment]:
        """The partition moves in progress (ListPartitionReassignments), by partition:
        every one in the cluster, or those among ``partitions`` (a partition that is not
        moving, or does not exist, is simply absent). Raises the controller's error, if
        any."""
        tps = (
            None
            if partitions is None
            else checks.unique([checks.topic_partition(p) for p in partitions], "partition")
        )
        if tps is not None and not tps:
            raise ConfigError(
                "list_partition_reassignments needs at least one partition (or None: all)"
            )
        deadline = self._router.deadline(timeout_ms)
        _, resp = await self._router.to_controller(
            apis.LIST_PARTITION_REASSIGNMENTS,
            lambda v: ra.list_request(tps, deadline.remaining_ms()),
            lambda r: r.error_code,
            deadline,
        )
        top, got = ra.list_results(resp)
        if top is not None:
            raise top
        return got

    # -- ACLs ------------------------------------------------------------------------------

    async def describe_acls(
        self, acl_filter: AclBindingFilter | None = None, *, timeout_ms: int | None = None
    ) -> list[AclBinding]:
        """ACLs matching ``acl_filter`` (default: all). Raises the broker's error, if any."""
        flt = AclBindingFilter.any() if acl_filter is None else acl_filter
        if not isinstance(flt, AclBindingFilter):
            raise ConfigError(f"describe_acls expects an AclBindingFilter, got {flt!r}")
        deadline = self._router.deadline(timeout_ms)

        async def call() -> tuple[int, DescribeAclsResponse]:
            return await self._router.send(
                None, apis.DESCRIBE_ACLS, lambda v: m.describe_acls_request(flt, v), deadline
            )

        _, resp = await self._router.with_retries(deadline, call)
        error, acls = m.describe_acls_results(resp)
        if error is not None:
            self._router.note_errors([error_code(error)])
            raise error
        return acls

    async def create_acls(
        self,
        acls: Sequence[AclBinding],
        *,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[AclBinding, AclCreationResult]:
        """Create ACLs; per-ACL results."""
        items = checks.unique(acls, "ACL")
        for a in items:
            if not isinstance(a, AclBinding):
                raise ConfigError(f"create_acls expects AclBinding values, got {a!r}")
        if not items:
            return ResultMap()
        deadline = self._router.deadline(timeout_ms)

        async def call() -> tuple[int, CreateAclsResponse]:
            return await self._router.send(
                None, apis.CREATE_ACLS, lambda v: m.create_acls_request(items, v), deadline
            )

        _, resp = await self._router.with_retries(deadline, call)
        got = m.create_acls_results(resp, items)
        self._router.note_errors(error_code(r.error) for r in got.values())
        return self._finish(ResultMap(got), raise_on_error)

    async def delete_acls(
        self,
        filters: Sequence[AclBindingFilter],
        *,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[AclBindingFilter, AclDeletionResult]:
        """Delete every ACL matching each filter; per-filter results list what went."""
        items = checks.unique(filters, "ACL filter")
        for f in items:
            if not isinstance(f, AclBindingFilter):
                raise ConfigError(f"delete_acls expects AclBindingFilter values, got {f!r}")
        if not items:
            return ResultMap()
        deadline = self._router.deadline(timeout_ms)

        async def call() -> tuple[int, DeleteAclsResponse]:
            return await self._router.send(
                None, apis.DELETE_ACLS, lambda v: m.delete_acls_request(items, v), deadline
            )

        _, resp = await self._router.with_retries(deadline, call)
        got = m.delete_acls_results(resp, items)
        self._router.note_errors(error_code(r.error) for r in got.values())
        return self._finish(ResultMap(got), raise_on_error)

    # -- SCRAM users (KIP-554) -------------------------------------------------------------

    async def describe_scram_credentials(
        self, users: Sequence[str] | None = None, *, timeout_ms: int | None = None
    ) -> ResultMap[str, UserScramCredentials]:
        """The SCRAM credentials (mechanism, iterations) stored for ``users`` (None: all).

        A user without credentials gets ``ResourceNotFoundError`` as its item error; a
        request-level refusal (``ClusterAuthorizationFailedError``) is raised.
        """
        names = None if users is None else checks.unique(users, "user")
        if names == []:
            return ResultMap()
        body = scram.describe_request(names)
        deadline = self._router.deadline(timeout_ms)

        async def call() -> tuple[int, DescribeUserScramCredentialsResponse]:
            return await self._router.send(
                None, apis.DESCRIBE_USER_SCRAM_CREDENTIALS, lambda v: body, deadline
            )

        _, resp = await self._router.with_retries(deadline, call)
        error, got = scram.describe_results(resp)
        if error is not None:
            self._router.note_errors([error_code(error)])
            raise error
        self._router.note_errors(error_code(r.error) for r in got.values())
        if names is None:
            return ResultMap(got)
        missing = error_for_code(-1, "the broker returned no result")
        return ResultMap((n, got.get(n) or UserScramCredentials(n, error=missing)) for n in names)

    async def upsert_scram_credentials(
        self,
        upsertions: Sequence[ScramUpsertion],
        *,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[str, UserScramResult]:
        """Create or replace SCRAM credentials; per-user results.

        The password is salted here (``salt``/``iterations`` of each
        :class:`ScramUpsertion`) and never sent. Users can log in with the new credential
        once the broker has applied it (it propagates through the metadata log, shortly
        after the call returns).
        """
        return await self._alter_scram(
            [scram.upsertion_fields(u) for u in upsertions], [], timeout_ms, raise_on_error
        )

    async def delete_scram_credentials(
        self,
        deletions: Sequence[ScramDeletion],
        *,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[str, UserScramResult]:
        """Remove SCRAM credentials; per-user results (``ResourceNotFoundError`` for one
        that does not exist)."""
        return await self._alter_scram(
            [], [scram.deletion_fields(d) for d in deletions], timeout_ms, raise_on_error
        )

    async def _alter_scram(
        self,
        upsertions: list[ScramCredentialUpsertion],
        deletions: list[ScramCredentialDeletion],
        timeout_ms: int | None,
        raise_on_error: bool,
    ) -> ResultMap[str, UserScramResult]:
        rounds = scram.alter_rounds(upsertions, deletions)
        if not rounds:
            return ResultMap()
        deadline = self._router.deadline(timeout_ms)
        results: dict[str, UserScramResult] = {}
        for body, users in rounds:

            async def call(
                body: AlterUserScramCredentialsRequest = body,
            ) -> tuple[int, AlterUserScramCredentialsResponse]:
                return await self._router.send(
                    None, apis.ALTER_USER_SCRAM_CREDENTIALS, lambda v: body, deadline
                )

            _, resp = await self._router.with_retries(deadline, call)
            got = scram.alter_results(resp, users)
            self._router.note_errors(error_code(r.error) for r in got.values())
            for user, r in got.items():
                if user not in results or results[user].error is None:
                    results[user] = r
        return self._finish(ResultMap(results), raise_on_error)

    # -- client quotas (KIP-546): admin/quotas.py -----------------------------------------

    async def describe_client_quotas(
        self,
        filters: Sequence[ClientQuotaFilter] = (),
        *,
        strict: bool = False,
        timeout_ms: int | None = None,
    ) -> dict[ClientQuotaEntity, dict[str, float]]:
        """The quotas of every entity matching all ``filters`` (none: every entity), as
        entity -> {quota name: value}. ``strict`` leaves out entities with components of
        types the filters do not name. A refusal (ClusterAuthorizationFailedError) raises."""
        return await quotas.describe_client_quotas(
            self._router, filters, strict=strict, timeout_ms=timeout_ms
        )

    async def alter_client_quotas(
        self,
        alterations: Sequence[ClientQuotaAlteration],
        *,
        validate_only: bool = False,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[ClientQuotaEntity, ClientQuotaAlterResult]:
        """Set (a number) or remove (``None``) quotas of entities; per-entity results.
        ``validate_only`` checks the changes without applying them. The new values reach
        every broker through the metadata log, shortly after the call returns."""
        return await quotas.alter_client_quotas(
            self._router,
            alterations,
            validate_only=validate_only,
            timeout_ms=timeout_ms,
            raise_on_error=raise_on_error,
        )

    # -- delegation tokens (KIP-48): admin/delegation_tokens.py ---------------------------

    async def create_delegation_token(
        self,
        *,
        renewers: Sequence[str] | None = None,
        max_lifetime_ms: int = -1,
        owner: str | None = None,
        timeout_ms: int | None = None,
    ) -> DelegationToken:
        """Have the broker issue a delegation token (Java's ``createDelegationToken``).

        ``renewers`` are principals (``"User:bob"``) who may renew it besides its owner;
        ``max_lifetime_ms`` -1 takes the broker's ``delegation.token.max.lifetime.ms``;
        ``owner`` (``"User:alice"``, Kafka 3.3+) issues it for another principal than the
        caller's. Log in with it through SCRAM: ``sasl_scram_token_auth=True``, user name
        ``token.token_id``, password ``token.hmac_base64()``. Only a SASL-authenticated
        connection may ask (``DelegationTokenRequestNotAllowedError`` otherwise)."""
        return await delegation_tokens.create_delegation_token(
            self._router,
            renewers=renewers,
            max_lifetime_ms=max_lifetime_ms,
            owner=owner,
            timeout_ms=timeout_ms,
        )

    async def renew_delegation_token(
        self,
        hmac: bytes | str,
        renew_period_ms: int = -1,
        *,
        timeout_ms: int | None = None,
    ) -> int:
        """Move the token's expiry to ``renew_period_ms`` from now (-1: the broker's
        ``delegation.token.expiry.time.ms``), never past its maximum; returns the new expiry
        (ms since the epoch). ``hmac`` is bytes or its base64. Only the owner or a renewer
        may (``DelegationTokenOwnerMismatchError``)."""
        return await delegation_tokens.renew_delegation_token(
            self._router, hmac, renew_period_ms=renew_period_ms, timeout_ms=timeout_ms
        )

    async def expire_delegation_token(
        self,
        hmac: bytes | str,
        expiry_time_period_ms: int = -1,
        *,
        timeout_ms: int | None = None,
    ) -> int:
        """Move the token's expiry to ``expiry_time_period_ms`` from now; a negative period
        (the default) expires it at once and the broker forgets it, so logins with it fail
        from then on. Returns the new expiry (ms since the epoch)."""
        return await delegation_tokens.expire_delegation_token(
            self._router,
            hmac,
            expiry_time_period_ms=expiry_time_period_ms,
            timeout_ms=timeout_ms,
        )

    async def describe_delegation_token(
        self, owners: Sequence[str] | None = None, *, timeout_ms: int | None = None
    ) -> list[DelegationToken]:
        """The tokens owned by ``owners`` (``"User:alice"``; None: every token) that the
        caller may see: its own, those it may renew, and those its DescribeTokens ACLs
        allow."""
        return await delegation_tokens.describe_delegation_token(
            self._router, owners, timeout_ms=timeout_ms
        )

    # -- log dirs, features, quorum, paged topics: admin/cluster_ops.py --------------------

    async def describe_log_dirs(
        self,
        brokers: Sequence[int] | None = None,
        partitions: Sequence[TopicPartition] | None = None,
        *,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[int, BrokerLogDirs]:
        """Each broker's log directories (None: every broker), with the size and lag of the
        replicas in them (``partitions`` None: all). One request per broker, concurrently;
        a broker that cannot be reached gets its error as its item."""
        return await cluster_ops.describe_log_dirs(
            self._router, brokers, partitions, timeout_ms=timeout_ms, raise_on_error=raise_on_error
        )

    async def describe_features(self, *, timeout_ms: int | None = None) -> FeatureMetadata:
        """The features the cluster has finalized and the levels a broker supports
        (ApiVersions v3+, KIP-584), as the Java client's ``describeFeatures``."""
        return await cluster_ops.describe_features(self._router, timeout_ms=timeout_ms)

    async def update_features(
        self,
        updates: Mapping[str, FeatureUpdate | int],
        *,
        validate_only: bool = False,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[str, FeatureUpdateResult]:
        """Change finalized feature levels (UpdateFeatures; an int is an upgrade to that
        level); per-feature results. Kafka applies the update all or nothing, so on
        UpdateFeatures v2 one error is every feature's. ``validate_only`` is a dry run."""
        return await cluster_ops.update_features(
            self._router,
            updates,
            validate_only=validate_only,
            timeout_ms=timeout_ms,
            raise_on_error=raise_on_error,
        )

    async def describe_metadata_quorum(self, *, timeout_ms: int | None = None) -> QuorumInfo:
        """The KRaft metadata quorum: leader, epoch, high watermark, voters and observers
        with their log end offsets (DescribeQuorum, to any broker of Kafka 4.x)."""
        return await cluster_ops.describe_metadata_quorum(self._router, timeout_ms=timeout_ms)

    async def describe_topic_partitions(
        self,
        topics: Sequence[str] | None = None,
        *,
        partition_limit: int = 2000,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[str, TopicDescription]:
        """Like :meth:`describe_topics`, through DescribeTopicPartitions (KIP-966, Kafka
        3.8+): paged, at most ``partition_limit`` partitions per response, the pages followed
        by cursor, and with each partition's eligible leader replicas. ``topics`` None: every
        topic. A broker without the API raises IncompatibleBrokerVersionError."""
        return await cluster_ops.describe_topic_partitions(
            self._router,
            topics,
            partition_limit=partition_limit,
            timeout_ms=timeout_ms,
            raise_on_error=raise_on_error,
        )

    # -- transactions and producers (KIP-664): admin/transactions.py -----------------------

    async def list_transactions(
        self,
        *,
        states: Sequence[str] | None = None,
        producer_ids: Sequence[int] | None = None,
        duration_ms: int | None = None,
        transactional_id_pattern: str | None = None,
        timeout_ms: int | None = None,
    ) -> list[TransactionListing]:
        """Every transactional id the coordinators know, sorted, filtered by state
        (``["Ongoing"]``), producer id, how long the transaction has run (ListTransactions
        v1+) and a regular expression on the id (v2+). Every broker is asked; one that
        fails makes the call raise (its transactions would be missing otherwise)."""
        return await transactions.list_transactions(
            self._router,
            states=states,
            producer_ids=producer_ids,
            duration_ms=duration_ms,
            transactional_id_pattern=transactional_id_pattern,
            timeout_ms=timeout_ms,
        )

    async def describe_transactions(
        self,
        transactional_ids: Sequence[str],
        *,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[str, TransactionDescription]:
        """State, producer id and epoch, timeout, start time and partitions of each
        transactional id, from its transaction coordinator (TransactionalIdNotFoundError
        for an unknown id)."""
        return await transactions.describe_transactions(
            self._router, transactional_ids, timeout_ms=timeout_ms, raise_on_error=raise_on_error
        )

    async def describe_producers(
        self,
        partitions: Sequence[TopicPartition],
        *,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[TopicPartition, PartitionProducers]:
        """The producers each partition's leader keeps state for: id, epoch, last sequence
        and timestamp, coordinator epoch, and the start offset of an open transaction (how
        to find a hanging one)."""
        return await transactions.describe_producers(
            self._router, partitions, timeout_ms=timeout_ms, raise_on_error=raise_on_error
        )

    async def abort_transaction(
        self, spec: AbortTransactionSpec, *, timeout_ms: int | None = None
    ) -> None:
        """Abort a hanging transaction on one partition: the leader writes the abort marker
        (WriteTxnMarkers), as the Java admin client's ``abortTransaction``. Build the spec
        from :meth:`describe_producers` (``AbortTransactionSpec.of(tp, producer)``). Raises
        the leader's error (e.g. InvalidProducerEpochError for a stale epoch,
        TransactionCoordinatorFencedError for a stale coordinator epoch)."""
        await transactions.abort_transaction(self._router, spec, timeout_ms=timeout_ms)

    async def fence_producers(
        self,
        transactional_ids: Sequence[str],
        *,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[str, FenceProducerResult]:
        """Fence the producers of ``transactional_ids``: bump each id's epoch at its
        transaction coordinator (InitProducerId), which aborts its open transaction and
        makes the current producer's next request fail as fenced. Per-id results carry
        the producer id and the new epoch."""
        return await transactions.fence_producers(
            self._router, transactional_ids, timeout_ms=timeout_ms, raise_on_error=raise_on_error
        )

    # -- share groups (KIP-932): admin/share_groups.py -------------------------------------

    async def list_share_groups(
        self, *, states: Sequence[str] | None = None, timeout_ms: int | None = None
    ) -> list[GroupListing]:
        """Every share group of every broker (ListGroups v5 with the type filter "share"),
        sorted by id; ``states`` filters (``["Stable", "Empty"]``)."""
        return await self.list_groups(states=states, types=["share"], timeout_ms=timeout_ms)

    async def describe_share_groups(
        self,
        group_ids: Sequence[str],
        *,
        include_authorized_operations: bool = False,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[str, ShareGroupDescription]:
        """State, epochs, assignor and members (with their assignments) of share groups
        (ShareGroupDescribe at each group's coordinator; GroupIdNotFoundError for a group
        that is not a share group)."""
        return await share_groups.describe_share_groups(
            self._router,
            group_ids,
            include_authorized_operations=include_authorized_operations,
            timeout_ms=timeout_ms,
            raise_on_error=raise_on_error,
        )

    async def delete_share_groups(
        self,
        group_ids: Sequence[str],
        *,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[str, DeleteGroupResult]:
        """Delete empty share groups and their state (NonEmptyGroupError while members
        remain)."""
        return await self.delete_groups(
            group_ids, timeout_ms=timeout_ms, raise_on_error=raise_on_error
        )

    async def list_share_group_offsets(
        self,
        group_id: str,
        partitions: Sequence[TopicPartition] | None = None,
        *,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[TopicPartition, ShareGroupOffset]:
        """The start offset of each of a share group's share-partitions (``partitions``
        None: all it has); a group-level error raises."""
        return await share_groups.list_share_group_offsets(
            self._router, group_id, partitions, timeout_ms=timeout_ms, raise_on_error=raise_on_error
        )

    async def alter_share_group_offsets(
        self,
        group_id: str,
        offsets: Mapping[TopicPartition, int],
        *,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[TopicPartition, PartitionResult]:
        """Set the start offsets of an empty share group's share-partitions (the group
        then delivers from there); a group with members raises (Kafka refuses it)."""
        return await share_groups.alter_share_group_offsets(
            self._router, group_id, offsets, timeout_ms=timeout_ms, raise_on_error=raise_on_error
        )

    async def delete_share_group_offsets(
        self,
        group_id: str,
        topics: Sequence[str],
        *,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[str, ShareGroupTopicResult]:
        """Delete an empty share group's state for whole topics; per-topic results."""
        return await share_groups.delete_share_group_offsets(
            self._router, group_id, topics, timeout_ms=timeout_ms, raise_on_error=raise_on_error
        )

    # -- helpers ---------------------------------------------------------------------------

    @staticmethod
    def _finish(result: ResultMap[K, Any], raise_on_error: bool) -> ResultMap[K, Any]:
        if raise_on_error:
            result.raise_first()
        return result
