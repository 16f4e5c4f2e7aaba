"""Fetching from the closest replica (KIP-392, ``client_rack``), with scripted brokers: the
leader names a preferred read replica, the consumer reads from it, and goes back to the
leader when the replica fails it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from consumer_helpers import fetch_topic

from kafka_async.consumer import Consumer
from kafka_async.protocol.apis import FETCH, LIST_OFFSETS
from kafka_async.records.batch import build_batch
from kafka_async.structs import TopicPartition
from tests.harness.fake_broker import FakeBroker, FakeRequest

TP = TopicPartition("t", 0)
LEADER, REPLICA = 1, 2
END = 1000


def _part(**fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "partition_index": 0,
        "error_code": 0,
        "high_watermark": END,
        "last_stable_offset": END,
        "log_start_offset": 0,
        "records": b"",
    }
    out.update(fields)
    return out


def _records(offset: int, tag: bytes) -> bytes:
    return build_batch(
        [(None, None, tag + b"%d" % (offset + i), None) for i in range(5)], base_offset=offset
    )


class Replicas:
    """The leader names replica 2 to a client in rack "b"; the replica serves records until
    told to fail."""

    def __init__(self) -> None:
        self.leader_racks: list[str] = []
        self.replica_fails = False

    async def leader_fetch(self, req: FakeRequest) -> Any:
        self.leader_racks.append(req.body.rack_id)
        p = req.body.topics[0].partitions[0]
        if req.body.rack_id == "b" and not self.replica_fails:
            part = _part(preferred_read_replica=REPLICA)
        else:
            part = _part(records=_records(p.fetch_offset, b"leader-"))
        return {"responses": [fetch_topic(req, part)], "session_id": 0}

    async def replica_fetch(self, req: FakeRequest) -> Any:
        p = req.body.topics[0].partitions[0]
        if self.replica_fails:
            part = _part(error_code=6)  # NOT_LEADER_OR_FOLLOWER: it lost the partition
        else:
            part = _part(records=_records(p.fetch_offset, b"replica-"))
        return {"responses": [fetch_topic(req, part)], "session_id": 0}


def _list_offsets(req: FakeRequest) -> Any:
    part = {"partition_index": 0, "error_code": 0, "timestamp": -1, "offset": 0}
    return {"topics": [{"name": "t", "partitions": [part]}]}


@pytest.fixture
async def cluster() -> AsyncIterator[tuple[FakeBroker, FakeBroker, Replicas]]:
    async with (
        FakeBroker({"t": 1}, node_id=LEADER) as leader,
        FakeBroker({"t": 1}, node_id=REPLICA) as replica,
    ):
        replica.topic_ids = dict(leader.topic_ids)
        leader.peers = [(REPLICA, replica.host, replica.port)]
        replica.peers = [(LEADER, leader.host, leader.port)]
        replica.leaders[("t", 0)] = LEADER
        script = Replicas()
        leader.set_default(FETCH.key, script.leader_fetch)
        replica.set_default(FETCH.key, script.replica_fetch)
        for b in (leader, replica):
            b.set_default(LIST_OFFSETS.key, _list_offsets)
        yield leader, replica, script


async def _values(c: Consumer[bytes, bytes], n: int) -> list[bytes]:
    got: list[bytes] = []
    with anyio.fail_after(10):
        while len(got) < n:
            batch = await c.getmany(timeout_ms=200, max_records=n - len(got))
            got += [r.value or b"" for recs in batch.values() for r in recs]
    return got


@pytest.mark.anyio
async def test_reads_from_the_replica_the_leader_names_then_back_to_the_leader(
    cluster: tuple[FakeBroker, FakeBroker, Replicas],
) -> None:
    leader, _, script = cluster
    async with Consumer(
        bootstrap_servers=leader.address, client_rack="b", enable_fetch_sessions=False
    ) as c:
        c.assign([TP])
        c.seek(TP, 0)
        first = await _values(c, 10)
        assert first == [b"replica-%d" % i for i in range(10)]
        assert script.leader_racks[0] == "b"
        stats = c.statistics()["fetcher"]
        assert stats["preferred_replicas"] == {"t-0": REPLICA}
        assert stats["fetches_by_node"][REPLICA] >= 2
        # The replica loses the partition: back to the leader, and on from the position.
        script.replica_fails = True
        more = await _values(c, 10)
        assert more == [b"leader-%d" % i for i in range(10, 20)]
        assert c.statistics()["fetcher"]["preferred_replicas"] == {}


@pytest.mark.anyio
async def test_without_client_rack_the_leader_serves(
    cluster: tuple[FakeBroker, FakeBroker, Replicas],
) -> None:
    leader, replica, script = cluster
    async with Consumer(bootstrap_servers=leader.address, enable_fetch_sessions=False) as c:
        c.assign([TP])
        c.seek(TP, 0)
        assert await _values(c, 5) == [b"leader-%d" % i for i in range(5)]
        assert set(script.leader_racks) == {""}
        assert not [r for r in replica.requests if r.api_key == FETCH.key]
