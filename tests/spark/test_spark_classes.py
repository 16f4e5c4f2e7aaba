"""The Spark-facing classes without a JVM: what Spark pickles, limits, schemas, refusals."""

from __future__ import annotations

import pickle
import ssl

import pytest

from kafka_async.errors import ConfigError
from kafka_async.spark.kafka_io import client_kwargs, next_end
from kafka_async.spark.options import client_config
from kafka_async.structs import TopicPartition as TP
from kafka_async.testing.plugin import importorskip_or_fail

importorskip_or_fail("pyspark")
importorskip_or_fail("pyarrow")

from pyspark.sql.datasource import InputPartition  # noqa: E402
from pyspark.sql.streaming.datasource import (  # noqa: E402
    ReadAllAvailable,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import (  # noqa: E402
    BinaryType,
    IntegerType,
    StringType,
    StructField,
    StructType,
)

from kafka_async.spark.planning import OffsetRange  # noqa: E402
from kafka_async.spark.source import (  # noqa: E402
    KafkaBatchReader,
    KafkaDataSource,
    KafkaStreamReader,
    KafkaStreamWriter,
)

OPTS = {"kafka.bootstrap.servers": "127.0.0.1:1", "subscribe": "t"}


def test_name_and_schema_follow_include_headers() -> None:
    assert KafkaDataSource.name() == "kafka_async"
    assert KafkaDataSource(dict(OPTS)).schema().fieldNames()[-1] == "timestampType"
    with_headers = KafkaDataSource({**OPTS, "includeHeaders": "true"}).schema()
    assert with_headers.fieldNames()[-1] == "headers"


def test_readers_and_writers_pickle_without_resources() -> None:
    source = KafkaDataSource({**OPTS, "maxOffsetsPerTrigger": "10", "topic": "out"})
    for obj in (
        source,
        source.reader(source.schema()),
        source.streamReader(source.schema()),
        source.writer(StructType([StructField("value", BinaryType())]), False),
        InputPartition(OffsetRange("t", 0, 5, 9)),
    ):
        clone = pickle.loads(pickle.dumps(obj))
        assert type(clone) is type(obj)


def test_stream_reader_limits_and_available_now() -> None:
    source = KafkaDataSource({**OPTS, "maxOffsetsPerTrigger": "10"})
    reader = source.streamReader(source.schema())
    assert isinstance(reader, KafkaStreamReader)
    assert isinstance(reader, SupportsTriggerAvailableNow)
    assert reader.getDefaultReadLimit() == ReadMaxRows(10)
    unlimited = KafkaDataSource(dict(OPTS)).streamReader(None)
    assert unlimited.getDefaultReadLimit() == ReadAllAvailable()
    # nothing to plan between equal offsets: no Kafka call is made
    assert reader.partitions({"t": {"0": 4}}, {"t": {"0": 4}}) == []


def test_empty_partition_reads_nothing() -> None:
    reader = KafkaDataSource(dict(OPTS)).reader(None)
    assert isinstance(reader, KafkaBatchReader)
    assert list(reader.read(InputPartition(None))) == []


def test_next_end_new_partitions_start_at_earliest() -> None:
    starts = {TP("t", 0): 10}
    earliest = {TP("t", 0): 0, TP("t", 1): 5}
    latest = {TP("t", 0): 30, TP("t", 1): 25}
    assert next_end(starts, earliest, latest, None) == latest
    capped = next_end(starts, earliest, latest, 20)
    assert capped == {TP("t", 0): 20, TP("t", 1): 15}
    # t-0 was recreated and holds 4 records now: the end comes from its new earliest offset
    # (planning then reports the loss), instead of sticking at the old start forever.
    assert next_end({TP("t", 0): 50}, {TP("t", 0): 0}, {TP("t", 0): 4}, None) == {TP("t", 0): 4}


def test_writer_refuses_overwrite_and_bad_columns() -> None:
    source = KafkaDataSource({**OPTS, "topic": "out"})
    good = StructType([StructField("key", StringType()), StructField("value", BinaryType())])
    with pytest.raises(ConfigError, match="append"):
        source.writer(good, True)
    assert isinstance(source.streamWriter(good, False), KafkaStreamWriter)
    with pytest.raises(ConfigError, match="string or binary"):
        source.writer(StructType([StructField("value", IntegerType())]), False)
    no_topic = KafkaDataSource({"kafka.bootstrap.servers": "h:1"})
    with pytest.raises(ConfigError, match="topic"):
        no_topic.writer(good, False)


def test_tls_options_become_an_ssl_context() -> None:
    cfg = client_config(
        {
            "kafka.bootstrap.servers": "h:1",
            "kafka.security.protocol": "SSL",
            "kafka.ssl.endpoint.identification.algorithm": "",
            "kafka.ssl.truststore.type": "PEM",
        },
        "consumer",
    )
    assert "ssl_context" not in cfg  # file names only: the options must pickle
    kwargs = client_kwargs(cfg)
    assert isinstance(kwargs["ssl_context"], ssl.SSLContext)
    assert kwargs["ssl_context"].check_hostname is False
    assert "ssl_check_hostname" not in kwargs
    with pytest.raises(ConfigError, match="PEM"):
        client_config(
            {"kafka.bootstrap.servers": "h:1", "kafka.ssl.keystore.type": "JKS"}, "consumer"
        )
    plain = client_kwargs(client_config({"kafka.bootstrap.servers": "h:1"}, "consumer"))
    assert "ssl_context" not in plain
