"""The command line tells Tansu from Apache Kafka by the broker's own answers, in both of
Kafka's modes: CI runs this file on the reference release (KRaft) and on the oldest one in
ZooKeeper mode, which reports no feature in ApiVersions (the mark of Apache Kafka there is
LeaderAndIsr, which its brokers advertise). tests/cli/test_cli_issue22.py runs the Tansu side."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import pytest

from kafka_async.cli.commands import broker_is_tansu
from kafka_async.testing.capabilities import advertised_apis
from kafka_async.testing.plugin import KafkaService

pytestmark = pytest.mark.integration

_ENV = {**os.environ, "NO_COLOR": "1", "KAFKA_BOOTSTRAP_SERVERS": "", "PYTHONUNBUFFERED": "1"}


def _run(bootstrap: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kafka_async.cli", "-b", bootstrap, "--timeout", "30", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env=_ENV,
        check=False,
    )


def test_apache_kafka_is_not_taken_for_tansu(
    kafka_broker: str, kafka_service: KafkaService
) -> None:
    apache = kafka_service.apache  # the run's broker must be Apache Kafka (skips otherwise)
    apis = advertised_apis(kafka_broker)
    # What the broker itself says, as evidence in a failure: KRaft nodes support features,
    # ZooKeeper-mode brokers advertise LeaderAndIsr (key 4).
    evidence = f"{apache.version} ({apache.mode}): LeaderAndIsr {apis.get(4, 'not advertised')}"
    topic = f"kind-{uuid.uuid4().hex[:10]}"
    produced = _run(kafka_broker, "produce", topic, stdin="x\n")
    assert produced.returncode == 0, (produced.stdout, produced.stderr)
    offsets = _run(kafka_broker, "offsets", topic)
    assert offsets.returncode == 0, (offsets.stdout, offsets.stderr)
    assert "note:" not in offsets.stderr, (evidence, offsets.stderr)
    assert offsets.stdout.split()[-3:] == ["0", "1", "1"], offsets.stdout  # earliest latest records


def test_the_rule_on_each_kind_of_answer() -> None:
    """The decision itself, on the answers each kind of broker gives (as measured: the Tansu
    build the tests run advertises neither features nor LeaderAndIsr; Apache Kafka 2.8.2
    and 3.6.2 in ZooKeeper mode advertise LeaderAndIsr v0-5 and v0-7 and no feature)."""
    kraft = {"metadata.version": (1, 27)}
    assert not broker_is_tansu("AbC", kraft, {0, 1, 2})
    assert not broker_is_tansu("AbC", {}, {0, 1, 2, 4, 5, 6, 7})
    assert broker_is_tansu("AbC", {}, {0, 1, 2, 60})
    assert broker_is_tansu("tansu_cluster", kraft, {4})
