"""The admin surface of Kafka 4.x against a real broker (the run's: Apache Kafka or Tansu).

Client quotas, log dirs, features, the metadata quorum, paged topic descriptions,
transactions (list, describe, abort a hanging one), producers, fencing, share groups and
their offsets, and leader election of both kinds. Each test names the APIs it needs with
``requires_api``, so a broker that does not advertise one (Tansu lacks most of these) skips
the test quoting what it advertises; on Apache Kafka 4.1 every one runs.

Changes that Kafka applies through the metadata log (quotas, features, deleted groups) reach
the broker we ask asynchronously: the tests poll for them with a deadline.
"""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest

from kafka_async.admin import (
    AbortTransactionSpec,
    AdminClient,
    ClientQuotaAlteration,
    ClientQuotaEntity,
    ClientQuotaFilter,
    ElectionType,
    FeatureUpdate,
    FeatureUpgradeType,
    IsolationLevel,
    OffsetSpec,
)
from kafka_async.admin.cluster_ops import topic_partitions_request
from kafka_async.errors import (
    BrokerNotAvailableError,
    ConfigError,
    ElectionNotNeededError,
    GroupIdNotFoundError,
    IncompatibleBrokerVersionError,
    InvalidRequestError,
    InvalidUpdateVersionError,
    KafkaError,
    NonEmptyGroupError,
    TransactionalIdNotFoundError,
    UnknownTopicOrPartitionError,
)
from kafka_async.protocol.apis import DESCRIBE_TOPIC_PARTITIONS, LIST_TRANSACTIONS
from kafka_async.structs import TopicPartition
from kafka_async.testing.apache import ApacheKafka
from kafka_async.testing.plugin import KafkaService
from tests.harness.admin_scenes import (
    HANGING_TRANSACTION_TIMEOUT_MS,
    ShareGroupMember,
    open_hanging_transaction,
)

TP = TopicPartition
T = TypeVar("T")
pytestmark = [pytest.mark.integration, pytest.mark.anyio]
PROPAGATION_S = 20.0
COMMITTED = IsolationLevel.READ_COMMITTED


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


async def _eventually(
    check: Callable[[], Awaitable[T]], accept: Callable[[T], bool], what: str
) -> T:
    """Ask ``check`` until ``accept`` likes its answer, for at most PROPAGATION_S seconds."""
    last: Any = None
    with anyio.move_on_after(PROPAGATION_S):
        while True:
            try:
                last = await check()
            except KafkaError as exc:  # e.g. a coordinator still loading: ask again
                last = exc
            else:
                if accept(last):
                    return last  # type: ignore[no-any-return]
            await anyio.sleep(0.2)
    pytest.fail(f"{what} not seen within {PROPAGATION_S} s; last answer: {last!r}")


def _produce(bootstrap: str, topic: str, partition: int, count: int) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for i in range(count):
        producer.produce(topic, value=b"v%d" % i, partition=partition)
    assert producer.flush(10) == 0


@pytest.fixture
async def admin(kafka_broker: str) -> AsyncIterator[AdminClient]:
    async with AdminClient(kafka_broker, default_api_timeout_ms=15_000) as client:
        yield client


# -- client quotas -----------------------------------------------------------------------------


@pytest.mark.requires_api("DescribeClientQuotas", min_version=0)
@pytest.mark.requires_api("AlterClientQuotas", min_version=0)
async def test_client_quotas_set_described_and_removed(admin: AdminClient) -> None:
    user = _name("quota-user")
    entity = ClientQuotaEntity.of(user=user, client_id="app")
    only_user = [ClientQuotaFilter.exact("user", user)]

    async def described() -> dict[ClientQuotaEntity, dict[str, float]]:
        return await admin.describe_client_quotas(only_user)

    # A dry run changes nothing.
    dry = await admin.alter_client_quotas(
        [ClientQuotaAlteration(entity, {"producer_byte_rate": 1024.0})], validate_only=True
    )
    assert dry.ok, dry.errors
    assert await described() == {}

    done = await admin.alter_client_quotas(
        [
            ClientQuotaAlteration(
                entity, {"producer_byte_rate": 1024.0, "consumer_byte_rate": 2048}
            ),
            ClientQuotaAlteration(ClientQuotaEntity.of(user=user), {"request_percentage": 50.0}),
        ]
    )
    assert done.ok, done.errors
    want = {
        entity: {"producer_byte_rate": 1024.0, "consumer_byte_rate": 2048.0},
        ClientQuotaEntity.of(user=user): {"request_percentage": 50.0},
    }
    await _eventually(described, lambda got: got == want, "the quotas just set")
    # strict: only entities made of the filtered types (the user alone, not user+client-id).
    strict = await admin.describe_client_quotas(only_user, strict=True)
    assert strict == {ClientQuotaEntity.of(user=user): {"request_percentage": 50.0}}

    removed = await admin.alter_client_quotas(
        [ClientQuotaAlteration(entity, {"consumer_byte_rate": None})]
    )
    assert removed.ok
    want[entity] = {"producer_byte_rate": 1024.0}
    await _eventually(described, lambda got: got == want, "the quota removal")

    # A quota name Kafka does not know is that entity's error, not the call's.
    bad = await admin.alter_client_quotas(
        [ClientQuotaAlteration(ClientQuotaEntity.of(user=user), {"no_such_quota": 1.0})]
    )
    assert isinstance(bad[ClientQuotaEntity.of(user=user)].error, InvalidRequestError)
    await admin.alter_client_quotas(
        [
            ClientQuotaAlteration(entity, {"producer_byte_rate": None}),
            ClientQuotaAlteration(ClientQuotaEntity.of(user=user), {"request_percentage": None}),
        ],
        raise_on_error=True,
    )
    await _eventually(described, lambda got: got == {}, "every quota removed")


async def test_client_quota_inputs_are_checked_before_sending(admin: AdminClient) -> None:
    entity = ClientQuotaEntity.of(user="u")
    with pytest.raises(ConfigError, match="twice"):
        await admin.alter_client_quotas(
            [ClientQuotaAlteration(entity, {"a": 1.0}), ClientQuotaAlteration(entity, {"b": 1.0})]
        )
    with pytest.raises(ConfigError, match="number"):
        await admin.alter_client_quotas([ClientQuotaAlteration(entity, {"a": "1"})])  # type: ignore[dict-item]
    with pytest.raises(ConfigError, match="at least one component"):
        ClientQuotaEntity(())
    with pytest.raises(ConfigError, match="non-empty name"):
        ClientQuotaFilter.exact("user", "")


# -- log dirs ----------------------------------------------------------------------------------


@pytest.mark.requires_api("DescribeLogDirs", min_version=1)
async def test_describe_log_dirs_shows_the_replicas_and_their_size(
    admin: AdminClient, kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(2)
    _produce(kafka_broker, topic, 0, 20)
    cluster = await admin.describe_cluster()
    brokers = [b.node_id for b in cluster.brokers]
    got = await admin.describe_log_dirs()
    assert sorted(got) == sorted(brokers)
    assert got.ok, got.errors
    replicas = {
        tp: info
        for b in got.values()
        for d in b.log_dirs.values()
        for tp, info in d.replicas.items()
        if tp.topic == topic
    }
    assert set(replicas) == {TP(topic, 0), TP(topic, 1)}
    assert replicas[TP(topic, 0)].size > 0
    assert replicas[TP(topic, 1)].size == 0
    assert not replicas[TP(topic, 0)].is_future

    # Only some partitions, of one broker; an unknown broker is its own item error.
    some = await admin.describe_log_dirs([brokers[0], 9999], [TP(topic, 1)])
    assert isinstance(some[9999].error, BrokerNotAvailableError)
    asked = {
        tp for d in some[brokers[0]].log_dirs.values() for tp in d.replicas if tp.topic == topic
    }
    assert asked <= {TP(topic, 1)}


# -- features ----------------------------------------------------------------------------------


@pytest.mark.requires_api("ApiVersions", min_version=3)
async def test_describe_features_reports_finalized_and_supported_levels(
    admin: AdminClient,
) -> None:
    features = await admin.describe_features()
    for name, level in features.finalized.items():
        supported = features.supported.get(name)
        assert supported is not None, f"{name} finalized but not supported"
        assert supported.min_version <= level.max_version_level <= supported.max_version
    if "metadata.version" in features.supported:
        assert "metadata.version" in features.finalized
        assert features.finalized_epoch >= 0


@pytest.mark.requires_api("UpdateFeatures", min_version=1)
async def test_update_features_dry_run_and_refusal(admin: AdminClient) -> None:
    features = await admin.describe_features()
    name = "metadata.version"
    if name not in features.supported:
        # A ZooKeeper-mode broker (3.x) advertises UpdateFeatures but has no such feature.
        pytest.skip(
            f"the broker supports no {name} feature (supported: {sorted(features.supported)}, "
            f"finalized: {sorted(features.finalized)}): a ZooKeeper-mode broker"
        )
    current = features.finalized[name].max_version_level
    top = features.supported[name].max_version
    # A dry run of keeping the current level succeeds and changes nothing.
    dry = await admin.update_features({name: current}, validate_only=True)
    assert dry.ok, dry.errors
    # A level beyond what the broker supports is refused (dry run or not).
    refused = await admin.update_features({name: top + 1}, validate_only=True)
    assert isinstance(refused[name].error, InvalidUpdateVersionError), refused
    # A downgrade requested as an upgrade is refused too.
    if current > features.supported[name].min_version:
        down = await admin.update_features({name: current - 1}, validate_only=True)
        assert down[name].error is not None
    # Setting a feature to its current level for real is accepted, and nothing moves.
    same = await admin.update_features({name: FeatureUpdate(current, FeatureUpgradeType.UPGRADE)})
    assert same.ok, same.errors
    after = await admin.describe_features()
    assert after.finalized[name].max_version_level == current
    with pytest.raises(ConfigError):
        await admin.update_features({})
    with pytest.raises(ConfigError):
        FeatureUpdate(-1)


# -- the metadata quorum -----------------------------------------------------------------------


@pytest.mark.requires_api("DescribeQuorum", min_version=0)
async def test_describe_metadata_quorum(admin: AdminClient) -> None:
    quorum = await admin.describe_metadata_quorum()
    voters = {v.replica_id for v in quorum.voters}
    assert quorum.leader_id in voters
    assert quorum.leader_epoch >= 0
    assert quorum.high_watermark > 0
    leader = next(v for v in quorum.voters if v.replica_id == quorum.leader_id)
    assert leader.log_end_offset >= quorum.high_watermark
    if quorum.nodes:  # DescribeQuorum v2 (Kafka 3.9+): the voters' controller endpoints
        assert quorum.leader_id in quorum.nodes
        host, port = next(iter(quorum.nodes[quorum.leader_id].endpoints.values()))
        assert host
        assert port > 0


# -- paged topic description -------------------------------------------------------------------


@pytest.mark.requires_api("DescribeTopicPartitions", min_version=0)
async def test_describe_topic_partitions_follows_the_cursor(
    admin: AdminClient, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(5)
    other = new_topic(1)
    # The broker's own answer to one page limited to two partitions, before our paging runs.
    _, page = await admin.router.send(
        None,
        DESCRIBE_TOPIC_PARTITIONS,
        lambda v: topic_partitions_request([topic, other], 2, None),
        admin.router.deadline(10_000),
    )
    sent = sum(len(t.partitions) for t in page.topics)
    if sent > 2:
        pytest.skip(
            f"the broker ignores DescribeTopicPartitions' response_partition_limit: asked for "
            f"at most 2 partitions, it returned {sent} in one response (next_cursor "
            f"{page.next_cursor}); Kafka sends at most the limit and a cursor to the rest"
        )
    before = admin.statistics()["requests"].get("DescribeTopicPartitions", 0)
    got = await admin.describe_topic_partitions([topic, other], partition_limit=2)
    pages = admin.statistics()["requests"]["DescribeTopicPartitions"] - before
    # 6 partitions, 2 per page: three responses, the topic split across them joined again.
    assert pages == 3
    assert [p.partition for p in got[topic].partitions] == [0, 1, 2, 3, 4]
    assert [p.partition for p in got[other].partitions] == [0]
    metadata = await admin.describe_topics([topic])
    for paged, plain in zip(got[topic].partitions, metadata[topic].partitions, strict=True):
        assert (paged.leader, paged.replicas, paged.isr) == (
            plain.leader,
            plain.replicas,
            plain.isr,
        )
        assert paged.eligible_leader_replicas is not None  # KIP-966 reports it
    assert got[topic].topic_id == metadata[topic].topic_id

    missing = _name("missing")
    absent = await admin.describe_topic_partitions([missing])
    assert isinstance(absent[missing].error, UnknownTopicOrPartitionError)
    everything = await admin.describe_topic_partitions(partition_limit=3)
    assert {topic, other} <= set(everything)
    assert len(everything[topic].partitions) == 5


# -- transactions and producers ----------------------------------------------------------------


@pytest.mark.requires_api("ListTransactions", min_version=0)
@pytest.mark.requires_api("DescribeTransactions", min_version=0)
@pytest.mark.requires_api("DescribeProducers", min_version=0)
@pytest.mark.requires_api("WriteTxnMarkers", min_version=0)
async def test_hanging_transaction_found_described_and_aborted(
    admin: AdminClient,
    kafka_broker: str,
    kafka_service: KafkaService,
    new_topic: Callable[..., str],
) -> None:
    topic = new_topic(1)
    tp = TP(topic, 0)
    _produce(kafka_broker, topic, 0, 3)  # offsets 0-2, outside any transaction
    txn = _name("hanging")
    await anyio.to_thread.run_sync(open_hanging_transaction, kafka_broker, topic, txn)

    listed = await admin.list_transactions(states=["Ongoing"])
    mine = [t for t in listed if t.transactional_id == txn]
    assert len(mine) == 1, listed
    assert mine[0].state == "Ongoing"
    # The pattern filter needs ListTransactions v2 (Kafka 4.1+); older brokers (3.6.2 speaks
    # v0) get the typed error instead (found by make compat).
    if kafka_service.apis().get(LIST_TRANSACTIONS.key, (0, 0))[1] >= 2:
        by_pattern = await admin.list_transactions(transactional_id_pattern=f"^{txn}$")
        assert [t.transactional_id for t in by_pattern] == [txn]
    else:
        with pytest.raises(IncompatibleBrokerVersionError, match="pattern"):
            await admin.list_transactions(transactional_id_pattern=f"^{txn}$")

    described = await admin.describe_transactions([txn, _name("never")])
    d = described[txn]
    assert d.error is None
    assert d.state == "Ongoing"
    assert d.partitions == (tp,)
    assert d.producer_id == mine[0].producer_id
    assert d.start_time_ms > 0
    assert d.timeout_ms == HANGING_TRANSACTION_TIMEOUT_MS
    assert isinstance(
        next(r for k, r in described.items() if k != txn).error, TransactionalIdNotFoundError
    )

    producers = await admin.describe_producers([tp])
    states = [p for p in producers[tp].producers if p.producer_id == d.producer_id]
    assert len(states) == 1
    hanging = states[0]
    assert hanging.current_transaction_start_offset == 3
    assert hanging.producer_epoch == d.producer_epoch
    # The open transaction holds the last stable offset at its first record.
    lso = await admin.list_offsets({tp: OffsetSpec.latest()}, isolation_level=COMMITTED)
    assert lso[tp].offset == 3

    await admin.abort_transaction(AbortTransactionSpec.of(tp, hanging))

    async def open_txn() -> int:
        got = await admin.describe_producers([tp])
        return next(
            p.current_transaction_start_offset
            for p in got[tp].producers
            if p.producer_id == d.producer_id
        )

    await _eventually(open_txn, lambda start: start == -1, "the transaction aborted")
    # Records 3-7 and the abort marker: the stable offset is the end of the log again.
    after = await admin.list_offsets({tp: OffsetSpec.latest()}, isolation_level=COMMITTED)
    assert after[tp].offset == 9

    # A partition that does not exist is a typed error, not a hang.
    with pytest.raises(UnknownTopicOrPartitionError):
        await admin.abort_transaction(AbortTransactionSpec(TP(topic, 7), hanging.producer_id, 0, 0))


@pytest.mark.requires_api("InitProducerId", min_version=0)
@pytest.mark.requires_api("DescribeTransactions", min_version=0)
async def test_fence_producers_fences_the_running_producer(
    admin: AdminClient, kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    from confluent_kafka import KafkaException, Producer

    topic = new_topic(1)
    txn = _name("fenced")
    producer = Producer(
        {"bootstrap.servers": kafka_broker, "transactional.id": txn, "linger.ms": 0}
    )
    await anyio.to_thread.run_sync(producer.init_transactions, 30)
    producer.begin_transaction()
    producer.produce(topic, value=b"x")
    assert await anyio.to_thread.run_sync(producer.flush, 30) == 0
    before = (await admin.describe_transactions([txn], raise_on_error=True))[txn]

    fenced = await admin.fence_producers([txn], raise_on_error=True)
    assert fenced[txn].producer_id == before.producer_id
    assert fenced[txn].producer_epoch > before.producer_epoch

    with pytest.raises(KafkaException) as info:
        await anyio.to_thread.run_sync(producer.commit_transaction, 30)
    assert info.value.args[0].fatal(), info.value  # fenced: the producer cannot go on
    after = (await admin.describe_transactions([txn], raise_on_error=True))[txn]
    assert after.producer_epoch >= fenced[txn].producer_epoch
    assert after.state in ("PrepareAbort", "CompleteAbort", "Empty")


# -- share groups --------------------------------------------------------------------------------


@pytest.mark.requires_api("ShareGroupHeartbeat", min_version=1)
@pytest.mark.requires_api("ShareGroupDescribe", min_version=1)
@pytest.mark.requires_api("ListGroups", min_version=5)
@pytest.mark.requires_api("DeleteGroups", min_version=0)
async def test_share_group_listed_described_and_deleted(
    admin: AdminClient, kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(2)
    group = _name("share")
    member = ShareGroupMember(kafka_broker, group, topic)
    try:
        await member.join(2)
        listed = await admin.list_share_groups()
        assert group in [g.group_id for g in listed]
        assert {g.type for g in listed} == {"share"}

        desc = (await admin.describe_share_groups([group], raise_on_error=True))[group]
        assert desc.state == "Stable"
        assert [m.member_id for m in desc.members] == [member.member_id]
        assert desc.members[0].subscribed_topics == (topic,)
        assert set(desc.members[0].assignment) == {TP(topic, 0), TP(topic, 1)}
        assert desc.members[0].member_epoch == member.epoch
        assert desc.coordinator == member.coordinator
        assert desc.assignment_epoch <= desc.group_epoch
        assert desc.assignor  # the broker's share assignor
        # Members left: the group cannot be deleted.
        busy = await admin.delete_share_groups([group])
        assert isinstance(busy[group].error, NonEmptyGroupError)
    finally:
        await member.leave()

    async def described() -> Any:
        return (await admin.describe_share_groups([group], raise_on_error=True))[group]

    await _eventually(described, lambda d: d.state == "Empty", "the group empty")
    deleted = await admin.delete_share_groups([group])
    assert deleted.ok, deleted.errors
    gone = await admin.describe_share_groups([group])
    assert isinstance(gone[group].error, GroupIdNotFoundError)
    assert group not in [g.group_id for g in await admin.list_share_groups()]


def _java_alter_share_offsets(
    kafka: ApacheKafka, group: str, tp: TopicPartition, offset: int
) -> str:
    """What the Java admin client's alterShareGroupOffsets gets from the same broker."""
    dist = kafka.distribution
    assert dist is not None
    source = Path(__file__).parent / "java" / "AlterShareGroupOffsets.java"
    argv = [str(source), kafka.bootstrap_servers, group, tp.topic, str(tp.partition), str(offset)]
    out = subprocess.run(
        dist.java_command(*argv), capture_output=True, text=True, timeout=120, check=False
    )
    return (out.stdout.strip() or out.stderr.strip()[-500:]).splitlines()[-1]


@pytest.mark.requires_api("ShareGroupHeartbeat", min_version=1)
@pytest.mark.requires_api("DescribeShareGroupOffsets", min_version=0)
@pytest.mark.requires_api("AlterShareGroupOffsets", min_version=0)
@pytest.mark.requires_api("DeleteShareGroupOffsets", min_version=0)
async def test_share_group_offsets_listed_deleted_and_altered(
    admin: AdminClient,
    kafka_broker: str,
    kafka_service: KafkaService,
    new_topic: Callable[..., str],
) -> None:
    topic = new_topic(2)
    _produce(kafka_broker, topic, 0, 10)
    group = _name("share-offsets")
    member = ShareGroupMember(kafka_broker, group, topic)
    try:
        await member.join(2)
        # Once assigned, both share-partitions have state (start offset -1 until a first
        # fetch); one partition asked for, one answered.
        offsets = await _eventually(
            lambda: admin.list_share_group_offsets(group),
            lambda got: set(got) == {TP(topic, 0), TP(topic, 1)},
            "the assigned share-partitions",
        )
        assert offsets.ok, offsets.errors
        one = await admin.list_share_group_offsets(group, [TP(topic, 1)])
        assert list(one) == [TP(topic, 1)]
        # Kafka refuses to move the offsets of a group with members; a broker that does
        # not implement the alteration at all (below) answers without attempting it.
        try:
            busy = await admin.alter_share_group_offsets(group, {TP(topic, 0): 1})
        except NonEmptyGroupError:
            pass
        else:
            assert not busy.ok, busy
    finally:
        await member.leave()

    async def state() -> Any:
        return (await admin.describe_share_groups([group], raise_on_error=True))[group]

    await _eventually(state, lambda d: d.state == "Empty", "the group empty")
    deleted = await admin.delete_share_group_offsets(group, [topic])
    assert deleted.ok, deleted.errors
    await _eventually(
        lambda: admin.list_share_group_offsets(group), lambda got: not got, "the state deleted"
    )

    altered = await admin.alter_share_group_offsets(group, {TP(topic, 0): 4, TP(topic, 1): 0})
    not_attempted = [
        r for r in altered.values() if r.error is not None and "no result" in str(r.error)
    ]
    if not_attempted and kafka_service.kind == "apache":
        java = await anyio.to_thread.run_sync(
            _java_alter_share_offsets, kafka_service.apache, group, TP(topic, 0), 4
        )
        if "not attempted" in java:
            pytest.skip(
                f"Apache Kafka {kafka_service.version} answers AlterShareGroupOffsets without "
                f"attempting it (ours: {not_attempted[0].error}; the Java admin client: {java})"
            )
    assert altered.ok, altered.errors
    got = await _eventually(
        lambda: admin.list_share_group_offsets(group),
        lambda got: TP(topic, 0) in got and got[TP(topic, 0)].start_offset == 4,
        "the altered start offset",
    )
    assert got[TP(topic, 1)].start_offset == 0


# -- leader election ---------------------------------------------------------------------------


@pytest.mark.requires_api("ElectLeaders", min_version=1)
async def test_elect_leaders_preferred_and_unclean_when_the_leader_is_in_place(
    admin: AdminClient, new_topic: Callable[..., str]
) -> None:
    """On a healthy partition neither election has anything to do: Kafka answers
    ELECTION_NOT_NEEDED for both kinds (the failover tests elect for real on 3 nodes)."""
    topic = new_topic(1)
    for kind in (ElectionType.PREFERRED, ElectionType.UNCLEAN):
        got = await admin.elect_leaders([TP(topic, 0)], election_type=kind)
        assert isinstance(got[TP(topic, 0)].error, ElectionNotNeededError), (kind, got)


# -- a broker without the API --------------------------------------------------------------


async def test_calls_the_broker_does_not_advertise_raise_a_typed_error(
    admin: AdminClient, kafka_service: KafkaService, new_topic: Callable[..., str]
) -> None:
    """Every call whose API the broker does not advertise raises
    IncompatibleBrokerVersionError naming the API, before sending anything."""
    topic = new_topic(1)
    tp = TP(topic, 0)
    entity = ClientQuotaEntity.of(user="u")
    calls: dict[str, Callable[[], Awaitable[object]]] = {
        "DescribeClientQuotas": lambda: admin.describe_client_quotas(),
        "AlterClientQuotas": lambda: admin.alter_client_quotas(
            [ClientQuotaAlteration(entity, {"producer_byte_rate": 1.0})]
        ),
        "DescribeLogDirs": lambda: admin.describe_log_dirs(),
        "UpdateFeatures": lambda: admin.update_features({"x": 1}),
        "DescribeQuorum": lambda: admin.describe_metadata_quorum(),
        "DescribeTopicPartitions": lambda: admin.describe_topic_partitions([topic]),
        "ListTransactions": lambda: admin.list_transactions(),
        "DescribeTransactions": lambda: admin.describe_transactions(["t"]),
        "DescribeProducers": lambda: admin.describe_producers([tp]),
        "WriteTxnMarkers": lambda: admin.abort_transaction(AbortTransactionSpec(tp, 1, 0, 0)),
        "ShareGroupDescribe": lambda: admin.describe_share_groups(["g"]),
        "DescribeShareGroupOffsets": lambda: admin.list_share_group_offsets("g"),
        "AlterShareGroupOffsets": lambda: admin.alter_share_group_offsets("g", {tp: 0}),
        "DeleteShareGroupOffsets": lambda: admin.delete_share_group_offsets("g", [topic]),
    }
    missing = [api for api in calls if not kafka_service.supports(api)]
    if not missing:
        pytest.skip(f"{kafka_service.kind} {kafka_service.version} advertises every one of them")
    for api in missing:
        with pytest.raises(IncompatibleBrokerVersionError, match=api):
            await calls[api]()
