"""The Java client as a peer: Apache Kafka's own test tools, driven from Python.

``org.apache.kafka:kafka-tools`` ships the programs Kafka's system tests drive the Java client
with; :func:`~kafka_async.testing.apache.ensure_distribution` already puts them on the
broker's classpath. This module starts them as child processes and reads what they print:

* :class:`VerifiableProducer` writes ``"PREFIX.N"`` values (N = 0, 1, 2, ...) and prints one
  JSON event per acknowledgement or failure; :func:`java_ledger` turns those events into a
  :class:`~tests.harness.ledger.Ledger`, so the same checker that judges our producer
  judges the Java one.
* :class:`VerifiableConsumer` joins a consumer group and prints its assignments, records
  (``--verbose``) and commits as JSON events; :attr:`VerifiableConsumer.assignment` follows
  them, so a test can check that a mixed group never hands a partition to two members.
* :func:`console_consume` runs ``ConsoleConsumer`` with a formatter that prints partition,
  offset, headers, key and value of each record (:class:`ConsoleRecord`).
* :class:`TransactionalMessageCopier` (and :func:`transactional_copy`, which runs it to the
  end) copies a partition in transactions, optionally with random aborts, committing the
  consumed offsets in each one; :attr:`TransactionalMessageCopier.copied` follows its
  progress.

Every process is started with ``PR_SET_PDEATHSIG`` (it dies with the test process), writes
its output to a log file next to the broker logs, and is stopped by the context manager or
:meth:`JavaProcess.stop` / :meth:`JavaProcess.kill` (:meth:`JavaProcess.pause` and
:meth:`JavaProcess.resume` freeze and release it).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import anyio

from kafka_async.testing import _procs
from kafka_async.testing.apache import KafkaDistribution
from tests.harness.jars import first_class_present
from tests.harness.ledger import Ledger, Observed, encode_value

__all__ = [
    "CONSOLE_CONSUMER_CLASSES",
    "ConsoleRecord",
    "JavaProcess",
    "JavaToolError",
    "TransactionalMessageCopier",
    "VerifiableConsumer",
    "VerifiableProducer",
    "console_consume",
    "console_consumer_class",
    "java_ledger",
    "transactional_copy",
]

#: JVM options for the short-lived tool JVMs: small heap, fast start-up.
_TOOL_JVM = ("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto")
_LOG4J2 = """\
status = error
appender.err.type = Console
appender.err.name = ERR
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.err.ref = ERR
"""
#: The Java class names of the classic-protocol assignors, by their protocol names.
JAVA_ASSIGNORS: Mapping[str, str] = {
    "range": "org.apache.kafka.clients.consumer.RangeAssignor",
    "roundrobin": "org.apache.kafka.clients.consumer.RoundRobinAssignor",
    "sticky": "org.apache.kafka.clients.consumer.StickyAssignor",
    "cooperative-sticky": "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
}


class JavaToolError(RuntimeError):
    """A Java tool failed: exited with an error status, or did not finish in time."""


def _properties(folder: Path, name: str, config: Mapping[str, object]) -> Path:
    path = folder / name
    lines = [f"{k}={v}" for k, v in config.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


class JavaProcess:
    """One Java tool in a child process; its output goes to a log file, read as lines.

    Lines that are JSON objects become :attr:`events` (in order); anything else (log output,
    ConsoleConsumer's records) becomes :attr:`lines`. Call :meth:`poll` (or any method that
    waits) to read what was printed since the last look.
    """

    def __init__(
        self,
        dist: KafkaDistribution,
        main: str,
        args: Sequence[str],
        *,
        name: str,
        jvm: Sequence[str] = (),
        folder: Path | None = None,
    ) -> None:
        self.name = name
        #: Scratch folder (config files), removed when the process is reaped.
        self.folder = folder or Path(tempfile.mkdtemp(prefix=f"java-{name}-"))
        (self.folder / "log4j2.properties").write_text(_LOG4J2)
        self.log_path = _procs.log_dir() / f"java-{name}-{uuid.uuid4().hex[:8]}.log"
        self.argv = dist.java_command(
            main,
            *args,
            jvm=[
                *_TOOL_JVM,
                f"-Dlog4j2.configurationFile={self.folder / 'log4j2.properties'}",
                *jvm,
            ],
        )
        self.events: list[dict[str, Any]] = []
        self.lines: list[str] = []
        self._log: IO[bytes] | None = None
        self._offset = 0
        self._partial = b""
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> JavaProcess:
        """Start the JVM (returns at once; wait for an event to know it is ready)."""
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in _reap
        self.proc = _procs.spawn(self.argv, log=self._log, env=os.environ)
        return self

    @property
    def running(self) -> bool:
        """True while the JVM runs."""
        return self.proc is not None and self.proc.poll() is None

    @property
    def returncode(self) -> int | None:
        """The exit status once the JVM exited (None while it runs)."""
        return None if self.proc is None else self.proc.poll()

    def poll(self) -> None:
        """Read the output printed since the last call into :attr:`events` / :attr:`lines`."""
        try:
            with open(self.log_path, "rb") as fh:
                fh.seek(self._offset)
                chunk = fh.read()
        except OSError:
            return
        self._offset += len(chunk)
        data = self._partial + chunk
        *complete, self._partial = data.split(b"\n")
        for raw in complete:
            line = raw.decode("utf-8", "replace")
            if line.startswith("{"):
                try:
                    event = json.loads(line)
                except ValueError:
                    event = None
                if isinstance(event, dict):
                    self.on_event(event)
                    self.events.append(event)
                    continue
            self.lines.append(line)

    def on_event(self, event: dict[str, Any]) -> None:
        """Called for each JSON event as it is read (subclasses keep state here)."""

    def named(self, name: str) -> list[dict[str, Any]]:
        """The events called ``name`` so far."""
        self.poll()
        return [e for e in self.events if e.get("name") == name]

    async def wait_until(
        self,
        predicate: Callable[[], bool],
        timeout: float,  # noqa: ASYNC109 - a deadline, by design
        what: str = "",
    ) -> None:
        """Poll the output until ``predicate()`` holds; raise :class:`JavaToolError` after
        ``timeout`` seconds or when the JVM exits first."""
        with anyio.move_on_after(timeout):
            while True:
                self.poll()
                if predicate():
                    return
                if not self.running:
                    self.poll()
                    if predicate():
                        return
                    raise JavaToolError(
                        f"{self.name} exited ({self.returncode}) before {what or 'the condition'}"
                        f"; log {self.log_path}:\n{_procs.tail(self.log_path, 30)}"
                    )
                await anyio.sleep(0.05)
        raise JavaToolError(
            f"{self.name}: no {what or 'condition'} within {timeout} s; log {self.log_path}:\n"
            f"{_procs.tail(self.log_path, 30)}"
        )

    async def wait_exit(self, timeout: float) -> int:  # noqa: ASYNC109 - a deadline
        """Wait until the JVM exits by itself; returns its status (raises after ``timeout``)."""
        assert self.proc is not None
        code: int | None = None
        with anyio.move_on_after(timeout):
            code = await _procs.wait_exit(self.proc)
        self.poll()
        if code is None:
            raise JavaToolError(
                f"{self.name} still running after {timeout} s; log {self.log_path}:\n"
                f"{_procs.tail(self.log_path, 30)}"
            )
        self._close_log()
        return code

    async def stop(self, grace: float = 15.0) -> int:
        """SIGTERM (the tools flush, commit and leave their group on it), SIGKILL after
        ``grace`` seconds; returns the exit status."""
        assert self.proc is not None
        code = await _procs.terminate_async(self.proc, grace)
        self.poll()
        self._close_log()
        return code

    def pause(self) -> None:
        """SIGSTOP: freeze the JVM where it is (a test holds it still while it changes the
        cluster); :meth:`resume` lets it go on."""
        assert self.proc is not None
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT: let a JVM frozen by :meth:`pause` go on."""
        assert self.proc is not None
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)

    async def kill(self) -> int:
        """SIGKILL (a crash: no commit, no LeaveGroup)."""
        assert self.proc is not None
        code = await _procs.kill_async(self.proc)
        self.poll()
        self._close_log()
        return code

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None
        shutil.rmtree(self.folder, ignore_errors=True)

    def close(self) -> None:
        """Kill the JVM if it still runs (blocking) and close the log."""
        if self.proc is not None and self.proc.poll() is None:
            _procs.kill_sync(self.proc)
        self.poll()
        self._close_log()

    async def __aenter__(self) -> JavaProcess:
        return self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.proc is not None and self.proc.poll() is None:
            await self.kill()
        self._close_log()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} running={self.running}>"


# --------------------------------------------------------------------------------------------
# VerifiableProducer
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProducedRecord:
    """One outcome the VerifiableProducer reported."""

    #: ``N`` of the value ``"PREFIX.N"`` (the send order).
    n: int
    partition: int
    #: The acknowledged offset (-1 for a failure).
    offset: int
    key: str | None
    #: The exception class name for a failure, None for an acknowledgement.
    error: str | None = None


class VerifiableProducer(JavaProcess):
    """``org.apache.kafka.tools.VerifiableProducer``: the Java producer writing ``PREFIX.N``.

    ``config`` goes to its ``--producer.config`` file (``enable.idempotence``,
    ``compression.type``, ``delivery.timeout.ms`` ...). ``throughput`` caps records per second
    (-1: as fast as it can); ``repeating_keys`` gives record ``N`` the key ``str(N % k)``.
    """

    def __init__(
        self,
        dist: KafkaDistribution,
        bootstrap: str,
        topic: str,
        *,
        max_messages: int,
        throughput: int = -1,
        acks: str = "all",
        config: Mapping[str, object] | None = None,
        repeating_keys: int | None = None,
        prefix: int | None = None,
        name: str = "verifiable-producer",
    ) -> None:
        self.prefix = prefix if prefix is not None else random.randrange(1, 2**31 - 1)
        self.topic = topic
        folder = Path(tempfile.mkdtemp(prefix=f"java-{name}-"))
        props = _properties(folder, "producer.properties", config or {})
        args = [
            "--bootstrap-server",
            bootstrap,
            "--topic",
            topic,
            "--max-messages",
            str(max_messages),
            "--throughput",
            str(throughput),
            "--acks",
            "-1" if acks == "all" else str(acks),
            "--value-prefix",
            str(self.prefix),
            "--producer.config",
            str(props),
        ]
        if repeating_keys is not None:
            args += ["--repeating-keys", str(repeating_keys)]
        super().__init__(
            dist, "org.apache.kafka.tools.VerifiableProducer", args, name=name, folder=folder
        )
        self.acked = 0
        self.failed = 0
        #: When the latest acknowledgement of each partition was read (monotonic).
        self.last_ack_at: dict[int, float] = {}
        #: When each acknowledgement was read, per partition (monotonic, in order).
        self.ack_times: dict[int, list[float]] = {}
        self.errors: dict[str, int] = {}
        #: The first message the tool printed for each exception class (``errors``' keys).
        self.error_messages: dict[str, str] = {}

    def on_event(self, event: dict[str, Any]) -> None:
        name = event.get("name")
        if name == "producer_send_success":
            self.acked += 1
            now = _monotonic_of(event)
            p = int(event["partition"])
            self.last_ack_at[p] = now
            self.ack_times.setdefault(p, []).append(now)
        elif name == "producer_send_error":
            self.failed += 1
            cls = str(event.get("exception", "?")).rsplit(".", 1)[-1]
            self.errors[cls] = self.errors.get(cls, 0) + 1
            self.error_messages.setdefault(cls, str(event.get("message", "")))

    def outcomes(self) -> list[ProducedRecord]:
        """Every acknowledgement and failure reported so far, in the order printed."""
        self.poll()
        out: list[ProducedRecord] = []
        for e in self.events:
            name = e.get("name")
            if name not in ("producer_send_success", "producer_send_error"):
                continue
            n = _value_n(str(e.get("value")), self.prefix)
            if n is None:
                continue
            if name == "producer_send_success":
                out.append(ProducedRecord(n, int(e["partition"]), int(e["offset"]), e.get("key")))
            else:
                out.append(
                    ProducedRecord(
                        n,
                        int(e.get("partition", -1)),
                        -1,
                        e.get("key"),
                        str(e.get("exception", "?")).rsplit(".", 1)[-1],
                    )
                )
        return out

    def summary(self) -> dict[str, Any]:
        """The tool's closing ``tool_data`` event (sent, acked, throughput), if printed."""
        data = self.named("tool_data")
        return data[-1] if data else {}


def _monotonic_of(event: Mapping[str, Any]) -> float:
    """The tool's own event time (epoch milliseconds) on this process's monotonic clock
    (the time the event is read can be much later)."""
    stamp = event.get("timestamp")
    if not isinstance(stamp, int | float):
        return time.monotonic()
    return float(stamp) / 1000.0 - (time.time() - time.monotonic())


def _value_n(value: str | None, prefix: int) -> int | None:
    if value is None:
        return None
    head, sep, n = value.partition(".")
    if not sep or head != str(prefix) or not n.isdigit():
        return None
    return int(n)


def java_ledger(
    outcomes: Iterable[ProducedRecord],
    partitions: int,
    prefix: int,
    observed: Iterable[Observed] = (),
) -> tuple[Ledger, Callable[[Iterable[Observed]], list[Observed]]]:
    """The VerifiableProducer's outcomes as a :class:`Ledger`, and a translator for what a
    reader found in the log.

    The ledger's sequence numbers are the per-partition ranks of ``N`` (the tool sends
    ``N`` in increasing order, so a partition's log must hold its records in that order).
    The translator turns observed ``"PREFIX.N"`` values into the ledger's own values, so
    :meth:`Ledger.check` counts lost, duplicated, reordered, phantom and misrouted records for
    the Java producer exactly as it does for ours. The tool reports a failure without its
    partition; pass the ``observed`` log to place failed records that are in it anyway
    (phantoms). On a one-partition topic a failure can only be partition 0's; on more, a
    failure found nowhere cannot be placed and is left out (not counted as produced). A value
    of this run that the tool never reported stays foreign.
    """
    found_in: dict[int, int] = {}
    for obs in observed:
        value = obs.value.decode("ascii", "replace") if obs.value is not None else None
        n = _value_n(value, prefix)
        if n is not None:
            found_in.setdefault(n, obs.partition)
    ledger = Ledger(partitions)
    placed: dict[int, tuple[int, int]] = {}
    by_partition: dict[int, list[ProducedRecord]] = {}
    for rec in outcomes:
        unplaced = 0 if partitions == 1 else -1
        p = rec.partition if rec.partition >= 0 else found_in.get(rec.n, unplaced)
        if 0 <= p < partitions:
            by_partition.setdefault(p, []).append(rec)
    for p in range(partitions):
        for rec in sorted(by_partition.get(p, []), key=lambda r: r.n):
            seq, _ = ledger.next_record(p)
            placed[rec.n] = (p, seq)
            if rec.error is None:
                ledger.acked(p, seq, rec.offset)
            else:
                ledger.failed(p, seq, rec.error)

    def translate(observed: Iterable[Observed]) -> list[Observed]:
        out: list[Observed] = []
        for obs in observed:
            value = obs.value.decode("ascii", "replace") if obs.value is not None else None
            n = _value_n(value, prefix)
            where = placed.get(n) if n is not None else None
            if where is None:
                out.append(obs)
            else:
                out.append(Observed(obs.partition, obs.offset, encode_value(ledger.run_id, *where)))
        return out

    return ledger, translate


# --------------------------------------------------------------------------------------------
# VerifiableConsumer
# --------------------------------------------------------------------------------------------


@dataclass
class ConsumedBatch:
    """One ``records_consumed`` event: per partition, the offsets of one poll."""

    at: float
    partitions: dict[int, tuple[int, int, int]] = field(default_factory=dict)


class VerifiableConsumer(JavaProcess):
    """``org.apache.kafka.tools.VerifiableConsumer``: a Java group member (classic protocol
    unless ``group_protocol="consumer"``), committing synchronously after every poll.

    :attr:`assignment` follows its ``partitions_assigned`` / ``partitions_revoked`` events
    (incremental under cooperative-sticky, whole under eager assignors); :attr:`records`
    holds ``(partition, offset, key, value)`` of every record it consumed (``--verbose``).
    """

    def __init__(
        self,
        dist: KafkaDistribution,
        bootstrap: str,
        topic: str,
        group_id: str,
        *,
        assignor: str = "range",
        group_protocol: str = "classic",
        session_timeout_ms: int = 6000,
        config: Mapping[str, object] | None = None,
        name: str = "verifiable-consumer",
    ) -> None:
        self.topic = topic
        folder = Path(tempfile.mkdtemp(prefix=f"java-{name}-"))
        props = _properties(folder, "consumer.properties", config or {})
        args = [
            "--bootstrap-server",
            bootstrap,
            "--topic",
            topic,
            "--group-id",
            group_id,
            "--reset-policy",
            "earliest",
            "--verbose",
            "--consumer.config",
            str(props),
        ]
        # --group-protocol came with KIP-848 (3.7); the tools of older releases reject it, and
        # classic is the default where it exists, so it is passed only for another protocol.
        if group_protocol != "classic":
            args += ["--group-protocol", group_protocol]
        if group_protocol == "classic":
            args += [
                "--assignment-strategy",
                JAVA_ASSIGNORS.get(assignor, assignor),
                "--session-timeout",
                str(session_timeout_ms),
            ]
        super().__init__(
            dist, "org.apache.kafka.tools.VerifiableConsumer", args, name=name, folder=folder
        )
        self.assignment: set[int] = set()
        self.records: list[tuple[int, int, str | None, str | None]] = []
        #: ``(monotonic time read here, partition, offset)`` of every record consumed (the
        #: time its event was read from the tool's output, shortly after it was consumed).
        self.consumed: list[tuple[float, int, int]] = []
        #: ``(monotonic time, partition, committed offset)`` of every successful commit.
        self.commits: list[tuple[float, int, int]] = []
        self.rebalances = 0

    def on_event(self, event: dict[str, Any]) -> None:
        name = event.get("name")
        if name == "partitions_assigned":
            self.rebalances += 1
            self.assignment |= {
                int(p["partition"]) for p in event.get("partitions", []) if p["topic"] == self.topic
            }
        elif name == "partitions_revoked":
            self.assignment -= {
                int(p["partition"]) for p in event.get("partitions", []) if p["topic"] == self.topic
            }
        elif name == "record_data":
            self.records.append(
                (int(event["partition"]), int(event["offset"]), event.get("key"), event["value"])
            )
            self.consumed.append((time.monotonic(), int(event["partition"]), int(event["offset"])))
        elif name == "offsets_committed" and event.get("success"):
            now = time.monotonic()
            for o in event.get("offsets", []):
                if o.get("topic") == self.topic:
                    self.commits.append((now, int(o["partition"]), int(o["offset"])))

    async def wait_started(self, timeout: float = 60.0) -> None:  # noqa: ASYNC109
        """Wait for the tool's ``startup_complete`` event."""
        await self.wait_until(lambda: bool(self.named("startup_complete")), timeout, "start-up")


# --------------------------------------------------------------------------------------------
# ConsoleConsumer
# --------------------------------------------------------------------------------------------

#: What the formatter prints for a null key, value or header value.
NULL = "<NULL>"
_SEP = "|"


@dataclass(frozen=True)
class ConsoleRecord:
    """One record as the Java ConsoleConsumer printed it (text fields; None for null)."""

    partition: int
    offset: int
    headers: tuple[tuple[str, str | None], ...]
    key: str | None
    value: str | None


def _parse_console(line: str) -> ConsoleRecord | None:
    if not line.startswith("Partition:"):
        return None
    part, off, headers, key, value = line.split(_SEP, 4)
    hs: list[tuple[str, str | None]] = []
    if headers != "NO_HEADERS":
        for item in headers.split(";"):
            hk, _, hv = item.partition(":")
            hs.append((hk, None if hv == NULL else hv))
    return ConsoleRecord(
        int(part.split(":", 1)[1]),
        int(off.split(":", 1)[1]),
        tuple(hs),
        None if key == NULL else key,
        None if value == NULL else value,
    )


#: ConsoleConsumer's class: in the tools jar from 3.9 on, in the core (Scala) jar before.
CONSOLE_CONSUMER_CLASSES = (
    "org.apache.kafka.tools.consumer.ConsoleConsumer",
    "kafka.tools.ConsoleConsumer",
)


def console_consumer_class(dist: KafkaDistribution) -> str:
    """The ConsoleConsumer class the release's jars hold."""
    found = first_class_present(dist.libs, *CONSOLE_CONSUMER_CLASSES)
    if found is None:
        raise JavaToolError(f"no ConsoleConsumer class ({CONSOLE_CONSUMER_CLASSES}) in {dist.libs}")
    return found


async def console_consume(
    dist: KafkaDistribution,
    bootstrap: str,
    topic: str,
    *,
    max_messages: int,
    isolation_level: str = "read_uncommitted",
    timeout: float = 60.0,  # noqa: ASYNC109 - a deadline, by design
    idle_ms: int = 8000,
) -> list[ConsoleRecord]:
    """Read ``topic`` from the beginning with the Java ConsoleConsumer until
    ``max_messages`` records were printed or nothing arrived for ``idle_ms``.

    Keys, values, header names and header values must be text without ``|``, ``;``, ``:``
    or line breaks (the formatter prints them raw between those separators); null prints as
    :data:`NULL`.
    """
    args = [
        "--bootstrap-server",
        bootstrap,
        "--topic",
        topic,
        "--from-beginning",
        "--max-messages",
        str(max_messages),
        "--timeout-ms",
        str(idle_ms),
        "--isolation-level",
        isolation_level,
        "--property",
        "print.partition=true",
        "--property",
        "print.offset=true",
        "--property",
        "print.headers=true",
        "--property",
        "print.key=true",
        "--property",
        f"null.literal={NULL}",
        "--property",
        f"key.separator={_SEP}",
        "--property",
        "headers.separator=;",
        "--property",
        "headers.key.separator=:",
    ]
    proc = JavaProcess(dist, console_consumer_class(dist), args, name="console-consumer")
    async with proc:
        code = await proc.wait_exit(timeout)
    if code != 0:
        raise JavaToolError(f"ConsoleConsumer exited {code}:\n{_procs.tail(proc.log_path, 30)}")
    out: list[ConsoleRecord] = []
    for line in proc.lines:
        rec = _parse_console(line)
        if rec is not None:
            out.append(rec)
    return out


# --------------------------------------------------------------------------------------------
# TransactionalMessageCopier
# --------------------------------------------------------------------------------------------


class TransactionalMessageCopier(JavaProcess):
    """``org.apache.kafka.tools.TransactionalMessageCopier``: the Java client copying one
    input partition to the same partition of ``output_topic``, one transaction per poll of
    at most ``transaction_size`` records, each committing the consumed offsets with it
    (``--use-group-metadata``); ``random_aborts`` aborts about a third of them (the copier
    then re-reads from the last committed offset). It copies up to the input's end offset at
    start-up (so fill the input first) and exits 0 when done.

    Before every poll it prints a progress event; :attr:`copied` is the latest one's count
    of records copied in committed transactions.
    """

    def __init__(
        self,
        dist: KafkaDistribution,
        bootstrap: str,
        *,
        input_topic: str,
        input_partition: int,
        output_topic: str,
        transactional_id: str,
        group_id: str,
        transaction_size: int = 50,
        random_aborts: bool = True,
        transaction_timeout_ms: int = 60_000,
        name: str = "txn-copier",
    ) -> None:
        args = [
            "--broker-list",
            bootstrap,
            "--input-topic",
            input_topic,
            "--input-partition",
            str(input_partition),
            "--output-topic",
            output_topic,
            "--transactional-id",
            transactional_id,
            "--consumer-group",
            group_id,
            "--transaction-size",
            str(transaction_size),
            "--transaction-timeout",
            str(transaction_timeout_ms),
            "--use-group-metadata",
        ]
        if random_aborts:
            args.append("--enable-random-aborts")
        super().__init__(dist, "org.apache.kafka.tools.TransactionalMessageCopier", args, name=name)
        self.copied = 0
        #: ``(monotonic time read here, records copied)`` each time the count grew.
        self.progress: list[tuple[float, int]] = []

    def on_event(self, event: dict[str, Any]) -> None:
        total = event.get("totalProcessed")
        if isinstance(total, int) and total > self.copied:
            self.copied = total
            self.progress.append((time.monotonic(), total))


async def transactional_copy(
    dist: KafkaDistribution,
    bootstrap: str,
    *,
    input_topic: str,
    input_partition: int,
    output_topic: str,
    transactional_id: str,
    group_id: str,
    transaction_size: int = 50,
    random_aborts: bool = True,
    timeout: float = 120.0,  # noqa: ASYNC109 - a deadline, by design
) -> JavaProcess:
    """Copy one input partition to ``output_topic`` in Java transactions (committing the
    consumed offsets in each), aborting some at random when ``random_aborts``; returns the
    finished process (its ``events`` hold the tool's progress reports)."""
    proc = TransactionalMessageCopier(
        dist,
        bootstrap,
        input_topic=input_topic,
        input_partition=input_partition,
        output_topic=output_topic,
        transactional_id=transactional_id,
        group_id=group_id,
        transaction_size=transaction_size,
        random_aborts=random_aborts,
    )
    async with proc:
        code = await proc.wait_exit(timeout)
    if code != 0:
        raise JavaToolError(
            f"TransactionalMessageCopier exited {code}:\n{_procs.tail(proc.log_path)}"
        )
    return proc
