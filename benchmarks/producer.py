"""Producer throughput, CPU and memory beside confluent-kafka, aiokafka, kafka-python and Java.

``python -m benchmarks.producer`` (or ``python -m benchmarks producer``) starts a broker (see
``benchmarks/_common.py``: ``--broker tansu`` by default, ``--broker apache`` for Apache Kafka,
or ``$KAFKA_BOOTSTRAP_SERVERS``), then runs each client in a fresh subprocess so its CPU time
and peak RSS are its own, ``--rounds`` times (default 3, interleaved), and prints medians with
the range over rounds:

* 1,000,000 records of 100 bytes, no compression; 100,000 records of 1 KiB with lz4 and with
  zstd; each run to a fresh 4-partition topic;
* kafka_async in four modes: ``enqueue`` (one ``await producer.enqueue(...)`` per record, the
  deliveries awaited at the end: every record's outcome is reported), ``send x1000`` (1,000
  concurrent tasks, each awaiting its acknowledgement: the web-service pattern),
  ``enqueue_many`` (the bulk path: 10,000 records per call) and ``produce`` (one
  ``await producer.produce(...)`` per record, no handle: failures counted per batch and
  raised by the ``flush()`` at the end; the like-for-like peer of confluent-kafka without a
  callback);
* confluent-kafka ``produce()`` in a tight loop, ``poll(0)`` every 10,000 records and
  ``poll(0.01)`` while ``BufferError``, with a per-record ``on_delivery`` callback (every
  outcome reported, like ``enqueue``) and without one;
* aiokafka ``send()`` per record (its futures gathered every 10,000), kafka-python ``send()``;
* on Apache Kafka, the Java client's ``ProducerPerformance`` (kafka-tools) with the same
  record size, acks, idempotence, linger and batch size;
* end-to-end latency (produce call -> receipt by a confluent-kafka consumer in another
  process) at a steady 10,000 records/s with default settings, p50/p99/p99.9/max;
* with ``--memory``: peak RSS of kafka_async ``enqueue`` at 1M and 10M records (bounded by
  ``buffer_memory``, not by the record count).

Every client gets the same settings where it has them: acks=all, idempotence on (aiokafka on
Tansu: off, its InitProducerId fails there), linger 5 ms, batches up to 256 KiB (librdkafka
keeps its 1 MB ``batch.size`` default, larger than ours). The tables print each client's
settings under them.

Options: ``--scale 0.1`` shrinks every record count, ``--clients a,b`` picks clients,
``--scenarios 0,2``, ``--rounds N``, ``--no-latency``, ``--memory``, ``--markdown``.
Figures, not pass/fail: issue 17's targets are judged from these tables (BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import resource
import subprocess
import sys
import time
import uuid
from collections import deque
from collections.abc import Callable
from typing import Any

from benchmarks import _common

CLIENTS = (
    "kafka_async",
    "kafka_async_send",
    "kafka_async_bulk",
    "kafka_async_produce",
    "confluent",
    "confluent_nocb",
    "aiokafka",
    "kafka_python",
    "java",
)
LABELS = {
    "kafka_async": "kafka_async enqueue",
    "kafka_async_send": "kafka_async send x1000",
    "kafka_async_bulk": "kafka_async enqueue_many",
    "kafka_async_produce": "kafka_async produce (no handle)",
    "confluent": "confluent-kafka, on_delivery",
    "confluent_nocb": "confluent-kafka, no callback",
    "aiokafka": "aiokafka send",
    "kafka_python": "kafka-python send",
    "java": "Java ProducerPerformance",
}
SCENARIOS = (
    ("1M x 100 B", 1_000_000, 100, None),
    ("100k x 1 KiB lz4", 100_000, 1024, "lz4"),
    ("100k x 1 KiB zstd", 100_000, 1024, "zstd"),
)
PARTITIONS = 4
LINGER_MS = 5
BATCH_BYTES = 256 * 1024
#: Clients that only exist on some brokers.
APACHE_ONLY = {"java"}


def settings(broker_kind: str) -> dict[str, str]:
    """Each client's settings, as printed under the tables."""
    aio_idem = "on" if broker_kind != "tansu" else "off (InitProducerId fails on Tansu)"
    return {
        "kafka_async": (
            f"acks=all, idempotence on, linger_ms={LINGER_MS}, max_batch_size=256 KiB, "
            "buffer_memory=32 MiB"
        ),
        "confluent": (
            f"acks=all, enable.idempotence=true, linger.ms={LINGER_MS}, batch.size=1 MB "
            "(default), queue.buffering.max.messages=1,000,000; produce() tight loop, "
            "poll(0) every 10,000, poll(0.01) on BufferError, flush() at the end"
        ),
        "aiokafka": (
            f"acks=all, enable_idempotence {aio_idem}, linger_ms={LINGER_MS}, "
            "max_batch_size=256 KiB; await send() per record, futures gathered every 10,000"
        ),
        "kafka_python": f"acks=all, linger_ms={LINGER_MS}, batch_size=256 KiB",
        "java": (
            f"acks=all, enable.idempotence=true, linger.ms={LINGER_MS}, batch.size=262144, "
            "--throughput -1; CPU includes the JVM's start-up and JIT"
        ),
    }


# -- child side: one client, one scenario ------------------------------------------------------


def _payloads(n: int, size: int) -> list[bytes]:
    # Compressible but not trivial (like JSON-ish application data), distinct per record.
    base = (b"benchmark-record-" * (size // 17 + 1))[:size]
    return [i.to_bytes(8, "big") + base[8:] for i in range(min(n, 10_000))]


async def _run_kafka_async(args: argparse.Namespace, mode: str) -> None:
    import anyio

    from kafka_async import Producer
    from kafka_async.errors import ProduceFailedError

    values = _payloads(args.n, args.size)
    nv = len(values)
    extra = json.loads(os.environ.get("KAFKA_ASYNC_BENCH_CONFIG", "{}"))
    async with Producer(
        bootstrap_servers=args.bootstrap,
        compression_type=args.compression,
        acks="all",
        linger_ms=LINGER_MS,
        max_batch_size=BATCH_BYTES,
        **extra,
    ) as producer:
        await producer.send(args.topic, b"warm-up")
        start = time.perf_counter()
        cpu0 = time.process_time()
        failed = 0
        topic = args.topic
        if mode == "enqueue":
            # The loop a user writes: one call per record, and every record's outcome read
            # (what a per-record delivery callback gives), settled ones every 10,000 records
            # (as confluent-kafka's poll(0) below) and the rest after a flush.
            enqueue = producer.enqueue
            pending: deque[Any] = deque()
            for i in range(args.n):
                pending.append(await enqueue(topic, values[i % nv]))
                if i % 10_000 == 0:
                    while pending and pending[0].done():
                        if pending.popleft().exception() is not None:
                            failed += 1
            await producer.flush()
            for d in pending:
                if d.exception() is not None:
                    failed += 1
        elif mode == "produce":
            # No handle per record: failures are counted per batch and raised by flush.
            produce = producer.produce
            for i in range(args.n):
                await produce(topic, values[i % nv])
            try:
                await producer.flush()
            except ProduceFailedError as exc:
                failed = exc.count
        elif mode == "bulk":
            # A pipeline handing over 10,000 records per call.
            bulks = []
            for first in range(0, args.n, 10_000):
                chunk = [values[i % nv] for i in range(first, min(first + 10_000, args.n))]
                bulks.append(await producer.enqueue_many(topic, chunk))
            for bulk in bulks:
                await bulk
        else:
            per_task = args.n // 1000
            send = producer.send

            async def worker(w: int) -> None:
                for i in range(per_task):
                    await send(topic, values[(w * per_task + i) % nv])

            async with anyio.create_task_group() as tg:
                for w in range(1000):
                    tg.start_soon(worker, w)
        _STATE["elapsed"] = time.perf_counter() - start
        _STATE["cpu"] = time.process_time() - cpu0
        _STATE["errors"] = failed


async def _run_aiokafka(args: argparse.Namespace) -> None:
    import asyncio

    from aiokafka import AIOKafkaProducer

    values = _payloads(args.n, args.size)
    nv = len(values)
    producer = AIOKafkaProducer(
        bootstrap_servers=args.bootstrap,
        compression_type=args.compression,
        acks="all",
        enable_idempotence=args.idempotence,
        linger_ms=LINGER_MS,
        max_batch_size=BATCH_BYTES,
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


def _run_confluent(args: argparse.Namespace, callback: bool) -> None:
    import confluent_kafka

    values = _payloads(args.n, args.size)
    nv = len(values)
    producer = confluent_kafka.Producer(
        {
            "bootstrap.servers": args.bootstrap,
            "acks": "all",
            "enable.idempotence": True,
            "linger.ms": LINGER_MS,
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
    poll = producer.poll
    topic = args.topic
    if callback:
        for i in range(args.n):
            while True:
                try:
                    produce(topic, values[i % nv], on_delivery=on_delivery)
                    break
                except BufferError:
                    poll(0.01)
            if i % 10_000 == 0:
                poll(0)
    else:
        for i in range(args.n):
            while True:
                try:
                    produce(topic, values[i % nv])
                    break
                except BufferError:
                    poll(0.01)
            if i % 10_000 == 0:
                poll(0)
    left = producer.flush(300)
    _STATE["elapsed"] = time.perf_counter() - start
    _STATE["cpu"] = time.process_time() - cpu0
    _STATE["errors"] = errors + left


def _run_kafka_python(args: argparse.Namespace) -> None:
    import warnings

    warnings.simplefilter("ignore")
    from kafka import KafkaProducer

    values = _payloads(args.n, args.size)
    nv = len(values)
    producer = KafkaProducer(
        bootstrap_servers=args.bootstrap,
        compression_type=args.compression,
        acks="all",
        linger_ms=LINGER_MS,
        batch_size=BATCH_BYTES,
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


#: ProducerPerformance's summary line: "N records sent, R records/sec (M MB/sec), ...".
_JAVA_SUMMARY = re.compile(r"(\d+) records sent, ([\d.]+) records/sec")


def _run_java(args: argparse.Namespace) -> None:
    """ProducerPerformance in a JVM of its own; this child reports the JVM's CPU and RSS."""
    from kafka_async.testing.apache import ensure_distribution

    dist = ensure_distribution()
    props = [
        f"bootstrap.servers={args.bootstrap}",
        "acks=all",
        "enable.idempotence=true",
        f"linger.ms={LINGER_MS}",
        f"batch.size={BATCH_BYTES}",
        f"compression.type={args.compression or 'none'}",
    ]
    cmd = dist.java_command(
        "org.apache.kafka.tools.ProducerPerformance",
        "--topic",
        args.topic,
        "--num-records",
        str(args.n),
        "--record-size",
        str(args.size),
        "--throughput",
        "-1",
        "--producer-props",
        *props,
        jvm=["-Xmx512m"],
    )
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, check=False)
    wall = time.perf_counter() - start
    found = _JAVA_SUMMARY.findall(proc.stdout)
    if proc.returncode != 0 or not found:
        raise SystemExit(f"ProducerPerformance failed: {proc.stdout[-1000:]}{proc.stderr[-1000:]}")
    sent, rate = int(found[-1][0]), float(found[-1][1])
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    # Its own rate (first send to last ack), so JVM start-up is not in the throughput; the
    # CPU is the whole JVM's (start-up and JIT included): an upper bound.
    _STATE["elapsed"] = sent / rate if rate else wall
    _STATE["cpu"] = usage.ru_utime + usage.ru_stime
    _STATE["rss_kib"] = usage.ru_maxrss
    _STATE["errors"] = args.n - sent


_STATE: dict[str, Any] = {}


def _child(args: argparse.Namespace) -> None:
    client = args.child
    if client in ("kafka_async", "kafka_async_send", "kafka_async_bulk", "kafka_async_produce"):
        import anyio

        mode = {
            "kafka_async": "enqueue",
            "kafka_async_send": "send",
            "kafka_async_produce": "produce",
        }.get(client, "bulk")
        anyio.run(_run_kafka_async, args, mode)
    elif client == "aiokafka":
        import asyncio

        asyncio.run(_run_aiokafka(args))
    elif client in ("confluent", "confluent_nocb"):
        _run_confluent(args, callback=client == "confluent")
    elif client == "kafka_python":
        _run_kafka_python(args)
    elif client == "java":
        _run_java(args)
    else:
        raise SystemExit(f"unknown client {client}")
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(
        json.dumps(
            {
                "elapsed": _STATE["elapsed"],
                "cpu": _STATE["cpu"],
                "rss_kib": _STATE.get("rss_kib", usage.ru_maxrss),
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
        "p90": _percentile(lat, 0.9),
        "p99": _percentile(lat, 0.99),
        "p99.9": _percentile(lat, 0.999),
        "max": max(lat) if lat else float("nan"),
        "ack_p50": _percentile(ack, 0.5),
        "ack_p99": _percentile(ack, 0.99),
    }


# -- parent side -------------------------------------------------------------------------------


def _run_child(
    client: str,
    bootstrap: str,
    topic: str,
    n: int,
    size: int,
    compression: str | None,
    idempotence: bool,
) -> dict[str, Any]:
    cmd = _common.python_child(
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
    )
    if compression:
        cmd += ["--compression", compression]
    if idempotence:
        cmd.append("--idempotence")
    return _common.run_json_child(cmd, timeout=1800)


def _throughput(
    args: argparse.Namespace, broker: _common.Broker, clients: list[str], make_topic: Any
) -> None:
    if args.scenarios == "all":
        scenarios = list(SCENARIOS)
    elif args.scenarios == "none":
        scenarios = []
    else:
        scenarios = [SCENARIOS[int(i)] for i in args.scenarios.split(",")]
    for title, count, size, compression in scenarios:
        n = max(1000, int(count * args.scale))
        runs: dict[str, list[dict[str, Any]]] = {c: [] for c in clients}
        loads = []
        for _ in range(args.rounds):
            loads.append(_common.load_average())
            for client in clients:
                try:
                    runs[client].append(
                        _run_child(
                            client,
                            broker.bootstrap,
                            make_topic(),
                            n,
                            size,
                            compression,
                            broker.kind != "tansu",
                        )
                    )
                except Exception as exc:  # one failing peer must not hide the others
                    print(f"  {LABELS[client]}: failed: {exc}", file=sys.stderr)
        rates = {c: [n / r["elapsed"] for r in rs] for c, rs in runs.items() if rs}
        cpus = {c: [r["cpu"] / n * 1e6 for r in rs] for c, rs in runs.items() if rs}
        ours = rates.get("kafka_async")
        rows = []
        for client in rates:
            r = rates[client]
            rss = _common.median([x["rss_kib"] / 1024 for x in runs[client]])
            errors = sum(x["errors"] for x in runs[client])
            rows.append(
                [
                    LABELS[client],
                    _common.spread(r),
                    f"{_common.median(r) * size / 1e6:,.1f}",
                    _common.spread(cpus[client], "{:.2f}"),
                    f"{rss:,.0f}",
                    "-"
                    if ours is None or client == "kafka_async"
                    else f"{_common.median(ours) / _common.median(r):.2f}x",
                    str(errors),
                ]
            )
        print(
            f"### {title} ({n:,} records, {PARTITIONS} partitions, {len(loads)} rounds, "
            f"load average {'/'.join(loads)}; {broker.description})\n"
        )
        print(
            _common.table(
                [
                    "client",
                    "records/s median (range)",
                    "MB/s",
                    "CPU us/record median (range)",
                    "peak RSS MiB",
                    "enqueue / client (records/s)",
                    "failed",
                ],
                rows,
                args.markdown,
            )
        )
        print(flush=True)
        if count == SCENARIOS[0][1] and size == SCENARIOS[0][2]:
            _print_targets(rates, cpus)
    _print_settings(broker.kind, clients)


def _print_targets(rates: dict[str, list[float]], cpus: dict[str, list[float]]) -> None:
    """Issue 17's producer targets: the ratio of the medians, and its range over rounds
    (round i of one client against round i of the other: rounds are interleaved)."""

    def ratios(a: str, b: str, figure: dict[str, list[float]]) -> tuple[float, list[float]]:
        return (
            _common.median(figure[a]) / _common.median(figure[b]),
            [x / y for x, y in zip(figure[a], figure[b], strict=False)],
        )

    lines = []
    checks = (
        ("kafka_async", "confluent", ">= 1.0x confluent-kafka (on_delivery), records/s", 1.0),
        ("kafka_async", "aiokafka", ">= 5x aiokafka send, records/s", 5.0),
        ("kafka_async_bulk", "confluent", "vs confluent-kafka (on_delivery), records/s", 1.0),
    )
    for a, b, what, goal in checks:
        if a in rates and b in rates:
            med, per = ratios(a, b, rates)
            lines.append(
                f"- enqueue{'' if a == 'kafka_async' else '_many'} {what}: {med:.2f}x "
                f"(rounds {min(per):.2f}-{max(per):.2f}x) "
                f"{'met' if med >= goal else 'NOT met'}"
            )
    if "kafka_async" in cpus and "confluent" in cpus:
        ours, theirs = _common.median(cpus["kafka_async"]), _common.median(cpus["confluent"])
        lines.append(
            f"- enqueue CPU per record <= confluent-kafka (on_delivery): {ours:.2f} vs "
            f"{theirs:.2f} us {'met' if ours <= theirs else 'NOT met'}"
        )
    if "kafka_async_send" in cpus:
        cpu = cpus["kafka_async_send"]
        lines.append(
            f"- send x1000 <= 3 CPU-us per record: {_common.median(cpu):.2f} us "
            f"(rounds {min(cpu):.2f}-{max(cpu):.2f}) "
            f"{'met' if _common.median(cpu) <= 3.0 else 'NOT met'}"
        )
    if "kafka_async_produce" in rates and "confluent_nocb" in rates:
        med, per = ratios("kafka_async_produce", "confluent_nocb", rates)
        lines.append(
            f"- (stretch) produce (no handle) >= 1.0x confluent-kafka without callback, "
            f"records/s: {med:.2f}x (rounds {min(per):.2f}-{max(per):.2f}x) "
            f"{'met' if med >= 1.0 else 'NOT met'}"
        )
    if "kafka_async_produce" in cpus and "confluent_nocb" in cpus:
        ours = _common.median(cpus["kafka_async_produce"])
        theirs = _common.median(cpus["confluent_nocb"])
        lines.append(
            f"- (stretch) produce CPU per record vs confluent-kafka without callback: "
            f"{ours:.2f} vs {theirs:.2f} us"
        )
    if lines:
        print("Targets (issue 17):")
        print("\n".join(lines))
        print(flush=True)


def _print_settings(broker_kind: str, clients: list[str]) -> None:
    conf = settings(broker_kind)
    print("Settings:")
    for client in ("kafka_async", "confluent", "aiokafka", "kafka_python", "java"):
        if any(c.startswith(client) for c in clients):
            print(f"- {client}: {conf[client]}")
    print(flush=True)


def _latency(args: argparse.Namespace, broker: _common.Broker, make_topic: Any) -> None:
    n = max(2000, int(50_000 * args.scale))
    rows = []
    for client in ("kafka_async", "confluent"):
        for _ in range(args.latency_rounds):
            try:
                lat = measure_latency(broker.bootstrap, client, n, make_topic)
            except Exception as exc:
                print(f"  latency {client}: failed: {exc}", file=sys.stderr)
                continue
            rows.append(
                [
                    LABELS[client].split(",")[0]
                    if client == "confluent"
                    else "kafka_async enqueue",
                    _common.load_average(),
                    f"{lat['count']:,}",
                    *(f"{lat[k]:.2f}" for k in ("p50", "p90", "p99", "p99.9")),
                    f"{lat['max']:.1f}",
                    "-" if math.isnan(lat["ack_p50"]) else f"{lat['ack_p50']:.2f}",
                    "-" if math.isnan(lat["ack_p99"]) else f"{lat['ack_p99']:.2f}",
                ]
            )
    print(
        f"### end-to-end latency at 10,000 records/s, default settings ({n:,} records; "
        f"{broker.description})\n"
    )
    print(
        _common.table(
            [
                "producer",
                "load",
                "received",
                "p50 ms",
                "p90 ms",
                "p99 ms",
                "p99.9 ms",
                "max ms",
                "ack p50 ms",
                "ack p99 ms",
            ],
            rows,
            args.markdown,
        )
    )
    print(
        "\nDefault settings: kafka_async acks=all, idempotence on, linger_ms=5; confluent-kafka "
        "acks=all, enable.idempotence=true, linger.ms=5 (its default). Receive time is read by "
        "a confluent-kafka consumer in another process (fetch.wait.max.ms=5).\n",
        flush=True,
    )


def _memory(args: argparse.Namespace, broker: _common.Broker, make_topic: Any) -> None:
    """Peak RSS of kafka_async enqueue at 1M and 10M records: bounded by buffer_memory."""
    rows = []
    for n in (1_000_000, 10_000_000):
        n = max(1000, int(n * args.scale))
        try:
            r = _run_child("kafka_async", broker.bootstrap, make_topic(), n, 100, None, False)
        except Exception as exc:
            print(f"  memory {n:,}: failed: {exc}", file=sys.stderr)
            continue
        rows.append(
            [
                f"{n:,}",
                f"{n / r['elapsed']:,.0f}",
                f"{r['cpu'] / n * 1e6:.2f}",
                f"{r['rss_kib'] / 1024:,.0f}",
                str(r["errors"]),
            ]
        )
    print("### memory: kafka_async enqueue, 100 B records, buffer_memory=32 MiB\n")
    print(
        _common.table(
            ["records", "records/s", "CPU us/record", "peak RSS MiB", "failed"],
            rows,
            args.markdown,
        )
    )
    print(flush=True)


def main(argv: list[str] | None = None) -> None:
    """Run the producer benchmark and print its tables (``argv`` as on the command line)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.producer")
    parser.add_argument("--scale", type=float, default=float(os.environ.get("BENCH_SCALE", "1")))
    parser.add_argument("--clients", default=",".join(CLIENTS))
    parser.add_argument("--rounds", type=int, default=int(os.environ.get("BENCH_ROUNDS", "3")))
    parser.add_argument("--latency-rounds", type=int, default=1)
    parser.add_argument("--no-latency", action="store_true")
    parser.add_argument("--memory", action="store_true", help="also peak RSS at 1M and 10M")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--broker", choices=_common.BROKERS, default=None)
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
    parser.add_argument("--idempotence", action="store_true")
    args = parser.parse_args(argv if argv is not None else [])
    if args.child:
        _child(args)
        return
    if args.latency_child:
        _latency_child(args)
        return

    from kafka_async.testing.topics import create_topic

    with _common.broker(args.broker) as broker:
        clients = [c for c in args.clients.split(",") if c]
        for c in clients:
            if c not in CLIENTS:
                raise SystemExit(f"unknown client {c!r}; choose from {', '.join(CLIENTS)}")
        if broker.kind != "apache":
            clients = [c for c in clients if c not in APACHE_ONLY]

        def make_topic() -> str:
            name = f"bench-{uuid.uuid4().hex[:8]}"
            create_topic(broker.bootstrap, name, PARTITIONS)
            return name

        _throughput(args, broker, clients, make_topic)
        if args.memory:
            _memory(args, broker, make_topic)
        if not args.no_latency:
            _latency(args, broker, make_topic)


if __name__ == "__main__":
    main(sys.argv[1:])
