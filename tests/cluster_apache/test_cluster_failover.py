"""Failover on a real three-node Apache Kafka cluster, with our producer and, on the same
schedule, the Java producer (``VerifiableProducer``), each checked by the ledger.

Every topic has replication factor 3 and ``min.insync.replicas=2``; both producers are
idempotent with ``acks=all``. The ledger is checked against librdkafka's read-back (and for
our run also against our Consumer's, which must agree): nothing acknowledged may be lost,
duplicated or reordered. Each scenario records its figures (``record_result``) for the soak
table of RELIABILITY.md, both clients side by side. The quick tier runs each schedule once
and short; ``-m slow`` runs the long versions.
"""

from __future__ import annotations

from typing import Any

import pytest
from cluster_support import (
    FOLLOWER_DELIVERY_TIMEOUT_MS,
    FollowerFacts,
    Outcome,
    Schedule,
    follower_kills,
    full_restart,
    leader_kills,
    move_leader_off_preferred,
    preferred_election,
    reassign,
    record,
    run_java,
    run_ours,
)

from kafka_async.testing.apache import ApacheKafka

pytestmark = [pytest.mark.integration, pytest.mark.anyio, pytest.mark.timeout(1500)]

CLIENTS = ["ours", "java"]
#: The quick tier runs the Java client's twin of a scenario only where it is the headline
#: (the leader kill); ``make soak`` runs every twin (``-m "slow or not slow"``).
QUICK_CLIENTS = ["ours", pytest.param("java", marks=pytest.mark.slow)]


async def _run(
    client: str,
    cluster: ApacheKafka,
    schedule: Schedule,
    partitions: int = 3,
    *,
    budget: float = 240.0,
    assignment: dict[int, list[int]] | None = None,
    consume: bool = False,
    **settings: Any,
) -> Outcome:
    """Run ``schedule`` with ``client``'s producer (and live consumer, with ``consume``);
    ``settings`` are our producer's keyword names, dotted for the Java producer."""
    if client == "ours":
        return await run_ours(
            cluster,
            schedule,
            partitions,
            budget=budget,
            assignment=assignment,
            consume=consume,
            **settings,
        )
    java = {k.replace("_", "."): v for k, v in settings.items()}
    return await run_java(
        cluster, schedule, partitions, budget=budget, assignment=assignment, consume=consume, **java
    )


def _budget(disruptions: int) -> float:
    """Seconds a schedule of ``disruptions`` node restarts may take on a loaded machine."""
    return 120.0 + 90.0 * disruptions


def _clean(outcome: Outcome) -> bool:
    r = outcome.report
    return not (r.lost or r.duplicated or r.reordered or r.misrouted or r.unknown)


async def _leader_kill(client: str, cluster: ApacheKafka, kills: int, label: str) -> None:
    outcome = await _run(client, cluster, leader_kills(kills), budget=_budget(kills))
    ok = outcome.report.ok and outcome.report.failed == 0
    record(
        f"partition leader SIGKILLed mid-produce ({label}, {kills} kills)",
        outcome,
        runs=kills,
        ok=ok,
    )
    print(outcome)
    assert ok, f"{outcome.report.summary()}\nerrors: {outcome.errors}"


@pytest.mark.parametrize("client", CLIENTS)
async def test_leader_sigkill_quick(client: str, apache_cluster: ApacheKafka) -> None:
    await _leader_kill(client, apache_cluster, 1, "quick")


@pytest.mark.slow
@pytest.mark.parametrize("client", CLIENTS)
async def test_leader_sigkill_full(client: str, apache_cluster: ApacheKafka) -> None:
    await _leader_kill(client, apache_cluster, 10, "full")


async def _graceful(client: str, cluster: ApacheKafka, stops: int, label: str) -> None:
    outcome = await _run(client, cluster, leader_kills(stops, graceful=True), budget=_budget(stops))
    # A controlled shutdown hands leadership over first: not one record may fail.
    ok = outcome.report.ok and outcome.report.failed == 0
    record(
        f"partition leader stopped gracefully ({label}, {stops} stops)", outcome, runs=stops, ok=ok
    )
    print(outcome)
    assert ok, f"{outcome.report.summary()}\nerrors: {outcome.errors}"


@pytest.mark.parametrize("client", QUICK_CLIENTS)
async def test_leader_graceful_quick(client: str, apache_cluster: ApacheKafka) -> None:
    await _graceful(client, apache_cluster, 1, "quick")


@pytest.mark.slow
@pytest.mark.parametrize("client", CLIENTS)
async def test_leader_graceful_full(client: str, apache_cluster: ApacheKafka) -> None:
    await _graceful(client, apache_cluster, 6, "full")


@pytest.mark.parametrize("client", QUICK_CLIENTS)
async def test_followers_killed_not_enough_replicas(
    client: str, apache_cluster: ApacheKafka
) -> None:
    facts = FollowerFacts()
    timeout = FOLLOWER_DELIVERY_TIMEOUT_MS
    outcome = await _run(
        client,
        apache_cluster,
        follower_kills(facts),
        1,
        delivery_timeout_ms=timeout,
        request_timeout_ms=timeout - 1000,
    )
    print(outcome, facts)
    r = outcome.report
    # Ours names the broker's refusal (NotEnoughReplicasError, or a KafkaTimeoutError whose
    # cause it is); the Java producer reports an expired batch as a bare TimeoutException.
    typed = "NotEnoughReplicasError" if client == "ours" else "TimeoutException"
    # A record reported failed may still be in the log only when its delivery timed out
    # (no client can know then); a record the broker refused must not be.
    timeouts = ("KafkaTimeoutError", "TimeoutException")
    refused_yet_written = {k: v for k, v in outcome.phantoms.items() if k not in timeouts}
    ok = (
        not (r.lost or r.duplicated or r.reordered)
        and not refused_yet_written
        and facts.two_isr_ack_s >= 0
        and facts.acked_short_isr == 0
        and facts.failure_reasons.get(typed, 0) > 0
        and facts.recovery_s < 60
    )
    outcome.extra.update(
        two_isr_ack_s=round(facts.two_isr_ack_s, 2),
        failure_reasons=facts.failure_reasons,
        phantom=r.phantom,
    )
    record(
        "follower SIGKILLed: 2 ISR ok; 3 required: NotEnoughReplicas; recovers",
        outcome,
        runs=1,
        ok=ok,
    )
    assert (r.lost, r.duplicated, r.reordered) == (0, 0, 0), r.summary()
    assert not refused_yet_written, f"refused records in the log: {outcome.phantoms}"
    assert facts.acked_short_isr == 0, "acknowledged with fewer in-sync replicas than required"
    assert facts.failure_reasons.get(typed, 0) > 0, (
        f"expected deliveries failing with {typed}, got {facts.failure_reasons}"
    )
    assert ok, facts


async def _elect(client: str, cluster: ApacheKafka) -> None:
    facts: dict[str, Any] = {}
    outcome = await _run(client, cluster, _after_moving_leader(preferred_election(facts)))
    outcome.extra.update(facts)
    ok = outcome.report.ok and outcome.report.failed == 0 and facts.get("leader_after") is not None
    record("preferred leader election (admin elect_leaders), no kill", outcome, runs=1, ok=ok)
    print(outcome, facts)
    assert ok, f"{outcome.report.summary()}\nerrors: {outcome.errors} {facts}"


def _after_moving_leader(schedule: Schedule) -> Schedule:
    async def run(cluster: ApacheKafka, topic: str, produce_run: Any) -> list[float]:
        await move_leader_off_preferred(cluster, topic)
        return await schedule(cluster, topic, produce_run)

    return run


@pytest.mark.parametrize("client", QUICK_CLIENTS)
async def test_preferred_leader_election(client: str, apache_cluster: ApacheKafka) -> None:
    await _elect(client, apache_cluster)


@pytest.mark.parametrize("client", QUICK_CLIENTS)
async def test_full_cluster_restart(client: str, apache_cluster: ApacheKafka) -> None:
    # The whole cluster is away for as long as three JVMs take to stop and start (tens of
    # seconds on a loaded machine): the producers wait for it instead of timing out.
    outcome = await _run(
        client, apache_cluster, full_restart(), budget=600, delivery_timeout_ms=300_000
    )
    ok = outcome.report.ok and outcome.report.failed == 0
    record("full cluster restart (all 3 nodes stopped, started)", outcome, runs=1, ok=ok)
    print(outcome)
    assert ok, f"{outcome.report.summary()}\nerrors: {outcome.errors}"


#: The replica sets partitions move through: replication factor 2; from one to the next
#: a partition loses its leader's replica (the first), so the leadership moves with it.
REPLICA_SETS = [[1, 2], [2, 3], [3, 1]]
#: Replicas of a three-partition topic before the moves: each leader on another node.
REASSIGN_FROM = {p: REPLICA_SETS[p] for p in range(3)}


def _reassign_plan(rounds: int) -> list[dict[int, list[int]]]:
    """Round k moves partition p to the next replica set: [1,2] -> [2,3] -> [3,1] -> ..."""
    return [{p: REPLICA_SETS[(p + k + 1) % 3] for p in range(3)} for k in range(rounds)]


async def _reassign(client: str, cluster: ApacheKafka, rounds: int, label: str) -> None:
    facts: dict[str, Any] = {}
    plan = _reassign_plan(rounds)
    # The live consumer: ours beside our producer, a Java VerifiableConsumer beside Java's.
    outcome = await _run(
        client,
        cluster,
        reassign(plan, facts),
        3,
        budget=_budget(rounds),
        assignment=REASSIGN_FROM,
        consume=True,
    )
    outcome.extra.update(facts)
    consumer = outcome.extra["consumer"]
    leaders_moved = all(b != a for moved in facts.get("leaders", []) for b, a in moved.values())
    ok = (
        outcome.report.ok
        and outcome.report.failed == 0
        and not outcome.errors
        and outcome.consumer_ok
        and leaders_moved
    )
    record(
        f"partition replicas reassigned, leaders moving ({label}, {rounds} moves of 3 "
        "partitions), producer + consumer",
        outcome,
        runs=rounds,
        ok=ok,
    )
    print(outcome)
    assert outcome.report.ok, outcome.report.summary()
    assert outcome.report.failed == 0, outcome.errors
    assert not outcome.errors, outcome.errors
    assert consumer["errors"] == [], consumer
    assert (consumer["lost"], consumer["duplicated"], consumer["reordered"]) == (0, 0, 0), consumer
    assert consumer["backwards"] == [], consumer
    assert leaders_moved, facts


@pytest.mark.parametrize("client", QUICK_CLIENTS)
async def test_partition_reassignment_quick(client: str, apache_cluster: ApacheKafka) -> None:
    await _reassign(client, apache_cluster, 1, "quick")


@pytest.mark.slow
@pytest.mark.parametrize("client", CLIENTS)
async def test_partition_reassignment_full(client: str, apache_cluster: ApacheKafka) -> None:
    await _reassign(client, apache_cluster, 6, "full")
