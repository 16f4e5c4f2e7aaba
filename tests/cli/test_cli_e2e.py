"""The real ``kafka-async`` command (``python -m kafka_async.cli``) against a real broker."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence

import pytest

from kafka_async.testing.plugin import KafkaService
from tests.harness.broker_gaps import confirm_broker_gap, librdkafka_admin_error

pytestmark = pytest.mark.integration

_ENV = {
    **os.environ,
    "NO_COLOR": "1",
    "KAFKA_BOOTSTRAP_SERVERS": "",
    "PYTHONUNBUFFERED": "1",
}


def run(
    args: Sequence[str],
    *,
    bootstrap: str | None = None,
    stdin: str | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "kafka_async.cli"]
    if bootstrap is not None:
        # The CLI's default request deadline (10 s, retries included) is for people; a
        # loaded 2-core CI machine running the whole suite can exceed it on a group join.
        # A test's own --timeout comes later on the command line and wins.
        argv += ["-b", bootstrap, "--timeout", "30"]
    return subprocess.run(
        [*argv, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=_ENV,
        check=False,
    )


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    return result.stdout


def one_line_error(result: subprocess.CompletedProcess[str], code: int = 1) -> str:
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("kafka-async: error: ")
    return lines[0]


def _topic() -> str:
    return f"cli-{uuid.uuid4().hex[:10]}"


def test_topics_create_list_describe_delete(kafka_broker: str) -> None:
    name = _topic()
    ok(
        run(
            ["topics", "create", name, "-p", "3", "-c", "retention.ms=60000"],
            bootstrap=kafka_broker,
        )
    )
    assert name in ok(run(["topics", "list"], bootstrap=kafka_broker)).split()

    described = ok(run(["topics", "describe", name], bootstrap=kafka_broker))
    assert f"Topic: {name}" in described
    assert "partitions: 3" in described
    rows = [line.split() for line in described.splitlines() if line[:1].isdigit()]
    assert [r[0] for r in rows] == ["0", "1", "2"]

    again = run(["topics", "create", name, "-p", "3"], bootstrap=kafka_broker)
    assert "TOPIC_ALREADY_EXISTS" in one_line_error(again)
    ok(run(["topics", "create", name, "--if-not-exists"], bootstrap=kafka_broker))

    ok(run(["topics", "delete", name], bootstrap=kafka_broker))
    assert name not in ok(run(["topics", "list"], bootstrap=kafka_broker)).split()
    missing = run(["topics", "delete", name], bootstrap=kafka_broker)
    assert one_line_error(missing) == f"kafka-async: error: topic '{name}' does not exist"
    ok(run(["topics", "delete", name, "--if-exists"], bootstrap=kafka_broker))


def test_produce_then_consume_round_trip_json(kafka_broker: str) -> None:
    name = _topic()
    ok(run(["topics", "create", name, "-p", "1"], bootstrap=kafka_broker))
    lines = ["k1:hello", "k2:wörld", "novalue-key-sep", "k3:a:b"]
    produced = run(
        # --rate puts each record in its own batch (see the offsets test for why).
        [
            *("produce", name, "-K", ":", "-H", "trace=abc", "-H", "app=cli"),
            *("--rate", "50", "--linger-ms", "0"),
        ],
        bootstrap=kafka_broker,
        stdin="\n".join(lines) + "\n",
    )
    ok(produced)
    assert "produced 4 record(s)" in produced.stderr

    out = ok(run(["consume", name, "--exit-at-end", "--json"], bootstrap=kafka_broker))
    records = [json.loads(line) for line in out.splitlines()]
    assert [(r["key"], r["value"]) for r in records] == [
        ("k1", "hello"),
        ("k2", "wörld"),
        (None, "novalue-key-sep"),
        ("k3", "a:b"),
    ]
    assert [r["offset"] for r in records] == [0, 1, 2, 3]
    assert all(r["topic"] == name and r["partition"] == 0 for r in records)
    assert all(r["headers"] == [["trace", "abc"], ["app", "cli"]] for r in records)
    assert all(r["timestamp"] > 0 for r in records)

    # Default output: values only; --count stops early; --from picks the start.
    values = ok(run(["consume", name, "--exit-at-end", "-n", "2"], bootstrap=kafka_broker))
    assert values.splitlines() == ["hello", "wörld"]
    tail = ok(run(["consume", name, "--exit-at-end", "--from", "2"], bootstrap=kafka_broker))
    assert tail.splitlines() == ["novalue-key-sep", "a:b"]
    templated = ok(
        run(
            [
                "consume",
                name,
                "--exit-at-end",
                "--from",
                "-1",
                "--format",
                "{offset}|{key}|{value}",
            ],
            bootstrap=kafka_broker,
        )
    )
    assert templated.splitlines() == ["3|k3|a:b"]


def test_produce_from_file_to_partition_and_offsets(kafka_broker: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    name = _topic()
    ok(run(["topics", "create", name, "-p", "2"], bootstrap=kafka_broker))
    data = tmp_path / "in.txt"
    data.write_text("a\nb\nc\n")
    # --rate keeps records apart, so each lands in its own batch: Tansu reports a
    # partition's end as (base offset of its last batch) + 1.
    ok(
        run(
            ["produce", name, "-f", str(data), "-p", "1", "--rate", "50", "--linger-ms", "0"],
            bootstrap=kafka_broker,
        )
    )
    table = ok(run(["offsets", name], bootstrap=kafka_broker))
    rows = {r[0]: r[1:] for r in (line.split() for line in table.splitlines()[1:])}
    assert rows == {"0": ["0", "0", "0"], "1": ["0", "3", "3"]}
    only_p1 = ok(run(["consume", name, "-p", "1", "--exit-at-end"], bootstrap=kafka_broker))
    assert only_p1.splitlines() == ["a", "b", "c"]


def test_groups_list_describe_reset(kafka_broker: str) -> None:
    name, group = _topic(), f"cli-group-{uuid.uuid4().hex[:8]}"
    ok(run(["topics", "create", name, "-p", "1"], bootstrap=kafka_broker))
    ok(
        run(
            ["produce", name, "--rate", "50", "--linger-ms", "0"],
            bootstrap=kafka_broker,
            stdin="x\ny\n",
        )
    )
    # A group consumer (subscribe mode) reads everything and commits on exit.
    consumed = ok(run(["consume", name, "-g", group, "--exit-at-end"], bootstrap=kafka_broker))
    assert consumed.splitlines() == ["x", "y"]
    # Again (assign mode, starting from the group's committed offsets): nothing new.
    again = run(["consume", name, "-g", group, "-p", "0", "--exit-at-end"], bootstrap=kafka_broker)
    assert ok(again) == ""
    plan = ok(
        run(
            ["groups", "reset-offsets", group, "-t", name, "--to", "beginning"],
            bootstrap=kafka_broker,
        )
    )
    assert plan.splitlines()[1].split() == [name, "0", "2", "0"]  # a dry run by default
    ok(
        run(
            ["groups", "reset-offsets", group, "-t", name, "--to", "1", "--execute"],
            bootstrap=kafka_broker,
        )
    )
    assert group in ok(run(["groups", "list"], bootstrap=kafka_broker)).split()
    described = ok(run(["groups", "describe", group], bootstrap=kafka_broker))
    row = next(line.split() for line in described.splitlines() if line.startswith(name))
    assert row[:5] == [name, "0", "1", "2", "1"]  # topic, partition, committed, latest, lag
    ok(run(["groups", "delete", group], bootstrap=kafka_broker))
    assert group not in ok(run(["groups", "list"], bootstrap=kafka_broker)).split()


def test_missing_topic_is_one_line_exit_1(kafka_broker: str) -> None:
    name = _topic()
    # (produce lets the broker decide: it may auto-create the topic, as for kcat.)
    for args in (["consume", name], ["offsets", name]):
        result = run(args, bootstrap=kafka_broker, stdin="x\n")
        assert one_line_error(result) == f"kafka-async: error: topic '{name}' does not exist"


def test_unreachable_broker_is_one_line_exit_1() -> None:
    started = time.monotonic()
    result = run(["--timeout", "3", "topics", "list"], bootstrap="127.0.0.1:1")
    line = one_line_error(result)
    assert "cannot reach the broker at 127.0.0.1:1" in line
    assert time.monotonic() - started < 30


def test_bad_usage_exit_2() -> None:
    result = run(["topics", "frobnicate"])
    assert result.returncode == 2
    assert "usage:" in result.stderr
    assert "Traceback" not in result.stderr
    assert run(["consume"]).returncode == 2


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_broker_command_runs_until_interrupted() -> None:
    # A port of its own: 9092 (the default) is what tests/cli/test_cli_issue22.py's brokers
    # take too, on the other worker, so "the broker is gone" below could meet one of them.
    port = str(_free_port())
    proc = subprocess.Popen(
        [sys.executable, "-m", "kafka_async.cli", "broker", "--kind", "tansu", "--port", port],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_ENV,
    )
    try:
        assert proc.stdout is not None
        address = proc.stdout.readline().strip()
        assert address.startswith("127.0.0.1:")
        name = _topic()
        ok(run(["topics", "create", name], bootstrap=address))
        assert name in ok(run(["topics", "list"], bootstrap=address)).split()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0
        assert proc.stderr is not None
        assert "Traceback" not in proc.stderr.read()
        # The broker is gone with the command.
        gone = run(["--timeout", "2", "topics", "list"], bootstrap=address)
        assert gone.returncode == 1
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_bench_produce_then_consume(kafka_broker: str) -> None:
    name = _topic()
    produced = ok(
        run(
            ["bench", "produce", "-t", name, "-n", "3000", "-s", "50", "-P", "2", "-z", "lz4"],
            bootstrap=kafka_broker,
        )
    )
    assert produced.startswith("produce: 3000 records in ")
    assert "records/s" in produced
    consumed = ok(run(["bench", "consume", "-t", name, "-n", "3000"], bootstrap=kafka_broker))
    assert consumed.startswith("consume: 3000 records in ")


def _partition_count(bootstrap: str, name: str) -> int:
    described = ok(run(["topics", "describe", name], bootstrap=bootstrap))
    return int(described.split("partitions: ", 1)[1].split()[0])


def test_topics_alter(kafka_service: KafkaService) -> None:
    kafka_broker = kafka_service.bootstrap_servers
    name = _topic()
    ok(run(["topics", "create", name, "-p", "1"], bootstrap=kafka_broker))
    ok(
        run(
            ["topics", "alter", name, "-c", "retention.ms=7777", "-c", "segment.ms=8888888"],
            bootstrap=kafka_broker,
        )
    )
    ok(run(["topics", "alter", name, "--delete-config", "segment.ms"], bootstrap=kafka_broker))
    grow = run(["topics", "alter", name, "-p", "2"], bootstrap=kafka_broker)
    if not kafka_service.supports("CreatePartitions"):
        # A broker without CreatePartitions (Tansu): growing a topic fails with one clear line.
        assert "does not support CreatePartitions" in one_line_error(grow)
        shrink = run(["topics", "alter", name, "-p", "1"], bootstrap=kafka_broker)
        assert shrink.returncode == 0  # already 1 partition: nothing to do
    else:
        ok(grow)
        assert "1 -> 2 partitions" in grow.stderr
        # The new partition reaches the metadata asynchronously.
        deadline = time.monotonic() + 15
        while _partition_count(kafka_broker, name) != 2:
            assert time.monotonic() < deadline, "the second partition never appeared"
            time.sleep(0.2)
        shrink = run(["topics", "alter", name, "-p", "1"], bootstrap=kafka_broker)
        assert shrink.returncode == 2
        assert "has 2 partitions; Kafka cannot reduce the count" in shrink.stderr
    assert run(["topics", "alter", name], bootstrap=kafka_broker).returncode == 2
    # `describe --configs` shows the values set on the topic (not the defaults).
    configs = ok(run(["topics", "describe", name, "--configs"], bootstrap=kafka_broker))
    assert "segment.ms" not in configs
    if "retention.ms=7777" not in configs:
        from confluent_kafka.admin._config import ConfigResource as RdConfigResource

        theirs = librdkafka_admin_error(
            kafka_broker,
            lambda a: a.describe_configs([RdConfigResource("topic", name)]),
            check=lambda r: (
                None
                if not r["retention.ms"].is_default
                else f"retention.ms={r['retention.ms'].value}, source {r['retention.ms'].source}"
            ),
        )
        confirm_broker_gap(
            "a topic config set by the client is reported as a default", configs, theirs
        )


def test_consume_stops_cleanly_on_sigint_and_commits(kafka_broker: str) -> None:
    name, group = _topic(), f"cli-group-{uuid.uuid4().hex[:8]}"
    ok(run(["topics", "create", name, "-p", "1"], bootstrap=kafka_broker))
    ok(
        run(
            ["produce", name, "--rate", "50", "--linger-ms", "0"],
            bootstrap=kafka_broker,
            stdin="a\nb\nc\n",
        )
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "kafka_async.cli", "-b", kafka_broker, "consume", name, "-g", group],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_ENV,
    )
    try:
        assert proc.stdout is not None
        got = [proc.stdout.readline().strip() for _ in range(3)]
        assert got == ["a", "b", "c"]
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err  # interrupted
        assert rest == ""
        assert "Traceback" not in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    described = ok(run(["groups", "describe", group], bootstrap=kafka_broker))
    row = next(line.split() for line in described.splitlines() if line.startswith(name))
    assert row[:3] == [name, "0", "3"]  # everything printed was committed


def test_console_script_is_installed() -> None:
    from pathlib import Path

    script = Path(sys.executable).with_name("kafka-async")
    if not script.exists():
        pytest.skip("the package is not installed with its console script in this environment")
    result = subprocess.run(
        [str(script), "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0
    assert result.stdout.startswith("kafka-async ")
