"""Issue 22: what a newcomer meets first. ``kafka-async broker`` (Apache Kafka on 9092 when Java
17+ is there, no pytest needed), Ctrl-C on ``produce``/``consume``, ``produce`` to a topic that
does not exist yet, and the notes where Tansu bends an answer.

Each test runs the real command in a child process against a real broker.
"""

from __future__ import annotations

import os
import platform
import pty
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence

import pytest

from kafka_async.testing import EmbeddedBroker
from kafka_async.testing.apache import ApacheKafka
from kafka_async.testing.broker import TANSU_BENDS
from kafka_async.testing.plugin import KafkaService

pytestmark = pytest.mark.integration

_ENV = {
    **os.environ,
    "NO_COLOR": "1",
    "KAFKA_BOOTSTRAP_SERVERS": "",
    "PYTHONUNBUFFERED": "1",
    # `kafka-async broker`'s own default release, not the one a version-matrix run chose.
    "KAFKA_ASYNC_APACHE_VERSION": "",
    "KAFKA_ASYNC_APACHE_MODE": "",
}
#: Runs the CLI with pytest made unimportable: a user's `pip install kafka-async-client[broker]`
#: has no pytest, and nothing `kafka-async broker` imports may need it.
_NO_PYTEST = (
    "import sys; sys.modules['pytest'] = None; "
    "from kafka_async.cli.main import main; sys.exit(main(sys.argv[1:]))"
)


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "kafka_async.cli", *args]


def run(args: Sequence[str], *, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*_cli("--timeout", "30"), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env=_ENV,
        check=False,
    )


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    return result.stdout


def _topic() -> str:
    return f"i22-{uuid.uuid4().hex[:10]}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _port_9092_free() -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", 9092))
        except OSError:
            return False
    return True


def _java() -> bool:
    from kafka_async.testing.apache import KafkaPrerequisiteError, find_java

    try:
        find_java()
    except KafkaPrerequisiteError:
        return False
    return True


def _start_broker_command(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _NO_PYTEST, "broker", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_ENV,
        cwd="/",
    )


def _stop(proc: subprocess.Popen[str]) -> tuple[int, str]:
    """SIGINT the broker command; its exit status and everything it wrote on stderr."""
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, err


def _stderr_line(proc: subprocess.Popen[str]) -> str:
    assert proc.stderr is not None
    return proc.stderr.readline().rstrip("\n")


# -- kafka-async broker ------------------------------------------------------------------------


@pytest.mark.timeout(400)
def test_broker_default_is_apache_kafka_on_9092_and_needs_no_pytest() -> None:
    """Java 17+ is here: the default broker is Apache Kafka, on 9092 when it is free; the first
    stdout line is the address, the first stderr line kind, version and address."""
    if not _java():
        pytest.skip("no Java 17+: the default is Tansu here (the next test covers it)")
    free = _port_9092_free()
    proc = _start_broker_command()
    try:
        assert proc.stdout is not None
        address = proc.stdout.readline().strip()
        first = _stderr_line(proc)
        assert first.startswith("Apache Kafka 4."), first
        assert f"listening on {address} " in first, (address, first)
        if free:
            assert address == "127.0.0.1:9092"
        else:
            assert address != "127.0.0.1:9092"
            assert _stderr_line(proc).startswith("port 9092 is in use on 127.0.0.1")
        name = _topic()
        ok(run(["-b", address, "produce", name], stdin="hello\n"))
        assert ok(run(["-b", address, "consume", name, "-e"])).split() == ["hello"]
    finally:
        code, err = _stop(proc)
    assert code == 0, err
    assert "Traceback" not in err


def test_broker_tansu_says_which_answers_it_bends_and_needs_no_pytest() -> None:
    port = _free_port()
    proc = _start_broker_command("--kind", "tansu", "--port", str(port))
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == f"127.0.0.1:{port}"
        first = _stderr_line(proc)
        assert first.startswith("Tansu "), first
        assert f"listening on 127.0.0.1:{port} " in first
        assert _stderr_line(proc) == TANSU_BENDS
    finally:
        code, err = _stop(proc)
    assert code == 0, err


def test_broker_moves_off_a_taken_9092_and_says_so() -> None:
    holder = socket.socket()
    try:
        try:
            holder.bind(("127.0.0.1", 9092))
            holder.listen()
        except OSError:
            pass  # taken by someone else already: the same situation
        proc = _start_broker_command("--kind", "tansu")
        try:
            assert proc.stdout is not None
            address = proc.stdout.readline().strip()
            assert address.startswith("127.0.0.1:")
            assert address != "127.0.0.1:9092"
            lines = [_stderr_line(proc) for _ in range(3)]
            assert lines[2] == (
                "port 9092 is in use on 127.0.0.1; listening on a free port instead"
            ), lines
        finally:
            code, err = _stop(proc)
        assert code == 0, err
    finally:
        holder.close()


# -- Ctrl-C on produce and consume -------------------------------------------------------------


@pytest.fixture
def terminal() -> Iterator[tuple[int, int]]:
    """A pseudo-terminal (master, slave): the command's stdin is a terminal nobody types on."""
    master, slave = pty.openpty()
    try:
        yield master, slave
    finally:
        os.close(master)
        os.close(slave)


#: read(2)'s system call number (x86-64, arm64).
_READ = {"x86_64": "0", "aarch64": "63"}.get(platform.machine(), "0")


def _wait_reading_stdin(proc: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    """Until a thread of ``proc`` sits in read(2) on its stdin (Linux: /proc/PID/task/*/syscall):
    the command has started and waits for input. A fixed sleep was too short on a loaded
    machine, where importing the clients alone can take seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        for task in os.listdir(f"/proc/{proc.pid}/task"):
            try:
                with open(f"/proc/{proc.pid}/task/{task}/syscall") as f:
                    fields = f.read().split()
            except OSError:
                continue
            if fields[:2] == [_READ, "0x0"]:  # blocked in read(0, ...)
                return
        time.sleep(0.05)
    pytest.fail(f"the command did not start reading stdin within {timeout} s")


def _connected(pid: int, port: int) -> bool:
    """Whether process ``pid`` holds an established TCP connection to 127.0.0.1:``port``."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            remote_port = int(fields[2].split(":")[1], 16)
            if fields[3] == "01" and remote_port == port and fields[9] in inodes:
                return True
    return False


def _wait_started(proc: subprocess.Popen[bytes], bootstrap: str, timeout: float = 60.0) -> None:
    """Until ``proc`` reads its stdin and its producer is connected to the broker, then a
    moment for it to settle into its loop (Ctrl-C before that has nothing to report)."""
    _wait_reading_stdin(proc, timeout)
    port = int(bootstrap.rsplit(":", 1)[1])
    deadline = time.monotonic() + timeout
    while not _connected(proc.pid, port):
        assert proc.poll() is None, proc.communicate()
        if time.monotonic() > deadline:
            pytest.fail(f"the command did not connect to {bootstrap} within {timeout} s")
        time.sleep(0.05)
    time.sleep(1.0)


def _interrupt(proc: subprocess.Popen[bytes], deadline: float = 15.0) -> tuple[int, str]:
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=deadline)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        pytest.fail(f"still running {deadline} s after Ctrl-C: {err.decode()!r}")
    return proc.returncode, err.decode()


def test_ctrl_c_ends_an_interactive_produce_at_once_and_sends_what_was_typed(
    kafka_broker: str, terminal: tuple[int, int]
) -> None:
    """Two lines typed, the terminal left open: Ctrl-C sends them and exits 130 at once
    (it used to wait for Enter, and a second Ctrl-C aborted the interpreter)."""
    master, slave = terminal
    name = _topic()
    ok(run(["-b", kafka_broker, "topics", "create", name, "-p", "1"]))
    proc = subprocess.Popen(
        [*_cli("-b", kafka_broker), "produce", name, "--linger-ms", "60000"],
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_ENV,
    )
    try:
        os.write(master, b"typed-1\ntyped-2\n")
        # The lines wait in the terminal until the command reads them; once it waits for more,
        # both are read. The 60 s linger keeps them unsent until Ctrl-C.
        _wait_started(proc, kafka_broker)
        assert proc.poll() is None
        code, err = _interrupt(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 130, err
    assert "Fatal Python error" not in err, err
    assert "Traceback" not in err, err
    assert "produced 2 record(s)" in err, err
    assert ok(run(["-b", kafka_broker, "consume", name, "-e"])).split() == ["typed-1", "typed-2"]


def test_ctrl_c_ends_produce_reading_an_open_pipe(kafka_broker: str) -> None:
    name = _topic()
    proc = subprocess.Popen(
        [*_cli("-b", kafka_broker), "produce", name],
        stdin=subprocess.PIPE,  # left open, nothing written
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_ENV,
    )
    try:
        _wait_started(proc, kafka_broker)  # started and waiting on stdin
        code, err = _interrupt(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        assert proc.stdin is not None
        proc.stdin.close()
    assert code == 130, err
    assert "produced 0 record(s)" in err, err


def test_ctrl_c_ends_consume_with_130(kafka_broker: str, terminal: tuple[int, int]) -> None:
    _, slave = terminal
    name = _topic()
    ok(run(["-b", kafka_broker, "produce", name], stdin="a\n"))
    proc = subprocess.Popen(
        [*_cli("-b", kafka_broker), "consume", name],
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_ENV,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == b"a"
        code, err = _interrupt(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 130, err
    assert "consumed 1 record(s)" in err


# -- produce to a topic that does not exist ----------------------------------------------------


def test_produce_lets_the_broker_create_a_missing_topic(kafka_broker: str) -> None:
    """kcat, the console producer and our Producer let the broker auto-create the topic;
    the command used to refuse before sending anything."""
    name = _topic()
    ok(run(["-b", kafka_broker, "produce", name], stdin="first\n"))
    assert ok(run(["-b", kafka_broker, "consume", name, "-e"])).split() == ["first"]


# -- notes where Tansu bends an answer ---------------------------------------------------------


def test_commands_note_tansus_bent_answers_and_only_there(
    kafka_broker: str, kafka_service: KafkaService
) -> None:
    kafka_service.apache  # noqa: B018 - the contrast needs Apache Kafka as the run's broker (skips otherwise)
    name = _topic()
    with EmbeddedBroker() as tansu:
        ok(run(["-b", tansu.bootstrap_servers, "produce", name], stdin="x\n"))
        bent = run(["-b", tansu.bootstrap_servers, "offsets", name])
        ok(bent)
        notes = [line for line in bent.stderr.splitlines() if line.startswith("note:")]
        assert len(notes) == 1, bent.stderr
        assert "this broker is Tansu" in notes[0]
        assert "ListOffsets(latest)" in notes[0]
    ok(run(["-b", kafka_broker, "produce", name], stdin="x\n"))
    true = run(["-b", kafka_broker, "offsets", name])
    ok(true)
    assert "note:" not in true.stderr, true.stderr


def test_a_second_ctrl_c_drops_what_cannot_be_sent_and_exits_at_once(
    apache_kafka: ApacheKafka, terminal: tuple[int, int]
) -> None:
    """The broker is gone with two records read and unsent: the first Ctrl-C waits for them
    (up to --timeout), the second gives up at once and says they were dropped."""
    master, slave = terminal
    server = apache_kafka.bootstrap_servers
    argv = _cli("-b", server, "--timeout", "120", "produce", _topic(), "--linger-ms", "60000")
    proc = subprocess.Popen(
        argv,
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_ENV,
    )
    try:
        os.write(master, b"lost-1\nlost-2\n")
        _wait_started(proc, server)  # both read, waiting out the linger
        apache_kafka.kill()
        proc.send_signal(signal.SIGINT)
        time.sleep(1.0)
        assert proc.poll() is None  # still trying to send the two records
        code, err = _interrupt(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 130, err
    assert "interrupted: sending the 2 record(s) read so far" in err, err
    assert "read 2 record(s); those not yet acknowledged were dropped" in err, err
    assert "Fatal Python error" not in err
