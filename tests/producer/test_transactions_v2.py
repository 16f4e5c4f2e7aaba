"""Transactions version 2 (KIP-890 part 2) against Apache Kafka 4.4.0, and version 1 beside it.

Where the cluster finalized ``transaction.version`` at 2 (4.4.0's default), a transactional
producer sends no AddPartitionsToTxn and no AddOffsetsToTxn: Produce v12 adds its partitions
and TxnOffsetCommit v5 adds the group, and every EndTxn v5 answers with a bumped epoch. With
the level set to 1 (UpdateFeatures, a safe downgrade) the producer keeps to the versions
before those (Produce 11, TxnOffsetCommit 4, EndTxn 4) and adds partitions and offsets
itself, as the Java client does. The tests count the requests per API our connections sent
(a tap on ``BrokerConnection.request``, which sees every request with its version).

The defects pinned here: the producer always added partitions and offsets with their own
round trips (so TV2 saved nothing), and on a cluster at ``transaction.version=1`` it still
sent EndTxn v5, which such a coordinator answers with a bumped epoch all the same.

The file starts its own Apache Kafka 4.4.0 (one node, small heap), whatever the run's broker.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from typing import Any, Literal

import anyio
import pytest

from kafka_async import Producer
from kafka_async.admin import AdminClient, FeatureUpdate, FeatureUpgradeType
from kafka_async.consumer import Consumer
from kafka_async.errors import InvalidProducerEpochError
from kafka_async.net.connection import BrokerConnection
from kafka_async.producer.transaction import TxnState
from kafka_async.structs import OffsetAndMetadata, TopicPartition
from kafka_async.testing.apache import ApacheKafka, KafkaPrerequisiteError, ensure_distribution
from kafka_async.testing.plugin import skip_or_fail
from kafka_async.testing.topics import create_topic

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

VERSION = "4.4.0"
FEATURE = "transaction.version"
PARTITIONS = 3
TXNS = 3


@pytest.fixture(scope="module")
def broker_44() -> Iterator[str]:
    """One Apache Kafka 4.4.0 node (transaction.version 2 unless a test lowers it)."""
    kafka = ApacheKafka(
        version=VERSION,
        heap="384m",
        # The coordinator looks for timed-out transactions twice a second (10 s by default).
        broker_config={"transaction.abort.timed.out.transaction.cleanup.interval.ms": "500"},
    )
    try:
        kafka.start()
    except KafkaPrerequisiteError as exc:
        skip_or_fail(f"Apache Kafka {VERSION} cannot run here: {exc}")
    try:
        yield kafka.bootstrap_servers
    finally:
        kafka.stop()


@pytest.fixture
def tap(monkeypatch: pytest.MonkeyPatch) -> Counter[tuple[str, int]]:
    """Every request our connections send, counted by (API name, version)."""
    sent: Counter[tuple[str, int]] = Counter()
    original = BrokerConnection.request

    async def request(self: BrokerConnection, api: Any, body: Any, **kw: Any) -> Any:
        sent[(api.name, kw.get("version") or -1)] += 1
        return await original(self, api, body, **kw)

    monkeypatch.setattr(BrokerConnection, "request", request)
    return sent


def by_api(sent: Counter[tuple[str, int]], name: str) -> dict[int, int]:
    return {v: n for (api, v), n in sent.items() if api == name}


async def transaction_version(bootstrap: str) -> int | None:
    async with AdminClient(bootstrap_servers=bootstrap) as admin:
        features = await admin.describe_features()
    level = features.finalized.get(FEATURE)
    return None if level is None else level.max_version_level


async def set_transaction_version(bootstrap: str, level: int) -> None:
    current = await transaction_version(bootstrap) or 0
    if current == level:
        return
    how = FeatureUpgradeType.UPGRADE if level > current else FeatureUpgradeType.SAFE_DOWNGRADE
    async with AdminClient(bootstrap_servers=bootstrap) as admin:
        await admin.update_features({FEATURE: FeatureUpdate(level, how)}, raise_on_error=True)
    for _ in range(200):  # 20 s
        if await transaction_version(bootstrap) == level:
            return
        await anyio.sleep(0.1)
    raise AssertionError(f"{FEATURE} did not reach {level}")


@pytest.fixture
async def tv1(broker_44: str) -> AsyncIterator[str]:
    """The broker at transaction.version=1 for one test, then back at 2."""
    await set_transaction_version(broker_44, 1)
    try:
        yield broker_44
    finally:
        await set_transaction_version(broker_44, 2)


async def read_values(
    bootstrap: str,
    topic: str,
    isolation_level: Literal["read_committed", "read_uncommitted"],
    expect: int,
    partitions: int = PARTITIONS,
) -> list[bytes]:
    """Every value of ``topic`` as a reader at ``isolation_level`` sees it: read until
    ``expect`` values arrived, then 1 s longer (nothing more may come)."""
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    out: list[bytes] = []
    consumer: Consumer[bytes, bytes] = Consumer(
        bootstrap_servers=bootstrap,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        isolation_level=isolation_level,
    )
    async with consumer:
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        with anyio.fail_after(30):
            while len(out) < expect:
                for records in (await consumer.getmany(timeout_ms=200)).values():
                    out.extend(r.value for r in records if r.value is not None)
        with anyio.move_on_after(1.0):
            while True:
                for records in (await consumer.getmany(timeout_ms=200)).values():
                    out.extend(r.value for r in records if r.value is not None)
    return out


async def run_transactions(
    bootstrap: str, topic: str, group: str, tap: Counter[tuple[str, int]]
) -> tuple[list[int], Any]:
    """TXNS transactions of PARTITIONS records each (one per partition) with the group's
    offsets; the second one aborted. Returns the producer epoch after each EndTxn, and the
    transaction state at the end. ``tap`` counts from the first transaction on (after
    InitProducerId and a warm-up transaction to another topic, which loads the coordinators
    of a fresh broker)."""
    epochs: list[int] = []
    async with Producer(
        bootstrap_servers=bootstrap, transactional_id=f"tv-{uuid.uuid4().hex[:8]}"
    ) as p:
        state = p.transaction_state
        assert state is not None
        async with p.transaction():
            await p.enqueue(f"{topic}-warm", b"w", partition=0)
            await p.send_offsets_to_transaction({TopicPartition(topic, 0): 0}, group)
        tap.clear()
        epochs.append(state.producer_epoch)
        for t in range(TXNS):
            p.begin_transaction()
            for part in range(PARTITIONS):
                await p.enqueue(topic, f"{t}-{part}".encode(), partition=part)
            await p.flush()  # every record is in the log before the commit or abort
            await p.send_offsets_to_transaction(
                {TopicPartition(topic, 0): OffsetAndMetadata(10 * (t + 1))}, group
            )
            if t == 1:
                await p.abort_transaction()
            else:
                await p.commit_transaction()
            epochs.append(state.producer_epoch)
        return epochs, state


def expected_values() -> list[bytes]:
    return sorted(
        f"{t}-{part}".encode() for t in range(TXNS) if t != 1 for part in range(PARTITIONS)
    )


async def committed_offset(bootstrap: str, group: str, topic: str) -> int | None:
    async with AdminClient(bootstrap_servers=bootstrap) as admin:
        offsets = await admin.list_consumer_group_offsets(group)
    om = offsets.get(TopicPartition(topic, 0))
    return None if om is None else om.offset


async def test_tv2_adds_partitions_and_offsets_without_round_trips(
    broker_44: str, tap: Counter[tuple[str, int]]
) -> None:
    if (level := await transaction_version(broker_44)) is None or level < 2:
        pytest.skip(f"the broker finalized {FEATURE}={level}, not 2 (ApiVersions)")
    topic = f"tv2-{uuid.uuid4().hex[:8]}"
    create_topic(broker_44, topic, PARTITIONS)
    create_topic(broker_44, f"{topic}-warm", 1)
    group = f"g-{topic}"
    epochs, state = await run_transactions(broker_44, topic, group, tap)
    print("TV2 requests:", sorted(tap.items()))
    # No AddPartitionsToTxn and no AddOffsetsToTxn: Produce v12 and TxnOffsetCommit v5 did it.
    assert by_api(tap, "AddPartitionsToTxn") == {}
    assert by_api(tap, "AddOffsetsToTxn") == {}
    assert set(by_api(tap, "Produce")) == {12}
    assert set(by_api(tap, "TxnOffsetCommit")) == {5}
    assert by_api(tap, "EndTxn") == {5: TXNS}
    assert state.tv2
    # Every EndTxn v5 bumped the epoch (the coordinator's answer is what the next one uses).
    assert epochs == [epochs[0] + i for i in range(TXNS + 1)]
    # Exactly once for a read_committed reader; the aborted records are in the log but
    # invisible to it.
    assert sorted(await read_values(broker_44, topic, "read_committed", 6)) == expected_values()
    assert len(await read_values(broker_44, topic, "read_uncommitted", 9)) == 9
    assert await committed_offset(broker_44, group, topic) == 10 * TXNS


async def test_tv1_keeps_its_round_trips_and_versions(
    tv1: str, tap: Counter[tuple[str, int]]
) -> None:
    topic = f"tv1-{uuid.uuid4().hex[:8]}"
    create_topic(tv1, topic, PARTITIONS)
    create_topic(tv1, f"{topic}-warm", 1)
    group = f"g-{topic}"
    epochs, state = await run_transactions(tv1, topic, group, tap)
    print("TV1 requests:", sorted(tap.items()))
    # At least one AddPartitionsToTxn per transaction (the first record's partition may go
    # alone, the sender adds partitions as soon as their first record is there, as the Java
    # client's does) and one AddOffsetsToTxn per transaction.
    assert set(by_api(tap, "AddPartitionsToTxn")) == {3}
    assert sum(by_api(tap, "AddPartitionsToTxn").values()) >= TXNS
    assert by_api(tap, "AddOffsetsToTxn") == {4: TXNS}
    assert set(by_api(tap, "Produce")) == {11}
    assert set(by_api(tap, "TxnOffsetCommit")) == {4}
    assert by_api(tap, "EndTxn") == {4: TXNS}
    assert not state.tv2
    # Version 1: the epoch stays for the producer's life.
    assert epochs == [epochs[0]] * (TXNS + 1)
    assert sorted(await read_values(tv1, topic, "read_committed", 6)) == expected_values()
    assert await committed_offset(tv1, group, topic) == 10 * TXNS


async def test_tv2_abort_before_any_record_was_sent(broker_44: str) -> None:
    """Records appended but never sent (a long linger), then aborted: under TV2 the
    partitions count as in the transaction from the append, so the abort's EndTxn reaches a
    coordinator that never heard of the transaction; it must take it, and the producer goes
    on with a new epoch."""
    if (level := await transaction_version(broker_44)) is None or level < 2:
        pytest.skip(f"the broker finalized {FEATURE}={level}, not 2 (ApiVersions)")
    topic = f"tv2a-{uuid.uuid4().hex[:8]}"
    create_topic(broker_44, topic, PARTITIONS)
    async with Producer(
        bootstrap_servers=broker_44,
        transactional_id=f"tv-{uuid.uuid4().hex[:8]}",
        linger_ms=60_000,
    ) as p:
        state = p.transaction_state
        assert state is not None
        p.begin_transaction()
        await p.enqueue(topic, b"never", partition=0)
        await p.abort_transaction()
        p.begin_transaction()
        await p.enqueue(topic, b"kept", partition=1)
        await p.commit_transaction()
        assert not state.is_fatal
    assert await read_values(broker_44, topic, "read_uncommitted", 1) == [b"kept"]


async def test_tv2_transaction_aborted_by_the_coordinator_is_abortable(broker_44: str) -> None:
    """A transaction left open past ``transaction_timeout_ms``: the coordinator aborts it and
    bumps the epoch, so the producer's next Produce is answered INVALID_PRODUCER_EPOCH. As in
    the Java client that leaves the transaction abortable (it was fatal), the abort is
    taken, and the producer carries on with the epoch the coordinator gave it."""
    if (level := await transaction_version(broker_44)) is None or level < 2:
        pytest.skip(f"the broker finalized {FEATURE}={level}, not 2 (ApiVersions)")
    topic = f"tv2t-{uuid.uuid4().hex[:8]}"
    create_topic(broker_44, topic, 1)
    tid = f"tv-{uuid.uuid4().hex[:8]}"
    async with Producer(
        bootstrap_servers=broker_44, transactional_id=tid, transaction_timeout_ms=1000
    ) as p:
        state = p.transaction_state
        assert state is not None
        p.begin_transaction()
        await p.send(topic, b"timed-out", partition=0)
        async with AdminClient(bootstrap_servers=broker_44) as admin:
            for _ in range(100):  # 10 s
                desc = (await admin.describe_transactions([tid], raise_on_error=True))[tid]
                if desc.state == "CompleteAbort":
                    break
                await anyio.sleep(0.1)
            else:
                raise AssertionError(f"the coordinator did not abort the transaction: {desc}")
        with pytest.raises(InvalidProducerEpochError):
            await p.send(topic, b"late", partition=0)
        assert state.state is TxnState.ABORTABLE_ERROR
        await p.abort_transaction()
        async with p.transaction():
            await p.send(topic, b"after", partition=0)
        assert not state.is_fatal
    assert await read_values(broker_44, topic, "read_committed", 1, partitions=1) == [b"after"]


@pytest.mark.slow  # ~35 s (a JVM and both sides' transactions): `pytest -m slow` runs it
async def test_tv2_beside_the_java_client(broker_44: str) -> None:
    """Our transactions and the Java client's (TransactionalMessageCopier: one transaction
    per 20 records with the consumed offsets, a third aborted at random) at the same time on
    the same coordinator and output topic: a read_committed reader sees each side's
    committed records exactly once, in order, and nothing of the aborted ones."""
    if (level := await transaction_version(broker_44)) is None or level < 2:
        pytest.skip(f"the broker finalized {FEATURE}={level}, not 2 (ApiVersions)")
    from tests.harness.java_peers import transactional_copy

    run = uuid.uuid4().hex[:8]
    source, sink = f"tv2j-in-{run}", f"tv2j-out-{run}"
    create_topic(broker_44, source, 1)
    create_topic(broker_44, sink, 2)
    inputs = [f"java-{i}".encode() for i in range(120)]
    async with Producer(bootstrap_servers=broker_44) as plain:
        for value in inputs:
            await plain.enqueue(source, value, partition=0)
    ours: list[bytes] = []

    async def our_side() -> None:
        async with Producer(bootstrap_servers=broker_44, transactional_id=f"ours-{run}") as p:
            for t in range(12):
                p.begin_transaction()
                values = [f"ours-{t}-{i}".encode() for i in range(5)]
                for value in values:
                    await p.enqueue(sink, value, partition=1)
                if t % 3 == 1:
                    await p.abort_transaction()
                else:
                    await p.commit_transaction()
                    ours.extend(values)

    async with anyio.create_task_group() as tg:
        tg.start_soon(our_side)
        await transactional_copy(
            ensure_distribution(VERSION),
            broker_44,
            input_topic=source,
            input_partition=0,
            output_topic=sink,
            transactional_id=f"java-{run}",
            group_id=f"java-{run}",
            transaction_size=20,
            random_aborts=True,
            timeout=60,
        )
    seen: dict[int, list[bytes]] = {0: [], 1: []}
    consumer: Consumer[bytes, bytes] = Consumer(
        bootstrap_servers=broker_44,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        isolation_level="read_committed",
    )
    tps = [TopicPartition(sink, 0), TopicPartition(sink, 1)]
    async with consumer:
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        with anyio.fail_after(30):
            while len(seen[0]) < len(inputs) or len(seen[1]) < len(ours):
                for tp, records in (await consumer.getmany(timeout_ms=200)).items():
                    seen[tp.partition].extend(r.value for r in records if r.value is not None)
    assert seen[0] == inputs
    assert seen[1] == ours
