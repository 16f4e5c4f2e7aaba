"""Rebalance pauses of the two group protocols on the same churn.

The churn (``tests.harness.churn``): three members read a 6-partition topic, a fourth
joins at a quarter of the records, one leaves at half. A *pause* is a stretch during which
at least one partition had no owner (as the members' rebalance listeners report it), from
the moment the group first owned every partition until the last record was read; the
partition-seconds column weighs each pause by how many partitions it stopped. Compared:
the classic protocol with the eager range assignor and with cooperative-sticky (KIP-429),
and the consumer protocol (KIP-848) with the broker's uniform assignor; every setup gets the
same heartbeat interval (500 ms) and session timeout (6 s).

Needs Apache Kafka 4.x: ``KAFKA_BOOTSTRAP_SERVERS``, else a single node started from the
cached distribution (``kafka_async.testing.apache``), whatever ``BENCH_BROKER`` says.
"""

from __future__ import annotations

import argparse
import statistics
import uuid
from typing import Any

import anyio

from benchmarks._common import broker

PARTITIONS = 6
RECORDS = 20_000
SETUPS: dict[str, dict[str, Any]] = {
    "classic, range (eager)": {
        "group_protocol": "classic",
        "partition_assignment_strategy": "range",
        "session_timeout_ms": 6000,
        "heartbeat_interval_ms": 500,
    },
    "classic, cooperative-sticky": {
        "group_protocol": "classic",
        "partition_assignment_strategy": "cooperative-sticky",
        "session_timeout_ms": 6000,
        "heartbeat_interval_ms": 500,
    },
    "consumer (KIP-848), uniform": {
        "group_protocol": "consumer",
        "group_remote_assignor": "uniform",
    },
}


async def _group_config(bootstrap: str, group: str) -> None:
    from kafka_async.admin import AdminClient, ConfigResource

    async with AdminClient(bootstrap_servers=bootstrap) as admin:
        await admin.incremental_alter_configs(
            {
                ConfigResource.group(group): {
                    "consumer.heartbeat.interval.ms": "500",
                    "consumer.session.timeout.ms": "6000",
                }
            },
            raise_on_error=True,
        )


async def _one(bootstrap: str, settings: dict[str, Any], n: int) -> dict[str, Any]:
    from kafka_async.testing.topics import create_topic
    from tests.harness.churn import run_churn

    topic = f"bench-churn-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, PARTITIONS)
    _produce(bootstrap, topic, n)
    group = f"bench-churn-{topic}"
    if settings["group_protocol"] == "consumer":
        await _group_config(bootstrap, group)
    result = await run_churn(bootstrap, topic, PARTITIONS, n, group_id=group, **settings)
    if result.missing or result.duplicates or result.ownership.violations:
        raise RuntimeError(
            f"churn incorrect: {result.missing} missing, {len(result.duplicates)} duplicates, "
            f"{result.ownership.violations[:3]}"
        )
    return {
        "pauses": result.pauses,
        "unowned": result.unowned_partition_seconds,
        "seconds": result.seconds,
    }


def _produce(bootstrap: str, topic: str, n: int) -> None:
    """``n`` small records round robin over the partitions (librdkafka: fast, independent)."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "enable.idempotence": False})
    for i in range(n):
        p.produce(topic, key=str(i).encode(), value=b"churn", partition=i % PARTITIONS)
        if i % 5_000 == 0:
            p.poll(0)
    if p.flush(120):
        raise RuntimeError("churn records not delivered")


def main(argv: list[str] | None = None) -> None:
    """Run the churn ``--runs`` times per setup and print the pauses."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--n", type=int, default=RECORDS)
    args = parser.parse_args([] if argv is None else argv)
    # The consumer protocol needs Apache Kafka 4.x whatever $BENCH_BROKER says.
    with broker("apache") as b:
        bootstrap = b.bootstrap
        rows = []
        for name, settings in SETUPS.items():
            runs = [anyio.run(_one, bootstrap, settings, args.n) for _ in range(args.runs)]
            totals = [sum(r["pauses"]) * 1000 for r in runs]
            longest = [max(r["pauses"], default=0.0) * 1000 for r in runs]
            counts = [len(r["pauses"]) for r in runs]
            rows.append(
                [
                    name,
                    f"{statistics.median(totals):.0f} ({min(totals):.0f}-{max(totals):.0f})",
                    f"{statistics.median(longest):.0f}",
                    f"{statistics.median(counts):.0f}",
                    f"{statistics.median(r['unowned'] for r in runs):.2f}",
                    f"{statistics.median(r['seconds'] for r in runs):.1f}",
                ]
            )
        headers = [
            "protocol / assignor",
            "paused ms, median (range)",
            "longest pause ms",
            "pauses",
            "unowned partition-s",
            "churn s",
        ]
        widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
        fmt = "  ".join(f"{{:<{w}}}" for w in widths)
        print(
            f"{args.runs} runs each, {args.n:,} records, {PARTITIONS} partitions; {b.description}\n"
        )
        print("\n".join([fmt.format(*headers), *(fmt.format(*r) for r in rows)]))


if __name__ == "__main__":
    main(__import__("sys").argv[1:])
