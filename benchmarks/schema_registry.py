"""Avro through a schema registry: kafka_async's serializers beside confluent-kafka's.

Three measurements, each the median of ``--rounds`` rounds (clients interleaved per round),
with a registry on loopback (tests/harness/schema_registry.py, Confluent's REST API) and the
suite's broker:

* serialize: one Avro record into Confluent's wire format (``AvroSerializer.serialize(obj,
  ctx)`` against confluent-kafka's ``AvroSerializer(obj, ctx)``), ns per record, no broker;
* serialize + produce: N records through the serializer and the producer, flushed
  (kafka_async's ``Producer(value_serializer=...)`` with ``enqueue``; confluent-kafka's
  ``Producer.produce(value=serializer(obj, ctx))``), records/s;
* consume + deserialize: the same N records read back and decoded (kafka_async's ``Consumer``
  with ``value_deserializer=AvroDeserializer``; confluent-kafka's ``Consumer.consume`` and
  ``AvroDeserializer``), records/s.

Both clients run in this one process, one after the other: the figures are throughput on
the same machine at the same time, as ratios, not absolute claims. Producer settings, the
same for both: acks=all, idempotence on, linger 5 ms, one partition; confluent-kafka's loop
is ``produce`` + ``poll(0)`` per record (``poll`` again on BufferError), its consumer
``consume(10000, 0.5)`` in assign mode.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import time
import uuid
from typing import Any

import anyio

from benchmarks import _common

SCHEMA = {
    "type": "record",
    "name": "Trade",
    "namespace": "bench",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "symbol", "type": "string"},
        {"name": "price", "type": "double"},
        {"name": "qty", "type": "int"},
        {"name": "side", "type": {"type": "enum", "name": "Side", "symbols": ["BUY", "SELL"]}},
        {"name": "note", "type": ["null", "string"], "default": None},
    ],
}


def _records(n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": i,
            "symbol": f"SYM{i % 50}",
            "price": 100.0 + (i % 1000) / 100,
            "qty": i % 500,
            "side": "BUY" if i % 2 else "SELL",
            "note": None if i % 3 else "n",
        }
        for i in range(n)
    ]


def _best_ns(fn: Any, values: list[dict[str, Any]], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter_ns()
        for v in values:
            fn(v)
        best = min(best, (time.perf_counter_ns() - start) / len(values))
    return best


async def _ours_produce(bootstrap: str, topic: str, ser: Any, values: list[Any]) -> float:
    from kafka_async import Producer

    async with Producer(
        bootstrap_servers=bootstrap,
        value_serializer=ser,
        linger_ms=5,
        acks="all",
        enable_idempotence=True,
    ) as p:
        start = time.perf_counter()
        for v in values:
            await p.enqueue(topic, v, partition=0)
        await p.flush()
        return len(values) / (time.perf_counter() - start)


async def _ours_consume(bootstrap: str, topic: str, deser: Any, n: int) -> float:
    from kafka_async import Consumer
    from kafka_async.structs import TopicPartition

    consumer: Any = Consumer(
        bootstrap_servers=bootstrap, auto_offset_reset="earliest", value_deserializer=deser
    )
    async with consumer:
        consumer.assign([TopicPartition(topic, 0)])
        got = 0
        start = time.perf_counter()
        with anyio.fail_after(120):
            while got < n:
                batch = await consumer.getmany(timeout_ms=500, max_records=10_000)
                got += sum(len(recs) for recs in batch.values())
        return n / (time.perf_counter() - start)


def _confluent_produce(bootstrap: str, topic: str, ser: Any, ctx: Any, values: list[Any]) -> float:
    import confluent_kafka

    p = confluent_kafka.Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 5,
            "acks": "all",
            "enable.idempotence": True,
        }
    )
    start = time.perf_counter()
    for v in values:
        while True:
            try:
                p.produce(topic, value=ser(v, ctx), partition=0)
                break
            except BufferError:
                p.poll(0.01)
        p.poll(0)
    assert p.flush(60) == 0
    return len(values) / (time.perf_counter() - start)


def _confluent_consume(bootstrap: str, topic: str, deser: Any, ctx: Any, n: int) -> float:
    import confluent_kafka

    c = confluent_kafka.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"bench-{uuid.uuid4().hex[:6]}",
            "enable.auto.commit": False,
        }
    )
    try:
        c.assign([confluent_kafka.TopicPartition(topic, 0, 0)])
        got = 0
        start = time.perf_counter()
        deadline = time.monotonic() + 120
        while got < n and time.monotonic() < deadline:
            for msg in c.consume(10_000, 0.5):
                if msg.error() is None:
                    deser(msg.value(), ctx)
                    got += 1
        return n / (time.perf_counter() - start)
    finally:
        c.close()


def run(n: int, rounds: int) -> dict[str, list[float]]:
    """Every measurement's per-round figures."""
    from confluent_kafka.schema_registry import SchemaRegistryClient as ConfluentClient
    from confluent_kafka.schema_registry.avro import AvroDeserializer as CAvroDeserializer
    from confluent_kafka.schema_registry.avro import AvroSerializer as CAvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    from kafka_async.schema_registry import SchemaRegistryClient
    from kafka_async.schema_registry.avro import AvroDeserializer, AvroSerializer
    from kafka_async.serialization import MessageField as OurField
    from kafka_async.serialization import SerializationContext as OurContext
    from kafka_async.testing.topics import create_topic
    from tests.harness.schema_registry import RegistryServer

    values = _records(n)
    out: dict[str, list[float]] = {
        k: []
        for k in (
            "ser_ours",
            "ser_confluent",
            "produce_ours",
            "produce_confluent",
            "consume_ours",
            "consume_confluent",
        )
    }
    with _common.broker() as b, RegistryServer() as registry:
        peer = ConfluentClient({"url": registry.url})

        async def session() -> None:
            async with SchemaRegistryClient(registry.url) as sr:
                for _ in range(rounds):
                    ours_topic = f"bench-sr-{uuid.uuid4().hex[:8]}"
                    conf_topic = f"bench-sr-{uuid.uuid4().hex[:8]}"
                    create_topic(b.bootstrap, ours_topic, 1)
                    create_topic(b.bootstrap, conf_topic, 1)
                    # One serializer for every topic (it takes each record's from its context).
                    ser = AvroSerializer(sr, json.dumps(SCHEMA))
                    await ser.prepare(ours_topic)
                    octx = OurContext(ours_topic, OurField.VALUE, [])
                    ctx = SerializationContext(conf_topic, MessageField.VALUE)
                    cser = CAvroSerializer(peer, json.dumps(SCHEMA))
                    cser(values[0], ctx)  # registers: outside the timing, as prepare()
                    sample = values[: min(n, 20_000)]
                    out["ser_ours"].append(
                        _best_ns(functools.partial(ser.serialize, ctx=octx), sample, 3)
                    )
                    out["ser_confluent"].append(
                        _best_ns(functools.partial(cser, ctx=ctx), sample, 3)
                    )
                    out["produce_ours"].append(
                        await _ours_produce(b.bootstrap, ours_topic, ser, values)
                    )
                    out["produce_confluent"].append(
                        _confluent_produce(b.bootstrap, conf_topic, cser, ctx, values)
                    )
                    out["consume_ours"].append(
                        await _ours_consume(b.bootstrap, ours_topic, AvroDeserializer(sr), n)
                    )
                    out["consume_confluent"].append(
                        _confluent_consume(b.bootstrap, conf_topic, CAvroDeserializer(peer), ctx, n)
                    )

        anyio.run(session)
    return out


def main(argv: list[str] | None = None) -> None:
    """Run the suite and print its table (``argv`` as on the command line)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.schema_registry")
    parser.add_argument("--scale", type=float, default=float(os.environ.get("BENCH_SCALE", "1")))
    parser.add_argument("--rounds", type=int, default=int(os.environ.get("BENCH_ROUNDS", "3")))
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv if argv is not None else [])
    n = max(1000, int(100_000 * args.scale))
    r = run(n, args.rounds)
    med = {k: _common.median(v) for k, v in r.items()}
    rows = [
        [
            "serialize (ns/record, lower is better)",
            _common.spread(r["ser_ours"]),
            _common.spread(r["ser_confluent"]),
            f"{med['ser_confluent'] / med['ser_ours']:.2f}x",
        ],
        [
            f"serialize + produce {n:,} (records/s)",
            _common.spread(r["produce_ours"]),
            _common.spread(r["produce_confluent"]),
            f"{med['produce_ours'] / med['produce_confluent']:.2f}x",
        ],
        [
            f"consume + deserialize {n:,} (records/s)",
            _common.spread(r["consume_ours"]),
            _common.spread(r["consume_confluent"]),
            f"{med['consume_ours'] / med['consume_confluent']:.2f}x",
        ],
    ]
    print(
        _common.table(
            ["Avro via the registry", "kafka_async", "confluent-kafka", "kafka_async speed-up"],
            rows,
            args.markdown,
        )
    )


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
