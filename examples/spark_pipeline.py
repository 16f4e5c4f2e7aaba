"""A Spark pipeline over Kafka with the pure-Python ``kafka_async`` data source.

Reads the topic ``make demo`` fills (JSON values ``{"seq": .., "key": "k7", "amount": ..}``),
computes per-key record counts and amount sums per time window, writes one JSON record per
(window, key) to another topic, reads that topic back and prints a summary::

    python examples/spark_pipeline.py                       # embedded broker, seeded data
    python examples/spark_pipeline.py --bootstrap-servers 127.0.0.1:9092 --topic demo
    python examples/spark_pipeline.py --master spark://host:7077 --bootstrap-servers ...

Without ``--bootstrap-servers`` it starts an embedded broker and writes ``--records`` demo
records first, so it runs anywhere. Needs the ``spark`` extra and a Java runtime; executors
need ``PYSPARK_PYTHON`` pointing at an interpreter with kafka_async installed (set here for
local masters).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import anyio

from kafka_async import AdminClient, NewTopic, Producer


@dataclass
class Summary:
    records_in: int
    windows: int
    keys: int
    results_out: int
    total_count: int
    total_amount: int
    seconds: float


def demo_value(seq: int) -> bytes:
    """A record of the ``make demo`` format (the same JSON, padded to about 100 bytes)."""
    body = json.dumps({"seq": seq, "key": f"k{seq % 100}", "amount": seq % 997})
    return body.ljust(100).encode()


async def _ensure_topics(bootstrap: str, *topics: tuple[str, int]) -> None:
    async with AdminClient(bootstrap_servers=bootstrap) as admin:
        # TOPIC_ALREADY_EXISTS comes back as a per-topic error, which is fine here.
        await admin.create_topics([NewTopic(name, num_partitions=n) for name, n in topics])


async def seed(bootstrap: str, topic: str, records: int, partitions: int = 4) -> None:
    """Create ``topic`` and fill it with ``records`` demo records."""
    await _ensure_topics(bootstrap, (topic, partitions))
    async with Producer(bootstrap_servers=bootstrap, linger_ms=5) as producer:
        for seq in range(records):
            await producer.enqueue(topic, value=demo_value(seq), key=f"k{seq % 100}".encode())
        await producer.flush()


def run(spark: Any, bootstrap: str, topic: str, output_topic: str, window: str) -> Summary:
    """The pipeline itself: Kafka -> windowed aggregation -> Kafka, then a read-back check."""
    from pyspark.sql import functions as F

    from kafka_async.spark import register

    register(spark)
    anyio.run(_ensure_topics, bootstrap, (output_topic, 1))
    # Tags this run's results, so a re-run against a long-lived topic reads back its own only.
    run_id = uuid.uuid4().hex
    started = time.perf_counter()
    source = (
        spark.read.format("kafka_async")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
    )
    parsed = source.select(
        "timestamp",
        F.from_json(F.col("value").cast("string"), "seq long, key string, amount long").alias("r"),
    ).select("timestamp", "r.*")
    stats = (
        parsed.groupBy(F.window("timestamp", window).alias("w"), "key")
        .agg(F.count("*").alias("count"), F.sum("amount").alias("amount"))
        .select(
            F.col("key").cast("binary").alias("key"),
            F.to_json(
                F.struct(
                    F.lit(run_id).alias("run"),
                    F.col("w.start").cast("string").alias("window_start"),
                    F.col("w.end").cast("string").alias("window_end"),
                    "key",
                    "count",
                    "amount",
                )
            ).alias("value"),
        )
    )
    stats.write.format("kafka_async").option("kafka.bootstrap.servers", bootstrap).option(
        "topic", output_topic
    ).mode("append").save()
    seconds = time.perf_counter() - started

    # Read the results back from Kafka: what a downstream job would see.
    results = (
        spark.read.format("kafka_async")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", output_topic)
        .load()
        .select(
            F.from_json(
                F.col("value").cast("string"),
                "run string, window_start string, key string, count long, amount long",
            ).alias("s")
        )
        .select("s.*")
        .where(F.col("run") == run_id)
    )
    totals = results.agg(
        F.count("*").alias("n"),
        F.countDistinct("window_start").alias("windows"),
        F.countDistinct("key").alias("keys"),
        F.sum("count").alias("count"),
        F.sum("amount").alias("amount"),
    ).first()
    return Summary(
        records_in=source.count(),
        windows=int(totals["windows"] or 0),
        keys=int(totals["keys"] or 0),
        results_out=int(totals["n"] or 0),
        total_count=int(totals["count"] or 0),
        total_amount=int(totals["amount"] or 0),
        seconds=seconds,
    )


@contextmanager
def _broker(bootstrap: str | None, topic: str, records: int) -> Iterator[str]:
    if bootstrap:
        yield bootstrap
        return
    from kafka_async.testing import EmbeddedBroker

    with EmbeddedBroker() as broker:
        print(f"embedded broker at {broker.bootstrap_servers}; writing {records:,} records")
        anyio.run(seed, broker.bootstrap_servers, topic, records)
        yield broker.bootstrap_servers


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--master", default="local[*]", help="Spark master (default local[*])")
    parser.add_argument("--bootstrap-servers", help="an existing broker (default: embedded)")
    parser.add_argument("--topic", default="demo", help="input topic (default demo)")
    parser.add_argument("--output-topic", default="demo-window-stats")
    parser.add_argument("--window", default="1 second", help="window length, e.g. '1 minute'")
    parser.add_argument(
        "--records", type=int, default=100_000, help="records to seed an embedded broker with"
    )
    args = parser.parse_args(argv)

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    with _broker(args.bootstrap_servers, args.topic, args.records) as bootstrap:
        spark = (
            SparkSession.builder.master(args.master)
            .appName("kafka_async-spark-pipeline")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
        try:
            s = run(spark, bootstrap, args.topic, args.output_topic, args.window)
        finally:
            spark.stop()
    print(f"read {s.records_in:,} records from {args.topic!r}")
    print(
        f"wrote {s.results_out:,} (window, key) results to {args.output_topic!r}: "
        f"{s.windows} windows x {s.keys} keys, in {s.seconds:.1f} s"
    )
    print(f"counts add up to {s.total_count:,}; amounts add up to {s.total_amount:,}")
    if s.total_count != s.records_in:
        print("MISMATCH: the window counts do not add up to the records read", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
