"""ClusterClient and BrokerConnection against a real broker (embedded Tansu by default).

Core cases run under asyncio and trio. The silent-server cases use a real TCP listener that
completes the ApiVersions handshake and then never answers: the only way to watch request
deadlines and close() on real sockets without waiting for a real broker to misbehave.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import pytest

from kafka_async.cluster import ClusterClient
from kafka_async.errors import (
    ClientClosedError,
    KafkaConnectionError,
    KafkaTimeoutError,
    NoBrokersAvailableError,
)
from kafka_async.net.config import ClientConfig
from kafka_async.net.connection import BrokerConnection
from kafka_async.protocol import headers
from kafka_async.protocol.apis import API_VERSIONS, CREATE_TOPICS, METADATA
from kafka_async.protocol.apis.create_topics import CreatableTopic, CreateTopicsRequest
from kafka_async.protocol.apis.metadata import MetadataRequest, MetadataRequestTopic
from kafka_async.protocol.codec import Reader
from kafka_async.structs import TopicPartition
from kafka_async.testing import EmbeddedBroker

pytestmark = [pytest.mark.anyio, pytest.mark.integration]
both_backends = pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def client(bootstrap: str, **cfg: Any) -> ClusterClient:
    return ClusterClient(ClientConfig(bootstrap_servers=bootstrap, **cfg))


@both_backends
async def test_bootstrap_negotiates_versions_and_loads_metadata(kafka_broker: str) -> None:
    async with client(kafka_broker) as c:
        md = c.metadata
        assert md.brokers, "metadata lists the broker"
        assert md.generation >= 1
        node = next(iter(md.brokers))
        conn = await c.connection(node)
        assert conn.ready
        # The broker's ranges were negotiated: our choice is within both.
        lo, hi = conn.api_versions[METADATA.key]
        v = await c.version_for(node, METADATA)
        assert max(lo, METADATA.min_version) <= v <= min(hi, METADATA.max_version)
        assert conn.api_versions[API_VERSIONS.key][1] >= 0
        stats = c.statistics()
        assert stats["refreshes"] >= 1
        assert stats["refresh_failures"] == 0


@both_backends
async def test_create_topic_then_wait_for_its_leaders(kafka_broker: str) -> None:
    name = _name("net-create")
    async with client(kafka_broker) as c:
        body = CreateTopicsRequest(
            topics=[CreatableTopic(name=name, num_partitions=3, replication_factor=1)],
            timeout_ms=10_000,
        )
        resp = await c.request_any(CREATE_TOPICS, body)
        assert [(t.name, t.error_code) for t in resp.topics] == [(name, 0)]
        info = await c.wait_for_topic(name, timeout=10)
        assert sorted(info.partitions) == [0, 1, 2]
        md = c.metadata
        assert md.partitions_for(name) == frozenset({0, 1, 2})
        assert md.available_partitions_for(name) == {0, 1, 2}
        assert md.leader_for(TopicPartition(name, 0)) in md.brokers
        assert name in (c.statistics()["tracked_topics"] or ())


async def test_metadata_requests_do_not_create_topics(kafka_broker: str) -> None:
    name = _name("net-absent")
    async with client(kafka_broker) as c:
        md = await c.refresh_metadata([name])
        assert name in md.unknown_topics
        md = await c.refresh_metadata([name])
        assert name in md.unknown_topics
        assert md.topic(name) is None
        with pytest.raises(KafkaTimeoutError, match="unknown"):
            await c.wait_for_topic(name, timeout=0.5)


async def test_concurrent_refreshes_share_one_request(kafka_broker: str) -> None:
    async with client(kafka_broker) as c:
        before = c.statistics()["refreshes"]
        async with anyio.create_task_group() as tg:
            for _ in range(20):
                tg.start_soon(c.refresh_metadata)
        # All 20 callers were served by one refresh (two if the background one raced in).
        assert 1 <= c.statistics()["refreshes"] - before <= 2


async def test_requested_update_runs_in_the_background(kafka_broker: str) -> None:
    async with client(kafka_broker, retry_backoff_ms=10) as c:
        gen = c.metadata.generation
        c.request_metadata_update()
        md = await c.wait_for_metadata_update(timeout=5)
        assert md.generation > gen


async def test_closing_the_client_fails_its_waiters_with_client_closed(kafka_broker: str) -> None:
    outcome: list[BaseException] = []

    async def wait_forever(c: ClusterClient) -> None:
        try:
            await c.wait_for_topic(_name("never"), timeout=30)
        except ClientClosedError as exc:
            outcome.append(exc)

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg, client(kafka_broker, retry_backoff_ms=20) as c:
            tg.start_soon(wait_forever, c)
            await anyio.sleep(0.2)
    assert len(outcome) == 1
    with pytest.raises(ClientClosedError):
        await c.refresh_metadata()


async def test_coordinator_lookup_is_cached_and_invalidated(kafka_broker: str) -> None:
    group = _name("net-group")
    async with client(kafka_broker) as c:
        nodes = set()
        async with anyio.create_task_group() as tg:
            for _ in range(5):

                async def look() -> None:
                    nodes.add(await c.coordinator(group))

                tg.start_soon(look)
        assert len(nodes) == 1
        node = nodes.pop()
        assert node in c.metadata.brokers
        assert c.statistics()["coordinators"] == {(0, group): node}
        c.invalidate_coordinator(group)
        assert c.statistics()["coordinators"] == {}
        assert await c.coordinator(group, "group") == node


@both_backends
async def test_one_connection_pipelines_1000_requests_in_order(kafka_broker: str) -> None:
    async with client(kafka_broker) as c:
        conn = await c.connection(await c.any_node())
        before = conn.statistics().responses_received
        names: dict[int, str] = {}
        peak = 0

        async def one(i: int) -> None:
            nonlocal peak
            # Each request asks for a different (absent) topic; its answer must name it.
            resp = await conn.request(
                METADATA,
                MetadataRequest(
                    topics=[MetadataRequestTopic(name=f"pipe-{i}")],
                    allow_auto_topic_creation=False,
                ),
            )
            peak = max(peak, conn.in_flight + 1)
            names[i] = resp.topics[0].name or ""

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                for i in range(1000):
                    tg.start_soon(one, i)
        assert names == {i: f"pipe-{i}" for i in range(1000)}
        assert conn.statistics().responses_received - before == 1000
        assert peak > 10, "requests were really in flight together"
        assert conn.ready


@both_backends
async def test_reconnects_after_the_broker_restarts() -> None:
    broker = EmbeddedBroker()
    await anyio.to_thread.run_sync(broker.start)
    try:
        async with client(broker.bootstrap_servers, reconnect_backoff_ms=20) as c:
            node = await c.any_node()
            first = await c.connection(node)
            assert (await c.request(node, METADATA, MetadataRequest(topics=[]))).brokers
            await anyio.to_thread.run_sync(broker.restart)
            with anyio.fail_after(6):
                await first.wait_closed()  # the broker went away; the reader noticed
            with anyio.fail_after(20):
                while True:
                    try:
                        resp = await c.request(node, METADATA, MetadataRequest(topics=[]))
                        break
                    except KafkaConnectionError:
                        await anyio.sleep(0.05)
            assert resp.brokers
            again = await c.connection(node)
            assert again is not first
            assert again.ready
    finally:
        await anyio.to_thread.run_sync(broker.stop)


async def test_unreachable_bootstrap_raises_no_brokers_available() -> None:
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    await listener.aclose()  # nothing listens there any more
    start = anyio.current_time()
    with pytest.raises(NoBrokersAvailableError, match=str(port)):
        async with client(f"127.0.0.1:{port}", request_timeout_ms=500, reconnect_backoff_ms=20):
            pass
    # Generous upper bound: a loaded 2-core CI machine; the point is "no hang".
    assert anyio.current_time() - start < 6.0


# -- a real socket that stops answering after the handshake ------------------------------------


@asynccontextmanager
async def silent_after_handshake() -> AsyncIterator[int]:
    """A TCP server answering ApiVersions only; yields its port."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)

    async def handle(stream: anyio.abc.SocketStream) -> None:
        buf = bytearray()
        try:
            while True:
                buf += await stream.receive()
                while len(buf) >= 4:
                    size = int.from_bytes(buf[:4], "big")
                    if len(buf) < 4 + size:
                        break
                    r = Reader(bytes(buf[4 : 4 + size]))
                    del buf[: 4 + size]
                    api_key, version, cid, _ = headers.decode_request_header(r)
                    if api_key == API_VERSIONS.key:
                        keys = [
                            {"api_key": 3, "min_version": 0, "max_version": 12},
                            {"api_key": 18, "min_version": 0, "max_version": 3},
                        ]
                        out = headers.encode_response(
                            API_VERSIONS, min(version, 3), cid, {"api_keys": keys}
                        )
                        await stream.send(len(out).to_bytes(4, "big") + bytes(out))
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass

    async with anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, handle)
        try:
            yield port
        finally:
            tg.cancel_scope.cancel()


@both_backends
async def test_black_holed_request_times_out_within_request_timeout() -> None:
    async with silent_after_handshake() as port:
        cfg = ClientConfig(bootstrap_servers=f"127.0.0.1:{port}", request_timeout_ms=1000)
        async with BrokerConnection("127.0.0.1", port, cfg) as conn:
            start = anyio.current_time()
            with pytest.raises(KafkaTimeoutError):
                await conn.request(METADATA, MetadataRequest(topics=[]))
            elapsed = anyio.current_time() - start
            # At least the timeout (a wait happened), at most a loaded machine's slack.
            assert 1.0 <= elapsed < 5.0
            assert conn.closed  # the oldest request was overdue: the broker is not answering


@both_backends
async def test_close_returns_promptly_with_requests_in_flight() -> None:
    async with silent_after_handshake() as port:
        cfg = ClientConfig(bootstrap_servers=f"127.0.0.1:{port}")
        failures: list[BaseException] = []
        async with BrokerConnection("127.0.0.1", port, cfg) as conn:

            async def one() -> None:
                try:
                    await conn.request(METADATA, MetadataRequest(topics=[]))
                except KafkaConnectionError as exc:
                    failures.append(exc)

            async with anyio.create_task_group() as tg:
                for _ in range(50):
                    tg.start_soon(one)
                await anyio.wait_all_tasks_blocked()
                assert conn.in_flight == 50
                start = anyio.current_time()
                await conn.close()
                assert anyio.current_time() - start < 3.0
        assert len(failures) == 50


async def test_cluster_client_close_with_requests_in_flight() -> None:
    async with silent_after_handshake() as port:
        with anyio.fail_after(5):
            # The silent server never answers Metadata, so bootstrapping must fail cleanly.
            with pytest.raises((NoBrokersAvailableError, KafkaTimeoutError)):
                async with client(f"127.0.0.1:{port}", request_timeout_ms=300):
                    pass


@both_backends
async def test_broker_crash_fails_requests_in_flight() -> None:
    broker = EmbeddedBroker()
    await anyio.to_thread.run_sync(broker.start)
    try:
        host, port = broker.bootstrap_servers.split(":")
        cfg = ClientConfig(bootstrap_servers=broker.bootstrap_servers)
        outcomes: list[BaseException | None] = []
        async with BrokerConnection(host, int(port), cfg) as conn:

            async def one(i: int) -> None:
                try:
                    await conn.request(
                        METADATA, MetadataRequest(topics=[MetadataRequestTopic(name=f"crash-{i}")])
                    )
                    outcomes.append(None)
                except KafkaConnectionError as exc:
                    outcomes.append(exc)

            with anyio.fail_after(10):
                async with anyio.create_task_group() as tg:
                    for i in range(2000):
                        tg.start_soon(one, i)
                    await anyio.to_thread.run_sync(broker.kill)
        assert len(outcomes) == 2000  # every request got an answer or a typed error
        assert any(o is not None for o in outcomes)  # the crash hit requests in flight
        assert conn.closed
    finally:
        await anyio.to_thread.run_sync(broker.stop)
