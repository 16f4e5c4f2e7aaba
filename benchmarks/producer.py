"""Producer throughput, CPU and memory beside aiokafka, confluent-kafka and kafka-python.

``python -m benchmarks.producer`` (or ``python -m benchmarks producer``) starts an embedded
broker (or uses ``$KAFKA_BOOTSTRAP_SERVERS``), then runs each client in a fresh subprocess so
its CPU time and peak RSS are its own:

* 1,000,000 records of 100 bytes, no compression; 100,000 records of 1 KiB with lz4 and with
  zstd; each to a fresh 4-partition topic, acks=all for every client;
* kafka_async in three modes: ``enqueue`` (one call per record, awaiting only buffer space),
  ``send x1000`` (1,000 concurrent tasks, each awaiting its acknowledgement) and
  ``enqueue_many`` (the bulk path: 10,000 records per call, as a pipeline would);
* end-to-end latency (produce call -> receipt by a confluent-kafka consumer in another
  process) at a steady 10,000 records/s with the default linger, p50 and p99.

Options: ``--scale 0.1`` shrinks every record count (quick runs), ``--clients a,b`` picks
clients, ``--no-latency`` skips the latency part, ``--markdown`` prints tables as Markdown.
Figures, not pass/fail: the targets in issue 3 are judged from these tables.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

CLIENTS = (
    "kafka_async",
    "kafka_async_send",
    "kafka_async_bulk",
    "aiokafka",
    "confluent",
    "kafka_python",
)
LABELS = {
    "kafka_async": "kafka_async enqueue",
    "kafka_async_send": "kafka_async send x1000",
    "kafka_async_bulk": "kafka_async enqueue_many",
    "aiokafka": "aiokafka",
    "confluent": "confluent-kafka",
    "kafka_python": "kafka-python",
}
SCENARIOS = (
    ("1M x 100 B", 1_000_000, 100, None),
    ("100k x 1 KiB lz4", 100_000, 1024, "lz4"),
    ("100k x 1 KiB zstd", 100_000, 1024, "zstd"),
)
PARTITIONS = 4


# -- child side: one client, one scenario ------------------------------------------------------


def _payloads(n: int, size: int) -> list[bytes]:
    # Compressible but not trivial (like JSON-ish application data), distinct per record.
    base = (b"benchmark-record-" * (size // 17 + 1))[:size]
    return [i.to_bytes(8, "big") + base[8:] for i in range(min(n, 10_000))]


async def _run_kafka_async(args: argparse.Namespace, mode: str) -> None:
    import anyio

    from kafka_async import Producer

    values = _payloads(args.n, args.size)
    nv = len(values)
    extra = json.loads(os.environ.get("KAFKA_ASYNC_BENCH_CONFIG", "{}"))
    async with Producer(
        bootstrap_servers=args.bootstrap, compression_type=args.compression, acks="all", **extra
    ) as producer:
        await producer.send(args.topic, b"warm-up")
        start = time.perf_counter()
        cpu0 = time.process_time()
        if mode == "enqueue":
            enqueue = producer.enqueue
            topic = args.topic
            for i in range(args.n):
                await enqueue(topic, values[i % nv])
            await producer.flush()
        elif mode == "bulk":
            # A pipeline handing over 10,000 records per call.
            topic = args.topic
            pending = []
            for first in range(0, args.n, 10_000):
                chunk = [values[i % nv] for i in range(first, min(first + 10_000, args.n))]
                pending.append(await producer.enqueue_many(topic, chunk))
            for bulk in pending:
                await bulk
        else:
            per_task = args.n // 1000
            send = producer.send

            async def worker(w: int) -> None:
                for i in range(per_task):
                    await send(args.topic, values[(w * per_task + i) % nv])

            async with anyio.create_task_group() as tg:
                for w in range(1000):
                    tg.start_soon(worker, w)
        _STATE["elapsed"] = time.perf_counter() - start
        _STATE["cpu"] = time.process_time() - cpu0


async def _run_aiokafka(args: argparse.Namespace) -> None:
    import asyncio

    from aiokafka import AIOKafkaProducer

    values = _payloads(args.n, args.size)
    nv = len(values)
    producer = AIOKafkaProducer(
        bootstrap_servers=args.bootstrap, compression_type=args.compression, acks="all"
    )
    await producer.start()
    try:
        await producer.send_and_wait(args.topic, b"warm-up")
        start = time.perf_counter()
        cpu0 = time.process_time()
        pending = []
        for i in range(args.n):
            pending.append(await producer.send(args.topic, values[i % nv]))
            if len(pending) >= 10_000:
                await asyncio.gather(*pending)
                pending.clear()
        await producer.flush()
        await asyncio.gather(*pending)
        _STATE["elapsed"] = time.perf_counter() - start
        _STATE["cpu"] = time.process_time() - cpu0
    finally:
        await producer.stop()


def _run_confluent(args: argparse.Namespace) -> None:
    import confluent_kafka

    values = _payloads(args.n, args.size)
    nv = len(values)
    producer = confluent_kafka.Producer(
        {
            "bootstrap.servers": args.bootstrap,
            "acks": "all",
            "enable.idempotence": True,
            "compression.type": args.compression or "none",
            "queue.buffering.max.messages": 1_000_000,
            "log_level": 3,
        }
    )
    producer.produce(args.topic, b"warm-up")
    producer.flush(30)
    errors = 0

    def on_delivery(err: Any, msg: Any) -> None:
        nonlocal errors
        if err is not None:
            errors += 1

    start = time.perf_counter()
    cpu0 = time.process_time()
    produce = producer.produce
    topic = args.topic
    for i in range(args.n):
        while True:
            try:
                produce(topic, values[i % nv], on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.01)
        if i % 1000 == 0:
            producer.poll(0)
    producer.flush(120)
    _STATE["elapsed"] = time.perf_counter() - start
    _STATE["cpu"] = time.process_time() - cpu0
    _STATE["errors"] = errors


def _run_kafka_python(args: argparse.Namespace) -> None:
    import warnings

    warnings.simplefilter("ignore")
    from kafka import KafkaProducer

    values = _payloads(args.n, args.size)
    nv = len(values)
    producer = KafkaProducer(
        bootstrap_servers=args.bootstrap, compression_type=args.compression, acks="all"
    )
    producer.send(args.topic, b"warm-up").get(30)
    start = time.perf_counter()
    cpu0 = time.process_time()
    send = producer.send
    for i in range(args.n):
        send(args.topic, values[i % nv])
    producer.flush(300)
    _STATE["elapsed"] = time.perf_counter() - start
    _STATE["cpu"] = time.process_time() - cpu0
    producer.close(10)


_STATE: dict[str, Any] = {}


def _child(args: argparse.Namespace) -> None:
    client = args.child
    if client in ("kafka_async", "kafka_async_send", "kafka_async_bulk"):
        import anyio

        mode = {"kafka_async": "enqueue", "kafka_async_send": "send"}.get(client, "bulk")
        anyio.run(_run_kafka_async, args, mode)
    elif client == "aiokafka":
        import asyncio

        asyncio.run(_run_aiokafka(args))
    elif client == "confluent":
        _run_confluent(args)
    elif client == "kafka_python":
        _run_kafka_python(args)
    else:
        raise SystemExit(f"unknown client {client}")
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(
        json.dumps(
            {
                "elapsed": _STATE["elapsed"],
                "cpu": _STATE["cpu"],
                "rss_kib": usage.ru_maxrss,
                "errors": _STATE.get("errors", 0),
            }
        )
    )


# -- latency -----------------------------------------------------------------------------------


def _latency_consumer(args: argparse.Namespace) -> None:
    """Child: read ``args.n`` records, print receive-minus-send-time per record (ms)."""
    import confluent_kafka

    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": args.bootstrap,
            "group.id": f"lat-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
            "fetch.wait.max.ms": 5,
            "fetch.min.bytes": 1,
            "log_level": 3,
        }
    )
    consumer.assign(
        [
            confluent_kafka.TopicPartition(args.topic, p, confluent_kafka.OFFSET_END)
            for p in range(PARTITIONS)
        ]
    )
    # Make sure the assignment is live before the producer starts.
    consumer.consume(1, 1.0)
    print("ready", flush=True)
    lat: list[float] = []
    deadline = time.monotonic() + args.n / 10_000 + 60
    while len(lat) < args.n and time.monotonic() < deadline:
        # poll() returns as soon as one record is there (consume(n, t) waits for n or t).
        msg = consumer.poll(0.1)
        if msg is None or msg.error() is not None:
            continue
        value = msg.value()
        if value is not None and len(value) >= 8:
            now = time.time_ns()
            lat.append((now - int.from_bytes(value[:8], "big")) / 1e6)
    consumer.close()
    print(json.dumps(lat))


async def _latency_producer(args: argparse.Namespace, client: str) -> None:
    """Child: produce at 10,000 records/s; print the send->ack latencies (ms) as JSON."""
    import anyio

    from kafka_async import Producer

    interval = 1 / 10_000
    pad = b"x" * 92
    acks: list[float] = []
    send_stream, receive_stream = anyio.create_memory_object_stream[tuple[int, Any]](math.inf)

    async def collect() -> None:
        # Deliveries settle in order per partition; awaiting them one by one in a single task
        # reads each one's ack time without a task per record.
        async with receive_stream:
            async for sent_ns, delivery in receive_stream:
                if not delivery.done():
                    await delivery
                acks.append((time.time_ns() - sent_ns) / 1e6)

    extra = json.loads(os.environ.get("KAFKA_ASYNC_BENCH_CONFIG", "{}"))
    async with Producer(bootstrap_servers=args.bootstrap, **extra) as producer:
        async with anyio.create_task_group() as tg:
            tg.start_soon(collect)
            await producer.send(args.topic, b"warm")
            start = time.perf_counter()
            async with send_stream:
                for i in range(args.n):
                    target = start + i * interval
                    delay = target - time.perf_counter()
                    if delay > 0.001:
                        await anyio.sleep(delay)
                    now = time.time_ns()
                    delivery = await producer.enqueue(args.topic, now.to_bytes(8, "big") + pad)
                    send_stream.send_nowait((now, delivery))
        await producer.flush()
    print(json.dumps(acks))


def _run_confluent_latency_producer(args: argparse.Namespace) -> None:
    import confluent_kafka

    producer = confluent_kafka.Producer(
        {
            "bootstrap.servers": args.bootstrap,
            "acks": "all",
            "enable.idempotence": True,
            "log_level": 3,
        }
    )
    interval = 1 / 10_000
    pad = b"x" * 92
    start = time.perf_counter()
    for i in range(args.n):
        target = start + i * interval
        delay = target - time.perf_counter()
        if delay > 0.001:
            producer.poll(delay)
        producer.produce(args.topic, time.time_ns().to_bytes(8, "big") + pad)
        producer.poll(0)
    producer.flush(30)


def _latency_child(args: argparse.Namespace) -> None:
    if args.latency_child == "consumer":
        _latency_consumer(args)
    elif args.latency_child == "confluent":
        _run_confluent_latency_producer(args)
    else:
        import anyio

        anyio.run(_latency_producer, args, args.latency_child)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    idx = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[idx]


def measure_latency(
    bootstrap: str, client: str, n: int, make_topic: Callable[[], str]
) -> dict[str, float]:
    topic = make_topic()
    base = [
        sys.executable,
        "-m",
        "benchmarks.producer",
        "--bootstrap",
        bootstrap,
        "--topic",
        topic,
        "--n",
        str(n),
    ]
    consumer = subprocess.Popen(
        [*base, "--latency-child", "consumer"], stdout=subprocess.PIPE, text=True
    )
    assert consumer.stdout is not None
    line = consumer.stdout.readline()
    if line.strip() != "ready":
        consumer.kill()
        raise RuntimeError(f"latency consumer did not start: {line!r}")
    prod = subprocess.run(
        [*base, "--latency-child", client],
        check=True,
        timeout=n / 10_000 + 120,
        capture_output=True,
        text=True,
    )
    out, _ = consumer.communicate(timeout=n / 10_000 + 120)
    lat = json.loads(out.strip().splitlines()[-1])
    lines = prod.stdout.strip().splitlines()
    ack = json.loads(lines[-1]) if lines else []
    return {
        "count": len(lat),
        "p50": _percentile(lat, 0.5),
        "p99": _percentile(lat, 0.99),
        "max": max(lat) if lat else float("nan"),
        "ack_p50": _percentile(ack, 0.5),
        "ack_p99": _percentile(ack, 0.99),
    }


# -- parent side -------------------------------------------------------------------------------


def _run_child(
    client: str, bootstrap: str, topic: str, n: int, size: int, compression: str | None
) -> dict[str, Any]:
    cmd = [
        sys.executable,
        "-m",
        "benchmarks.producer",
        "--child",
        client,
        "--bootstrap",
        bootstrap,
        "--topic",
        topic,
        "--n",
        str(n),
        "--size",
        str(size),
    ]
    if compression:
        cmd += ["--compression", compression]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError(f"{client} failed: {proc.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def _table(headers: list[str], rows: list[list[str]], markdown: bool) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    if markdown:
        lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + " |"]
        lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
        lines += [
            "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |"
            for r in rows
        ]
    else:
        lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))]
        lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Run the producer benchmark and print its tables (``argv`` as on the command line)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.producer")
    parser.add_argument("--scale", type=float, default=float(os.environ.get("BENCH_SCALE", "1")))
    parser.add_argument("--clients", default=",".join(CLIENTS))
    parser.add_argument("--no-latency", action="store_true")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument(
        "--scenarios", default="all", help="comma-separated indexes (0,1,2), all or none"
    )
    # child-process options
    parser.add_argument("--child")
    parser.add_argument("--latency-child")
    parser.add_argument("--bootstrap")
    parser.add_argument("--topic")
    parser.add_argument("--n", type=int, default=0)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--compression")
    args = parser.parse_args(argv if argv is not None else [])
    if args.child:
        _child(args)
        return
    if args.latency_child:
        _latency_child(args)
        return

    from kafka_async.testing.topics import create_topic

    clients = [c for c in args.clients.split(",") if c]
    if args.scenarios == "all":
        scenarios = list(SCENARIOS)
    elif args.scenarios == "none":
        scenarios = []
    else:
        scenarios = [SCENARIOS[int(i)] for i in args.scenarios.split(",")]
    broker = None
    bootstrap = os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "").strip()
    if not bootstrap:
        from kafka_async.testing import EmbeddedBroker

        broker = EmbeddedBroker()
        broker.start()
        bootstrap = broker.bootstrap_servers

    def make_topic() -> str:
        name = f"bench-{uuid.uuid4().hex[:8]}"
        create_topic(bootstrap, name, PARTITIONS)
        return name

    try:
        for title, count, size, compression in scenarios:
            n = max(1000, int(count * args.scale))
            results: dict[str, dict[str, Any]] = {}
            for client in clients:
                try:
                    results[client] = _run_child(
                        client, bootstrap, make_topic(), n, size, compression
                    )
                except Exception as exc:  # one failing peer must not hide the others
                    print(f"  {LABELS[client]}: failed: {exc}", file=sys.stderr)
            rows = []
            ours = results.get("kafka_async")
            for client, r in results.items():
                rate = n / r["elapsed"]
                row = [
                    LABELS[client],
                    f"{rate:,.0f}",
                    f"{rate * size / 1e6:,.1f}",
                    f"{r['cpu'] / n * 1e6:,.1f}",
                    f"{r['rss_kib'] / 1024:,.0f}",
                ]
                if ours is not None and client not in ("kafka_async",):
                    row.append(f"{r['elapsed'] / ours['elapsed']:.2f}x")
                else:
                    row.append("-")
                rows.append(row)
            print(f"### {title} ({n:,} records, {PARTITIONS} partitions, acks=all)\n")
            print(
                _table(
                    [
                        "client",
                        "records/s",
                        "MB/s",
                        "CPU us/record",
                        "peak RSS MiB",
                        "kafka_async enqueue speed-up",
                    ],
                    rows,
                    args.markdown,
                )
            )
            print(flush=True)
        if not args.no_latency:
            n = max(2000, int(50_000 * args.scale))
            rows = []
            for client in ("kafka_async", "confluent"):
                try:
                    lat = measure_latency(bootstrap, client, n, make_topic)
                except Exception as exc:
                    print(f"  latency {client}: failed: {exc}", file=sys.stderr)
                    continue
                rows.append(
                    [
                        LABELS[client],
                        f"{lat['count']:,}",
                        f"{lat['p50']:.2f}",
                        f"{lat['p99']:.2f}",
                        f"{lat['max']:.1f}",
                        "-" if math.isnan(lat["ack_p50"]) else f"{lat['ack_p50']:.2f}",
                        "-" if math.isnan(lat["ack_p99"]) else f"{lat['ack_p99']:.2f}",
                    ]
                )
            print(f"### end-to-end latency at 10,000 records/s, default linger ({n:,} records)\n")
            print(
                _table(
                    [
                        "producer",
                        "received",
                        "p50 ms",
                        "p99 ms",
                        "max ms",
                        "ack p50 ms",
                        "ack p99 ms",
                    ],
                    rows,
                    args.markdown,
                )
            )
            print(flush=True)
    finally:
        if broker is not None:
            broker.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
