"""ClusterClient logic over in-memory fake brokers: refresh sharing and fallback,
coordinator retries, background refresh, unknown nodes."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from netfakes import FakeBroker, FakeNetwork, FakeRequest

from kafka_async.cluster import ClusterClient
from kafka_async.errors import (
    CoordinatorNotAvailableError,
    GroupAuthorizationFailedError,
    KafkaConnectionError,
    KafkaTimeoutError,
)
from kafka_async.net.config import ClientConfig
from kafka_async.protocol.apis import FIND_COORDINATOR, METADATA
from kafka_async.protocol.apis.metadata import MetadataRequest

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"]),
]


class Cluster:
    """Scripted cluster state the fake brokers answer Metadata/FindCoordinator from."""

    def __init__(self) -> None:
        self.brokers = [(1, "b1", 1)]
        self.topics: dict[str, int] = {}
        self.metadata_delay = 0.0
        self.metadata_requests: list[list[str] | None] = []
        self.coordinator_errors: list[int] = []
        self.find_requests: list[FakeRequest] = []

    async def metadata(self, req: FakeRequest) -> dict[str, Any]:
        names = None if req.body.topics is None else [t.name for t in req.body.topics]
        self.metadata_requests.append(names)
        if self.metadata_delay:
            await anyio.sleep(self.metadata_delay)
        wanted = self.topics if names is None else names
        return {
            "brokers": [{"node_id": n, "host": h, "port": p} for n, h, p in self.brokers],
            "cluster_id": "fake",
            "controller_id": self.brokers[0][0],
            "topics": [self._topic(t) for t in wanted],
        }

    def _topic(self, name: str) -> dict[str, Any]:
        if name not in self.topics:
            return {"error_code": 3, "name": name, "partitions": []}
        parts = [
            {
                "partition_index": i,
                "leader_id": 1,
                "leader_epoch": 0,
                "replica_nodes": [1],
                "isr_nodes": [1],
            }
            for i in range(self.topics[name])
        ]
        tid = uuid.uuid5(uuid.NAMESPACE_DNS, name)
        return {"error_code": 0, "name": name, "topic_id": tid, "partitions": parts}

    async def find_coordinator(self, req: FakeRequest) -> dict[str, Any]:
        self.find_requests.append(req)
        code = self.coordinator_errors.pop(0) if self.coordinator_errors else 0
        where = (
            {"node_id": 1, "host": "b1", "port": 1}
            if code == 0
            else {"node_id": -1, "host": "", "port": -1}
        )
        if req.version >= 4:
            return {
                "coordinators": [{"key": req.body.coordinator_keys[0], "error_code": code, **where}]
            }
        return {"error_code": code, **where}

    def broker(self, versions: dict[int, tuple[int, int]] | None = None) -> FakeBroker:
        b = FakeBroker(
            handlers={METADATA.key: self.metadata, FIND_COORDINATOR.key: self.find_coordinator}
        )
        if versions:
            b.versions.update(versions)
        return b


@asynccontextmanager
async def fake_client(
    cluster: Cluster, brokers: dict[tuple[str, int], FakeBroker] | None = None, **cfg: Any
) -> AsyncIterator[tuple[ClusterClient, FakeNetwork]]:
    cfg.setdefault("retry_backoff_ms", 10)
    cfg.setdefault("reconnect_backoff_ms", 10)
    async with anyio.create_task_group() as tg:
        net = FakeNetwork(
            tg,
            brokers=brokers
            if brokers is not None
            else {("boot", 9): cluster.broker(), ("b1", 1): cluster.broker()},
        )
        config = ClientConfig(bootstrap_servers="boot:9", **cfg)
        async with ClusterClient(config, stream_factory=net) as c:
            yield c, net
        tg.cancel_scope.cancel()


async def test_start_bootstraps_and_adopts_brokers() -> None:
    cluster = Cluster()
    async with fake_client(cluster) as (c, net):
        assert c.metadata.cluster_id == "fake"
        assert set(c.metadata.brokers) == {1}
        assert cluster.metadata_requests == [[]]  # brokers only: no topic is tracked yet
        assert c.least_loaded_node() == 1
        await c.request(1, METADATA, MetadataRequest(topics=[]))
        assert ("b1", 1) in net.connects


async def test_concurrent_refreshes_share_and_chain() -> None:
    cluster = Cluster()
    cluster.topics = {"a": 1, "b": 2}
    async with fake_client(cluster, metadata_max_age_ms=600_000) as (c, _):
        cluster.metadata_requests.clear()
        # Long enough that the first refresh is still in flight when "b" asks, even on a
        # loaded machine; we start "b" as soon as that request has reached the broker.
        cluster.metadata_delay = 0.5
        async with anyio.create_task_group() as tg:
            for _ in range(5):
                tg.start_soon(c.refresh_metadata, ["a"])
            with anyio.fail_after(5):
                while True:  # the fake has no event for "request received"
                    if cluster.metadata_requests:
                        break
                    await anyio.sleep(0.005)
            # "b" is not covered by the refresh in flight: it waits, then starts the next.
            tg.start_soon(c.refresh_metadata, ["b"])
            tg.start_soon(c.refresh_metadata, ["a"])  # covered: joins whatever is running
        assert cluster.metadata_requests == [["a"], ["a", "b"]]
        assert c.metadata.partitions_for("b") == frozenset({0, 1})


async def test_refresh_falls_back_to_bootstrap_when_brokers_are_gone() -> None:
    cluster = Cluster()
    brokers = {("boot", 9): cluster.broker(), ("b1", 1): cluster.broker()}
    async with fake_client(cluster, brokers=brokers) as (c, net):
        await c.request(1, METADATA, MetadataRequest(topics=[]))
        del brokers[("b1", 1)]  # broker 1 disappears; the bootstrap address still answers
        await c.pool.close_node(1)
        md = await c.refresh_metadata()
        assert md.generation >= 2
        assert net.connects.count(("b1", 1)) >= 2  # tried the known broker first
        assert net.connects.count(("boot", 9)) >= 2  # then re-bootstrapped


async def test_refresh_gives_up_with_no_brokers_available() -> None:
    cluster = Cluster()
    brokers = {("boot", 9): cluster.broker(), ("b1", 1): cluster.broker()}
    async with fake_client(cluster, brokers=brokers, request_timeout_ms=300) as (c, _):
        brokers.clear()
        await c.pool.close_node(1)
        await c.pool.close_node(-1)
        start = anyio.current_time()
        with pytest.raises(KafkaConnectionError, match="no broker answered Metadata"):
            await c.refresh_metadata()
        assert anyio.current_time() - start < 3.0  # no hang; slack for a loaded machine
        assert c.statistics()["refresh_failures"] >= 1


@pytest.mark.parametrize("find_versions", [(0, 6), (0, 3)])
async def test_coordinator_retries_while_not_available(find_versions: tuple[int, int]) -> None:
    cluster = Cluster()
    cluster.coordinator_errors = [15, 14]  # not available, then loading
    versions = {FIND_COORDINATOR.key: find_versions}
    brokers = {("boot", 9): cluster.broker(versions), ("b1", 1): cluster.broker(versions)}
    async with fake_client(cluster, brokers=brokers) as (c, _):
        results = []
        async with anyio.create_task_group() as tg:
            for _ in range(3):

                async def look() -> None:
                    results.append(await c.coordinator("g1"))

                tg.start_soon(look)
        assert results == [1, 1, 1]
        assert len(cluster.find_requests) == 3  # shared by the 3 callers, 2 retries
        assert cluster.find_requests[-1].version == find_versions[1]
        assert await c.coordinator("g1") == 1  # cached
        assert len(cluster.find_requests) == 3
        await c.coordinator("txn-1", "transaction")
        assert cluster.find_requests[-1].body.key_type == 1


async def test_coordinator_errors_surface() -> None:
    cluster = Cluster()
    cluster.coordinator_errors = [30]  # GROUP_AUTHORIZATION_FAILED: not retriable
    async with fake_client(cluster) as (c, _):
        with pytest.raises(GroupAuthorizationFailedError):
            await c.coordinator("g1")
        cluster.coordinator_errors = [15] * 1000
        with pytest.raises(KafkaTimeoutError, match="COORDINATOR_NOT_AVAILABLE"):
            await c.coordinator("g2", timeout=0.2)
        assert CoordinatorNotAvailableError.retriable
        with pytest.raises(ValueError, match="key_type"):
            await c.coordinator("g3", "cluster")


async def test_background_refresh_on_max_age_and_on_request() -> None:
    cluster = Cluster()
    async with fake_client(cluster, metadata_max_age_ms=100) as (c, _):
        with anyio.fail_after(9):
            while c.statistics()["refreshes"] < 4:
                await c.wait_for_metadata_update()
    cluster = Cluster()
    async with fake_client(cluster, metadata_max_age_ms=600_000) as (c, _):
        gen = c.metadata.generation
        c.request_metadata_update()
        c.request_metadata_update()  # coalesced with the first
        await c.wait_for_metadata_update(timeout=6)
        assert c.metadata.generation == gen + 1


async def test_tracked_topics_and_wait_for_topic() -> None:
    cluster = Cluster()
    async with fake_client(cluster) as (c, _):

        async def create_later() -> None:
            await anyio.sleep(0.1)
            cluster.topics["late"] = 3

        async with anyio.create_task_group() as tg:
            tg.start_soon(create_later)
            info = await c.wait_for_topic("late", timeout=9)
        assert sorted(info.partitions) == [0, 1, 2]
        c.set_topics(None)  # all topics from now on
        await c.wait_for_metadata_update(timeout=6)
        assert cluster.metadata_requests[-1] is None


async def test_request_to_an_unknown_node_asks_for_new_metadata() -> None:
    cluster = Cluster()
    async with fake_client(cluster, metadata_max_age_ms=600_000) as (c, _):
        before = c.statistics()["refreshes"]
        with pytest.raises(KafkaConnectionError, match="node 42"):
            await c.request(42, METADATA, MetadataRequest(topics=[]))
        if c.statistics()["refreshes"] == before:  # no await between check and wait: no race
            await c.wait_for_metadata_update(timeout=6)
        assert c.statistics()["refreshes"] > before
