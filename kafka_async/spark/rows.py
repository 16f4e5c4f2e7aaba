"""Columns of the Spark source and sink: schemas, records -> Arrow, rows -> records.

The source's columns are those of Spark's built-in Kafka source, and the Arrow schema of the
batches a task returns must equal, field for field, what Spark derives from the declared
schema (``to_arrow_schema(schema, timezone="UTC")``): int32 partition, int64 offset,
microsecond UTC timestamps, every field nullable. ``tests/spark`` checks that equality.

pyarrow is loaded on first use (it comes with the ``spark`` extra) through ``importlib``, so
the module imports, and type-checks, without it.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from ..errors import ConfigError
from ..structs import ConsumerRecord

#: The source's columns in Spark DDL, as Spark's Kafka source declares them.
SOURCE_DDL = (
    "key binary, value binary, topic string, partition int, offset bigint, "
    "timestamp timestamp, timestampType int"
)
HEADERS_DDL = "headers array<struct<key:string,value:binary>>"


def source_ddl(include_headers: bool) -> str:
    """The DDL schema string of the source (``headers`` only with ``includeHeaders``)."""
    return f"{SOURCE_DDL}, {HEADERS_DDL}" if include_headers else SOURCE_DDL


def spark_schema(include_headers: bool) -> Any:
    """The source's ``pyspark.sql.types.StructType`` (every field nullable, as in Spark's)."""
    t = importlib.import_module("pyspark.sql.types")
    fields = [
        t.StructField("key", t.BinaryType()),
        t.StructField("value", t.BinaryType()),
        t.StructField("topic", t.StringType()),
        t.StructField("partition", t.IntegerType()),
        t.StructField("offset", t.LongType()),
        t.StructField("timestamp", t.TimestampType()),
        t.StructField("timestampType", t.IntegerType()),
    ]
    if include_headers:
        header = t.StructType(
            [t.StructField("key", t.StringType()), t.StructField("value", t.BinaryType())]
        )
        fields.append(t.StructField("headers", t.ArrayType(header)))
    return t.StructType(fields)


def _pa() -> Any:
    return importlib.import_module("pyarrow")


def arrow_schema(include_headers: bool) -> Any:
    """The ``pyarrow.Schema`` of the batches the source returns."""
    pa = _pa()
    fields = [
        pa.field("key", pa.binary()),
        pa.field("value", pa.binary()),
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        pa.field("offset", pa.int64()),
        pa.field("timestamp", pa.timestamp("us", tz="UTC")),
        pa.field("timestampType", pa.int32()),
    ]
    if include_headers:
        fields.append(pa.field("headers", pa.list_(_header_struct(pa))))
    return pa.schema(fields)


def _header_struct(pa: Any) -> Any:
    return pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())])


def _np() -> Any:
    return importlib.import_module("numpy")


def records_to_arrow(
    records: Sequence[ConsumerRecord[bytes, bytes]], include_headers: bool, topic: str
) -> Any:
    """One ``pyarrow.RecordBatch`` of the given records (all from one partition of ``topic``).

    Built column by column: pyarrow converts a list of bytes or ints in C, so the per-record
    Python work is one attribute read per column that varies. Topic and partition are the
    same on every row, and offsets are a range when the records are consecutive (no
    compaction gap or transaction marker between them: the first and last offsets tell).
    """
    pa = _pa()
    np = _np()
    n = len(records)
    schema = arrow_schema(include_headers)
    if n == 0:
        return pa.RecordBatch.from_pylist([], schema=schema)
    first, last = records[0], records[-1]
    if last.offset - first.offset == n - 1:
        offsets = pa.array(np.arange(first.offset, last.offset + 1, dtype=np.int64))
    else:
        offsets = pa.array([r.offset for r in records], pa.int64())
    millis = np.fromiter([r.timestamp for r in records], dtype=np.int64, count=n)
    arrays = [
        pa.array([r.key for r in records], pa.binary()),
        pa.array([r.value for r in records], pa.binary()),
        pa.repeat(pa.scalar(topic, pa.string()), n),
        pa.repeat(pa.scalar(first.partition, pa.int32()), n),
        offsets,
        pa.array(millis * 1000, pa.timestamp("us", tz="UTC")),
        pa.array([r.timestamp_type for r in records], pa.int32()),
    ]
    if include_headers:
        arrays.append(
            pa.array(
                [[{"key": k, "value": v} for k, v in r.headers] for r in records],
                pa.list_(_header_struct(pa)),
            )
        )
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


# --------------------------------------------------------------------------------------------
# Sink
# --------------------------------------------------------------------------------------------

_SINK_TYPES = {
    "key": ("string", "binary"),
    "value": ("string", "binary"),
    "topic": ("string",),
    "partition": ("int",),
    "headers": ("array<struct<key:string,value:binary>>",),
}


class SinkRecord(NamedTuple):
    """What one sink row becomes: the arguments of ``Producer.enqueue``."""

    topic: str
    key: bytes | None
    value: bytes | None
    partition: int | None
    headers: list[tuple[str, bytes]]


def check_sink_columns(columns: Mapping[str, str], default_topic: str | None) -> None:
    """Check the sink's input columns (name -> Spark simpleString type) like Spark does.

    ``value`` is required; ``key`` and ``value`` are string or binary; ``topic`` is needed
    unless the ``topic`` option is set; ``partition`` is int; ``headers`` is
    ``array<struct<key:string,value:binary>>``. Other columns are an error, since they would
    be silently dropped.
    """
    lowered = {name.lower(): typ.lower() for name, typ in columns.items()}
    if "value" not in lowered:
        raise ConfigError("the data to write needs a 'value' column")
    if "topic" not in lowered and default_topic is None:
        raise ConfigError("the data to write needs a 'topic' column or the 'topic' option")
    for name, typ in lowered.items():
        allowed = _SINK_TYPES.get(name)
        if allowed is None:
            raise ConfigError(
                f"column {name!r} cannot be written to Kafka; expected only {sorted(_SINK_TYPES)}"
            )
        if typ.replace(" ", "") not in allowed:
            raise ConfigError(f"column {name!r} must be of type {' or '.join(allowed)}, not {typ}")


def _to_bytes(value: object, column: str) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    raise ConfigError(f"column {column!r} holds {type(value).__name__}, not string or binary")


def row_to_record(row: Any, default_topic: str | None) -> SinkRecord:
    """Map one input row (a ``pyspark.sql.Row`` or a dict) to the record to produce.

    The ``topic`` option wins over a ``topic`` column, as in Spark's sink.
    """
    fields = row.asDict(recursive=False) if hasattr(row, "asDict") else dict(row)
    topic = default_topic if default_topic is not None else fields.get("topic")
    if not topic:
        raise ConfigError("a row to write has a null topic and no 'topic' option is set")
    raw_headers = fields.get("headers") or ()
    headers: list[tuple[str, bytes]] = []
    for h in raw_headers:
        key = h["key"]
        if key is None:
            raise ConfigError("a header to write has a null key")
        value = _to_bytes(h["value"], "headers.value")
        headers.append((str(key), value if value is not None else b""))
    partition = fields.get("partition")
    return SinkRecord(
        topic=str(topic),
        key=_to_bytes(fields.get("key"), "key"),
        value=_to_bytes(fields.get("value"), "value"),
        partition=int(partition) if partition is not None else None,
        headers=headers,
    )
