"""The launcher on older releases (issue 25's version matrix): Apache Kafka 2.8.2 in ZooKeeper
mode and 3.9.1 in KRaft mode, each with the security listeners, fetched from Maven Central;
our client produces and consumes over PLAINTEXT, TLS and SASL/SCRAM on both.

Slow (two more Kafka versions to fetch on first use, and a cluster each): ``make compat`` and
``pytest -m slow tests/testing/test_apache_versions.py``, not CI.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from kafka_async import Consumer, Producer, TopicPartition
from kafka_async.testing.apache import (
    SASL_USERS,
    ApacheKafka,
    KafkaPrerequisiteError,
    default_mode,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]

#: (release, mode): the oldest release we claim, on ZooKeeper, and the last 3.x, on KRaft.
RELEASES = [("2.8.2", "zookeeper"), ("3.9.1", "kraft")]


@pytest.fixture(scope="module", params=RELEASES, ids=[f"{v}-{m}" for v, m in RELEASES])
def old_kafka(request: pytest.FixtureRequest) -> Iterator[ApacheKafka]:
    version, mode = request.param
    kafka = ApacheKafka(version=version, mode=mode, security=True, heap="384m")
    try:
        kafka.start()
    except KafkaPrerequisiteError as exc:
        from kafka_async.testing.plugin import skip_or_fail

        skip_or_fail(f"Apache Kafka {version} cannot run here: {exc}")
    try:
        yield kafka
    finally:
        kafka.stop()


async def _round_trip(settings: dict[str, Any], topic: str, n: int = 20) -> list[bytes]:
    values = [f"{topic}-{i}".encode() for i in range(n)]
    async with Producer(**settings, acks="all", linger_ms=1) as producer:
        for value in values:
            await producer.send(topic, value)
        await producer.flush()
    got: list[bytes] = []
    async with Consumer(**settings, auto_offset_reset="earliest") as consumer:
        consumer.assign([TopicPartition(topic, 0)])
        with anyio.fail_after(60):
            while len(got) < n:
                for records in (await consumer.getmany(timeout_ms=500)).values():
                    got += [r.value or b"" for r in records]
    assert got == values
    return got


def test_default_mode_follows_the_release() -> None:
    assert default_mode("2.8.2") == "zookeeper"
    assert default_mode("3.2.3") == "zookeeper"
    assert default_mode("3.3.2") == "kraft"
    assert default_mode("4.1.1") == "kraft"
    with pytest.raises(ValueError, match="no ZooKeeper mode"):
        ApacheKafka(version="4.0.2", mode="zookeeper")
    with pytest.raises(ValueError, match="KRaft"):
        ApacheKafka(version="2.8.2", mode="kraft")


def test_the_release_runs_in_its_mode(old_kafka: ApacheKafka) -> None:
    # What the broker advertises is the release's own and its mode's: a ZooKeeper-mode broker
    # answers LeaderAndIsr (API 4) from its controller, a KRaft broker does not; 2.8 knows no
    # DescribeTransactions (API 65, Kafka 3.0), 3.9 does.
    apis = {k.api_key: k.max_version for k in old_kafka.api_versions().api_keys}
    if old_kafka.version == "2.8.2":
        assert old_kafka.mode == "zookeeper"
        assert old_kafka.zookeeper_connect
        assert 4 in apis
        assert 65 not in apis
    else:
        assert old_kafka.mode == "kraft"
        assert old_kafka.zookeeper_connect is None
        assert 4 not in apis
        assert 65 in apis
    # Produce v8 (Kafka 2.4) is on both.
    assert apis[0] >= 8


@pytest.mark.anyio
async def test_produce_and_consume_plaintext(old_kafka: ApacheKafka) -> None:
    old_kafka.create_topic("plain")
    await _round_trip({"bootstrap_servers": old_kafka.bootstrap_servers}, "plain")


@pytest.mark.anyio
async def test_produce_and_consume_over_tls(old_kafka: ApacheKafka) -> None:
    assert old_kafka.tls is not None
    old_kafka.create_topic("tls")
    settings = {
        "bootstrap_servers": old_kafka.bootstrap("SSL"),
        "security_protocol": "SSL",
        "ssl_cafile": str(old_kafka.tls.ca),
    }
    await _round_trip(settings, "tls")


@pytest.mark.anyio
@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
async def test_produce_and_consume_over_sasl(old_kafka: ApacheKafka, mechanism: str) -> None:
    # SCRAM users: ConfigCommand --zookeeper on 2.8, the format step's --add-scram on 3.9.
    topic = f"sasl-{mechanism.lower()}"
    old_kafka.create_topic(topic)
    settings = {
        "bootstrap_servers": old_kafka.bootstrap("SASL_PLAINTEXT"),
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": mechanism,
        "sasl_plain_username": "alice",
        "sasl_plain_password": SASL_USERS["alice"],
    }
    await _round_trip(settings, topic)
