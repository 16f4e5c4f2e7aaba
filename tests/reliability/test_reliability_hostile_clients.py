"""Hostile Fetch and Produce responses against the Consumer and the Producer.

Partition 0 of topic ``t`` is led by the hostile fake broker, partition 1 by a healthy one.
Decompression bombs (every codec) and corrupt CRCs in partition 0 must surface as one typed
error per attempt, must not move the consumer past the bad batch, must stay within bounded
memory, and must not stop partition 1 from flowing.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import anyio
import pytest

from kafka_async import Consumer, Producer
from kafka_async.errors import (
    CorruptRecordError,
    DecompressionLimitError,
    KafkaError,
)
from kafka_async.protocol.apis import FETCH, PRODUCE
from kafka_async.records.batch import build_batch
from kafka_async.structs import TopicPartition
from tests.harness.fake_broker import FakeBroker, FakeRequest, Payload, response_payload
from tests.harness.soak import record_result

HOSTILE, HEALTHY = 1, 2
TP0, TP1 = TopicPartition("t", 0), TopicPartition("t", 1)
#: Consumer cap on one batch's decompressed size in these tests.
CAP = 1024 * 1024
#: What the bombs inflate to.
BOMB = 32 * 1024 * 1024

Records = Callable[[int, int], bytes | None]


def fetch_handler(records_for: Records, high_watermark: Callable[[int], int]) -> Any:
    """A Fetch answer: ``records_for(partition, fetch_offset)`` for every partition asked;
    a long-poll pause when none has data (like a real broker's ``max_wait_ms``)."""

    async def handle(req: FakeRequest) -> Any:
        version = req.api_version
        topics = []
        any_data = False
        for t in req.body.topics:
            parts = []
            for p in t.partitions:
                data = records_for(p.partition, p.fetch_offset)
                any_data = any_data or bool(data)
                hw = high_watermark(p.partition)
                part: dict[str, Any] = {
                    "partition_index": p.partition,
                    "error_code": 0,
                    "high_watermark": hw,
                    "records": data or b"",
                }
                if version >= 4:
                    part["last_stable_offset"] = hw
                if version >= 5:
                    part["log_start_offset"] = 0
                parts.append(part)
            topic: dict[str, Any] = {"partitions": parts}
            if version >= 13:
                topic["topic_id"] = t.topic_id
            else:
                topic["topic"] = t.topic
            topics.append(topic)
        if not any_data:
            await anyio.sleep(min(req.body.max_wait_ms, 200) / 1000)
        body: dict[str, Any] = {"responses": topics}
        if version >= 7:
            body["session_id"] = 0
        return body

    return handle


def good_batch(base_offset: int, n: int = 5) -> bytes:
    return build_batch(
        [(None, None, b"v%d" % (base_offset + i), None) for i in range(n)], base_offset=base_offset
    )


@dataclass
class Pair:
    hostile: FakeBroker
    healthy: FakeBroker


@pytest.fixture
async def pair() -> AsyncIterator[Pair]:
    async with (
        FakeBroker({"t": 2}, node_id=HOSTILE) as bad,
        FakeBroker({"t": 2}, node_id=HEALTHY) as good,
    ):
        # Both agree: partition 0 on the hostile broker, partition 1 on the healthy one.
        for b in (bad, good):
            b.topic_ids = dict(bad.topic_ids)
            b.leaders[("t", 1)] = HEALTHY
            b.leaders[("t", 0)] = HOSTILE
        bad.peers = [(HEALTHY, good.host, good.port)]
        good.peers = [(HOSTILE, bad.host, bad.port)]
        # Partition 1: an endless healthy stream of 5-record batches.
        good.set_default(
            FETCH.key,
            fetch_handler(
                lambda p, off: good_batch(off) if p == 1 else None, lambda p: 1_000_000_000
            ),
        )
        yield Pair(bad, good)


def _consumer(pair: Pair, **config: Any) -> Consumer[bytes, bytes]:
    return Consumer(
        bootstrap_servers=pair.healthy.address,
        enable_auto_commit=False,
        enable_fetch_sessions=False,
        request_timeout_ms=3000,
        fetch_max_wait_ms=200,
        max_decompressed_size=CAP,
        reconnect_backoff_ms=1,
        **config,
    )


async def _poisoned_partition(pair: Pair, poison: bytes, expected: type[KafkaError]) -> None:
    pair.hostile.set_default(
        FETCH.key,
        fetch_handler(lambda p, off: poison if p == 0 and off == 0 else None, lambda p: 100),
    )
    consumer = _consumer(pair)
    errors: list[BaseException] = []
    p1_records = 0
    peak = 0
    with anyio.fail_after(30):
        async with consumer:
            consumer.assign([TP0, TP1])
            consumer.seek(TP0, 0)
            consumer.seek(TP1, 0)
            while len(errors) < 3 or p1_records < 50:
                tracemalloc.start()
                try:
                    got = await consumer.getmany(timeout_ms=500)
                except KafkaError as exc:
                    errors.append(exc)
                    continue
                finally:
                    peak = max(peak, tracemalloc.get_traced_memory()[1])
                    tracemalloc.stop()
                assert TP0 not in got, "records handed out from (or past) the bad batch"
                p1_records += len(got.get(TP1, []))
            # The consumer stays on the bad batch: same position, same error, every time.
            assert await consumer.position(TP0) == 0
            assert all(type(e) is expected for e in errors), errors
            # The application decides to skip it; the stream then goes on.
            pair.hostile.set_default(
                FETCH.key,
                fetch_handler(
                    lambda p, off: good_batch(off) if p == 0 and off >= 1 else None,
                    lambda p: 100,
                ),
            )
            consumer.seek(TP0, 1)
            while True:
                got = await consumer.getmany(TP0, timeout_ms=500)
                if got:
                    assert got[TP0][0].offset == 1
                    break
    # Bounded memory: the cap (1 MiB) plus a few copies of the response itself, never the
    # bomb's 32 MiB.
    assert peak < 3 * CAP + 4 * len(poison), f"peak allocation {peak} bytes"


@pytest.mark.anyio
@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
async def test_hostile_fetch_decompression_bomb(pair: Pair, codec: str) -> None:
    bomb = build_batch([(None, None, b"\0" * BOMB, None)], codec)
    assert len(bomb) < BOMB // 20
    await _poisoned_partition(pair, bomb, DecompressionLimitError)
    record_result(f"hostile: Fetch decompression bomb ({codec}, {len(bomb)} B -> 32 MiB)")


@pytest.mark.anyio
async def test_hostile_fetch_corrupt_crc(pair: Pair) -> None:
    batch = bytearray(good_batch(0, 1))
    batch[-3] ^= 0xFF  # inside the CRC-covered records
    await _poisoned_partition(pair, bytes(batch), CorruptRecordError)
    record_result("hostile: Fetch corrupt CRC (consumer stays on the batch)")


# --------------------------------------------------------------------------------------------
# Producer
# --------------------------------------------------------------------------------------------


def produce_ok(base: list[int]) -> Any:
    """A well-formed Produce answer for every partition of the request."""

    def handle(req: FakeRequest) -> Any:
        responses = []
        for t in req.body.topic_data:
            parts = []
            for p in t.partition_data:
                parts.append(
                    {"index": p.index, "error_code": 0, "base_offset": base[0], "record_errors": []}
                )
                base[0] += 1
            responses.append({"name": t.name, "partition_responses": parts})
        return {"responses": responses, "throttle_time_ms": 0}

    return handle


@pytest.mark.anyio
async def test_hostile_produce_response_truncated(pair: Pair) -> None:
    """Every cut of a Produce response: the send settles (typed error or, after a retry,
    success) in time, and the producer keeps working."""
    base = [0]
    pair.hostile.set_default(PRODUCE.key, produce_ok(base))
    outcomes: dict[str, int] = {}
    async with Producer(
        bootstrap_servers=pair.healthy.address,
        enable_idempotence=False,
        acks=1,
        linger_ms=0,
        request_timeout_ms=2000,
        delivery_timeout_ms=4000,
        reconnect_backoff_ms=1,
        # A cut answer is retried: a short backoff keeps the ~50 cuts quick.
        retry_backoff_ms=10,
    ) as producer:
        await producer.send("t", b"warm-up", partition=0)
        version = max(r.api_version for r in pair.hostile.requests if r.api_key == PRODUCE.key)
        template = response_payload(
            PRODUCE,
            version,
            0,
            {
                "responses": [
                    {
                        "name": "t",
                        "partition_responses": [
                            {"index": 0, "error_code": 0, "base_offset": 5, "record_errors": []}
                        ],
                    }
                ],
                "throttle_time_ms": 0,
            },
        )
        for cut in range(len(template)):

            def reply(req: FakeRequest, cut: int = cut) -> Any:
                payload = req.correlation_id.to_bytes(4, "big", signed=True) + template[4:]
                return Payload(payload[:cut])

            pair.hostile.script(PRODUCE.key, reply, count=1)
            with anyio.fail_after(10):
                try:
                    await producer.send("t", b"x%d" % cut, partition=0)
                    key = "delivered"
                except KafkaError as exc:
                    key = type(exc).__name__
            outcomes[key] = outcomes.get(key, 0) + 1
        # Still working, on both brokers.
        with anyio.fail_after(10):
            await producer.send("t", b"after", partition=0)
            pair.healthy.set_default(PRODUCE.key, produce_ok([0]))
            await producer.send("t", b"after", partition=1)
    assert set(outcomes) <= {"delivered", "ProtocolDecodeError", "KafkaConnectionError"}, outcomes
    record_result(
        "hostile: Produce response truncated at every offset",
        runs=len(template),
        extra_outcomes=str(outcomes),
    )


@pytest.mark.anyio
async def test_hostile_garbled_produce_response_is_retried_when_idempotent(pair: Pair) -> None:
    """The broker applied the Produce but its answer is garbage: an idempotent producer must
    retry (the broker dedupes), not report a failure for a record that is in the log
    (regression: it failed the batch with ProtocolDecodeError)."""
    base = [0]
    pair.hostile.set_default(PRODUCE.key, produce_ok(base))
    pair.hostile.script(
        PRODUCE.key, lambda req: Payload(req.correlation_id.to_bytes(4, "big") + b"\x00"), count=1
    )
    for broker in (pair.hostile, pair.healthy):
        broker.set_default(
            22,  # InitProducerId
            lambda req: {
                "throttle_time_ms": 0,
                "error_code": 0,
                "producer_id": 1000,
                "producer_epoch": 0,
            },
        )
    async with Producer(
        bootstrap_servers=pair.healthy.address,
        linger_ms=0,
        request_timeout_ms=2000,
        delivery_timeout_ms=4000,
        reconnect_backoff_ms=1,
    ) as producer:
        with anyio.fail_after(10):
            md = await producer.send("t", b"once", partition=0)
    assert md.offset >= 0
