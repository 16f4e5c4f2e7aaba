"""Fixtures of the Spark data source tests: one local SparkSession for the whole run.

Starting the JVM costs about 15 s, so the session is shared (``local[2]``, two shuffle
partitions, no UI). Executors are Python workers started by Spark: ``PYSPARK_PYTHON`` points
them at this interpreter, which has kafka_async installed.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from kafka_async.testing.plugin import importorskip_or_fail, skip_or_fail


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    importorskip_or_fail("pyspark")
    importorskip_or_fail("pyarrow")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        skip_or_fail("Spark needs a Java runtime (java on PATH or JAVA_HOME)")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    from kafka_async.spark import register

    session = (
        SparkSession.builder.master("local[2]")
        .appName("kafka_async-spark-tests")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.streaming.stopTimeout", "30s")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    yield session
    session.stop()


Record = tuple[int, bytes | None, bytes | None, list[tuple[str, bytes]], int]


def produce(bootstrap: str, topic: str, records: Sequence[Record]) -> None:
    """Write (partition, key, value, headers, timestamp_ms) records with confluent-kafka.

    A peer client, so the source is tested on data our own producer did not write.
    """
    from confluent_kafka import Producer as CKProducer

    # Kafka's time-based retention (7 days by default, checked every 5 minutes) deletes
    # records by their timestamps: older ones would vanish while the test runs.
    too_old = [ts for *_rest, ts in records if ts < (time.time() - 86_400) * 1000]
    if too_old:
        raise ValueError(
            f"record timestamps must be recent (within a day), got {min(too_old)}: the "
            "broker's retention would delete them under the test"
        )
    producer = CKProducer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    errors: list[str] = []

    def on_delivery(err: Any, _msg: Any) -> None:
        if err is not None:
            errors.append(str(err))

    for partition, key, value, headers, ts in records:
        # confluent-kafka's annotation wants a list of (str, str | bytes | None); lists are
        # invariant, so the pairs are copied into one of that type.
        ck_headers: list[tuple[str, str | bytes | None]] = list(headers)
        producer.produce(
            topic,
            value=value,
            key=key,
            partition=partition,
            headers=ck_headers or None,
            timestamp=ts,
            on_delivery=on_delivery,
        )
        producer.poll(0)
    left = producer.flush(30)
    assert left == 0, f"{left} records not delivered"
    assert not errors, errors


def consume_all(
    bootstrap: str, topic: str, partitions: int, expected: int, timeout: float = 30.0
) -> list[Any]:
    """Every record of ``topic`` read with confluent-kafka (assign mode), as message objects."""
    from confluent_kafka import OFFSET_BEGINNING, TopicPartition
    from confluent_kafka import Consumer as CKConsumer

    consumer = CKConsumer(
        {"bootstrap.servers": bootstrap, "group.id": f"check-{topic}", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    out: list[Any] = []
    deadline = time.monotonic() + timeout
    try:
        while len(out) < expected and time.monotonic() < deadline:
            for msg in consumer.consume(num_messages=1000, timeout=0.5):
                if msg.error() is None:
                    out.append(msg)
        # Give extra records, which the test must see as a failure, a moment to show up.
        out.extend(m for m in consumer.consume(num_messages=1000, timeout=0.5) if m.error() is None)
    finally:
        consumer.close()
    return out


@pytest.fixture
def ck_produce() -> Any:
    """:func:`produce` as a fixture (helpers in conftest are not importable by name)."""
    return produce


@pytest.fixture
def ck_consume_all() -> Any:
    """:func:`consume_all` as a fixture."""
    return consume_all


def delete_topic_for_recreation(bootstrap: str, topic: str, timeout: float = 60.0) -> None:
    """Delete ``topic`` and return once the broker would create it again.

    Kafka deletes a topic asynchronously: first it leaves the metadata, and on a
    ZooKeeper-mode broker it is deleted only once every replica dropped its log (until then
    CreateTopics answers TOPIC_ALREADY_EXISTS: "already exists" on 2.8.2, "marked for
    deletion" on 3.x, though Metadata no longer lists it). So wait, as a user would, until a
    validate-only CreateTopics succeeds (``timeout`` seconds at most).
    """
    import anyio

    from kafka_async import AdminClient, NewTopic
    from kafka_async.errors import TopicAlreadyExistsError

    async def delete() -> None:
        async with AdminClient(bootstrap_servers=bootstrap) as admin:
            await admin.delete_topics([topic], raise_on_error=True)
            with anyio.fail_after(timeout):
                while topic in await admin.list_topics():  # noqa: ASYNC110 - polling metadata
                    await anyio.sleep(0.1)
                while True:
                    probe = await admin.create_topics([NewTopic(topic, 1)], validate_only=True)
                    refused = probe[topic].error
                    if refused is None:
                        return
                    if not isinstance(refused, TopicAlreadyExistsError):
                        raise refused
                    await anyio.sleep(0.2)

    anyio.run(delete)


@pytest.fixture
def delete_for_recreation() -> Any:
    """:func:`delete_topic_for_recreation` as a fixture."""
    return delete_topic_for_recreation
