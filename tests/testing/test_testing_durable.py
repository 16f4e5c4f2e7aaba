"""Durable EmbeddedBroker: data acknowledged before a SIGKILL is there after a restart."""

from __future__ import annotations

import time

import pytest

from kafka_async.testing import EmbeddedBroker, LocalS3, _procs, topic_partitions

pytestmark = pytest.mark.integration

confluent_kafka = pytest.importorskip("confluent_kafka")


def _produce(bootstrap: str, topic: str, values: list[bytes], partitions: int) -> None:
    errors: list[object] = []

    def on_delivery(err: object, _msg: object) -> None:
        if err is not None:
            errors.append(err)

    producer = confluent_kafka.Producer(
        {"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": False}
    )
    for i, value in enumerate(values):
        producer.produce(topic, value, partition=i % partitions, on_delivery=on_delivery)
    assert producer.flush(15) == 0, "records still unacknowledged after 15 s"
    assert errors == []


def _read_all(bootstrap: str, topic: str, partitions: int, expect: int) -> list[bytes]:
    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "durable-check",
            "enable.auto.commit": False,
        }
    )
    try:
        consumer.assign([confluent_kafka.TopicPartition(topic, p, 0) for p in range(partitions)])
        got: list[bytes] = []
        deadline = time.monotonic() + 15
        while len(got) < expect and time.monotonic() < deadline:
            msg = consumer.poll(0.2)
            if msg is None:
                continue
            assert msg.error() is None, msg.error()
            got.append(msg.value())
        return got
    finally:
        consumer.close()


def _s3_of(broker: EmbeddedBroker) -> LocalS3 | None:
    # Read through a call: mypy would keep ``broker.s3`` narrowed to not-None (as asserted
    # while the broker ran) past the close that clears it.
    return broker.s3


def test_durable_data_survives_kill_and_restart() -> None:
    values = [f"value-{i}".encode() for i in range(50)]
    with EmbeddedBroker(durable=True) as broker:
        assert broker.s3 is not None
        assert broker.s3.running
        broker.create_topic("durable", partitions=2)
        _produce(broker.bootstrap_servers, "durable", values, 2)
        pid, port = broker.pid, broker.port
        broker.kill()
        assert not broker.running
        assert broker.s3.running, "the S3 server must outlive a broker crash"
        broker.restart()
        assert broker.port == port
        assert broker.pid != pid
        assert topic_partitions(broker.bootstrap_servers, "durable") == 2
        got = _read_all(broker.bootstrap_servers, "durable", 2, len(values))
        assert sorted(got) == sorted(values)
        s3 = broker.s3
        s3_pid, last_pid = s3.pid, broker.pid
    assert not s3.running
    assert _s3_of(broker) is None
    live = _procs.live_pids()
    assert s3_pid is not None
    assert s3_pid not in live
    assert last_pid is not None
    assert last_pid not in live


def test_durable_broker_fixture(durable_broker: EmbeddedBroker) -> None:
    assert durable_broker.durable
    assert durable_broker.running
    durable_broker.create_topic("fixture-topic", partitions=1)
    durable_broker.kill()
    durable_broker.start()
    assert topic_partitions(durable_broker.bootstrap_servers, "fixture-topic") == 1
