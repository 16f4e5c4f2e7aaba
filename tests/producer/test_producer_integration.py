"""Producer against a real broker (Tansu by default), read back by peer clients."""

from __future__ import annotations

import itertools
import socket
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any, Literal

import anyio
import pytest
from producer_readback import consume_aiokafka, consume_confluent, wait_until

from kafka_async import Producer, RecordMetadata, TimestampType
from kafka_async.errors import (
    ClientClosedError,
    ConfigError,
    KafkaError,
    KafkaTimeoutError,
    RecordTooLargeClientError,
    UnknownTopicOrPartitionError,
)
from kafka_async.producer import murmur2_partition
from kafka_async.producer.config import CompressionType
from kafka_async.testing.topics import create_topic
from tests.harness.broker_gaps import (
    confirm_broker_gap,
    librdkafka_log_append_time_error,
)

pytestmark = [pytest.mark.integration]

NewTopic = Callable[..., str]


# -- basics ------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_send_returns_metadata_and_offsets_increase(
    kafka_broker: str, new_topic: NewTopic
) -> None:
    topic = new_topic(1)
    async with Producer(bootstrap_servers=kafka_broker) as producer:
        before = int(time.time() * 1000)
        mds = [await producer.send(topic, value=f"v{i}".encode(), key=b"k") for i in range(5)]
        assert all(isinstance(md, RecordMetadata) for md in mds)
        assert [md.offset for md in mds] == [0, 1, 2, 3, 4]
        assert {md.partition for md in mds} == {0}
        assert all(md.topic == topic for md in mds)
        assert all(md.timestamp_type == TimestampType.CREATE_TIME for md in mds)
        assert all(before - 1000 <= md.timestamp <= before + 60_000 for md in mds)
        assert mds[0].serialized_key_size == 1
        assert mds[0].serialized_value_size == 2
        delivery = await producer.enqueue(topic, value=b"late", timestamp_ms=1234)
        md = await delivery
        assert (md.offset, md.timestamp) == (5, 1234)
        assert delivery.done()
        assert delivery.result() == md
        stats = producer.statistics()
        assert stats["state"] == "running"
        assert stats["producer_id"] >= 0
        assert stats["buffer_used"] == 0


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_works_on_both_backends_with_start_close(
    kafka_broker: str, new_topic: NewTopic, anyio_backend: str
) -> None:
    topic = new_topic(2)
    producer = Producer(bootstrap_servers=kafka_broker, linger_ms=1)
    await producer.start()
    try:
        deliveries = [
            await producer.enqueue(topic, value=b"x", key=str(i).encode()) for i in range(200)
        ]
        await producer.flush()
        assert all(d.done() for d in deliveries)
        counts = Counter(d.result().partition for d in deliveries)
        assert sum(counts.values()) == 200
    finally:
        await producer.close()
    with pytest.raises(ClientClosedError):
        await producer.send(topic, b"after close")
    await producer.close()  # idempotent


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_produce_without_handles_lands_every_record_in_order(
    kafka_broker: str, new_topic: NewTopic, anyio_backend: str
) -> None:
    """``produce``: no handle per record; every record lands once, in order per key, and a
    flush with nothing failed returns quietly."""
    topic = new_topic(3)
    total = 5000
    async with Producer(bootstrap_servers=kafka_broker, linger_ms=2) as producer:
        for i in range(total):
            await producer.produce(topic, value=i.to_bytes(4, "big"), key=b"k%d" % (i % 7))
        await producer.produce(topic, value=b"headers", key=b"k0", headers=[("h", b"v")])
        await producer.flush()
        stats = producer.statistics()
    assert stats["records_acked"] == total + 1
    assert stats["records_failed_unreported"] == 0
    msgs = consume_confluent(kafka_broker, topic, 3, total + 1)
    by_key: dict[bytes, list[bytes]] = defaultdict(list)
    for m in msgs:
        by_key[m.key()].append(m.value())
    assert sorted(len(v) for v in by_key.values()) == sorted(
        [len(range(k, total, 7)) + (k == 0) for k in range(7)]
    )
    for k in range(7):
        expected = [i.to_bytes(4, "big") for i in range(k, total, 7)]
        assert [v for v in by_key[b"k%d" % k] if v != b"headers"] == expected


@pytest.mark.anyio
async def test_not_started_producer_raises() -> None:
    producer = Producer(bootstrap_servers="127.0.0.1:1")
    with pytest.raises(ClientClosedError, match="not started"):
        await producer.send("t", b"v")
    await producer.close()


# -- read back by peers -----------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.interop
@pytest.mark.parametrize("compression", [None, "gzip", "snappy", "lz4", "zstd"])
async def test_records_read_back_identically_by_confluent(
    kafka_broker: str, new_topic: NewTopic, compression: CompressionType | None
) -> None:
    topic = new_topic(3)
    sent: dict[tuple[int, int], tuple[Any, ...]] = {}
    async with Producer(
        bootstrap_servers=kafka_broker, compression_type=compression, linger_ms=20
    ) as producer:
        deliveries = []
        for i in range(300):
            key = None if i % 7 == 0 else f"key-{i % 13}".encode()
            value = None if i % 11 == 0 else (f"value-{i}-".encode() * (i % 5 + 1))
            headers = (
                [("h1", f"{i}".encode()), ("empty", b""), ("\u00fcni", None)] if i % 3 else None
            )
            ts = 1_600_000_000_000 + i
            d = await producer.enqueue(
                topic, value=value, key=key, timestamp_ms=ts, headers=headers
            )
            deliveries.append((d, (key, value, headers or [], ts)))
        await producer.flush()
        for d, expect in deliveries:
            md = d.result()
            sent[(md.partition, md.offset)] = expect
    msgs = await anyio.to_thread.run_sync(consume_confluent, kafka_broker, topic, 3, len(sent))
    assert len(msgs) == len(sent)
    for msg in msgs:
        key, value, headers, ts = sent[(msg.partition(), msg.offset())]
        assert msg.key() == key
        assert msg.value() == value
        assert (msg.headers() or []) == headers
        assert msg.timestamp() == (1, ts)  # TIMESTAMP_CREATE_TIME


@pytest.mark.anyio
@pytest.mark.interop
@pytest.mark.parametrize("compression", [None, "gzip", "snappy", "lz4", "zstd"])
async def test_records_read_back_identically_by_aiokafka(
    kafka_broker: str, new_topic: NewTopic, compression: CompressionType | None
) -> None:
    topic = new_topic(2)
    sent: dict[tuple[int, int], tuple[Any, ...]] = {}
    # Explicit timestamps an hour back: inside the broker's 7-day retention (records stamped
    # years ago are deleted by time while the test runs), not in its future.
    base_ts = int(time.time() * 1000) - 3_600_000
    async with Producer(bootstrap_servers=kafka_broker, compression_type=compression) as producer:
        for i in range(100):
            key = None if i % 4 == 0 else f"k{i}".encode()
            value = None if i % 9 == 0 else b"\x00\xff" * i
            headers = [("n", str(i).encode())] if i % 2 else []
            ts = base_ts + i * 3
            md = await (
                await producer.enqueue(
                    topic, value=value, key=key, timestamp_ms=ts, headers=headers
                )
            )
            sent[(md.partition, md.offset)] = (key, value, headers, ts)
    records = await consume_aiokafka(kafka_broker, topic, 2, len(sent))
    assert len(records) == len(sent)
    for rec in records:
        key, value, headers, ts = sent[(rec.partition, rec.offset)]
        assert rec.key == key
        assert rec.value == value
        assert list(rec.headers) == headers
        assert rec.timestamp == ts


@pytest.mark.anyio
@pytest.mark.interop
async def test_idempotent_100k_records_order_and_exact_counts(
    kafka_broker: str, new_topic: NewTopic
) -> None:
    partitions = 4
    total = 100_000
    topic = new_topic(partitions)
    async with Producer(bootstrap_servers=kafka_broker, linger_ms=5) as producer:
        last = None
        for i in range(total):
            last = await producer.enqueue(
                topic, value=i.to_bytes(4, "big") + b"p" * 60, key=str(i % 50).encode()
            )
        await producer.flush()
        assert last is not None
        assert last.done()
        stats = producer.statistics()
        assert stats["epoch_bumps"] == 0
        assert stats["records_failed"] == 0, stats["records_failed_by_error"]
        assert stats["records_acked"] == total
    msgs = await anyio.to_thread.run_sync(consume_confluent, kafka_broker, topic, partitions, total)
    assert len(msgs) == total
    seen = [int.from_bytes(m.value()[:4], "big") for m in msgs]
    assert sorted(seen) == list(range(total))  # nothing lost, nothing duplicated
    per_partition: dict[int, list[int]] = defaultdict(list)
    for m in msgs:
        per_partition[m.partition()].append(int.from_bytes(m.value()[:4], "big"))
        assert m.partition() == murmur2_partition(m.key(), partitions)
    for values in per_partition.values():
        assert values == sorted(values)  # order kept within each partition


# -- configuration paths -----------------------------------------------------------------------


def test_bad_config_raises_at_construction() -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({"acks": 2}, "acks"),
        ({"acks": "none"}, "acks"),
        ({"compression_type": "brotli"}, "compression_type"),
        ({"linger_ms": -1}, "linger_ms"),
        ({"max_batch_size": "big"}, "max_batch_size"),
        ({"enable_idempotence": True, "acks": 1}, "acks='all'"),
        ({"enable_idempotence": True, "max_in_flight_requests_per_connection": 6}, "<= 5"),
        ({"enable_idempotence": False, "transactional_id": "t"}, "transactional_id"),
        ({"acks": 0, "transactional_id": "t"}, "transactional_id"),
        ({"transactional_id": ""}, "transactional_id"),
        ({"partitioner": "crc32"}, "partitioner"),
        ({"value_serializer": 3}, "value_serializer"),
        ({"delivery_timeout_ms": 1000}, "delivery_timeout_ms"),
        ({"max_batch_size": 64 << 20}, "buffer_memory"),
        ({"lingerms": 5}, "did you mean 'linger_ms'"),
        ({"request_timeout_ms": 0}, "request_timeout_ms"),
    ]
    for kwargs, fragment in cases:
        with pytest.raises(ConfigError, match=fragment.replace("(", r"\(")):
            Producer(bootstrap_servers="127.0.0.1:9092", **kwargs)
    # Unset idempotence quietly gives way to acks=1.
    assert Producer(acks=1).config.idempotent is False
    assert Producer(acks="all").config.idempotent is True
    assert Producer(max_in_flight_requests_per_connection=10).config.idempotent is False


@pytest.mark.anyio
@pytest.mark.parametrize("acks", [0, 1])
async def test_acks_zero_and_one(
    kafka_broker: str, new_topic: NewTopic, acks: Literal[0, 1]
) -> None:
    topic = new_topic(1)
    async with Producer(bootstrap_servers=kafka_broker, acks=acks) as producer:
        assert producer.config.idempotent is False
        mds = [await producer.send(topic, value=f"{i}".encode()) for i in range(20)]
        if acks == 0:
            assert all(md.offset == -1 for md in mds)
        else:
            assert [md.offset for md in mds] == list(range(20))
    msgs = await anyio.to_thread.run_sync(consume_confluent, kafka_broker, topic, 1, 20)
    assert [m.value() for m in msgs] == [f"{i}".encode() for i in range(20)]


@pytest.mark.anyio
async def test_idempotence_off_with_acks_all(kafka_broker: str, new_topic: NewTopic) -> None:
    topic = new_topic(2)
    async with Producer(
        bootstrap_servers=kafka_broker, enable_idempotence=False, max_batch_size=200
    ) as producer:
        ds = [await producer.enqueue(topic, value=b"%d" % i, partition=i % 2) for i in range(500)]
        await producer.flush()
        assert producer.statistics()["producer_id"] == -1
        for p in (0, 1):
            offsets = [d.result().offset for d in ds if d.result().partition == p]
            assert offsets == list(range(250))


@pytest.mark.anyio
async def test_serializers_headers_and_nulls(kafka_broker: str, new_topic: NewTopic) -> None:
    topic = new_topic(1)
    async with Producer(
        bootstrap_servers=kafka_broker,
        key_serializer=lambda k: None if k is None else str(k).encode(),
        value_serializer=lambda v: None if v is None else repr(v).encode(),
    ) as producer:
        await producer.send(topic, value={"a": 1}, key=42, headers=[("trace", b"abc")])
        await producer.send(topic, value=None, key=None)
    msgs = await anyio.to_thread.run_sync(consume_confluent, kafka_broker, topic, 1, 2)
    assert [(m.key(), m.value()) for m in msgs] == [(b"42", b"{'a': 1}"), (None, None)]
    assert msgs[0].headers() == [("trace", b"abc")]


@pytest.mark.anyio
async def test_type_errors_without_serializer(kafka_broker: str, new_topic: NewTopic) -> None:
    topic = new_topic(1)
    async with Producer(bootstrap_servers=kafka_broker) as producer:
        with pytest.raises(TypeError, match="value must be bytes"):
            await producer.send(topic, value="text")
        with pytest.raises(TypeError, match="key must be bytes"):
            await producer.send(topic, value=b"v", key=1)


@pytest.mark.anyio
async def test_record_too_large(kafka_broker: str, new_topic: NewTopic) -> None:
    topic = new_topic(1)
    async with Producer(bootstrap_servers=kafka_broker, max_request_size=10_000) as producer:
        with pytest.raises(RecordTooLargeClientError, match="max_request_size=10000"):
            await producer.send(topic, value=b"x" * 10_000)
        # A record bigger than max_batch_size but within max_request_size goes alone.
        md = await producer.send(topic, value=b"y" * 9_000)
        assert md.offset == 0


@pytest.mark.anyio
async def test_explicit_and_invalid_partition(kafka_broker: str, new_topic: NewTopic) -> None:
    topic = new_topic(3)
    async with Producer(bootstrap_servers=kafka_broker) as producer:
        assert await producer.partitions_for(topic) == {0, 1, 2}
        md = await producer.send(topic, value=b"v", key=b"anything", partition=2)
        assert md.partition == 2
        with pytest.raises(UnknownTopicOrPartitionError, match="partition 3"):
            await producer.send(topic, value=b"v", partition=3)


@pytest.mark.anyio
async def test_keyed_records_follow_murmur2(kafka_broker: str, new_topic: NewTopic) -> None:
    topic = new_topic(5)
    async with Producer(bootstrap_servers=kafka_broker) as producer:
        for i in range(100):
            key = f"customer-{i}".encode()
            md = await producer.send(topic, value=b"v", key=key)
            assert md.partition == murmur2_partition(key, 5)


@pytest.mark.anyio
async def test_keyless_records_are_sticky_then_spread(
    kafka_broker: str, new_topic: NewTopic
) -> None:
    topic = new_topic(4)
    async with Producer(bootstrap_servers=kafka_broker, max_batch_size=1000) as producer:
        ds = [await producer.enqueue(topic, value=b"z" * 80) for _ in range(400)]
        await producer.flush()
    parts = [d.result().partition for d in ds]
    runs = sum(1 for a, b in itertools.pairwise(parts) if a != b)
    assert len(set(parts)) == 4  # spread over all partitions
    assert runs < 60  # but in runs of about a batch, not record by record


@pytest.mark.anyio
async def test_a_sticky_partitioner_subclass_is_asked_for_every_record(
    kafka_broker: str, new_topic: NewTopic
) -> None:
    """enqueue does the built-in sticky partitioner's common case itself; a subclass that
    overrides ``choose`` is still asked, record by record."""
    from kafka_async.producer.partitioner import DefaultPartitioner

    class Alternating(DefaultPartitioner):
        calls = 0

        def choose(
            self,
            topic: str,
            key: bytes | bytearray | memoryview | None,
            all_partitions: Any,
            available_partitions: Any,
            nbytes: int,
        ) -> int:
            Alternating.calls += 1
            # The parent's state filled as usual (what the inlined case reads)...
            super().choose(topic, key, all_partitions, available_partitions, nbytes)
            # ...but this class decides.
            return int(all_partitions[Alternating.calls % 2])

    topic = new_topic(2)
    async with Producer(bootstrap_servers=kafka_broker, partitioner=Alternating()) as producer:
        parts = [(await producer.send(topic, value=b"v")).partition for _ in range(6)]
    assert parts == [1, 0, 1, 0, 1, 0]
    assert Alternating.calls == 6


@pytest.mark.anyio
async def test_round_robin_and_user_partitioner(kafka_broker: str, new_topic: NewTopic) -> None:
    topic = new_topic(3)
    async with Producer(bootstrap_servers=kafka_broker, partitioner="round_robin") as producer:
        parts = [(await producer.send(topic, value=b"v", key=b"same")).partition for _ in range(6)]
        assert parts == [0, 1, 2, 0, 1, 2]

    def last_available(key: bytes | None, all_partitions: list[int], available: list[int]) -> int:
        return available[-1]

    async with Producer(bootstrap_servers=kafka_broker, partitioner=last_available) as producer:
        assert (await producer.send(topic, value=b"v", key=b"k")).partition == 2


@pytest.mark.anyio
async def test_small_buffer_waits_instead_of_failing(
    kafka_broker: str, new_topic: NewTopic
) -> None:
    topic = new_topic(2)
    async with Producer(
        bootstrap_servers=kafka_broker,
        buffer_memory=4096,
        max_batch_size=1024,
        max_request_size=2048,
    ) as producer:
        ds = [await producer.enqueue(topic, value=b"b" * 300) for _ in range(300)]
        assert producer.statistics()["buffer_used"] <= 4096
        await producer.flush()
    assert all(d.exception() is None for d in ds)


@pytest.mark.anyio
async def test_unknown_topic_waits_then_times_out(kafka_broker: str) -> None:
    async with Producer(
        bootstrap_servers=kafka_broker, metadata_wait_ms=500, allow_auto_create_topics=False
    ) as producer:
        start = time.monotonic()
        with pytest.raises(KafkaTimeoutError, match="not found"):
            await producer.send("no-such-topic-ever", value=b"v")
        assert 0.4 < time.monotonic() - start < 30


@pytest.mark.anyio
async def test_unknown_topic_waits_for_creation(kafka_broker: str) -> None:
    name = f"late-{time.monotonic_ns()}"

    async def create_later() -> None:
        # Create the topic only once the producer is waiting for its metadata (it tracks
        # the topic then), so the test covers the wait rather than racing it.
        client = producer._client
        assert client is not None
        await wait_until(lambda: name in (client.statistics()["tracked_topics"] or ()))
        await anyio.to_thread.run_sync(create_topic, kafka_broker, name, 2)

    async with (
        Producer(bootstrap_servers=kafka_broker, allow_auto_create_topics=False) as producer,
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(create_later)
        with anyio.fail_after(30):
            md = await producer.send(name, value=b"first")
        assert md.offset == 0


@pytest.mark.anyio
async def test_flush_timeout_and_linger(kafka_broker: str, new_topic: NewTopic) -> None:
    topic = new_topic(1)
    async with Producer(bootstrap_servers=kafka_broker, linger_ms=60_000) as producer:
        d = await producer.enqueue(topic, value=b"lingering")
        await anyio.sleep(0.2)
        assert not d.done()  # lingering for a minute...
        with anyio.fail_after(30):
            await producer.flush()  # ...unless flushed
        assert d.result().offset == 0


@pytest.mark.anyio
async def test_log_append_time_is_reported(kafka_broker: str, new_topic: NewTopic) -> None:
    topic = new_topic(1, configs={"message.timestamp.type": "LogAppendTime"})
    async with Producer(bootstrap_servers=kafka_broker) as producer:
        md = await producer.send(topic, value=b"v", timestamp_ms=1000)
    if md.timestamp_type != TimestampType.LOG_APPEND_TIME:
        # The reporting path is also covered by test_log_append_time_reported in
        # test_producer_accumulator.py.
        theirs = await anyio.to_thread.run_sync(
            librdkafka_log_append_time_error, kafka_broker, topic, 1000
        )
        confirm_broker_gap("a LogAppendTime topic", f"{md!r}", theirs)
    assert md.timestamp > 1000


# -- failure: the broker goes away -------------------------------------------------------------


@pytest.mark.anyio
async def test_close_returns_within_deadline_when_broker_is_gone(embedded_broker: Any) -> None:
    bootstrap = embedded_broker.bootstrap_servers
    await anyio.to_thread.run_sync(create_topic, bootstrap, "gone", 2)
    producer = Producer(
        bootstrap_servers=bootstrap, request_timeout_ms=2000, delivery_timeout_ms=60_000
    )
    await producer.start()
    await producer.send("gone", value=b"before")
    embedded_broker.kill()
    deliveries = [await producer.enqueue("gone", value=b"after") for _ in range(50)]
    start = time.monotonic()
    await producer.close(timeout=1.5)
    elapsed = time.monotonic() - start
    # The deadline plus the shutdown grace, plus slack for a loaded CI machine.
    assert elapsed < 1.5 + 5 + 12
    for d in deliveries:
        assert d.done()
        assert isinstance(d.exception(), KafkaError)


@pytest.mark.anyio
async def test_send_fails_with_timeout_when_broker_stays_gone(embedded_broker: Any) -> None:
    bootstrap = embedded_broker.bootstrap_servers
    await anyio.to_thread.run_sync(create_topic, bootstrap, "gone2", 1)
    async with Producer(
        bootstrap_servers=bootstrap,
        request_timeout_ms=500,
        delivery_timeout_ms=2000,
        linger_ms=0,
        retry_backoff_ms=50,
    ) as producer:
        await producer.send("gone2", value=b"before")
        embedded_broker.kill()
        start = time.monotonic()
        with anyio.fail_after(45), pytest.raises((KafkaTimeoutError, KafkaError)):
            await producer.send("gone2", value=b"after")
        assert time.monotonic() - start < 30
        await producer.close(timeout=2)


@pytest.mark.anyio
async def test_retries_across_a_broker_restart(embedded_broker: Any) -> None:
    """Records sent while the broker restarts are retried and land exactly once."""
    bootstrap = embedded_broker.bootstrap_servers
    await anyio.to_thread.run_sync(create_topic, bootstrap, "bounce", 1)
    async with Producer(
        bootstrap_servers=bootstrap,
        request_timeout_ms=2000,
        delivery_timeout_ms=30_000,
        retry_backoff_ms=50,
        linger_ms=0,
    ) as producer:
        await producer.send("bounce", value=b"first")
        await anyio.to_thread.run_sync(embedded_broker.stop)
        deliveries = [await producer.enqueue("bounce", value=b"%d" % i) for i in range(20)]
        # Wait until the records have met the stopped broker (a failed attempt), not a
        # fixed time that a loaded machine may need more of.
        await wait_until(lambda: bool(producer.statistics()["errors_by_code"]))
        await anyio.to_thread.run_sync(embedded_broker.start)
        # In-memory Tansu forgets the topic on restart: create it again for the retries.
        await anyio.to_thread.run_sync(create_topic, bootstrap, "bounce", 1)
        with anyio.fail_after(30):
            await producer.flush()
        errors = [d.exception() for d in deliveries]
        assert errors == [None] * 20, errors
        assert producer.statistics()["retries"] > 0


@pytest.mark.anyio
async def test_close_wakes_tasks_waiting_for_buffer_space(embedded_broker: Any) -> None:
    bootstrap = embedded_broker.bootstrap_servers
    await anyio.to_thread.run_sync(create_topic, bootstrap, "full", 1)
    outcome: list[BaseException] = []
    failed = anyio.Event()
    async with anyio.create_task_group() as tg:
        # Started inside the task group, so close() below leaves the scopes in LIFO order.
        producer = Producer(
            bootstrap_servers=bootstrap,
            buffer_memory=4096,
            max_batch_size=1024,
            max_request_size=2048,
            request_timeout_ms=2000,
        )
        await producer.start()
        await producer.send("full", value=b"before")
        embedded_broker.kill()

        async def fill() -> None:
            try:
                while True:
                    await producer.enqueue("full", value=b"x" * 500)
            except KafkaError as exc:
                outcome.append(exc)
                failed.set()

        tg.start_soon(fill)
        # The filler blocks once the buffer is full; wait for that, with a deadline.
        await wait_until(lambda: producer.statistics()["buffer_used"] > 3000)
        assert not failed.is_set()
        start = time.monotonic()
        await producer.close(timeout=0.5)
        with anyio.fail_after(15):
            await failed.wait()
    assert isinstance(outcome[0], ClientClosedError)
    assert time.monotonic() - start < 18


@pytest.mark.anyio
async def test_start_fails_fast_without_a_broker() -> None:
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()  # nothing listens there now
    producer = Producer(
        bootstrap_servers=f"127.0.0.1:{port}", request_timeout_ms=1000, connect_timeout_ms=500
    )
    start = time.monotonic()
    with anyio.fail_after(45), pytest.raises(KafkaError):
        await producer.start()
    assert time.monotonic() - start < 45
    with pytest.raises(ClientClosedError):
        await producer.send("t", b"v")
    await producer.close()
