"""Shared pieces of the reliability scenarios: ledger-tracked producing (ours and
librdkafka's), resource probes (sockets, tasks, memory) and read-back.

Imported by the scenario tests as ``reliability_support`` (pytest puts this directory on
``sys.path``).
"""

from __future__ import annotations

import asyncio
import gc
import os
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio

from kafka_async import Producer
from kafka_async.cluster.client import ClusterClient
from kafka_async.errors import KafkaError
from kafka_async.net.config import ClientConfig
from kafka_async.producer import Delivery
from tests.harness.fake_broker import FakeBroker
from tests.harness.ledger import (
    Ledger,
    LedgerReport,
    Observed,
    parse_value,
    read_back_confluent,
    read_back_ours,
)

# --------------------------------------------------------------------------------------------
# Resource probes
# --------------------------------------------------------------------------------------------


def open_fds() -> int:
    """File descriptors of this process (sockets included)."""
    return len(os.listdir("/proc/self/fd"))


def open_sockets() -> int:
    """Sockets among this process's file descriptors."""
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                n += 1
        except OSError:
            pass
    return n


def rss_mb() -> float:
    """Resident set size of this process in MB (after a full garbage collection)."""
    gc.collect()
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


def running_tasks() -> int:
    """Tasks alive in the current asyncio loop (the test's own included)."""
    return len(asyncio.all_tasks())


async def wait_for(
    predicate: Callable[[], bool],
    timeout: float,  # noqa: ASYNC109 - a deadline, by design
    interval: float = 0.05,
) -> bool:
    """Poll ``predicate`` until it holds or ``timeout`` passes; returns its last value."""
    with anyio.move_on_after(timeout):
        while not predicate():  # noqa: ASYNC110 - polls state no event announces
            await anyio.sleep(interval)
        return True
    return predicate()


# --------------------------------------------------------------------------------------------
# Producing with a ledger
# --------------------------------------------------------------------------------------------


@dataclass
class _Track:
    partition: int
    seq: int
    delivery: Delivery
    enqueued: float


@dataclass
class ProduceStats:
    """How one ledger-tracked produce run went."""

    enqueued: int = 0
    enqueue_errors: int = 0
    #: Longest time from enqueue to the delivery's outcome, seconds.
    max_settle: float = 0.0
    #: Deliveries still unresolved when the run ended.
    unresolved: int = 0
    errors: dict[str, int] = field(default_factory=dict)


class LedgerProducer:
    """Feeds ``producer`` ledger records round-robin over the partitions and settles every
    delivery into the ledger as it resolves (polled every 20 ms, so settle times are exact
    to that)."""

    def __init__(self, producer: Producer, topic: str, ledger: Ledger, value_size: int = 100):
        self.producer = producer
        self.topic = topic
        self.ledger = ledger
        self.value_size = value_size
        self.stats = ProduceStats()
        self._pending: list[_Track] = []
        #: True once produce() returned (settle() waits for it).
        self.finished = False

    async def produce(
        self, total: int, *, per_second: float | None = None, stop: anyio.Event | None = None
    ) -> None:
        """Enqueue ``total`` records (paced to ``per_second`` if given), or fewer if ``stop``
        is set first."""
        start = anyio.current_time()
        try:
            for i in range(total):
                if stop is not None and stop.is_set():
                    break
                p = i % self.ledger.partitions
                seq, value = self.ledger.next_record(p, self.value_size)
                now = anyio.current_time()
                try:
                    delivery = await self.producer.enqueue(self.topic, value, partition=p)
                except KafkaError as exc:
                    self.ledger.failed(p, seq, exc)
                    self.stats.enqueue_errors += 1
                    self._count_error(exc)
                    continue
                self._pending.append(_Track(p, seq, delivery, now))
                self.stats.enqueued += 1
                if per_second:
                    ahead = start + (i + 1) / per_second - anyio.current_time()
                    if ahead > 0:
                        await anyio.sleep(ahead)
        finally:
            self.finished = True

    def _count_error(self, exc: BaseException) -> None:
        name = type(exc).__name__
        self.stats.errors[name] = self.stats.errors.get(name, 0) + 1

    def settle_now(self) -> int:
        """Move resolved deliveries into the ledger; returns how many are still pending."""
        now = anyio.current_time()
        still: list[_Track] = []
        for t in self._pending:
            if not t.delivery.done():
                still.append(t)
                continue
            exc = t.delivery.exception()
            if exc is None:
                self.ledger.acked(t.partition, t.seq, t.delivery.result().offset)
            else:
                self.ledger.failed(t.partition, t.seq, exc)
                self._count_error(exc)
            self.stats.max_settle = max(self.stats.max_settle, now - t.enqueued)
        self._pending = still
        self.stats.unresolved = len(still)
        return len(still)

    async def settle(self, timeout: float) -> None:  # noqa: ASYNC109 - a deadline
        """Settle until producing has stopped and nothing is pending (or ``timeout``)."""
        with anyio.move_on_after(timeout):
            while self.settle_now() or not self.finished:  # noqa: ASYNC110 - polling
                await anyio.sleep(0.02)
        self.settle_now()


# --------------------------------------------------------------------------------------------
# librdkafka on the same scenario (the broker-gap check)
# --------------------------------------------------------------------------------------------


class LibrdkafkaLedgerProducer:
    """The same ledger-tracked producing with confluent-kafka, in a worker thread."""

    def __init__(self, bootstrap: str, topic: str, ledger: Ledger, **config: Any) -> None:
        import confluent_kafka

        self.topic = topic
        self.ledger = ledger
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.producer = confluent_kafka.Producer(
            {
                "bootstrap.servers": bootstrap,
                "enable.idempotence": True,
                "acks": "all",
                "linger.ms": 5,
                **config,
            }
        )
        self.max_settle = 0.0
        #: Acknowledged so far (read from other threads without walking the ledger).
        self.acked = 0
        self.errors: dict[str, int] = {}
        self._sent_at: dict[tuple[int, int], float] = {}

    def _on_delivery(self, err: Any, msg: Any) -> None:
        tag = parse_value(msg.value())
        assert tag is not None
        key = (tag.partition, tag.seq)
        with self._lock:
            self.max_settle = max(self.max_settle, time.monotonic() - self._sent_at.pop(key))
            if err is None:
                self.ledger.acked(tag.partition, tag.seq, msg.offset())
                self.acked += 1
            else:
                self.ledger.failed(tag.partition, tag.seq, str(err))
                name = str(err.name()) if hasattr(err, "name") else str(err)
                self.errors[name] = self.errors.get(name, 0) + 1

    def run(self, total: int, per_second: float, flush_timeout: float) -> None:
        """Blocking: produce ``total`` records paced to ``per_second``, then flush."""
        start = time.monotonic()
        for i in range(total):
            p = i % self.ledger.partitions
            with self._lock:
                seq, value = self.ledger.next_record(p, 100)
                self._sent_at[(p, seq)] = time.monotonic()
            while True:
                try:
                    self.producer.produce(
                        self.topic, value, partition=p, on_delivery=self._on_delivery
                    )
                    break
                except BufferError:
                    self.producer.poll(0.05)
            self.producer.poll(0)
            ahead = start + (i + 1) / per_second - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)
        self.producer.flush(flush_timeout)


# --------------------------------------------------------------------------------------------
# Read-back
# --------------------------------------------------------------------------------------------


async def read_back_theirs(
    bootstrap: str,
    topic: str,
    ledger: Ledger,
    *,
    timeout: float = 60.0,  # noqa: ASYNC109 - passed on to the reader
) -> list[Observed]:
    """librdkafka's read-back of ``topic`` (in a worker thread)."""
    expect = ledger.expected_present()
    observed: list[Observed] = await anyio.to_thread.run_sync(
        lambda: read_back_confluent(
            bootstrap, topic, ledger.partitions, expect=expect, timeout=timeout
        )
    )
    return observed


async def read_and_check(
    bootstrap: str,
    topic: str,
    ledger: Ledger,
    *,
    timeout: float = 60.0,  # noqa: ASYNC109 - passed on to the readers
) -> tuple[LedgerReport, LedgerReport, list[Observed]]:
    """Check the ledger against librdkafka's read-back, then against our Consumer's; also
    return librdkafka's observations."""
    expect = ledger.expected_present()
    observed = await read_back_theirs(bootstrap, topic, ledger, timeout=timeout)
    theirs = ledger.check(observed)
    ours_observed = await read_back_ours(
        bootstrap, topic, ledger.partitions, expect=expect, timeout=timeout
    )
    ours = ledger.check(ours_observed)
    return theirs, ours, observed


async def check_both_readers(
    bootstrap: str,
    topic: str,
    ledger: Ledger,
    *,
    timeout: float = 60.0,  # noqa: ASYNC109 - passed on to the readers
) -> tuple[LedgerReport, LedgerReport]:
    """Check the ledger against librdkafka's read-back, then against our Consumer's."""
    theirs, ours, _ = await read_and_check(bootstrap, topic, ledger, timeout=timeout)
    return theirs, ours


# -- a hostile cluster: node 1 hostile, node 2 healthy (and the bootstrap server) ------------

HOSTILE, HEALTHY = 1, 2


@dataclass
class Cluster:
    hostile: FakeBroker
    healthy: FakeBroker
    client: ClusterClient


@asynccontextmanager
async def open_cluster(
    prepare: Callable[[FakeBroker], None] | None = None, **settings: Any
) -> AsyncIterator[Cluster]:
    """Two fake brokers holding topic "t" (2 partitions) and a ClusterClient bootstrapped
    from the healthy one, with a 2 s request timeout and near-instant reconnects.
    ``prepare`` runs on both brokers first; ``settings`` go to the client."""
    async with (
        FakeBroker({"t": 2}, node_id=HOSTILE) as bad,
        FakeBroker({"t": 2}, node_id=HEALTHY) as good,
    ):
        bad.peers = [(HEALTHY, good.host, good.port)]
        good.peers = [(HOSTILE, bad.host, bad.port)]
        if prepare is not None:
            prepare(bad)
            prepare(good)
        cfg, _ = ClientConfig.from_kwargs(
            bootstrap_servers=good.address,
            request_timeout_ms=2000,
            reconnect_backoff_ms=1,
            reconnect_backoff_max_ms=5,
            **settings,
        )
        async with ClusterClient(cfg) as client:
            yield Cluster(bad, good, client)
