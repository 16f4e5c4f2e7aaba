"""Fetch by topic id (v13+, KIP-516) and new leaders from Fetch answers (KIP-951): the pure
parts. Session bookkeeping by id, the request's names and ids, reading an answer back, the
fallback to v12 by name, leader hints and a recreated topic's position."""

from __future__ import annotations

import uuid
from types import MappingProxyType
from typing import Any

import anyio
import pytest

from kafka_async.cluster.client import ClusterClient
from kafka_async.cluster.metadata import BrokerInfo, ClusterMetadata, PartitionInfo, TopicInfo
from kafka_async.consumer._signal import Signal
from kafka_async.consumer.config import ConsumerConfig
from kafka_async.consumer.fetch_session import FetchSession, PartitionFetch
from kafka_async.consumer.fetcher import Fetcher
from kafka_async.consumer.positions import EARLIEST, SubscriptionState
from kafka_async.errors import OffsetOutOfRangeError
from kafka_async.net.config import ClientConfig
from kafka_async.protocol.apis.fetch import (
    FetchableTopicResponse,
    LeaderIdAndEpoch,
    NodeEndpoint,
    PartitionData,
)
from kafka_async.structs import TopicPartition as TP

A0, A1, B0 = TP("a", 0), TP("a", 1), TP("b", 0)
ID_A, ID_A2, ID_B = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
PF = PartitionFetch(0, 100)


def _answer(session: FetchSession, plan: Any, session_id: int = 9) -> None:
    session.on_response(plan, 0, session_id)


def test_session_by_id_sends_and_forgets_by_id() -> None:
    s = FetchSession(1)
    plan = s.plan({A0: PF, A1: PF, B0: PF}, {"a": ID_A, "b": ID_B})
    assert plan.is_full
    assert plan.by_id
    assert dict(plan.topic_ids or {}) == {"a": ID_A, "b": ID_B}
    assert plan.topic_names() == {ID_A.int: "a", ID_B.int: "b"}
    _answer(s, plan)
    assert s.topic_ids == {"a": ID_A, "b": ID_B}
    # b is dropped: forgotten under the id the session holds it by.
    plan = s.plan({A0: PF, A1: PF}, {"a": ID_A})
    assert not plan.is_full
    assert dict(plan.to_send) == {}
    assert plan.to_forget == (B0,)
    assert dict(plan.forget_ids) == {B0: ID_B}
    _answer(s, plan)
    assert s.topic_ids == {"a": ID_A}


def test_recreated_topic_is_forgotten_under_its_old_id_and_sent_under_the_new() -> None:
    s = FetchSession(1)
    _answer(s, s.plan({A0: PF, A1: PF}, {"a": ID_A}))
    moved = PartitionFetch(7, 100)
    plan = s.plan({A0: moved}, {"a": ID_A2})
    # A0 is the same partition name under a new id: the broker holds (ID_A, 0), so it is
    # forgotten and (ID_A2, 0) sent in the same request; A1 is no longer wanted.
    assert dict(plan.to_send) == {A0: moved}
    assert set(plan.to_forget) == {A0, A1}
    assert dict(plan.forget_ids) == {A0: ID_A, A1: ID_A}
    assert dict(plan.topic_ids or {}) == {"a": ID_A2}
    assert s.replaced_partitions == 1
    _answer(s, plan)
    assert s.topic_ids == {"a": ID_A2}
    # Unchanged from now on: nothing to send, nothing to forget.
    plan = s.plan({A0: moved}, {"a": ID_A2})
    assert (dict(plan.to_send), plan.to_forget) == ({}, ())


def test_session_changes_kind_with_a_full_request_that_closes_the_old() -> None:
    s = FetchSession(1)
    _answer(s, s.plan({A0: PF}, {"a": ID_A}), session_id=41)
    assert (s.session_id, s.epoch) == (41, 1)
    # A topic without a known id joins: this request goes by name, so the session by id
    # cannot continue (FETCH_SESSION_TOPIC_ID_ERROR): close it and open another.
    plan = s.plan({A0: PF, B0: PF})
    assert plan.is_full
    assert not plan.by_id
    assert (plan.session_id, plan.epoch) == (41, 0)
    assert dict(plan.to_send) == {A0: PF, B0: PF}
    _answer(s, plan, session_id=42)
    assert (s.session_id, s.epoch, s.topic_ids) == (42, 1, None)
    # And back to ids once every id is known.
    plan = s.plan({A0: PF, B0: PF}, {"a": ID_A, "b": ID_B})
    assert plan.is_full
    assert plan.by_id
    assert plan.session_id == 42
    # Sessions off: every request is full, by id or not.
    off = FetchSession(1, enabled=False)
    assert off.plan({A0: PF}, {"a": ID_A}).epoch == -1


def _metadata(ids: dict[str, uuid.UUID | None], epoch: int = 5) -> ClusterMetadata:
    topics = {
        name: TopicInfo(
            name,
            topic_id=topic_id,
            partitions=MappingProxyType(
                {p: PartitionInfo(name, p, 1, epoch, replicas=(1, 2, 3)) for p in (0, 1)}
            ),
        )
        for name, topic_id in ids.items()
    }
    return ClusterMetadata(
        brokers=MappingProxyType({1: BrokerInfo(1, "127.0.0.1", 1)}),
        topics=MappingProxyType(topics),
    )


def _fetcher(
    ids: dict[str, uuid.UUID | None], reset: str = "earliest"
) -> tuple[Fetcher, ClusterClient, SubscriptionState]:
    client = ClusterClient(ClientConfig())
    client._metadata = _metadata(ids)
    subs = SubscriptionState(reset)
    subs.assign_from_user([A0, B0])
    subs.seek(A0, 10)
    subs.seek(B0, 0)
    cfg = ConsumerConfig(client=ClientConfig())
    return Fetcher(client, subs, cfg, Signal()), client, subs


@pytest.mark.anyio
async def test_request_by_id_at_v13_and_up_by_name_otherwise() -> None:
    f, _, _ = _fetcher({"a": ID_A, "b": ID_B})
    wanted = {A0: PartitionFetch(10, 100), B0: PF}
    plan, version, _ = f._plan(FetchSession(1), wanted, 17)
    assert version == 17
    assert plan.by_id
    req = f._build_request(plan)
    assert {t.topic_id: [p.partition for p in t.partitions] for t in req.topics} == {
        ID_A: [0],
        ID_B: [0],
    }
    # A broker whose highest Fetch is v12: by name.
    plan, version, _ = f._plan(FetchSession(1), wanted, 12)
    assert version == 12
    assert not plan.by_id
    assert sorted(t.topic for t in f._build_request(plan).topics) == ["a", "b"]
    # A topic whose id the metadata does not know (Metadata v<10): v12 for this request.
    f2, _, _ = _fetcher({"a": ID_A, "b": None})
    plan, version, ids = f2._plan(FetchSession(1), wanted, 17)
    assert version == 12
    assert not plan.by_id
    assert ids == {"a": ID_A}


@pytest.mark.anyio
async def test_forgotten_partitions_named_by_their_session_id() -> None:
    f, _, _ = _fetcher({"a": ID_A2})
    s = FetchSession(1)
    _answer(s, s.plan({A0: PF, A1: PF}, {"a": ID_A}))
    plan, _version, _ = f._plan(s, {A0: PF}, 17)
    req = f._build_request(plan)
    assert [(t.topic_id, [p.partition for p in t.partitions]) for t in req.topics] == [(ID_A2, [0])]
    assert [(t.topic_id, sorted(t.partitions)) for t in req.forgotten_topics_data] == [
        (ID_A, [0, 1])
    ]


def _part(code: int, leader: int = -1, epoch: int = -1) -> PartitionData:
    return PartitionData(
        partition_index=0,
        error_code=code,
        high_watermark=-1,
        current_leader=LeaderIdAndEpoch(leader_id=leader, leader_epoch=epoch),
        records=None,
    )


@pytest.mark.anyio
@pytest.mark.parametrize("code", [6, 74], ids=["NOT_LEADER_OR_FOLLOWER", "FENCED_LEADER_EPOCH"])
async def test_new_leader_from_a_fetch_answer_moves_the_partition(code: int) -> None:
    f, client, subs = _fetcher({"a": ID_A, "b": ID_B})
    epoch = subs.assignment[A0].epoch
    hints: list[tuple[TP, int, int]] = []
    assert not f._handle_partition(A0, _part(code, 2, 6), PF, epoch, 1, ID_A, hints)
    assert hints == [(A0, 2, 6)]
    f._apply_hints(hints, [NodeEndpoint(node_id=2, host="127.0.0.2", port=9092, rack=None)])
    md = client.metadata
    assert (md.leader_for(A0), md.leader_epoch_for(A0)) == (2, 6)
    assert md.broker(2) == BrokerInfo(2, "127.0.0.2", 9092)
    assert f.leader_hints == 1
    assert f.statistics()["leader_hints"] == 1
    assert client.statistics()["leader_hints"] == 1


@pytest.mark.anyio
async def test_stale_or_unknown_leader_hint_asks_for_metadata() -> None:
    f, client, subs = _fetcher({"a": ID_A})
    epoch = subs.assignment[A0].epoch
    hints: list[tuple[TP, int, int]] = []
    # Epoch 4 is older than the known 5; broker 3 is not known and the answer has no
    # endpoint for it: neither is taken, metadata is asked for instead.
    f._handle_partition(A0, _part(6, 2, 4), PF, epoch, 1, ID_A, hints)
    f._handle_partition(A1, _part(6, 3, 9), PF, epoch, 1, ID_A, hints)
    f._apply_hints(hints, [])
    assert client.metadata.leader_for(A0) == 1
    assert f.leader_hints == 0
    assert client._update_requested.is_set()
    # Without a leader in the answer (before v12, or -1): metadata, no hint.
    f2, client2, subs2 = _fetcher({"a": ID_A})
    hints2: list[tuple[TP, int, int]] = []
    f2._handle_partition(A0, _part(6), PF, subs2.assignment[A0].epoch, 1, ID_A, hints2)
    assert hints2 == []
    assert client2._update_requested.is_set()


@pytest.mark.anyio
async def test_recreated_topic_restarts_at_its_beginning() -> None:
    f, client, subs = _fetcher({"a": ID_A, "b": ID_B})
    st = subs.assignment[A0]
    f._fetched_ids[A0] = (st.epoch, ID_A)
    f._fetched_ids[B0] = (subs.assignment[B0].epoch, ID_B)
    assert set(f._wanted(1)[0]) == {A0, B0}
    # "a" is deleted and recreated: its position 10 belongs to the old log.
    client._metadata = _metadata({"a": ID_A2, "b": ID_B})
    wanted, _ = f._wanted(1)
    assert set(wanted) == {B0}
    assert subs.needing_reset() == {A0: EARLIEST}
    assert f.recreated_topics == 1
    assert A0 not in f._fetched_ids


@pytest.mark.anyio
async def test_recreated_topic_under_reset_none_is_reported_until_seek() -> None:
    f, client, subs = _fetcher({"a": ID_A, "b": ID_B}, reset="none")
    f._fetched_ids[A0] = (subs.assignment[A0].epoch, ID_A)
    client._metadata = _metadata({"a": ID_A2, "b": ID_B})
    assert set(f._wanted(1)[0]) == {B0}
    with pytest.raises(OffsetOutOfRangeError, match="recreated"):
        f.drain(10)
    assert set(f._wanted(1)[0]) == {B0}  # still held: reported again
    with pytest.raises(OffsetOutOfRangeError):
        f.drain(10)
    subs.seek(A0, 0)
    assert set(f._wanted(1)[0]) == {A0, B0}


def test_answer_topics_read_back_by_id() -> None:
    s = FetchSession(1)
    plan = s.plan({A0: PF, B0: PF}, {"a": ID_A, "b": ID_B})
    names = plan.topic_names()
    answer = [
        FetchableTopicResponse(topic_id=ID_B, partitions=[]),
        FetchableTopicResponse(topic_id=ID_A2, partitions=[]),
    ]
    assert [names.get(t.topic_id.int) for t in answer] == ["b", None]


@pytest.mark.anyio
async def test_an_empty_answer_ties_the_position_to_the_topic_id() -> None:
    """A consumer caught up (answers without records) still has a position in the old log:
    the recreation must be noticed then too, or the new topic's first records are skipped."""
    f, client, subs = _fetcher({"a": ID_A, "b": ID_B})
    epoch = subs.assignment[A0].epoch
    empty = PartitionData(partition_index=0, error_code=0, high_watermark=10, records=None)
    f._handle_partition(A0, empty, PartitionFetch(10, 100), epoch, 1, ID_A, [])
    assert f._fetched_ids[A0] == (epoch, ID_A)
    client._metadata = _metadata({"a": ID_A2, "b": ID_B})
    assert set(f._wanted(1)[0]) == {B0}
    assert subs.needing_reset() == {A0: EARLIEST}


def _scripted_fetch(req: Any) -> Any:
    """Five records from the fetch offset, the topic named as the request named it."""
    from kafka_async.records.batch import build_batch

    t = req.body.topics[0]
    p = t.partitions[0]
    records = build_batch(
        [(None, None, b"r%d" % (p.fetch_offset + i), None) for i in range(5)],
        base_offset=p.fetch_offset,
    )
    part = {
        "partition_index": 0,
        "error_code": 0,
        "high_watermark": 1000,
        "last_stable_offset": 1000,
        "log_start_offset": 0,
        "records": records,
    }
    return {
        "responses": [{"topic": t.topic, "topic_id": t.topic_id, "partitions": [part]}],
        "session_id": 0,
    }


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("versions", "expected"),
    [
        ({}, 17),
        ({1: (4, 15)}, 15),  # Fetch v13-15: by id, no node endpoints yet
        ({1: (4, 12)}, 12),  # a broker before topic ids in Fetch (Kafka < 2.8)
        ({1: (4, 7)}, 7),
        ({3: (0, 9)}, 12),  # Metadata v9 carries no topic ids: by name
    ],
    ids=["v17", "fetch-v15", "fetch-v12", "fetch-v7", "metadata-v9"],
)
async def test_reads_at_the_version_the_broker_and_the_metadata_allow(
    versions: dict[int, tuple[int, int]], expected: int
) -> None:
    from kafka_async.consumer import Consumer
    from kafka_async.protocol.apis import FETCH
    from tests.harness.fake_broker import FakeBroker

    async with FakeBroker({"t": 1}, api_versions=versions) as broker:
        broker.set_default(FETCH.key, _scripted_fetch)
        async with Consumer(bootstrap_servers=broker.address) as c:
            c.assign([TP("t", 0)])
            c.seek(TP("t", 0), 0)
            got: list[bytes] = []
            with anyio.fail_after(10):
                while len(got) < 15:
                    batch = await c.getmany(timeout_ms=200)
                    got += [r.value or b"" for recs in batch.values() for r in recs]
            stats = c.statistics()["fetcher"]
        seen = {r.api_version for r in broker.requests if r.api_key == FETCH.key}
    assert got[:15] == [b"r%d" % i for i in range(15)]
    assert seen == {expected}
    assert set(stats["fetches_by_version"]) == {expected}


@pytest.mark.anyio
async def test_fetch_starts_when_metadata_names_the_leader_not_a_backoff_later() -> None:
    """A partition assigned before its leader is known: the fetch loop for the leader starts
    as soon as the metadata naming it is installed, not one retry_backoff_ms later (here a
    minute, so only the wake-up can pass within the deadline)."""
    client = ClusterClient(ClientConfig(retry_backoff_ms=60_000))
    subs = SubscriptionState("earliest")
    subs.assign_from_user([A0])
    subs.seek(A0, 0)
    f = Fetcher(client, subs, ConsumerConfig(client=client.config), Signal())
    started = anyio.Event()

    async def node_loop(node_id: int) -> None:
        started.set()
        await anyio.sleep_forever()

    f._node_loop = node_loop  # type: ignore[method-assign]
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            await tg.start(f.run)
            await anyio.wait_all_tasks_blocked()
            assert not started.is_set()  # no leader known yet
            client._metadata = _metadata({"a": ID_A})
            updated, client._updated = client._updated, anyio.Event()
            updated.set()
            await started.wait()
            tg.cancel_scope.cancel()
