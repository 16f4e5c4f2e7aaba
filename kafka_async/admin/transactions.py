"""Transactions and producers (KIP-664): list, describe and abort transactions, describe the
producers a partition knows, and fence transactional producers.

:meth:`AdminClient.list_transactions`, :meth:`~AdminClient.describe_transactions`,
:meth:`~AdminClient.describe_producers`, :meth:`~AdminClient.abort_transaction` and
:meth:`~AdminClient.fence_producers` delegate here. Routing, as the Java admin client does it:

- ListTransactions goes to every broker (each answers for the transactional ids whose
  coordinator it is); the listings are joined.
- DescribeTransactions and the InitProducerId of a fence go to each transactional id's
  transaction coordinator (FindCoordinator with key type 1), through the fan-out engine.
- DescribeProducers and WriteTxnMarkers go to the partition's leader: a hanging
  transaction (a producer that died inside one, its coordinator unaware) is aborted by
  writing the abort marker there directly, with the producer id, epoch and coordinator
  epoch that DescribeProducers reports.

Fencing bumps the producer epoch of a transactional id (InitProducerId with the id and no
producer id), exactly what a new producer with that id does at start-up: the previous
producer is fenced (its next request fails with ProducerFencedError or
InvalidProducerEpochError) and its open transaction is aborted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial

from .. import errors as E
from ..cluster import TRANSACTION
from ..cluster.routing import Router, error_code, error_or_none, gather
from ..errors import ConfigError, KafkaError, error_for_code
from ..protocol import apis
from ..protocol.apis.describe_producers import (
    DescribeProducersRequest,
    DescribeProducersResponse,
    TopicRequest,
)
from ..protocol.apis.describe_transactions import (
    DescribeTransactionsRequest,
    DescribeTransactionsResponse,
)
from ..protocol.apis.init_producer_id import InitProducerIdRequest
from ..protocol.apis.list_transactions import ListTransactionsRequest, ListTransactionsResponse
from ..protocol.apis.write_txn_markers import (
    WritableTxnMarker,
    WritableTxnMarkerTopic,
    WriteTxnMarkersRequest,
    WriteTxnMarkersResponse,
)
from ..structs import TopicPartition
from . import checks
from .mapping import unsupported
from .results import ResultMap

__all__ = [
    "AbortTransactionSpec",
    "FenceProducerResult",
    "PartitionProducers",
    "ProducerState",
    "TransactionDescription",
    "TransactionListing",
]

#: A fence sends InitProducerId with this transaction timeout, as the Java admin client does:
#: the fencing epoch never runs a transaction of its own.
FENCE_TRANSACTION_TIMEOUT_MS = 1
CONCURRENT_TRANSACTIONS = E.ConcurrentTransactionsError.code


def _ids(values: Sequence[str] | str, what: str) -> list[str]:

    if isinstance(values, str):
        raise ConfigError(f"expected a list of {what}s, got the string {values!r}")
    out = checks.unique(values, what)
    for v in out:
        if not isinstance(v, str) or not v:
            raise ConfigError(f"{what}s must be non-empty strings, got {v!r}")
    return out


# --------------------------------------------------------------------------------------------
# Results and inputs
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TransactionListing:
    """A transaction as :meth:`AdminClient.list_transactions` lists it, with the broker
    that coordinates it."""

    transactional_id: str
    producer_id: int
    state: str
    coordinator: int


@dataclass(frozen=True)
class TransactionDescription:
    """A transactional id's state at its coordinator (``Empty``, ``Ongoing``,
    ``PrepareCommit``, ``CompleteAbort``, ...) and the partitions of its open transaction.
    ``start_time_ms`` is -1 when no transaction is open."""

    transactional_id: str
    state: str = ""
    producer_id: int = -1
    producer_epoch: int = -1
    timeout_ms: int = -1
    start_time_ms: int = -1
    partitions: tuple[TopicPartition, ...] = ()
    coordinator: int = -1
    error: KafkaError | None = None


@dataclass(frozen=True)
class ProducerState:
    """A producer with state on a partition. ``current_transaction_start_offset`` is the
    first offset of its open transaction, -1 when none is open (the other -1s: unknown)."""

    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_timestamp: int
    coordinator_epoch: int
    current_transaction_start_offset: int


@dataclass(frozen=True)
class PartitionProducers:
    """The producers a partition's leader knows (:meth:`AdminClient.describe_producers`)."""

    topic: str
    partition: int
    producers: tuple[ProducerState, ...] = ()
    error: KafkaError | None = None


@dataclass(frozen=True)
class AbortTransactionSpec:
    """A hanging transaction to abort on one partition: the producer id and epoch and the
    coordinator epoch, as :meth:`AdminClient.describe_producers` reports them."""

    partition: TopicPartition
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "partition", checks.topic_partition(self.partition))
        for name, lo, hi in (
            ("producer_id", 0, 2**63 - 1),
            ("producer_epoch", 0, 2**15 - 1),
            ("coordinator_epoch", 0, 2**31 - 1),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
                raise ConfigError(
                    f"AbortTransactionSpec.{name} must be an int {lo}-{hi}, got {value!r}"
                )

    @classmethod
    def of(cls, partition: TopicPartition, producer: ProducerState) -> AbortTransactionSpec:
        """The spec that aborts ``producer``'s open transaction on ``partition`` (a
        coordinator epoch of -1, none written yet, becomes 0 as in Kafka's tools)."""
        return cls(
            partition,
            producer.producer_id,
            producer.producer_epoch,
            max(0, producer.coordinator_epoch),
        )


@dataclass(frozen=True)
class FenceProducerResult:
    """Outcome of fencing one transactional id: the producer id and the new epoch."""

    transactional_id: str
    producer_id: int = -1
    producer_epoch: int = -1
    error: KafkaError | None = None


# --------------------------------------------------------------------------------------------
# Pure request building and mapping
# --------------------------------------------------------------------------------------------


def list_request(
    states: Sequence[str] | None,
    producer_ids: Sequence[int] | None,
    duration_ms: int | None,
    transactional_id_pattern: str | None,
    version: int,
) -> ListTransactionsRequest:
    """ListTransactions with the filters given; a filter the version lacks raises."""

    if duration_ms is not None and version < 1:
        raise unsupported("ListTransactions", "filtering by duration", version)
    if transactional_id_pattern is not None and version < 2:
        raise unsupported("ListTransactions", "filtering by transactional id pattern", version)
    return ListTransactionsRequest(
        state_filters=list(states or ()),
        producer_id_filters=list(producer_ids or ()),
        duration_filter=-1 if duration_ms is None else duration_ms,
        transactional_id_pattern=transactional_id_pattern,
    )


def listings(resp: ListTransactionsResponse, broker: int) -> list[TransactionListing]:
    """The transactions of one broker's answer; raises its error."""
    if resp.error_code:
        raise error_for_code(resp.error_code)
    return [
        TransactionListing(t.transactional_id, t.producer_id, t.transaction_state, broker)
        for t in resp.transaction_states
    ]


def descriptions(
    resp: DescribeTransactionsResponse, coordinator: int
) -> dict[str, TransactionDescription]:
    out: dict[str, TransactionDescription] = {}
    for s in resp.transaction_states:
        if s.error_code:
            out[s.transactional_id] = TransactionDescription(
                s.transactional_id, coordinator=coordinator, error=error_or_none(s.error_code)
            )
            continue
        out[s.transactional_id] = TransactionDescription(
            transactional_id=s.transactional_id,
            state=s.transaction_state,
            producer_id=s.producer_id,
            producer_epoch=s.producer_epoch,
            timeout_ms=s.transaction_timeout_ms,
            start_time_ms=s.transaction_start_time_ms,
            partitions=tuple(
                sorted(TopicPartition(t.topic, p) for t in s.topics for p in t.partitions)
            ),
            coordinator=coordinator,
        )
    return out


def producers_request(tps: Sequence[TopicPartition]) -> DescribeProducersRequest:
    by_topic: dict[str, list[int]] = {}
    for tp in tps:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return DescribeProducersRequest(
        topics=[TopicRequest(name=t, partition_indexes=ps) for t, ps in by_topic.items()]
    )


def producers_results(resp: DescribeProducersResponse) -> dict[TopicPartition, PartitionProducers]:
    out: dict[TopicPartition, PartitionProducers] = {}
    for t in resp.topics:
        for p in t.partitions:
            tp = TopicPartition(t.name, p.partition_index)
            out[tp] = PartitionProducers(
                t.name,
                p.partition_index,
                tuple(
                    ProducerState(
                        s.producer_id,
                        s.producer_epoch,
                        s.last_sequence,
                        s.last_timestamp,
                        s.coordinator_epoch,
                        s.current_txn_start_offset,
                    )
                    for s in p.active_producers
                ),
                error_or_none(p.error_code, p.error_message),
            )
    return out


def abort_request(spec: AbortTransactionSpec) -> WriteTxnMarkersRequest:
    """An abort marker for one producer on one partition."""
    tp = spec.partition
    return WriteTxnMarkersRequest(
        markers=[
            WritableTxnMarker(
                producer_id=spec.producer_id,
                producer_epoch=spec.producer_epoch,
                transaction_result=False,
                topics=[WritableTxnMarkerTopic(name=tp.topic, partition_indexes=[tp.partition])],
                coordinator_epoch=spec.coordinator_epoch,
            )
        ]
    )


def abort_result(resp: WriteTxnMarkersResponse, spec: AbortTransactionSpec) -> int:
    """The error code the leader gave the marker (-1 when the answer does not name it)."""
    tp = spec.partition
    for marker in resp.markers:
        if marker.producer_id != spec.producer_id:
            continue
        for t in marker.topics:
            if t.name != tp.topic:
                continue
            for p in t.partitions:
                if p.partition_index == tp.partition:
                    return p.error_code
    return -1


# --------------------------------------------------------------------------------------------
# The calls
# --------------------------------------------------------------------------------------------


async def list_transactions(
    router: Router,
    *,
    states: Sequence[str] | None,
    producer_ids: Sequence[int] | None,
    duration_ms: int | None,
    transactional_id_pattern: str | None,
    timeout_ms: int | None,
) -> list[TransactionListing]:
    if isinstance(states, str):
        raise ConfigError(f"states: expected a list of states, got the string {states!r}")
    for pid in producer_ids or ():
        if isinstance(pid, bool) or not isinstance(pid, int) or pid < 0:
            raise ConfigError(f"producer ids must be non-negative ints, got {pid!r}")
    if duration_ms is not None and (
        isinstance(duration_ms, bool) or not isinstance(duration_ms, int) or duration_ms < 0
    ):
        raise ConfigError(f"duration_ms must be a non-negative int, got {duration_ms!r}")
    deadline = router.deadline(timeout_ms)

    # Each broker's answer is its listings or its error (the engine retries a coordinator
    # still loading and a dropped connection).
    async def send(node: int) -> list[TransactionListing] | KafkaError:
        _, resp = await router.send(
            node,
            apis.LIST_TRANSACTIONS,
            lambda v: list_request(states, producer_ids, duration_ms, transactional_id_pattern, v),
            deadline,
        )
        router.note_errors([resp.error_code])
        try:
            return listings(resp, node)
        except KafkaError as exc:
            return exc

    found = await router.per_broker(
        None,
        send,
        lambda node, e: e,
        lambda r: error_code(r) if isinstance(r, KafkaError) else 0,
        deadline,
        retry_codes=frozenset({E.CoordinatorLoadInProgressError.code}),
    )
    out: list[TransactionListing] = []
    for node in sorted(found):
        got = found[node]
        # A broker's transactions would be silently missing otherwise.
        if isinstance(got, KafkaError):
            raise got
        out.extend(got)
    return sorted(out, key=lambda t: t.transactional_id)


async def describe_transactions(
    router: Router,
    transactional_ids: Sequence[str],
    *,
    timeout_ms: int | None,
    raise_on_error: bool,
) -> ResultMap[str, TransactionDescription]:
    ids = _ids(transactional_ids, "transactional id")
    if not ids:
        return ResultMap()
    deadline = router.deadline(timeout_ms)

    async def send(node: int, batch: Sequence[str]) -> Mapping[str, TransactionDescription]:
        body = DescribeTransactionsRequest(transactional_ids=list(batch))
        _, resp = await router.send(node, apis.DESCRIBE_TRANSACTIONS, lambda v: body, deadline)
        return descriptions(resp, node)

    got = await router.per_coordinator(
        ids,
        send,
        lambda r: error_code(r.error),
        deadline,
        lambda t, e: TransactionDescription(t, error=e),
        key_type=TRANSACTION,
    )
    result = ResultMap({t: got[t] for t in ids if t in got})
    if raise_on_error:
        result.raise_first()
    return result


async def describe_producers(
    router: Router,
    partitions: Sequence[TopicPartition],
    *,
    timeout_ms: int | None,
    raise_on_error: bool,
) -> ResultMap[TopicPartition, PartitionProducers]:

    tps = checks.unique((checks.topic_partition(p) for p in partitions), "partition")
    if not tps:
        raise ConfigError("describe_producers needs at least one partition")
    deadline = router.deadline(timeout_ms)

    async def send(
        node: int, batch: Sequence[TopicPartition]
    ) -> Mapping[TopicPartition, PartitionProducers]:
        body = producers_request(batch)
        _, resp = await router.send(node, apis.DESCRIBE_PRODUCERS, lambda v: body, deadline)
        return producers_results(resp)

    got = await router.per_leader(
        tps,
        send,
        lambda r: error_code(r.error),
        deadline,
        lambda tp, e: PartitionProducers(tp.topic, tp.partition, error=e),
    )
    result: ResultMap[TopicPartition, PartitionProducers] = ResultMap(
        {tp: got[tp] for tp in tps if tp in got}
    )
    if raise_on_error:
        result.raise_first()
    return result


@dataclass(frozen=True)
class _AbortResult:
    error: KafkaError | None = None


async def abort_transaction(
    router: Router, spec: AbortTransactionSpec, *, timeout_ms: int | None
) -> None:
    if not isinstance(spec, AbortTransactionSpec):
        raise ConfigError(f"abort_transaction expects an AbortTransactionSpec, got {spec!r}")
    deadline = router.deadline(timeout_ms)
    tp = spec.partition

    async def send(
        node: int, batch: Sequence[TopicPartition]
    ) -> Mapping[TopicPartition, _AbortResult]:
        body = abort_request(spec)
        _, resp = await router.send(node, apis.WRITE_TXN_MARKERS, lambda v: body, deadline)
        code = abort_result(resp, spec)
        if code == -1:
            return {
                tp: _AbortResult(E.UnknownServerError("the leader's answer left out the marker"))
            }
        return {tp: _AbortResult(error_or_none(code))}

    got = await router.per_leader(
        [tp], send, lambda r: error_code(r.error), deadline, lambda _, e: _AbortResult(e)
    )
    error = got[tp].error
    if error is not None:
        raise error


async def fence_producers(
    router: Router,
    transactional_ids: Sequence[str],
    *,
    timeout_ms: int | None,
    raise_on_error: bool,
) -> ResultMap[str, FenceProducerResult]:
    ids = _ids(transactional_ids, "transactional id")
    if not ids:
        return ResultMap()
    deadline = router.deadline(timeout_ms)

    async def send(node: int, batch: Sequence[str]) -> Mapping[str, FenceProducerResult]:
        # InitProducerId carries one transactional id: one request per id, concurrently.
        out: dict[str, FenceProducerResult] = {}

        async def one(tid: str) -> None:
            body = InitProducerIdRequest(
                transactional_id=tid, transaction_timeout_ms=FENCE_TRANSACTION_TIMEOUT_MS
            )
            # A failed connection fails the whole batch, which the fan-out sends again.
            _, resp = await router.send(node, apis.INIT_PRODUCER_ID, lambda v: body, deadline)
            if resp.error_code:
                out[tid] = FenceProducerResult(tid, error=error_or_none(resp.error_code))
            else:
                out[tid] = FenceProducerResult(tid, resp.producer_id, resp.producer_epoch)

        await gather([partial(one, t) for t in batch])
        return out

    got = await router.per_coordinator(
        ids,
        send,
        lambda r: error_code(r.error),
        deadline,
        lambda t, e: FenceProducerResult(t, error=e),
        key_type=TRANSACTION,
        # The previous epoch's transaction is still being aborted: ask again.
        retry_codes=frozenset({CONCURRENT_TRANSACTIONS}),
    )
    result = ResultMap({t: got[t] for t in ids if t in got})
    if raise_on_error:
        result.raise_first()
    return result
