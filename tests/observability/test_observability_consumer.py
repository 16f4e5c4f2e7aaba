"""Consumer observability against a real broker: ``receive`` spans per partition per poll
(per chunk for ``async for``), consumer metrics from ``statistics()``, and nothing at all
without hooks. Checked with the OpenTelemetry SDK's in-memory exporter and reader."""

from __future__ import annotations

import logging
import sys
import textwrap
from collections.abc import Callable, Sequence
from typing import Any

import anyio
import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from kafka_async import Producer
from kafka_async.consumer import Consumer
from kafka_async.errors import ConfigError
from kafka_async.observability import ClientHooks, ConsumeEvent, StatisticsSource
from kafka_async.observability.otel import OpenTelemetryHooks
from kafka_async.structs import TopicPartition

NewTopic = Callable[..., str]

#: Short session: Tansu holds a JoinGroup for about half of it before completing the round.
_FAST_GROUP: dict[str, Any] = {
    "session_timeout_ms": 2_000,
    "heartbeat_interval_ms": 300,
    "auto_offset_reset": "earliest",
}


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


async def _produce(bootstrap: str, topic: str, count: int, partitions: int) -> None:
    async with Producer(bootstrap_servers=bootstrap, linger_ms=5) as p:
        deliveries = [
            await p.enqueue(topic, key=b"%d" % i, value=b"v%d" % i, partition=i % partitions)
            for i in range(count)
        ]
        await p.flush()
    assert all(d.exception() is None for d in deliveries)


def _consume_spans(spans: Sequence[ReadableSpan]) -> list[tuple[ReadableSpan, dict[str, Any]]]:
    return [(s, dict(s.attributes or {})) for s in spans if s.kind is SpanKind.CONSUMER]


def _assert_tiles(attrs: list[dict[str, Any]], partition: int, count: int) -> None:
    """The spans of ``partition`` cover offsets 0..count-1 exactly once, in order."""
    ranges = sorted(
        (
            int(a["messaging.kafka.message.offset"]),
            int(a["kafka_async.last_offset"]),
            int(a["messaging.batch.message_count"]),
        )
        for a in attrs
        if a["messaging.kafka.destination.partition"] == partition
    )
    expected = 0
    for first, last, n in ranges:
        assert first == expected
        assert last == first + n - 1
        expected += n
    assert expected == count


def test_consumer_hooks_setting_is_validated() -> None:
    with pytest.raises(ConfigError, match="hooks"):
        # Deliberately not a ClientHooks: the run-time check is under test.
        Consumer(bootstrap_servers="127.0.0.1:1", hooks=object())  # type: ignore[call-overload]


@pytest.mark.integration
@pytest.mark.anyio
async def test_group_consumer_spans_and_metrics(kafka_broker: str, new_topic: NewTopic) -> None:
    topic = new_topic(2)
    await _produce(kafka_broker, topic, 300, 2)
    hooks, exporter, reader = _otel()
    group = f"otel-{topic}"
    got = 0
    async with Consumer[bytes, bytes](
        topic,
        bootstrap_servers=kafka_broker,
        group_id=group,
        client_id="otel-consumer",
        hooks=hooks,
        **_FAST_GROUP,
    ) as c:
        with anyio.fail_after(30):
            while got < 300:
                batch = await c.getmany(timeout_ms=1000, max_records=70)
                got += sum(map(len, batch.values()))
        points = _points(reader)
        stats = c.statistics()
    assert got == 300

    consumed = _consume_spans(exporter.get_finished_spans())
    assert consumed, "one span per partition per getmany"
    attrs = [a for _, a in consumed]
    assert sum(a["messaging.batch.message_count"] for a in attrs) == 300
    # max_records=70 over 300 records: at least one span per getmany call that returned any.
    assert len(consumed) >= 300 // 70
    for span, a in consumed:
        assert span.name == f"receive {topic}"
        assert span.parent is None
        assert span.status.status_code is StatusCode.UNSET
        assert span.start_time is not None
        assert span.end_time is not None
        assert span.start_time <= span.end_time
        assert a["messaging.system"] == "kafka"
        assert a["messaging.operation.type"] == "receive"
        assert a["messaging.operation"] == "receive"
        assert a["messaging.destination.name"] == topic
        assert a["messaging.destination.partition.id"] == str(
            a["messaging.kafka.destination.partition"]
        )
        assert a["messaging.consumer.group.name"] == group
        assert a["messaging.client.id"] == "otel-consumer"
    for partition in (0, 1):
        _assert_tiles(attrs, partition, 150)

    (consumed_messages,) = points["messaging.client.consumed.messages"]
    assert consumed_messages.value == 300 == stats["fetcher"]["records_returned"]
    assert consumed_messages.attributes == {
        "messaging.system": "kafka",
        "messaging.client.id": "otel-consumer",
    }
    lag = {
        (
            p.attributes["messaging.destination.name"],
            p.attributes["messaging.destination.partition.id"],
        ): p.value
        for p in points["kafka_async.consumer.lag"]
    }
    assert set(lag) == {(topic, "0"), (topic, "1")}
    for (_, partition), value in lag.items():
        assert value == stats["partitions"][f"{topic}-{partition}"]["lag"]
        assert value >= 0
    (generation,) = points["kafka_async.consumer.group.generation"]
    assert generation.value == stats["group"]["generation_id"] >= 0
    assert generation.attributes["messaging.consumer.group.name"] == group
    assert "kafka_async.consumer.fetch.buffer.usage" in points
    assert "kafka_async.consumer.rebalances" in points
    # Closed: the consumer is no longer observed.
    assert "messaging.client.consumed.messages" not in _points(reader)


@pytest.mark.integration
@pytest.mark.anyio
async def test_async_for_reports_per_chunk_and_never_twice(
    kafka_broker: str, new_topic: NewTopic
) -> None:
    topic = new_topic(1)
    total = 1500
    await _produce(kafka_broker, topic, total, 1)
    hooks, exporter, _ = _otel()
    seen: list[int] = []
    async with Consumer[bytes, bytes](
        bootstrap_servers=kafka_broker, auto_offset_reset="earliest", hooks=hooks
    ) as c:
        c.assign([TopicPartition(topic, 0)])
        with anyio.fail_after(30):
            async for record in c:
                seen.append(record.offset)
                if len(seen) == 700:
                    break
            # The rest of the iterator's chunk comes back through getmany: already reported
            # when the iterator took it, so it must not be reported again.
            while len(seen) < total:
                batch = await c.getmany(timeout_ms=1000)
                seen.extend(r.offset for recs in batch.values() for r in recs)
    assert seen == list(range(total))

    consumed = _consume_spans(exporter.get_finished_spans())
    attrs = [a for _, a in consumed]
    _assert_tiles(attrs, 0, total)
    # Per chunk (up to 500 records), not per record.
    assert len(consumed) <= total // 10
    assert max(a["messaging.batch.message_count"] for a in attrs) > 1
    for _, a in consumed:
        assert "messaging.consumer.group.name" not in a


@pytest.mark.integration
@pytest.mark.anyio
async def test_consumer_hooks_lifecycle_and_a_failing_hook(
    kafka_broker: str, new_topic: NewTopic, caplog: pytest.LogCaptureFixture
) -> None:
    class Recording(ClientHooks):
        def __init__(self) -> None:
            self.calls: list[tuple[str, str, str, StatisticsSource]] = []

        def client_started(self, kind: str, client_id: str, statistics: StatisticsSource) -> None:
            self.calls.append(("started", kind, client_id, statistics))

        def client_closed(self, kind: str, client_id: str, statistics: StatisticsSource) -> None:
            self.calls.append(("closed", kind, client_id, statistics))

        def on_consume(self, event: ConsumeEvent) -> None:
            raise RuntimeError("exporter down")

    topic = new_topic(1)
    await _produce(kafka_broker, topic, 20, 1)
    hooks = Recording()
    caplog.set_level(logging.ERROR, logger="kafka_async.observability")
    c: Consumer[Any, Any] = Consumer(
        bootstrap_servers=kafka_broker, auto_offset_reset="earliest", client_id="rec", hooks=hooks
    )
    assert hooks.calls == []
    async with c:
        assert [call[:3] for call in hooks.calls] == [("started", "consumer", "rec")]
        assert hooks.calls[0][3]()["closed"] is False
        c.assign([TopicPartition(topic, 0)])
        got = 0
        with anyio.fail_after(30):
            while got < 20:
                batch = await c.getmany(timeout_ms=1000)
                got += sum(map(len, batch.values()))
    assert got == 20
    assert [call[:3] for call in hooks.calls] == [
        ("started", "consumer", "rec"),
        ("closed", "consumer", "rec"),
    ]
    assert hooks.calls[1][3] == hooks.calls[0][3] == c.statistics
    assert any("exporter down" in (r.exc_text or "") for r in caplog.records)


@pytest.mark.integration
@pytest.mark.anyio
async def test_consumer_without_hooks_emits_nothing(kafka_broker: str, new_topic: NewTopic) -> None:
    topic = new_topic(1)
    # Hooks on the producer only: the consumer beside it must not report through them.
    hooks, exporter, reader = _otel()
    async with Producer(bootstrap_servers=kafka_broker, hooks=hooks) as p:
        for i in range(50):
            await p.enqueue(topic, value=b"v%d" % i, partition=0)
        await p.flush()
    async with Consumer[bytes, bytes](
        bootstrap_servers=kafka_broker, auto_offset_reset="earliest"
    ) as c:
        c.assign([TopicPartition(topic, 0)])
        got = 0
        with anyio.fail_after(30):
            while got < 50:
                batch = await c.getmany(timeout_ms=1000)
                got += sum(map(len, batch.values()))
            assert not any(name.startswith("kafka_async.consumer") for name in _points(reader))
    spans = exporter.get_finished_spans()
    assert spans
    assert {s.kind for s in spans} == {SpanKind.PRODUCER}

    # And a process that consumes without hooks never imports OpenTelemetry.
    code = textwrap.dedent(
        f"""
        import sys
        import anyio
        from kafka_async.consumer import Consumer
        from kafka_async.structs import TopicPartition

        async def main() -> int:
            async with Consumer[bytes, bytes](
                bootstrap_servers={kafka_broker!r}, auto_offset_reset="earliest"
            ) as c:
                c.assign([TopicPartition({topic!r}, 0)])
                n = 0
                with anyio.fail_after(30):
                    async for _ in c:
                        n += 1
                        if n == 50:
                            break
                return n

        assert anyio.run(main) == 50
        loaded = [m for m in sys.modules if m.startswith("opentelemetry")]
        assert not loaded, loaded
        """
    )
    proc = await anyio.run_process([sys.executable, "-c", code], check=False)
    assert proc.returncode == 0, proc.stderr.decode()
