"""Client metrics push (KIP-714) against Apache Kafka 4.4.0 with a recording telemetry plugin.

The file compiles ``java/RecordingTelemetryReporter.java`` with ``javac`` against the broker's
jars and starts its own 4.4.0 node (small heap) with that class in ``metric.reporters``: the
broker then advertises GetTelemetrySubscriptions/PushTelemetry and hands every push to the
reporter, which writes the (decompressed) payload to a file named after the client instance
and whether the push was the terminating one. A client-metrics subscription made with our
admin client (a CLIENT_METRICS config resource: ``metrics`` prefixes, ``interval.ms``,
``match`` on the client id) decides what a client pushes. The payloads are decoded with
``opentelemetry-proto`` (the OTLP project's generated classes, not our encoder's twin).

Every client pushes by default, as the Java clients do: the producer, the consumer, the share
consumer and the admin client; ``enable_metrics_push=False`` keeps a client silent.

The last test runs against the session's broker, which has no telemetry plugin and so does
not advertise the APIs: the client's push loop turns itself off and the client works as
before.
"""

from __future__ import annotations

import base64
import dataclasses
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

from kafka_async.admin import AdminClient, ConfigResource
from kafka_async.admin.types import ConfigResourceType
from kafka_async.consumer import Consumer
from kafka_async.consumer.share import ShareConsumer
from kafka_async.producer import Producer
from kafka_async.protocol.apis import GET_TELEMETRY_SUBSCRIPTIONS
from kafka_async.testing.apache import (
    ApacheKafka,
    KafkaPrerequisiteError,
    ensure_distribution,
    find_java,
)
from kafka_async.testing.plugin import skip_or_fail
from kafka_async.testing.topics import create_topic

metrics_pb2 = pytest.importorskip("opentelemetry.proto.metrics.v1.metrics_pb2")

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

VERSION = "4.4.0"
JAVA_SOURCE = Path(__file__).parent / "java" / "RecordingTelemetryReporter.java"
DELTA, CUMULATIVE = 1, 2


@dataclass
class TelemetryBroker:
    bootstrap: str
    pushes: Path


@pytest.fixture(scope="module")
def telemetry_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TelemetryBroker]:
    """One Apache Kafka 4.4.0 node with the recording telemetry reporter on its classpath."""
    work = tmp_path_factory.mktemp("telemetry")
    classes, pushes = work / "classes", work / "pushes"
    classes.mkdir()
    pushes.mkdir()
    kafka = ApacheKafka(
        version=VERSION,
        heap="384m",
        broker_config={
            "metric.reporters": "RecordingTelemetryReporter",
            "kafka_async.test.telemetry.dir": str(pushes),
        },
        extra_classpath=[str(classes)],
    )
    try:
        dist = ensure_distribution(VERSION)
    except KafkaPrerequisiteError as exc:
        skip_or_fail(f"Apache Kafka {VERSION} cannot run here: {exc}")
    javac = shutil.which("javac") or str(Path(find_java()).with_name("javac"))
    if not Path(javac).exists():
        skip_or_fail("no javac to compile the broker's telemetry reporter")
    subprocess.run(
        [javac, "-d", str(classes), "-cp", dist.classpath, str(JAVA_SOURCE)],
        check=True,
        timeout=120,
    )
    try:
        kafka.start()
    except KafkaPrerequisiteError as exc:
        skip_or_fail(f"Apache Kafka {VERSION} cannot run here: {exc}")
    try:
        yield TelemetryBroker(kafka.bootstrap_servers, pushes)
    finally:
        kafka.stop()


@dataclass
class Push:
    instance_id: str
    terminating: bool
    data: object  # metrics_pb2.MetricsData


def _kafka_uuid(value: uuid.UUID) -> str:
    """How Kafka's ``Uuid.toString()`` writes an id: URL-safe base64, no padding."""
    return base64.urlsafe_b64encode(value.bytes).decode().rstrip("=")


def _pushes(folder: Path, instance_id: str) -> list[Push]:
    found = []
    for path in sorted(folder.glob(f"*-{instance_id}-*.bin")):
        data = metrics_pb2.MetricsData()
        data.ParseFromString(path.read_bytes())
        found.append(Push(instance_id, path.stem.endswith("-t"), data))
    return found


def _metrics(push: Push) -> dict[str, object]:
    """Metric name -> the OTLP Metric, over the push's resources and scopes."""
    out = {}
    for rm in push.data.resource_metrics:  # type: ignore[attr-defined]
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                out[metric.name] = metric
    return out


def _resource(push: Push) -> dict[str, str]:
    return {
        kv.key: kv.value.string_value
        for kv in push.data.resource_metrics[0].resource.attributes  # type: ignore[attr-defined]
    }


def _pushes_of_client(folder: Path, client_id: str) -> list[Push]:
    """Every push whose OTLP resource names ``client_id``, whatever its instance id."""
    found = []
    for path in sorted(folder.glob("*.bin")):
        data = metrics_pb2.MetricsData()
        data.ParseFromString(path.read_bytes())
        push = Push(path.stem.split("-")[1], path.stem.endswith("-t"), data)
        if data.resource_metrics and _resource(push).get("client_id") == client_id:
            found.append(push)
    return found


def _value(metric: object) -> float:
    points = metric.sum.data_points if metric.HasField("sum") else metric.gauge.data_points  # type: ignore[attr-defined]
    (point,) = points
    return float(point.as_int if point.HasField("as_int") else point.as_double)


async def _subscribe(bootstrap: str, name: str, metrics: str, client_id: str) -> None:
    """Create or change client-metrics subscription ``name``; return once the broker serves
    it (a client that asks before gets "nothing subscribed" and asks again only after the
    default interval, five minutes)."""
    resource = ConfigResource(ConfigResourceType.CLIENT_METRICS, name)
    async with AdminClient(bootstrap_servers=bootstrap) as admin:
        await admin.incremental_alter_configs(
            {
                resource: {
                    "metrics": metrics,
                    "interval.ms": "1000",
                    "match": f"client_id={client_id}",
                }
            },
            raise_on_error=True,
        )
        with anyio.fail_after(30):
            while True:
                got = await admin.describe_configs([resource], raise_on_error=True)
                entry = got[resource].entries.get("metrics")
                if entry is not None and entry.value == metrics:
                    return
                await anyio.sleep(0.1)


async def _wait_for_pushes(folder: Path, instance_id: str, count: int) -> list[Push]:
    with anyio.fail_after(30):
        while len(found := _pushes(folder, instance_id)) < count:  # noqa: ASYNC110 - a folder
            await anyio.sleep(0.2)
    return found


async def test_producer_pushes_the_subscribed_metrics(telemetry_broker: TelemetryBroker) -> None:
    bootstrap, folder = telemetry_broker.bootstrap, telemetry_broker.pushes
    client_id = f"telemetry-producer-{uuid.uuid4().hex[:8]}"
    topic = f"telemetry-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, 1)
    # Prefixes: every record.* metric, and the one buffer total (not buffer.available.bytes).
    prefixes = ["org.apache.kafka.producer.record.", "org.apache.kafka.producer.buffer.total"]
    await _subscribe(bootstrap, f"sub-{client_id}", ",".join(prefixes), client_id)
    records = 50
    async with Producer(
        bootstrap_servers=bootstrap, client_id=client_id, buffer_memory=8 * 1024 * 1024
    ) as producer:
        pusher = producer._telemetry
        assert pusher is not None
        for i in range(records):
            await producer.enqueue(topic, f"v{i}".encode())
        await producer.flush()
        with anyio.fail_after(30):
            while pusher.subscription is None or not pusher.subscription.requested:  # noqa: ASYNC110
                await anyio.sleep(0.1)
        instance_id = _kafka_uuid(pusher.instance_id)
        sub = pusher.subscription
        assert sorted(sub.requested) == sorted(prefixes)
        # A push after the flush has every record counted.
        await _wait_for_pushes(folder, instance_id, 2)
    pushes = _pushes(folder, instance_id)
    assert pushes
    assert pushes[-1].terminating, "close() sends a terminating push last"
    assert [p.terminating for p in pushes].count(True) == 1
    sent = []
    queue_avg = []
    for push in pushes:
        metrics = _metrics(push)
        for name in metrics:
            assert any(name.startswith(p) for p in prefixes), name
        assert _value(metrics["org.apache.kafka.producer.buffer.total.bytes"]) == 8 * 1024 * 1024
        send = metrics["org.apache.kafka.producer.record.send.total"]
        assert send.sum.is_monotonic  # type: ignore[attr-defined]
        temporality = send.sum.aggregation_temporality  # type: ignore[attr-defined]
        assert temporality == (DELTA if sub.delta else CUMULATIVE)
        sent.append(_value(send))
        if "org.apache.kafka.producer.record.queue.time.avg" in metrics:
            queue_avg.append(_value(metrics["org.apache.kafka.producer.record.queue.time.avg"]))
            assert _value(metrics["org.apache.kafka.producer.record.queue.time.max"]) >= 0
        assert _value(metrics["org.apache.kafka.producer.record.error.total"]) == 0
    # Deltas add up to the records sent; cumulative values end there.
    assert (sum(sent) if sub.delta else sent[-1]) == records
    assert queue_avg, "the drain's queue time was pushed"
    assert all(v >= 0 for v in queue_avg)
    resource = {
        kv.key: kv.value.string_value
        for kv in pushes[0].data.resource_metrics[0].resource.attributes  # type: ignore[attr-defined]
    }
    assert resource["client_id"] == client_id


async def test_consumer_pushes_and_follows_a_changed_subscription(
    telemetry_broker: TelemetryBroker,
) -> None:
    bootstrap, folder = telemetry_broker.bootstrap, telemetry_broker.pushes
    client_id = f"telemetry-consumer-{uuid.uuid4().hex[:8]}"
    topic = f"telemetry-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, 1)
    records = 20
    async with Producer(bootstrap_servers=bootstrap, enable_metrics_push=False) as producer:
        assert producer._telemetry is None
        for i in range(records):
            await producer.enqueue(topic, f"v{i}".encode())
        await producer.flush()
    name = f"sub-{client_id}"
    await _subscribe(bootstrap, name, "org.apache.kafka.consumer.fetch.manager.", client_id)
    async with Consumer(
        topic,
        bootstrap_servers=bootstrap,
        client_id=client_id,
        group_id=f"g-{client_id}",
        auto_offset_reset="earliest",
    ) as consumer:
        got = 0
        with anyio.fail_after(30):
            while got < records:
                batch = await consumer.getmany(timeout_ms=500)
                got += sum(len(v) for v in batch.values())
        pusher = consumer._telemetry
        assert pusher is not None
        with anyio.fail_after(30):
            while pusher.pushes < 1:  # noqa: ASYNC110
                await anyio.sleep(0.1)
        instance_id = _kafka_uuid(pusher.instance_id)
        first_subscription = pusher.subscription
        assert first_subscription is not None
        # A new subscription id: the next push is refused with UNKNOWN_SUBSCRIPTION_ID and
        # the client fetches the subscription again, now with the coordinator's metrics too.
        await _subscribe(
            bootstrap,
            name,
            "org.apache.kafka.consumer.fetch.manager.,org.apache.kafka.consumer.coordinator.",
            client_id,
        )
        with anyio.fail_after(30):
            while not any(  # noqa: ASYNC110
                "org.apache.kafka.consumer.coordinator.assigned.partitions" in _metrics(p)
                for p in _pushes(folder, instance_id)
            ):
                await anyio.sleep(0.2)
        assert pusher.subscription is not None
        assert pusher.subscription.subscription_id != first_subscription.subscription_id
        assert pusher.disabled is None
    pushes = _pushes(folder, instance_id)
    assert pushes[-1].terminating
    consumed = [
        _value(m["org.apache.kafka.consumer.fetch.manager.records.consumed.total"])
        for m in map(_metrics, pushes)
        if "org.apache.kafka.consumer.fetch.manager.records.consumed.total" in m
    ]
    delta = first_subscription.delta
    assert (sum(consumed) if delta else consumed[-1]) == records
    assigned = [
        _value(m["org.apache.kafka.consumer.coordinator.assigned.partitions"])
        for m in map(_metrics, pushes)
        if "org.apache.kafka.consumer.coordinator.assigned.partitions" in m
    ]
    # One partition while in the group; none in the terminating push, sent after leaving.
    assert max(assigned) == 1
    assert assigned[-1] == 0


async def test_a_refused_push_delta_goes_with_the_next_push(
    telemetry_broker: TelemetryBroker,
) -> None:
    """Regression: the sums' base moved on when the values were collected, so the records
    counted in a push the broker refused (UNKNOWN_SUBSCRIPTION_ID after the subscription
    changed) were never pushed: with delta temporality they were lost for good."""
    bootstrap, folder = telemetry_broker.bootstrap, telemetry_broker.pushes
    client_id = f"telemetry-refused-{uuid.uuid4().hex[:8]}"
    topic = f"telemetry-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, 1)
    await _subscribe(bootstrap, f"sub-{client_id}", "org.apache.kafka.producer.record.", client_id)
    async with Producer(bootstrap_servers=bootstrap, client_id=client_id) as producer:
        pusher = producer._telemetry
        assert pusher is not None
        with anyio.fail_after(30):
            while pusher.subscription is None or not pusher.subscription.requested:  # noqa: ASYNC110
                await anyio.sleep(0.1)
        # Drive the pushes by hand from here: stop the loop.
        assert pusher._scope is not None
        assert pusher._done is not None
        pusher._scope.cancel()
        with anyio.fail_after(10):
            await pusher._done.wait()
        sub = pusher.subscription
        assert sub is not None
        instance_id = _kafka_uuid(pusher.instance_id)
        before = len(_pushes(folder, instance_id))
        records = 10
        for i in range(records):
            await producer.enqueue(topic, f"v{i}".encode())
        await producer.flush()
        # An outdated subscription id: the broker refuses the push (what it answers after
        # the subscription changed), the client fetches the subscription again.
        pusher.subscription = dataclasses.replace(sub, subscription_id=sub.subscription_id + 1)
        assert await pusher._push(terminating=False) == "resubscribe"
        assert len(_pushes(folder, instance_id)) == before
        assert await pusher._subscribe() == "ok"
        await anyio.sleep(sub.push_interval_ms / 1000)  # not sooner than the interval
        assert await pusher._push(terminating=False) == "ok"
        (push,) = _pushes(folder, instance_id)[before:]
        sent = _value(_metrics(push)["org.apache.kafka.producer.record.send.total"])
        assert sent == records


async def _share_group(bootstrap: str, group: str) -> None:
    """A share group that starts at the earliest offset, heartbeating every 500 ms."""
    async with AdminClient(bootstrap) as admin:
        await admin.incremental_alter_configs(
            {
                ConfigResource.group(group): {
                    "share.auto.offset.reset": "earliest",
                    "share.heartbeat.interval.ms": "500",
                    "share.session.timeout.ms": "6000",
                }
            },
            raise_on_error=True,
        )


async def _produce(bootstrap: str, topic: str, count: int) -> None:
    async with Producer(bootstrap_servers=bootstrap, enable_metrics_push=False) as producer:
        for i in range(count):
            await producer.enqueue(topic, f"v{i}".encode())
        await producer.flush()


def _totals(pushes: list[Push], name: str, delta: bool) -> float:
    """What a sum came to over the pushes: the deltas added up, or the last cumulative."""
    values = [_value(m[name]) for m in map(_metrics, pushes) if name in m]
    assert values, f"{name} was never pushed"
    return sum(values) if delta else values[-1]


async def test_share_consumer_pushes_its_share_fetch_metrics(
    telemetry_broker: TelemetryBroker,
) -> None:
    """The share consumer pushes by default (KIP-932's ``enable.metrics.push``), under the
    Java ``KafkaShareConsumer``'s names, its OTLP resource naming the client and the group."""
    bootstrap, folder = telemetry_broker.bootstrap, telemetry_broker.pushes
    client_id = f"telemetry-share-{uuid.uuid4().hex[:8]}"
    group = f"g-{client_id}"
    topic = f"telemetry-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, 1)
    await _share_group(bootstrap, group)
    records = 20
    await _produce(bootstrap, topic, records)
    prefixes = ["org.apache.kafka.consumer.share.", "org.apache.kafka.consumer.connection."]
    await _subscribe(bootstrap, f"sub-{client_id}", ",".join(prefixes), client_id)
    async with ShareConsumer(
        topic, bootstrap_servers=bootstrap, client_id=client_id, group_id=group
    ) as consumer:
        got = 0
        with anyio.fail_after(30):
            while got < records:
                batch = await consumer.getmany(timeout_ms=500)
                got += sum(len(v) for v in batch.values())
        pusher = consumer._telemetry
        assert pusher is not None
        with anyio.fail_after(30):
            while pusher.pushes < 1:  # noqa: ASYNC110
                await anyio.sleep(0.1)
        sub = pusher.subscription
        assert sub is not None
        assert sorted(sub.requested) == sorted(prefixes)
        instance_id = _kafka_uuid(pusher.instance_id)
    pushes = _pushes(folder, instance_id)
    assert pushes[-1].terminating, "close() sends a terminating push last"
    assert [p.terminating for p in pushes].count(True) == 1
    for push in pushes:
        assert _resource(push) == {"client_id": client_id, "group_id": group}
        for name in _metrics(push):
            assert any(name.startswith(p) for p in prefixes), name
    f = "org.apache.kafka.consumer.share.fetch.manager."
    assert _totals(pushes, f + "records.consumed.total", sub.delta) == records
    # Implicit mode: close() accepted what the last poll delivered, before the last push.
    assert _totals(pushes, f + "acknowledgements.send.total", sub.delta) == records
    assert _totals(pushes, f + "acknowledgements.error.total", sub.delta) == 0
    assert _totals(pushes, f + "fetch.total", sub.delta) >= 1
    heartbeats = "org.apache.kafka.consumer.share.coordinator.heartbeat.total"
    assert _totals(pushes, heartbeats, sub.delta) >= 1
    connections = [
        _value(m["org.apache.kafka.consumer.connection.count"])
        for m in map(_metrics, pushes)
        if "org.apache.kafka.consumer.connection.count" in m
    ]
    assert connections
    assert max(connections) >= 1


async def test_admin_client_pushes_its_connection_count(
    telemetry_broker: TelemetryBroker,
) -> None:
    """The admin client pushes by default (KIP-714 covers it), under the Java
    ``KafkaAdminClient``'s group ``admin-client-metrics``."""
    bootstrap, folder = telemetry_broker.bootstrap, telemetry_broker.pushes
    client_id = f"telemetry-admin-{uuid.uuid4().hex[:8]}"
    prefix = "org.apache.kafka.admin.client."
    await _subscribe(bootstrap, f"sub-{client_id}", prefix, client_id)
    async with AdminClient(bootstrap, client_id=client_id) as admin:
        pusher = admin._telemetry
        assert pusher is not None
        await admin.list_topics()
        with anyio.fail_after(30):
            while pusher.pushes < 1:  # noqa: ASYNC110
                await anyio.sleep(0.1)
        assert pusher.subscription is not None
        assert pusher.subscription.requested == (prefix,)
        instance_id = _kafka_uuid(pusher.instance_id)
    assert pusher.disabled is None
    pushes = _pushes(folder, instance_id)
    assert pushes[-1].terminating, "close() sends a terminating push last"
    assert [p.terminating for p in pushes].count(True) == 1
    for push in pushes:
        assert _resource(push) == {"client_id": client_id}
        metrics = _metrics(push)
        assert set(metrics) == {prefix + "connection.count"}
        assert _value(metrics[prefix + "connection.count"]) >= 1


async def test_enable_metrics_push_false_keeps_share_consumer_and_admin_silent(
    telemetry_broker: TelemetryBroker,
) -> None:
    """With ``enable_metrics_push=False`` neither asks for a subscription nor pushes,
    though a subscription matches them (an enabled twin, same subscription, does push)."""
    bootstrap, folder = telemetry_broker.bootstrap, telemetry_broker.pushes
    tag = uuid.uuid4().hex[:8]
    silent, control = f"telemetry-off-{tag}", f"telemetry-on-{tag}"
    group = f"g-telemetry-off-{tag}"
    topic = f"telemetry-{tag}"
    create_topic(bootstrap, topic, 1)
    await _share_group(bootstrap, group)
    await _produce(bootstrap, topic, 5)
    # One subscription matching both client ids: everything, every second.
    await _subscribe(bootstrap, f"sub-{tag}", "*", f"telemetry-o.*-{tag}")
    async with (
        AdminClient(bootstrap, client_id=silent, enable_metrics_push=False) as admin,
        ShareConsumer(
            topic,
            bootstrap_servers=bootstrap,
            client_id=silent,
            group_id=group,
            enable_metrics_push=False,
        ) as consumer,
        AdminClient(bootstrap, client_id=control) as twin,
    ):
        assert admin._telemetry is None
        assert consumer._telemetry is None
        with anyio.fail_after(30):
            while sum(len(v) for v in (await consumer.getmany(timeout_ms=500)).values()) < 1:
                pass
        await admin.list_topics()
        # The enabled twin's pushes reach the broker; by then the silent clients had their
        # chance (the first push comes 0.5-1.5 intervals after the subscription).
        pusher = twin._telemetry
        assert pusher is not None
        with anyio.fail_after(30):
            while pusher.pushes < 2:  # noqa: ASYNC110
                await anyio.sleep(0.1)
    assert _pushes_of_client(folder, control)
    assert _pushes_of_client(folder, silent) == []


async def test_a_broker_without_client_telemetry_turns_the_push_off(kafka_broker: str) -> None:
    """The session's broker has no telemetry plugin: it does not advertise
    GetTelemetrySubscriptions, and the producer's push loop stops itself quietly."""
    async with Producer(bootstrap_servers=kafka_broker) as producer:
        pusher = producer._telemetry
        assert pusher is not None
        client = producer._client
        assert client is not None
        conn = await client.connection(await client.any_node())
        if GET_TELEMETRY_SUBSCRIPTIONS.key in conn.api_versions:
            pytest.skip("this broker advertises GetTelemetrySubscriptions (a plugin is set)")
        with anyio.fail_after(30):
            while pusher.disabled is None:  # noqa: ASYNC110
                await anyio.sleep(0.05)
        assert "does not offer" in pusher.disabled
        delivery = await (await producer.enqueue(f"telemetry-off-{uuid.uuid4().hex[:6]}", b"x"))
        assert delivery.offset >= 0
    assert pusher.pushes == 0
