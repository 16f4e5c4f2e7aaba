"""KIP-320 on a real cluster: an unclean leader election really truncates a partition's log
below what our consumers have read, and each one notices before reading on.

The partition has replicas [1, 2] and ``unclean.leader.election.enable=true``. Node 2 dies;
records written meanwhile (acks=1) live on node 1 alone, and the consumers read them. Node 1
dies, node 2 comes back (out of sync) and is elected through ElectLeaders (unclean): its log
ends where node 2 stopped, below the consumers' positions. On the new leader epoch each
consumer validates its position with OffsetForLeaderEpoch: the one with
``auto_offset_reset="none"`` raises LogTruncationError naming its position and the offset
the logs part at; the one with "earliest" moves back to that offset and reads the new
leader's records from there. (Node 3 holds no replica; it keeps the KRaft quorum when node 2
is back, the nodes being combined broker+controller nodes.)
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Literal

import anyio
import pytest

from kafka_async import AdminClient, Consumer, NewTopic, Producer
from kafka_async.admin import ElectionType
from kafka_async.consumer import LogTruncationError
from kafka_async.errors import ElectionNotNeededError
from kafka_async.structs import ConsumerRecord, TopicPartition
from kafka_async.testing.apache import ApacheKafka

pytestmark = [pytest.mark.integration, pytest.mark.anyio, pytest.mark.timeout(600)]

#: Records on both replicas, then records on node 1 alone (lost in the unclean election),
#: then records the new leader takes.
BOTH, ALONE, AFTER = 20, 10, 5


def _consumer(
    cluster: ApacheKafka, reset: Literal["earliest", "latest", "none"]
) -> Consumer[bytes, bytes]:
    return Consumer(
        bootstrap_servers=cluster.bootstrap_servers,
        auto_offset_reset=reset,
        enable_auto_commit=False,
        metadata_max_age_ms=1_000,
        request_timeout_ms=5_000,
        retry_backoff_ms=100,
        reconnect_backoff_max_ms=500,
    )


async def _read_until(c: Consumer[bytes, bytes], offset: int) -> list[ConsumerRecord[bytes, bytes]]:
    """Read until the record before ``offset`` arrived (60 s at most)."""
    got: list[ConsumerRecord[bytes, bytes]] = []
    with anyio.fail_after(60):
        while not got or got[-1].offset < offset - 1:
            for records in (await c.getmany(timeout_ms=200)).values():
                got.extend(records)
    return got


async def _wait(predicate: Callable[[], bool]) -> None:
    """Poll the cluster (in a thread) until ``predicate`` holds (60 s at most)."""
    with anyio.fail_after(60):
        while True:
            if await anyio.to_thread.run_sync(predicate):
                return
            await anyio.sleep(0.2)


async def _raised(c: Consumer[bytes, bytes]) -> BaseException:
    """The error the consumer raises to the application (60 s at most)."""
    with anyio.fail_after(60):
        while True:
            try:
                await c.getmany(timeout_ms=200)
            except Exception as exc:  # the error is what the test checks
                return exc


async def test_unclean_election_truncation_is_detected_by_position_validation(
    apache_cluster: ApacheKafka,
) -> None:
    cluster = apache_cluster
    topic = f"trunc-{uuid.uuid4().hex[:8]}"
    tp = TopicPartition(topic, 0)
    async with AdminClient(cluster.bootstrap_servers) as admin:
        await admin.create_topics(
            [
                NewTopic(
                    topic,
                    replica_assignment={0: [1, 2]},
                    config={"unclean.leader.election.enable": "true", "min.insync.replicas": "1"},
                )
            ],
            raise_on_error=True,
        )
    await cluster.await_in_sync(topic, timeout=60)
    assert await anyio.to_thread.run_sync(cluster.leader_of, topic, 0) == 1
    try:
        async with Producer(cluster.bootstrap_servers, acks="all") as p:
            for i in range(BOTH):
                await p.send(topic, b"both-%d" % i, partition=0)
        strict, lenient = _consumer(cluster, "none"), _consumer(cluster, "earliest")
        async with strict, lenient:
            for c in (strict, lenient):
                c.assign([tp])
                c.seek(tp, 0)
                await _read_until(c, BOTH)
            # Node 2 dies: the ISR shrinks to node 1, which takes writes alone.
            await cluster.akill_node(2)
            await _wait(lambda: cluster.replicas_of(topic, 0)[1] == [1])
            async with Producer(cluster.bootstrap_servers, acks=1, enable_idempotence=False) as p:
                for i in range(ALONE):
                    await p.send(topic, b"alone-%d" % i, partition=0)
            for c in (strict, lenient):
                tail = await _read_until(c, BOTH + ALONE)
                assert tail[-1].value == b"alone-%d" % (ALONE - 1)
                assert await c.position(tp) == BOTH + ALONE
            # Node 1 dies, node 2 comes back without the records node 1 took alone.
            await cluster.akill_node(1)
            await cluster.astart_node(2)
            async with AdminClient(cluster.bootstrap_servers) as admin:
                with anyio.fail_after(90):
                    while True:
                        result = await admin.elect_leaders([tp], election_type=ElectionType.UNCLEAN)
                        err = result[tp].error
                        # Not needed: the controller elected node 2 by itself (the topic
                        # allows unclean elections).
                        elected = err is None or isinstance(err, ElectionNotNeededError)
                        if (
                            elected
                            and await anyio.to_thread.run_sync(cluster.leader_of, topic, 0) == 2
                        ):
                            break
                        await anyio.sleep(0.5)
            # The new leader's log really ends below the consumers' positions.
            async with Producer(cluster.bootstrap_servers, acks=1, enable_idempotence=False) as p:
                for i in range(AFTER):
                    await p.send(topic, b"after-%d" % i, partition=0)
            # Reset "none": the application hears of it, with the offsets.
            raised = await _raised(strict)
            assert isinstance(raised, LogTruncationError), repr(raised)
            truncation = raised
            assert truncation.partition == tp
            assert truncation.position == BOTH + ALONE
            assert truncation.divergent_offset == BOTH
            # A reset strategy: back to the fork, then the new leader's records.
            after = await _read_until(lenient, BOTH + AFTER)
            assert [(r.offset, r.value) for r in after] == [
                (BOTH + i, b"after-%d" % i) for i in range(AFTER)
            ]
            # Found by validating the position on the leader change, not by a fetch.
            for c in (strict, lenient):
                stats = c.statistics()["fetcher"]
                assert stats["validations"] >= 1, stats
                assert stats["truncations"] >= 1, stats
            # The strict consumer goes on once it seeks (to the fork, here).
            strict.seek(tp, truncation.divergent_offset)
            again = await _read_until(strict, BOTH + AFTER)
            assert [r.value for r in again] == [b"after-%d" % i for i in range(AFTER)]
    finally:
        # The fixture restarts node 1 for the next test; node 1 truncates to node 2's log.
        for node in (1, 2):
            if not cluster.node_running(node):
                await cluster.astart_node(node)
