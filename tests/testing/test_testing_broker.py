"""EmbeddedBroker: a real Tansu process that starts, answers, stops, restarts, and never leaks."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import anyio
import pytest

from kafka_async.errors import BrokerResponseError
from kafka_async.protocol.apis import API_VERSIONS, METADATA
from kafka_async.protocol.apis.api_versions import ApiVersionsRequest
from kafka_async.protocol.apis.metadata import MetadataRequest, MetadataRequestTopic
from kafka_async.testing import (
    BrokerStartError,
    EmbeddedBroker,
    _procs,
    _wire,
    acreate_topic,
    create_topic,
    topic_partitions,
)

pytestmark = pytest.mark.integration


def _running(broker: EmbeddedBroker) -> bool:
    # Read through a call: mypy would keep an asserted ``broker.running`` narrowed across the
    # kill()/start() that change it, and flag the next assertion as unreachable.
    return broker.running


def _pid_alive(pid: int) -> bool:
    """True if ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def _wait_gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while _pid_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _error_code(exc: BrokerResponseError) -> int:
    return int(getattr(exc, "unknown_code", exc.code))


def test_start_answers_api_versions_and_stop_leaves_no_process() -> None:
    broker = EmbeddedBroker()
    broker.start()
    try:
        pid = broker.pid
        assert pid is not None
        assert _pid_alive(pid)
        host, port = broker.bootstrap_servers.split(":")
        assert host == "127.0.0.1"
        assert int(port) == broker.port > 0
        resp = _wire.request(
            broker.bootstrap_servers, API_VERSIONS, ApiVersionsRequest(), version=3
        )
        assert resp.error_code == 0
        keys = {k.api_key for k in resp.api_keys}
        assert {0, 1, 3, 18, 19} <= keys  # Produce, Fetch, Metadata, ApiVersions, CreateTopics
    finally:
        broker.stop()
    assert not _running(broker)
    assert broker.pid is None
    assert not _pid_alive(pid)
    assert pid not in _procs.live_pids()
    assert not _wire.probe(f"127.0.0.1:{port}")
    assert "start #1" in broker.log_path.read_text()


def test_restart_keeps_port_and_replaces_process() -> None:
    with EmbeddedBroker() as broker:
        port, pid = broker.port, broker.pid
        assert pid is not None
        broker.restart()
        assert broker.port == port
        assert broker.pid not in (None, pid)
        assert not _pid_alive(pid)
        assert _wire.probe(broker.bootstrap_servers)


def test_kill_is_sigkill_and_start_comes_back_on_same_port() -> None:
    with EmbeddedBroker() as broker:
        port, pid = broker.port, broker.pid
        assert pid is not None
        broker.kill()
        assert not _running(broker)
        assert not _pid_alive(pid)
        assert not _wire.probe(broker.bootstrap_servers)
        broker.start()
        assert broker.port == port
        assert _running(broker)
        assert _wire.probe(broker.bootstrap_servers)
        broker.restart(kill=True)
        assert broker.port == port
        assert _running(broker)


def test_memory_mode_forgets_topics_on_restart() -> None:
    with EmbeddedBroker() as broker:
        create_topic(broker.bootstrap_servers, "ephemeral", 2)
        assert topic_partitions(broker.bootstrap_servers, "ephemeral") == 2
        broker.restart()
        assert topic_partitions(broker.bootstrap_servers, "ephemeral") is None


def test_create_topic_partitions_and_duplicates() -> None:
    with EmbeddedBroker() as broker:
        broker.create_topic("three", partitions=3)
        assert topic_partitions(broker.bootstrap_servers, "three") == 3
        with pytest.raises(BrokerResponseError) as info:
            broker.create_topic("three", partitions=3)
        assert _error_code(info.value) == 36  # TOPIC_ALREADY_EXISTS
        create_topic(broker.bootstrap_servers, "three", 3, exist_ok=True)
        with pytest.raises(ValueError, match="partitions"):
            broker.create_topic("zero", partitions=0)


def test_advertised_address_override_reaches_metadata() -> None:
    with EmbeddedBroker(advertised_host="localhost", advertised_port=41999) as broker:
        assert broker.advertised_address == "localhost:41999"
        resp = _wire.request(
            broker.bootstrap_servers, METADATA, MetadataRequest(topics=[]), version=1
        )
        assert [(b.host, b.port) for b in resp.brokers] == [("localhost", 41999)]


def test_occupied_port_fails_with_log_tail() -> None:
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        port = blocker.getsockname()[1]
        before = set(_procs.live_pids())
        broker = EmbeddedBroker(port=port, startup_timeout=10)
        with pytest.raises(BrokerStartError, match="exited") as info:
            broker.start()
        # A port chosen by the caller is never swapped for another one.
        assert broker.port == port
        assert str(broker.log_path) in str(info.value)
        assert "in use" in str(info.value).lower()
        assert not _running(broker)
        assert set(_procs.live_pids()) == before


def test_bad_binary_is_a_clear_error(tmp_path: Path) -> None:
    fake = str(tmp_path / "tansu")
    with open(fake, "w") as fh:
        fh.write("#!/bin/sh\necho 'no broker here' >&2\nexit 3\n")
    os.chmod(fake, 0o755)
    broker = EmbeddedBroker(binary=fake, port=_procs.free_port())
    with pytest.raises(BrokerStartError, match="no broker here"):
        broker.start()
    assert not _running(broker)


def test_tansu_bin_env_must_be_executable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TANSU_BIN", "/nonexistent/tansu")
    with pytest.raises(BrokerStartError, match="TANSU_BIN"):
        EmbeddedBroker().start()


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
@pytest.mark.anyio
async def test_async_context_manager(anyio_backend: str) -> None:
    async with EmbeddedBroker() as broker:
        pid = broker.pid
        assert pid is not None
        assert await _wire.aprobe(broker.bootstrap_servers)
        await broker.acreate_topic("async-topic", 4)
        assert topic_partitions(broker.bootstrap_servers, "async-topic") == 4
        await acreate_topic(broker.bootstrap_servers, "async-topic", 4, exist_ok=True)
        port = broker.port
        await broker.arestart()
        assert broker.port == port
        assert broker.pid != pid
        await broker.akill()
        assert not _running(broker)
        await broker.astart()
        assert await _wire.aprobe(broker.bootstrap_servers)
        last = broker.pid
    assert last is not None
    assert not _pid_alive(last)


@pytest.mark.parametrize("after", [0.0, 0.002, 0.01, 0.03])
@pytest.mark.anyio
async def test_cancelled_start_leaves_no_process(after: float) -> None:
    before = set(_procs.live_pids())
    broker = EmbeddedBroker()
    with anyio.move_on_after(after) as scope:
        await broker.astart()
    if scope.cancelled_caught:
        # Cancelled mid-start: the half-started child must be gone already.
        assert not _running(broker)
        assert set(_procs.live_pids()) == before
    else:
        assert _running(broker)  # finished before the deadline: a normal, usable broker
        await broker.astop()
        assert set(_procs.live_pids()) == before


@pytest.mark.anyio
async def test_async_start_does_not_block_the_event_loop() -> None:
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await anyio.sleep(0.005)

    async with anyio.create_task_group() as tg:
        tg.start_soon(ticker)
        async with EmbeddedBroker():
            pass
        tg.cancel_scope.cancel()
    assert ticks >= 2


_ORPHAN_SCRIPT = textwrap.dedent(
    """
    import os, sys, time
    from kafka_async.testing import EmbeddedBroker
    b = EmbeddedBroker().start()
    print(b.pid, flush=True)
    if sys.argv[1] == "hang":
        time.sleep(60)
    # "exit": leave without stopping the broker; atexit must clean up
    """
)


def test_no_orphan_when_owner_exits_without_stop() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _ORPHAN_SCRIPT, "exit"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    pid = int(out.stdout.split()[0])
    assert _wait_gone(pid), "broker outlived its owner"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux only")
def test_no_orphan_when_owner_is_sigkilled() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", _ORPHAN_SCRIPT, "hang"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        pid = int(proc.stdout.readline().split()[0])
        assert _pid_alive(pid)
    finally:
        proc.kill()
        proc.wait(10)
    assert _wait_gone(pid), "broker outlived its SIGKILLed owner"


def _fake_binary(tmp_path: Path, script: str) -> str:
    path = tmp_path / "fake-tansu"
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)
    return str(path)


def test_silent_binary_times_out_and_is_killed(tmp_path: Path) -> None:
    before = set(_procs.live_pids())
    broker = EmbeddedBroker(binary=_fake_binary(tmp_path, "exec sleep 60\n"), startup_timeout=0.5)
    start = time.monotonic()
    with pytest.raises(BrokerStartError, match="not ready within"):
        broker.start()
    assert time.monotonic() - start < 5
    assert set(_procs.live_pids()) == before


@pytest.mark.anyio
async def test_silent_binary_times_out_async(tmp_path: Path) -> None:
    before = set(_procs.live_pids())
    broker = EmbeddedBroker(binary=_fake_binary(tmp_path, "exec sleep 60\n"), startup_timeout=0.5)
    with pytest.raises(BrokerStartError, match="not ready within"):
        await broker.astart()
    assert set(_procs.live_pids()) == before


def test_failed_durable_start_stops_its_s3_server(tmp_path: Path) -> None:
    before = set(_procs.live_pids())
    broker = EmbeddedBroker(durable=True, binary=_fake_binary(tmp_path, "exit 3\n"))
    with pytest.raises(BrokerStartError, match="exited"):
        broker.start()
    assert broker.s3 is None
    assert set(_procs.live_pids()) == before


def test_tansu_auto_creation_facts() -> None:
    """What the topic helpers' docstring states about Tansu's auto-creation."""
    with EmbeddedBroker() as broker:
        body = MetadataRequest(
            topics=[MetadataRequestTopic(name="auto-no")], allow_auto_topic_creation=False
        )
        resp = _wire.request(broker.bootstrap_servers, METADATA, body, version=9)
        assert resp.topics[0].error_code == 3  # UNKNOWN_TOPIC_OR_PARTITION
        body = MetadataRequest(
            topics=[MetadataRequestTopic(name="auto-yes")], allow_auto_topic_creation=True
        )
        resp = _wire.request(broker.bootstrap_servers, METADATA, body, version=9)
        assert resp.topics[0].error_code == 0
        assert topic_partitions(broker.bootstrap_servers, "auto-yes") == 4


def test_old_logs_are_pruned() -> None:
    from kafka_async.testing import _procs

    folder = _procs.log_dir()
    tag = os.urandom(6).hex()  # parallel runs share the folder
    old = folder / f"tansu-pruning-test-{tag}-old.log"
    fresh = folder / f"tansu-pruning-test-{tag}-fresh.log"
    old.write_text("old")
    fresh.write_text("fresh")
    two_days_ago = time.time() - 2 * 24 * 3600
    os.utime(old, (two_days_ago, two_days_ago))
    _procs.log_dir.cache_clear()
    try:
        assert _procs.log_dir() == folder
        assert not old.exists()
        assert fresh.exists()
    finally:
        fresh.unlink()


@pytest.mark.parametrize("extra", [[], ["--proxy"]])
def test_command_line_broker(extra: list[str]) -> None:
    import signal

    proc = subprocess.Popen(
        [sys.executable, "-m", "kafka_async.testing", "--topic", "cli:3", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        address = proc.stdout.readline().strip()
        assert _wire.probe(address, timeout=5)
        assert topic_partitions(address, "cli") == 3
        resp = _wire.request(address, METADATA, MetadataRequest(topics=[]), version=1)
        # With --proxy, Metadata sends clients to the proxy: the address they bootstrapped from.
        assert f"{resp.brokers[0].host}:{resp.brokers[0].port}" == address
        proc.send_signal(signal.SIGINT)
        assert proc.wait(15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not _wire.probe(address)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_forked_child_leaves_parents_broker_alone() -> None:
    with EmbeddedBroker() as broker:
        pid = os.fork()
        if pid == 0:  # the child: run the exit-time cleanup as a forked worker would
            try:
                _procs._cleanup_at_exit()
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        assert _running(broker)
        assert _wire.probe(broker.bootstrap_servers)
