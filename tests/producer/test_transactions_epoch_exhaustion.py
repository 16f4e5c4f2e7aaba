"""Transactions version 2 across producer-epoch exhaustion (KIP-890 part 2), a soak test.

Where the cluster finalized ``transaction.version`` at 2, every EndTxn v5 bumps the producer
epoch and answers with the id and epoch the next transaction uses. Once the epoch is
exhausted (the transaction ran at ``Short.MAX_VALUE - 1`` = 32766) the coordinator hands
out a new producer id with epoch 0 in the EndTxn answer, and the producer must take it as
the Java client does (``TransactionManager``: new id and epoch, sequences reset).

One transactional producer runs about 32,800 small transactions on the run's broker (one
record each, three records, one per partition, in the transactions around the switch), then
a ``read_committed`` consumer reads the topic back against a ledger: every record exactly
once, in send order per partition. The (producer id, epoch) after every commit must bump by
one under one id, change id exactly once, at the exhausted epoch, and start the new id at 0.

About 4-10 ms a transaction on a 2-core machine: 2-6 minutes. Marked ``slow``: ``make
soak`` runs it (tests/harness/soak.py lists this file), CI's broker tier does not.
"""

from __future__ import annotations

import time
import uuid

import anyio
import pytest

from kafka_async import Consumer, Producer
from kafka_async.admin import AdminClient
from kafka_async.structs import TopicPartition
from kafka_async.testing.plugin import KafkaService
from kafka_async.testing.topics import create_topic
from tests.harness.soak import record_result

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.anyio]

FEATURE = "transaction.version"
PARTITIONS = 3
#: Short.MAX_VALUE - 1: a transaction at this epoch exhausts it (Kafka's
#: ``TransactionMetadata.isProducerEpochExhausted``), its EndTxn hands out a new id.
EXHAUSTED_EPOCH = 32766
#: A new producer id starts at epoch 0 (InitProducerId does too, for a new transactional id).
#: So the switch comes with the 32,767th EndTxn; the test stops TAIL transactions after it,
#: and fails if it has not come by MAX_TRANSACTIONS.
TAIL = 300
MAX_TRANSACTIONS = EXHAUSTED_EPOCH + 1 + 1000
#: Transactions on each side of the switch that write one record to every partition.
WIDE = 100
#: Bounds the whole run (~33,000 transactions at 4-10 ms, the read-back, a loaded machine).
DEADLINE_S = 1500.0


def value(txn: int, partition: int, seq: int) -> bytes:
    return f"{txn}|{partition}|{seq}".encode()


async def evidence_against_tv2(service: KafkaService) -> str | None:
    """Why the broker cannot run this test (from what it advertises), or None."""
    end_txn = service.apis().get(26)  # EndTxn
    if end_txn is None or end_txn[1] < 5:
        return f"the broker advertises EndTxn {end_txn} (min, max); epoch bumps need v5"
    async with AdminClient(bootstrap_servers=service.bootstrap_servers) as admin:
        features = await admin.describe_features()
    finalized = {name: f.max_version_level for name, f in features.finalized.items()}
    level = finalized.get(FEATURE)
    if level is None or level < 2:
        return (
            f"the broker's ApiVersions finalized features are {finalized}: {FEATURE} is not "
            "finalized at 2 or above, so EndTxn does not bump the epoch"
        )
    return None


async def read_committed(
    bootstrap: str, topic: str, expect: int, deadline_s: float
) -> dict[int, list[bytes]]:
    """Every value per partition a read_committed reader sees: until ``expect`` values came,
    then 2 s longer (nothing more may come)."""
    tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    out: dict[int, list[bytes]] = {p: [] for p in range(PARTITIONS)}
    consumer: Consumer[bytes, bytes] = Consumer(
        bootstrap_servers=bootstrap,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        isolation_level="read_committed",
    )

    def count() -> int:
        return sum(len(v) for v in out.values())

    async def poll() -> None:
        for tp, records in (await consumer.getmany(timeout_ms=200)).items():
            out[tp.partition].extend(r.value for r in records if r.value is not None)

    async with consumer:
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        with anyio.fail_after(deadline_s):
            while count() < expect:
                await poll()
        with anyio.move_on_after(2.0):
            while True:
                await poll()
    return out


@pytest.mark.timeout(DEADLINE_S + 300)
async def test_tv2_producer_crosses_epoch_exhaustion(kafka_service: KafkaService) -> None:
    if (why := await evidence_against_tv2(kafka_service)) is not None:
        pytest.skip(why)
    bootstrap = kafka_service.bootstrap_servers
    topic = f"epx-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, PARTITIONS)

    # history[i]: (producer id, epoch) the producer holds after i commits (0: InitProducerId).
    history: list[tuple[int, int]] = []
    # sent[p]: the values sent to partition p, in send order; txn_records[t]: transaction t's.
    sent: dict[int, list[bytes]] = {p: [] for p in range(PARTITIONS)}
    txn_records: list[list[bytes]] = []
    switch: int | None = None  # index in history of the first (id, epoch) under the new id
    started = time.monotonic()
    async with Producer(
        bootstrap_servers=bootstrap, transactional_id=f"epx-{uuid.uuid4().hex[:8]}"
    ) as producer:
        state = producer.transaction_state
        assert state is not None
        history.append((state.producer_id, state.producer_epoch))
        with anyio.fail_after(DEADLINE_S):
            for t in range(MAX_TRANSACTIONS):
                near = (switch is None and state.producer_epoch >= EXHAUSTED_EPOCH - WIDE) or (
                    switch is not None and len(history) - switch <= WIDE
                )
                partitions = range(PARTITIONS) if near else (t % PARTITIONS,)
                producer.begin_transaction()
                records = []
                for p in partitions:
                    v = value(t, p, len(sent[p]))
                    sent[p].append(v)
                    records.append(v)
                    await producer.enqueue(topic, v, partition=p)
                txn_records.append(records)
                await producer.commit_transaction()
                history.append((state.producer_id, state.producer_epoch))
                if switch is None and history[-1][0] != history[-2][0]:
                    switch = len(history) - 1
                if switch is not None and len(history) - switch > TAIL:
                    break
    produce_s = time.monotonic() - started
    transactions = len(history) - 1

    around = history[switch - 3 : switch + 3] if switch is not None else history[-3:]
    print(
        f"\n{transactions} transactions in {produce_s:.1f} s "
        f"({produce_s / transactions * 1000:.2f} ms each); (pid, epoch) around the switch "
        f"(after commit {switch - 3 if switch else '?'} on): {around}"
    )
    assert switch is not None, (
        f"no new producer id after {transactions} transactions: (pid, epoch) went "
        f"{history[0]} -> {history[-1]}"
    )
    old_pid, last_old_epoch = history[switch - 1]
    new_pid, first_new_epoch = history[switch]
    # The id changed exactly once, when the epoch was exhausted, and the new one starts at 0.
    assert new_pid != old_pid
    assert last_old_epoch == EXHAUSTED_EPOCH, around
    assert first_new_epoch == 0, around
    # Every other EndTxn bumped the epoch by exactly one under the same id.
    jumps = [
        (i, history[i - 1], history[i])
        for i in range(1, len(history))
        if i != switch
        and (history[i][0] != history[i - 1][0] or history[i][1] != history[i - 1][1] + 1)
    ]
    assert not jumps, f"EndTxn answers that were not a bump by one: {jumps[:10]}"
    assert history[-1] == (new_pid, transactions - switch)

    expect = sum(len(v) for v in sent.values())
    read_started = time.monotonic()
    seen = await read_committed(bootstrap, topic, expect, DEADLINE_S - produce_s)
    read_s = time.monotonic() - read_started

    lost = duplicated = reordered = 0
    for p in range(PARTITIONS):
        want, got = sent[p], seen[p]
        wanted, present = set(want), set(got)
        lost += len(wanted - present)
        duplicated += len(got) - len(present)
        firsts = [v for v in dict.fromkeys(got) if v in wanted]
        in_send_order = [v for v in want if v in present]
        reordered += sum(1 for a, b in zip(firsts, in_send_order, strict=True) if a != b)
    record_result(
        "txn v2 epoch exhaustion (new producer id)",
        records=expect,
        lost=lost,
        duplicated=duplicated,
        reordered=reordered,
        ok=lost == duplicated == reordered == 0,
        transactions=transactions,
        ms_per_transaction=round(produce_s / transactions * 1000, 2),
        read_s=round(read_s, 1),
        around_switch=around,
    )
    for p in range(PARTITIONS):
        assert seen[p] == sent[p], (
            f"partition {p}: read_committed saw {len(seen[p])} records, sent {len(sent[p])}; "
            f"lost {len(set(sent[p]) - set(seen[p]))}, duplicated "
            f"{len(seen[p]) - len(set(seen[p]))}"
        )
    # The transactions on both sides of the switch (every partition) are all there.
    everything = {v for p in range(PARTITIONS) for v in seen[p]}
    edge = [v for rs in txn_records[switch - WIDE : switch + WIDE] for v in rs]
    assert len(edge) == 2 * WIDE * PARTITIONS
    assert not [v for v in edge if v not in everything]
