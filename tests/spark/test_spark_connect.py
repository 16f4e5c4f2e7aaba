"""The ``kafka_async`` data source in a Spark Connect session (Spark's client-server mode).

The server is PySpark's own: ``sbin/start-connect-server.sh --wait`` from the installed
pyspark distribution, in the foreground, listening on 127.0.0.1 only. The client is a
``SparkSession.builder.remote("sc://127.0.0.1:PORT")`` session in this process; it registers
the source with ``spark.dataSource.register`` (our :func:`kafka_async.spark.register`), which
ships the class to the server by value. The server's Python workers (``PYSPARK_PYTHON`` =
this interpreter) then plan, read and write Kafka exactly as in a classic session.

What is checked, on the run's broker: a batch write through our sink (read back with
confluent-kafka, a peer client), a batch read through our source, and a streaming query from
our source into our sink; each record exactly once.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafka_async.testing.plugin import importorskip_or_fail, skip_or_fail

# In `make soak` for now: a Connect client cannot start in a pytest worker that already runs a
# classic Spark session (SESSION_ALREADY_EXIST), which CI's worker sharing gives it; it needs
# a process of its own (issue 26 keeps this open).
pytestmark = [pytest.mark.integration, pytest.mark.slow]

#: Deadline for the server to start (a JVM and a SparkContext; slow on a busy machine).
SERVER_START_TIMEOUT_S = 300.0
#: Deadline for the server to stop after SIGTERM (then it is killed).
SERVER_STOP_TIMEOUT_S = 20.0
#: Deadline for a streaming query (its Python processes start slowly on a busy machine).
QUERY_TIMEOUT_S = 300.0
#: Starts of the streaming query when Spark's Python process misses its connect-back wait.
START_ATTEMPTS = 3
#: The environment variables a remote session sets in this process (restored afterwards, so
#: a classic session of a later test in this worker is not taken for a Connect one).
_CONNECT_ENV = ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE", "SPARK_CONNECT_AUTHENTICATE_TOKEN")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _stop(server: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the server's own process group (the script, spark-submit and the JVM),
    SIGKILL after the deadline."""
    if server.poll() is not None:
        return
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(SERVER_STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(SERVER_STOP_TIMEOUT_S)


@pytest.fixture(scope="module")
def connect_url() -> Iterator[str]:
    """A Spark Connect server from pyspark's distribution; yields its ``sc://`` address."""
    pyspark = importorskip_or_fail("pyspark")
    importorskip_or_fail("pyarrow")
    importorskip_or_fail("grpc", "Spark Connect's client needs grpcio (the spark extra)")
    java_home = os.environ.get("JAVA_HOME")
    if not java_home and subprocess.run(["which", "java"], capture_output=True).returncode:
        skip_or_fail("Spark needs a Java runtime (java on PATH or JAVA_HOME)")
    home = Path(pyspark.__file__).parent
    script = home / "sbin" / "start-connect-server.sh"
    if not script.exists():
        skip_or_fail(f"this pyspark has no {script.relative_to(home)}")
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="spark-connect-") as tmp:
        work = Path(tmp)
        (work / "conf").mkdir()
        env = {
            **os.environ,
            "SPARK_HOME": str(home),
            # An empty configuration directory: nothing from the machine's Spark setup.
            "SPARK_CONF_DIR": str(work / "conf"),
            "SPARK_LOG_DIR": str(work / "logs"),
            "SPARK_PID_DIR": str(work / "pid"),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "PYSPARK_PYTHON": sys.executable,
        }
        command = [
            "bash",
            str(script),
            "--wait",  # foreground: the process is ours to stop
            "--master",
            "local[2]",
            "--conf",
            "spark.connect.grpc.binding.address=127.0.0.1",
            "--conf",
            f"spark.connect.grpc.binding.port={port}",
            "--conf",
            "spark.driver.host=127.0.0.1",
            "--conf",
            "spark.driver.bindAddress=127.0.0.1",
            "--conf",
            "spark.ui.enabled=false",
            "--conf",
            "spark.sql.shuffle.partitions=2",
            "--conf",
            "spark.sql.session.timeZone=UTC",
            "--conf",
            "spark.sql.streaming.stopTimeout=30s",
        ]
        log_path = work / "server.log"
        with log_path.open("wb") as log:
            server = subprocess.Popen(
                command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        try:
            deadline = time.monotonic() + SERVER_START_TIMEOUT_S
            while b"Spark Connect server started at" not in log_path.read_bytes():
                if server.poll() is not None or time.monotonic() > deadline:
                    tail = log_path.read_text(errors="replace")[-3000:]
                    pytest.fail(
                        f"the Spark Connect server did not start within "
                        f"{SERVER_START_TIMEOUT_S} s (exit code {server.poll()}):\n{tail}"
                    )
                time.sleep(0.5)
            yield f"sc://127.0.0.1:{port}"
        finally:
            _stop(server)


@pytest.fixture(scope="module")
def connect(connect_url: str) -> Iterator[Any]:
    """A Spark Connect session with the ``kafka_async`` format registered."""
    from pyspark.sql import SparkSession

    from kafka_async.spark import register

    saved = {name: os.environ.get(name) for name in _CONNECT_ENV}
    session = SparkSession.builder.remote(connect_url).getOrCreate()
    try:
        # The remote session's class, not the classic one: this really is Spark Connect.
        assert type(session).__module__ == "pyspark.sql.connect.session"
        register(session)
        yield session
    finally:
        session.stop()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.mark.timeout(600)  # includes the server's start; minutes on a loaded machine
def test_connect_batch_write_and_read(
    connect: Any, kafka_broker: str, new_topic: Any, ck_consume_all: Any
) -> None:
    topic = new_topic(2, prefix="connect")
    rows = [(f"k{i}", f"v{i}".encode(), i % 2) for i in range(300)]
    df = connect.createDataFrame(rows, "key string, value binary, partition int")
    df.write.format("kafka_async").option("kafka.bootstrap.servers", kafka_broker).option(
        "topic", topic
    ).mode("append").save()

    got = ck_consume_all(kafka_broker, topic, 2, len(rows))
    expected = Counter((p, k.encode(), v) for k, v, p in rows)
    assert Counter((m.partition(), m.key(), m.value()) for m in got) == expected

    read = (
        connect.read.format("kafka_async")
        .option("kafka.bootstrap.servers", kafka_broker)
        .option("subscribe", topic)
        .load()
    )
    assert read.columns == [
        "key",
        "value",
        "topic",
        "partition",
        "offset",
        "timestamp",
        "timestampType",
    ]
    back = read.select("partition", "key", "value", "topic", "offset").collect()
    assert Counter((r.partition, bytes(r.key), bytes(r.value)) for r in back) == expected
    assert {r.topic for r in back} == {topic}
    for p in (0, 1):
        assert sorted(r.offset for r in back if r.partition == p) == list(range(150))


@pytest.mark.timeout(900)
def test_connect_stream_from_source_to_sink(
    connect: Any, kafka_broker: str, new_topic: Any, ck_produce: Any, ck_consume_all: Any
) -> None:
    source = new_topic(3, prefix="connect-in")
    sink = new_topic(3, prefix="connect-out")
    now = int(time.time() * 1000)
    records: list[tuple[int, bytes, bytes, list[tuple[str, bytes]], int]] = [
        (i % 3, f"k{i}".encode(), f"v{i}".encode(), [], now) for i in range(600)
    ]
    ck_produce(kafka_broker, source, records)

    with tempfile.TemporaryDirectory(prefix="connect-ckpt-") as checkpoint:
        for attempt in range(1, START_ATTEMPTS + 1):
            query = (
                connect.readStream.format("kafka_async")
                .option("kafka.bootstrap.servers", kafka_broker)
                .option("subscribe", source)
                .option("startingOffsets", "earliest")
                .option("maxOffsetsPerTrigger", "250")
                .load()
                .selectExpr("key", "value", "partition")
                .writeStream.format("kafka_async")
                .option("kafka.bootstrap.servers", kafka_broker)
                .option("topic", sink)
                .option("checkpointLocation", checkpoint)
                .trigger(availableNow=True)
                .start()
            )
            try:
                assert query.awaitTermination(QUERY_TIMEOUT_S), "the query did not finish"
                break
            except Exception as exc:
                # Spark waits a fixed 10 s for a new Python process (the source's on the
                # driver, a commit's, a worker) to connect back; on an overloaded machine
                # its start-up can take longer. The query starts again from its checkpoint
                # (anything else fails the test; see the check below).
                if "failed to connect back" not in str(exc) or attempt == START_ATTEMPTS:
                    raise
            finally:
                query.stop()
    expected = Counter((p, k, v) for p, k, v, _h, _ts in records)
    got = ck_consume_all(kafka_broker, sink, 3, len(records))
    found = Counter((m.partition(), m.key(), m.value()) for m in got)
    if attempt == 1:
        # 600 records at most 250 per trigger (three micro-batches), each record once.
        assert found == expected
    else:
        # A failed start may have been past a written, uncommitted micro-batch (the
        # driver-side commit runs in a new Python process too): the sink is at-least-once,
        # so every record is there, none other, some maybe twice.
        assert set(found) == set(expected)
