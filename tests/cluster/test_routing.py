"""cluster/routing.py: the pure decisions (retry sets from errors.py's flags, grouping by
leader, deadlines, the backoff) without a broker, and the Router against a real one."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import anyio
import pytest

from kafka_async import errors as E
from kafka_async.cluster import ClusterClient
from kafka_async.cluster.metadata import BrokerInfo, ClusterMetadata, PartitionInfo, TopicInfo
from kafka_async.cluster.routing import (
    CONTROLLER_MOVED,
    COORDINATOR_LOADING,
    COORDINATOR_MOVED,
    INVALID_METADATA_CODES,
    LEADER_MOVED,
    RETRIABLE_CODES,
    Deadline,
    Router,
    error_code,
    error_or_none,
    is_retriable,
    leaders_for,
    retry_backoff,
)
from kafka_async.net.config import ClientConfig
from kafka_async.protocol.apis import CREATE_TOPICS, LIST_OFFSETS, METADATA
from kafka_async.protocol.apis.create_topics import CreatableTopic, CreateTopicsRequest
from kafka_async.protocol.apis.list_offsets import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsTopic,
)
from kafka_async.protocol.apis.metadata import MetadataRequest
from kafka_async.structs import TopicPartition as TP

# -- retry sets ------------------------------------------------------------------------------


def test_retry_sets_follow_the_error_classes_flags() -> None:
    for code in RETRIABLE_CODES:
        cls = E.for_code(code)
        assert cls is not None, code
        assert cls.retriable, code
    assert E.NotLeaderOrFollowerError.code in RETRIABLE_CODES
    assert E.TopicAuthorizationFailedError.code not in RETRIABLE_CODES
    assert INVALID_METADATA_CODES == E.INVALID_METADATA_CODES
    assert {E.NotCoordinatorError.code, E.CoordinatorNotAvailableError.code} == COORDINATOR_MOVED
    assert COORDINATOR_LOADING <= RETRIABLE_CODES
    assert not COORDINATOR_LOADING & COORDINATOR_MOVED
    assert {E.NotControllerError.code} == CONTROLLER_MOVED
    # A partition's leader moved: routed again. UNKNOWN_TOPIC_OR_PARTITION is an answer.
    assert LEADER_MOVED <= INVALID_METADATA_CODES
    assert E.NotLeaderOrFollowerError.code in LEADER_MOVED
    assert E.UnknownTopicOrPartitionError.code not in LEADER_MOVED


def test_is_retriable_and_error_helpers() -> None:
    assert not is_retriable(0)
    assert is_retriable(E.NotControllerError.code)
    assert not is_retriable(E.TopicAlreadyExistsError.code)
    assert is_retriable(E.TopicAlreadyExistsError.code, also=frozenset({36}))
    assert not is_retriable(9999)  # unknown codes are final
    assert error_or_none(0, "ignored") is None
    err = error_or_none(E.NotCoordinatorError.code, "")
    assert isinstance(err, E.NotCoordinatorError)
    assert err.message is None
    assert error_code(None) == 0
    assert error_code(err) == E.NotCoordinatorError.code
    assert error_code(E.KafkaConnectionError("x")) == -1
    assert error_code(E.error_for_code(9999)) == 9999


# -- grouping by leader ------------------------------------------------------------------------


def _metadata() -> ClusterMetadata:
    def topic(name: str, leaders: Sequence[int]) -> TopicInfo:
        parts = {i: PartitionInfo(name, i, leader) for i, leader in enumerate(leaders)}
        return TopicInfo(name, uuid.uuid4(), partitions=parts)

    return ClusterMetadata(
        brokers={n: BrokerInfo(n, "127.0.0.1", 9000 + n) for n in (1, 2)},
        controller_id=2,
        topics={"a": topic("a", [1, 2, 1]), "b": topic("b", [2, -1])},
    )


def test_leaders_for_groups_partitions_and_sets_aside_the_unroutable() -> None:
    plan = leaders_for(
        _metadata(),
        [TP("a", 0), TP("b", 0), TP("a", 2), TP("a", 1), TP("b", 1), TP("a", 7), TP("zz", 0)],
    )
    assert plan.by_leader == {1: [TP("a", 0), TP("a", 2)], 2: [TP("b", 0), TP("a", 1)]}
    assert plan.no_leader == [TP("b", 1)]
    assert plan.unknown_partition == [TP("a", 7)]
    assert plan.unknown_topic == [TP("zz", 0)]


# -- deadlines and backoff ---------------------------------------------------------------------


@pytest.mark.parametrize("bad", [0, -5, True, 1.5, "10"])
def test_deadline_refuses_a_timeout_that_is_not_a_positive_int(bad: Any) -> None:
    with pytest.raises(E.ConfigError, match="timeout_ms"):
        Deadline.after_ms(bad, 1000)


@pytest.mark.anyio
async def test_deadline_counts_down_and_never_reports_zero_ms() -> None:
    d = Deadline.after_ms(None, 5_000)
    assert 4.0 < d.remaining() <= 5.0
    assert 4_000 < d.remaining_ms() <= 5_000
    assert Deadline.after(-1).remaining_ms() == 1


def test_retry_backoff_doubles_with_jitter_up_to_its_cap() -> None:
    policy = retry_backoff(100)
    assert policy.delay(0) == 0.0
    for failures, base in [(1, 0.1), (2, 0.2), (3, 0.4), (4, 0.8), (5, 1.0), (30, 1.0)]:
        lo, hi = policy.bounds(failures)
        assert lo == pytest.approx(base * 0.8)
        assert hi == pytest.approx(min(1.0, base * 1.2))
        assert lo <= policy.delay(failures, lambda: 0.0) <= policy.delay(failures, lambda: 1.0)
        assert policy.delay(failures, lambda: 1.0) <= hi + 1e-9
    # A retry backoff above the cap is used as is, never shortened.
    assert retry_backoff(5_000).base(3) == 5.0


@pytest.mark.anyio
async def test_router_backoff_grows_per_retry_and_stops_before_the_deadline() -> None:
    router = Router(ClusterClient(ClientConfig(retry_backoff_ms=10)))
    deadline = Deadline.after(0.5)
    slept = []
    for _ in range(3):
        before = anyio.current_time()
        assert await router.backoff(deadline, rand=lambda: 0.5)
        slept.append(anyio.current_time() - before)
    assert deadline.attempts == 3
    assert router.retries == 3
    # 10, 20, 40 ms (jitter pinned to none): the wait grows (lower bounds only).
    assert slept[0] >= 0.009
    assert slept[2] >= 0.039
    # One more would pass the deadline: no sleep, False.
    late = Deadline.after(0.005)
    assert not await router.backoff(late)
    assert late.attempts == 0


# -- the Router against a real broker ----------------------------------------------------------


def _client(bootstrap: str) -> ClusterClient:
    return ClusterClient(ClientConfig(bootstrap_servers=bootstrap, retry_backoff_ms=50))


@pytest.mark.anyio
@pytest.mark.integration
async def test_router_sends_per_leader_per_broker_and_to_the_controller(
    kafka_broker: str,
) -> None:
    topic = f"routing-{uuid.uuid4().hex[:10]}"
    async with _client(kafka_broker) as cluster:
        router = Router(cluster, default_timeout_ms=30_000)
        deadline = router.deadline()
        _, created = await router.to_controller(
            CREATE_TOPICS,
            lambda v: CreateTopicsRequest(
                topics=[CreatableTopic(name=topic, num_partitions=3, replication_factor=1)],
                timeout_ms=deadline.remaining_ms(),
            ),
            lambda r: 0,
            deadline,
        )
        assert [t.error_code for t in created.topics] == [0]
        await cluster.wait_for_topic(topic, timeout=30)

        tps = [TP(topic, p) for p in range(3)] + [TP(topic, 9)]
        sent: list[tuple[int, list[TP]]] = []

        async def send(node: int, batch: Sequence[TP]) -> dict[TP, int | E.KafkaError]:
            sent.append((node, sorted(batch)))
            _, resp = await router.send(
                node,
                LIST_OFFSETS,
                lambda v: ListOffsetsRequest(
                    replica_id=-1,
                    topics=[
                        ListOffsetsTopic(
                            name=topic,
                            partitions=[
                                ListOffsetsPartition(partition_index=tp.partition, timestamp=-1)
                                for tp in batch
                            ],
                        )
                    ],
                ),
                deadline,
            )
            return {
                TP(t.name, p.partition_index): error_or_none(p.error_code) or p.offset
                for t in resp.topics
                for p in t.partitions
            }

        got = await router.per_leader(
            tps,
            send,
            lambda r: error_code(r) if isinstance(r, E.KafkaError) else 0,
            deadline,
            lambda tp, e: e,
        )
        assert [got[TP(topic, p)] for p in range(3)] == [0, 0, 0]
        assert isinstance(got[TP(topic, 9)], E.UnknownTopicOrPartitionError)  # never sent
        leaders = {cluster.metadata.leader_for(TP(topic, p)) for p in range(3)}
        assert {node for node, _ in sent} == leaders
        # Each existing partition went to its leader (again, if the new leader was not
        # ready yet); the one the topic lacks never did.
        assert {tp for _, batch in sent for tp in batch} == set(tps[:3])

        async def metadata_of(node: int) -> int:
            _, resp = await router.send(node, METADATA, lambda v: MetadataRequest(), deadline)
            return len(resp.brokers)

        brokers = sorted(cluster.metadata.brokers)
        per_broker = await router.per_broker(
            None, metadata_of, lambda node, e: -1, lambda r: 0, deadline
        )
        assert sorted(per_broker) == brokers
        assert set(per_broker.values()) == {len(brokers)}
        missing = await router.per_broker(
            [12345], metadata_of, lambda n, e: -1, lambda r: 0, deadline
        )
        assert missing == {12345: -1}  # not in metadata: BrokerNotAvailableError, never sent
        assert router.requests["ListOffsets"] == len(sent)
        assert router.in_flight == 0


@pytest.mark.anyio
@pytest.mark.integration
async def test_per_leader_waits_for_a_topic_only_when_asked(kafka_broker: str) -> None:
    """The admin client's mode answers a missing topic at once; the consumer's
    (``wait_for_topics``) routes it again until it exists; ``once`` sends one round."""
    topic = f"routing-late-{uuid.uuid4().hex[:10]}"
    tps = [TP(topic, 0)]
    async with _client(kafka_broker) as cluster:
        router = Router(cluster, default_timeout_ms=30_000)

        async def send(node: int, batch: Sequence[TP]) -> dict[TP, str | E.KafkaError]:
            return dict.fromkeys(batch, f"sent to {node}")

        def code_of(r: str | E.KafkaError) -> int:
            return error_code(r) if isinstance(r, E.KafkaError) else 0

        got = await router.per_leader(tps, send, code_of, router.deadline(), lambda tp, e: e)
        assert isinstance(got[tps[0]], E.UnknownTopicOrPartitionError)
        once = await router.per_leader(
            tps, send, code_of, router.deadline(), lambda tp, e: e, wait_for_topics=True, once=True
        )
        assert isinstance(once[tps[0]], E.UnknownTopicOrPartitionError)

        async def create_later() -> None:
            await anyio.sleep(0.5)
            deadline = router.deadline()
            await router.to_controller(
                CREATE_TOPICS,
                lambda v: CreateTopicsRequest(
                    topics=[CreatableTopic(name=topic, num_partitions=1, replication_factor=1)],
                    timeout_ms=deadline.remaining_ms(),
                ),
                lambda r: 0,
                deadline,
            )

        async with anyio.create_task_group() as tg:
            tg.start_soon(create_later)
            waited = await router.per_leader(
                tps, send, code_of, router.deadline(), lambda tp, e: e, wait_for_topics=True
            )
        leader = cluster.metadata.leader_for(tps[0])
        assert waited == {tps[0]: f"sent to {leader}"}
        assert router.retries >= 1
