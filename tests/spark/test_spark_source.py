"""The ``kafka_async`` Spark source against a real broker, in Spark local mode.

Data is written with confluent-kafka (a peer client), read back through Spark, and compared
row for row: every test checks both that each expected record is there and that nothing else
is (no duplicate, nothing outside the asked range).
"""

from __future__ import annotations

import tempfile
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

pytestmark = pytest.mark.integration

#: Record timestamps: an hour ago. Kafka deletes by time (retention.ms, 7 days by default)
#: from the newest timestamp in a segment, active segment included, at every
#: log.retention.check.interval.ms (5 min): records stamped years back vanish from a broker
#: that has run for minutes, and the source then rightly starts at the log start (the
#: flakiness seen in long runs on Apache Kafka). Not later than now: Kafka 4 refuses
#: timestamps more than log.message.timestamp.after.max.ms (1 h) ahead.
BASE_TS = (int(time.time()) - 3600) * 1000
# (partition, key, value, headers, timestamp_ms): a record for conftest's produce().
Row = tuple[int, bytes | None, bytes, list[tuple[str, bytes]], int]


def _records(partitions: int, per_partition: int, headers: bool = False) -> list[Any]:
    out = []
    for p in range(partitions):
        for i in range(per_partition):
            hdrs = [("p", str(p).encode()), ("i", str(i).encode())] if headers else []
            key = None if i % 7 == 3 else f"k{p}-{i}".encode()
            out.append((p, key, f"v{p}-{i}".encode(), hdrs, BASE_TS + p * 1000 + i))
    return out


def _fill(
    new_topic: Callable[..., str],
    produce: Any,
    broker: str,
    partitions: int,
    n: int,
    headers: bool = False,
) -> tuple[str, list[Any]]:
    topic = new_topic(partitions, prefix="spark")
    records = _records(partitions, n, headers)
    produce(broker, topic, records)
    return topic, records


def _reader(spark: Any, broker: str, **options: str) -> Any:
    reader = spark.read.format("kafka_async").option("kafka.bootstrap.servers", broker)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def test_batch_read_of_an_exact_range_across_partitions(
    spark: Any, kafka_broker: str, new_topic: Any, ck_produce: Any
) -> None:
    topic, records = _fill(new_topic, ck_produce, kafka_broker, 3, 40)
    df = _reader(
        spark,
        kafka_broker,
        subscribe=topic,
        startingOffsets=f'{{"{topic}":{{"0":5,"1":-2,"2":12}}}}',
        endingOffsets=f'{{"{topic}":{{"0":20,"1":40,"2":-1}}}}',
    )
    assert df.columns == [
        "key",
        "value",
        "topic",
        "partition",
        "offset",
        "timestamp",
        "timestampType",
    ]
    rows = df.collect()
    got = Counter(
        (r.partition, r.offset, r.key, r.value, int(r.timestamp.timestamp() * 1000)) for r in rows
    )
    want_ranges = {0: range(5, 20), 1: range(40), 2: range(12, 40)}
    want: Counter[tuple[int, int, bytes | None, bytes, int]] = Counter()
    for p, key, value, _h, ts in records:
        offset = int(value.decode().split("-")[1])  # one producer, so offset == index
        if offset in want_ranges[p]:
            want[(p, offset, key, value, ts)] += 1
    assert got == want
    assert {r.topic for r in rows} == {topic}
    assert {r.timestampType for r in rows} == {0}  # create time


def test_include_headers(spark: Any, kafka_broker: str, new_topic: Any, ck_produce: Any) -> None:
    topic, records = _fill(new_topic, ck_produce, kafka_broker, 2, 10, headers=True)
    with_headers = _reader(spark, kafka_broker, subscribe=topic, includeHeaders="true")
    assert with_headers.columns[-1] == "headers"
    got = {
        (r.partition, r.value): [(h.key, bytes(h.value)) for h in r.headers]
        for r in with_headers.collect()
    }
    want = {(p, value): hdrs for p, _k, value, hdrs, _ts in records}
    assert got == want
    without = _reader(spark, kafka_broker, subscribe=topic)
    assert "headers" not in without.columns
    assert without.count() == len(records)


def test_min_partitions_splits_ranges_without_overlap(
    spark: Any, kafka_broker: str, new_topic: Any, ck_produce: Any
) -> None:
    topic, records = _fill(new_topic, ck_produce, kafka_broker, 2, 50)
    df = _reader(spark, kafka_broker, assign=f'{{"{topic}":[0,1]}}', minPartitions="7")
    assert df.rdd.getNumPartitions() >= 7
    keys = Counter((r.partition, r.offset) for r in df.select("partition", "offset").collect())
    assert len(keys) == len(records)
    assert set(keys.values()) == {1}
    # Arrow all the way: toArrow keeps the source's column types.
    table = df.toArrow()
    assert table.num_rows == len(records)
    assert str(table.schema.field("offset").type) == "int64"


def test_subscribe_pattern_and_missing_topic(
    spark: Any, kafka_broker: str, new_topic: Any, ck_produce: Any
) -> None:
    topic, records = _fill(new_topic, ck_produce, kafka_broker, 1, 5)
    df = _reader(spark, kafka_broker, subscribePattern=f"{topic}|no-such-topic-.*")
    assert df.count() == len(records)
    # A JSON start that does not name every partition is refused with a clear message.
    with pytest.raises(Exception, match="every partition"):
        _reader(
            spark, kafka_broker, subscribe=topic, startingOffsets=f'{{"{topic}x":{{"0":0}}}}'
        ).collect()


def _stream_to_parquet(
    spark: Any, broker: str, topic: str, out: str, checkpoint: str, max_per_trigger: int
) -> Any:
    query = (
        spark.readStream.format("kafka_async")
        .option("kafka.bootstrap.servers", broker)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", str(max_per_trigger))
        .load()
        .select("partition", "offset", "value")
        .writeStream.format("parquet")
        .option("path", out)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(120), "the AvailableNow query did not finish in 120 s"
    assert query.exception() is None
    return query


def test_streaming_micro_batches_and_restart_from_checkpoint(
    spark: Any, kafka_broker: str, new_topic: Any, ck_produce: Any
) -> None:
    topic, first = _fill(new_topic, ck_produce, kafka_broker, 2, 30)
    out = tempfile.mkdtemp(prefix="spark-out-")
    checkpoint = tempfile.mkdtemp(prefix="spark-ckpt-")

    query = _stream_to_parquet(spark, kafka_broker, topic, out, checkpoint, 25)
    sizes = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
    assert sizes == [25, 25, 10], sizes  # maxOffsetsPerTrigger=25 over 60 records

    # More data arrives while the query is down; the restart resumes from the checkpoint.
    more: list[Row] = [
        (p, None, f"late{p}-{i}".encode(), [], BASE_TS + i) for p in range(2) for i in range(25)
    ]
    ck_produce(kafka_broker, topic, more)
    query = _stream_to_parquet(spark, kafka_broker, topic, out, checkpoint, 30)
    sizes = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
    assert sum(sizes) == 50, sizes

    rows = spark.read.parquet(out).collect()
    seen = Counter((r.partition, r.offset) for r in rows)
    assert len(rows) == len(first) + len(more)
    assert set(seen.values()) == {1}, "a record was read twice"
    assert {(r.partition, r.value) for r in rows} == {(p, v) for p, _k, v, _h, _t in first + more}


def test_streaming_with_pooled_consumers_reads_every_record_once(
    spark: Any, kafka_broker: str, new_topic: Any, ck_produce: Any
) -> None:
    """Many micro-batches per partition: the Python workers keep their consumers (and what
    they prefetched past each batch's end) from one batch to the next; the query still gets
    every record exactly once, in micro-batches of the planned sizes."""
    topic, first = _fill(new_topic, ck_produce, kafka_broker, 3, 200)
    name = f"pool_{topic.replace('-', '_')}"
    query = (
        spark.readStream.format("kafka_async")
        .option("kafka.bootstrap.servers", kafka_broker)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "70")
        .option("kafkaConsumer.useConsumerCache", "true")
        .option("kafkaConsumer.cache.capacity", "2")  # fewer than the partitions: evictions
        .load()
        .select("partition", "offset", "value")
        .writeStream.format("memory")
        .queryName(name)
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(180)
    assert query.exception() is None
    sizes = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
    assert sizes == [70] * 8 + [40], sizes
    rows = spark.sql(f"select * from {name}").collect()
    seen = Counter((r.partition, r.offset) for r in rows)
    assert set(seen.values()) == {1}, "a record was read twice"
    assert sorted(seen) == [(p, i) for p in range(3) for i in range(200)]
    assert {(r.partition, r.offset, r.value) for r in rows} == {
        (p, int(v.decode().split("-")[1]), v) for p, _k, v, _h, _t in first
    }


def test_streaming_starting_offsets_json_and_latest(
    spark: Any, kafka_broker: str, new_topic: Any, ck_produce: Any
) -> None:
    topic, _ = _fill(new_topic, ck_produce, kafka_broker, 2, 10)
    name = f"q_{topic.replace('-', '_')}"
    query = (
        spark.readStream.format("kafka_async")
        .option("kafka.bootstrap.servers", kafka_broker)
        .option("subscribe", topic)
        .option("startingOffsets", f'{{"{topic}":{{"0":7,"1":-1}}}}')
        .load()
        .writeStream.format("memory")
        .queryName(name)
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(120)
    got = sorted((r.partition, r.offset) for r in spark.sql(f"select * from {name}").collect())
    assert got == [(0, 7), (0, 8), (0, 9)]  # partition 1 starts at its end


def test_fail_on_data_loss(spark: Any, kafka_broker: str, new_topic: Any, ck_produce: Any) -> None:
    # Offsets past the end are what a recreated topic looks like to a query that read the old
    # one (the embedded broker cannot delete records, so retention cannot be staged here).
    topic, records = _fill(new_topic, ck_produce, kafka_broker, 1, 10)
    start = f'{{"{topic}":{{"0":50}}}}'
    with pytest.raises(Exception, match="failOnDataLoss"):
        _reader(spark, kafka_broker, subscribe=topic, startingOffsets=start).collect()
    lenient = _reader(
        spark, kafka_broker, subscribe=topic, startingOffsets=start, failOnDataLoss="false"
    )
    assert sorted(r.offset for r in lenient.collect()) == list(range(len(records)))


def _delete_records_or_gap(broker: str, topic: str, before: int) -> None:
    """DeleteRecords on partition 0 up to ``before``; a broker that fails the advertised API
    skips the test with librdkafka's answer to the same request (fails it if librdkafka
    succeeds)."""
    import anyio

    from kafka_async import AdminClient, TopicPartition
    from kafka_async.errors import KafkaConnectionError, KafkaTimeoutError
    from tests.harness.broker_gaps import confirm_broker_gap, librdkafka_admin_error

    tp = TopicPartition(topic, 0)

    async def delete() -> int:
        async with AdminClient(bootstrap_servers=broker) as admin:
            got = await admin.delete_records({tp: before}, timeout_ms=5000, raise_on_error=True)
        return got[tp].low_watermark

    try:
        assert anyio.run(delete) == before
    except (KafkaConnectionError, KafkaTimeoutError) as exc:
        from confluent_kafka import TopicPartition as RdTopicPartition

        theirs = librdkafka_admin_error(
            broker, lambda a: a.delete_records([RdTopicPartition(topic, 0, before)])
        )
        confirm_broker_gap("DeleteRecords", exc, theirs)


@pytest.mark.requires_api("DeleteRecords")
def test_fail_on_data_loss_after_delete_records(
    spark: Any, kafka_broker: str, new_topic: Any, ck_produce: Any
) -> None:
    """Records deleted (DeleteRecords: what retention does) before a query read them: a batch
    query starting below the log start and a streaming query resuming from its checkpoint
    fail with failOnDataLoss, and go on from the log start with failOnDataLoss=false."""
    topic, records = _fill(new_topic, ck_produce, kafka_broker, 1, 10)
    out = tempfile.mkdtemp(prefix="spark-out-")
    checkpoint = tempfile.mkdtemp(prefix="spark-ckpt-")
    _stream_to_parquet(spark, kafka_broker, topic, out, checkpoint, 100)  # offsets 0..9
    ck_produce(kafka_broker, topic, [(0, None, b"late%d" % i, [], BASE_TS) for i in range(10)])
    _delete_records_or_gap(kafka_broker, topic, 15)  # 10..14 deleted unread

    start = f'{{"{topic}":{{"0":2}}}}'
    with pytest.raises(Exception, match="failOnDataLoss"):
        _reader(spark, kafka_broker, subscribe=topic, startingOffsets=start).collect()
    lenient = _reader(
        spark, kafka_broker, subscribe=topic, startingOffsets=start, failOnDataLoss="false"
    )
    assert sorted(r.offset for r in lenient.collect()) == list(range(15, 20))

    def resume(**options: str) -> Any:
        reader = (
            spark.readStream.format("kafka_async")
            .option("kafka.bootstrap.servers", kafka_broker)
            .option("subscribe", topic)
        )
        for key, value in options.items():
            reader = reader.option(key, value)
        return (
            reader.load()
            .select("partition", "offset", "value")
            .writeStream.format("parquet")
            .option("path", out)
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .start()
        )

    # The checkpoint says "continue at 10"; the log now starts at 15.
    with pytest.raises(Exception, match="failOnDataLoss"):
        resume().awaitTermination(120)
    assert resume(failOnDataLoss="false").awaitTermination(120)
    offsets = sorted(r.offset for r in spark.read.parquet(out).collect())
    assert offsets == [*range(10), *range(15, 20)]
    assert len(records) == 10


def test_starting_timestamp(spark: Any, kafka_broker: str, new_topic: Any, ck_produce: Any) -> None:
    import anyio

    from kafka_async import Consumer, TopicPartition

    topic = new_topic(1, prefix="spark")
    ck_produce(
        kafka_broker, topic, [(0, None, b"v%d" % i, [], BASE_TS + i * 1000) for i in range(20)]
    )

    async def broker_lookup() -> int | None:
        async with Consumer(bootstrap_servers=kafka_broker, group_id=None) as consumer:
            tp = TopicPartition(topic, 0)
            found = await consumer.offsets_for_times({tp: BASE_TS + 10_500})
            hit = found.get(tp)
            return None if hit is None else hit.offset

    ours = anyio.run(broker_lookup)
    if ours != 11:
        from confluent_kafka import Consumer as RdConsumer
        from confluent_kafka import TopicPartition as RdTopicPartition

        from tests.harness.broker_gaps import confirm_broker_gap, librdkafka_error

        rd = RdConsumer({"bootstrap.servers": kafka_broker, "group.id": f"ts-{topic}"})
        try:
            theirs = librdkafka_error(
                lambda: rd.offsets_for_times(
                    [RdTopicPartition(topic, 0, BASE_TS + 10_500)], timeout=10
                ),
                check=lambda tp: None if tp.offset == 11 else f"offset {tp.offset} (expected 11)",
            )
        finally:
            rd.close()
        confirm_broker_gap("ListOffsets by timestamp", f"offset {ours} (expected 11)", theirs)
    df = _reader(spark, kafka_broker, subscribe=topic, startingTimestamp=str(BASE_TS + 10_500))
    assert sorted(r.offset for r in df.collect()) == list(range(11, 20))
    after_end = _reader(
        spark, kafka_broker, subscribe=topic, startingTimestamp=str(BASE_TS + 10**9)
    )
    with pytest.raises(Exception, match="startingOffsetsByTimestampStrategy"):
        after_end.collect()
    lenient = _reader(
        spark,
        kafka_broker,
        subscribe=topic,
        startingTimestamp=str(BASE_TS + 10**9),
        startingOffsetsByTimestampStrategy="latest",
    )
    assert lenient.count() == 0


def test_streaming_data_loss_after_topic_recreation(
    spark: Any, kafka_broker: str, new_topic: Any, ck_produce: Any, delete_for_recreation: Any
) -> None:
    from kafka_async.testing.topics import create_topic

    topic, first = _fill(new_topic, ck_produce, kafka_broker, 1, 20)
    out = tempfile.mkdtemp(prefix="spark-out-")
    checkpoint = tempfile.mkdtemp(prefix="spark-ckpt-")
    _stream_to_parquet(spark, kafka_broker, topic, out, checkpoint, 100)

    # Deleted as a user would before recreating: once the broker would accept it again
    # (ZooKeeper mode deletes asynchronously; see conftest.delete_topic_for_recreation).
    delete_for_recreation(kafka_broker, topic)
    create_topic(kafka_broker, topic, 1)
    ck_produce(kafka_broker, topic, [(0, None, b"new%d" % i, [], BASE_TS) for i in range(5)])

    # The checkpoint says "continue at 20" but the new topic ends at 5: data loss.
    query = (
        spark.readStream.format("kafka_async")
        .option("kafka.bootstrap.servers", kafka_broker)
        .option("subscribe", topic)
        .load()
        .select("partition", "offset", "value")
        .writeStream.format("parquet")
        .option("path", out)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    with pytest.raises(Exception, match="failOnDataLoss"):
        query.awaitTermination(120)

    query = (
        spark.readStream.format("kafka_async")
        .option("kafka.bootstrap.servers", kafka_broker)
        .option("subscribe", topic)
        .option("failOnDataLoss", "false")
        .load()
        .select("partition", "offset", "value")
        .writeStream.format("parquet")
        .option("path", out)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(120)
    values = sorted(r.value for r in spark.read.parquet(out).collect())
    assert values == sorted([v for _p, _k, v, _h, _t in first] + [b"new%d" % i for i in range(5)])


def test_streaming_with_the_default_trigger_picks_up_new_records(
    spark: Any, kafka_broker: str, new_topic: Any, ck_produce: Any
) -> None:
    topic, first = _fill(new_topic, ck_produce, kafka_broker, 2, 5)
    name = f"live_{topic.replace('-', '_')}"
    query = (
        spark.readStream.format("kafka_async")
        .option("kafka.bootstrap.servers", kafka_broker)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
        .writeStream.format("memory")
        .queryName(name)
        .start()
    )
    try:
        query.processAllAvailable()
        more: list[Row] = [(1, None, b"later", [], BASE_TS)]
        ck_produce(kafka_broker, topic, more)
        query.processAllAvailable()
        rows = spark.sql(f"select partition, offset, value from {name}").collect()
    finally:
        query.stop()
    assert sorted((r.partition, r.offset) for r in rows) == sorted(
        [(p, i) for p in range(2) for i in range(5)] + [(1, 5)]
    )
    assert len(first) == 10
