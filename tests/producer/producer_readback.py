"""Reading produced records back with peer clients (confluent-kafka, aiokafka), and
waiting for a condition with a deadline.

Imported by the producer tests as ``producer_readback`` (pytest puts this directory on
``sys.path``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import anyio
import pytest


async def wait_until(condition: Callable[[], bool], timeout: float = 30.0) -> None:  # noqa: ASYNC109
    """Poll ``condition`` until it holds; ``TimeoutError`` after ``timeout`` seconds.

    For state a test cannot await directly (statistics counters): a fixed sleep would be
    too short on a loaded machine and needlessly long on an idle one.
    """
    with anyio.fail_after(timeout):
        while True:
            if condition():
                return
            await anyio.sleep(0.02)


def consume_confluent(
    bootstrap: str,
    topic: str,
    partitions: int,
    expected: int,
    *,
    isolation: str = "read_uncommitted",
    timeout: float = 60.0,
) -> list[Any]:
    """Read ``expected`` records from every partition with confluent-kafka (assign mode)."""
    confluent_kafka = pytest.importorskip("confluent_kafka")
    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"readback-{topic}",
            "enable.auto.commit": False,
            "isolation.level": isolation,
            "enable.partition.eof": False,
        }
    )
    try:
        consumer.assign(
            [
                confluent_kafka.TopicPartition(topic, p, confluent_kafka.OFFSET_BEGINNING)
                for p in range(partitions)
            ]
        )
        out: list[Any] = []
        deadline = time.monotonic() + timeout
        while len(out) < expected and time.monotonic() < deadline:
            for msg in consumer.consume(10_000, 0.5):
                assert msg.error() is None, msg.error()
                out.append(msg)
        # Anything beyond what we expect would be a duplicate: give it a moment to show.
        out.extend(m for m in consumer.consume(10_000, 0.5) if m.error() is None)
        return out
    finally:
        consumer.close()


async def consume_aiokafka(bootstrap: str, topic: str, partitions: int, expected: int) -> list[Any]:
    aiokafka = pytest.importorskip("aiokafka")
    consumer = aiokafka.AIOKafkaConsumer(
        bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset="earliest"
    )
    await consumer.start()
    try:
        tps = [aiokafka.TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        out: list[Any] = []
        with anyio.fail_after(60):
            while len(out) < expected:
                batches = await consumer.getmany(timeout_ms=500)
                for records in batches.values():
                    out.extend(records)
        return out
    finally:
        await consumer.stop()
