"""An aiokafka-style program on kafka_async's drop-in (``kafka_async.aiokafka``) beside the
same program on real aiokafka, in one run.

``python -m benchmarks.aiokafka_compat`` starts a broker (see ``benchmarks/_common.py``:
``--broker tansu`` by default, ``--broker apache`` for Apache Kafka, or
``$KAFKA_BOOTSTRAP_SERVERS``), then runs each implementation in a fresh subprocess (its CPU
time is its own), ``--rounds`` times interleaved, and prints medians with the range:

* produce: ``fut = await producer.send(topic, value)`` per record (100-byte values, no key),
  the futures gathered every 10,000 records, then ``flush()``; the code is the same text for
  both, only the module differs;
* consume: ``AIOKafkaConsumer`` with ``assign`` of the topic's 4 partitions from the earliest
  offset, ``getmany(timeout_ms=1000)`` until every record is read.

Both get aiokafka's default settings (acks=1, no idempotence, linger_ms=0, 16 KiB batches)
except ``linger_ms`` and ``max_batch_size`` given by ``--linger-ms``/``--batch-size`` (the
same for both). Options: ``--records N`` (default 200,000), ``--rounds N`` (default 3).
Figures, not pass/fail.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import resource
import sys
import time
import uuid
from typing import Any

from benchmarks import _common

IMPLS = {"aiokafka": "aiokafka", "kafka_async.aiokafka": "kafka_async.aiokafka"}


async def _child(module: str, bootstrap: str, records: int, linger: int, batch: int) -> None:
    mod = importlib.import_module(module)
    from kafka_async import AdminClient, NewTopic

    topic = f"bench-compat-{uuid.uuid4().hex[:8]}"
    async with AdminClient(bootstrap) as admin:
        await admin.create_topics([NewTopic(topic, 4, 1)], raise_on_error=True)
    value = b"x" * 100
    cpu0 = time.process_time()
    t0 = time.perf_counter()
    async with mod.AIOKafkaProducer(
        bootstrap_servers=bootstrap, linger_ms=linger, max_batch_size=batch
    ) as producer:
        await producer.partitions_for(topic)
        t0 = time.perf_counter()
        cpu0 = time.process_time()
        pending: list[Any] = []
        for _ in range(records):
            pending.append(await producer.send(topic, value))
            if len(pending) >= 10_000:
                await asyncio.gather(*pending)
                pending.clear()
        await asyncio.gather(*pending)
        await producer.flush()
        produce_s = time.perf_counter() - t0
        produce_cpu = time.process_time() - cpu0
    consumer = mod.AIOKafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest")
    consumer.assign([mod.TopicPartition(topic, p) for p in range(4)])
    await consumer.start()
    try:
        t0 = time.perf_counter()
        cpu0 = time.process_time()
        got = 0
        deadline = time.monotonic() + 300
        while got < records and time.monotonic() < deadline:
            batches = await consumer.getmany(timeout_ms=1000)
            got += sum(len(recs) for recs in batches.values())
        consume_s = time.perf_counter() - t0
        consume_cpu = time.process_time() - cpu0
    finally:
        await consumer.stop()
    if got != records:
        raise SystemExit(f"read {got} of {records} records")
    print(
        json.dumps(
            {
                "produce_rps": records / produce_s,
                "produce_cpu_us": produce_cpu / records * 1e6,
                "consume_rps": records / consume_s,
                "consume_cpu_us": consume_cpu / records * 1e6,
                "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            }
        )
    )


def main(argv: list[str] | None = None) -> None:
    """Run both implementations ``--rounds`` times and print the table (``argv`` as on the
    command line; none when ``python -m benchmarks`` calls it)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.aiokafka_compat")
    parser.add_argument("--broker", choices=_common.BROKERS)
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=int(os.environ.get("BENCH_ROUNDS", "3")))
    parser.add_argument("--linger-ms", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=16384)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--child", nargs=2, metavar=("MODULE", "BOOTSTRAP"))
    args = parser.parse_args([] if argv is None else argv)
    if args.child:
        module, bootstrap = args.child
        asyncio.run(_child(module, bootstrap, args.records, args.linger_ms, args.batch_size))
        return
    results: dict[str, list[dict[str, float]]] = {name: [] for name in IMPLS}
    with _common.broker(args.broker) as broker:
        for _ in range(args.rounds):
            for name, module in IMPLS.items():
                cmd = _common.python_child(
                    "benchmarks.aiokafka_compat",
                    "--child",
                    module,
                    broker.bootstrap,
                    "--records",
                    str(args.records),
                    "--linger-ms",
                    str(args.linger_ms),
                    "--batch-size",
                    str(args.batch_size),
                )
                results[name].append(_common.run_json_child(cmd))
    rows = []
    for name, runs in results.items():
        rows.append(
            [
                name,
                _common.spread([r["produce_rps"] for r in runs]),
                _common.spread([r["produce_cpu_us"] for r in runs], "{:.1f}"),
                _common.spread([r["consume_rps"] for r in runs]),
                _common.spread([r["consume_cpu_us"] for r in runs], "{:.1f}"),
                _common.spread([r["rss_mib"] for r in runs], "{:.0f}"),
            ]
        )
    print(
        _common.table(
            [
                "module",
                "send() records/s",
                "CPU µs/record",
                "getmany records/s",
                "CPU µs/record",
                "peak RSS MiB",
            ],
            rows,
            args.markdown,
        )
    )
    print(
        f"\n{args.records:,} records of 100 bytes, 4 partitions, {args.rounds} round(s); "
        f"linger_ms={args.linger_ms}, max_batch_size={args.batch_size}, other settings "
        f"aiokafka's defaults (acks=1, no idempotence); broker: {broker.description}; "
        f"load average {_common.load_average()}"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
