"""Routing and retries of the AdminClient over scripted in-memory brokers.

Tansu is a single broker, so whether requests reach the controller, the group coordinator
and each partition's leader (and are re-routed when those move) is checked here against a
two-broker fake cluster built on the fakes of tests/net.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

_NET = str(Path(__file__).resolve().parents[1] / "net")
if _NET not in sys.path:
    sys.path.insert(0, _NET)

from netfakes import FakeBroker, FakeNetwork, FakeRequest  # noqa: E402

from kafka_async.admin import AdminClient, NewTopic, OffsetSpec  # noqa: E402
from kafka_async.errors import (  # noqa: E402
    IncompatibleBrokerVersionError,
    KafkaTimeoutError,
    NotLeaderOrFollowerError,
    TopicAlreadyExistsError,
)
from kafka_async.protocol import apis  # noqa: E402
from kafka_async.structs import TopicPartition  # noqa: E402

pytestmark = pytest.mark.anyio
TP = TopicPartition

VERSIONS = {
    apis.CREATE_TOPICS.key: (0, 7),
    apis.ELECT_LEADERS.key: (0, 2),
    apis.DESCRIBE_GROUPS.key: (0, 5),
    apis.LIST_GROUPS.key: (0, 4),
    apis.LIST_OFFSETS.key: (0, 9),
}


class FakeCluster:
    """Two brokers; answers come from this scripted state, requests are logged per node."""

    def __init__(self) -> None:
        self.controller = 2
        # topic -> leader node per partition
        self.leaders: dict[str, list[int]] = {"t": [1, 2, 1]}
        self.coordinator = 2
        self.seen: list[tuple[int, str, Any]] = []
        self.create_errors: list[dict[str, int]] = []
        self.describe_group_errors: list[int] = []
        self.not_leader_once: set[TopicPartition] = set()
        self.groups: dict[int, list[str]] = {1: ["g-a"], 2: ["g-b", "g-c"]}
        self.hang_list_offsets = False
        self.stuck: set[TopicPartition] = set()

    def broker(self, node: int) -> FakeBroker:
        async def metadata(req: FakeRequest) -> dict[str, Any]:
            self.seen.append((node, "Metadata", req.body))
            names = (
                list(self.leaders)
                if req.body.topics is None
                else [t.name for t in req.body.topics if t.name in self.leaders]
            )
            return {
                "brokers": [
                    {"node_id": 1, "host": "b1", "port": 1},
                    {"node_id": 2, "host": "b2", "port": 2},
                ],
                "cluster_id": "fake",
                "controller_id": self.controller,
                "topics": [
                    {
                        "error_code": 0,
                        "name": n,
                        "partitions": [
                            {
                                "partition_index": i,
                                "leader_id": leader,
                                "replica_nodes": [leader],
                                "isr_nodes": [leader],
                            }
                            for i, leader in enumerate(self.leaders[n])
                        ],
                    }
                    for n in names
                ],
            }

        async def find_coordinator(req: FakeRequest) -> dict[str, Any]:
            self.seen.append((node, "FindCoordinator", req.body))
            c = self.coordinator
            where = {"node_id": c, "host": f"b{c}", "port": c, "error_code": 0}
            if req.version >= 4:
                return {"coordinators": [{"key": req.body.coordinator_keys[0], **where}]}
            return where

        async def create_topics(req: FakeRequest) -> dict[str, Any]:
            self.seen.append((node, "CreateTopics", [t.name for t in req.body.topics]))
            errors = self.create_errors.pop(0) if self.create_errors else {}
            if node != self.controller:
                errors = dict.fromkeys((t.name for t in req.body.topics), 41)
            return {
                "topics": [
                    {"name": t.name, "error_code": errors.get(t.name, 0)} for t in req.body.topics
                ]
            }

        async def elect_leaders(req: FakeRequest) -> dict[str, Any]:
            asked = [(t.topic, p) for t in req.body.topic_partitions for p in t.partitions]
            self.seen.append((node, "ElectLeaders", asked))
            # ZooKeeper mode: only the controller elects; any other broker answers
            # NOT_CONTROLLER (41) for each partition, with no top-level error.
            code = 0 if node == self.controller else 41
            results: dict[str, list[dict[str, Any]]] = {}
            for topic, p in asked:
                results.setdefault(topic, []).append(
                    {"partition_id": p, "error_code": code, "error_message": None}
                )
            return {
                "replica_election_results": [
                    {"topic": t, "partition_result": ps} for t, ps in results.items()
                ]
            }

        async def describe_groups(req: FakeRequest) -> dict[str, Any]:
            self.seen.append((node, "DescribeGroups", list(req.body.groups)))
            code = self.describe_group_errors.pop(0) if self.describe_group_errors else 0
            return {
                "groups": [
                    {
                        "error_code": code,
                        "group_id": g,
                        "group_state": "Empty" if code == 0 else "",
                        "protocol_type": "consumer",
                    }
                    for g in req.body.groups
                ]
            }

        async def list_groups(req: FakeRequest) -> dict[str, Any]:
            self.seen.append((node, "ListGroups", None))
            return {
                "groups": [
                    {"group_id": g, "protocol_type": "consumer", "group_state": "Stable"}
                    for g in self.groups[node]
                ]
            }

        async def list_offsets(req: FakeRequest) -> dict[str, Any] | None:
            asked = [TP(t.name, p.partition_index) for t in req.body.topics for p in t.partitions]
            self.seen.append((node, "ListOffsets", asked))
            if self.hang_list_offsets:
                await anyio.sleep_forever()
            topics: dict[str, list[dict[str, Any]]] = {}
            for tp in asked:
                code = 0
                if tp in self.stuck:
                    code = 6
                elif tp in self.not_leader_once:
                    self.not_leader_once.discard(tp)
                    code = 6
                    self.leaders[tp.topic][tp.partition] = 3 - node  # leadership moved
                elif self.leaders[tp.topic][tp.partition] != node:
                    code = 6
                topics.setdefault(tp.topic, []).append(
                    {
                        "partition_index": tp.partition,
                        "error_code": code,
                        "offset": 100 * node + tp.partition if code == 0 else -1,
                        "timestamp": -1,
                    }
                )
            return {"topics": [{"name": t, "partitions": ps} for t, ps in topics.items()]}

        b = FakeBroker(
            handlers={
                apis.METADATA.key: metadata,
                apis.FIND_COORDINATOR.key: find_coordinator,
                apis.CREATE_TOPICS.key: create_topics,
                apis.ELECT_LEADERS.key: elect_leaders,
                apis.DESCRIBE_GROUPS.key: describe_groups,
                apis.LIST_GROUPS.key: list_groups,
                apis.LIST_OFFSETS.key: list_offsets,
            }
        )
        b.versions.update(VERSIONS)
        return b

    def calls(self, api: str) -> list[tuple[int, Any]]:
        return [(node, body) for node, name, body in self.seen if name == api]


@asynccontextmanager
async def fake_admin(cluster: FakeCluster, **cfg: Any) -> AsyncIterator[AdminClient]:
    cfg.setdefault("retry_backoff_ms", 5)
    cfg.setdefault("default_api_timeout_ms", 5_000)
    async with anyio.create_task_group() as tg:
        net = FakeNetwork(
            tg,
            brokers={
                ("boot", 9): cluster.broker(1),
                ("b1", 1): cluster.broker(1),
                ("b2", 2): cluster.broker(2),
            },
        )
        async with AdminClient("boot:9", stream_factory=net, **cfg) as admin:
            yield admin
        tg.cancel_scope.cancel()


async def test_create_topics_goes_to_the_controller() -> None:
    cluster = FakeCluster()
    async with fake_admin(cluster) as admin:
        got = await admin.create_topics([NewTopic("x", 1, 1)])
    assert got.ok
    assert cluster.calls("CreateTopics") == [(2, ["x"])]


async def test_not_controller_is_retried_only_for_the_topics_that_got_it() -> None:
    cluster = FakeCluster()
    # The first answer: "a" fails with NOT_CONTROLLER (the controller moved), "b" exists.
    cluster.create_errors = [{"a": 41, "b": 36}]
    async with fake_admin(cluster) as admin:
        cluster.controller = 2
        got = await admin.create_topics([NewTopic("a", 1, 1), NewTopic("b", 1, 1)])
    assert got["a"].error is None
    assert isinstance(got["b"].error, TopicAlreadyExistsError)
    assert cluster.calls("CreateTopics") == [(2, ["a", "b"]), (2, ["a"])]
    assert list(got) == ["a", "b"]


async def test_controller_move_is_followed_after_a_refresh() -> None:
    cluster = FakeCluster()
    async with fake_admin(cluster) as admin:
        cluster.controller = 1  # metadata still says 2: broker 2 answers NOT_CONTROLLER
        got = await admin.create_topics([NewTopic("x", 1, 1)])
    assert got["x"].error is None
    assert cluster.calls("CreateTopics") == [(2, ["x"]), (1, ["x"])]


async def test_elect_leaders_goes_to_the_controller() -> None:
    # A ZooKeeper-mode broker that is not the controller does not forward ElectLeaders: it
    # answers NOT_CONTROLLER for every partition (Apache Kafka 2.8.2 did so to an election
    # sent to any broker, and the preferred leader never came back).
    cluster = FakeCluster()
    async with fake_admin(cluster) as admin:
        got = await admin.elect_leaders([TP("t", 0), TP("t", 1)])
    assert got.ok, {tp: r.error for tp, r in got.items()}
    assert cluster.calls("ElectLeaders") == [(2, [("t", 0), ("t", 1)])]


async def test_elect_leaders_follows_a_moved_controller() -> None:
    cluster = FakeCluster()
    async with fake_admin(cluster) as admin:
        cluster.controller = 1  # metadata still says 2: broker 2 answers NOT_CONTROLLER
        got = await admin.elect_leaders([TP("t", 0)])
    assert got.ok, {tp: r.error for tp, r in got.items()}
    assert cluster.calls("ElectLeaders") == [(2, [("t", 0)]), (1, [("t", 0)])]


async def test_group_requests_go_to_the_coordinator_and_follow_it() -> None:
    cluster = FakeCluster()
    async with fake_admin(cluster) as admin:
        first = await admin.describe_groups(["g"])
        assert first["g"].coordinator == 2
        cluster.coordinator = 1  # the group moved; the cached coordinator (2) is stale
        cluster.describe_group_errors = [16]  # broker 2 answers NOT_COORDINATOR
        got = await admin.describe_groups(["g"])
    assert got["g"].error is None
    assert got["g"].coordinator == 1
    assert [node for node, _ in cluster.calls("DescribeGroups")] == [2, 2, 1]
    assert len(cluster.calls("FindCoordinator")) == 2


async def test_list_offsets_one_request_per_leader() -> None:
    cluster = FakeCluster()
    async with fake_admin(cluster) as admin:
        got = await admin.list_offsets(
            {TP("t", 0): OffsetSpec.latest(), TP("t", 1): "latest", TP("t", 2): "earliest"}
        )
    assert {tp: r.offset for tp, r in got.items()} == {
        TP("t", 0): 100,
        TP("t", 1): 201,
        TP("t", 2): 102,
    }
    assert sorted((n, sorted(tps)) for n, tps in cluster.calls("ListOffsets")) == [
        (1, [TP("t", 0), TP("t", 2)]),
        (2, [TP("t", 1)]),
    ]


async def test_list_offsets_follows_a_leader_change() -> None:
    cluster = FakeCluster()
    cluster.not_leader_once = {TP("t", 1)}  # broker 2 gives up leadership of t-1 to broker 1
    async with fake_admin(cluster) as admin:
        got = await admin.list_offsets({TP("t", 0): "latest", TP("t", 1): "latest"})
    assert got.ok
    assert got[TP("t", 1)].offset == 101  # answered by broker 1 after the refresh
    assert (1, [TP("t", 1)]) in cluster.calls("ListOffsets")


async def test_a_leader_that_keeps_refusing_is_an_item_error() -> None:
    cluster = FakeCluster()
    cluster.stuck = {TP("t", 0)}  # its leader always answers NOT_LEADER; metadata never moves
    async with fake_admin(cluster, default_api_timeout_ms=300) as admin:
        started = anyio.current_time()
        got = await admin.list_offsets({TP("t", 0): "latest", TP("t", 2): "latest"})
        elapsed = anyio.current_time() - started
    assert isinstance(got[TP("t", 0)].error, NotLeaderOrFollowerError)
    assert got[TP("t", 2)].error is None
    assert got[TP("t", 2)].offset == 102
    # Bounded by the 0.3 s deadline; the slack is for a loaded 2-core CI machine.
    assert elapsed < 4.5
    # Retried with backoff until the deadline, only for the failing partition.
    retried = [tps for _, tps in cluster.calls("ListOffsets") if TP("t", 0) in tps]
    assert len(retried) >= 2
    assert sum(TP("t", 2) in tps for _, tps in cluster.calls("ListOffsets")) == 1


async def test_a_silent_broker_costs_at_most_the_deadline() -> None:
    cluster = FakeCluster()
    cluster.hang_list_offsets = True
    async with fake_admin(cluster, default_api_timeout_ms=400, request_timeout_ms=200) as admin:
        started = anyio.current_time()
        got = await admin.list_offsets({TP("t", 1): "latest"})
        elapsed = anyio.current_time() - started
    assert isinstance(got[TP("t", 1)].error, KafkaTimeoutError)
    assert elapsed < 6.0  # 0.4 s deadline, with slack for a loaded machine


async def test_list_groups_merges_every_broker() -> None:
    cluster = FakeCluster()
    async with fake_admin(cluster) as admin:
        groups = await admin.list_groups()
    assert [(g.group_id, g.coordinator) for g in groups] == [
        ("g-a", 1),
        ("g-b", 2),
        ("g-c", 2),
    ]
    assert sorted(node for node, _ in cluster.calls("ListGroups")) == [1, 2]


async def test_api_missing_on_the_broker_raises_incompatible_version() -> None:
    cluster = FakeCluster()
    async with fake_admin(cluster) as admin:
        with pytest.raises(IncompatibleBrokerVersionError, match="DeleteRecords"):
            await admin.delete_records({TP("t", 0): 1})
        # States filtering needs ListGroups v4; the fake speaks v4, types need v5.
        with pytest.raises(IncompatibleBrokerVersionError, match="ListGroups"):
            await admin.list_groups(types=["classic"])
