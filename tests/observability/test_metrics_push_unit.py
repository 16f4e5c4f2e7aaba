"""KIP-714 pieces without a broker: the OTLP encoder (decoded with opentelemetry-proto, the
OTLP project's own classes), prefix matching, codec choice, the queue-time sensor, and what the
share consumer and the admin client push (on by default, as in the Java clients)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from kafka_async.admin.config import AdminConfig
from kafka_async.consumer.share import ShareConsumer
from kafka_async.consumer.share.config import ShareConsumerConfig
from kafka_async.observability.telemetry import (
    MetricPoint,
    Sensor,
    Subscription,
    admin_pusher,
    encode_metrics_data,
    share_consumer_metrics,
    share_consumer_pusher,
)
from kafka_async.records import compression

metrics_pb2 = pytest.importorskip("opentelemetry.proto.metrics.v1.metrics_pb2")


def _sub(requested: tuple[str, ...], codecs: tuple[int, ...] = ()) -> Subscription:
    return Subscription(7, requested, 1000, True, 1 << 20, codecs)


def test_encoded_metrics_decode_with_the_otlp_classes() -> None:
    gauge = MetricPoint("org.apache.kafka.producer.record.queue.time.avg", 2.5, unit="ms")
    total = MetricPoint("org.apache.kafka.producer.record.send.total", 9, "sum", (("node.id", 1),))
    negative = MetricPoint("x.level", -3)
    data = encode_metrics_data(
        [(gauge, 2.5, 1), (total, 4, 100), (negative, -3, 1)],
        time_ns=200,
        delta=True,
        resource={"client_id": "c1"},
        scope=("kafka_async", "1.0"),
    )
    decoded = metrics_pb2.MetricsData()
    decoded.ParseFromString(data)
    (rm,) = decoded.resource_metrics
    assert [(a.key, a.value.string_value) for a in rm.resource.attributes] == [("client_id", "c1")]
    (sm,) = rm.scope_metrics
    assert (sm.scope.name, sm.scope.version) == ("kafka_async", "1.0")
    by_name = {m.name: m for m in sm.metrics}
    avg = by_name[gauge.name]
    assert avg.unit == "ms"
    assert avg.gauge.data_points[0].as_double == 2.5
    assert avg.gauge.data_points[0].time_unix_nano == 200
    send = by_name[total.name].sum
    assert send.is_monotonic
    assert send.aggregation_temporality == metrics_pb2.AGGREGATION_TEMPORALITY_DELTA
    (point,) = send.data_points
    assert (point.as_int, point.start_time_unix_nano, point.time_unix_nano) == (4, 100, 200)
    assert [(a.key, a.value.int_value) for a in point.attributes] == [("node.id", 1)]
    assert by_name["x.level"].gauge.data_points[0].as_int == -3


def test_cumulative_temporality() -> None:
    total = MetricPoint("a.total", 5, "sum")
    data = encode_metrics_data(
        [(total, 5, 1)], time_ns=2, delta=False, resource={}, scope=("kafka_async", "")
    )
    decoded = metrics_pb2.MetricsData()
    decoded.ParseFromString(data)
    metric = decoded.resource_metrics[0].scope_metrics[0].metrics[0]
    assert metric.sum.aggregation_temporality == metrics_pb2.AGGREGATION_TEMPORALITY_CUMULATIVE


def test_prefix_matching() -> None:
    sub = _sub(("org.apache.kafka.producer.record.", "org.apache.kafka.producer.buffer.total"))
    assert sub.matches("org.apache.kafka.producer.record.queue.time.avg")
    assert sub.matches("org.apache.kafka.producer.buffer.total.bytes")
    assert not sub.matches("org.apache.kafka.producer.buffer.available.bytes")
    assert not sub.matches("org.apache.kafka.consumer.fetch.manager.fetch.total")
    assert _sub(("",)).matches("anything")
    assert _sub(("*",)).matches("anything")
    assert not _sub(()).matches("anything")


def test_codec_is_the_first_accepted_one_we_write() -> None:
    assert _sub((), (compression.ZSTD, compression.GZIP)).codec == compression.ZSTD
    assert _sub((), (9, compression.LZ4)).codec == compression.LZ4
    assert _sub((), ()).codec == compression.NONE


def test_sensor_window() -> None:
    sensor = Sensor()
    assert sensor.take() is None
    for value in (1.0, 5.0, 3.0):
        sensor.record(value)
    assert sensor.take() == (3.0, 5.0)
    assert sensor.take() is None
    assert sensor.count == 3


def test_an_integer_beyond_int64_goes_as_a_double() -> None:
    """A counter past sfixed64's range must not fail the push (struct.error): as_double."""
    big = MetricPoint("a.total", 1 << 70, "sum")
    data = encode_metrics_data(
        [(big, 1 << 70, 1)], time_ns=2, delta=False, resource={}, scope=("kafka_async", "")
    )
    decoded = metrics_pb2.MetricsData()
    decoded.ParseFromString(data)
    point = decoded.resource_metrics[0].scope_metrics[0].metrics[0].sum.data_points[0]
    assert point.as_double == float(1 << 70)


def test_share_consumer_and_admin_push_by_default() -> None:
    """``enable_metrics_push`` is on by default (Java's ``enable.metrics.push``), off on ask."""
    assert ShareConsumerConfig.from_kwargs(group_id="g").enable_metrics_push is True
    assert AdminConfig.from_kwargs().enable_metrics_push is True
    off = ShareConsumerConfig.from_kwargs(group_id="g", enable_metrics_push=False)
    assert off.enable_metrics_push is False
    assert AdminConfig.from_kwargs(enable_metrics_push=False).enable_metrics_push is False


SHARE = "org.apache.kafka.consumer.share."


def test_share_consumer_metrics_under_the_java_share_consumer_names() -> None:
    stats = {
        "fetcher": {"fetches": 7},
        "records_delivered": 40,
        # Renewals extend a lock, gaps are no records: neither is a record acknowledgement.
        "acknowledged": {"accept": 30, "release": 4, "reject": 1, "renew": 9, "gap": 2},
        "acknowledgements_failed": 3,
        "group": {"heartbeats": 12},
    }
    points = {p.name: p for p in share_consumer_metrics(stats)}
    assert {name: p.value for name, p in points.items()} == {
        SHARE + "fetch.manager.fetch.total": 7,
        SHARE + "fetch.manager.records.consumed.total": 40,
        SHARE + "fetch.manager.acknowledgements.send.total": 35,
        SHARE + "fetch.manager.acknowledgements.error.total": 3,
        SHARE + "coordinator.heartbeat.total": 12,
    }
    assert all(p.kind == "sum" for p in points.values())
    assert share_consumer_metrics({}) == []


@pytest.mark.anyio
async def test_share_consumer_statistics_feed_every_share_metric() -> None:
    """The keys ``share_consumer_metrics`` reads are those ``ShareConsumer.statistics()``
    has (a renamed key would silently drop a metric)."""
    consumer = ShareConsumer("t", group_id="g", bootstrap_servers="127.0.0.1:1")
    names = {p.name for p in share_consumer_metrics(consumer.statistics())}
    assert names == {
        SHARE + "fetch.manager.fetch.total",
        SHARE + "fetch.manager.records.consumed.total",
        SHARE + "fetch.manager.acknowledgements.send.total",
        SHARE + "fetch.manager.acknowledgements.error.total",
        SHARE + "coordinator.heartbeat.total",
    }


def _stub_client(connections: int) -> Any:
    stats = SimpleNamespace(connections={i: object() for i in range(connections)})
    return SimpleNamespace(pool=SimpleNamespace(statistics=lambda: stats))


def test_share_consumer_pusher_resource_and_connection_count() -> None:
    stats = {"records_delivered": 2}
    pusher = share_consumer_pusher(_stub_client(2), lambda: stats, client_id="c1", group_id="g1")
    assert pusher._resource == {"client_id": "c1", "group_id": "g1"}
    points = {p.name: p.value for p in pusher._collect()}
    # Java's KafkaShareConsumer builds its network client with the consumer's group prefix.
    assert points["org.apache.kafka.consumer.connection.count"] == 2
    assert points[SHARE + "fetch.manager.records.consumed.total"] == 2


def test_admin_pusher_pushes_the_admin_client_connection_count() -> None:
    pusher = admin_pusher(_stub_client(3), client_id="a1")
    assert pusher._resource == {"client_id": "a1"}
    assert [(p.name, p.value) for p in pusher._collect()] == [
        ("org.apache.kafka.admin.client.connection.count", 3)
    ]
