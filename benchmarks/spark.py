"""Spark data source read throughput beside the plain Consumer, in the same run.

``python -m benchmarks.spark`` starts an embedded broker (or uses
``$KAFKA_BOOTSTRAP_SERVERS``), writes 1,000,000 records of 100 bytes to a 4-partition topic
with our producer, then measures:

* the plain ``Consumer`` (assign + ``getmany``) reading every record: the ceiling the Spark
  tasks, which run the same consumer, can approach;
* a Spark batch read of the whole topic into ``count()`` and into ``toArrow()`` (local mode,
  one task per Kafka partition), each run twice: the first run includes starting Spark's
  Python workers, the second is warm.

Options: ``--records N``, ``--partitions P``, ``--master local[2]``. Figures, not pass/fail.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
import uuid
from collections.abc import Iterator

import anyio

from kafka_async import Consumer, Producer, TopicPartition


@contextlib.contextmanager
def _bootstrap() -> Iterator[str]:
    given = os.environ.get("KAFKA_BOOTSTRAP_SERVERS")
    if given:
        yield given
        return
    from kafka_async.testing import EmbeddedBroker

    with EmbeddedBroker() as broker:
        yield broker.bootstrap_servers


async def _fill(bootstrap: str, topic: str, records: int, partitions: int) -> None:
    from kafka_async.testing.topics import acreate_topic

    await acreate_topic(bootstrap, topic, partitions)
    payload = b"x" * 92
    async with Producer(bootstrap_servers=bootstrap, linger_ms=5) as producer:
        for i in range(records):
            await producer.enqueue(
                topic, value=i.to_bytes(8, "big") + payload, partition=i % partitions
            )
        await producer.flush()


async def _consume(bootstrap: str, topic: str, records: int, partitions: int) -> float:
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    async with Consumer(bootstrap_servers=bootstrap, group_id=None) as consumer:
        consumer.assign(tps)
        for tp in tps:
            consumer.seek(tp, 0)
        start = time.perf_counter()
        seen = 0
        reseeks = 0
        with anyio.fail_after(600):
            while seen < records:
                batch = await consumer.getmany(timeout_ms=500, max_records=20_000)
                seen += sum(len(v) for v in batch.values())
                if not batch:
                    # The same recovery the Spark reader uses when a poll comes back empty
                    # with data known to be there (a consumer fetch stall seen on Tansu).
                    reseeks += 1
                    for tp in tps:
                        consumer.seek(tp, await consumer.position(tp))
        if reseeks:
            print(f"(plain consumer: {reseeks} empty polls recovered by a seek)")
        return time.perf_counter() - start


def _row(name: str, records: int, seconds: float) -> str:
    return f"| {name:<34} | {records:>10,} | {seconds:>8.2f} | {records / seconds:>12,.0f} |"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Spark data source read benchmark")
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args(argv if argv is not None else [])
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from kafka_async.spark import register

    n, parts = args.records, args.partitions
    topic = f"bench-spark-{uuid.uuid4().hex[:8]}"
    with _bootstrap() as bootstrap:
        started = time.perf_counter()
        anyio.run(_fill, bootstrap, topic, n, parts)
        print(
            f"wrote {n:,} records of 100 B to {parts} partitions in "
            f"{time.perf_counter() - started:.1f} s",
            flush=True,
        )
        rows = [
            _row("Consumer getmany (plain)", n, anyio.run(_consume, bootstrap, topic, n, parts))
        ]

        spark = (
            SparkSession.builder.master(args.master)
            .appName("kafka_async-bench")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
        register(spark)
        try:
            df = (
                spark.read.format("kafka_async")
                .option("kafka.bootstrap.servers", bootstrap)
                .option("subscribe", topic)
                .load()
            )
            for label in ("first", "warm"):
                start = time.perf_counter()
                count = df.count()
                rows.append(_row(f"Spark count() ({label})", count, time.perf_counter() - start))
                assert count == n, f"count() gave {count:,}, wrote {n:,}"
            for label in ("first", "warm"):
                start = time.perf_counter()
                table = df.toArrow()
                rows.append(
                    _row(f"Spark toArrow() ({label})", table.num_rows, time.perf_counter() - start)
                )
                assert table.num_rows == n
                del table
        finally:
            spark.stop()
    print(f"\nSpark master {args.master}, {parts} Kafka partitions = {parts} Spark tasks\n")
    print(f"| {'read':<34} | {'records':>10} | {'seconds':>8} | {'records/s':>12} |")
    print(f"|{'-' * 36}|{'-' * 12}:|{'-' * 9}:|{'-' * 13}:|")
    print("\n".join(rows))


if __name__ == "__main__":
    main(sys.argv[1:])
