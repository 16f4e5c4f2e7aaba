"""FaultProxy under real client traffic: librdkafka (confluent-kafka) through the proxy.

These check the proxy itself (framing of large pipelined Produce/Fetch traffic, order under
jitter, clean resets), using a peer client so they do not depend on our own client.
"""

from __future__ import annotations

import time
from collections import defaultdict

import pytest

from kafka_async.testing import ProxiedBroker

pytestmark = [pytest.mark.integration, pytest.mark.interop]

ck = pytest.importorskip("confluent_kafka")


def _produce(
    bootstrap: str, topic: str, count: int, partitions: int, pace: float = 0.0, **conf: object
) -> int:
    """Produce ``count`` records ``p:i`` round-robin, ``pace`` seconds apart; returns how
    many were acknowledged."""
    acked = 0
    failed: list[str] = []

    def on_delivery(err: object, _msg: object) -> None:
        nonlocal acked
        if err is None:
            acked += 1
        else:
            failed.append(str(err))

    producer = ck.Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5, **conf})
    for i in range(count):
        p = i % partitions
        producer.produce(topic, f"{p}:{i}".encode(), partition=p, on_delivery=on_delivery)
        producer.poll(0)
        if pace:
            time.sleep(pace)
    remaining = producer.flush(30)
    assert remaining == 0, f"{remaining} records never resolved"
    assert failed == []
    return acked


def _consume(bootstrap: str, topic: str, partitions: int, expect: int) -> dict[int, list[int]]:
    consumer = ck.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "proxy-peer", "enable.auto.commit": False}
    )
    got: dict[int, list[int]] = defaultdict(list)
    try:
        consumer.assign([ck.TopicPartition(topic, p, 0) for p in range(partitions)])
        deadline = time.monotonic() + 30
        total = 0
        while total < expect and time.monotonic() < deadline:
            for msg in consumer.consume(500, 0.2):
                assert msg.error() is None, msg.error()
                p, i = msg.value().decode().split(":")
                got[int(p)].append(int(i))
                total += 1
    finally:
        consumer.close()
    return got


def test_jittered_proxy_is_transparent_to_librdkafka(proxied_broker: ProxiedBroker) -> None:
    pb = proxied_broker
    pb.broker.create_topic("jitter", partitions=3)
    pb.proxy.set_delay(0.003, jitter=0.003)
    count = 3000
    assert _produce(pb.bootstrap_servers, "jitter", count, 3) == count
    got = _consume(pb.bootstrap_servers, "jitter", 3, count)
    for p in range(3):
        assert got[p] == list(range(p, count, 3)), f"partition {p} lost or reordered records"
    assert pb.proxy.stats.requests_by_api.get(0, 0) >= 1
    assert pb.proxy.stats.requests_by_api.get(1, 0) >= 1


def test_reset_storm_loses_nothing_acknowledged(proxied_broker: ProxiedBroker) -> None:
    pb = proxied_broker
    pb.broker.create_topic("storm", partitions=2)
    # Every 0.5-1.5 s (the storm): a shorter period can starve librdkafka's
    # reconnect + ApiVersions + InitProducerId handshake on a loaded 2-core machine, and
    # then every message times out without saying anything about the proxy.
    pb.proxy.reset_periodically(0.5, 1.5)
    count = 2000
    acked = _produce(
        pb.bootstrap_servers,
        "storm",
        count,
        2,
        pace=0.002,  # ~4 s of traffic: several resets land mid-stream
        **{
            "enable.idempotence": True,
            "message.timeout.ms": 30000,
            "batch.num.messages": 50,
            "reconnect.backoff.max.ms": 500,
        },
    )
    resets = pb.proxy.stats.connections_reset
    pb.proxy.stop_periodic_resets()
    assert acked == count
    got = _consume(pb.broker.bootstrap_servers, "storm", 2, count)
    seen = {i for values in got.values() for i in values}
    assert seen == set(range(count)), f"lost {len(set(range(count)) - seen)} acknowledged"
    assert resets >= 1, "the storm never reset a connection"
