"""Consumer throughput, CPU and memory beside aiokafka and confluent-kafka.

``python -m benchmarks.consumer`` (or ``python -m benchmarks consumer``) starts an embedded
broker (or uses ``$KAFKA_BOOTSTRAP_SERVERS``), fills a 4-partition topic with 1,000,000
records of 100 bytes (librdkafka producer, no compression), then has each client read all
of them from the beginning, each in a fresh subprocess so its CPU time and peak RSS are its
own:

* kafka_async ``getmany`` (batches of up to 10,000) and ``async for`` (one record at a time);
* aiokafka ``getmany``;
* confluent-kafka ``consume(num_messages=10000)`` in assign mode (librdkafka's subscribe
  mode receives nothing from this Tansu build, a known broker gap).

Every client is told the partitions and starts at offset 0 (assign mode), and the clock runs
from the first fetch request to the last record, so connection set-up is not counted.
Options: ``--scale 0.1`` shrinks the record count, ``--clients a,b`` picks clients,
``--markdown`` prints the table as Markdown. Figures, not pass/fail: issue 4's targets (at
least confluent-kafka's throughput, at least 1.5x aiokafka) are judged from this table.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import uuid
from typing import Any

CLIENTS = ("kafka_async", "kafka_async_iter", "aiokafka", "confluent")
LABELS = {
    "kafka_async": "kafka_async getmany",
    "kafka_async_iter": "kafka_async async for",
    "aiokafka": "aiokafka getmany",
    "confluent": "confluent-kafka (assign)",
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


async def _aiokafka(args: argparse.Namespace) -> None:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    c = AIOKafkaConsumer(bootstrap_servers=args.bootstrap, auto_offset_reset="earliest")
    await c.start()
    try:
        c.assign([TopicPartition(args.topic, p) for p in range(PARTITIONS)])
        n = 0
        nbytes = 0
        start = time.perf_counter()
        cpu0 = time.process_time()
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


def _child(args: argparse.Namespace) -> None:
    if args.child == "confluent":
        _confluent(args)
        return
    import anyio

    if args.child == "aiokafka":
        anyio.run(_aiokafka, args)
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
    cmd = [
        sys.executable,
        "-m",
        "benchmarks.consumer",
        "--child",
        client,
        "--bootstrap",
        bootstrap,
        "--topic",
        topic,
        "--n",
        str(n),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"{client} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def _table(headers: list[str], rows: list[list[str]], markdown: bool) -> str:
    if markdown:
        out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(out)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*headers), *(fmt.format(*r) for r in rows)])


def _bootstrap() -> tuple[str, Any]:
    external = os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "").strip()
    if external:
        return external, None
    from kafka_async.testing import EmbeddedBroker

    broker = EmbeddedBroker()
    broker.start()
    return broker.bootstrap_servers, broker


def main(argv: list[str] | None = None) -> None:
    """Run the consumer benchmark and print its table (``argv`` as on the command line)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", choices=CLIENTS)
    parser.add_argument("--bootstrap")
    parser.add_argument("--topic")
    parser.add_argument("--n", type=int, default=RECORDS)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--clients", default=",".join(CLIENTS))
    parser.add_argument("--markdown", action="store_true")
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

    bootstrap, broker = _bootstrap()
    try:
        topic = f"bench-consume-{uuid.uuid4().hex[:8]}"
        create_topic(bootstrap, topic, PARTITIONS)
        t = time.perf_counter()
        _produce(bootstrap, topic, n)
        print(
            f"{n:,} records of {SIZE} B in {PARTITIONS} partitions produced in "
            f"{time.perf_counter() - t:.1f} s; reading them back:\n",
            flush=True,
        )
        results: dict[str, dict[str, Any]] = {}
        for client in clients:
            try:
                results[client] = _run_child(client, bootstrap, topic, n)
            except Exception as exc:  # one client failing must not hide the others
                print(f"{LABELS[client]}: {exc}", file=sys.stderr)
        rows = []
        base_conf = results.get("confluent")
        base_aio = results.get("aiokafka")
        for client, r in results.items():
            rate = r["records"] / r["seconds"]
            row = [
                LABELS[client],
                f"{rate:,.0f}",
                f"{r['bytes'] / r['seconds'] / 1e6:.1f}",
                f"{r['cpu'] / r['records'] * 1e6:.2f}",
                f"{r['rss_kib'] / 1024:.0f}",
            ]
            for base in (base_conf, base_aio):
                if base is None:
                    row.append("-")
                else:
                    row.append(f"{rate / (base['records'] / base['seconds']):.2f}x")
            rows.append(row)
        headers = [
            "client",
            "records/s",
            "MB/s",
            "CPU us/record",
            "peak RSS MB",
            "vs confluent",
            "vs aiokafka",
        ]
        print(_table(headers, rows, args.markdown), flush=True)
    finally:
        if broker is not None:
            broker.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
