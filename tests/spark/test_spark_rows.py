"""Source/sink columns: the Arrow schema Spark expects, records -> Arrow, rows -> records."""

from __future__ import annotations

import datetime as dt

import pytest

from kafka_async.errors import ConfigError
from kafka_async.spark.rows import (
    SinkRecord,
    arrow_schema,
    check_sink_columns,
    records_to_arrow,
    row_to_record,
    source_ddl,
    spark_schema,
)
from kafka_async.structs import ConsumerRecord
from kafka_async.testing.plugin import importorskip_or_fail

pa = importorskip_or_fail("pyarrow")
importorskip_or_fail("pyspark")


@pytest.mark.parametrize("headers", [False, True])
def test_arrow_schema_equals_what_spark_derives(headers: bool) -> None:
    from pyspark.sql.pandas.types import to_arrow_schema

    expected = to_arrow_schema(spark_schema(headers), timezone="UTC")
    assert expected.equals(arrow_schema(headers))
    simple = (
        "struct<key:binary,value:binary,topic:string,partition:int,offset:bigint,"
        "timestamp:timestamp,timestampType:int"
    )
    if headers:
        simple += ",headers:array<struct<key:string,value:binary>>"
    assert spark_schema(headers).simpleString() == simple + ">"
    names = [f.strip().split(" ")[0] for f in source_ddl(headers).split(", ")]
    assert names == spark_schema(headers).fieldNames()


def _rec(
    offset: int, key: bytes | None, value: bytes | None, ts: int
) -> ConsumerRecord[bytes, bytes]:
    return ConsumerRecord(
        topic="t",
        partition=3,
        offset=offset,
        timestamp=ts,
        timestamp_type=1,
        key=key,
        value=value,
        headers=[("h", b"x"), ("k2", b"")],
    )


@pytest.mark.parametrize("headers", [False, True])
def test_records_to_arrow(headers: bool) -> None:
    recs = [_rec(10, b"k", b"v", 1_700_000_000_123), _rec(11, None, None, 0)]
    batch = records_to_arrow(recs, headers, "t")
    assert batch.schema.equals(arrow_schema(headers))
    rows = batch.to_pylist()
    assert rows[0]["key"] == b"k"
    assert rows[1]["key"] is None
    assert rows[1]["value"] is None
    assert [r["offset"] for r in rows] == [10, 11]
    assert {r["topic"] for r in rows} == {"t"}
    assert {r["partition"] for r in rows} == {3}
    assert rows[0]["timestamp"] == dt.datetime(
        2023, 11, 14, 22, 13, 20, 123000, tzinfo=dt.timezone.utc
    )
    assert rows[0]["timestampType"] == 1
    if headers:
        assert rows[0]["headers"] == [{"key": "h", "value": b"x"}, {"key": "k2", "value": b""}]


def test_records_to_arrow_offsets_with_and_without_gaps() -> None:
    # Consecutive offsets are built as a range, others one by one: both must be exact.
    consecutive = [_rec(o, None, b"v", 1_000 + o) for o in range(5, 9)]
    gapped = [_rec(o, None, b"v", 1_000 + o) for o in (5, 6, 8, 11)]  # markers, compaction
    for recs in (consecutive, gapped):
        batch = records_to_arrow(recs, False, "t")
        assert batch.column("offset").to_pylist() == [r.offset for r in recs]
        assert batch.column("timestamp").cast(pa.int64()).to_pylist() == [
            r.timestamp * 1000 for r in recs
        ]


def test_records_to_arrow_empty() -> None:
    batch = records_to_arrow([], True, "t")
    assert batch.num_rows == 0
    assert batch.schema.equals(arrow_schema(True))


def test_sink_columns_checked_like_spark() -> None:
    check_sink_columns({"value": "binary"}, "t")
    check_sink_columns(
        {
            "key": "string",
            "value": "string",
            "topic": "string",
            "partition": "int",
            "headers": "array<struct<key:string,value:binary>>",
        },
        None,
    )
    with pytest.raises(ConfigError, match="'value' column"):
        check_sink_columns({"key": "binary"}, "t")
    with pytest.raises(ConfigError, match="'topic' column"):
        check_sink_columns({"value": "binary"}, None)
    with pytest.raises(ConfigError, match="string or binary"):
        check_sink_columns({"value": "int"}, "t")
    with pytest.raises(ConfigError, match="cannot be written"):
        check_sink_columns({"value": "binary", "extra": "int"}, "t")


def test_row_to_record() -> None:
    from pyspark.sql import Row

    row = Row(
        key="k",
        value=bytearray(b"v"),
        topic="col-topic",
        partition=2,
        headers=[Row(key="a", value=b"1"), Row(key="b", value=None)],
    )
    assert row_to_record(row, None) == SinkRecord(
        "col-topic", b"k", b"v", 2, [("a", b"1"), ("b", b"")]
    )
    # the topic option wins over the column, like Spark's sink
    assert row_to_record(row, "opt").topic == "opt"
    assert row_to_record({"value": None}, "t") == SinkRecord("t", None, None, None, [])
    with pytest.raises(ConfigError, match="null topic"):
        row_to_record({"value": b"v", "topic": None}, None)
    with pytest.raises(ConfigError, match="not string or binary"):
        row_to_record({"value": 5}, "t")
