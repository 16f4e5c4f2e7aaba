"""``AdminClient``: topics, partitions, groups, offsets, configs, records and ACLs.

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
from dataclasses import dataclass, field
from functools import partial
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from ..cluster.client import ClusterClient
from ..errors import (
    BrokerResponseError,
    ClientClosedError,
    ConfigError,
    IncompatibleBrokerVersionError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    error_for_code,
)
from ..net.config import ClientConfig, with_bootstrap_servers
from ..net.connection import StreamFactory
from ..protocol import apis
from ..protocol.schema import Api
from ..structs import OffsetAndMetadata, TopicPartition
from . import mapping as m
from .config import AdminSettings
from .results import (
    AclCreationResult,
    AclDeletionResult,
    AlterConfigsResult,
    ClusterDescription,
    ConfigDescription,
    CreatePartitionsResult,
    CreateTopicResult,
    DeleteGroupResult,
    DeleteRecordsResult,
    DeleteTopicResult,
    GroupDescription,
    GroupListing,
    GroupOffset,
    ListOffsetsResult,
    PartitionResult,
    ResultMap,
    TopicDescription,
    TopicListing,
)
from .types import (
    AclBinding,
    AclBindingFilter,
    AlterConfigOp,
    ConfigResource,
    IsolationLevel,
    NewPartitions,
    NewTopic,
    OffsetSpec,
    OffsetSpecLike,
    validate_topic_name,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["AdminClient", "AdminStatistics"]

log = logging.getLogger("kafka_async.admin")

K = TypeVar("K")
R = TypeVar("R")

_COORDINATOR_GROUP = 0
_MAX_BACKOFF = 1.0
_BROKER_NOT_AVAILABLE = 8


@dataclass(frozen=True)
class AdminStatistics:
    """Counters of an admin client (see :meth:`AdminClient.statistics`)."""

    started: bool
    closed: bool
    requests: Mapping[str, int]
    retries: int
    errors_by_code: Mapping[int, int]
    in_flight: int
    known_brokers: int
    cluster: Any = field(default=None, repr=False)


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


def _retriable(err: BaseException) -> bool:
    return isinstance(err, KafkaConnectionError | KafkaTimeoutError) and err.retriable


def _item_error(err: KafkaError) -> bool:
    """Whether ``err`` belongs to the items of one request (a broker error code, or a
    connection problem that outlasted the retries) rather than to the whole call (an API
    the broker lacks, an argument the negotiated version cannot carry)."""
    return isinstance(err, BrokerResponseError) or _retriable(err)


async def _gather(calls: Sequence[Callable[[], Awaitable[None]]]) -> None:
    """Run ``calls`` concurrently; re-raise the first failure as itself (not wrapped in an
    exception group), after the others have finished."""
    if len(calls) == 1:
        await calls[0]()
        return
    errors: list[Exception] = []

    async def run(call: Callable[[], Awaitable[None]]) -> None:
        try:
            await call()
        except Exception as exc:  # cancellation is a BaseException and passes through
            errors.append(exc)

    async with anyio.create_task_group() as tg:
        for call in calls:
            tg.start_soon(run, call)
    if errors:
        raise errors[0]


class AdminClient:
    """Administer a Kafka cluster.

    ::

        async with AdminClient(bootstrap_servers="localhost:9092") as admin:
            results = await admin.create_topics([NewTopic("orders", num_partitions=6)])
            results.raise_first()

    Config (typed as :class:`~kafka_async.admin.config.AdminSettings`): every
    :class:`~kafka_async.net.config.ClientConfig` setting
    (``bootstrap_servers``, ``client_id``, ``request_timeout_ms``, security settings, ...)
    plus ``default_api_timeout_ms`` (default 60 000): the deadline of each admin call,
    retries included, when the call does not pass its own ``timeout_ms``.
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
        settings = with_bootstrap_servers(bootstrap_servers, config)
        default_api_timeout_ms = settings.pop("default_api_timeout_ms", 60_000)
        if settings.get("client_id") is None:
            settings["client_id"] = "kafka-async-admin"
        self.config, rest = ClientConfig.from_kwargs(**settings)
        if rest:
            raise ConfigError(f"unknown AdminClient setting(s): {', '.join(sorted(rest))}")
        self.default_api_timeout_ms = _check_timeout(default_api_timeout_ms, 60_000)
        self._cluster = ClusterClient(self.config, stream_factory=stream_factory)
        self._started = False
        self._closed = False
        self._requests: Counter[str] = Counter()
        self._errors: Counter[int] = Counter()
        self._retries = 0
        self._in_flight = 0

    def __repr__(self) -> str:
        state = "closed" if self._closed else "started" if self._started else "new"
        return f"<AdminClient {self.config.bootstrap_servers!r} {state}>"

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect to the cluster (fetches metadata). :meth:`close` may run in any task."""
        if self._closed:
            raise ClientClosedError("AdminClient is closed")
        if self._started:
            return
        await self._cluster.start()
        self._started = True

    async def close(self) -> None:
        """Close every connection; always returns (a concurrent call returns once the
        connections are closed)."""
        self._closed = True
        if self._started:
            await self._cluster.close()

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

    def statistics(self) -> AdminStatistics:
        """Requests sent per API, retries, error codes seen, requests in flight."""
        cluster_stats = None
        if self._started and not self._closed:
            cluster_stats = self._cluster.statistics()
        return AdminStatistics(
            started=self._started,
            closed=self._closed,
            requests=dict(self._requests),
            retries=self._retries,
            errors_by_code=dict(self._errors),
            in_flight=self._in_flight,
            known_brokers=len(self._cluster.metadata.brokers) if self._started else 0,
            cluster=cluster_stats,
        )

    # -- transport (the only code that talks to the cluster layer) -------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise ClientClosedError("AdminClient is closed")
        if not self._started:
            raise ClientClosedError(
                "AdminClient is not started; use 'async with AdminClient(...)' or await start()"
            )

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
        api: Api,
        build: Callable[[int], Any],
        deadline: _Deadline,
        *,
        min_version: int | None = None,
    ) -> tuple[int, Any]:
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

    async def _coordinator(self, group_id: str) -> int:
        return int(await self._cluster.coordinator(group_id, _COORDINATOR_GROUP))

    def _forget_coordinator(self, group_id: str) -> None:
        self._cluster.invalidate_coordinator(group_id, _COORDINATOR_GROUP)

    # -- generic retry shapes --------------------------------------------------------------

    async def _controller_call(
        self,
        api: Api,
        keys: Sequence[K],
        build: Callable[[Sequence[K], int], Any],
        parse: Callable[[Any], Mapping[K, R]],
        code_of: Callable[[R], int],
        deadline: _Deadline,
        missing: Callable[[K, KafkaError], R],
    ) -> dict[K, R]:
        """Send ``keys`` to the controller; resend those that got NOT_CONTROLLER."""
        results: dict[K, R] = {}
        pending = list(keys)
        last: KafkaError | None = None
        while pending:
            try:
                _, resp = await self._send(
                    await self._controller(), api, partial(build, pending), deadline
                )
            except KafkaError as exc:
                if not _retriable(exc):
                    raise
                last = exc
                if not await self._backoff(deadline):
                    break
                await self._refresh_quietly()
                continue
            got = parse(resp)
            self._note_errors(code_of(r) for r in got.values())
            retry: list[K] = []
            for key in pending:
                r = got.get(key)
                if r is None:
                    results[key] = missing(key, error_for_code(-1, "no result for this item"))
                elif code_of(r) in m.CONTROLLER_RETRY:
                    retry.append(key)
                    results[key] = r
                else:
                    results[key] = r
            pending = retry
            if pending:
                if not await self._backoff(deadline):
                    break
                await self._refresh_quietly()
        if pending and last is not None:
            for key in pending:
                results[key] = missing(key, last)
        return {k: results[k] for k in keys if k in results}

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
    ) -> dict[str, R]:
        """Group ``group_ids`` by coordinator, call ``send`` per coordinator concurrently,
        and retry groups whose coordinator moved or was loading."""
        results: dict[str, R] = {}
        pending = list(group_ids)
        while pending:
            by_node: dict[int, list[str]] = {}
            retry: list[str] = []

            async def locate(g: str, by_node: dict[int, list[str]], retry: list[str]) -> None:
                try:
                    node = await self._coordinator(g)
                except KafkaError as exc:
                    if not _item_error(exc):
                        raise
                    results[g] = failed(g, exc)
                    code = m.error_code(exc)
                    if _retriable(exc) or code in m.COORDINATOR_RETRY | m.COORDINATOR_WAIT:
                        retry.append(g)
                    return
                by_node.setdefault(node, []).append(g)

            # Lookups run concurrently (the cluster client shares one per group id).
            await _gather([partial(locate, g, by_node, retry) for g in pending])

            async def one(node: int, groups: list[str], retry: list[str]) -> None:
                try:
                    got = await send(node, groups)
                except KafkaError as exc:
                    if not _item_error(exc):
                        raise
                    for g in groups:
                        results[g] = failed(g, exc)
                        if _retriable(exc):
                            self._forget_coordinator(g)
                            retry.append(g)
                    return
                self._note_errors(code_of(r) for r in got.values())
                for g in groups:
                    r = got.get(g)
                    if r is None:
                        results[g] = failed(g, error_for_code(-1, "no result for this group"))
                        continue
                    results[g] = r
                    code = code_of(r)
                    if code in m.COORDINATOR_RETRY:
                        self._forget_coordinator(g)
                        retry.append(g)
                    elif code in m.COORDINATOR_WAIT:
                        retry.append(g)

            await _gather([partial(one, node, gs, retry) for node, gs in by_node.items()])
            pending = retry
            if pending and not await self._backoff(deadline):
                break
        return {g: results[g] for g in group_ids}

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
        results: dict[TopicPartition, R] = {}
        pending = list(tps)
        topics = sorted({tp.topic for tp in tps})
        await self._refresh(topics)
        while pending:
            md = self._cluster.metadata
            by_leader: dict[int, list[TopicPartition]] = {}
            retry: list[TopicPartition] = []
            for tp in pending:
                parts = md.partitions_for(tp.topic)
                if not parts:
                    results[tp] = failed(tp, error_for_code(m.UNKNOWN_TOPIC_OR_PARTITION))
                    continue
                if tp.partition not in parts:
                    results[tp] = failed(
                        tp,
                        error_for_code(
                            m.UNKNOWN_TOPIC_OR_PARTITION,
                            f"{tp.topic} has no partition {tp.partition}",
                        ),
                    )
                    continue
                leader = md.leader_for(tp)
                if leader is None or leader < 0:
                    results[tp] = failed(tp, error_for_code(m.LEADER_NOT_AVAILABLE))
                    retry.append(tp)
                    continue
                by_leader.setdefault(leader, []).append(tp)

            async def one(
                node: int, group: list[TopicPartition], retry: list[TopicPartition]
            ) -> None:
                try:
                    got = await send(node, group)
                except KafkaError as exc:
                    if not _item_error(exc):
                        raise
                    for tp in group:
                        results[tp] = failed(tp, exc)
                    if _retriable(exc):
                        retry.extend(group)
                    return
                self._note_errors(code_of(r) for r in got.values())
                for tp in group:
                    r = got.get(tp)
                    if r is None:
                        results[tp] = failed(tp, error_for_code(-1, "no result for partition"))
                        continue
                    results[tp] = r
                    if code_of(r) in m.LEADER_RETRY:
                        retry.append(tp)

            await _gather([partial(one, node, grp, retry) for node, grp in by_leader.items()])
            pending = retry
            if pending:
                if not await self._backoff(deadline):
                    break
                await self._refresh_quietly(sorted({tp.topic for tp in pending}))
        return {tp: results[tp] for tp in tps}

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

    async def _metadata(self, topics: Sequence[str] | None, deadline: _Deadline) -> Any:
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
            _, resp = await self._send(None, apis.DESCRIBE_CLUSTER, lambda v: {}, deadline)
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
            def build(v: int) -> dict[str, Any]:
                body: dict[str, Any] = {"groups": list(gs)}
                if v >= 3:
                    body["include_authorized_operations"] = include_authorized_operations
                elif include_authorized_operations:
                    raise m.unsupported("DescribeGroups", "include_authorized_operations", v)
                return body

            _, resp = await self._send(node, apis.DESCRIBE_GROUPS, build, deadline)
            return m.group_descriptions(resp, node, include_authorized_operations)

        got = await self._per_group(
            groups,
            send,
            lambda r: m.error_code(r.error),
            deadline,
            lambda g, e: GroupDescription(g, error=e),
        )
        return self._finish(ResultMap(got), raise_on_error)

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
                node, apis.DELETE_GROUPS, lambda v: {"groups_names": list(gs)}, deadline
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
        self, group_id: str, api: Api, build: Callable[[int], Any], deadline: _Deadline
    ) -> tuple[int, Any]:
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
    ) -> dict[ConfigResource, R]:
        """Broker resources go to their own broker; all others together to any broker."""
        targets: dict[int | None, list[ConfigResource]] = {}
        results: dict[ConfigResource, R] = {}
        brokers = self._cluster.metadata.brokers
        for res in resources:
            node = res.broker_id
            if node is not None and node not in brokers:
                results[res] = failed(
                    res, error_for_code(_BROKER_NOT_AVAILABLE, f"no broker {node} in the cluster")
                )
                continue
            targets.setdefault(node, []).append(res)

        async def one(node: int | None, rs: list[ConfigResource]) -> None:
            try:
                got = await send(node, rs)
            except KafkaError as exc:
                if not _item_error(exc):
                    raise
                for r in rs:
                    results[r] = failed(r, exc)
                return
            for r in rs:
                results[r] = got.get(r) or failed(
                    r, error_for_code(-1, "no result for this resource")
                )

        await _gather([partial(one, node, rs) for node, rs in targets.items()])
        return {r: results[r] for r in resources}

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
            async def call() -> Any:
                return await self._send(
                    node,
                    apis.DESCRIBE_CONFIGS,
                    lambda v: m.describe_configs_request(
                        batch, config_names, include_synonyms, include_documentation, v
                    ),
                    deadline,
                )

            version, resp = await self._with_retries(deadline, call)
            return m.describe_configs_results(resp, batch, version)

        got = await self._per_resource_target(rs, send, lambda r, e: ConfigDescription(r, error=e))
        self._note_errors(m.error_code(r.error) for r in got.values())
        return self._finish(ResultMap(got), raise_on_error)

    async def _alter(
        self,
        api: Api,
        rs: Sequence[ConfigResource],
        build: Callable[[Sequence[ConfigResource]], Any],
        deadline: _Deadline,
    ) -> dict[ConfigResource, AlterConfigsResult]:
        async def send(
            node: int | None, batch: Sequence[ConfigResource]
        ) -> Mapping[ConfigResource, AlterConfigsResult]:
            async def call() -> Any:
                return await self._send(node, api, lambda v: build(batch), deadline)

            _, resp = await self._with_retries(deadline, call)
            return m.alter_configs_results(resp, batch)

        got = await self._per_resource_target(rs, send, lambda r, e: AlterConfigsResult(r, e))
        self._note_errors(m.error_code(r.error) for r in got.values())
        return got

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

    # -- ACLs ------------------------------------------------------------------------------

    async def describe_acls(
        self, acl_filter: AclBindingFilter | None = None, *, timeout_ms: int | None = None
    ) -> list[AclBinding]:
        """ACLs matching ``acl_filter`` (default: all). Raises the broker's error, if any."""
        flt = AclBindingFilter.any() if acl_filter is None else acl_filter
        if not isinstance(flt, AclBindingFilter):
            raise ConfigError(f"describe_acls expects an AclBindingFilter, got {flt!r}")
        deadline = self._deadline(timeout_ms)

        async def call() -> Any:
            return await self._send(
                None,
                apis.DESCRIBE_ACLS,
                lambda v: m.acl_filter_fields(flt, v, "DescribeAcls"),
                deadline,
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

        async def call() -> Any:
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

        async def call() -> Any:
            return await self._send(
                None,
                apis.DELETE_ACLS,
                lambda v: {"filters": [m.acl_filter_fields(f, v, "DeleteAcls") for f in items]},
                deadline,
            )

        _, resp = await self._with_retries(deadline, call)
        got = m.delete_acls_results(resp, items)
        self._note_errors(m.error_code(r.error) for r in got.values())
        return self._finish(ResultMap(got), raise_on_error)

    # -- helpers ---------------------------------------------------------------------------

    @staticmethod
    def _finish(result: ResultMap[K, Any], raise_on_error: bool) -> ResultMap[K, Any]:
        if raise_on_error:
            result.raise_first()
        return result
