"""Our Spark data source beside Spark's own Kafka connector, on the same broker and data.

``python -m benchmarks.spark`` (or ``python -m benchmarks spark``) starts a broker (see
``benchmarks/_common.py``: ``--broker tansu`` by default, ``--broker apache``, or
``$KAFKA_BOOTSTRAP_SERVERS``), writes 1,000,000 records of 100 bytes to a 4-partition topic
with our producer, reads them once with the plain ``Consumer`` (the ceiling a Spark task
running that consumer can approach), and then, for each source in a fresh process with its
own SparkSession (``--rounds`` times, interleaved):

* ``format("kafka_async")``: our data source (Python Data Source API, Python workers), its
  read tasks' consumers pooled per Python worker as in a default setup;
* ``kafka_async_nopool`` (only when named in ``--sources``): the same with
  ``kafkaConsumer.useConsumerCache=false``, one consumer per task (the source before the
  pool), to compare the two in one run. With it the parent also times
  ``kafka_io.read_range`` alone (no Spark) over one partition's share of a micro-batch,
  micro-batch after micro-batch, with and without the pool;
* ``format("kafka")``: Spark's connector, ``spark-sql-kafka-0-10`` for the installed Spark
  and Scala versions, fetched from Maven Central by Spark itself (``spark.jars.packages``);
* ``format("bench_no_kafka")``: a Python data source with the same columns that reads no
  Kafka at all (prebuilt Arrow batches, see :func:`register_no_kafka`): the ceiling of any
  Python data source here, which tells how much of a gap is Spark's Python machinery.

Each process measures, on the whole topic:

* a batch read into ``count()``, twice (the first run starts Python workers or loads the
  connector's classes; the second is warm);
* a batch read collected to the driver with ``toArrow()``, twice;
* a streaming read from the earliest offsets with ``maxOffsetsPerTrigger`` (200,000 by
  default) and ``Trigger.AvailableNow`` into the ``noop`` sink, timed from ``start()`` until
  the query stops by itself with every record read; twice (each query starts its own
  Python process on the driver for a Python source). The second query's records/s is
  reported twice: over the whole query, and over its micro-batches only (the sum of Spark's
  ``triggerExecution``), the rate of a stream that keeps running. The difference is the
  query's start and stop, which for any Python data source includes PySpark starting that
  driver-side Python process; the no-Kafka source shows how much of it is PySpark's.

On Tansu, Spark's connector reads short (the broker's ListOffsets answer cuts the last batch
of each partition, which our source probes for): its row then shows the error instead.

Spark's settings are the same for both: ``--master local[2]``, driver (= executor) memory
Spark's default unless ``--driver-memory`` is given, no UI, options ``subscribe`` and
``kafka.bootstrap.servers`` only (plus the streaming ones above).

Spark resolves the connector with Ivy. The benchmark writes an Ivy settings file that names
Maven Central as the one repository, with the Ivy home (its cache and the retrieved jars) in
``~/.cache/kafka-async/ivy`` (``$BENCH_IVY_DIR`` overrides): the first run downloads about
60 MB, later runs reuse the cache. When Maven Central has no connector for the installed
Spark version (PyPI can be ahead of it), the newest connector release of the same major
version below it is used, and the table says so. ``--connector-version`` picks one.

Options: ``--records N``, ``--partitions P``, ``--max-offsets N``, ``--rounds N`` (default
2), ``--sources kafka_async,spark,ceiling`` (the default; ``kafka_async_nopool`` may be
added), ``--driver-memory``, ``--markdown``. Figures,
not pass/fail.

``--tasks-only SASL_SSL`` (or ``SSL``, ``SASL_PLAINTEXT``) runs no Spark: it starts a
security-enabled Apache Kafka node and times ``read_range`` per task with and without the
consumer pool on PLAINTEXT and on that listener, where a new consumer's set-up includes a
TLS handshake and a SASL (SCRAM-SHA-512) exchange.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio

from benchmarks import _common
from kafka_async import Consumer, Producer, TopicPartition

SOURCES = ("kafka_async", "kafka_async_nopool", "spark", "ceiling")
#: What ``--sources`` selects by default (the no-pool variant is asked for by name).
DEFAULT_SOURCES = ("kafka_async", "spark", "ceiling")
LABELS = {
    "kafka_async": "kafka_async data source",
    "kafka_async_nopool": "kafka_async without consumer pool",
    "spark": "Spark's Kafka connector",
    "ceiling": "Python data source without Kafka",
}
FORMATS = {
    "kafka_async": "kafka_async",
    "kafka_async_nopool": "kafka_async",
    "spark": "kafka",
    "ceiling": "bench_no_kafka",
}
RECORDS = 1_000_000
PARTITIONS = 4
MAX_OFFSETS = 200_000
#: Busy-looping processes beside a loaded run (as many as this machine's 2 cores).
BURN_PROCESSES = 2
#: Deadline for one child process (a SparkSession and all its reads).
CHILD_TIMEOUT_S = 1200.0
#: Deadline for the streaming query to read everything.
STREAM_TIMEOUT_S = 600.0
MAVEN_CENTRAL = "https://repo1.maven.org/maven2"
CONNECTOR = "spark-sql-kafka-0-10"


# -- Spark's connector: which version, and Ivy set up to fetch it -------------------------------


def spark_versions() -> tuple[str, str]:
    """The installed Spark version and its Scala binary version (from pyspark's jars)."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    for jar in jars.glob("spark-core_*.jar"):
        match = re.match(r"spark-core_(\d+\.\d+)-", jar.name)
        if match:
            return pyspark.__version__, match.group(1)
    return pyspark.__version__, "2.13"


def ivy_home() -> Path:
    """Where Ivy keeps its cache and the jars Spark adds (``$BENCH_IVY_DIR`` overrides)."""
    given = os.environ.get("BENCH_IVY_DIR")
    return Path(given) if given else Path.home() / ".cache" / "kafka-async" / "ivy"


def ivy_settings(home: Path) -> Path:
    """Write (once) an Ivy settings file that resolves from Maven Central only.

    Spark's built-in chain also tries the local Maven and Ivy repositories and the
    spark-packages repository; naming one repository keeps resolution to what is reachable
    from a machine that can only reach Maven Central.
    """
    home.mkdir(parents=True, exist_ok=True)
    path = home / "ivysettings.xml"
    text = (
        "<ivysettings>\n"
        '  <settings defaultResolver="maven-central"/>\n'
        f'  <caches defaultCacheDir="{home / "cache"}"/>\n'
        "  <resolvers>\n"
        f'    <ibiblio name="maven-central" m2compatible="true" root="{MAVEN_CENTRAL}/"/>\n'
        "  </resolvers>\n"
        "</ivysettings>\n"
    )
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    return path


def _release_key(version: str) -> tuple[int, ...] | None:
    """``(4, 2, 0)`` for a release version, None for previews, RCs and snapshots."""
    if not re.fullmatch(r"\d+(\.\d+)*", version):
        return None
    return tuple(int(p) for p in version.split("."))


def _cached_versions(home: Path, artifact: str) -> list[str]:
    folder = home / "cache" / "org.apache.spark" / artifact
    return [p.name[len("ivy-") : -len(".xml")] for p in folder.glob("ivy-*.xml")]


def _published_versions(artifact: str) -> list[str]:
    url = f"{MAVEN_CENTRAL}/org/apache/spark/{artifact}/maven-metadata.xml"
    with urllib.request.urlopen(url, timeout=30) as answer:
        body = answer.read().decode()
    return re.findall(r"<version>([^<]+)</version>", body)


def connector_version(spark_version: str, scala: str, home: Path) -> tuple[str, str]:
    """The connector version to use and a note when it is not the installed Spark's.

    The installed version when Maven Central (or the Ivy cache) has it; otherwise the newest
    release with the same major version below it.
    """
    artifact = f"{CONNECTOR}_{scala}"
    cached = _cached_versions(home, artifact)
    if spark_version in cached:
        return spark_version, ""
    try:
        published = _published_versions(artifact)
    except OSError as exc:
        if not cached:
            raise RuntimeError(
                f"cannot list {artifact} versions on Maven Central and none is cached: {exc}"
            ) from exc
        published = cached
    if spark_version in published:
        return spark_version, ""
    want = _release_key(spark_version)
    candidates = [
        (key, v)
        for v in published
        if (key := _release_key(v)) is not None and want is not None and key[0] == want[0]
        if key < want
    ]
    if not candidates:
        raise RuntimeError(f"Maven Central has no {artifact} release for Spark {spark_version}")
    chosen = max(candidates)[1]
    return chosen, f"Maven Central has no {artifact} {spark_version}; using {chosen}"


# -- child side: one source, one SparkSession ---------------------------------------------------


def _session(args: argparse.Namespace) -> Any:
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master(args.master)
        .appName(f"kafka_async-bench-{args.child}")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
    )
    if args.driver_memory:
        builder = builder.config("spark.driver.memory", args.driver_memory)
    if args.child == "spark":
        home = ivy_home()
        builder = (
            builder.config("spark.jars.packages", args.package)
            .config("spark.jars.ivy", str(home))
            .config("spark.jars.ivySettings", str(ivy_settings(home)))
        )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if args.child in ("kafka_async", "kafka_async_nopool"):
        from kafka_async.spark import register

        register(spark)
    elif args.child == "ceiling":
        register_no_kafka(spark)
    return spark


def register_no_kafka(spark: Any, chunk: int = 20_000) -> None:
    """Register ``bench_no_kafka``: a Python data source with our columns and no Kafka.

    Each task yields one prebuilt Arrow batch of ``chunk`` rows (100-byte values, as the
    topic holds) again and again, so its Python work is next to nothing: what it measures is
    Spark's own cost of a Python data source (Python workers, Arrow from Python to the JVM,
    and for streams the Python process that plans micro-batches), the most any Python data
    source can reach here. Options: ``records``, ``partitions`` (tasks per batch read and per
    micro-batch) and, streaming, ``maxOffsetsPerTrigger``. Offsets are ``{"rows": n}``.

    The classes are made here, inside a function, so cloudpickle ships them to the Python
    workers by value and the workers need not import this module.
    """
    from pyspark.sql.datasource import (
        DataSource,
        DataSourceReader,
        DataSourceStreamReader,
        InputPartition,
    )
    from pyspark.sql.streaming.datasource import ReadMaxRows, SupportsTriggerAvailableNow

    from kafka_async.spark.rows import spark_schema

    def batches(rows: int) -> Iterator[Any]:
        pa = importlib.import_module("pyarrow")
        from kafka_async.spark.rows import arrow_schema

        size = min(chunk, rows)
        value = b"x" * 100
        batch = pa.RecordBatch.from_arrays(
            [
                pa.nulls(size, pa.binary()),
                pa.array([value] * size, pa.binary()),
                pa.repeat(pa.scalar("t", pa.string()), size),
                pa.repeat(pa.scalar(0, pa.int32()), size),
                pa.array(range(size), pa.int64()),
                pa.array([1_700_000_000_000_000] * size, pa.timestamp("us", tz="UTC")),
                pa.repeat(pa.scalar(0, pa.int32()), size),
            ],
            schema=arrow_schema(False),
        )
        left = rows
        while left > 0:
            yield batch if left >= size else batch.slice(0, left)
            left -= size

    def split(rows: int, tasks: int) -> list[Any]:
        cuts = [rows * i // tasks for i in range(tasks + 1)]
        return [InputPartition(cuts[i + 1] - cuts[i]) for i in range(tasks)]

    class Batch(DataSourceReader):  # type: ignore[misc,unused-ignore]
        def __init__(self, options: Mapping[str, str]) -> None:
            self.records = int(options["records"])
            self.tasks = int(options["partitions"])

        def partitions(self) -> list[Any]:
            return split(self.records, self.tasks)

        def read(self, partition: Any) -> Iterator[Any]:
            return batches(partition.value)

    class Stream(DataSourceStreamReader, SupportsTriggerAvailableNow):  # type: ignore[misc,unused-ignore]
        def __init__(self, options: Mapping[str, str]) -> None:
            self.records = int(options["records"])
            self.tasks = int(options["partitions"])
            self.limit = int(options["maxOffsetsPerTrigger"])

        def initialOffset(self) -> dict[str, int]:
            return {"rows": 0}

        def getDefaultReadLimit(self) -> Any:
            return ReadMaxRows(self.limit)

        def prepareForTriggerAvailableNow(self) -> None:
            return None

        def latestOffset(self, start: dict[str, int], limit: Any) -> dict[str, int]:
            return {"rows": min(self.records, start["rows"] + limit.max_rows)}

        def partitions(self, start: dict[str, int], end: dict[str, int]) -> list[Any]:
            rows = end["rows"] - start["rows"]
            return split(rows, self.tasks) if rows else []

        def read(self, partition: Any) -> Iterator[Any]:
            return batches(partition.value)

        def commit(self, end: dict[str, int]) -> None:
            return None

    class NoKafka(DataSource):  # type: ignore[misc,unused-ignore]
        @classmethod
        def name(cls) -> str:
            return FORMATS["ceiling"]

        def schema(self) -> Any:
            return spark_schema(False)

        def reader(self, schema: Any) -> Batch:
            return Batch(self.options)

        def streamReader(self, schema: Any) -> Stream:
            return Stream(self.options)

    spark.dataSource.register(NoKafka)


def _load(spark: Any, args: argparse.Namespace, streaming: bool) -> Any:
    fmt = FORMATS[args.child]
    reader = (spark.readStream if streaming else spark.read).format(fmt)
    if args.child == "ceiling":
        reader = reader.option("records", str(args.n)).option("partitions", str(args.partitions))
    else:
        reader = reader.option("kafka.bootstrap.servers", args.bootstrap).option(
            "subscribe", args.topic
        )
    if args.child == "kafka_async_nopool":
        reader = reader.option("kafkaConsumer.useConsumerCache", "false")
    if streaming:
        reader = reader.option("startingOffsets", "earliest").option(
            "maxOffsetsPerTrigger", str(args.max_offsets)
        )
    return reader.load()


def _child(args: argparse.Namespace) -> None:
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # the driver binds to loopback only
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    started = time.perf_counter()
    spark = _session(args)
    out: dict[str, Any] = {"session_s": time.perf_counter() - started}
    try:
        df = _load(spark, args, streaming=False)
        for label in ("first", "warm") if args.reads == "all" else ():
            start = time.perf_counter()
            count = df.count()
            out[f"count_{label}"] = time.perf_counter() - start
            if count != args.n:
                raise RuntimeError(f"count() gave {count:,}, wrote {args.n:,}")
        for label in ("first", "warm") if args.reads == "all" else ():
            start = time.perf_counter()
            rows = df.toArrow().num_rows
            out[f"arrow_{label}"] = time.perf_counter() - start
            if rows != args.n:
                raise RuntimeError(f"toArrow() gave {rows:,} rows, wrote {args.n:,}")
        for label in ("first", "warm"):
            elapsed, batches, phases = _stream(spark, args)
            out[f"stream_{label}"] = elapsed
            # The same records over the micro-batches' own time (Spark's triggerExecution):
            # the rate of a query that keeps running, without its one-off start and stop.
            out[f"batches_{label}"] = phases["insideBatches"] / 1000
            out["stream_batches"] = batches
            out[f"phases_{label}"] = phases
    finally:
        spark.stop()
    print(json.dumps(out), flush=True)


def _stream(spark: Any, args: argparse.Namespace) -> tuple[float, int, dict[str, float]]:
    """Seconds from start() until an AvailableNow query read every record, its batches, and
    the milliseconds per micro-batch (mean) of each phase Spark's progress reports, plus
    the milliseconds outside the micro-batches (see :func:`_outside`)."""
    with tempfile.TemporaryDirectory(prefix="bench-spark-ckpt-") as checkpoint:
        stream = _load(spark, args, streaming=True)
        start = time.perf_counter()
        start_epoch = time.time()
        query = (
            stream.writeStream.format("noop")
            .trigger(availableNow=True)
            .option("checkpointLocation", checkpoint)
            .start()
        )
        try:
            done = query.awaitTermination(STREAM_TIMEOUT_S)
            elapsed = time.perf_counter() - start
            end_epoch = start_epoch + elapsed
            if not done:
                raise RuntimeError(f"the streaming query did not finish in {STREAM_TIMEOUT_S} s")
            progress = query.recentProgress
        finally:
            query.stop()
    rows = sum(p["numInputRows"] for p in progress)
    with_rows = [p for p in progress if p["numInputRows"]]
    if rows != args.n:
        raise RuntimeError(f"the streaming query read {rows:,} records, wrote {args.n:,}")
    phases: dict[str, float] = {}
    for p in with_rows:
        for key, ms in p.get("durationMs", {}).items():
            phases[key] = phases.get(key, 0.0) + ms / len(with_rows)
    phases.update(_outside(progress, start_epoch, end_epoch))
    return elapsed, len(with_rows), phases


def _epoch(stamp: str) -> float:
    """Seconds since the epoch of a progress ``timestamp`` (``2026-01-31T12:00:00.123Z``)."""
    from datetime import datetime

    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def _outside(progress: list[Any], start: float, end: float) -> dict[str, float]:
    """Milliseconds of a query outside its micro-batches: from ``start()`` until the first
    micro-batch's trigger began (the query's thread, the source's set-up: for a Python
    source its driver-side Python process), and from the end of the last micro-batch until
    ``awaitTermination`` returned (stopping the sources). ``start``/``end`` are epoch
    seconds; the progress reports' clock is the same machine's."""
    if not progress:
        return {}
    first = _epoch(progress[0]["timestamp"])
    last = progress[-1]
    last_end = (
        _epoch(last["timestamp"]) + last.get("durationMs", {}).get("triggerExecution", 0) / 1000
    )
    inside = sum(p.get("durationMs", {}).get("triggerExecution", 0) for p in progress)
    return {
        "insideBatches": inside,
        "startToFirstBatch": (first - start) * 1000,
        "lastBatchToEnd": (end - last_end) * 1000,
        "outsideBatches": (end - start) * 1000 - inside,
    }


# -- parent side ---------------------------------------------------------------------------------


async def _fill(bootstrap: str, topic: str, records: int, partitions: int) -> None:
    from kafka_async.testing.topics import acreate_topic

    await acreate_topic(bootstrap, topic, partitions)
    payload = b"x" * 92
    async with Producer(bootstrap_servers=bootstrap, linger_ms=5) as producer:
        for i in range(records):
            await producer.enqueue(
                topic, value=i.to_bytes(8, "big") + payload, partition=i % partitions
            )
        await producer.flush()


async def _consume(bootstrap: str, topic: str, records: int, partitions: int) -> float:
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    async with Consumer(bootstrap_servers=bootstrap, group_id=None) as consumer:
        consumer.assign(tps)
        for tp in tps:
            consumer.seek(tp, 0)
        start = time.perf_counter()
        seen = 0
        with anyio.fail_after(600):
            while seen < records:
                batch = await consumer.getmany(timeout_ms=500, max_records=20_000)
                seen += sum(len(v) for v in batch.values())
        return time.perf_counter() - start


def _task_costs(
    bootstrap: str,
    topic: str,
    records: int,
    partitions: int,
    max_offsets: int,
    security: Mapping[str, str] | None = None,
) -> dict[str, list[float]]:
    """Milliseconds per read task outside Spark: ``kafka_io.read_range`` of one partition's
    share of a micro-batch, micro-batch after micro-batch, with the consumer pool and
    without (one consumer and event loop per task, as before the pool)."""
    from kafka_async.spark import consumer_pool, kafka_io
    from kafka_async.spark.options import parse_source_options
    from kafka_async.spark.planning import OffsetRange

    share = max(1, max_offsets // partitions)
    per_partition = records // partitions
    out: dict[str, list[float]] = {"pool_first": [], "pool": [], "no_pool": []}
    for pooled in (True, False):
        opts = parse_source_options(
            {
                "kafka.bootstrap.servers": bootstrap,
                "subscribe": topic,
                "kafkaConsumer.useConsumerCache": str(pooled).lower(),
                **(security or {}),
            },
            streaming=True,
        )
        for p in range(partitions):
            for k, start in enumerate(range(0, per_partition, share)):
                rng = OffsetRange(topic, p, start, min(start + share, per_partition))
                began = time.perf_counter()
                rows = sum(batch.num_rows for batch in kafka_io.read_range(opts, rng))
                elapsed = (time.perf_counter() - began) * 1000
                if rows != rng.size:
                    raise RuntimeError(f"read_range gave {rows:,} rows for {rng}")
                key = "no_pool" if not pooled else ("pool_first" if k == 0 else "pool")
                out[key].append(elapsed)
    consumer_pool.shared().clear()
    return out


def _tasks_by_listener(args: argparse.Namespace) -> None:
    """``--tasks-only``: the per-task cost of ``read_range`` with and without the consumer
    pool, on the PLAINTEXT listener and on ``args.tasks_only`` (SSL, SASL_PLAINTEXT or
    SASL_SSL with SCRAM-SHA-512 as a super user) of one security-enabled Apache Kafka node:
    what a task's connection set-up costs when it includes a TLS handshake and a SASL
    exchange. No Spark."""
    from kafka_async.testing.apache import SASL_USERS, ApacheKafka, ensure_distribution

    listener = args.tasks_only
    n, parts = args.records, args.partitions
    dist = ensure_distribution()
    with ApacheKafka(security=True) as kafka:
        assert kafka.tls is not None
        protocol = kafka.listeners[listener]
        security: dict[str, str] = {"kafka.security.protocol": protocol}
        if protocol in ("SSL", "SASL_SSL"):
            security["kafka.ssl.cafile"] = str(kafka.tls.ca)
        if protocol.startswith("SASL"):
            security["kafka.sasl.mechanism"] = "SCRAM-SHA-512"
            security["kafka.sasl.plain.username"] = "admin"
            security["kafka.sasl.plain.password"] = SASL_USERS["admin"]
        topic = f"bench-spark-{uuid.uuid4().hex[:8]}"
        plain = kafka.bootstrap("PLAINTEXT")
        anyio.run(_fill, plain, topic, n, parts)
        load = [_common.load_average()]
        costs = {
            "PLAINTEXT": _task_costs(plain, topic, n, parts, args.max_offsets),
            listener: _task_costs(
                kafka.bootstrap(listener), topic, n, parts, args.max_offsets, security
            ),
        }
        load.append(_common.load_average())
    ms = "{:,.1f}"
    print(
        f"read_range per task, {args.max_offsets // parts:,} records (one partition's share of "
        f"a micro-batch; one process, no Spark), Apache Kafka {dist.version} on this machine "
        f"(loopback), load average {'/'.join(load)}; ms, median (range):"
    )
    rows = [
        [
            name,
            _common.spread(c["pool"], ms),
            _common.spread(c["pool_first"], ms),
            _common.spread(c["no_pool"], ms),
            f"{_common.median(c['no_pool']) / _common.median(c['pool']):.2f}x",
        ]
        for name, c in costs.items()
    ]
    headers = ["listener", "pooled", "first task (creates it)", "no pool", "no pool / pooled"]
    print(_common.table(headers, rows, args.markdown))


def _run_child(source: str, args: argparse.Namespace, bootstrap: str, topic: str) -> Any:
    cmd = _common.python_child(
        "benchmarks.spark",
        "--child",
        source,
        "--bootstrap",
        bootstrap,
        "--topic",
        topic,
        "--records",
        str(args.records),
        "--master",
        args.master,
        "--max-offsets",
        str(args.max_offsets),
        "--partitions",
        str(args.partitions),
        "--package",
        args.package,
        "--reads",
        args.reads,
        *(["--driver-memory", args.driver_memory] if args.driver_memory else []),
    )
    return _common.run_json_child(cmd, timeout=CHILD_TIMEOUT_S)


#: A burner process: one core's worth of pure-Python busy loop, until it is stopped.
_BURN = "while True:\n    pass\n"


@contextmanager
def cpu_burner(processes: int) -> Iterator[None]:
    """``processes`` busy-looping Python processes for the ``with`` block (the loaded runs).

    A fixed amount of competing CPU work, so loaded runs compare like with like whatever
    else the machine does; stopped (killed, by their own ids) when the block ends.
    """
    procs = [
        subprocess.Popen([sys.executable, "-c", _BURN], stdin=subprocess.DEVNULL)
        for _ in range(processes)
    ]
    try:
        time.sleep(1.0)  # let them reach the run queue before the measured child starts
        yield
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait(10)


MEASURES = (
    ("count_first", "batch count(), first run"),
    ("count_warm", "batch count(), warm"),
    ("arrow_first", "batch toArrow(), first run"),
    ("arrow_warm", "batch toArrow(), warm"),
    ("stream_first", "stream to noop, first query"),
    ("stream_warm", "stream to noop, second query"),
    ("batches_warm", "stream to noop, second query, micro-batches only"),
)
#: The phases of a micro-batch in Spark's progress report (``durationMs``), in the order
#: they happen: offsets (the source's latestOffset), the WAL write, planning the batch's
#: tasks (getBatch, queryPlanning), running them (addBatch: task start, fetch, Arrow, the
#: sink) and committing the batch's offsets.
PHASES = (
    "latestOffset",
    "walCommit",
    "getBatch",
    "queryPlanning",
    "addBatch",
    "commitOffsets",
    "triggerExecution",
)
#: Time of the whole query outside its micro-batches (ms, see :func:`_outside`): the part
#: of the records/s figures the per-batch phases do not show.
OUTSIDE = ("startToFirstBatch", "lastBatchToEnd", "outsideBatches")
CONDITIONS = ("quiet", "loaded")


def _one_line(exc: BaseException) -> str:
    """The last line of a child's error that says what went wrong."""
    text = str(exc)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for line in reversed(lines):
        if "Exception" in line or "Error" in line:
            return line[:300]
    return (lines[-1] if lines else repr(exc))[:300]


def main(argv: list[str] | None = None) -> None:
    """Run the Spark benchmark and print its table (``argv`` as on the command line)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", choices=SOURCES)
    parser.add_argument("--bootstrap")
    parser.add_argument("--topic")
    parser.add_argument("--package", default="")
    parser.add_argument("--records", type=int, default=RECORDS)
    parser.add_argument("--partitions", type=int, default=PARTITIONS)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--driver-memory", default=None)
    parser.add_argument("--max-offsets", type=int, default=MAX_OFFSETS)
    parser.add_argument("--rounds", type=int, default=int(os.environ.get("BENCH_ROUNDS", "2")))
    parser.add_argument("--sources", default=",".join(DEFAULT_SOURCES))
    parser.add_argument("--connector-version", default=None)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--broker", choices=_common.BROKERS, default=None)
    parser.add_argument("--tasks-only", choices=("SSL", "SASL_PLAINTEXT", "SASL_SSL"))
    parser.add_argument("--reads", choices=("all", "stream"), default="all")
    parser.add_argument("--conditions", default=",".join(CONDITIONS))
    parser.add_argument("--burn", type=int, default=BURN_PROCESSES)
    # ``python -m benchmarks`` calls main() with no arguments: defaults, not its own argv.
    args = parser.parse_args([] if argv is None else argv)
    if args.child:
        args.n = args.records
        _child(args)
        return
    if args.tasks_only:
        _tasks_by_listener(args)
        return
    sources = [s.strip() for s in args.sources.split(",") if s.strip()]
    for s in sources:
        if s not in SOURCES:
            raise SystemExit(f"unknown source {s!r}; choose from {', '.join(SOURCES)}")
    conditions = [c.strip() for c in args.conditions.split(",") if c.strip()]
    for c in conditions:
        if c not in CONDITIONS:
            raise SystemExit(f"unknown condition {c!r}; choose from {', '.join(CONDITIONS)}")
    streams = ("stream", "batches")
    measures = [(k, lbl) for k, lbl in MEASURES if args.reads == "all" or k.startswith(streams)]
    spark_version, scala = spark_versions()
    note = ""
    if "spark" in sources:
        if args.connector_version:
            version = args.connector_version
        else:
            try:
                version, note = connector_version(spark_version, scala, ivy_home())
            except RuntimeError as exc:
                print(f"Spark's connector: {exc}", file=sys.stderr)
                sources.remove("spark")
                version = spark_version
        args.package = f"org.apache.spark:{CONNECTOR}_{scala}:{version}"
    n, parts = args.records, args.partitions
    with _common.broker(args.broker) as broker:
        topic = f"bench-spark-{uuid.uuid4().hex[:8]}"
        started = time.perf_counter()
        anyio.run(_fill, broker.bootstrap, topic, n, parts)
        print(
            f"{n:,} records of 100 B in {parts} partitions written in "
            f"{time.perf_counter() - started:.1f} s ({broker.description})",
            flush=True,
        )
        plain = n / anyio.run(_consume, broker.bootstrap, topic, n, parts)
        tasks = (
            _task_costs(broker.bootstrap, topic, n, parts, args.max_offsets)
            if "kafka_async_nopool" in sources
            else None
        )
        # runs[condition][source]: one child's figures per round.
        runs: dict[str, dict[str, list[dict[str, Any]]]] = {
            c: {s: [] for s in sources} for c in conditions
        }
        errors: dict[str, str] = {}
        loads: dict[str, list[str]] = {c: [] for c in conditions}
        for _ in range(args.rounds):
            for condition in conditions:
                with cpu_burner(args.burn if condition == "loaded" else 0):
                    for source in sources:
                        if source in errors:
                            continue
                        loads[condition].append(_common.load_average())
                        for attempt in (1, 2):
                            try:
                                runs[condition][source].append(
                                    _run_child(source, args, broker.bootstrap, topic)
                                )
                                break
                            except Exception as exc:  # one source failing must not hide another
                                # Once more first: on a busy machine Spark's fixed 10 s wait
                                # for a new Python process to connect back can run out.
                                line = _one_line(exc)
                                print(
                                    f"{LABELS[source]} failed ({attempt}): {line}", file=sys.stderr
                                )
                                if attempt == 2:
                                    errors[source] = line

    print(
        f"\nSpark {spark_version} (Scala {scala}), master {args.master}, {parts} Kafka "
        f"partitions = {parts} Spark tasks per batch read, driver memory "
        f"{args.driver_memory or 'Spark default (1g)'}, maxOffsetsPerTrigger "
        f"{args.max_offsets:,} (Trigger.AvailableNow, noop sink); {args.rounds} rounds, "
        f"each source in a fresh process per round and condition; loaded = {args.burn} "
        f"busy-looping Python processes running beside the child (--burn)"
    )
    for condition in conditions:
        print(f"load average before each child, {condition}: {'/'.join(loads[condition])}")
    if "spark" in sources:
        print(f"Spark's connector: {args.package}" + (f" ({note})" if note else ""))
    print(f"plain Consumer getmany (one process, no Spark): {plain:,.0f} records/s")
    if tasks is not None:
        ms = "{:,.1f}"
        print(
            f"read_range per task, {args.max_offsets // parts:,} records (one partition's share "
            f"of a micro-batch; one process, no Spark), ms: pooled consumer "
            f"{_common.spread(tasks['pool'], ms)}, first task of a partition "
            f"{_common.spread(tasks['pool_first'], ms)}; without the pool "
            f"{_common.spread(tasks['no_pool'], ms)}"
        )
    verdicts = []
    for condition in conditions:
        crun = runs[condition]
        rates = {
            s: {key: [n / r[key] for r in rs] for key, _ in measures}
            for s, rs in crun.items()
            if rs
        }
        print(f"\n{condition}:")
        headers = ["read", *(f"{LABELS[s]} records/s" for s in rates)]
        ratios = [
            (a, b, title)
            for a, b, title in (
                ("kafka_async", "spark", "ours/Spark's"),
                ("kafka_async", "ceiling", "ours/no-Kafka"),
                ("kafka_async", "kafka_async_nopool", "pool/no pool"),
            )
            if a in rates and b in rates
        ]
        headers += [f"{title} (rounds)" for _a, _b, title in ratios]
        rows = []
        for key, label in measures:
            row = [label, *(_common.spread(rates[s][key]) for s in rates)]
            row += [_ratio(rates[a][key], rates[b][key]) for a, b, _title in ratios]
            rows.append(row)
        print(_common.table(headers, rows, args.markdown))
        _print_phases(crun, args.markdown)
        line = _break_even(crun)
        if line:
            print(line)
        if "kafka_async" in rates and "spark" in rates:
            median = _common.median
            ours, theirs = rates["kafka_async"], rates["spark"]
            verdicts += [
                f"{label} ({condition}): "
                + ("met" if median(ours[k]) >= median(theirs[k]) else "NOT met")
                for k, label in measures
                if k.endswith("warm")
            ]
    for source, error in errors.items():
        print(f"\n{LABELS[source]}: failed, no figures: {error}")
    if verdicts:
        print(
            "\nTarget (issues 17 and 26), at least match Spark's connector, quiet and loaded "
            "(medians of the warm runs): " + "; ".join(verdicts),
            flush=True,
        )


def _break_even(crun: Mapping[str, list[dict[str, Any]]]) -> str:
    """One line: from how many micro-batches (of this run's size) a whole query of ours
    takes less time than one of Spark's connector, from the second queries' medians of the
    time outside the micro-batches and the time per micro-batch."""
    ours = [r["phases_warm"] for r in crun.get("kafka_async", []) if "phases_warm" in r]
    theirs = [r["phases_warm"] for r in crun.get("spark", []) if "phases_warm" in r]
    if not ours or not theirs:
        return ""
    median = _common.median
    out_a = median([p["outsideBatches"] for p in ours])
    out_b = median([p["outsideBatches"] for p in theirs])
    per_a = median([p["triggerExecution"] for p in ours])
    per_b = median([p["triggerExecution"] for p in theirs])
    facts = (
        f"outside the micro-batches ours {out_a:,.0f} ms, Spark's connector {out_b:,.0f} ms; "
        f"per micro-batch ours {per_a:,.0f} ms, Spark's connector {per_b:,.0f} ms"
    )
    if out_a <= out_b:
        return f"whole query: ours takes less time at any length ({facts})"
    if per_a >= per_b:
        return f"whole query: ours never catches up ({facts})"
    batches = (out_a - out_b) / (per_b - per_a)
    return (
        f"whole query: ours takes less time than Spark's connector's from "
        f"{batches:.1f} micro-batches of this size on ({facts})"
    )


def _print_phases(crun: Mapping[str, list[dict[str, Any]]], markdown: bool) -> None:
    """Where a micro-batch's time goes, per source: Spark's progress phases of the second
    (warm) query, mean ms per micro-batch, median over the rounds."""
    phased = {s: [r["phases_warm"] for r in rs if "phases_warm" in r] for s, rs in crun.items()}
    phased = {s: ps for s, ps in phased.items() if ps}
    if not phased:
        return
    headers = ["ms per micro-batch (second query)", *(LABELS[s] for s in phased)]
    rows = [
        [phase, *(_common.spread([p.get(phase, 0.0) for p in ps]) for ps in phased.values())]
        for phase in PHASES
    ]
    print(_common.table(headers, rows, markdown))
    headers = ["ms per query outside micro-batches (second query)", *(LABELS[s] for s in phased)]
    rows = [
        [what, *(_common.spread([p[what] for p in ps if what in p]) for ps in phased.values())]
        for what in OUTSIDE
    ]
    print(_common.table(headers, rows, markdown))


def _ratio(ours: list[float], theirs: list[float]) -> str:
    """``median/median`` and the range of the per-round ratios."""
    per = [a / b for a, b in zip(ours, theirs, strict=False)]
    if not per:
        return "-"
    med = _common.median(ours) / _common.median(theirs)
    if len(per) == 1:
        return f"{med:.2f}x"
    return f"{med:.2f}x ({min(per):.2f}-{max(per):.2f}x)"


if __name__ == "__main__":
    main(sys.argv[1:])
