"""Helpers for the consumer's integration tests (producing with librdkafka, fast groups)."""

from __future__ import annotations

from typing import Any, TypedDict

from confluent_kafka import Producer as RdProducer

from kafka_async.consumer.config import AutoOffsetReset


class FastGroupSettings(TypedDict):
    """The settings of :data:`FAST_GROUP`: a subset of ``ConsumerSettings`` that holds none
    of the keys the tests pass by name beside it (``bootstrap_servers``, ``group_id``...)."""

    session_timeout_ms: int
    heartbeat_interval_ms: int
    auto_offset_reset: AutoOffsetReset


#: Tansu holds a JoinGroup for about half the session timeout before it completes the
#: round, so tests use a short session to keep rebalances around a second.
FAST_GROUP: FastGroupSettings = {
    "session_timeout_ms": 2_000,
    "heartbeat_interval_ms": 300,
    "auto_offset_reset": "earliest",
}


def produce(
    bootstrap: str,
    topic: str,
    count: int,
    *,
    partitions: int = 1,
    value_size: int = 20,
    compression: str = "none",
    start: int = 0,
    headers: bool = False,
    timestamp_ms: int | None = None,
) -> dict[int, list[tuple[bytes, bytes]]]:
    """Produce ``count`` records round-robin over ``partitions`` with librdkafka; keys are
    the record numbers. Returns what each partition should hold, in order."""
    p = RdProducer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 5,
            "compression.codec": compression,
            "enable.idempotence": False,
            # The expected order is the produce order: without idempotence only one request
            # in flight keeps a retried batch from landing behind a later one.
            "max.in.flight.requests.per.connection": 1,
        }
    )
    expected: dict[int, list[tuple[bytes, bytes]]] = {i: [] for i in range(partitions)}
    errors: list[Any] = []

    def on_delivery(err: Any, msg: Any) -> None:
        if err is not None:
            errors.append(err)

    for i in range(start, start + count):
        key = str(i).encode()
        value = (key + b":" + b"v" * value_size)[: max(value_size, len(key) + 1)]
        part = i % partitions
        kwargs: dict[str, Any] = {}
        if headers:
            kwargs["headers"] = [("n", key), ("empty", b"")]
        if timestamp_ms is not None:
            kwargs["timestamp"] = timestamp_ms
        p.produce(topic, key=key, value=value, partition=part, on_delivery=on_delivery, **kwargs)
        expected[part].append((key, value))
        if i % 5000 == 0:
            p.poll(0)
    left = p.flush(60)
    assert left == 0, f"{left} records not delivered"
    assert not errors, errors[:3]
    return expected


def fetch_topic(req: Any, part: dict[str, Any], name: str = "t") -> dict[str, Any]:
    """A scripted Fetch answer's entry for topic ``name`` holding ``part``, naming the topic
    as the request (a ``FakeRequest``) did: by id from Fetch v13 on, by name before (the
    encoder keeps the field of the answer's version)."""
    topic_id = req.body.topics[0].topic_id if req.body.topics else None
    return {"topic": name, "topic_id": topic_id, "partitions": [part]}
