"""Broker killed (-9) and restarted mid-produce, idempotence on, on a durable broker.

Pass: 0 lost, 0 duplicated, 0 reordered (checked by librdkafka's read-back and by ours), and
every delivery resolves within ``delivery_timeout_ms`` + 1 s. The quick tier kills once, the
full tier (``-m slow``) 20 times.

Tansu has a known gap here (../shared/DESIGN.md): in durable mode a SIGKILL can lose batches
that the broker then answers as DUPLICATE_SEQUENCE_NUMBER. When our run loses or duplicates
records, the same kill schedule is replayed with librdkafka's idempotent producer on the same
broker; if it loses or duplicates too, the result is recorded as a broker gap with both
ledgers' figures as evidence (and the test is skipped with that evidence, never passed).
Independently of the replays, a loss is also the broker's when every lost record sits in an
offset hole of exactly its size (``Ledger.lost_in_offset_holes``): the broker assigned those
offsets and lost the data, which no client behaviour can cause. That is what a kill looks
like in practice, and it keeps the verdict from depending on whether librdkafka's replays
happen to be hit.
"""

from __future__ import annotations

import uuid
from typing import Any

import anyio
import pytest
from reliability_support import (
    LedgerProducer,
    LibrdkafkaLedgerProducer,
    read_and_check,
    read_back_theirs,
)

from kafka_async import Producer
from kafka_async.testing import EmbeddedBroker
from tests.harness.ledger import Ledger, LedgerReport
from tests.harness.soak import record_result

pytestmark = [pytest.mark.integration]

PARTITIONS = 3
RATE = 1000.0  # records per second
DELIVERY_TIMEOUT_MS = 30_000
#: Seconds of producing before the first kill, between kills and after the last.
UP_S = 1.0
#: Seconds the broker stays dead.
DOWN_S = 0.5


async def _kill_schedule(broker: EmbeddedBroker, kills: int, acked: Any) -> list[float]:
    """Kill -9 and restart ``kills`` times; return each kill's recovery time (kill to the
    first new acknowledgement after the restart)."""
    recoveries = []
    for _ in range(kills):
        await anyio.sleep(UP_S)
        killed_at = anyio.current_time()
        await broker.akill()
        await anyio.sleep(DOWN_S)
        await broker.arestart()
        before = acked()
        with anyio.move_on_after(DELIVERY_TIMEOUT_MS / 1000):
            while acked() <= before:  # noqa: ASYNC110 - polls another task's count
                await anyio.sleep(0.02)
        recoveries.append(anyio.current_time() - killed_at)
    return recoveries


def _total(kills: int) -> int:
    return int(RATE * (UP_S * (kills + 1) + (DOWN_S + 1.0) * kills))


async def _ours(broker: EmbeddedBroker, kills: int) -> tuple[Ledger, LedgerProducer, list[float]]:
    topic = f"kill-ours-{uuid.uuid4().hex[:8]}"
    await broker.acreate_topic(topic, partitions=PARTITIONS)
    ledger = Ledger(PARTITIONS)
    async with Producer(
        bootstrap_servers=broker.bootstrap_servers,
        enable_idempotence=True,
        linger_ms=5,
        request_timeout_ms=5_000,
        delivery_timeout_ms=DELIVERY_TIMEOUT_MS,
        retry_backoff_ms=100,
        reconnect_backoff_max_ms=500,
    ) as producer:
        lp = LedgerProducer(producer, topic, ledger)
        recoveries: list[float] = []

        async def chaos() -> None:
            recoveries.extend(await _kill_schedule(broker, kills, lambda: lp.settle_now() or 0))

        with anyio.fail_after(_total(kills) / RATE + kills * 40 + DELIVERY_TIMEOUT_MS / 1000 + 30):
            async with anyio.create_task_group() as tg:
                tg.start_soon(chaos)
                tg.start_soon(lp.settle, 1e9)
                await lp.produce(_total(kills), per_second=RATE)
            await producer.flush(DELIVERY_TIMEOUT_MS / 1000 + 5)
        lp.settle_now()
    return ledger, lp, recoveries


async def _librdkafka(broker: EmbeddedBroker, kills: int) -> tuple[Ledger, LedgerReport]:
    topic = f"kill-rdk-{uuid.uuid4().hex[:8]}"
    await broker.acreate_topic(topic, partitions=PARTITIONS)
    ledger = Ledger(PARTITIONS)
    rdk = LibrdkafkaLedgerProducer(
        broker.bootstrap_servers,
        topic,
        ledger,
        **{"message.timeout.ms": DELIVERY_TIMEOUT_MS, "request.timeout.ms": 5000},
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(_kill_schedule, broker, kills, lambda: rdk.acked)
        await anyio.to_thread.run_sync(rdk.run, _total(kills), RATE, DELIVERY_TIMEOUT_MS / 1000 + 5)
    # Only librdkafka's own figures are evidence here: its read-back of its own run.
    observed = await read_back_theirs(broker.bootstrap_servers, topic, ledger)
    return ledger, ledger.check(observed)


async def run_kill_scenario(broker: EmbeddedBroker, kills: int, label: str) -> None:
    ledger, lp, recoveries = await _ours(broker, kills)
    theirs, ours, observed = await read_and_check(broker.bootstrap_servers, lp.topic, ledger)
    # The two readers must agree: otherwise our consumer hides or invents records.
    assert (ours.lost, ours.duplicated, ours.reordered) == (
        theirs.lost,
        theirs.duplicated,
        theirs.reordered,
    ), f"readers disagree:\n librdkafka: {theirs.summary()}\n ours: {ours.summary()}"
    settle_ok = lp.stats.max_settle <= DELIVERY_TIMEOUT_MS / 1000 + 1 and lp.stats.unresolved == 0
    scenario = f"broker kill -9 + restart, idempotent ({label}, {kills} kills)"
    figures: dict[str, Any] = {
        "runs": kills,
        "records": theirs.produced,
        "lost": theirs.lost,
        "duplicated": theirs.duplicated,
        "reordered": theirs.reordered,
        "max_recovery_s": max(recoveries, default=0.0),
    }
    print(f"ours: {theirs.summary()}\nproducer errors: {lp.stats.errors}")
    if theirs.ok and settle_ok:
        record_result(scenario, **figures)
        return
    gap_evidence = ""
    replays: list[str] = []
    # The gap strikes at random (a batch in flight at the kill), so one clean librdkafka
    # replay proves little: replay up to `attempts` times and look for the same damage.
    attempts = 3 if kills < 5 else 1
    while (theirs.lost or theirs.duplicated) and not gap_evidence and len(replays) < attempts:
        rdk_ledger, rdk = await _librdkafka(broker, kills)
        replays.append(f"lost={rdk.lost} duplicated={rdk.duplicated} of {rdk.acked} acked")
        if rdk.lost or rdk.duplicated:
            gap_evidence = (
                f"same kill schedule with librdkafka (idempotent): {replays[-1]} "
                f"(errors {rdk_ledger.failures()}); ours: lost={theirs.lost} "
                f"duplicated={theirs.duplicated} of {theirs.acked} acked "
                f"(errors {lp.stats.errors})"
            )
    in_holes = ledger.lost_in_offset_holes(observed)
    if theirs.lost and not theirs.duplicated and in_holes == theirs.lost:
        # Seen on every kill that loses data: the batch in flight at the kill was given its
        # offsets (the records after it sit exactly that many offsets later), its data was
        # not persisted, and its retry was answered DUPLICATE_SEQUENCE_NUMBER.
        holes = (
            f"all {in_holes} lost records sit in offset holes of exactly their size between "
            "present neighbours (the broker assigned their offsets, then lost their data)"
        )
        gap_evidence = f"{holes}; {gap_evidence}" if gap_evidence else holes
    with_offset, reused = ledger.lost_offsets_reused(observed)
    if theirs.lost and not theirs.duplicated and with_offset and reused == theirs.lost:
        # Every lost record was acknowledged at an offset that now holds another record:
        # the broker gave that offset away again after the restart, whatever the client.
        reuse = (
            f"all {reused} lost records were acknowledged at offsets that the log now gives "
            "to other records (the broker reassigned acknowledged offsets after the restart)"
        )
        gap_evidence = f"{reuse}; {gap_evidence}" if gap_evidence else reuse
        if replays:
            gap_evidence += f"; librdkafka replays: {replays}"
    if gap_evidence and theirs.reordered == 0 and settle_ok:
        record_result(scenario, **figures, verdict="broker gap", evidence=gap_evidence)
        pytest.skip(f"broker gap (Tansu durable mode loses batches on SIGKILL): {gap_evidence}")
    record_result(
        scenario,
        **figures,
        ok=False,
        evidence=f"{theirs.summary()}; librdkafka replays: {replays or 'not needed'}",
    )
    assert settle_ok, (
        f"deliveries settled in up to {lp.stats.max_settle:.1f} s, "
        f"{lp.stats.unresolved} unresolved (limit {DELIVERY_TIMEOUT_MS / 1000 + 1} s)"
    )
    pytest.fail(
        f"{theirs.summary()}\nproducer errors: {lp.stats.errors}\n"
        f"librdkafka on the same schedule: {replays or 'not run'}"
    )


@pytest.mark.anyio
@pytest.mark.parametrize("durable_broker_kills", [1])
async def test_reliability_kill9_restart_quick(
    durable_broker: EmbeddedBroker, durable_broker_kills: int
) -> None:
    await run_kill_scenario(durable_broker, durable_broker_kills, "quick")


@pytest.mark.anyio
@pytest.mark.slow
async def test_reliability_kill9_restart_full(durable_broker: EmbeddedBroker) -> None:
    await run_kill_scenario(durable_broker, 20, "full")
