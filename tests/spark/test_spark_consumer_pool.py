"""The read consumers' pool: its pure bookkeeping, and reuse against a real broker."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from kafka_async.spark import consumer_pool, kafka_io
from kafka_async.spark.consumer_pool import ConsumerPool, PoolBook
from kafka_async.spark.options import parse_source_options
from kafka_async.spark.planning import OffsetRange
from kafka_async.testing.plugin import importorskip_or_fail

# -- PoolBook: pure, with the clock in the test's hands -----------------------------------------


def test_take_lends_the_idle_item_of_its_key_only() -> None:
    book: PoolBook[str, str] = PoolBook(capacity=4, idle_timeout_s=10)
    assert book.take("a", now=0) == (None, [])
    assert book.lent == 1
    assert book.give_back("a", "A", now=1) == []
    assert (book.idle, book.lent) == (1, 0)
    assert book.take("b", now=2) == (None, [])  # another key: a new item
    assert book.take("a", now=3) == ("A", [])
    assert book.take("a", now=4) == (None, [])  # lent out already: a second one is made
    assert book.lent == 3
    assert (book.stats.created, book.stats.reused) == (3, 1)


def test_idle_items_expire_after_the_timeout() -> None:
    book: PoolBook[str, str] = PoolBook(capacity=4, idle_timeout_s=10)
    for key in "abc":
        book.take(key, now=0)
    book.give_back("a", "A", now=0)
    book.give_back("b", "B", now=5)
    book.give_back("c", "C", now=8)
    assert book.next_expiry() == 10
    assert book.expire(now=10) == []  # idle exactly the timeout: kept
    assert book.expire(now=10.5) == ["A"]
    # take() expires first, and hands out what is still fresh.
    item, stale = book.take("c", now=16)
    assert (item, stale) == ("C", ["B"])
    assert book.stats.evicted_idle == 2
    assert book.idle == 0
    assert book.next_expiry() is None


def test_capacity_evicts_the_least_recently_used_idle_item() -> None:
    book: PoolBook[str, str] = PoolBook(capacity=3, idle_timeout_s=100)
    for key in "abc":
        book.take(key, now=0)
    book.give_back("a", "A", now=1)
    book.give_back("b", "B", now=2)
    book.give_back("c", "C", now=3)
    assert book.keys() == ["a", "b", "c"]
    book.take("a", now=4)  # a is used again: most recently used once back
    book.give_back("a", "A", now=5)
    assert book.keys() == ["b", "c", "a"]
    book.take("d", now=6)  # lent items count towards the capacity...
    assert book.give_back("d", "D", now=7) == ["B"]  # ...so the oldest idle one goes
    assert book.keys() == ["c", "a", "d"]
    assert book.stats.evicted_capacity == 1
    # Items lent out are never evicted: with everything lent, a give-back drops idle ones.
    book.configure(capacity=1, idle_timeout_s=100)
    book.take("e", now=8)
    assert book.give_back("e", "E", now=9) == ["C", "A", "D"]
    assert book.keys() == ["e"]


def test_a_second_item_given_back_under_a_key_replaces_the_first() -> None:
    book: PoolBook[str, str] = PoolBook(capacity=4, idle_timeout_s=100)
    book.take("a", now=0)
    book.take("a", now=0)
    assert book.give_back("a", "A1", now=1) == []
    assert book.give_back("a", "A2", now=2) == ["A1"]
    assert book.take("a", now=3) == ("A2", [])


def test_discarded_and_rejected_items_do_not_come_back() -> None:
    book: PoolBook[str, str] = PoolBook(capacity=2, idle_timeout_s=100)
    book.take("a", now=0)
    book.discard()
    assert (book.lent, book.idle, book.stats.discarded) == (0, 0, 1)
    book.take("a", now=1)
    book.give_back("a", "A", now=2)
    assert book.take("a", now=3) == ("A", [])
    book.rejected()  # the caller's check failed: it closes A and makes a new one
    assert (book.stats.created, book.stats.reused, book.stats.discarded) == (3, 0, 2)
    assert book.lent == 1
    with pytest.raises(ValueError, match="bad pool bounds"):
        book.configure(capacity=0, idle_timeout_s=1)


# -- ConsumerPool with read_range against a real broker -----------------------------------------


def _produce(broker: str, topic: str, values: list[bytes]) -> None:
    from confluent_kafka import Producer as CKProducer

    producer = CKProducer({"bootstrap.servers": broker, "linger.ms": 5})
    for value in values:
        producer.produce(topic, value=value, partition=0)
    assert producer.flush(30) == 0


def _opts(broker: str, topic: str, **extra: str) -> Any:
    return parse_source_options(
        {
            "kafka.bootstrap.servers": broker,
            "subscribe": topic,
            "kafkaConsumer.pollTimeoutMs": "20000",
            **extra,
        },
        streaming=True,
    )


def _read(opts: Any, topic: str, start: int, end: int) -> list[tuple[int, bytes]]:
    return [
        (offset, value)
        for batch in kafka_io.read_range(opts, OffsetRange(topic, 0, start, end))
        for offset, value in zip(
            batch.column("offset").to_pylist(), batch.column("value").to_pylist(), strict=True
        )
    ]


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def pool(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[ConsumerPool, _Clock]]:
    """A pool of the test's own (its clock injected) in place of the process's pool."""
    importorskip_or_fail("pyarrow")
    clock = _Clock()
    own = ConsumerPool(clock=clock)
    monkeypatch.setattr(kafka_io, "shared", lambda: own)
    yield own, clock
    own.shutdown()


@pytest.mark.integration
def test_consecutive_ranges_reuse_one_consumer_and_read_exactly(
    kafka_broker: str, new_topic: Any, pool: tuple[ConsumerPool, _Clock]
) -> None:
    own, _clock = pool
    topic = new_topic(1, prefix="spark-pool")
    values = [b"v%d" % i for i in range(300)]
    _produce(kafka_broker, topic, values)
    opts = _opts(kafka_broker, topic)
    want = list(enumerate(values))

    # Micro-batch by micro-batch: each range starts where the last one ended.
    assert _read(opts, topic, 0, 100) == want[0:100]
    assert _read(opts, topic, 100, 180) == want[100:180]
    assert _read(opts, topic, 180, 300) == want[180:300]
    stats = own.stats
    assert (stats.created, stats.reused, stats.contiguous) == (1, 2, 2)
    assert own.idle == 1

    # A range elsewhere (a retried or replanned batch) seeks, and still reads exactly.
    assert _read(opts, topic, 50, 120) == want[50:120]
    assert _read(opts, topic, 290, 300) == want[290:300]
    assert _read(opts, topic, 0, 5) == want[0:5]
    assert (own.stats.created, own.stats.reused, own.stats.contiguous) == (1, 5, 2)

    # Records written after the consumer reached the end are read by the next range.
    _produce(kafka_broker, topic, [b"late%d" % i for i in range(20)])
    assert _read(opts, topic, 5, 10) == want[5:10]
    got = _read(opts, topic, 10, 320)
    assert got == want[10:] + [(300 + i, b"late%d" % i) for i in range(20)]
    assert own.stats.created == 1


@pytest.mark.integration
def test_a_reader_closed_early_gives_its_consumer_back_at_a_consistent_position(
    kafka_broker: str, new_topic: Any, pool: tuple[ConsumerPool, _Clock]
) -> None:
    own, _clock = pool
    topic = new_topic(1, prefix="spark-pool-close")
    values = [b"%d" % i for i in range(60_000)]
    _produce(kafka_broker, topic, values)
    opts = _opts(kafka_broker, topic)
    reader = kafka_io.read_range(opts, OffsetRange(topic, 0, 0, 60_000))
    first = next(reader)
    assert first.num_rows > 0
    reader.close()  # Spark does this when a limit is satisfied
    assert own.idle == 1
    # The next range starts elsewhere than the consumer stands: it seeks.
    assert _read(opts, topic, 100, 110) == [(i, values[i]) for i in range(100, 110)]
    assert (own.stats.created, own.stats.reused) == (1, 1)


@pytest.mark.integration
def test_pool_off_and_pool_keys(
    kafka_broker: str, new_topic: Any, pool: tuple[ConsumerPool, _Clock]
) -> None:
    own, _clock = pool
    topic = new_topic(2, prefix="spark-pool-keys")
    _produce(kafka_broker, topic, [b"x%d" % i for i in range(10)])
    off = _opts(kafka_broker, topic, **{"kafkaConsumer.useConsumerCache": "false"})
    for _ in range(2):
        assert len(_read(off, topic, 0, 10)) == 10
    assert own.stats.created == 0  # the pool was not used at all
    opts = _opts(kafka_broker, topic)
    other_config = _opts(kafka_broker, topic, **{"kafka.client.id": "another"})
    assert len(_read(opts, topic, 0, 10)) == 10
    assert len(_read(other_config, topic, 0, 10)) == 10  # another configuration, another key
    assert (own.stats.created, own.stats.reused, own.idle) == (2, 0, 2)


@pytest.mark.integration
def test_idle_timeout_and_capacity_close_pooled_consumers(
    kafka_broker: str,
    new_topic: Any,
    pool: tuple[ConsumerPool, _Clock],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    own, clock = pool
    monkeypatch.setattr(consumer_pool, "EVICT_INTERVAL_S", 0.1)  # the evictor's pace
    topic = new_topic(3, prefix="spark-pool-evict")
    from confluent_kafka import Producer as CKProducer

    producer = CKProducer({"bootstrap.servers": kafka_broker, "linger.ms": 5})
    for p in range(3):
        for i in range(10):
            producer.produce(topic, value=b"%d-%d" % (p, i), partition=p)
    assert producer.flush(30) == 0
    opts = _opts(kafka_broker, topic, **{"kafkaConsumer.cache.capacity": "2"})

    def read(p: int) -> int:
        rng = OffsetRange(topic, p, 0, 10)
        return sum(b.num_rows for b in kafka_io.read_range(opts, rng))

    assert read(0) == 10
    assert read(1) == 10
    assert read(2) == 10  # a third partition: over the capacity of 2
    assert own.idle == 2
    assert own.stats.evicted_capacity == 1
    clock.now += 301  # past the default 5 minute timeout
    assert read(2) == 10  # expired ones are closed (by this task or the evictor): a new one
    assert own.stats.evicted_idle == 2
    assert own.stats.created == 4
    assert own.idle == 1
    # The evictor closes idle consumers while no task runs.
    clock.now += 301
    deadline = time.monotonic() + 5
    while own.idle and time.monotonic() < deadline:
        time.sleep(0.05)
    assert own.idle == 0


@pytest.mark.integration
def test_a_failed_task_closes_its_consumer(
    kafka_broker: str, new_topic: Any, pool: tuple[ConsumerPool, _Clock]
) -> None:
    own, _clock = pool
    topic = new_topic(1, prefix="spark-pool-fail")
    _produce(kafka_broker, topic, [b"a%d" % i for i in range(10)])
    # The range ends past the partition's end: the task times out and fails.
    opts = _opts(kafka_broker, topic, **{"kafkaConsumer.pollTimeoutMs": "1500"})
    with pytest.raises(Exception, match="no progress"):
        _read(opts, topic, 0, 20)
    assert (own.idle, own.stats.discarded) == (0, 1)
    assert _read(opts, topic, 0, 10) == [(i, b"a%d" % i) for i in range(10)]
    assert own.stats.created == 2


@pytest.mark.integration
def test_a_recreated_topic_is_not_read_from_the_old_consumer(
    kafka_broker: str,
    new_topic: Any,
    pool: tuple[ConsumerPool, _Clock],
    delete_for_recreation: Any,
) -> None:
    from kafka_async.testing.topics import create_topic

    own, _clock = pool
    topic = new_topic(1, prefix="spark-pool-recreate")
    _produce(kafka_broker, topic, [b"old%d" % i for i in range(100)])
    opts = _opts(kafka_broker, topic)
    # The consumer stops at 50 with old records 50.. likely prefetched in its buffer.
    assert [v for _o, v in _read(opts, topic, 0, 50)] == [b"old%d" % i for i in range(50)]
    assert own.idle == 1

    # Deleted asynchronously (on a ZooKeeper-mode broker CreateTopics refuses the name for a
    # while after Metadata stopped listing it): wait until the broker would accept it again.
    delete_for_recreation(kafka_broker, topic)
    create_topic(kafka_broker, topic, 1)
    _produce(kafka_broker, topic, [b"new%d" % i for i in range(100)])
    # The next range starts exactly at the old consumer's position: it must read the new
    # topic's records, not what the old consumer had buffered.
    assert [v for _o, v in _read(opts, topic, 50, 100)] == [b"new%d" % i for i in range(50, 100)]
    assert own.stats.discarded == 1
