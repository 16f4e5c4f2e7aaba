"""``Producer.enqueue`` in C (the ``Enqueuer`` a producer installs) against its twin, the
Python method: the same records in, the same batches, deliveries, buffer use, sticky choices
and errors out.

The producers here are real ``Producer`` objects whose cluster client and sender are replaced
by stand-ins naming the topics' partitions and counting wake-ups: what ``enqueue`` reads of
them, nothing of the network (enqueue never does I/O itself).
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_async import Producer
from kafka_async.errors import ClientClosedError, KafkaError, RecordTooLargeClientError
from kafka_async.producer import fastpath
from kafka_async.producer.accumulator import Delivery
from kafka_async.structs import ClientState
from kafka_async.testing.plugin import skip_or_fail

TOPICS = {"a": frozenset(range(3)), "b": frozenset(range(2))}


@pytest.fixture(autouse=True)
def _needs_the_accelerator() -> None:
    if fastpath.Enqueuer is None:
        skip_or_fail("the producer's C fast path is not built (needs a C compiler at install)")


class _Metadata:
    def partitions_for(self, topic: str) -> frozenset[int]:
        return TOPICS.get(topic, frozenset())

    def available_partitions_for(self, topic: str) -> frozenset[int]:
        return TOPICS.get(topic, frozenset())


class _Client:
    def __init__(self) -> None:
        self._metadata = _Metadata()

    @property
    def metadata(self) -> _Metadata:
        return self._metadata

    async def wait_for_topic(self, topic: str, timeout: float) -> None:
        raise KafkaError(f"no topic {topic!r}")


class _Sender:
    def __init__(self) -> None:
        self.fatal_error: BaseException | None = None
        self.wakeups = 0

    def wakeup(self) -> None:
        self.wakeups += 1


def _producer(c_enqueue: bool, **config: Any) -> tuple[Producer, _Sender]:
    producer = Producer("127.0.0.1:1", **config)
    if not c_enqueue:
        del vars(producer)["enqueue"]  # the class's Python method serves
    producer._acc.loop = asyncio.get_running_loop()
    producer._client = _Client()  # type: ignore[assignment]
    sender = _Sender()
    producer._sender = sender  # type: ignore[assignment]
    producer._running = True
    producer._life.state = ClientState.RUNNING
    partitioner: Any = producer._partitioner
    if hasattr(partitioner, "_rng"):
        partitioner._rng = random.Random(7)
    return producer, sender


def _batches(producer: Producer) -> list[tuple[Any, ...]]:
    """Every queued batch: partition, records, bytes reserved and the records' bytes."""
    out = []
    for tp, ps in sorted(producer._acc._parts.items()):
        for batch in ps.batches:
            out.append((tp, batch.record_count, batch.reserved, bytes(batch.writer.buffer)))
    return out


def _outcome(d: Any) -> tuple[Any, ...]:
    if isinstance(d, BaseException):
        return ("error", type(d).__name__)
    assert isinstance(d, Delivery)
    return (d._batch.tp, d._delta, d._timestamp, d._key_size, d._value_size)


values = st.one_of(
    st.none(),
    st.binary(max_size=300),
    st.binary(max_size=3000),
    st.builds(bytearray, st.binary(max_size=30)),
    st.text(max_size=5),
)
keys = st.one_of(st.none(), st.none(), st.binary(max_size=20), st.integers())
records = st.tuples(
    st.sampled_from(["a", "a", "b", "nope"]),
    values,
    keys,
    st.one_of(st.none(), st.none(), st.integers(-1, 3)),
    st.one_of(st.integers(0, 2**40), st.just(-5), st.just(True)),
    st.one_of(st.none(), st.none(), st.just([("h", b"v")]), st.just([(1, b"v")])),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(records, max_size=120),
    partitioner=st.sampled_from(["default", "uniform_sticky", "round_robin"]),
    max_batch_size=st.sampled_from([200, 1024, 16384]),
)
def test_c_enqueue_agrees_with_the_python_method(
    rows: list[Any], partitioner: str, max_batch_size: int
) -> None:
    async def run(c_enqueue: bool) -> tuple[Any, ...]:
        producer, sender = _producer(
            c_enqueue,
            partitioner=partitioner,
            max_batch_size=max_batch_size,
            max_request_size=2048,
            metadata_wait_ms=1,
        )
        assert (type(producer.enqueue).__name__ == "Enqueuer") is c_enqueue
        outcomes = []
        for topic, value, key, partition, ts, headers in rows:
            try:
                d: Any = await producer.enqueue(topic, value, key, partition, ts, headers)
            except (KafkaError, TypeError, ValueError, AssertionError) as exc:
                d = exc
            outcomes.append(_outcome(d))
        sticky = {t: list(v) for t, v in (producer._sticky or {}).items()}
        return (
            outcomes,
            _batches(producer),
            producer._acc.buffer_used,
            sticky,
            sender.wakeups,
        )

    c = asyncio.run(run(True))
    py = asyncio.run(run(False))
    assert c == py


def test_c_enqueue_takes_keywords_and_refuses_bad_calls() -> None:
    async def main() -> None:
        producer, _ = _producer(True)
        enqueue: Any = producer.enqueue
        d = await enqueue(topic="a", value=b"v", key=b"k", partition=1, timestamp_ms=5)
        assert _outcome(d) == (("a", 1), 0, 5, 1, 1)
        d = await enqueue("a", b"w", partition=1, timestamp_ms=6)
        assert _outcome(d) == (("a", 1), 1, 6, -1, 1)
        with pytest.raises(TypeError, match="unexpected keyword argument 'valu'"):
            enqueue("a", valu=b"v")
        with pytest.raises(TypeError, match="multiple values for argument 'value'"):
            enqueue("a", b"v", value=b"w")
        with pytest.raises(TypeError, match="missing required argument 'topic'"):
            enqueue(value=b"v")
        with pytest.raises(TypeError, match="at most 6 arguments"):
            enqueue("a", None, None, None, None, None, None)

    asyncio.run(main())


def test_serializer_errors_are_raised_by_the_call_in_both() -> None:
    def boom(value: Any) -> bytes:
        raise ValueError("cannot serialize")

    async def main() -> None:
        for c_enqueue in (True, False):
            producer, _ = _producer(c_enqueue, value_serializer=boom)
            with pytest.raises(ValueError, match="cannot serialize"):
                producer.enqueue("a", {"x": 1})  # type: ignore[unused-coroutine]  # the call raises

    asyncio.run(main())


def test_an_enqueue_can_be_a_task_and_a_woken_sender_gets_a_turn() -> None:
    async def main() -> None:
        producer, sender = _producer(True)
        first = await producer.enqueue("a", b"1", partition=0)  # opens the batch
        assert sender.wakeups == 1
        # The C path answers a record for the open batch without suspending; the awaitable
        # passes for a coroutine, so it may become a task.
        aw = producer.enqueue("a", b"2", partition=0)
        assert asyncio.iscoroutine(aw)
        second = await asyncio.create_task(aw)
        assert second._batch is first._batch
        assert second._delta == 1
        # When something asked for the sender's attention, the call wakes it and the await
        # gives it a turn (a coroutine that checkpoints, not the ready answer).
        producer._acc.wakeup_needed = True
        aw = producer.enqueue("a", b"3", partition=0)
        assert sender.wakeups == 2
        assert producer._acc.wakeup_needed is False
        assert type(aw).__name__ == "coroutine"
        third = await aw
        assert third._delta == 2

    asyncio.run(main())


def test_c_enqueue_stops_with_the_producer() -> None:
    async def main() -> None:
        producer, sender = _producer(True)
        await producer.enqueue("a", b"1", partition=0)
        sender.fatal_error = RecordTooLargeClientError("a background failure")
        with pytest.raises(RecordTooLargeClientError, match="a background failure"):
            await producer.enqueue("a", b"2", partition=0)
        sender.fatal_error = None
        producer._running = False
        producer._life.state = ClientState.CLOSED
        with pytest.raises(ClientClosedError, match="the producer is closed"):
            await producer.enqueue("a", b"3", partition=0)

    asyncio.run(main())


# -- send: the C variant (Enqueuer in send mode, awaiting a Sending) against the Python one --


def _settle_all(producer: Producer, fail_partition: int | None = None) -> None:
    """Settle every queued batch: written at offset 100 per batch, or failed for one
    partition (the error a broker's refusal gives)."""
    acc = producer._acc
    for tp, ps in sorted(acc._parts.items()):
        for n, batch in enumerate(list(ps.batches)):
            batch.closed = True
            if tp.partition == fail_partition:
                acc.fail(batch, RecordTooLargeClientError(f"refused {tp}"))
            else:
                acc.complete(batch, 100 * (n + 1))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(records, min_size=1, max_size=40),
    fail_partition=st.one_of(st.none(), st.integers(0, 2)),
)
def test_c_send_agrees_with_the_python_send(rows: list[Any], fail_partition: int | None) -> None:
    async def run(c_path: bool) -> list[Any]:
        producer, _ = _producer(c_path, partitioner="round_robin", metadata_wait_ms=1)
        if not c_path:
            del vars(producer)["send"]
        assert (type(producer.send).__name__ == "Enqueuer") is c_path
        outcomes: list[Any] = [None] * len(rows)

        async def one(i: int, row: Any) -> None:
            try:
                outcomes[i] = tuple(await producer.send(*row))
            except (KafkaError, TypeError, ValueError) as exc:
                outcomes[i] = ("error", type(exc).__name__, str(exc))

        tasks = [asyncio.create_task(one(i, row)) for i, row in enumerate(rows)]
        for _ in range(3):
            await asyncio.sleep(0)  # every task queues its record and waits
        _settle_all(producer, fail_partition)
        await asyncio.gather(*tasks)
        return outcomes

    assert asyncio.run(run(True)) == asyncio.run(run(False))


def test_a_cancelled_c_send_leaves_its_record_queued() -> None:
    async def main() -> None:
        producer, _ = _producer(True)
        first = await producer.enqueue("a", b"0", partition=0)
        task = asyncio.create_task(producer.send("a", b"1", partition=0))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert first._batch.record_count == 2  # still queued, still sent
        waiting = asyncio.create_task(producer.send("a", b"2", partition=0))
        await asyncio.sleep(0)
        _settle_all(producer)  # skips the cancelled task's future, wakes the other
        metadata = await waiting
        assert (metadata.partition, metadata.offset) == (0, 102)

    asyncio.run(main())


def test_c_send_waits_on_trio_through_the_python_wait() -> None:
    import anyio

    async def main() -> None:
        producer = Producer("127.0.0.1:1")
        producer._client = _Client()  # type: ignore[assignment]
        producer._sender = _Sender()  # type: ignore[assignment]
        producer._running = True
        producer._life.state = ClientState.RUNNING
        assert producer._acc.loop is None  # not asyncio: batches have no loop
        got: list[Any] = []

        async def one(value: bytes) -> None:
            got.append(await producer.send("a", value, partition=1))

        async with anyio.create_task_group() as tg:
            tg.start_soon(one, b"x")
            tg.start_soon(one, b"y")
            await anyio.sleep(0.01)
            _settle_all(producer)
        assert sorted((m.partition, m.offset) for m in got) == [(1, 100), (1, 101)]

    anyio.run(main, backend="trio")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(records, max_size=80), max_batch_size=st.sampled_from([200, 16384]))
def test_c_produce_agrees_with_the_python_produce(rows: list[Any], max_batch_size: int) -> None:
    async def run(c_path: bool) -> tuple[Any, ...]:
        producer, sender = _producer(
            c_path, max_batch_size=max_batch_size, max_request_size=2048, metadata_wait_ms=1
        )
        if not c_path:
            del vars(producer)["produce"]
        assert (type(producer.produce).__name__ == "Enqueuer") is c_path
        outcomes: list[Any] = []
        for row in rows:
            try:
                await producer.produce(*row)
                outcomes.append("queued")
            except (KafkaError, TypeError, ValueError) as exc:
                outcomes.append(("error", type(exc).__name__))
        flags = [
            (tp, b.report_at_flush)
            for tp, ps in sorted(producer._acc._parts.items())
            for b in ps.batches
        ]
        queued = _batches(producer)
        failed = sum(
            b.record_count
            for ps in producer._acc._parts.values()
            for b in ps.batches
            if b.tp.partition == 0
        )
        _settle_all(producer, fail_partition=0)
        return (
            outcomes,
            flags,
            queued,
            producer._acc.buffer_used,
            sender.wakeups,
            producer._acc.unreported_failed == failed,
        )

    c = asyncio.run(run(True))
    assert c == asyncio.run(run(False))
    assert c[-1]


def test_a_subclass_override_of_send_enqueue_or_produce_is_kept() -> None:
    """The C paths shadow the methods only where the class does not override them."""
    seen: list[str] = []

    class Traced(Producer):
        def send(self, *args: Any, **kwargs: Any) -> Any:
            seen.append("send")
            return super().send(*args, **kwargs)

    async def main() -> None:
        producer = Traced("127.0.0.1:1")
        assert "send" not in vars(producer)
        assert type(producer.enqueue).__name__ == "Enqueuer"
        assert type(producer.produce).__name__ == "Enqueuer"
        producer.send("a", b"v").close()  # the override ran; the coroutine is not awaited
        assert seen == ["send"]

    asyncio.run(main())
