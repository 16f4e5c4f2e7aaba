"""Request routing for every client: where a request goes, how a call that spans brokers
fans out, when it is retried and for how long.

One :class:`Router` sits over a :class:`~kafka_async.cluster.client.ClusterClient` and sends
to any broker, the controller, a coordinator (group or transactional id), each partition's
leader, each key's coordinator, or each broker. A call has one :class:`Deadline`; between
retries it sleeps one backoff (:class:`~kafka_async.net.backoff.ExponentialBackoff`, the one
formula of the library: exponential, capped, with jitter). Which error codes send a request
around again comes from ``errors.py``'s flags (``retriable``, ``invalid_metadata``,
``invalid_coordinator``): the ``*_MOVED`` sets below.

The fan-out engine (franz-go's "sharder": shard, send, merge, retry the failed shards):
a call has keys (topics, groups, partitions, config resources) that go to different brokers.
Every such call is one :class:`FanOut`:

1. ``shard(pending)`` decides where each key goes this round: a :class:`Plan` of keys per
   node (``None``: any broker), plus keys already settled while routing (an unknown topic)
   and keys to route again next round (a coordinator not found yet);
2. ``send(node, keys)`` runs once per node, all nodes concurrently, and returns a result
   per key;
3. results are merged per key; a result whose error code is in ``retry_codes`` (the key
   must be routed again: NOT_CONTROLLER, NOT_COORDINATOR, NOT_LEADER_OR_FOLLOWER...) and
   every key of a send that failed retriably (a dropped connection) go to the next round,
   after ``on_retry`` (forget a coordinator) and, past the backoff, ``before_round``
   (refresh metadata);
4. rounds repeat until nothing is pending or the call's deadline has passed; a key keeps
   the last result it got, so a deadline leaves the last error, never a gap.

A send error that belongs to the whole call (an API the broker lacks, a version that cannot
carry an argument) is raised as is: ``item_error`` decides.

The pure parts (the retry sets, :func:`leaders_for`, :func:`is_retriable`, :class:`Plan`)
decide; :class:`Router` and :func:`run` do the I/O.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Generic, TypeVar

import anyio

from .. import errors as E
from ..errors import (
    BrokerResponseError,
    ConfigError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    UnknownServerError,
    error_for_code,
)
from ..net.backoff import ExponentialBackoff
from ..protocol.schema import Api, ReqT, RespT
from ..structs import TopicPartition
from .client import GROUP, ClusterClient
from .metadata import ClusterMetadata

log = logging.getLogger("kafka_async.cluster.routing")

K = TypeVar("K")
R = TypeVar("R")

# -- retry sets (pure, from errors.py's flags) ---------------------------------------------


def _codes(keep: Callable[[type[BrokerResponseError]], bool]) -> frozenset[int]:
    """The codes of every error class (errors.py registers one per code) that ``keep``
    accepts."""
    out: set[int] = set()
    todo: list[type[BrokerResponseError]] = [BrokerResponseError]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if "code" in cls.__dict__ and cls.code >= 0 and keep(cls):
            out.add(cls.code)
    return frozenset(out)


#: Codes worth another try as they are (the Java client's ``RetriableException`` set).
RETRIABLE_CODES: frozenset[int] = _codes(lambda c: c.retriable)
#: Codes after which the metadata must be refreshed before a retry (the leader moved, the
#: topic changed).
INVALID_METADATA_CODES: frozenset[int] = _codes(lambda c: c.invalid_metadata)
#: Codes after which the coordinator must be looked up again (FindCoordinator).
COORDINATOR_MOVED: frozenset[int] = _codes(lambda c: c.invalid_coordinator)
#: Retriable codes that mean "same coordinator, try again shortly" (it is loading the group
#: or transaction state): retriable, and neither a moved coordinator nor stale metadata.
COORDINATOR_LOADING: frozenset[int] = frozenset({E.CoordinatorLoadInProgressError.code})
#: Codes after which a request must go to a freshly looked-up controller.
CONTROLLER_MOVED: frozenset[int] = frozenset({E.NotControllerError.code})
#: The invalid-metadata codes that say a partition's leader moved (or is being elected):
#: the partition is routed again. UNKNOWN_TOPIC_OR_PARTITION is an answer here, not a move.
LEADER_MOVED: frozenset[int] = INVALID_METADATA_CODES & frozenset(
    {
        E.LeaderNotAvailableError.code,
        E.NotLeaderOrFollowerError.code,
        E.FencedLeaderEpochError.code,
        E.UnknownLeaderEpochError.code,
    }
)


def is_retriable(code: int, also: frozenset[int] = frozenset()) -> bool:
    """Whether an answer with error ``code`` is worth sending again (its class is
    ``retriable``, or ``code`` is in ``also``); 0 (no error) is not."""
    return code != 0 and (code in RETRIABLE_CODES or code in also)


def error_or_none(code: int, message: str | None = None) -> BrokerResponseError | None:
    """None for code 0, else the typed error of ``code`` (an empty message counts as none)."""
    return None if code == 0 else error_for_code(code, message or None)


def error_code(err: BaseException | None) -> int:
    """The Kafka error code of ``err`` (0 for None, -1 for client-side errors)."""
    if err is None:
        return 0
    unknown = getattr(err, "unknown_code", None)
    if isinstance(unknown, int):
        return unknown
    code = getattr(err, "code", None)
    return code if isinstance(code, int) else -1


# -- deadlines and backoff -----------------------------------------------------------------


@dataclass(slots=True)
class Deadline:
    """When a call must end (``anyio.current_time()`` clock), and how many times it has
    backed off so far (the backoff grows with that count)."""

    at: float
    attempts: int = 0

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        """The deadline ``seconds`` from now."""
        return cls(anyio.current_time() + seconds)

    @classmethod
    def after_ms(cls, timeout_ms: int | None, default_ms: int) -> Deadline:
        """The deadline ``timeout_ms`` from now (``default_ms`` when None); ConfigError
        unless ``timeout_ms`` is a positive int."""
        if timeout_ms is None:
            timeout_ms = default_ms
        elif not isinstance(timeout_ms, int) or isinstance(timeout_ms, bool) or timeout_ms <= 0:
            raise ConfigError(f"timeout_ms must be a positive int, got {timeout_ms!r}")
        return cls.after(timeout_ms / 1000.0)

    def remaining(self) -> float:
        """Seconds left (negative once passed)."""
        return self.at - anyio.current_time()

    def remaining_ms(self) -> int:
        """Milliseconds left, at least 1 (for the timeouts requests carry to the broker)."""
        return max(1, int(self.remaining() * 1000))


def retry_backoff(retry_backoff_ms: int, maximum_ms: int = 1000) -> ExponentialBackoff:
    """The backoff between retries of one call: ``retry_backoff_ms`` doubling per retry,
    capped at ``maximum_ms`` (never below the initial delay), +-20% jitter."""
    return ExponentialBackoff.from_ms(retry_backoff_ms, max(retry_backoff_ms, maximum_ms))


# -- routing decisions (pure) --------------------------------------------------------------


@dataclass(slots=True)
class LeaderPlan:
    """Partitions grouped by leader (:func:`leaders_for`)."""

    #: Partitions per leader's node id, in the order given.
    by_leader: dict[int, list[TopicPartition]] = field(default_factory=dict)
    #: The topic is not in the metadata at all.
    unknown_topic: list[TopicPartition] = field(default_factory=list)
    #: The topic is known but has no such partition.
    unknown_partition: list[TopicPartition] = field(default_factory=list)
    #: The partition exists but has no leader now (an election is under way).
    no_leader: list[TopicPartition] = field(default_factory=list)


def leaders_for(md: ClusterMetadata, tps: Iterable[TopicPartition]) -> LeaderPlan:
    """Group ``tps`` by their leader in ``md``, setting aside those that cannot be routed."""
    plan = LeaderPlan()
    for tp in tps:
        parts = md.partitions_for(tp.topic)
        if not parts:
            plan.unknown_topic.append(tp)
        elif tp.partition not in parts:
            plan.unknown_partition.append(tp)
        else:
            leader = md.leader_for(tp)
            if leader is None or leader < 0:
                plan.no_leader.append(tp)
            else:
                plan.by_leader.setdefault(leader, []).append(tp)
    return plan


# -- the fan-out engine --------------------------------------------------------------------


def retriable(err: BaseException) -> bool:
    """A connection problem or timeout worth another round."""
    return isinstance(err, KafkaConnectionError | KafkaTimeoutError) and err.retriable


def item_error(err: KafkaError) -> bool:
    """Whether ``err`` belongs to the items of one request (a broker error code, or a
    connection problem that outlasted the retries) rather than to the whole call (an API
    the broker lacks, an argument the negotiated version cannot carry)."""
    return isinstance(err, BrokerResponseError) or retriable(err)


async def gather(calls: Sequence[Callable[[], Awaitable[None]]]) -> None:
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


@dataclass(slots=True)
class Plan(Generic[K, R]):
    """One round's routing: keys per node, keys settled while routing, keys to route again."""

    by_node: dict[int | None, list[K]] = field(default_factory=dict)
    done: dict[K, R] = field(default_factory=dict)
    retry: list[K] = field(default_factory=list)

    def send(self, node: int | None, key: K) -> None:
        """Send ``key`` to ``node`` this round."""
        self.by_node.setdefault(node, []).append(key)

    def settle(self, key: K, result: R, *, again: bool = False) -> None:
        """``key`` has ``result`` without a request; ``again``: route it once more."""
        self.done[key] = result
        if again:
            self.retry.append(key)


@dataclass(frozen=True, slots=True)
class FanOut(Generic[K, R]):
    """How one admin call fans out (see the module doc)."""

    shard: Callable[[list[K]], Awaitable[Plan[K, R]]]
    send: Callable[[int | None, list[K]], Awaitable[Mapping[K, R]]]
    code_of: Callable[[R], int]
    failed: Callable[[K, KafkaError], R]
    retry_codes: frozenset[int] = frozenset()
    #: Which send errors are per item (the others raise).
    is_item_error: Callable[[KafkaError], bool] = item_error
    #: Called for each key going to the next round, with the error code that sent it
    #: there (-1 for a failed send).
    on_retry: Callable[[K, int], None] | None = None
    #: Awaited after the backoff, before the next round routes the pending keys.
    before_round: Callable[[list[K]], Awaitable[None]] | None = None


async def run(
    fan: FanOut[K, R],
    keys: Sequence[K],
    *,
    backoff: Callable[[], Awaitable[bool]],
    note_errors: Callable[[Iterable[int]], None],
) -> dict[K, R]:
    """Route, send and retry ``keys`` until all are settled or ``backoff()`` says the
    deadline has passed; the result per key, in ``keys`` order."""
    results: dict[K, R] = {}
    pending = list(keys)
    while pending:
        plan = await fan.shard(pending)
        results.update(plan.done)
        retry = list(plan.retry)

        async def one(node: int | None, batch: list[K], retry: list[K]) -> None:
            try:
                got = await fan.send(node, batch)
            except KafkaError as exc:
                if not fan.is_item_error(exc):
                    raise
                for key in batch:
                    # A timeout (the call's deadline passing before this round could send,
                    # say) tells less than a broker's answer from an earlier round: keep that.
                    if not (isinstance(exc, KafkaTimeoutError) and key in results):
                        results[key] = fan.failed(key, exc)
                if retriable(exc):
                    for key in batch:
                        if fan.on_retry is not None:
                            fan.on_retry(key, -1)
                        retry.append(key)
                return
            note_errors(fan.code_of(r) for r in got.values())
            for key in batch:
                if key not in got:  # (None may be a result)
                    results[key] = fan.failed(key, UnknownServerError("no result for this item"))
                    continue
                r = got[key]
                results[key] = r
                code = fan.code_of(r)
                if code in fan.retry_codes:
                    if fan.on_retry is not None:
                        fan.on_retry(key, code)
                    retry.append(key)

        await gather([_bind(one, node, batch, retry) for node, batch in plan.by_node.items()])
        pending = retry
        if pending:
            if not await backoff():
                break
            if fan.before_round is not None:
                await fan.before_round(pending)
    return {k: results[k] for k in keys if k in results}


def _bind(
    fn: Callable[[int | None, list[K], list[K]], Awaitable[None]],
    node: int | None,
    batch: list[K],
    retry: list[K],
) -> Callable[[], Awaitable[None]]:
    async def call() -> None:
        await fn(node, batch, retry)

    return call


# -- sending -------------------------------------------------------------------------------


async def send_request(
    cluster: ClusterClient,
    node_id: int,
    api: Api[ReqT, RespT],
    body: ReqT | Callable[[int], ReqT],
    *,
    purpose: str = "default",
    min_version: int | None = None,
    max_version: int | None = None,
    timeout: float | None = None,  # noqa: ASYNC109 - a per-request deadline, by design
) -> tuple[int, RespT]:
    """Send to ``node_id`` at the highest version both sides support within the bounds;
    return (version, decoded response).

    ``body`` may be a function of the version, for APIs whose shape changed (OffsetFetch
    v8 moved to per-group lists); it raises IncompatibleBrokerVersionError when the call
    needs something that version lacks. ``timeout`` defaults to ``request_timeout_ms``.
    """
    conn = await cluster.connection(node_id, purpose)
    version = conn.version_for(api, min_version, max_version)
    payload: ReqT = body(version) if callable(body) else body
    resp = await conn.request(api, payload, version=version, timeout=timeout)
    return version, resp


class Router:
    """Where requests go, with one deadline per call, one backoff and the retry sets.

    ``check_open`` is called before each request (a client's lifecycle check);
    ``default_timeout_ms`` is the deadline of a call that names none. The counters
    (``requests`` per API, ``errors_by_code``, ``retries``, ``in_flight``) are what a
    client's ``statistics()`` shows.
    """

    def __init__(
        self,
        cluster: ClusterClient,
        *,
        retry_backoff_ms: int | None = None,
        default_timeout_ms: int = 60_000,
        check_open: Callable[[], None] | None = None,
    ) -> None:
        self.cluster = cluster
        if retry_backoff_ms is None:
            retry_backoff_ms = cluster.config.retry_backoff_ms
        #: The delay between retries of one call.
        self.backoff_policy = retry_backoff(retry_backoff_ms)
        self.default_timeout_ms = default_timeout_ms
        self._check_open = check_open
        self.requests: Counter[str] = Counter()
        self.errors_by_code: Counter[int] = Counter()
        self.retries = 0
        self.in_flight = 0

    def __repr__(self) -> str:
        return f"<Router in_flight={self.in_flight} retries={self.retries}>"

    # -- deadline, backoff, counters ---------------------------------------------------

    def deadline(self, timeout_ms: int | None = None) -> Deadline:
        """A call's deadline ``timeout_ms`` from now (None: ``default_timeout_ms``)."""
        return Deadline.after_ms(timeout_ms, self.default_timeout_ms)

    async def backoff(self, deadline: Deadline, rand: Callable[[], float] = random.random) -> bool:
        """Sleep one retry backoff if time allows; False when the deadline would pass.

        The delay grows per retry of the call (``backoff_policy``), so a broker that keeps
        failing the same request is not hammered until the deadline.
        """
        delay = self.backoff_policy.delay(deadline.attempts + 1, rand)
        if anyio.current_time() + delay >= deadline.at:
            return False
        deadline.attempts += 1
        self.retries += 1
        await anyio.sleep(delay)
        return True

    def note_errors(self, codes: Iterable[int]) -> None:
        """Count broker error codes (``errors_by_code``); -1, a client-side error, is not
        a broker's code and is left out."""
        for code in codes:
            if code > 0:
                self.errors_by_code[code] += 1

    # -- targets -------------------------------------------------------------------------

    def brokers(self) -> frozenset[int]:
        """The node ids the metadata knows now."""
        return frozenset(self.cluster.metadata.brokers)

    def controller(self) -> int | None:
        """The controller's node id when metadata names a known one (None: any broker,
        which forwards on modern Kafka)."""
        md = self.cluster.metadata
        controller = md.controller_id
        if controller is not None and controller >= 0 and controller in md.brokers:
            return int(controller)
        return None

    async def coordinator(self, key: str, key_type: int = GROUP) -> int:
        """The coordinator of a group (``key_type`` GROUP) or transactional id."""
        return int(await self.cluster.coordinator(key, key_type))

    def forget_coordinator(self, key: str, key_type: int = GROUP) -> None:
        """Drop the cached coordinator of ``key`` (it moved, or its connection failed)."""
        self.cluster.invalidate_coordinator(key, key_type)

    async def refresh(self, topics: Sequence[str] | None = None) -> None:
        """Refresh the metadata (of ``topics``; None: the client's set, []: brokers only)."""
        await self.cluster.refresh_metadata(topics)

    async def refresh_quietly(self, topics: Sequence[str] | None = None) -> None:
        """:meth:`refresh`, a failure only logged: the retry that follows reports the real
        problem."""
        try:
            await self.refresh(topics)
        except KafkaError as exc:
            log.debug("metadata refresh failed during a retry: %s", exc)

    # -- one request ---------------------------------------------------------------------

    async def send(
        self,
        node_id: int | None,
        api: Api[ReqT, RespT],
        build: Callable[[int], ReqT],
        deadline: Deadline,
        *,
        min_version: int | None = None,
    ) -> tuple[int, RespT]:
        """Send ``build(version)`` to ``node_id`` (None: any broker) within ``deadline``;
        return (version, response). Raises KafkaTimeoutError once the deadline has passed.
        """
        if self._check_open is not None:
            self._check_open()
        remaining = deadline.remaining()
        if remaining <= 0:
            raise KafkaTimeoutError(f"{api.name}: call deadline passed")
        timeout = min(remaining, self.cluster.config.request_timeout)
        if node_id is None:
            node_id = await self.cluster.any_node()
        self.requests[api.name] += 1
        self.in_flight += 1
        try:
            return await send_request(
                self.cluster, node_id, api, build, min_version=min_version, timeout=timeout
            )
        finally:
            self.in_flight -= 1

    async def with_retries(
        self,
        deadline: Deadline,
        call: Callable[[], Awaitable[R]],
        *,
        refresh: bool = True,
    ) -> R:
        """``call()`` again after a backoff while it fails retriably (a dropped connection,
        a timeout), refreshing the broker list first when ``refresh``; until ``deadline``."""
        while True:
            try:
                return await call()
            except KafkaError as exc:
                if not retriable(exc) or not await self.backoff(deadline):
                    raise
                if refresh:
                    await self.refresh_quietly([])

    async def to_controller(
        self,
        api: Api[ReqT, RespT],
        build: Callable[[int], ReqT],
        top_code: Callable[[RespT], int],
        deadline: Deadline,
    ) -> tuple[int, RespT]:
        """One request to the controller (any broker forwards it on KRaft clusters),
        resent after a backoff while the connection fails or the request-level error is
        retriable (NOT_CONTROLLER, a controller being elected), until ``deadline``."""
        while True:
            try:
                version, resp = await self.send(self.controller(), api, build, deadline)
            except KafkaError as exc:
                if not retriable(exc) or not await self.backoff(deadline):
                    raise
                await self.refresh_quietly()
                continue
            code = top_code(resp)
            if code:
                self.note_errors([code])
                if is_retriable(code) and await self.backoff(deadline):
                    await self.refresh_quietly()
                    continue
            return version, resp

    async def to_coordinator(
        self,
        key: str,
        api: Api[ReqT, RespT],
        build: Callable[[int], ReqT],
        deadline: Deadline,
        *,
        key_type: int = GROUP,
        moved: Callable[[int, RespT], bool] | None = None,
    ) -> tuple[int, RespT]:
        """One request to the coordinator of ``key``, resent (the coordinator looked up
        again) while the connection fails, the lookup fails retriably, or ``moved(version,
        response)`` says the answer was a moved or loading coordinator; until ``deadline``.
        Returns (version, response)."""
        while True:
            try:
                node = await self.coordinator(key, key_type)
                version, resp = await self.send(node, api, build, deadline)
            except KafkaError as exc:
                code = error_code(exc)
                if (retriable(exc) or code in COORDINATOR_MOVED | COORDINATOR_LOADING) and (
                    await self.backoff(deadline)
                ):
                    self.forget_coordinator(key, key_type)
                    continue
                raise
            if moved is not None and moved(version, resp) and await self.backoff(deadline):
                self.forget_coordinator(key, key_type)
                continue
            return version, resp

    # -- fan-outs ------------------------------------------------------------------------

    async def fan_out(self, fan: FanOut[K, R], keys: Sequence[K], deadline: Deadline) -> dict[K, R]:
        """Run one :class:`FanOut` with this router's backoff and error counters."""
        return await run(
            fan, keys, backoff=lambda: self.backoff(deadline), note_errors=self.note_errors
        )

    async def per_controller(
        self,
        api: Api[ReqT, RespT],
        keys: Sequence[K],
        build: Callable[[Sequence[K], int], ReqT],
        parse: Callable[[RespT], Mapping[K, R]],
        code_of: Callable[[R], int],
        deadline: Deadline,
        failed: Callable[[K, KafkaError], R],
    ) -> dict[K, R]:
        """Send ``keys`` to the controller; resend those that got NOT_CONTROLLER (after a
        metadata refresh). Only connection failures are per key; other errors raise."""

        async def shard(pending: list[K]) -> Plan[K, R]:
            plan: Plan[K, R] = Plan()
            plan.by_node[self.controller()] = pending
            return plan

        async def send(node: int | None, batch: list[K]) -> Mapping[K, R]:
            _, resp = await self.send(node, api, partial(build, batch), deadline)
            return parse(resp)

        async def refresh(pending: list[K]) -> None:
            await self.refresh_quietly()

        fan = FanOut(
            shard,
            send,
            code_of,
            failed,
            retry_codes=CONTROLLER_MOVED,
            is_item_error=retriable,
            before_round=refresh,
        )
        return await self.fan_out(fan, keys, deadline)

    async def per_coordinator(
        self,
        keys: Sequence[str],
        send: Callable[[int, Sequence[str]], Awaitable[Mapping[str, R]]],
        code_of: Callable[[R], int],
        deadline: Deadline,
        failed: Callable[[str, KafkaError], R],
        *,
        key_type: int = GROUP,
        retry_codes: frozenset[int] = frozenset(),
    ) -> dict[str, R]:
        """Group ``keys`` (group ids, or transactional ids with ``key_type``
        TRANSACTION) by coordinator, one concurrent request per coordinator; keys whose
        coordinator moved (or was loading) are routed again.

        ``retry_codes`` are further codes worth another round at the same coordinator
        (CONCURRENT_TRANSACTIONS for a transaction still ending).
        """
        wait = COORDINATOR_LOADING | retry_codes

        async def shard(pending: list[str]) -> Plan[str, R]:
            plan: Plan[str, R] = Plan()

            async def locate(key: str) -> None:
                try:
                    node = await self.coordinator(key, key_type)
                except KafkaError as exc:
                    if not item_error(exc):
                        raise
                    code = error_code(exc)
                    again = retriable(exc) or code in COORDINATOR_MOVED | COORDINATOR_LOADING
                    plan.settle(key, failed(key, exc), again=again)
                    return
                plan.send(node, key)

            # Lookups run concurrently (the cluster client shares one per key).
            await gather([partial(locate, k) for k in pending])
            return plan

        async def send_to(node: int | None, batch: list[str]) -> Mapping[str, R]:
            assert node is not None
            return await send(node, batch)

        def on_retry(key: str, code: int) -> None:
            # loading (or another listed code): same coordinator, just wait
            if code not in wait:
                self.forget_coordinator(key, key_type)

        fan = FanOut(
            shard,
            send_to,
            code_of,
            failed,
            retry_codes=COORDINATOR_MOVED | wait,
            on_retry=on_retry,
        )
        return await self.fan_out(fan, keys, deadline)

    async def per_leader(
        self,
        tps: Sequence[TopicPartition],
        send: Callable[[int, Sequence[TopicPartition]], Awaitable[Mapping[TopicPartition, R]]],
        code_of: Callable[[R], int],
        deadline: Deadline,
        failed: Callable[[TopicPartition, KafkaError], R],
        *,
        retry_codes: frozenset[int] = LEADER_MOVED,
        wait_for_topics: bool = False,
        once: bool = False,
    ) -> dict[TopicPartition, R]:
        """Group partitions by leader, one concurrent request per leader; partitions whose
        leader moved (a result code in ``retry_codes``) or was unreachable are retried
        after a metadata refresh, until ``deadline``.

        The metadata of ``tps``' topics is refreshed first (a failure raises). A partition
        of an unknown topic, or one its topic lacks, gets UnknownTopicOrPartitionError; one
        with no leader yet LeaderNotAvailableError (and is routed again).

        ``wait_for_topics`` (a consumer asking about topics it reads): only topics missing
        from the metadata are refreshed first (a failure only logged), an unknown topic is
        routed again (it may be being created) and a topic the metadata refused
        (authorization) gets TopicAuthorizationFailedError. ``once``: one round, nothing
        refreshed first and nothing retried (the caller asks again later).
        """

        async def shard(pending: list[TopicPartition]) -> Plan[TopicPartition, R]:
            plan: Plan[TopicPartition, R] = Plan()
            md = self.cluster.metadata
            if wait_for_topics:
                for tp in [tp for tp in pending if tp.topic in md.unauthorized_topics]:
                    plan.settle(tp, failed(tp, E.TopicAuthorizationFailedError(tp.topic)))
                pending = [tp for tp in pending if tp.topic not in md.unauthorized_topics]
            where = leaders_for(md, pending)
            for tp in where.unknown_topic:
                plan.settle(tp, failed(tp, E.UnknownTopicOrPartitionError()), again=wait_for_topics)
            for tp in where.unknown_partition:
                error = E.UnknownTopicOrPartitionError(
                    f"{tp.topic} has no partition {tp.partition}"
                )
                plan.settle(tp, failed(tp, error))
            for tp in where.no_leader:
                plan.settle(tp, failed(tp, E.LeaderNotAvailableError()), again=True)
            for node, batch in where.by_leader.items():
                plan.by_node[node] = batch
            return plan

        async def send_to(
            node: int | None, batch: list[TopicPartition]
        ) -> Mapping[TopicPartition, R]:
            assert node is not None
            return await send(node, batch)

        async def refresh(pending: list[TopicPartition]) -> None:
            await self.refresh_quietly(sorted({tp.topic for tp in pending}))

        async def no_retry() -> bool:
            return False

        topics = sorted({tp.topic for tp in tps})
        if wait_for_topics:
            md = self.cluster.metadata
            missing = [t for t in topics if md.partitions_for(t) is None]
            if missing and not once:
                await self.refresh_quietly(missing)
        elif not once:
            await self.refresh(topics)
        fan = FanOut(shard, send_to, code_of, failed, retry_codes=retry_codes, before_round=refresh)
        if once:
            return await run(fan, tps, backoff=no_retry, note_errors=self.note_errors)
        return await self.fan_out(fan, tps, deadline)

    async def per_node(
        self,
        keys: Sequence[K],
        node_of: Callable[[K], int | None],
        send: Callable[[int | None, Sequence[K]], Awaitable[Mapping[K, R]]],
        failed: Callable[[K, KafkaError], R],
        code_of: Callable[[R], int],
        deadline: Deadline,
    ) -> dict[K, R]:
        """Each key to the broker ``node_of(key)`` names (None: any broker, all such keys
        together). A broker not in metadata gets BrokerNotAvailableError; a failed
        connection is retried after a refresh; broker errors are per key."""

        async def shard(pending: list[K]) -> Plan[K, R]:
            brokers = self.cluster.metadata.brokers
            plan: Plan[K, R] = Plan()
            for key in pending:
                node = node_of(key)
                if node is not None and node not in brokers:
                    error = E.BrokerNotAvailableError(f"no broker {node} in the cluster")
                    plan.settle(key, failed(key, error))
                else:
                    plan.send(node, key)
            return plan

        async def refresh(pending: list[K]) -> None:
            await self.refresh_quietly([])

        fan = FanOut(shard, send, code_of, failed, before_round=refresh)
        return await self.fan_out(fan, keys, deadline)

    async def per_broker(
        self,
        brokers: Sequence[int] | None,
        send: Callable[[int], Awaitable[R]],
        failed: Callable[[int, KafkaError], R],
        code_of: Callable[[R], int],
        deadline: Deadline,
        *,
        retry_codes: frozenset[int] = frozenset(),
    ) -> dict[int, R]:
        """One request to each of ``brokers`` (None: every broker in metadata), all at once.

        The key is the broker's node id; a broker not in metadata gets
        BrokerNotAvailableError, a failed connection is retried after a refresh.
        """
        if brokers is None:
            await self.refresh_quietly([])
            brokers = sorted(self.cluster.metadata.brokers)

        async def send_to(node: int | None, keys: Sequence[int]) -> Mapping[int, R]:
            assert node is not None
            return {node: await send(node)}

        async def shard(pending: list[int]) -> Plan[int, R]:
            known = self.cluster.metadata.brokers
            plan: Plan[int, R] = Plan()
            for node in pending:
                if node in known:
                    plan.send(node, node)
                else:
                    error = E.BrokerNotAvailableError(f"no broker {node} in the cluster")
                    plan.settle(node, failed(node, error))
            return plan

        async def refresh(pending: list[int]) -> None:
            await self.refresh_quietly([])

        fan = FanOut(shard, send_to, code_of, failed, retry_codes=retry_codes, before_round=refresh)
        return await self.fan_out(fan, list(brokers), deadline)


__all__ = [
    "CONTROLLER_MOVED",
    "COORDINATOR_LOADING",
    "COORDINATOR_MOVED",
    "INVALID_METADATA_CODES",
    "LEADER_MOVED",
    "RETRIABLE_CODES",
    "Deadline",
    "FanOut",
    "LeaderPlan",
    "Plan",
    "Router",
    "error_code",
    "error_or_none",
    "gather",
    "is_retriable",
    "item_error",
    "leaders_for",
    "retriable",
    "retry_backoff",
    "run",
    "send_request",
]
