"""Is a failure the broker's or ours? The same operation through a peer client decides.

Where a broker advertises an API but fails it, :func:`librdkafka_error` runs the same operation
through librdkafka and :func:`confirm_broker_gap` turns the two answers into a verdict: a skip
quoting both errors when librdkafka fails too (the gap is the broker's), a test failure when
librdkafka succeeds (the bug is ours). :func:`java_admin_error` asks the Java client, the
reference, where librdkafka accepts what the Java client refuses.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

__all__ = [
    "confirm_broker_gap",
    "java_admin_error",
    "librdkafka_admin_error",
    "librdkafka_error",
    "librdkafka_log_append_time_error",
    "librdkafka_subprocess_error",
]


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _results(outcome: object) -> Iterable[Any]:
    """The futures (or plain values) an operation of confluent-kafka's admin API returned."""
    if isinstance(outcome, Mapping):
        return list(outcome.values())
    if isinstance(outcome, list | tuple):
        return list(outcome)
    return [outcome]


def librdkafka_error(
    operation: Callable[[], object],
    *,
    check: Callable[[Any], str | None] | None = None,
    timeout: float = 15.0,
) -> str | None:
    """Run ``operation`` (a call into confluent-kafka) and describe how it failed.

    None when it succeeded; otherwise the exception's type and message. A result made of
    futures (as confluent-kafka's admin calls return) is waited on, ``timeout`` seconds each,
    and the first failed future is the answer. ``check`` judges each value that came back:
    it returns None when the value is right, or what is wrong with it (an answer that is not
    an error can still be the broker's wrong answer, e.g. an offset of -1001).
    """
    try:
        outcome = operation()
        for item in _results(outcome):
            result = getattr(item, "result", None)
            value = result(timeout=timeout) if callable(result) else item
            wrong = check(value) if check is not None else None
            if wrong is not None:
                return f"a wrong answer: {wrong}"
    except Exception as exc:  # the error is the evidence asked for
        return _describe(exc)
    return None


def librdkafka_admin_error(
    bootstrap_servers: str,
    operation: Callable[[Any], object],
    *,
    check: Callable[[Any], str | None] | None = None,
    timeout: float = 15.0,
) -> str | None:
    """Run ``operation(admin)`` with a confluent-kafka ``AdminClient`` on the same broker.

    None when librdkafka got what it asked for (and ``check`` found nothing wrong with it,
    see :func:`librdkafka_error`); otherwise its error (``"not asked (...)"`` when
    confluent-kafka is not installed).
    """
    try:
        from confluent_kafka.admin import AdminClient
    except ImportError as exc:
        return f"not asked (confluent-kafka is not installed: {exc})"
    admin = AdminClient(
        {"bootstrap.servers": bootstrap_servers, "socket.timeout.ms": int(timeout * 1000)}
    )
    return librdkafka_error(lambda: operation(admin), check=check, timeout=timeout)


def librdkafka_log_append_time_error(
    bootstrap_servers: str, topic: str, sent_timestamp_ms: int, *, timeout: float = 15.0
) -> str | None:
    """None when librdkafka's delivery report for a record sent to ``topic`` (a LogAppendTime
    topic) carries the broker's log-append time; else what it carried instead."""
    try:
        from confluent_kafka import TIMESTAMP_LOG_APPEND_TIME
        from confluent_kafka import Producer as RdProducer
    except ImportError as exc:
        return f"not asked (confluent-kafka is not installed: {exc})"
    reports: list[tuple[int, int]] = []
    producer = RdProducer({"bootstrap.servers": bootstrap_servers, "linger.ms": 0})

    def produce() -> None:
        producer.produce(
            topic,
            b"librdkafka",
            timestamp=sent_timestamp_ms,
            on_delivery=lambda err, msg: reports.append(msg.timestamp()),
        )
        if producer.flush(timeout) != 0:
            raise TimeoutError(f"librdkafka did not deliver within {timeout} s")

    def judge(_: object) -> str | None:
        kind, ts = reports[0]
        if kind == TIMESTAMP_LOG_APPEND_TIME and ts != sent_timestamp_ms:
            return None
        return f"delivery report timestamp type {kind}, timestamp {ts} (sent {sent_timestamp_ms})"

    return librdkafka_error(produce, check=judge, timeout=timeout)


def librdkafka_subprocess_error(
    script: str, args: Sequence[str] = (), *, timeout: float = 60.0
) -> str | None:
    """Run a confluent-kafka ``script`` in a child Python process; None when it exits 0.

    For answers librdkafka aborts on (it calls ``abort()`` on some invalid responses, which
    would take the test process with it). Otherwise: its exit status and last stderr line.
    """
    try:
        done = subprocess.run(
            [sys.executable, "-c", script, *args],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return f"librdkafka did not finish within {timeout} s"
    if done.returncode == 0:
        return None
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    how = (
        f"killed by signal {-done.returncode}"
        if done.returncode < 0
        else f"exit status {done.returncode}"
    )
    return f"{how}: {lines[-1] if lines else '(no output)'}"


_JAVA_ADMIN_PROBE = """
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;

public class AdminProbe {
    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("request.timeout.ms", "10000");
        props.put("default.api.timeout.ms", "15000");
        try (Admin admin = Admin.create(props)) {
            %s;
        }
    }
}
"""


def java_admin_error(
    bootstrap_servers: str, expression: str, *, timeout: float = 90.0
) -> str | None:
    """Evaluate a Java ``expression`` over an ``org.apache.kafka.clients.admin.Admin`` named
    ``admin`` (say ``admin.describeUserScramCredentials().all().get()``) against the same
    broker, with the Java client of Apache Kafka's distribution (a single-file program).

    None when it succeeded; else the Java error (``"not asked (...)"`` without Java). For
    answers librdkafka accepts but the Java client, the reference, refuses.
    """
    from kafka_async.testing.apache import KafkaPrerequisiteError, ensure_distribution

    try:
        dist = ensure_distribution()
    except KafkaPrerequisiteError as exc:
        return f"not asked ({exc})"
    with tempfile.TemporaryDirectory(prefix="kafka-async-java-") as folder:
        source = Path(folder) / "AdminProbe.java"
        source.write_text(_JAVA_ADMIN_PROBE % expression)
        try:
            done = subprocess.run(
                dist.java_command(str(source), bootstrap_servers, jvm=["-Xmx256m"]),
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            return f"the Java client did not finish within {timeout} s"
    if done.returncode == 0:
        return None
    # The admin thread logs the root cause (a response it could not read) on stdout; the
    # call then fails on stderr with the consequence. Quote both, root cause first.
    found: list[str] = []
    for line in (done.stdout + "\n" + done.stderr).splitlines():
        line = line.strip()
        if "Exception" in line and not line.startswith("at ") and line not in found:
            found.append(line.split(" - ", 1)[-1])
    return "; ".join(found[-3:]) if found else f"exit status {done.returncode}"


def confirm_broker_gap(
    what: str, ours: BaseException | str, theirs: str | None, *, peer: str = "librdkafka"
) -> NoReturn:
    """Decide whether a failure is the broker's: skip when librdkafka failed too, else fail.

    ``ours`` is what kafka_async got, ``theirs`` what :func:`librdkafka_error` (or
    :func:`librdkafka_admin_error`) reported for the same operation on the same broker. When
    librdkafka succeeded the broker can do it and the failure is ours: the test fails.
    """
    import pytest

    mine = ours if isinstance(ours, str) else _describe(ours)
    if theirs is None:
        pytest.fail(
            f"{what}: kafka_async got {mine}, but {peer} succeeded on the same broker",
            pytrace=False,
        )
    pytest.skip(f"broker gap: {what}: kafka_async got {mine}; {peer} got {theirs}")
