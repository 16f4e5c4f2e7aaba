"""Client metrics push (KIP-714): the broker asks for metrics, the client pushes them as OTLP.

A broker with a client-telemetry plugin (a ``metric.reporters`` class implementing
``ClientTelemetryExporterProvider`` or the older ``ClientTelemetry``) advertises two APIs:

1. ``GetTelemetrySubscriptions``: the client asks (first with a zero client instance id, which
   the broker replaces by one of its own) which metrics it should send. The answer names
   metric-name prefixes (none: push nothing and ask again one interval later; one empty
   string or ``*``: everything), the push interval, whether sums go as deltas since the last
   push or cumulative since the client started, the compression types the broker takes
   (preferred first) and the largest payload it takes.
2. ``PushTelemetry``: every interval (the first after a random 0.5-1.5 intervals, so a fleet
   started together does not push together) the client sends the metrics whose names start
   with a requested prefix, encoded as an OpenTelemetry ``MetricsData`` protobuf (written here,
   no protobuf library), compressed with the first accepted codec. On close it sends one last
   push marked ``terminating``.

Errors never reach the application: a broker that does not advertise the APIs (older than
3.7, or no plugin configured) or answers ``UNSUPPORTED_VERSION``, ``INVALID_REQUEST`` or
``INVALID_RECORD`` stops the pushing for the client's life (logged once);
``UNKNOWN_SUBSCRIPTION_ID`` and ``UNSUPPORTED_COMPRESSION_TYPE`` fetch the subscription again
at once; ``TELEMETRY_TOO_LARGE``, ``THROTTLING_QUOTA_EXCEEDED`` and lost connections wait for
the next interval (a failed ``GetTelemetrySubscriptions`` retries with a backoff up to 30 s).

:class:`MetricsPusher` runs in the owning client's background task group;
:meth:`MetricsPusher.terminate` (from the client's ``close()``) stops it and makes the
terminating push within a deadline. Every client pushes: the producer, the consumer, the
share consumer and the admin client (as the Java clients do). What is pushed:
:func:`producer_metrics`, :func:`consumer_metrics`, :func:`share_consumer_metrics` and
:func:`connection_metrics`, under the Java client's names: ``org.apache.kafka.`` and the Java
metric group without its ``-metrics`` suffix, dashes made dots (KIP-714's naming), e.g.
``org.apache.kafka.producer.record.queue.time.avg``; docs/reference/observability.md lists
them.
"""

from __future__ import annotations

import logging
import random
import struct
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import anyio
import anyio.abc

from .. import errors as E
from ..cluster.client import ClusterClient
from ..net.backoff import ExponentialBackoff
from ..protocol.apis.get_telemetry_subscriptions import (
    GET_TELEMETRY_SUBSCRIPTIONS,
    GetTelemetrySubscriptionsRequest,
)
from ..protocol.apis.push_telemetry import PUSH_TELEMETRY, PushTelemetryRequest
from ..protocol.codec import ZERO_UUID
from ..records import compression

__all__ = [
    "MetricPoint",
    "MetricsPusher",
    "Sensor",
    "Subscription",
    "admin_pusher",
    "close_budget",
    "connection_metrics",
    "consumer_metrics",
    "consumer_pusher",
    "encode_metrics_data",
    "producer_metrics",
    "producer_pusher",
    "share_consumer_metrics",
    "share_consumer_pusher",
]

log = logging.getLogger(__name__)

#: The codecs we can compress a push with (KIP-714 ids, those of record batches).
_CODECS = (compression.ZSTD, compression.LZ4, compression.GZIP, compression.SNAPPY)
#: Retry policy of a failed GetTelemetrySubscriptions.
_SUBSCRIBE_BACKOFF = ExponentialBackoff(0.5, 30.0)
#: OTLP AggregationTemporality values.
_DELTA, _CUMULATIVE = 1, 2

AttributeValue = str | bool | int | float


# -- metrics ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MetricPoint:
    """One value of one metric: a gauge (a level) or a monotonic sum (a count so far).

    Sums are given cumulative (since the client started); the pusher turns them into deltas
    when the subscription asks for delta temporality.
    """

    name: str
    value: int | float
    kind: Literal["gauge", "sum"] = "gauge"
    attributes: tuple[tuple[str, AttributeValue], ...] = ()
    unit: str = ""


class Sensor:
    """Samples (e.g. milliseconds a batch waited) summarised as count, sum and max.

    ``take()`` returns the average and maximum of the samples since the previous ``take()``
    (one push interval) and starts a new window; ``count`` and ``total`` run since creation.
    """

    __slots__ = ("_window_count", "_window_max", "_window_sum", "count", "total")

    def __init__(self) -> None:
        self.count = 0
        self.total = 0.0
        self._window_count = 0
        self._window_sum = 0.0
        self._window_max = 0.0

    def record(self, value: float) -> None:
        """Add one sample."""
        self.count += 1
        self.total += value
        self._window_count += 1
        self._window_sum += value
        if value > self._window_max:
            self._window_max = value

    def take(self) -> tuple[float, float] | None:
        """``(avg, max)`` of the window's samples, or None when it had none; resets it."""
        if not self._window_count:
            return None
        result = (self._window_sum / self._window_count, self._window_max)
        self._window_count = 0
        self._window_sum = 0.0
        self._window_max = 0.0
        return result


def _num(value: Any) -> int | float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


def connection_metrics(kind: str, client: ClusterClient) -> list[MetricPoint]:
    """``org.apache.kafka.<kind>.connection.count``: the client's open broker connections.

    ``kind`` is the Java client's network metric group without ``-metrics``: ``producer``,
    ``consumer`` (the share consumer's too: Java's ``KafkaShareConsumer`` builds its network
    client with the consumer's group prefix) or ``admin.client`` (``admin-client-metrics``).
    """
    count = len(client.pool.statistics().connections)
    return [MetricPoint(f"org.apache.kafka.{kind}.connection.count", count)]


def producer_metrics(stats: Mapping[str, Any], queue_time: Sensor | None) -> list[MetricPoint]:
    """The producer's metrics under the Java client's names, from ``Producer.statistics()``
    and the sensor of record-batch queue times (milliseconds from a batch's first record to
    its drain into a Produce request, one sample per drain)."""
    p = "org.apache.kafka.producer."
    out: list[MetricPoint] = []
    if queue_time is not None:
        window = queue_time.take()
        if window is not None:
            out.append(MetricPoint(p + "record.queue.time.avg", window[0], unit="ms"))
            out.append(MetricPoint(p + "record.queue.time.max", window[1], unit="ms"))
    memory, used = _num(stats.get("buffer_memory")), _num(stats.get("buffer_used"))
    if memory is not None:
        out.append(MetricPoint(p + "buffer.total.bytes", memory, unit="By"))
        if used is not None:
            out.append(MetricPoint(p + "buffer.available.bytes", memory - used, unit="By"))
    in_flight = stats.get("in_flight_requests")
    if isinstance(in_flight, Mapping):
        out.append(MetricPoint(p + "requests.in.flight", sum(in_flight.values())))
    for key, name in (
        ("records_acked", "record.send.total"),
        ("records_failed", "record.error.total"),
        ("requests_sent", "request.total"),
        ("batch_splits", "batch.split.total"),
    ):
        value = _num(stats.get(key))
        if value is not None:
            out.append(MetricPoint(p + name, value, "sum"))
    return out


def consumer_metrics(stats: Mapping[str, Any]) -> list[MetricPoint]:
    """The consumer's metrics under the Java client's names, from ``Consumer.statistics()``."""
    c = "org.apache.kafka.consumer."
    out: list[MetricPoint] = []
    parts = stats.get("partitions")
    if isinstance(parts, Mapping):
        out.append(MetricPoint(c + "coordinator.assigned.partitions", len(parts)))
        lags = [
            lag
            for part in parts.values()
            if isinstance(part, Mapping) and (lag := _num(part.get("lag"))) is not None
        ]
        if lags:
            out.append(MetricPoint(c + "fetch.manager.records.lag.max", max(lags)))
    commits = _num(stats.get("commits"))
    if commits is not None:
        out.append(MetricPoint(c + "coordinator.commit.total", commits, "sum"))
    fetcher = stats.get("fetcher")
    if isinstance(fetcher, Mapping):
        for key, name in (
            ("fetch_requests", "fetch.manager.fetch.total"),
            ("bytes_fetched", "fetch.manager.bytes.consumed.total"),
            ("records_returned", "fetch.manager.records.consumed.total"),
        ):
            value = _num(fetcher.get(key))
            if value is not None:
                out.append(MetricPoint(c + name, value, "sum"))
    return out


def share_consumer_metrics(stats: Mapping[str, Any]) -> list[MetricPoint]:
    """The share consumer's metrics under the Java ``KafkaShareConsumer``'s names, from
    ``ShareConsumer.statistics()``.

    Java's share fetch metrics are in the group ``consumer-share-fetch-manager-metrics``
    (``ShareFetchMetricsRegistry``), its heartbeat metrics in
    ``consumer-share-coordinator-metrics``, so their telemetry names start with
    ``org.apache.kafka.consumer.share.fetch.manager.`` and
    ``org.apache.kafka.consumer.share.coordinator.``. Pushed where ours keeps the count (all
    sums): ``fetch.total`` (ShareFetch requests sent), ``records.consumed.total`` (records
    handed to the application), ``acknowledgements.send.total`` (record acknowledgements the
    brokers applied: accept, release, reject; not lock renewals), ``acknowledgements.error.total``
    (record acknowledgements that failed) and ``coordinator.heartbeat.total``
    (ShareGroupHeartbeat requests). Not pushed: the rates, averages and maxima Java derives
    (fetch latency and size, records per request, throttle time), and ``bytes.consumed.total``
    (ours does not count the bytes a ShareFetch brought).
    """
    s = "org.apache.kafka.consumer.share."
    out: list[MetricPoint] = []
    fetcher = stats.get("fetcher")
    if isinstance(fetcher, Mapping):
        fetches = _num(fetcher.get("fetches"))
        if fetches is not None:
            out.append(MetricPoint(s + "fetch.manager.fetch.total", fetches, "sum"))
    delivered = _num(stats.get("records_delivered"))
    if delivered is not None:
        out.append(MetricPoint(s + "fetch.manager.records.consumed.total", delivered, "sum"))
    acknowledged = stats.get("acknowledged")
    if isinstance(acknowledged, Mapping):
        sent = sum(
            value
            for kind in ("accept", "release", "reject")
            if (value := _num(acknowledged.get(kind, 0))) is not None
        )
        out.append(MetricPoint(s + "fetch.manager.acknowledgements.send.total", sent, "sum"))
    failed = _num(stats.get("acknowledgements_failed"))
    if failed is not None:
        out.append(MetricPoint(s + "fetch.manager.acknowledgements.error.total", failed, "sum"))
    group = stats.get("group")
    if isinstance(group, Mapping):
        heartbeats = _num(group.get("heartbeats"))
        if heartbeats is not None:
            out.append(MetricPoint(s + "coordinator.heartbeat.total", heartbeats, "sum"))
    return out


# -- OTLP MetricsData protobuf --------------------------------------------------------------------
# Field numbers as OTLP defines them (opentelemetry/proto/metrics/v1/metrics.proto, with
# common and resource):
# MetricsData.resource_metrics=1; ResourceMetrics.resource=1, .scope_metrics=2;
# Resource.attributes=1; ScopeMetrics.scope=1, .metrics=2; InstrumentationScope.name=1,
# .version=2; Metric.name=1, .unit=3, .gauge=5, .sum=7; Gauge.data_points=1;
# Sum.data_points=1, .aggregation_temporality=2, .is_monotonic=3;
# NumberDataPoint.start_time_unix_nano=2 (fixed64), .time_unix_nano=3 (fixed64),
# .as_double=4 (double), .as_int=6 (sfixed64), .attributes=7;
# KeyValue.key=1, .value=2; AnyValue.string_value=1, .bool_value=2, .int_value=3,
# .double_value=4.

_VARINT, _I64, _LEN = 0, 1, 2
_Q = struct.Struct("<Q")
_QS = struct.Struct("<q")
_D = struct.Struct("<d")


def _varint(n: int) -> bytes:
    if n < 0:
        n += 1 << 64  # int64 as protobuf writes it: ten bytes of two's complement
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _tag(field: int, wire: int) -> bytes:
    return _varint(field << 3 | wire)


def _len(field: int, payload: bytes) -> bytes:
    return _tag(field, _LEN) + _varint(len(payload)) + payload


def _str(field: int, text: str) -> bytes:
    return _len(field, text.encode()) if text else b""


def _any_value(value: AttributeValue) -> bytes:
    if isinstance(value, bool):
        return _tag(2, _VARINT) + _varint(int(value))
    if isinstance(value, int):
        return _tag(3, _VARINT) + _varint(value)
    if isinstance(value, float):
        return _tag(4, _I64) + _D.pack(value)
    return _len(1, value.encode())


def _attributes(field: int, attrs: Iterable[tuple[str, AttributeValue]]) -> bytes:
    return b"".join(_len(field, _str(1, k) + _len(2, _any_value(v))) for k, v in attrs)


def _data_point(point: MetricPoint, value: int | float, start_ns: int, time_ns: int) -> bytes:
    out = _tag(2, _I64) + _Q.pack(start_ns) + _tag(3, _I64) + _Q.pack(time_ns)
    if isinstance(value, int) and -(1 << 63) <= value < 1 << 63:
        out += _tag(6, _I64) + _QS.pack(value)
    else:
        out += _tag(4, _I64) + _D.pack(float(value))
    return out + _attributes(7, point.attributes)


def encode_metrics_data(
    points: Sequence[tuple[MetricPoint, int | float, int]],
    *,
    time_ns: int,
    delta: bool,
    resource: Mapping[str, AttributeValue],
    scope: tuple[str, str],
) -> bytes:
    """An OTLP ``MetricsData`` message: one resource, one scope, one ``Metric`` per name.

    ``points`` are ``(point, value, start_ns)``: the value to send (a delta already
    subtracted) and the data point's start time (gauges: ignored, the time is ``time_ns``).
    """
    by_name: dict[str, list[tuple[MetricPoint, int | float, int]]] = {}
    for entry in points:
        by_name.setdefault(entry[0].name, []).append(entry)
    metrics = []
    for name, entries in by_name.items():
        first = entries[0][0]
        if first.kind == "sum":
            body = b"".join(_len(1, _data_point(p, v, s, time_ns)) for p, v, s in entries)
            body += _tag(2, _VARINT) + _varint(_DELTA if delta else _CUMULATIVE)
            body += _tag(3, _VARINT) + _varint(1)
            data = _len(7, body)
        else:
            body = b"".join(_len(1, _data_point(p, v, time_ns, time_ns)) for p, v, _ in entries)
            data = _len(5, body)
        metrics.append(_len(2, _str(1, name) + _str(3, first.unit) + data))
    scope_msg = _len(1, _str(1, scope[0]) + _str(2, scope[1]))
    resource_msg = _len(1, _attributes(1, resource.items()))
    resource_metrics = resource_msg + _len(2, scope_msg + b"".join(metrics))
    return _len(1, resource_metrics)


# -- the subscription and the push loop ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Subscription:
    """What a GetTelemetrySubscriptions answer asked for."""

    subscription_id: int
    requested: tuple[str, ...]
    push_interval_ms: int
    delta: bool
    max_bytes: int
    accepted_compression: tuple[int, ...]

    @property
    def wants_all(self) -> bool:
        """True when every metric is asked for (one empty prefix, or ``*``)."""
        return any(prefix in ("", "*") for prefix in self.requested)

    def matches(self, name: str) -> bool:
        """Whether metric ``name`` is subscribed (its name starts with a requested prefix)."""
        return self.wants_all or any(name.startswith(prefix) for prefix in self.requested)

    @property
    def codec(self) -> int:
        """The first accepted compression type we can write, else none (0)."""
        for codec in self.accepted_compression:
            if codec in _CODECS:
                return codec
        return compression.NONE


Outcome = Literal["ok", "resubscribe", "retry", "disabled"]


class MetricsPusher:
    """The KIP-714 push loop of one client; see the module docstring.

    ``collect()`` returns the client's metrics now (it runs on the event loop, once per
    push); ``resource`` are the OTLP resource attributes (``client_id`` and the like).
    Run :meth:`run` in the client's task group; call :meth:`terminate` from ``close()``
    before the client's connections close.
    """

    def __init__(
        self,
        client: ClusterClient,
        collect: Callable[[], Iterable[MetricPoint]],
        *,
        resource: Mapping[str, AttributeValue],
        rand: Callable[[], float] = random.random,
    ) -> None:
        self._client = client
        self._collect = collect
        self._resource = dict(resource)
        self._rand = rand
        self._start_ns = time.time_ns()
        #: The id the broker gave this client instance (zero until the first answer).
        self.instance_id: uuid.UUID = ZERO_UUID
        #: The current subscription, or None before the first answer / after an error.
        self.subscription: Subscription | None = None
        #: Why pushing stopped for good (broker lacks the APIs, refused the payload), or None.
        self.disabled: str | None = None
        self.pushes = 0
        self.push_failures = 0
        self.terminated = False
        #: Cumulative sums at the previous push, for delta temporality: (name, attrs) -> value.
        self._previous: dict[tuple[str, tuple[tuple[str, AttributeValue], ...]], int | float] = {}
        self._previous_ns = self._start_ns
        self._scope: anyio.CancelScope | None = None
        self._done: anyio.Event | None = None

    def statistics(self) -> dict[str, Any]:
        """State at a glance: instance id, subscription, pushes, why disabled."""
        sub = self.subscription
        return {
            "client_instance_id": str(self.instance_id),
            "subscription_id": None if sub is None else sub.subscription_id,
            "requested_metrics": None if sub is None else list(sub.requested),
            "push_interval_ms": None if sub is None else sub.push_interval_ms,
            "pushes": self.pushes,
            "push_failures": self.push_failures,
            "disabled": self.disabled,
            "terminated": self.terminated,
        }

    # -- the loop ----------------------------------------------------------------------------

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Subscribe and push until :meth:`terminate` (or the task group) stops it."""
        done = self._done = anyio.Event()
        try:
            with anyio.CancelScope() as scope:
                self._scope = scope
                task_status.started()
                try:
                    await self._loop()
                except Exception:
                    # A bug here must not fail the client's task group (and with it the
                    # client): pushing stops, the client goes on.
                    log.exception("client metrics push failed; pushing stops")
                    self.disabled = "internal error (logged)"
        finally:
            done.set()

    async def _loop(self) -> None:
        failures = 0
        first = True
        while self.disabled is None:
            outcome = await self._subscribe()
            if outcome == "disabled":
                return
            sub = self.subscription
            if outcome == "retry" or sub is None:
                failures += 1
                await anyio.sleep(_SUBSCRIBE_BACKOFF.delay(failures, self._rand))
                continue
            failures = 0
            interval = max(sub.push_interval_ms, 100) / 1000.0
            if not sub.requested:
                # Nothing subscribed: ask again one interval later.
                await anyio.sleep(interval)
                continue
            # The first push waits a random 0.5-1.5 intervals (KIP-714), so clients started
            # together spread their pushes.
            await anyio.sleep(interval * (0.5 + self._rand()) if first else interval)
            first = False
            while self.disabled is None:
                outcome = await self._push(terminating=False)
                if outcome in ("resubscribe", "disabled"):
                    break
                await anyio.sleep(interval)

    async def _subscribe(self) -> Outcome:
        try:
            node = await self._client.any_node()
            response = await self._client.request(
                node,
                GET_TELEMETRY_SUBSCRIPTIONS,
                GetTelemetrySubscriptionsRequest(client_instance_id=self.instance_id),
            )
        except E.IncompatibleBrokerVersionError:
            # The common case (no telemetry plugin on the broker): not worth more than DEBUG.
            return self._disable(
                "the broker does not offer client telemetry (KIP-714)", logging.DEBUG
            )
        except (E.KafkaError, OSError, TimeoutError) as exc:
            log.debug("GetTelemetrySubscriptions failed: %r", exc)
            return "retry"
        code = response.error_code
        if code == E.UnsupportedVersionError.code:
            return self._disable("GetTelemetrySubscriptions: UNSUPPORTED_VERSION")
        if code:
            log.debug("GetTelemetrySubscriptions answered error %d", code)
            return "retry"
        if response.client_instance_id != ZERO_UUID:
            self.instance_id = response.client_instance_id
        previous = self.subscription
        self.subscription = Subscription(
            response.subscription_id,
            tuple(response.requested_metrics),
            response.push_interval_ms,
            response.delta_temporality,
            response.telemetry_max_bytes,
            tuple(response.accepted_compression_types),
        )
        if previous is None or previous.subscription_id != response.subscription_id:
            log.debug("client telemetry subscription %s", self.subscription)
        return "ok"

    def _disable(self, reason: str, level: int = logging.INFO) -> Outcome:
        if self.disabled is None:
            self.disabled = reason
            log.log(level, "client metrics push off: %s", reason)
        return "disabled"

    def _payload(self, sub: Subscription) -> tuple[bytes, Callable[[], None]]:
        """The encoded metrics, and what to call once the broker took them: only then do
        the sums' values become the base of the next deltas (a refused push's deltas go
        with the next one)."""
        now = time.time_ns()
        try:
            points = [p for p in self._collect() if sub.matches(p.name)]
        except Exception:  # a collector bug must never break the client
            log.exception("collecting client metrics failed")
            points = []
        entries: list[tuple[MetricPoint, int | float, int]] = []
        sums = {}
        for point in points:
            if point.kind == "sum":
                key = (point.name, point.attributes)
                if sub.delta:
                    before = self._previous.get(key, 0)
                    entries.append((point, point.value - before, self._previous_ns))
                else:
                    entries.append((point, point.value, self._start_ns))
                sums[key] = point.value
            else:
                entries.append((point, point.value, now))

        def accepted() -> None:
            self._previous.update(sums)
            self._previous_ns = now

        payload = encode_metrics_data(
            entries,
            time_ns=now,
            delta=sub.delta,
            resource=self._resource,
            scope=("kafka_async", _version()),
        )
        return payload, accepted

    async def _push(self, *, terminating: bool) -> Outcome:
        sub = self.subscription
        if sub is None:
            return "resubscribe"
        codec = sub.codec
        payload, accepted = self._payload(sub)
        data = compression.compress(codec, payload) if codec else payload
        if sub.max_bytes > 0 and len(data) > sub.max_bytes:
            log.warning(
                "client metrics push skipped: %d bytes, the broker takes at most %d",
                len(data),
                sub.max_bytes,
            )
            return "ok"
        request = PushTelemetryRequest(
            client_instance_id=self.instance_id,
            subscription_id=sub.subscription_id,
            terminating=terminating,
            compression_type=codec,
            metrics=data,
        )
        try:
            node = await self._client.any_node()
            response = await self._client.request(node, PUSH_TELEMETRY, request)
        except E.IncompatibleBrokerVersionError:
            return self._disable("the broker does not offer PushTelemetry (KIP-714)")
        except (E.KafkaError, OSError, TimeoutError) as exc:
            self.push_failures += 1
            log.debug("PushTelemetry failed: %r", exc)
            return "retry"
        code = response.error_code
        if code == 0:
            self.pushes += 1
            accepted()
            return "ok"
        self.push_failures += 1
        name = getattr(E.for_code(code), "name", str(code))
        if code in (
            E.UnsupportedVersionError.code,
            E.InvalidRequestError.code,
            E.InvalidRecordError.code,
        ):
            return self._disable(f"PushTelemetry answered {name}")
        if code in (E.UnknownSubscriptionIdError.code, E.UnsupportedCompressionTypeError.code):
            log.debug("PushTelemetry answered %s: fetching the subscription again", name)
            self.subscription = None
            return "resubscribe"
        # TELEMETRY_TOO_LARGE, THROTTLING_QUOTA_EXCEEDED, ...: try again next interval.
        log.debug("PushTelemetry answered %s", name)
        return "retry"

    async def terminate(self, timeout: float) -> None:  # noqa: ASYNC109 - close's deadline
        """Stop the loop and send the terminating push, all within ``timeout`` seconds.

        Called once by the owner's ``close()`` while its connections are still open; a
        client that never got a subscription (or whose pushing is off) sends nothing.
        """
        if self.terminated:
            return
        self.terminated = True
        with anyio.move_on_after(max(timeout, 0.0)):
            if self._scope is not None:
                self._scope.cancel()
            if self._done is not None:
                await self._done.wait()
            sub = self.subscription
            if self.disabled is None and sub is not None and sub.requested:
                try:
                    await self._push(terminating=True)
                except Exception:
                    log.exception("the terminating client metrics push failed")


def _version() -> str:
    from .._version import __version__

    return __version__


def producer_pusher(
    client: ClusterClient,
    accumulator: Any,
    statistics: Callable[[], Mapping[str, Any]],
    *,
    client_id: str,
    transactional_id: str | None,
) -> MetricsPusher:
    """The push loop of a producer: its metrics (:func:`producer_metrics` with a queue-time
    sensor fed by ``accumulator.on_drain``) and its connections."""
    queue_time = Sensor()

    def on_drain(seconds: float) -> None:
        queue_time.record(seconds * 1000.0)

    accumulator.on_drain = on_drain

    def collect() -> list[MetricPoint]:
        return producer_metrics(statistics(), queue_time) + connection_metrics("producer", client)

    resource: dict[str, AttributeValue] = {"client_id": client_id}
    if transactional_id is not None:
        resource["transactional_id"] = transactional_id
    return MetricsPusher(client, collect, resource=resource)


def consumer_pusher(
    client: ClusterClient,
    statistics: Callable[[], Mapping[str, Any]],
    *,
    client_id: str,
    group_id: str | None,
    group_instance_id: str | None = None,
) -> MetricsPusher:
    """The push loop of a consumer: :func:`consumer_metrics` and its connections."""

    def collect() -> list[MetricPoint]:
        return consumer_metrics(statistics()) + connection_metrics("consumer", client)

    resource: dict[str, AttributeValue] = {"client_id": client_id}
    if group_id is not None:
        resource["group_id"] = group_id
    if group_instance_id is not None:
        resource["group_instance_id"] = group_instance_id
    return MetricsPusher(client, collect, resource=resource)


def share_consumer_pusher(
    client: ClusterClient,
    statistics: Callable[[], Mapping[str, Any]],
    *,
    client_id: str,
    group_id: str,
) -> MetricsPusher:
    """The push loop of a share consumer: :func:`share_consumer_metrics` and its connections
    (``org.apache.kafka.consumer.connection.count``, Java's name for them); resource
    attributes ``client_id`` and ``group_id``."""

    def collect() -> list[MetricPoint]:
        return share_consumer_metrics(statistics()) + connection_metrics("consumer", client)

    return MetricsPusher(client, collect, resource={"client_id": client_id, "group_id": group_id})


def admin_pusher(client: ClusterClient, *, client_id: str) -> MetricsPusher:
    """The push loop of an admin client: its connections,
    ``org.apache.kafka.admin.client.connection.count`` (Java's ``KafkaAdminClient`` keeps its
    network metrics in the group ``admin-client-metrics``); resource attribute ``client_id``."""

    def collect() -> list[MetricPoint]:
        return connection_metrics("admin.client", client)

    return MetricsPusher(client, collect, resource={"client_id": client_id})


def close_budget(deadline: float) -> float:
    """Seconds a terminating push may take at close: what is left before ``deadline``
    (``anyio.current_time()`` clock), at most 5 s."""
    return min(max(deadline - anyio.current_time(), 0.0), 5.0)
