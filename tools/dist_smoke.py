"""Smoke test of an installed kafka_async, run by tools/dist_check.py in a fresh venv.

Not part of the project's own suite (it lives outside ``tests/``): dist_check copies it out
of the source tree and runs it with the venv's pytest, so every import below resolves to the
installed package. ``KAFKA_ASYNC_EXPECT_SPEEDUPS`` (``1`` or ``0``) says whether the C
accelerator must be active. The broker comes from the installed pytest plugin's
``kafka_broker`` fixture (an embedded Tansu unless ``KAFKA_BOOTSTRAP_SERVERS`` is set).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path

import pytest
from packaging.requirements import Requirement

import kafka_async
from kafka_async import Consumer, Producer, TopicPartition

DIST = "kafka-async-client"


def _bin(name: str) -> Path:
    return Path(sys.executable).parent / name


def test_the_package_is_the_installed_one_not_a_source_tree() -> None:
    site = {Path(sysconfig.get_paths()[k]).resolve() for k in ("purelib", "platlib")}
    here = Path(kafka_async.__file__).resolve()
    assert any(here.is_relative_to(s) for s in site), f"{here} is not under {site}"
    assert importlib.metadata.version(DIST) == kafka_async.__version__


def test_the_c_accelerator_is_what_the_build_promised() -> None:
    from kafka_async.records import SPEEDUPS

    expected = os.environ["KAFKA_ASYNC_EXPECT_SPEEDUPS"] == "1"
    assert SPEEDUPS is expected
    files = [str(f) for f in importlib.metadata.files(DIST) or []]
    assert any("_speedups" in f and f.endswith(".so") for f in files) is expected


def test_py_typed_is_installed() -> None:
    assert (Path(kafka_async.__file__).parent / "py.typed").is_file()
    files = [str(f) for f in importlib.metadata.files(DIST) or []]
    assert "kafka_async/py.typed" in files


def test_the_pytest_plugin_is_opt_in(pytestconfig: pytest.Config) -> None:
    # Installing us adds no pytest11 entry point (a user's pytest runs are theirs); this run
    # asked for the plugin with -p, as a user does.
    names = {ep.name for ep in importlib.metadata.entry_points(group="pytest11")}
    assert "kafka_async" not in names
    assert pytestconfig.pluginmanager.has_plugin("kafka_async.testing.plugin")


@pytest.mark.parametrize("extra", ["spark", "otel"])
def test_the_extra_is_installed(extra: str) -> None:
    wanted = [
        Requirement(r)
        for r in importlib.metadata.requires(DIST) or []
        if Requirement(r).marker is not None and Requirement(r).marker.evaluate({"extra": extra})  # type: ignore[union-attr]
    ]
    assert wanted, f"no requirements declared for extra {extra!r}"
    for req in wanted:
        version = importlib.metadata.version(req.name)
        assert req.specifier.contains(version, prereleases=True), f"{req}: {version}"
    module = {"spark": "kafka_async.spark", "otel": "kafka_async.observability.otel"}[extra]
    importlib.import_module(module)


@pytest.mark.anyio
async def test_produce_and_consume_on_a_real_broker(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(partitions=1)
    sent = [(f"k{i}".encode(), f"value {i}".encode() * 20) for i in range(200)]
    for codec in ("gzip", "snappy", "lz4", "zstd"):
        async with Producer(bootstrap_servers=kafka_broker, compression_type=codec) as producer:
            for key, value in sent:
                await producer.enqueue(topic, key=key, value=value)
            await producer.flush()
    tp = TopicPartition(topic, 0)
    got: list[tuple[bytes | None, bytes | None]] = []
    async with Consumer(bootstrap_servers=kafka_broker) as consumer:
        consumer.assign([tp])
        await consumer.seek_to_beginning(tp)
        while len(got) < 4 * len(sent):
            batch = await consumer.getmany(timeout_ms=5000)
            assert batch, f"no records after {len(got)}"
            got += [(r.key, r.value) for r in batch.get(tp, [])]
    assert got == sent * 4


def test_the_command_line_tool_talks_to_the_broker(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(partitions=1)
    cli = str(_bin("kafka-async"))
    produced = subprocess.run(
        [cli, "-b", kafka_broker, "produce", topic, "--key-separator", ":"],
        input=b"k1:hello\nk2:world\n",
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert produced.returncode == 0, produced.stderr
    argv = [cli, "-b", kafka_broker, "consume", topic, "--from", "beginning", "--exit-at-end"]
    consumed = subprocess.run(
        [*argv, "--json"],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert consumed.returncode == 0, consumed.stderr
    rows = [json.loads(line) for line in consumed.stdout.decode().splitlines()]
    assert [(r["key"], r["value"]) for r in rows] == [("k1", "hello"), ("k2", "world")]
