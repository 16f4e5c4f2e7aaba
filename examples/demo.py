"""The main job on a broker of its own: what `make demo` runs.

Starts a real broker (Apache Kafka where Java 17+ is found, else the embedded Tansu), produces
N records (default 1,000,000) with a progress bar, consumes them with a group of 3
consumers, checks that every record arrived exactly once, prints throughput, and stops the
broker.

    python examples/demo.py [--records N] [--partitions P] [--consumers C]
    python examples/demo.py --bootstrap-servers host:9092   # use an existing broker instead
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from kafka_async import AdminClient, Consumer, NewTopic, Producer
from kafka_async.testing import TANSU_BENDS, ApacheKafka, EmbeddedBroker
from kafka_async.testing.apache import choose_broker_kind

try:
    from rich.progress import Progress
except ImportError:  # pragma: no cover - rich is in the cli/dev extras
    Progress = None  # type: ignore[assignment,misc]


class _Bar:
    """A rich progress bar when rich is there, a plain counter otherwise."""

    def __init__(self, label: str, total: int) -> None:
        self.total = total
        self.label = label
        self.done = 0
        self._printed = 0  # last tenth printed by the plain counter
        self._progress = Progress() if Progress is not None and sys.stdout.isatty() else None
        self._task = self._progress.add_task(label, total=total) if self._progress else None

    def __enter__(self) -> _Bar:
        if self._progress:
            self._progress.start()
        return self

    def advance(self, n: int) -> None:
        self.done += n
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, completed=self.done)
        elif n and self.done * 10 // max(1, self.total) > self._printed:
            self._printed = self.done * 10 // max(1, self.total)
            print(f"{self.label}: {self.done:,}/{self.total:,}", flush=True)

    def __exit__(self, *exc: object) -> None:
        if self._progress:
            self._progress.stop()


@asynccontextmanager
async def _broker(bootstrap: str | None) -> AsyncIterator[str]:
    if bootstrap:
        yield bootstrap
        return
    # Apache Kafka, the reference broker, wherever a Java 17+ is found; else the embedded
    # Tansu, which says in one line which of its answers differ from Kafka's.
    kind, _ = await anyio.to_thread.run_sync(choose_broker_kind)
    if kind == "apache":
        async with ApacheKafka() as kafka:
            print(f"Apache Kafka {kafka.version} at {kafka.bootstrap_servers}")
            yield kafka.bootstrap_servers
        return
    async with EmbeddedBroker() as broker:
        print(f"embedded Tansu broker at {broker.bootstrap_servers} (no Java 17+ found)")
        print(TANSU_BENDS)
        yield broker.bootstrap_servers


def _value(seq: int) -> bytes:
    # About 100 bytes: the sequence number (for the exactly-once check), a key and an amount
    # (for the Spark pipeline example), padded.
    body = json.dumps({"seq": seq, "key": f"k{seq % 100}", "amount": seq % 997})
    return body.ljust(100).encode()


async def produce(bootstrap: str, topic: str, n: int) -> float:
    start = time.perf_counter()
    async with Producer(bootstrap_servers=bootstrap, linger_ms=5) as producer:
        with _Bar("produce", n) as bar:
            step = 10_000
            for base in range(0, n, step):
                deliveries = [
                    await producer.enqueue(topic, value=_value(i), key=b"k%d" % (i % 100))
                    for i in range(base, min(base + step, n))
                ]
                for d in deliveries:
                    await d
                bar.advance(len(deliveries))
        await producer.flush()
    return time.perf_counter() - start


async def consume(bootstrap: str, topic: str, n: int, members: int, deadline_s: float) -> float:
    seen = bytearray(n)
    duplicates = 0
    received = 0
    done = anyio.Event()
    start = time.perf_counter()

    async def member(bar: _Bar) -> None:
        nonlocal duplicates, received
        async with Consumer(
            topic,
            bootstrap_servers=bootstrap,
            group_id="demo-group",
            auto_offset_reset="earliest",
        ) as consumer:
            while not done.is_set():
                batch = await consumer.getmany(timeout_ms=200, max_records=5_000)
                count = 0
                for records in batch.values():
                    for record in records:
                        assert record.value is not None
                        seq = json.loads(record.value)["seq"]
                        if seen[seq]:
                            duplicates += 1
                        seen[seq] = 1
                        count += 1
                received += count
                bar.advance(count)
                if count:
                    await consumer.commit()
                if received >= n:
                    done.set()

    with _Bar("consume", n) as bar:
        with anyio.move_on_after(deadline_s):
            async with anyio.create_task_group() as tg:
                for _ in range(members):
                    tg.start_soon(member, bar)
    elapsed = time.perf_counter() - start
    missing = n - sum(seen)
    if missing or duplicates:
        raise SystemExit(f"FAILED: {missing:,} records missing, {duplicates:,} duplicated")
    return elapsed


async def main(args: argparse.Namespace) -> None:
    async with _broker(args.bootstrap_servers) as bootstrap:
        topic = args.topic
        async with AdminClient(bootstrap_servers=bootstrap) as admin:
            await admin.create_topics(
                [NewTopic(topic, num_partitions=args.partitions, replication_factor=1)]
            )
        n = args.records
        produce_s = await produce(bootstrap, topic, n)
        print(f"produced {n:,} records in {produce_s:.1f} s ({n / produce_s:,.0f} records/s)")
        consume_s = await consume(bootstrap, topic, n, args.consumers, args.timeout)
        print(
            f"consumed {n:,} records with {args.consumers} group members in {consume_s:.1f} s "
            f"({n / consume_s:,.0f} records/s); every record exactly once"
        )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=6)
    parser.add_argument("--consumers", type=int, default=3)
    parser.add_argument("--topic", default="demo")
    parser.add_argument("--timeout", type=float, default=600.0, help="consume deadline, seconds")
    parser.add_argument("--bootstrap-servers", default=None, help="use this broker")
    return parser.parse_args(argv)


if __name__ == "__main__":
    anyio.run(main, parse_args())
