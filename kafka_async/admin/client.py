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
error instead. Request bodies and result mapping live in the pure ``mapping`` module; this
module only routes, sends and retries.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from .. import errors as E
from ..cluster import routing as fanout
from ..cluster.client import ClusterClient
from ..cluster.lifecycle import Lifecycle
from ..cluster.routing import FanOut, Plan
from ..errors import (
    ConfigError,
    IncompatibleBrokerVersionError,
    KafkaError,
    KafkaTimeoutError,
    error_for_code,
)
from ..net.config import ClientConfig, with_bootstrap_servers
from ..net.connection import StreamFactory
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
from ..protocol.schema import Api, ReqT, RespT
from ..structs import ClientState, OffsetAndMetadata, TopicPartition
from . import cluster_ops, quotas, scram, share_groups, transactions
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

_COORDINATOR_GROUP = 0
_MAX_BACKOFF = 1.0


@dataclass(slots=True)
class _Deadline:
    """When an admin call must end, and how many times it has backed off so far."""

    at: float
    attempts: int = 0


def _check_timeout(timeout_ms: int | None, default: int) -> int:
    if timeout_ms is None:
        return default
    if not isinstance(timeout_ms, int) or isinstance(timeout_ms, bool) or timeout_ms <= 0:
        raise ConfigError(f"timeout_ms must be a positive int, got {timeout_ms!r}")
    return timeout_ms


def _unique(items: Iterable[K], what: str) -> list[K]:
    out: list[K] = []
    seen: set[K] = set()
    for item in items:
        if item in seen:
            raise ConfigError(f"duplicate {what} {item!r}")
        seen.add(item)
        out.append(item)
    return out


def _names(topics: Iterable[str] | str, what: str = "topic") -> list[str]:
    if isinstance(topics, str):
        # A bare string would iterate per character; almost always a mistake.
        raise ConfigError(f"expected a list of {what} names, got the string {topics!r}")
    return _unique((validate_topic_name(t) for t in topics), what)


def _group_ids(groups: Iterable[str] | str) -> list[str]:
    if isinstance(groups, str):
        raise ConfigError(f"expected a list of group ids, got the string {groups!r}")
    out = _unique(groups, "group id")
    for g in out:
        if not isinstance(g, str) or not g:
            raise ConfigError(f"group ids must be non-empty strings, got {g!r}")
    return out


def _tp(value: object) -> TopicPartition:
    if isinstance(value, TopicPartition):
        return value
    if (
        isinstance(value, tuple)
        and len(value) == 2
        and isinstance(value[0], str)
        and isinstance(value[1], int)
    ):
        return TopicPartition(value[0], value[1])
    raise ConfigError(f"expected a TopicPartition, got {value!r}")


_retriable = fanout.retriable
_item_error = fanout.item_error
_gather = fanout.gather


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
        self._cluster = ClusterClient(self.config, stream_factory=stream_factory)
        self._life = Lifecycle("admin client")
        self._requests: Counter[str] = Counter()
        self._errors: Counter[int] = Counter()
        self._retries = 0
        self._in_flight = 0

    def __repr__(self) -> str:
        state = self._life.state.value
        return f"<AdminClient {self.config.bootstrap_servers!r} {state}>"

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def state(self) -> ClientState:
        """Where the admin client is in its life (``ClientState.RUNNING`` between start and
        close)."""
        return self._life.state

    async def start(self) -> None:
        """Connect to the cluster (fetches metadata); once. :meth:`close` may run in any
        task and inside any cancel scope."""
        await self._life.start(self._cluster.start, self._cluster.close)

    async def close(self) -> None:
        """Close every connection; always returns (a concurrent call returns once the
        connections are closed)."""
        await self._life.close(self._cluster.close)

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
            "requests": dict(self._requests),
            "retries": self._retries,
            "errors_by_code": dict(self._errors),
            "in_flight": self._in_flight,
            "known_brokers": len(self._cluster.metadata.brokers) if running else 0,
            "cluster": self._cluster.statistics() if running else None,
        }

    # -- transport (the only code that talks to the cluster layer) -------------------------

    def _check_open(self) -> None:
        self._life.check()

    def _deadline(self, timeout_ms: int | None) -> _Deadline:
        ms = _check_timeout(timeout_ms, self.default_api_timeout_ms)
        return _Deadline(anyio.current_time() + ms / 1000.0)

    def _remaining_ms(self, deadline: _Deadline) -> int:
        return max(1, int((deadline.at - anyio.current_time()) * 1000))

    async def _backoff(self, deadline: _Deadline) -> bool:
        """Sleep one retry backoff if time allows; False when the deadline has passed.

        The delay doubles per retry of the call (capped at 1 s, with jitter), so a broker
        that keeps failing the same request is not hammered until the deadline.
        """
        base = self.config.retry_backoff_ms / 1000.0
        delay = min(base * (2 ** min(deadline.attempts, 10)), max(base, _MAX_BACKOFF))
        delay *= 0.8 + 0.4 * random.random()
        if anyio.current_time() + delay >= deadline.at:
            return False
        deadline.attempts += 1
        self._retries += 1
        await anyio.sleep(delay)
        return True

    def _note_errors(self, codes: Iterable[int]) -> None:
        for code in codes:
            if code > 0:  # -1 marks client-side errors, which are not broker codes
                self._errors[code] += 1

    async def _send(
        self,
        node_id: int | None,
        api: Api[ReqT, RespT],
        build: Callable[[int], ReqT],
        deadline: _Deadline,
        *,
        min_version: int | None = None,
    ) -> tuple[int, RespT]:
        """Send ``build(version)`` to ``node_id`` (None: any broker); return (version, response).

        The version is the highest both sides support; ``build`` raises
        IncompatibleBrokerVersionError if the call needs something that version lacks.
        """
        self._check_open()
        remaining = deadline.at - anyio.current_time()
        if remaining <= 0:
            raise KafkaTimeoutError(f"{api.name}: admin call deadline passed")
        timeout = min(remaining, self.config.request_timeout)
        if node_id is None:
            node_id = await self._cluster.any_node()
        version = await self._cluster.version_for(node_id, api, min_version=min_version)
        body = build(version)
        self._requests[api.name] += 1
        self._in_flight += 1
        try:
            resp = await self._cluster.request(node_id, api, body, version=version, timeout=timeout)
        finally:
            self._in_flight -= 1
        return version, resp

    async def _controller(self) -> int | None:
        """The controller's node id when metadata names a known one (None: any broker,
        which forwards on modern Kafka)."""
        md = self._cluster.metadata
        controller = md.controller_id
        if controller is not None and controller >= 0 and controller in md.brokers:
            return int(controller)
        return None

    async def _refresh(self, topics: Sequence[str] | None = None) -> None:
        await self._cluster.refresh_metadata(topics)

    async def _coordinator(self, group_id: str, key_type: int = _COORDINATOR_GROUP) -> int:
        return int(await self._cluster.coordinator(group_id, key_type))

    def _forget_coordinator(self, group_id: str, key_type: int = _COORDINATOR_GROUP) -> None:
        self._cluster.invalidate_coordinator(group_id, key_type)

    # -- generic retry shapes --------------------------------------------------------------

    async def _fan_out(
        self, fan: FanOut[K, R], keys: Sequence[K], deadline: _Deadline
    ) -> dict[K, R]:
        """Run one fan-out (``fanout.py``) with this client's backoff and error counters."""
        return await fanout.run(
            fan,
            keys,
            backoff=lambda: self._backoff(deadline),
            note_errors=self._note_errors,
        )

    async def _controller_call(
        self,
        api: Api[ReqT, RespT],
        keys: Sequence[K],
        build: Callable[[Sequence[K], int], ReqT],
        parse: Callable[[RespT], Mapping[K, R]],
        code_of: Callable[[R], int],
        deadline: _Deadline,
        missing: Callable[[K, KafkaError], R],
    ) -> dict[K, R]:
        """Send ``keys`` to the controller; resend those that got NOT_CONTROLLER (after a
        metadata refresh). Only connection failures are per key; other errors raise."""

        async def shard(pending: list[K]) -> Plan[K, R]:
            plan: Plan[K, R] = Plan()
            plan.by_node[await self._controller()] = pending
            return plan

        async def send(node: int | None, batch: list[K]) -> Mapping[K, R]:
            _, resp = await self._send(node, api, partial(build, batch), deadline)
            return parse(resp)

        async def refresh(pending: list[K]) -> None:
            await self._refresh_quietly()

        fan = FanOut(
            shard,
            send,
            code_of,
            missing,
            retry_codes=m.CONTROLLER_RETRY,
            is_item_error=_retriable,
            before_round=refresh,
        )
        return await self._fan_out(fan, keys, deadline)

    async def _refresh_quietly(self, topics: Sequence[str] | None = None) -> None:
        try:
            await self._refresh(topics)
        except KafkaError as exc:
            # The retry that follows reports the real problem; a failed refresh alone is
            # not worth failing the call for.
            log.debug("metadata refresh failed during admin retry: %s", exc)

    async def _per_group(
        self,
        group_ids: Sequence[str],
        send: Callable[[int, Sequence[str]], Awaitable[Mapping[str, R]]],
        code_of: Callable[[R], int],
        deadline: _Deadline,
        failed: Callable[[str, KafkaError], R],
        *,
        key_type: int = _COORDINATOR_GROUP,
        retry_codes: frozenset[int] = frozenset(),
    ) -> dict[str, R]:
        """Group ``group_ids`` by coordinator, one concurrent request per coordinator;
        groups whose coordinator moved (or was loading) are routed again.

        ``key_type`` 1 routes transactional ids to their transaction coordinators instead;
        ``retry_codes`` are further codes worth another round at the same coordinator
        (CONCURRENT_TRANSACTIONS for a transaction still ending).
        """

        async def shard(pending: list[str]) -> Plan[str, R]:
            plan: Plan[str, R] = Plan()

            async def locate(g: str) -> None:
                try:
                    node = await self._coordinator(g, key_type)
                except KafkaError as exc:
                    if not _item_error(exc):
                        raise
                    code = m.error_code(exc)
                    again = _retriable(exc) or code in m.COORDINATOR_RETRY | m.COORDINATOR_WAIT
                    plan.settle(g, failed(g, exc), again=again)
                    return
                plan.send(node, g)

            # Lookups run concurrently (the cluster client shares one per group id).
            await _gather([partial(locate, g) for g in pending])
            return plan

        async def send_to(node: int | None, groups: list[str]) -> Mapping[str, R]:
            assert node is not None
            return await send(node, groups)

        def on_retry(group: str, code: int) -> None:
            # loading (or another listed code): same coordinator, just wait
            if code not in m.COORDINATOR_WAIT | retry_codes:
                self._forget_coordinator(group, key_type)

        fan = FanOut(
            shard,
            send_to,
            code_of,
            failed,
            retry_codes=m.COORDINATOR_RETRY | m.COORDINATOR_WAIT | retry_codes,
            on_retry=on_retry,
        )
        return await self._fan_out(fan, group_ids, deadline)

    async def _per_leader(
        self,
        tps: Sequence[TopicPartition],
        send: Callable[[int, Sequence[TopicPartition]], Awaitable[Mapping[TopicPartition, R]]],
        code_of: Callable[[R], int],
        deadline: _Deadline,
        failed: Callable[[TopicPartition, KafkaError], R],
    ) -> dict[TopicPartition, R]:
        """Group partitions by leader, one concurrent request per leader; partitions whose
        leader moved (or whose leader was unreachable) are retried after a refresh."""

        async def shard(pending: list[TopicPartition]) -> Plan[TopicPartition, R]:
            md = self._cluster.metadata
            plan: Plan[TopicPartition, R] = Plan()
            for tp in pending:
                parts = md.partitions_for(tp.topic)
                if not parts:
                    plan.settle(tp, failed(tp, E.UnknownTopicOrPartitionError()))
                elif tp.partition not in parts:
                    error = E.UnknownTopicOrPartitionError(
                        f"{tp.topic} has no partition {tp.partition}"
                    )
                    plan.settle(tp, failed(tp, error))
                else:
                    leader = md.leader_for(tp)
                    if leader is None or leader < 0:
                        plan.settle(tp, failed(tp, E.LeaderNotAvailableError()), again=True)
                    else:
                        plan.send(leader, tp)
            return plan

        async def send_to(
            node: int | None, batch: list[TopicPartition]
        ) -> Mapping[TopicPartition, R]:
            assert node is not None
            return await send(node, batch)

        async def refresh(pending: list[TopicPartition]) -> None:
            await self._refresh_quietly(sorted({tp.topic for tp in pending}))

        await self._refresh(sorted({tp.topic for tp in tps}))
        fan = FanOut(
            shard, send_to, code_of, failed, retry_codes=m.LEADER_RETRY, before_round=refresh
        )
        return await self._fan_out(fan, tps, deadline)

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
        _unique((t.name for t in topics), "topic")
        deadline = self._deadline(timeout_ms)
        by_name = {t.name: t for t in topics}
        broker_timeout = self._remaining_ms(deadline)
        got = await self._controller_call(
            apis.CREATE_TOPICS,
            list(by_name),
            lambda names, v: m.create_topics_request(
                [by_name[n] for n in names], broker_timeout, validate_only, v
            ),
            m.create_topics_results,
            lambda r: m.error_code(r.error),
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
        names = _names(topics)
        deadline = self._deadline(timeout_ms)
        broker_timeout = self._remaining_ms(deadline)
        got = await self._controller_call(
            apis.DELETE_TOPICS,
            names,
            lambda ns, v: m.delete_topics_request(ns, broker_timeout, v),
            m.delete_topics_results,
            lambda r: m.error_code(r.error),
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
        deadline = self._deadline(timeout_ms)
        broker_timeout = self._remaining_ms(deadline)
        got = await self._controller_call(
            apis.CREATE_PARTITIONS,
            list(specs),
            lambda ns, v: m.create_partitions_request(
                {n: specs[n] for n in ns}, broker_timeout, validate_only
            ),
            m.create_partitions_results,
            lambda r: m.error_code(r.error),
            deadline,
            lambda n, e: CreatePartitionsResult(n, error=e),
        )
        self._cluster.request_metadata_update()
        return self._finish(ResultMap(got), raise_on_error)

    async def _metadata(
        self, topics: Sequence[str] | None, deadline: _Deadline
    ) -> MetadataResponse:
        while True:
            try:
                _, resp = await self._send(
                    None, apis.METADATA, lambda v: m.metadata_request(topics, v), deadline
                )
                return resp
            except KafkaError as exc:
                if not _retriable(exc) or not await self._backoff(deadline):
                    raise

    async def list_topics(
        self, *, include_internal: bool = False, timeout_ms: int | None = None
    ) -> dict[str, TopicListing]:
        """Every topic of the cluster, by name (sorted)."""
        resp = await self._metadata(None, self._deadline(timeout_ms))
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
        names = None if topics is None else _names(topics)
        resp = await self._metadata(names, self._deadline(timeout_ms))
        return self._finish(ResultMap(m.topic_descriptions(resp, names)), raise_on_error)

    async def describe_cluster(self, *, timeout_ms: int | None = None) -> ClusterDescription:
        """Cluster id, controller and brokers (DescribeCluster, or Metadata on old brokers)."""
        deadline = self._deadline(timeout_ms)
        try:
            _, resp = await self._send(
                None, apis.DESCRIBE_CLUSTER, lambda v: DescribeClusterRequest(), deadline
            )
        except IncompatibleBrokerVersionError:
            return m.cluster_from_metadata(await self._metadata([], deadline))
        if resp.error_code:
            self._note_errors([resp.error_code])
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
        deadline = self._deadline(timeout_ms)
        await self._refresh_quietly([])
        nodes: list[int | None] = [*sorted(self._cluster.metadata.brokers)] or [None]
        found: dict[str, GroupListing] = {}
        errors: list[KafkaError] = []

        async def one(node: int | None) -> None:
            while True:
                try:
                    _, resp = await self._send(
                        node,
                        apis.LIST_GROUPS,
                        lambda v: m.list_groups_request(states, types, v),
                        deadline,
                    )
                except KafkaError as exc:
                    if _retriable(exc) and await self._backoff(deadline):
                        continue
                    errors.append(exc)
                    return
                if resp.error_code in m.COORDINATOR_WAIT and await self._backoff(deadline):
                    continue
                if resp.error_code:
                    self._note_errors([resp.error_code])
                    errors.append(error_for_code(resp.error_code))
                    return
                for g in m.group_listings(resp, node if node is not None else -1):
                    found.setdefault(g.group_id, g)
                return

        await _gather([partial(one, node) for node in nodes])
        if errors:
            raise errors[0]
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
        groups = _group_ids(group_ids)
        deadline = self._deadline(timeout_ms)

        async def send(node: int, gs: Sequence[str]) -> Mapping[str, GroupDescription]:
            _, resp = await self._send(
                node,
                apis.DESCRIBE_GROUPS,
                lambda v: m.describe_groups_request(gs, include_authorized_operations, v),
                deadline,
            )
            return m.group_descriptions(resp, node, include_authorized_operations)

        got = await self._per_group(
            groups,
            send,
            lambda r: m.error_code(r.error),
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
        them), and every group on a broker without ConsumerGroupDescribe, are described with
        DescribeGroups instead; ``group_type`` tells which.
        """
        groups = _group_ids(group_ids)
        deadline = self._deadline(timeout_ms)

        async def send(node: int, gs: Sequence[str]) -> Mapping[str, ConsumerGroupDescription]:
            request = m.consumer_group_descriptions_request(gs, include_authorized_operations)
            _, resp = await self._send(
                node, apis.CONSUMER_GROUP_DESCRIBE, lambda _v: request, deadline
            )
            return m.consumer_group_descriptions(resp, node, include_authorized_operations)

        try:
            got = await self._per_group(
                groups,
                send,
                lambda r: m.error_code(r.error),
                deadline,
                lambda g, e: ConsumerGroupDescription(g, error=e),
            )
        except IncompatibleBrokerVersionError:
            got = {}
        classic = [
            g
            for g in groups
            if g not in got
            or isinstance(got[g].error, IncompatibleBrokerVersionError)
            or m.error_code(got[g].error) == m.GROUP_ID_NOT_FOUND
        ]
        if classic:
            described = await self.describe_groups(
                classic,
                include_authorized_operations=include_authorized_operations,
                timeout_ms=max(1, int((deadline.at - anyio.current_time()) * 1000)),
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
        groups = _group_ids(group_ids)
        deadline = self._deadline(timeout_ms)

        async def send(node: int, gs: Sequence[str]) -> Mapping[str, DeleteGroupResult]:
            _, resp = await self._send(
                node, apis.DELETE_GROUPS, lambda v: m.delete_groups_request(gs), deadline
            )
            return m.delete_groups_results(resp)

        got = await self._per_group(
            groups,
            send,
            lambda r: m.error_code(r.error),
            deadline,
            lambda g, e: DeleteGroupResult(g, error=e),
        )
        return self._finish(ResultMap(got), raise_on_error)

    async def _group_call(
        self,
        group_id: str,
        api: Api[ReqT, RespT],
        build: Callable[[int], ReqT],
        deadline: _Deadline,
    ) -> tuple[int, RespT]:
        """One request to a group's coordinator, retried while the coordinator moves or the
        connection fails; returns (version, response)."""
        if not isinstance(group_id, str) or not group_id:
            raise ConfigError(f"group id must be a non-empty string, got {group_id!r}")
        while True:
            try:
                node = await self._coordinator(group_id)
                version, resp = await self._send(node, api, build, deadline)
            except KafkaError as exc:
                code = m.error_code(exc)
                if (_retriable(exc) or code in m.COORDINATOR_RETRY | m.COORDINATOR_WAIT) and (
                    await self._backoff(deadline)
                ):
                    self._forget_coordinator(group_id)
                    continue
                raise
            return version, resp

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
        tps = None if partitions is None else _unique((_tp(p) for p in partitions), "partition")
        deadline = self._deadline(timeout_ms)
        while True:
            version, resp = await self._group_call(
                group_id,
                apis.OFFSET_FETCH,
                lambda v: m.offset_fetch_request(group_id, tps, v),
                deadline,
            )
            group_error, got = m.offset_fetch_results(resp, group_id, version)
            code = m.error_code(group_error)
            if code in m.COORDINATOR_RETRY | m.COORDINATOR_WAIT and await self._backoff(deadline):
                self._forget_coordinator(group_id)
                continue
            if group_error is not None:
                self._note_errors([code])
                raise group_error
            retry = [r for r in got.values() if m.error_code(r.error) in m.COORDINATOR_RETRY]
            if retry and await self._backoff(deadline):
                self._forget_coordinator(group_id)
                continue
            break
        self._note_errors(m.error_code(r.error) for r in got.values())
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
            tp = _tp(key)
            om = value if isinstance(value, OffsetAndMetadata) else OffsetAndMetadata(value)
            if not isinstance(om.offset, int) or om.offset < 0:
                raise ConfigError(f"offset for {tp} must be a non-negative int, got {om.offset!r}")
            commits[tp] = om
        deadline = self._deadline(timeout_ms)
        while True:
            _, resp = await self._group_call(
                group_id,
                apis.OFFSET_COMMIT,
                lambda v: m.offset_commit_request(group_id, commits, v),
                deadline,
            )
            got = m.partition_results(resp.topics)
            codes = {m.error_code(r.error) for r in got.values()}
            if codes & (m.COORDINATOR_RETRY | m.COORDINATOR_WAIT) and await self._backoff(deadline):
                self._forget_coordinator(group_id)
                continue
            break
        self._note_errors(m.error_code(r.error) for r in got.values())
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
        tps = _unique((_tp(p) for p in partitions), "partition")
        if not tps:
            raise ConfigError("delete_consumer_group_offsets needs at least one partition")
        deadline = self._deadline(timeout_ms)
        while True:
            _, resp = await self._group_call(
                group_id,
                apis.OFFSET_DELETE,
                lambda v: m.offset_delete_request(group_id, tps),
                deadline,
            )
            if resp.error_code in m.COORDINATOR_RETRY | m.COORDINATOR_WAIT and (
                await self._backoff(deadline)
            ):
                self._forget_coordinator(group_id)
                continue
            break
        if resp.error_code:
            self._note_errors([resp.error_code])
            raise error_for_code(resp.error_code)
        got = m.partition_results(resp.topics)
        self._note_errors(m.error_code(r.error) for r in got.values())
        out = {tp: got.get(tp, PartitionResult(tp.topic, tp.partition)) for tp in tps}
        return self._finish(ResultMap(out), raise_on_error)

    # -- configs ---------------------------------------------------------------------------

    async def _per_resource_target(
        self,
        resources: Sequence[ConfigResource],
        send: Callable[
            [int | None, Sequence[ConfigResource]], Awaitable[Mapping[ConfigResource, R]]
        ],
        failed: Callable[[ConfigResource, KafkaError], R],
        code_of: Callable[[R], int],
        deadline: _Deadline,
    ) -> dict[ConfigResource, R]:
        """Broker resources go to their own broker; all others together to any broker.
        A failed connection is retried after a refresh; broker errors are per resource."""

        async def shard(pending: list[ConfigResource]) -> Plan[ConfigResource, R]:
            brokers = self._cluster.metadata.brokers
            plan: Plan[ConfigResource, R] = Plan()
            for res in pending:
                node = res.broker_id
                if node is not None and node not in brokers:
                    error = E.BrokerNotAvailableError(f"no broker {node} in the cluster")
                    plan.settle(res, failed(res, error))
                else:
                    plan.send(node, res)
            return plan

        async def refresh(pending: list[ConfigResource]) -> None:
            await self._refresh_quietly([])

        fan = FanOut(shard, send, code_of, failed, before_round=refresh)
        return await self._fan_out(fan, resources, deadline)

    async def _per_broker(
        self,
        brokers: Sequence[int] | None,
        send: Callable[[int], Awaitable[R]],
        failed: Callable[[int, KafkaError], R],
        code_of: Callable[[R], int],
        deadline: _Deadline,
        *,
        retry_codes: frozenset[int] = frozenset(),
    ) -> dict[int, R]:
        """One request to each of ``brokers`` (None: every broker in metadata), all at once.

        The key is the broker's node id; a broker not in metadata gets
        BrokerNotAvailableError, a failed connection is retried after a refresh.
        """
        if brokers is None:
            await self._refresh_quietly([])
            brokers = sorted(self._cluster.metadata.brokers)

        async def shard(pending: list[int]) -> Plan[int, R]:
            known = self._cluster.metadata.brokers
            plan: Plan[int, R] = Plan()
            for node in pending:
                if node in known:
                    plan.send(node, node)
                else:
                    error = E.BrokerNotAvailableError(f"no broker {node} in the cluster")
                    plan.settle(node, failed(node, error))
            return plan

        async def send_to(node: int | None, keys: list[int]) -> Mapping[int, R]:
            assert node is not None
            return {node: await send(node)}

        async def refresh(pending: list[int]) -> None:
            await self._refresh_quietly([])

        fan = FanOut(shard, send_to, code_of, failed, retry_codes=retry_codes, before_round=refresh)
        return await self._fan_out(fan, list(brokers), deadline)

    def _resources(self, resources: Iterable[ConfigResource]) -> list[ConfigResource]:
        out = _unique(resources, "config resource")
        for r in out:
            if not isinstance(r, ConfigResource):
                raise ConfigError(f"expected ConfigResource values, got {r!r}")
        return out

    async def _with_retries(self, deadline: _Deadline, call: Callable[[], Awaitable[R]]) -> R:
        while True:
            try:
                return await call()
            except KafkaError as exc:
                if not _retriable(exc) or not await self._backoff(deadline):
                    raise
                await self._refresh_quietly([])

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
        deadline = self._deadline(timeout_ms)

        async def send(
            node: int | None, batch: Sequence[ConfigResource]
        ) -> Mapping[ConfigResource, ConfigDescription]:
            version, resp = await self._send(
                node,
                apis.DESCRIBE_CONFIGS,
                lambda v: m.describe_configs_request(
                    batch, config_names, include_synonyms, include_documentation, v
                ),
                deadline,
            )
            return m.describe_configs_results(resp, batch, version)

        got = await self._per_resource_target(
            rs,
            send,
            lambda r, e: ConfigDescription(r, error=e),
            lambda r: m.error_code(r.error),
            deadline,
        )
        return self._finish(ResultMap(got), raise_on_error)

    async def _alter(
        self,
        api: Api[ReqT, _AlterResp],
        rs: Sequence[ConfigResource],
        build: Callable[[Sequence[ConfigResource]], ReqT],
        deadline: _Deadline,
    ) -> dict[ConfigResource, AlterConfigsResult]:
        async def send(
            node: int | None, batch: Sequence[ConfigResource]
        ) -> Mapping[ConfigResource, AlterConfigsResult]:
            _, resp = await self._send(node, api, lambda v: build(batch), deadline)
            return m.alter_configs_results(resp, batch)

        return await self._per_resource_target(
            rs,
            send,
            lambda r, e: AlterConfigsResult(r, e),
            lambda r: m.error_code(r.error),
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
            self._deadline(timeout_ms),
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
            self._deadline(timeout_ms),
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
        clean = {_tp(tp): OffsetSpec.coerce(s) for tp, s in specs.items()}
        level = IsolationLevel(isolation_level)
        deadline = self._deadline(timeout_ms)

        async def send(
            node: int, tps: Sequence[TopicPartition]
        ) -> Mapping[TopicPartition, ListOffsetsResult]:
            need_max = any(clean[tp].timestamp == OffsetSpec.MAX_TIMESTAMP_TS for tp in tps)
            version, resp = await self._send(
                node,
                apis.LIST_OFFSETS,
                lambda v: m.list_offsets_request(
                    {tp: clean[tp] for tp in tps}, level, v, self._remaining_ms(deadline)
                ),
                deadline,
                min_version=7 if need_max else None,
            )
            return m.list_offsets_results(resp, version)

        got = await self._per_leader(
            list(clean),
            send,
            lambda r: m.error_code(r.error),
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
            tp = _tp(key)
            if not isinstance(off, int) or isinstance(off, bool) or off < -1:
                raise ConfigError(f"offset for {tp} must be >= 0 (or -1 for the end), got {off!r}")
            clean[tp] = off
        deadline = self._deadline(timeout_ms)

        async def send(
            node: int, tps: Sequence[TopicPartition]
        ) -> Mapping[TopicPartition, DeleteRecordsResult]:
            _, resp = await self._send(
                node,
                apis.DELETE_RECORDS,
                lambda v: m.delete_records_request(
                    {tp: clean[tp] for tp in tps}, self._remaining_ms(deadline)
                ),
                deadline,
            )
            return m.delete_records_results(resp)

        got = await self._per_leader(
            list(clean),
            send,
            lambda r: m.error_code(r.error),
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
        tps = None if partitions is None else [_tp(p) for p in partitions]
        if tps is not None:
            if not tps:
                raise ConfigError("elect_leaders needs at least one partition (or None: all)")
            _unique(tps, "partition")
        kind = ElectionType(election_type)
        deadline = self._deadline(timeout_ms)
        while True:
            try:
                version, resp = await self._send(
                    None,
                    apis.ELECT_LEADERS,
                    lambda v: m.elect_leaders_request(
                        int(kind), tps, self._remaining_ms(deadline), v
                    ),
                    deadline,
                )
            except KafkaError as exc:
                if not _retriable(exc) or not await self._backoff(deadline):
                    raise
                continue
            code = getattr(resp, "error_code", 0) if version >= 1 else 0
            if code:
                self._note_errors([code])
                err = error_for_code(code)
                if err.retriable and await self._backoff(deadline):
                    continue
                raise err
            break
        got = m.elect_leaders_results(resp)
        self._note_errors(m.error_code(r.error) for r in got.values())
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
        deadline = self._deadline(timeout_ms)
        _, resp = await self._controller_request(
            apis.ALTER_PARTITION_REASSIGNMENTS,
            lambda v: ra.alter_request(
                targets, allow_replication_factor_change, self._remaining_ms(deadline), v
            ),
            lambda r: r.error_code,
            deadline,
        )
        top, got = ra.alter_results(resp, targets)
        if top is not None:
            raise top
        self._note_errors(m.error_code(r.error) for r in got.values())
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
        tps = None if partitions is None else _unique([_tp(p) for p in partitions], "partition")
        if tps is not None and not tps:
            raise ConfigError(
                "list_partition_reassignments needs at least one partition (or None: all)"
            )
        deadline = self._deadline(timeout_ms)
        _, resp = await self._controller_request(
            apis.LIST_PARTITION_REASSIGNMENTS,
            lambda v: ra.list_request(tps, self._remaining_ms(deadline)),
            lambda r: r.error_code,
            deadline,
        )
        top, got = ra.list_results(resp)
        if top is not None:
            raise top
        return got

    async def _controller_request(
        self,
        api: Api[ReqT, RespT],
        build: Callable[[int], ReqT],
        top_code: Callable[[RespT], int],
        deadline: _Deadline,
    ) -> tuple[int, RespT]:
        """One request to the controller (any broker forwards it on KRaft clusters),
        resent after a backoff while the connection fails or the request-level error is
        retriable (NOT_CONTROLLER, a controller being elected), until ``deadline``."""
        while True:
            try:
                version, resp = await self._send(await self._controller(), api, build, deadline)
            except KafkaError as exc:
                if not _retriable(exc) or not await self._backoff(deadline):
                    raise
                await self._refresh_quietly()
                continue
            code = top_code(resp)
            if code:
                self._note_errors([code])
                if error_for_code(code).retriable and await self._backoff(deadline):
                    await self._refresh_quietly()
                    continue
            return version, resp

    # -- ACLs ------------------------------------------------------------------------------

    async def describe_acls(
        self, acl_filter: AclBindingFilter | None = None, *, timeout_ms: int | None = None
    ) -> list[AclBinding]:
        """ACLs matching ``acl_filter`` (default: all). Raises the broker's error, if any."""
        flt = AclBindingFilter.any() if acl_filter is None else acl_filter
        if not isinstance(flt, AclBindingFilter):
            raise ConfigError(f"describe_acls expects an AclBindingFilter, got {flt!r}")
        deadline = self._deadline(timeout_ms)

        async def call() -> tuple[int, DescribeAclsResponse]:
            return await self._send(
                None, apis.DESCRIBE_ACLS, lambda v: m.describe_acls_request(flt, v), deadline
            )

        _, resp = await self._with_retries(deadline, call)
        error, acls = m.describe_acls_results(resp)
        if error is not None:
            self._note_errors([m.error_code(error)])
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
        items = _unique(acls, "ACL")
        for a in items:
            if not isinstance(a, AclBinding):
                raise ConfigError(f"create_acls expects AclBinding values, got {a!r}")
        if not items:
            return ResultMap()
        deadline = self._deadline(timeout_ms)

        async def call() -> tuple[int, CreateAclsResponse]:
            return await self._send(
                None, apis.CREATE_ACLS, lambda v: m.create_acls_request(items, v), deadline
            )

        _, resp = await self._with_retries(deadline, call)
        got = m.create_acls_results(resp, items)
        self._note_errors(m.error_code(r.error) for r in got.values())
        return self._finish(ResultMap(got), raise_on_error)

    async def delete_acls(
        self,
        filters: Sequence[AclBindingFilter],
        *,
        timeout_ms: int | None = None,
        raise_on_error: bool = False,
    ) -> ResultMap[AclBindingFilter, AclDeletionResult]:
        """Delete every ACL matching each filter; per-filter results list what went."""
        items = _unique(filters, "ACL filter")
        for f in items:
            if not isinstance(f, AclBindingFilter):
                raise ConfigError(f"delete_acls expects AclBindingFilter values, got {f!r}")
        if not items:
            return ResultMap()
        deadline = self._deadline(timeout_ms)

        async def call() -> tuple[int, DeleteAclsResponse]:
            return await self._send(
                None, apis.DELETE_ACLS, lambda v: m.delete_acls_request(items, v), deadline
            )

        _, resp = await self._with_retries(deadline, call)
        got = m.delete_acls_results(resp, items)
        self._note_errors(m.error_code(r.error) for r in got.values())
        return self._finish(ResultMap(got), raise_on_error)

    # -- SCRAM users (KIP-554) -------------------------------------------------------------

    async def describe_scram_credentials(
        self, users: Sequence[str] | None = None, *, timeout_ms: int | None = None
    ) -> ResultMap[str, UserScramCredentials]:
        """The SCRAM credentials (mechanism, iterations) stored for ``users`` (None: all).

        A user without credentials gets ``ResourceNotFoundError`` as its item error; a
        request-level refusal (``ClusterAuthorizationFailedError``) is raised.
        """
        names = None if users is None else _unique(users, "user")
        if names == []:
            return ResultMap()
        body = scram.describe_request(names)
        deadline = self._deadline(timeout_ms)

        async def call() -> tuple[int, DescribeUserScramCredentialsResponse]:
            return await self._send(
                None, apis.DESCRIBE_USER_SCRAM_CREDENTIALS, lambda v: body, deadline
            )

        _, resp = await self._with_retries(deadline, call)
        error, got = scram.describe_results(resp)
        if error is not None:
            self._note_errors([m.error_code(error)])
            raise error
        self._note_errors(m.error_code(r.error) for r in got.values())
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
        deadline = self._deadline(timeout_ms)
        results: dict[str, UserScramResult] = {}
        for body, users in rounds:

            async def call(
                body: AlterUserScramCredentialsRequest = body,
            ) -> tuple[int, AlterUserScramCredentialsResponse]:
                return await self._send(
                    None, apis.ALTER_USER_SCRAM_CREDENTIALS, lambda v: body, deadline
                )

            _, resp = await self._with_retries(deadline, call)
            got = scram.alter_results(resp, users)
            self._note_errors(m.error_code(r.error) for r in got.values())
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
            self, filters, strict=strict, timeout_ms=timeout_ms
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
            self,
            alterations,
            validate_only=validate_only,
            timeout_ms=timeout_ms,
            raise_on_error=raise_on_error,
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
            self, brokers, partitions, timeout_ms=timeout_ms, raise_on_error=raise_on_error
        )

    async def describe_features(self, *, timeout_ms: int | None = None) -> FeatureMetadata:
        """The features the cluster has finalized and the levels a broker supports
        (ApiVersions v3+, KIP-584), as the Java client's ``describeFeatures``."""
        return await cluster_ops.describe_features(self, timeout_ms=timeout_ms)

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
            self,
            updates,
            validate_only=validate_only,
            timeout_ms=timeout_ms,
            raise_on_error=raise_on_error,
        )

    async def describe_metadata_quorum(self, *, timeout_ms: int | None = None) -> QuorumInfo:
        """The KRaft metadata quorum: leader, epoch, high watermark, voters and observers
        with their log end offsets (DescribeQuorum, to any broker of Kafka 4.x)."""
        return await cluster_ops.describe_metadata_quorum(self, timeout_ms=timeout_ms)

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
            self,
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
            self,
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
            self, transactional_ids, timeout_ms=timeout_ms, raise_on_error=raise_on_error
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
            self, partitions, timeout_ms=timeout_ms, raise_on_error=raise_on_error
        )

    async def abort_transaction(
        self, spec: AbortTransactionSpec, *, timeout_ms: int | None = None
    ) -> None:
        """Abort a hanging transaction on one partition: the leader writes the abort marker
        (WriteTxnMarkers), as the Java admin client's ``abortTransaction``. Build the spec
        from :meth:`describe_producers` (``AbortTransactionSpec.of(tp, producer)``). Raises
        the leader's error (e.g. InvalidProducerEpochError for a stale epoch,
        TransactionCoordinatorFencedError for a stale coordinator epoch)."""
        await transactions.abort_transaction(self, spec, timeout_ms=timeout_ms)

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
            self, transactional_ids, timeout_ms=timeout_ms, raise_on_error=raise_on_error
        )

    # -- share groups (KIP-932): admin/share_groups.py -------------------------------------

    async def list_share_groups(
        self, *, states: Sequence[str] | None = None, timeout_ms: int | None = None
    ) -> list[GroupListing]:
        """Every share group of every broker (ListGroups v5 with the type filter "share"),
        sorted by id; ``states`` filters (``["Stable", "Empty"]``)."""
        return await share_groups.list_share_groups(self, states=states, timeout_ms=timeout_ms)

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
            self,
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
        return await share_groups.delete_share_groups(
            self, group_ids, timeout_ms=timeout_ms, raise_on_error=raise_on_error
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
            self, group_id, partitions, timeout_ms=timeout_ms, raise_on_error=raise_on_error
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
            self, group_id, offsets, timeout_ms=timeout_ms, raise_on_error=raise_on_error
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
            self, group_id, topics, timeout_ms=timeout_ms, raise_on_error=raise_on_error
        )

    # -- helpers ---------------------------------------------------------------------------

    @staticmethod
    def _finish(result: ResultMap[K, Any], raise_on_error: bool) -> ResultMap[K, Any]:
        if raise_on_error:
            result.raise_first()
        return result
