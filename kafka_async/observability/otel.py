"""OpenTelemetry for kafka_async (the ``otel`` extra: ``opentelemetry-api``).

::

    from kafka_async.observability.otel import OpenTelemetryHooks

    hooks = OpenTelemetryHooks()          # the global tracer and meter providers
    async with Producer(bootstrap_servers=..., hooks=hooks) as producer:
        ...

Importing this module imports ``opentelemetry``; nothing else in kafka_async does, so code
that never asks for OpenTelemetry never pays for it.

Traces. One span per producer *batch* (the records of one partition settled by one
Produce request), not per record: with the OpenTelemetry SDK a span costs about 25 us to
create and end (measured on the development machine), ten times what ``enqueue`` costs per
record (about 2 us); per batch it is a fraction of a microsecond per record. The span is
named ``send {topic}``, has kind PRODUCER, starts when the batch's first record was queued,
ends when the broker acknowledged it (or it failed) and carries the messaging semantic
conventions: ``messaging.system=kafka``, ``messaging.operation.type``/``.name=send`` (and
the older ``messaging.operation=publish``),
``messaging.destination.name``, ``messaging.destination.partition.id`` (and the older
``messaging.kafka.destination.partition``), ``messaging.batch.message_count``,
``messaging.kafka.message.offset`` (the batch's first offset), ``messaging.client.id``,
``error.type`` and an ERROR status on failure.

The consumer reports ``receive {topic}`` spans (kind CONSUMER) the same way: one per
partition each time ``getmany`` hands out records (``async for``/``getone``: per chunk of
up to 500 records taken from the fetch buffer, not per record), from when the poll began
to when it returned, with ``messaging.operation.type=receive`` (``messaging.operation``),
``messaging.operation.name=poll``, ``messaging.consumer.group.name`` (and the older
``messaging.kafka.consumer.group``) when the consumer is in a group,
``messaging.batch.message_count``, ``messaging.kafka.message.offset`` (the first offset)
and ``kafka_async.last_offset``.
Batch spans belong to no request's trace (they are roots): a batch mixes records of many
callers.

Metrics. Observable instruments read the clients' ``statistics()`` when the meter collects,
so they cost nothing on the produce and fetch paths:

- ``messaging.client.sent.messages``: counter ({message}); failed records carry
  ``error.type``
- ``kafka_async.producer.buffer.usage``: gauge (By)
- ``kafka_async.producer.buffer.records``: gauge ({record})
- ``kafka_async.producer.requests.in_flight``: gauge ({request}), per ``kafka_async.node_id``
- ``kafka_async.producer.requests.sent``: counter ({request})
- ``kafka_async.producer.batches.sent``: counter ({batch})
- ``kafka_async.producer.retries``: counter ({retry})
- ``kafka_async.producer.batch_splits``: counter ({split}); batches split after the broker
  refused them as too large
- ``kafka_async.producer.errors``: counter ({error}), per ``error.type``
- ``messaging.client.consumed.messages``: counter ({message})
- ``kafka_async.consumer.lag``: gauge ({message}), per destination name and partition id
- ``kafka_async.consumer.fetch.buffer.usage``: gauge (By)
- ``kafka_async.consumer.group.generation``: gauge, per ``messaging.consumer.group.name``
- ``kafka_async.consumer.rebalances``: counter ({rebalance}), per group
- the share consumer (kind ``share_consumer``) feeds ``messaging.client.consumed.messages``
  and ``kafka_async.share_consumer.acknowledgements`` (counter, per
  ``kafka_async.acknowledge.type``: accept, release, reject, gap),
  ``kafka_async.share_consumer.acknowledgements.failed`` (counter) and
  ``kafka_async.share_consumer.unacknowledged`` (gauge)

Every data point also carries ``messaging.system=kafka`` and ``messaging.client.id``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from ..errors import ConfigError
from . import ClientHooks, ConsumeEvent, ProduceEvent, StatisticsSource

try:
    from opentelemetry import context as otel_context
    from opentelemetry import metrics as otel_metrics
    from opentelemetry import trace as otel_trace
    from opentelemetry.metrics import CallbackOptions, Observation
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ConfigError(
        "OpenTelemetry hooks need opentelemetry-api: pip install 'kafka-async-client[otel]'"
    ) from exc

__all__ = ["OpenTelemetryHooks"]

_SCOPE = "kafka_async"

#: (kind, statistics) -> observations (value, extra attributes)
_Extractor = Callable[[Mapping[str, Any]], Iterator[tuple[float, dict[str, Any]]]]


def _scalar(key: str) -> _Extractor:
    def extract(stats: Mapping[str, Any]) -> Iterator[tuple[float, dict[str, Any]]]:
        value = stats.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            yield value, {}

    return extract


def _nested(
    section: str, key: str, attrs: Callable[[Mapping[str, Any]], dict[str, Any]]
) -> _Extractor:
    def extract(stats: Mapping[str, Any]) -> Iterator[tuple[float, dict[str, Any]]]:
        inner = stats.get(section)
        if isinstance(inner, Mapping):
            value = inner.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                yield value, attrs(inner)

    return extract


def _by_key(key: str, attr: str) -> _Extractor:
    def extract(stats: Mapping[str, Any]) -> Iterator[tuple[float, dict[str, Any]]]:
        values = stats.get(key)
        if isinstance(values, Mapping):
            for name, value in values.items():
                if isinstance(value, int | float) and not isinstance(value, bool):
                    yield value, {attr: str(name)}

    return extract


def _sent_messages(stats: Mapping[str, Any]) -> Iterator[tuple[float, dict[str, Any]]]:
    acked = stats.get("records_acked")
    if isinstance(acked, int):
        yield acked, {}
    failed = stats.get("records_failed_by_error")
    if isinstance(failed, Mapping):
        for name, count in failed.items():
            yield count, {"error.type": str(name)}


def _consumer_lag(stats: Mapping[str, Any]) -> Iterator[tuple[float, dict[str, Any]]]:
    parts = stats.get("partitions")
    if not isinstance(parts, Mapping):
        return
    for name, part in parts.items():
        lag = part.get("lag") if isinstance(part, Mapping) else None
        if isinstance(lag, int):
            topic, _, partition = str(name).rpartition("-")
            yield (
                lag,
                {
                    "messaging.destination.name": topic,
                    "messaging.destination.partition.id": partition,
                },
            )


def _group(inner: Mapping[str, Any]) -> dict[str, Any]:
    return {"messaging.consumer.group.name": str(inner.get("group_id"))}


def _consumed(stats: Mapping[str, Any]) -> Iterator[tuple[float, dict[str, Any]]]:
    fetcher = stats.get("fetcher")
    if isinstance(fetcher, Mapping):
        value = fetcher.get("records_returned")
        if isinstance(value, int):
            yield value, {}


def _fetch_buffer(stats: Mapping[str, Any]) -> Iterator[tuple[float, dict[str, Any]]]:
    fetcher = stats.get("fetcher")
    if isinstance(fetcher, Mapping):
        value = fetcher.get("buffered_bytes")
        if isinstance(value, int):
            yield value, {}


# name, observable counter (True) or gauge, unit, description, client kind, extractor
_INSTRUMENTS: list[tuple[str, bool, str, str, str, _Extractor]] = [
    (
        "messaging.client.sent.messages",
        True,
        "{message}",
        "Records acknowledged by the broker, and records failed (with error.type).",
        "producer",
        _sent_messages,
    ),
    (
        "kafka_async.producer.buffer.usage",
        False,
        "By",
        "Buffer memory held by unsettled records.",
        "producer",
        _scalar("buffer_used"),
    ),
    (
        "kafka_async.producer.buffer.records",
        False,
        "{record}",
        "Records queued or in flight, not yet settled.",
        "producer",
        _scalar("buffered_records"),
    ),
    (
        "kafka_async.producer.requests.in_flight",
        False,
        "{request}",
        "Produce requests awaiting an answer, per broker.",
        "producer",
        _by_key("in_flight_requests", "kafka_async.node_id"),
    ),
    (
        "kafka_async.producer.requests.sent",
        True,
        "{request}",
        "Produce requests sent.",
        "producer",
        _scalar("requests_sent"),
    ),
    (
        "kafka_async.producer.batches.sent",
        True,
        "{batch}",
        "Record batches sent (a retried batch counts again).",
        "producer",
        _scalar("batches_sent"),
    ),
    (
        "kafka_async.producer.retries",
        True,
        "{retry}",
        "Batches put back for another attempt.",
        "producer",
        _scalar("retries"),
    ),
    (
        "kafka_async.producer.batch_splits",
        True,
        "{split}",
        "Batches split and sent again after the broker refused them as too large.",
        "producer",
        _scalar("batch_splits"),
    ),
    (
        "kafka_async.producer.errors",
        True,
        "{error}",
        "Errors met by batches (retried or final), by error.",
        "producer",
        _by_key("errors_by_code", "error.type"),
    ),
    (
        "messaging.client.consumed.messages",
        True,
        "{message}",
        "Records handed to the application.",
        "consumer",
        _consumed,
    ),
    (
        "kafka_async.consumer.lag",
        False,
        "{message}",
        "High watermark minus position, per assigned partition.",
        "consumer",
        _consumer_lag,
    ),
    (
        "kafka_async.consumer.fetch.buffer.usage",
        False,
        "By",
        "Fetched bytes buffered, not yet handed out.",
        "consumer",
        _fetch_buffer,
    ),
    (
        "kafka_async.consumer.group.generation",
        False,
        "1",
        "The consumer group generation this member is in.",
        "consumer",
        _nested("group", "generation_id", _group),
    ),
    (
        "kafka_async.consumer.rebalances",
        True,
        "{rebalance}",
        "Rebalances this member went through.",
        "consumer",
        _nested("group", "rebalances", _group),
    ),
    (
        "messaging.client.consumed.messages",
        True,
        "{message}",
        "Records handed to the application.",
        "share_consumer",
        _scalar("records_delivered"),
    ),
    (
        "kafka_async.share_consumer.acknowledgements",
        True,
        "{record}",
        "Acknowledgements the broker applied, per kafka_async.acknowledge.type.",
        "share_consumer",
        _by_key("acknowledged", "kafka_async.acknowledge.type"),
    ),
    (
        "kafka_async.share_consumer.acknowledgements.failed",
        True,
        "{record}",
        "Acknowledgements the broker refused or never answered.",
        "share_consumer",
        _scalar("acknowledgements_failed"),
    ),
    (
        "kafka_async.share_consumer.unacknowledged",
        False,
        "{record}",
        "Delivered records still waiting for their acknowledgement.",
        "share_consumer",
        _scalar("unacknowledged"),
    ),
]


class OpenTelemetryHooks(ClientHooks):
    """Spans per batch and metrics from ``statistics()``; see the module docstring.

    ``tracer_provider`` / ``meter_provider``: defaults are the global providers.
    ``traces=False`` or ``metrics=False`` turns either part off.
    """

    def __init__(
        self,
        *,
        tracer_provider: Any = None,
        meter_provider: Any = None,
        traces: bool = True,
        metrics: bool = True,
    ) -> None:
        from .. import __version__

        self._tracer: Any = (
            otel_trace.get_tracer(_SCOPE, __version__, tracer_provider) if traces else None
        )
        # Batch spans are roots: the sender task's context is whichever task started the
        # client, which says nothing about the records of a batch.
        self._root = otel_context.Context()
        self._lock = threading.Lock()
        #: kind -> list of (client id, statistics); a client id may be shared by clients.
        self._sources: dict[str, list[tuple[str, StatisticsSource]]] = {}
        self._instruments: list[Any] = []
        if metrics:
            meter = otel_metrics.get_meter(_SCOPE, __version__, meter_provider=meter_provider)
            # One instrument per name; several client kinds may feed it (records consumed
            # by a consumer and by a share consumer are the same metric).
            specs: dict[str, tuple[bool, str, str, list[Any]]] = {}
            for name, counter, unit, description, kind, extract in _INSTRUMENTS:
                spec = specs.setdefault(name, (counter, unit, description, []))
                spec[3].append(self._callback(kind, extract))
            for name, (counter, unit, description, callbacks) in specs.items():
                factory = (
                    meter.create_observable_counter if counter else meter.create_observable_gauge
                )
                self._instruments.append(
                    factory(name, callbacks=callbacks, unit=unit, description=description)
                )

    def _callback(
        self, kind: str, extract: _Extractor
    ) -> Callable[[CallbackOptions], Iterable[Observation]]:
        def observe(options: CallbackOptions) -> Iterable[Observation]:
            with self._lock:
                sources = list(self._sources.get(kind, ()))
            out: list[Observation] = []
            for client_id, statistics in sources:
                base = {"messaging.system": "kafka", "messaging.client.id": client_id}
                for value, attrs in extract(statistics()):
                    out.append(Observation(value, {**base, **attrs}))
            return out

        return observe

    # -- ClientHooks -----------------------------------------------------------------------

    def client_started(self, kind: str, client_id: str, statistics: StatisticsSource) -> None:
        with self._lock:
            self._sources.setdefault(kind, []).append((client_id, statistics))

    def client_closed(self, kind: str, client_id: str, statistics: StatisticsSource) -> None:
        with self._lock:
            sources = self._sources.get(kind, [])
            for i, (cid, stats) in enumerate(sources):
                # Bound methods compare equal when they are of the same client.
                if cid == client_id and stats == statistics:
                    del sources[i]
                    break

    def on_produce(self, event: ProduceEvent) -> None:
        tracer = self._tracer
        if tracer is None:
            return
        attrs: dict[str, Any] = {
            "messaging.system": "kafka",
            "messaging.operation.type": "send",
            "messaging.operation.name": "send",
            "messaging.operation": "publish",
            "messaging.destination.name": event.topic,
            "messaging.destination.partition.id": str(event.partition),
            "messaging.kafka.destination.partition": event.partition,
            "messaging.batch.message_count": event.record_count,
            "messaging.client.id": event.client_id,
            "kafka_async.batch.size": event.size_bytes,
            "kafka_async.batch.attempts": event.attempts,
        }
        if event.base_offset >= 0:
            attrs["messaging.kafka.message.offset"] = event.base_offset
        span = tracer.start_span(
            f"send {event.topic}",
            context=self._root,
            kind=otel_trace.SpanKind.PRODUCER,
            attributes=attrs,
            start_time=event.start_ns,
        )
        if event.error is not None:
            error = event.error
            span.set_attribute("error.type", getattr(error, "name", type(error).__name__))
            span.set_status(otel_trace.Status(otel_trace.StatusCode.ERROR, str(error)))
        span.end(end_time=event.end_ns)

    def on_consume(self, event: ConsumeEvent) -> None:
        tracer = self._tracer
        if tracer is None:
            return
        attrs: dict[str, Any] = {
            "messaging.system": "kafka",
            "messaging.operation.type": "receive",
            "messaging.operation.name": "poll",
            "messaging.operation": "receive",
            "messaging.destination.name": event.topic,
            "messaging.destination.partition.id": str(event.partition),
            "messaging.kafka.destination.partition": event.partition,
            "messaging.batch.message_count": event.record_count,
            "messaging.client.id": event.client_id,
            "messaging.kafka.message.offset": event.first_offset,
            "kafka_async.last_offset": event.last_offset,
        }
        if event.group_id is not None:
            attrs["messaging.consumer.group.name"] = event.group_id
            attrs["messaging.kafka.consumer.group"] = event.group_id
        span = tracer.start_span(
            f"receive {event.topic}",
            context=self._root,
            kind=otel_trace.SpanKind.CONSUMER,
            attributes=attrs,
            start_time=event.start_ns,
        )
        span.end(end_time=event.end_ns)
