"""OpenTelemetry hooks: spans per producer batch and metrics from statistics(), checked with
the OpenTelemetry SDK's in-memory exporter and reader."""

from __future__ import annotations

import logging
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from kafka_async import Producer
from kafka_async.errors import ConfigError, NotLeaderOrFollowerError
from kafka_async.observability import ClientHooks, ConsumeEvent, ProduceEvent
from kafka_async.observability.otel import OpenTelemetryHooks

NewTopic = Callable[..., str]


def _otel() -> tuple[OpenTelemetryHooks, InMemorySpanExporter, InMemoryMetricReader]:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    hooks = OpenTelemetryHooks(tracer_provider=tracer_provider, meter_provider=meter_provider)
    return hooks, exporter, reader


def _points(reader: InMemoryMetricReader) -> dict[str, list[Any]]:
    data = reader.get_metrics_data()
    out: dict[str, list[Any]] = {}
    if data is None:
        return out
    for rm in data.resource_metrics:
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                out.setdefault(metric.name, []).extend(metric.data.data_points)
    return out


def test_importing_the_clients_does_not_import_opentelemetry() -> None:
    code = (
        "import sys, kafka_async, kafka_async.producer, kafka_async.consumer, "
        "kafka_async.observability\n"
        "loaded = [m for m in sys.modules if m.startswith('opentelemetry')]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_hooks_setting_is_validated() -> None:
    with pytest.raises(ConfigError, match="hooks"):
        # Deliberately not a ClientHooks: the run-time check is under test.
        Producer(bootstrap_servers="127.0.0.1:1", hooks=object())  # type: ignore[arg-type]


def test_failed_batch_span_has_error_status() -> None:
    hooks, exporter, _ = _otel()
    now = time.time_ns()
    hooks.on_produce(
        ProduceEvent(
            "cid", "orders", 3, 10, 1234, -1, 4, now - 5_000_000, now, NotLeaderOrFollowerError()
        )
    )
    (span,) = exporter.get_finished_spans()
    assert span.name == "send orders"
    assert span.kind is SpanKind.PRODUCER
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes is not None
    assert span.attributes["error.type"] == "NOT_LEADER_OR_FOLLOWER"
    assert span.attributes["messaging.destination.partition.id"] == "3"
    assert span.attributes["kafka_async.batch.attempts"] == 4
    assert "messaging.kafka.message.offset" not in span.attributes
    assert (span.start_time, span.end_time) == (now - 5_000_000, now)


def test_consume_span_attributes() -> None:
    hooks, exporter, _ = _otel()
    now = time.time_ns()
    hooks.on_consume(ConsumeEvent("cid", "g1", "orders", 0, 5, 10, 14, now - 1000, now))
    (span,) = exporter.get_finished_spans()
    assert span.name == "receive orders"
    assert span.kind is SpanKind.CONSUMER
    assert span.attributes is not None
    assert span.attributes["messaging.consumer.group.name"] == "g1"
    assert span.attributes["messaging.batch.message_count"] == 5
    assert span.attributes["messaging.kafka.message.offset"] == 10


def test_consumer_statistics_become_metrics() -> None:
    hooks, _, reader = _otel()
    stats = {
        "partitions": {"my-topic-2": {"lag": 7}, "my-topic-3": {"lag": None}},
        "fetcher": {"records_returned": 42, "buffered_bytes": 100},
        "group": {"group_id": "g", "generation_id": 3, "rebalances": 2},
    }
    hooks.client_started("consumer", "c1", lambda: stats)
    points = _points(reader)
    (lag,) = points["kafka_async.consumer.lag"]
    assert lag.value == 7
    assert lag.attributes["messaging.destination.name"] == "my-topic"
    assert lag.attributes["messaging.destination.partition.id"] == "2"
    assert [p.value for p in points["messaging.client.consumed.messages"]] == [42]
    assert [p.value for p in points["kafka_async.consumer.group.generation"]] == [3]
    assert [p.value for p in points["kafka_async.consumer.fetch.buffer.usage"]] == [100]


def test_share_consumer_statistics_become_metrics() -> None:
    hooks, _, reader = _otel()
    consumer = {"fetcher": {"records_returned": 5, "buffered_bytes": 0}}
    share = {
        "records_delivered": 9,
        "acknowledged": {"accept": 6, "release": 2, "reject": 1},
        "acknowledgements_failed": 1,
        "unacknowledged": 3,
    }
    hooks.client_started("consumer", "c1", lambda: consumer)
    hooks.client_started("share_consumer", "s1", lambda: share)
    points = _points(reader)
    consumed = {
        p.attributes["messaging.client.id"]: p.value
        for p in points["messaging.client.consumed.messages"]
    }
    assert consumed == {"c1": 5, "s1": 9}
    acks = {
        p.attributes["kafka_async.acknowledge.type"]: p.value
        for p in points["kafka_async.share_consumer.acknowledgements"]
    }
    assert acks == {"accept": 6, "release": 2, "reject": 1}
    assert [p.value for p in points["kafka_async.share_consumer.acknowledgements.failed"]] == [1]
    assert [p.value for p in points["kafka_async.share_consumer.unacknowledged"]] == [3]


@pytest.mark.integration
@pytest.mark.anyio
async def test_produce_spans_and_metrics(kafka_broker: str, new_topic: NewTopic) -> None:
    topic = new_topic(2)
    hooks, exporter, reader = _otel()
    async with Producer(bootstrap_servers=kafka_broker, hooks=hooks, client_id="otel-test") as p:
        deliveries = [await p.enqueue(topic, value=b"v%d" % i, partition=i % 2) for i in range(200)]
        await p.flush()
        points = _points(reader)
        stats = p.statistics()
    assert all(d.exception() is None for d in deliveries)

    spans = exporter.get_finished_spans()
    assert spans, "one span per batch"
    attrs_of: list[dict[str, Any]] = [dict(s.attributes or {}) for s in spans]
    assert sum(a["messaging.batch.message_count"] for a in attrs_of) == 200
    assert len(spans) == stats["batches_sent"]
    for span, attrs in zip(spans, attrs_of, strict=True):
        assert span.name == f"send {topic}"
        assert span.kind is SpanKind.PRODUCER
        assert span.parent is None
        assert span.status.status_code is StatusCode.UNSET
        assert attrs["messaging.system"] == "kafka"
        assert attrs["messaging.destination.name"] == topic
        assert attrs["messaging.client.id"] == "otel-test"
        assert attrs["messaging.operation.type"] == "send"
        assert span.start_time is not None
        assert span.end_time is not None
        assert span.start_time <= span.end_time
    # The offsets of each partition's spans tile its log.
    for partition in (0, 1):
        ranges = sorted(
            (int(a["messaging.kafka.message.offset"]), int(a["messaging.batch.message_count"]))
            for a in attrs_of
            if a["messaging.kafka.destination.partition"] == partition
        )
        expected = 0
        for first, count in ranges:
            assert first == expected
            expected += count
        assert expected == 100

    (sent,) = points["messaging.client.sent.messages"]
    assert sent.value == 200
    assert sent.attributes == {"messaging.system": "kafka", "messaging.client.id": "otel-test"}
    assert [pt.value for pt in points["kafka_async.producer.buffer.usage"]] == [0]
    assert [pt.value for pt in points["kafka_async.producer.buffer.records"]] == [0]
    assert points["kafka_async.producer.batches.sent"][0].value == stats["batches_sent"]
    assert points["kafka_async.producer.requests.sent"][0].value == stats["requests_sent"]
    assert [pt.value for pt in points["kafka_async.producer.batch_splits"]] == [0]
    # Once closed, the producer is no longer observed.
    assert "messaging.client.sent.messages" not in _points(reader)


@pytest.mark.integration
@pytest.mark.anyio
async def test_a_failing_hook_does_not_break_producing(
    kafka_broker: str, new_topic: NewTopic, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken(ClientHooks):
        def on_produce(self, event: ProduceEvent) -> None:
            raise RuntimeError("exporter down")

    topic = new_topic(1)
    caplog.set_level(logging.ERROR, logger="kafka_async.observability")
    async with Producer(bootstrap_servers=kafka_broker, hooks=Broken()) as p:
        md = await p.send(topic, value=b"v")
    assert md.offset == 0
    assert any("exporter down" in (r.exc_text or "") or r.exc_info for r in caplog.records)
