"""The ``kafka_async`` data source: Spark's classes, thin over ``kafka_io`` and ``planning``.

Imported only through :func:`kafka_async.spark.register` (it needs pyspark). What Spark does
with these objects, and so what they may hold:

* ``KafkaDataSource`` and its readers/writers are pickled from the driver to executors, so
  they keep parsed options only. Driver calls and write tasks open and close their own
  client; read tasks borrow a consumer from their worker process's pool (``consumer_pool``).
* The streaming reader lives in a long-running Python process on the driver; it remembers
  the initial offsets and the Trigger.AvailableNow target, and looks offsets up through a
  consumer that process keeps connected (``kafka_io.run_driver``); ``stop()`` closes it,
  and if Spark never calls it the consumer ends with the process.
* Offsets Spark checkpoints are ``{"topic": {"partition": next_offset}}`` dicts (the JSON
  Spark's own Kafka source writes), so a restarted query resumes exactly where its last
  committed micro-batch ended: no loss, no duplicates on the read side.
* Writes are at-least-once: each task produces through its own idempotent producer and
  flushes before reporting success; a task Spark retries writes its rows again.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)

from ..errors import ConfigError
from ..structs import TopicPartition
from . import kafka_io
from .options import (
    SinkOptions,
    SourceOptions,
    include_headers,
    offsets_from_dict,
    offsets_to_dict,
    parse_sink_options,
    parse_source_options,
)
from .planning import OffsetRange
from .rows import check_sink_columns, spark_schema

if TYPE_CHECKING:
    from .exactly_once import PreparedTxn

# ``exactly_once`` (transactions, the admin client) is imported where a sink needs it: the
# streaming reader's driver-side Python process, which PySpark starts for every query, then
# imports only what reading needs (its start-up is part of every query's time).


def _partitions(ranges: Sequence[OffsetRange]) -> list[Any]:
    return [InputPartition(r) for r in ranges]


def _read(opts: SourceOptions, partition: Any) -> Iterator[Any]:
    rng = partition.value
    # Spark plans one empty partition (value None) when there is nothing to read.
    if not isinstance(rng, OffsetRange):
        return iter(())
    return kafka_io.read_range(opts, rng)


class KafkaBatchReader(DataSourceReader):  # type: ignore[misc,unused-ignore]
    """Plans one task per offset range on the driver; each task reads its range."""

    def __init__(self, options: SourceOptions) -> None:
        self.options = options

    def partitions(self) -> list[Any]:
        return _partitions(kafka_io.run(kafka_io.plan_batch, self.options))

    def read(self, partition: Any) -> Iterator[Any]:
        return _read(self.options, partition)


class KafkaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):  # type: ignore[misc,unused-ignore]
    """Micro-batch reads with admission control (maxOffsetsPerTrigger) and AvailableNow."""

    def __init__(self, options: SourceOptions) -> None:
        self.options = options
        # Spark asks a new query's initial offset twice (planning the first micro-batch,
        # then its start): the first answer, so both agree and the second costs nothing.
        self._initial: dict[str, dict[str, int]] | None = None
        self._target: dict[TopicPartition, int] | None = None
        # The end latestOffset last returned, with the offsets it was computed from: Spark
        # plans that micro-batch right after, and partitions() then needs no lookup of its own.
        self._bounds: tuple[dict[TopicPartition, int], kafka_io.Bounds] | None = None

    def initialOffset(self) -> dict[str, dict[str, int]]:
        # Through the driver's kept consumer, as latestOffset: no client of its own to start.
        if self._initial is None:
            start = kafka_io.run_driver(kafka_io.initial_offsets_on, self.options)
            self._initial = offsets_to_dict(start)
        return self._initial

    def getDefaultReadLimit(self) -> Any:
        limit = self.options.max_offsets_per_trigger
        return ReadMaxRows(limit) if limit is not None else ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        # Everything present now and nothing later: later latestOffset calls stop here.
        _earliest, latest = kafka_io.run_driver(kafka_io.bounds_on, self.options)
        self._target = latest

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, dict[str, int]]:
        # Through a consumer kept connected in this (long-running) driver process: one
        # micro-batch after another, the lookups are all it costs.
        bounds = kafka_io.run_driver(kafka_io.bounds_on, self.options)
        earliest, latest = bounds
        if self._target is not None:
            # Partitions that appeared since are left for a later query; vanished ones drop
            # out (and planning reports them as data loss).
            latest = {tp: min(off, latest[tp]) for tp, off in self._target.items() if tp in latest}
        max_rows = limit.max_rows if isinstance(limit, ReadMaxRows) else None
        starts = offsets_from_dict(start)
        end = kafka_io.next_end(starts, earliest, latest, max_rows)
        self._bounds = (end, bounds)
        return offsets_to_dict(end)

    def reportLatestOffset(self) -> dict[str, dict[str, int]] | None:
        # latestOffset already looked the offsets up; another round trip per micro-batch
        # only for the progress report is not worth it.
        return None

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[Any]:
        starts = offsets_from_dict(start)
        ends = offsets_from_dict(end)
        if starts == ends:
            return []
        known = self._bounds[1] if self._bounds is not None and self._bounds[0] == ends else None
        return _partitions(kafka_io.run(kafka_io.plan_stream, self.options, starts, ends, known))

    def read(self, partition: Any) -> Iterator[Any]:
        return _read(self.options, partition)

    def commit(self, end: dict[str, Any]) -> None:
        # Progress lives in Spark's checkpoint, not in Kafka; nothing to do.
        return None

    def stop(self) -> None:
        kafka_io.close_driver(self.options)


@dataclass
class KafkaCommitMessage(WriterCommitMessage):  # type: ignore[misc,unused-ignore]
    """What a write task reports: how many records it produced and saw acknowledged, and
    with ``exactlyOnce`` the open transaction holding them, for the driver to commit."""

    records: int
    txn: PreparedTxn | None = None


def _txns(messages: list[WriterCommitMessage | None]) -> list[PreparedTxn]:
    return [m.txn for m in messages if isinstance(m, KafkaCommitMessage) and m.txn is not None]


def _write(options: SinkOptions, iterator: Iterator[Any]) -> KafkaCommitMessage:
    if not options.exactly_once:
        return KafkaCommitMessage(kafka_io.write_rows(options, iterator))
    from pyspark import TaskContext

    from . import exactly_once

    context = TaskContext.get()
    partition = context.partitionId() if context is not None else 0
    count, txn = exactly_once.write_task(options, iterator, partition)
    return KafkaCommitMessage(count, txn)


class KafkaBatchWriter(DataSourceWriter):  # type: ignore[misc,unused-ignore]
    """One idempotent producer per task; the task succeeds only once every record is acked.

    With ``exactlyOnce`` each task writes in a transaction it leaves open, and ``commit``
    ends them all on the driver: the write is visible all at once or not at all.
    """

    def __init__(self, options: SinkOptions) -> None:
        self.options = options

    def write(self, iterator: Iterator[Any]) -> KafkaCommitMessage:
        return _write(self.options, iterator)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        if self.options.exactly_once:
            from . import exactly_once

            exactly_once.commit(self.options, _txns(messages), None)

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        # At-least-once: records of tasks that finished are in Kafka already.
        if self.options.exactly_once:
            from . import exactly_once

            exactly_once.abort(self.options, _txns(messages))


class KafkaStreamWriter(DataSourceStreamWriter):  # type: ignore[misc,unused-ignore]
    """The streaming sink: the same per-task producer, per micro-batch; with
    ``exactlyOnce`` the driver commits the tasks' transactions once per batch id."""

    def __init__(self, options: SinkOptions) -> None:
        self.options = options

    def write(self, iterator: Iterator[Any]) -> KafkaCommitMessage:
        return _write(self.options, iterator)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        from . import exactly_once

        # The tests' failure point between the tasks' end and the commit (either mode).
        exactly_once.fault("driver-before-commit", batchId)
        if self.options.exactly_once:
            exactly_once.commit(self.options, _txns(messages), batchId)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        if self.options.exactly_once:
            from . import exactly_once

            exactly_once.abort(self.options, _txns(messages))


def _sink_options(schema: Any, options: Any, *, streaming: bool, speculation: bool) -> SinkOptions:
    opts = parse_sink_options(options)
    check_sink_columns({f.name: f.dataType.simpleString() for f in schema.fields}, opts.topic)
    if opts.exactly_once:
        from . import exactly_once

        if speculation:
            raise ConfigError(
                "exactlyOnce=true needs spark.speculation=false: two live attempts of one "
                "write task would fence each other's transactions"
            )
        # Driver side, before any task of this query or write: settle the transactional id
        # prefix and finish a commit an earlier attempt left half-done.
        opts = exactly_once.with_prefix(opts, streaming=streaming)
        if not exactly_once.in_commit_runner():
            exactly_once.recover(opts)
    return opts


class KafkaDataSource(DataSource):  # type: ignore[misc,unused-ignore]
    """The ``kafka_async`` format: Spark's Kafka source and sink options and columns."""

    #: ``spark.speculation`` of the session the format was registered with (the data source
    #: runs in Python workers that cannot see Spark's configuration; see :meth:`for_session`).
    speculation: ClassVar[bool] = False

    @classmethod
    def name(cls) -> str:
        return "kafka_async"

    @classmethod
    def for_session(cls, spark: Any) -> type[KafkaDataSource]:
        """The class to register with ``spark``: this one, or with speculative execution on
        a subclass that knows it (Spark pickles the registered class by value, so the flag
        travels to the driver-side workers that create the writers)."""
        try:
            raw = spark.sparkContext.getConf().get("spark.speculation", "false")
        except Exception:  # Spark Connect has no SparkContext
            try:
                raw = spark.conf.get("spark.speculation", "false")
            except Exception:
                raw = "false"
        if str(raw).strip().lower() != "true":
            return cls
        return type(cls.__name__, (cls,), {"speculation": True, "__doc__": cls.__doc__})

    def schema(self) -> Any:
        return spark_schema(include_headers(self.options))

    def reader(self, schema: Any) -> KafkaBatchReader:
        return KafkaBatchReader(parse_source_options(self.options, streaming=False))

    def streamReader(self, schema: Any) -> KafkaStreamReader:
        return KafkaStreamReader(parse_source_options(self.options, streaming=True))

    def writer(self, schema: Any, overwrite: bool) -> KafkaBatchWriter:
        if overwrite:
            raise ConfigError("Kafka topics cannot be overwritten; use mode('append')")
        return KafkaBatchWriter(
            _sink_options(schema, self.options, streaming=False, speculation=self.speculation)
        )

    def streamWriter(self, schema: Any, overwrite: bool) -> KafkaStreamWriter:
        return KafkaStreamWriter(
            _sink_options(schema, self.options, streaming=True, speculation=self.speculation)
        )
