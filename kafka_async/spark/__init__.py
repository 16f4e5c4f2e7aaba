"""A PySpark data source for Kafka, built on kafka_async (extra ``spark``).

Spark's own Kafka connector is a JVM jar that many environments cannot fetch; this one is
pure Python on the Python Data Source API (pyspark >= 4.0). Its options and columns mirror
Spark's built-in Kafka source and sink, so a job switches by changing the format name::

    from kafka_async.spark import register
    register(spark)                      # registers the format "kafka_async"
    df = (spark.read.format("kafka_async")
          .option("kafka.bootstrap.servers", "127.0.0.1:9092")
          .option("subscribe", "events")
          .load())

What to know:

* Reads are exact: the driver plans offset ranges (``minPartitions`` splits large ones) and
  each Spark task reads exactly its range and returns Arrow batches. Streaming offsets are
  checkpointed as ``{"topic": {"partition": offset}}``, so a restarted query goes on with no
  loss and no duplicates. ``maxOffsetsPerTrigger`` and ``Trigger.AvailableNow`` work;
  ``failOnDataLoss`` decides what happens when offsets a query needs are gone.
* Writes are at-least-once by default, as with Spark's own Kafka sink: each task produces
  through its own idempotent producer and flushes before it reports success, but a task Spark
  retries writes its rows again. ``exactlyOnce=true`` makes them exactly-once for
  read_committed readers (``exactly_once``). Only ``mode("append")`` is accepted.
* Executors run Python workers: set ``PYSPARK_PYTHON`` to an interpreter that has
  kafka_async installed (with the ``spark`` extra) before the SparkSession starts.
* Data loss, timeouts and bad options raise :class:`DataLossError`,
  :class:`~kafka_async.errors.KafkaTimeoutError` and
  :class:`~kafka_async.errors.ConfigError`; Spark shows them inside its own exception.

Nothing here imports pyspark until :func:`register` or :class:`KafkaDataSource` is used, so
``import kafka_async.spark`` is cheap and works without the extra.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .options import SinkOptions, SourceOptions, parse_sink_options, parse_source_options
from .planning import DataLossError, OffsetRange

if TYPE_CHECKING:
    from .source import KafkaDataSource

#: The format name the data source registers under.
FORMAT = "kafka_async"

__all__ = [
    "FORMAT",
    "DataLossError",
    "KafkaDataSource",
    "OffsetRange",
    "SinkOptions",
    "SourceOptions",
    "parse_sink_options",
    "parse_source_options",
    "register",
]


def register(spark: Any) -> None:
    """Register the ``kafka_async`` format with a ``SparkSession`` (once per session)."""
    from .source import KafkaDataSource

    # With spark.speculation on, a subclass that refuses exactlyOnce writes (source.py).
    spark.dataSource.register(KafkaDataSource.for_session(spark))


def __getattr__(name: str) -> Any:
    if name == "KafkaDataSource":
        return importlib.import_module(".source", __name__).KafkaDataSource
    raise AttributeError(f"module 'kafka_async.spark' has no attribute {name!r}")
