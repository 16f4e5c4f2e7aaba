"""The admin client's one fan-out engine: shard, send, merge, retry the failed shards.

An admin call has keys (topics, groups, partitions, config resources) that go to different
brokers: the controller, each group's coordinator, each partition's leader, a broker's own
configs. Every such call is one :class:`FanOut`:

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
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from ..errors import (
    BrokerResponseError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    UnknownServerError,
)

K = TypeVar("K")
R = TypeVar("R")


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
    import anyio

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
                r = got.get(key)
                if r is None:
                    results[key] = fan.failed(key, UnknownServerError("no result for this item"))
                    continue
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


__all__ = ["FanOut", "Plan", "gather", "item_error", "retriable", "run"]
