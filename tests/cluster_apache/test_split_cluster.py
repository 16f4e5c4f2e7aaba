"""Scenarios that need a cluster shaped unlike the session's: node 1 is the only KRaft
controller (nodes 2 and 3 are brokers only, so the quorum outlives both of them), and each
node has a rack (``broker.rack`` r1, r2, r3) with the rack-aware replica selector.

- The follower scenario as Kafka states it (issue 13): RF 3, min.insync.replicas=2; one
  follower dies: acks=all goes on; the second dies: NOT_ENOUGH_REPLICAS, typed, nothing
  acknowledged; both come back: writes go on. Ours, and in the soak tier the Java producer
  on the same schedule.
- KIP-392: a consumer with ``client_rack`` fetches from the replica in its rack, as the
  leader tells it (our statistics show the fetches per node), and back from the leader when
  that replica dies.

The session's cluster is stopped while this module's runs (one cluster at a time); this
module sorts last in the directory, so nothing waits for the session's to come back.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from cluster_support import (
    FOLLOWER_DELIVERY_TIMEOUT_MS,
    FollowerFacts,
    followers_down,
    record,
    run_java,
    run_ours,
)

from kafka_async import AdminClient, Consumer, NewTopic, Producer
from kafka_async.structs import TopicPartition
from kafka_async.testing.apache import ApacheKafka
from kafka_async.testing.plugin import start_cluster

pytestmark = [pytest.mark.integration, pytest.mark.anyio, pytest.mark.timeout(900)]

RACKS = {1: "r1", 2: "r2", 3: "r3"}


@pytest.fixture(scope="module")
def split_cluster() -> Iterator[ApacheKafka]:
    kafka = start_cluster(
        3,
        controllers=1,
        broker_config={
            "replica.selector.class": "org.apache.kafka.common.replica.RackAwareReplicaSelector"
        },
        node_config={n: {"broker.rack": rack} for n, rack in RACKS.items()},
    )
    try:
        yield kafka
    finally:
        kafka.stop()


@pytest.fixture
def cluster(split_cluster: ApacheKafka) -> ApacheKafka:
    split_cluster.start_stopped()
    split_cluster.wait_in_sync(timeout=90)
    return split_cluster


#: The soak tier runs the Java producer's twin (``make soak``: ``-m "slow or not slow"``).
CLIENTS = ["ours", pytest.param("java", marks=pytest.mark.slow)]
#: The failure each client reports for a record refused with NOT_ENOUGH_REPLICAS until its
#: delivery timeout: ours names the broker's error (directly, or as the timeout's cause);
#: the Java producer retries it and reports the expired batch as a TimeoutException.
REFUSED = {"ours": "NotEnoughReplicasError", "java": "TimeoutException"}
#: Failures whose record may still be in the log (the client cannot know its outcome).
TIMEOUTS = ("KafkaTimeoutError", "TimeoutException")


@pytest.mark.parametrize("client", CLIENTS)
async def test_second_follower_killed_not_enough_replicas(
    client: str, cluster: ApacheKafka
) -> None:
    facts = FollowerFacts()
    timeout = FOLLOWER_DELIVERY_TIMEOUT_MS
    schedule = followers_down(facts, leader=1, followers=[2, 3])
    if client == "ours":
        outcome = await run_ours(
            cluster,
            schedule,
            1,
            assignment={0: [1, 2, 3]},
            delivery_timeout_ms=timeout,
            request_timeout_ms=timeout - 1000,
        )
    else:
        java: dict[str, Any] = {
            "delivery.timeout.ms": timeout,
            "request.timeout.ms": timeout - 1000,
        }
        outcome = await run_java(
            cluster,
            schedule,
            1,
            assignment={0: [1, 2, 3]},
            **java,
        )
    print(outcome, facts)
    r = outcome.report
    typed = REFUSED[client]
    # A record the broker refused is not in the log; one whose delivery timed out may be.
    refused_yet_written = {k: v for k, v in outcome.phantoms.items() if k not in TIMEOUTS}
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
        "followers SIGKILLed one by one: 2 ISR ok; 1 ISR: NotEnoughReplicas; both back: recovers",
        outcome,
        runs=1,
        ok=ok,
    )
    assert (r.lost, r.duplicated, r.reordered) == (0, 0, 0), r.summary()
    assert not refused_yet_written, f"refused records in the log: {outcome.phantoms}"
    assert facts.two_isr_ack_s >= 0, "no acknowledgement with two replicas in sync"
    assert facts.acked_short_isr == 0, "acknowledged with fewer in-sync replicas than required"
    # The typed reason, as each client reports it (see REFUSED).
    assert facts.failure_reasons.get(typed, 0) > 0, (
        f"expected deliveries failing with {typed}, got {facts.failure_reasons} "
        f"{outcome.extra.get('error_messages', '')}"
    )
    assert ok, facts


# -- KIP-392: fetch from the closest replica ---------------------------------------------------


async def _topic(cluster: ApacheKafka) -> str:
    name = f"rack-{uuid.uuid4().hex[:8]}"
    async with AdminClient(cluster.bootstrap_servers) as admin:
        await admin.create_topics(
            [NewTopic(name, replica_assignment={0: [1, 2, 3]})], raise_on_error=True
        )
    await cluster.await_in_sync(name, timeout=60)
    return name


async def _produce(cluster: ApacheKafka, topic: str, start: int, n: int) -> None:
    async with Producer(cluster.bootstrap_servers, acks="all") as p:
        for i in range(start, start + n):
            await p.send(topic, b"r-%d" % i, partition=0)


async def _read(c: Consumer[bytes, bytes], upto: int) -> list[int]:
    got: list[int] = []
    with anyio.fail_after(60):
        while not got or got[-1] < upto - 1:
            for records in (await c.getmany(timeout_ms=200)).values():
                got += [r.offset for r in records]
    return got


def _racked(cluster: ApacheKafka, rack: str) -> Consumer[bytes, bytes]:
    return Consumer(
        bootstrap_servers=cluster.bootstrap_servers,
        client_rack=rack,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        metadata_max_age_ms=5_000,
        request_timeout_ms=5_000,
        reconnect_backoff_max_ms=500,
    )


async def test_fetches_go_to_the_replica_in_the_consumers_rack(cluster: ApacheKafka) -> None:
    topic = await _topic(cluster)
    tp = TopicPartition(topic, 0)
    assert await anyio.to_thread.run_sync(cluster.leader_of, topic, 0) == 1
    await _produce(cluster, topic, 0, 50)
    near2, near3, near1 = _racked(cluster, "r2"), _racked(cluster, "r3"), _racked(cluster, "r1")
    async with near2, near3, near1:
        for c in (near2, near3, near1):
            c.assign([tp])
            assert await _read(c, 50) == list(range(50))
        # More records while they read: each follows its rack's replica.
        await _produce(cluster, topic, 50, 50)
        for c in (near2, near3, near1):
            assert (await _read(c, 100))[-1] == 99
        by_node = {
            rack: c.statistics()["fetcher"]["fetches_by_node"]
            for rack, c in (("r1", near1), ("r2", near2), ("r3", near3))
        }
        preferred = {
            rack: c.statistics()["fetcher"]["preferred_replicas"]
            for rack, c in (("r1", near1), ("r2", near2), ("r3", near3))
        }
        print(by_node, preferred)
        # The leader (rack r1) named the follower in the consumer's rack; the consumer in
        # the leader's rack was never sent elsewhere.
        assert preferred["r2"] == {f"{topic}-0": 2}, preferred
        assert preferred["r3"] == {f"{topic}-0": 3}, preferred
        assert preferred["r1"] == {}, preferred
        assert by_node["r2"].get(2, 0) > by_node["r2"].get(1, 0), by_node
        assert by_node["r3"].get(3, 0) > by_node["r3"].get(1, 0), by_node
        assert set(by_node["r1"]) == {1}, by_node
        # The replica in r2 dies: that consumer goes back to the leader and reads on.
        leader_fetches = by_node["r2"].get(1, 0)
        await cluster.akill_node(2)
        await _produce(cluster, topic, 100, 20)
        assert (await _read(near2, 120))[-1] == 119
        after = near2.statistics()["fetcher"]
        assert after["fetches_by_node"].get(1, 0) > leader_fetches, after
        assert after["preferred_replicas"] == {}, after
