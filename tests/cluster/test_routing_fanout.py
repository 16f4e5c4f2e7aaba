"""The admin client's fan-out engine on scripted shards and sends (no broker needed): every
admin call that spans brokers runs through it, so its merge and retry rules are checked
here once."""

from __future__ import annotations

from collections.abc import Mapping

import anyio
import pytest

from kafka_async.cluster.routing import FanOut, Plan, run
from kafka_async.errors import (
    IncompatibleBrokerVersionError,
    KafkaConnectionError,
    KafkaError,
    NotCoordinatorError,
    UnknownServerError,
)

pytestmark = pytest.mark.anyio

NOT_COORDINATOR = NotCoordinatorError.code


def _code(result: tuple[str, int]) -> int:
    return result[1]


def _failed(key: str, error: KafkaError) -> tuple[str, int]:
    return (type(error).__name__, -1)


class Script:
    """Routes keys to node ``ord(key[0]) % 2``; answers what ``answers`` says per round."""

    def __init__(self, rounds: int = 5) -> None:
        self.sent: list[tuple[int | None, list[str]]] = []
        self.retried: list[tuple[str, int]] = []
        self.refreshed: list[list[str]] = []
        self.backoffs = 0
        self.rounds = rounds
        self.round = 0

    async def shard(self, pending: list[str]) -> Plan[str, tuple[str, int]]:
        self.round += 1
        plan: Plan[str, tuple[str, int]] = Plan()
        for key in pending:
            if key == "unroutable":
                plan.settle(key, ("unroutable", 3))
            else:
                plan.send(ord(key[0]) % 2, key)
        return plan

    async def backoff(self) -> bool:
        self.backoffs += 1
        return self.backoffs < self.rounds

    def on_retry(self, key: str, code: int) -> None:
        self.retried.append((key, code))

    async def before_round(self, pending: list[str]) -> None:
        self.refreshed.append(sorted(pending))


async def test_keys_are_sharded_sent_concurrently_and_merged() -> None:
    script = Script()
    in_flight = 0
    peak = 0

    async def send(node: int | None, keys: list[str]) -> Mapping[str, tuple[str, int]]:
        nonlocal in_flight, peak
        script.sent.append((node, sorted(keys)))
        in_flight += 1
        peak = max(peak, in_flight)
        await anyio.sleep(0.01)
        in_flight -= 1
        return {k: (f"ok {k}", 0) for k in keys}

    noted: list[int] = []
    fan = FanOut(script.shard, send, _code, _failed)
    got = await run(
        fan,
        ["a", "b", "c", "unroutable"],
        backoff=script.backoff,
        note_errors=noted.extend,
    )
    assert list(got) == ["a", "b", "c", "unroutable"]  # the caller's order
    assert got["a"] == ("ok a", 0)
    assert got["unroutable"] == ("unroutable", 3)  # settled while sharding, never sent
    assert sorted(script.sent) == [(0, ["b"]), (1, ["a", "c"])]
    assert peak == 2  # one request per node, at once
    assert noted == [0, 0, 0]
    assert script.backoffs == 0


async def test_retry_codes_route_again_after_backoff_and_before_round() -> None:
    script = Script()
    answered_not_coordinator = False

    async def send(node: int | None, keys: list[str]) -> Mapping[str, tuple[str, int]]:
        nonlocal answered_not_coordinator
        script.sent.append((node, sorted(keys)))
        if "b" in keys and not answered_not_coordinator:
            answered_not_coordinator = True
            return {k: ("moved", NOT_COORDINATOR) if k == "b" else ("ok", 0) for k in keys}
        return dict.fromkeys(keys, ("ok", 0))

    fan = FanOut(
        script.shard,
        send,
        _code,
        _failed,
        retry_codes=frozenset({NOT_COORDINATOR}),
        on_retry=script.on_retry,
        before_round=script.before_round,
    )
    got = await run(fan, ["a", "b"], backoff=script.backoff, note_errors=lambda codes: None)
    assert got == {"a": ("ok", 0), "b": ("ok", 0)}
    assert script.retried == [("b", NOT_COORDINATOR)]
    assert script.refreshed == [["b"]]
    assert script.backoffs == 1
    assert script.sent[-1] == (0, ["b"])  # only the failed shard is sent again


async def test_failed_sends_are_per_key_and_retried_when_retriable() -> None:
    script = Script()
    failures = iter([KafkaConnectionError("reset"), None])

    async def send(node: int | None, keys: list[str]) -> Mapping[str, tuple[str, int]]:
        if node == 1:
            error = next(failures)
            if error is not None:
                raise error
        return dict.fromkeys(keys, ("ok", 0))

    fan = FanOut(script.shard, send, _code, _failed, on_retry=script.on_retry)
    got = await run(fan, ["a", "b"], backoff=script.backoff, note_errors=lambda codes: None)
    assert got == {"a": ("ok", 0), "b": ("ok", 0)}
    assert script.retried == [("a", -1)]


async def test_the_deadline_leaves_the_last_result_of_each_key() -> None:
    script = Script(rounds=3)

    async def send(node: int | None, keys: list[str]) -> Mapping[str, tuple[str, int]]:
        if node == 1:
            raise KafkaConnectionError("broker gone")
        return dict.fromkeys(keys, ("ok", 0))

    fan = FanOut(script.shard, send, _code, _failed)
    got = await run(fan, ["a", "b"], backoff=script.backoff, note_errors=lambda codes: None)
    assert got == {"a": ("KafkaConnectionError", -1), "b": ("ok", 0)}
    assert script.backoffs == 3  # gave up when the backoff said the deadline had passed


async def test_a_missing_result_and_a_call_level_error() -> None:
    script = Script()

    async def partial_answer(node: int | None, keys: list[str]) -> Mapping[str, tuple[str, int]]:
        return {}

    fan = FanOut(script.shard, partial_answer, _code, _failed)
    got = await run(fan, ["a"], backoff=script.backoff, note_errors=lambda codes: None)
    assert got == {"a": (UnknownServerError.__name__, -1)}

    async def unsupported(node: int | None, keys: list[str]) -> Mapping[str, tuple[str, int]]:
        raise IncompatibleBrokerVersionError("too old")

    fan = FanOut(script.shard, unsupported, _code, _failed)
    with pytest.raises(IncompatibleBrokerVersionError):
        await run(fan, ["a"], backoff=script.backoff, note_errors=lambda codes: None)


async def test_none_is_a_result_not_a_missing_one() -> None:
    """ListOffsets for a timestamp past the last record answers "no offset" (None): a
    result, kept as is, unlike a key the answer leaves out."""

    async def shard(pending: list[str]) -> Plan[str, int | None]:
        plan: Plan[str, int | None] = Plan()
        for key in pending:
            plan.send(1, key)
        return plan

    async def no_retry() -> bool:
        return False

    async def answer(node: int | None, keys: list[str]) -> Mapping[str, int | None]:
        return {k: None for k in keys if k != "c"}

    def failed(key: str, error: KafkaError) -> int | None:
        return -1

    fan: FanOut[str, int | None] = FanOut(shard, answer, lambda r: 0, failed)
    got = await run(fan, ["a", "b", "c"], backoff=no_retry, note_errors=lambda c: None)
    assert got == {"a": None, "b": None, "c": -1}
