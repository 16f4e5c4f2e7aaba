"""Consumer throughput, CPU and memory beside aiokafka, confluent-kafka and Java.

``python -m benchmarks.consumer`` (or ``python -m benchmarks consumer``) starts a broker (see
``benchmarks/_common.py``: ``--broker tansu`` by default, ``--broker apache``, or
``$KAFKA_BOOTSTRAP_SERVERS``), fills a 4-partition topic with 1,000,000 records of 100 bytes
(librdkafka producer, no compression), then has each client read all of them from the
beginning, each in a fresh subprocess so its CPU time and peak RSS are its own, ``--rounds``
times (default 3, interleaved), and prints medians with the range over rounds:

* kafka_async ``getmany`` (batches of up to 10,000) and ``async for`` (one record at a time);
* aiokafka ``getmany`` and ``async for``;
* confluent-kafka ``consume(num_messages=10000)`` in assign mode, ``queued.min.messages``
  raised to 1,000,000 (librdkafka's subscribe
  mode receives nothing from this Tansu build, a known broker gap);
* on Apache Kafka, the Java client's ``ConsumerPerformance`` (kafka-tools; its own fetch-time
  rate, which leaves out the group join).

Every client is told the partitions and starts at offset 0 (assign mode), uses its default
fetch sizes (kafka_async and the Java client: fetch_max_bytes 50 MiB, 1 MiB per partition;
aiokafka: the same; librdkafka: fetch.max.bytes 50 MiB, max.partition.fetch.bytes 1 MiB), and
the clock runs from the first fetch request to the last record, so connection set-up is not
counted. With ``--memory``, peak RSS of kafka_async ``getmany`` at 1M and 10M records (bounded
by ``fetch_max_bytes``, not by the record count).

Options: ``--scale 0.1`` shrinks the record count, ``--clients a,b`` picks clients,
``--rounds N``, ``--memory``, ``--markdown``. Figures, not pass/fail.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time
import uuid
from typing import Any

from benchmarks import _common

CLIENTS = (
    "kafka_async",
    "kafka_async_iter",
    "aiokafka",
    "aiokafka_iter",
    "confluent",
    "java",
)
LABELS = {
    "kafka_async": "kafka_async getmany",
    "kafka_async_iter": "kafka_async async for",
    "aiokafka": "aiokafka getmany",
    "aiokafka_iter": "aiokafka async for",
    "confluent": "confluent-kafka consume (assign)",
    "java": "Java ConsumerPerformance",
}
PARTITIONS = 4
RECORDS = 1_000_000
SIZE = 100


# -- child side: one client reads everything --------------------------------------------------


def _report(n: int, nbytes: int, elapsed: float, cpu: float) -> None:
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {"records": n, "bytes": nbytes, "seconds": elapsed, "cpu": cpu, "rss_kib": rss_kib}
        ),
        flush=True,
    )


async def _kafka_async(args: argparse.Namespace, iterate: bool) -> None:
    from kafka_async.consumer import Consumer
    from kafka_async.structs import TopicPartition

    consumer: Consumer[bytes, bytes] = Consumer(
        bootstrap_servers=args.bootstrap, auto_offset_reset="earliest"
    )
    async with consumer as c:
        tps = [TopicPartition(args.topic, p) for p in range(PARTITIONS)]
        c.assign(tps)
        n = 0
        nbytes = 0
        start = time.perf_counter()
        cpu0 = time.process_time()
        if iterate:
            async for r in c:
                n += 1
                nbytes += r.serialized_value_size
                if n >= args.n:
                    break
        else:
            while n < args.n:
                batch = await c.getmany(timeout_ms=1000, max_records=10_000)
                for recs in batch.values():
                    n += len(recs)
                    for r in recs:
                        nbytes += r.serialized_value_size
        _report(n, nbytes, time.perf_counter() - start, time.process_time() - cpu0)


async def _aiokafka(args: argparse.Namespace, iterate: bool) -> None:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    c = AIOKafkaConsumer(bootstrap_servers=args.bootstrap, auto_offset_reset="earliest")
    await c.start()
    try:
        c.assign([TopicPartition(args.topic, p) for p in range(PARTITIONS)])
        n = 0
        nbytes = 0
        start = time.perf_counter()
        cpu0 = time.process_time()
        if iterate:
            async for r in c:
                n += 1
                nbytes += len(r.value)
                if n >= args.n:
                    break
        else:
            while n < args.n:
                batch = await c.getmany(timeout_ms=1000, max_records=10_000)
                for recs in batch.values():
                    n += len(recs)
                    for r in recs:
                        nbytes += len(r.value)
        _report(n, nbytes, time.perf_counter() - start, time.process_time() - cpu0)
    finally:
        await c.stop()


def _confluent(args: argparse.Namespace) -> None:
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    c = Consumer(
        {
            "bootstrap.servers": args.bootstrap,
            "group.id": f"bench-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            # librdkafka 2.x stops prefetching a partition once 100,000 records are queued
            # and waits fetch.queue.backoff.ms (1 s) before looking again: with consume()
            # draining 10,000 at a time that halves its rate here. An expert raises it.
            "queued.min.messages": 1_000_000,
        }
    )
    try:
        c.assign([TopicPartition(args.topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
        n = 0
        nbytes = 0
        start = time.perf_counter()
        cpu0 = time.process_time()
        while n < args.n:
            for msg in c.consume(num_messages=10_000, timeout=1.0):
                if msg.error() is None:
                    n += 1
                    nbytes += len(msg.value() or b"")
        _report(n, nbytes, time.perf_counter() - start, time.process_time() - cpu0)
    finally:
        c.close()


#: ConsumerPerformance's CSV line (--show-detailed-stats off): start, end, MB, MB/s, records,
#: records/s, rebalance ms, fetch ms, fetch MB/s, fetch records/s.
_JAVA_LINE = re.compile(r"^[\d:. -]+, [\d:. -]+, ([\d.]+), [\d.]+, (\d+), [\d.]+, \d+, (\d+),")


def _java(args: argparse.Namespace) -> None:
    """ConsumerPerformance in a JVM of its own; this child reports the JVM's CPU and RSS."""
    from kafka_async.testing.apache import ensure_distribution

    dist = ensure_distribution()
    cmd = dist.java_command(
        "org.apache.kafka.tools.ConsumerPerformance",
        "--bootstrap-server",
        args.bootstrap,
        "--topic",
        args.topic,
        "--messages",
        str(args.n),
        "--group",
        f"bench-java-{uuid.uuid4().hex[:8]}",
        "--timeout",
        "60000",
        jvm=["-Xmx512m"],
    )
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    found = [m for line in proc.stdout.splitlines() if (m := _JAVA_LINE.match(line))]
    if proc.returncode != 0 or not found:
        raise SystemExit(f"ConsumerPerformance failed: {proc.stdout[-1000:]}{proc.stderr[-1000:]}")
    mb, records, fetch_ms = float(found[-1][1]), int(found[-1][2]), int(found[-1][3])
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    # Its fetch time (after the group join); the CPU is the whole JVM's (start-up included).
    seconds = max(fetch_ms, 1) / 1000
    print(
        json.dumps(
            {
                "records": records,
                "bytes": int(mb * 1024 * 1024),
                "seconds": seconds,
                "cpu": usage.ru_utime + usage.ru_stime,
                "rss_kib": usage.ru_maxrss,
            }
        ),
        flush=True,
    )


def _child(args: argparse.Namespace) -> None:
    if args.child == "confluent":
        _confluent(args)
        return
    if args.child == "java":
        _java(args)
        return
    import anyio

    if args.child in ("aiokafka", "aiokafka_iter"):
        anyio.run(_aiokafka, args, args.child == "aiokafka_iter")
    else:
        anyio.run(_kafka_async, args, args.child == "kafka_async_iter")


# -- parent side -------------------------------------------------------------------------------


def _produce(bootstrap: str, topic: str, n: int) -> None:
    from confluent_kafka import Producer

    p = Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 20,
            "batch.size": 1_000_000,
            "enable.idempotence": False,
        }
    )
    value = (b"consumer-benchmark-" * 8)[:SIZE]
    for i in range(n):
        while True:
            try:
                p.produce(topic, value=value, partition=i % PARTITIONS)
                break
            except BufferError:
                p.poll(0.05)
        if i % 10_000 == 0:
            p.poll(0)
    left = p.flush(120)
    if left:
        raise RuntimeError(f"{left} benchmark records not delivered")


def _run_child(client: str, bootstrap: str, topic: str, n: int) -> dict[str, Any]:
    cmd = _common.python_child(
        "benchmarks.consumer",
        "--child",
        client,
        "--bootstrap",
        bootstrap,
        "--topic",
        topic,
        "--n",
        str(n),
    )
    return _common.run_json_child(cmd, timeout=600)


def _memory(args: argparse.Namespace, bootstrap: str) -> None:
    """Peak RSS of kafka_async getmany at 1M and 10M records: bounded by fetch_max_bytes."""
    from kafka_async.testing.topics import create_topic

    rows = []
    for count in (1_000_000, 10_000_000):
        n = max(1000, int(count * args.scale))
        topic = f"bench-consume-{uuid.uuid4().hex[:8]}"
        create_topic(bootstrap, topic, PARTITIONS)
        _produce(bootstrap, topic, n)
        try:
            r = _run_child("kafka_async", bootstrap, topic, n)
        except Exception as exc:
            print(f"  memory {n:,}: failed: {exc}", file=sys.stderr)
            continue
        rows.append(
            [
                f"{n:,}",
                f"{r['records'] / r['seconds']:,.0f}",
                f"{r['cpu'] / r['records'] * 1e6:.2f}",
                f"{r['rss_kib'] / 1024:,.0f}",
            ]
        )
    print("### memory: kafka_async getmany, 100 B records, fetch_max_bytes=50 MiB\n")
    print(
        _common.table(
            ["records", "records/s", "CPU us/record", "peak RSS MiB"], rows, args.markdown
        )
    )
    print(flush=True)


def main(argv: list[str] | None = None) -> None:
    """Run the consumer benchmark and print its table (``argv`` as on the command line)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", choices=CLIENTS)
    parser.add_argument("--bootstrap")
    parser.add_argument("--topic")
    parser.add_argument("--n", type=int, default=RECORDS)
    parser.add_argument("--scale", type=float, default=float(os.environ.get("BENCH_SCALE", "1")))
    parser.add_argument("--clients", default=",".join(CLIENTS))
    parser.add_argument("--rounds", type=int, default=int(os.environ.get("BENCH_ROUNDS", "3")))
    parser.add_argument("--memory", action="store_true", help="also peak RSS at 1M and 10M")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--broker", choices=_common.BROKERS, default=None)
    # ``python -m benchmarks`` calls main() with no arguments: defaults, not its own argv.
    args = parser.parse_args([] if argv is None else argv)
    if args.child:
        _child(args)
        return
    clients = [c.strip() for c in args.clients.split(",") if c.strip()]
    for c in clients:
        if c not in CLIENTS:
            raise SystemExit(f"unknown client {c!r}; choose from {', '.join(CLIENTS)}")
    n = max(1000, int(RECORDS * args.scale))
    from kafka_async.testing.topics import create_topic

    with _common.broker(args.broker) as broker:
        if broker.kind != "apache":
            clients = [c for c in clients if c != "java"]
        topic = f"bench-consume-{uuid.uuid4().hex[:8]}"
        create_topic(broker.bootstrap, topic, PARTITIONS)
        t = time.perf_counter()
        _produce(broker.bootstrap, topic, n)
        print(
            f"{n:,} records of {SIZE} B in {PARTITIONS} partitions produced in "
            f"{time.perf_counter() - t:.1f} s; reading them back ({args.rounds} rounds, "
            f"{broker.description}):\n",
            flush=True,
        )
        runs: dict[str, list[dict[str, Any]]] = {c: [] for c in clients}
        loads = []
        for _ in range(args.rounds):
            loads.append(_common.load_average())
            for client in clients:
                try:
                    runs[client].append(_run_child(client, broker.bootstrap, topic, n))
                except Exception as exc:  # one client failing must not hide the others
                    print(f"{LABELS[client]}: {exc}", file=sys.stderr)
        rates = {c: [r["records"] / r["seconds"] for r in rs] for c, rs in runs.items() if rs}
        cpus = {c: [r["cpu"] / r["records"] * 1e6 for r in rs] for c, rs in runs.items() if rs}

        def ratio(client: str, base: str) -> str:
            if base not in rates or client not in rates:
                return "-"
            return f"{_common.median(rates[client]) / _common.median(rates[base]):.2f}x"

        rows = []
        for client, r in rates.items():
            rss = _common.median([x["rss_kib"] / 1024 for x in runs[client]])
            rows.append(
                [
                    LABELS[client],
                    _common.spread(r),
                    f"{_common.median(r) * SIZE / 1e6:.1f}",
                    _common.spread(cpus[client], "{:.2f}"),
                    f"{rss:.0f}",
                    ratio(client, "kafka_async"),
                    ratio(client, "confluent"),
                    ratio(client, "aiokafka"),
                    ratio(client, "aiokafka_iter"),
                ]
            )
        headers = [
            "client",
            "records/s median (range)",
            "MB/s",
            "CPU us/record median (range)",
            "peak RSS MiB",
            "vs our getmany",
            "vs confluent",
            "vs aiokafka getmany",
            "vs aiokafka async for",
        ]
        print(f"load average per round: {'/'.join(loads)}\n")
        print(_common.table(headers, rows, args.markdown), flush=True)
        print()
        checks = (
            ("kafka_async_iter", "kafka_async", "async for >= 80% of getmany", 0.8),
            ("kafka_async_iter", "aiokafka_iter", "async for >= 2x aiokafka async for", 2.0),
            ("kafka_async", "confluent", "getmany vs confluent-kafka", 1.0),
        )
        lines = []
        for a, b, what, goal in checks:
            if a in rates and b in rates:
                med = _common.median(rates[a]) / _common.median(rates[b])
                per = [x / y for x, y in zip(rates[a], rates[b], strict=False)]
                lines.append(
                    f"- {what}: {med:.2f}x (rounds {min(per):.2f}-{max(per):.2f}x) "
                    f"{'met' if med >= goal else 'NOT met'}"
                )
        if lines:
            print("Targets (issue 17):\n" + "\n".join(lines) + "\n", flush=True)
        print(
            "Settings: every client reads from offset 0 in assign mode with fetch.max.bytes "
            "50 MiB and 1 MiB per partition; confluent-kafka consume(num_messages=10000) with "
            "queued.min.messages=1,000,000 (its default 100,000 with the 1 s "
            "fetch.queue.backoff.ms halves its rate here); aiokafka getmany(max_records=10000)."
            "\n",
            flush=True,
        )
        if args.memory:
            _memory(args, broker.bootstrap)


if __name__ == "__main__":
    main(sys.argv[1:])
