"""The share consumer on a three-node Apache Kafka cluster: one share session per broker
that leads an assigned partition, and a leader killed while the member reads.

Uses the run's three-node cluster (``apache_cluster``); partitions have three replicas, so
a killed leader's partitions move to another node, where the member opens a session and
goes on reading. Records the killed node had handed out and not yet seen acknowledged are
offered again by the new leader (acquisition state lives with the leader; the share
coordinator keeps what was acknowledged), so the test asserts that every record was
processed, not that none was processed twice.
"""

from __future__ import annotations

import uuid

import anyio
import pytest

from kafka_async import Producer
from kafka_async.admin import AdminClient, ConfigResource
from kafka_async.consumer.share import ShareConsumer
from kafka_async.testing.apache import ApacheKafka

pytestmark = [pytest.mark.integration, pytest.mark.anyio, pytest.mark.timeout(600)]

PARTITIONS = 3
TOTAL = 300


async def test_sessions_per_broker_and_a_killed_leader(apache_cluster: ApacheKafka) -> None:
    cluster = apache_cluster
    if not any(k.api_key == 76 and k.max_version >= 1 for k in cluster.api_versions().api_keys):
        pytest.skip(f"{cluster!r} does not advertise ShareGroupHeartbeat v1")
    topic = f"share-{uuid.uuid4().hex[:10]}"
    await cluster.acreate_topic(topic, PARTITIONS, configs={"min.insync.replicas": "2"})
    await cluster.await_in_sync(topic, timeout=60)
    leaders = {p: cluster.leader_of(topic, p) for p in range(PARTITIONS)}
    bootstrap = cluster.bootstrap_servers
    group = f"share-cluster-{uuid.uuid4().hex[:8]}"
    async with AdminClient(bootstrap) as admin:
        await admin.incremental_alter_configs(
            {
                ConfigResource.group(group): {
                    "share.auto.offset.reset": "earliest",
                    "share.heartbeat.interval.ms": "500",
                }
            },
            raise_on_error=True,
        )
    values = [str(i).encode() for i in range(TOTAL)]
    async with Producer(bootstrap, acks="all") as producer:
        for i, v in enumerate(values):
            await producer.send(topic, v, partition=i % PARTITIONS)
        await producer.flush()
    seen: set[bytes] = set()
    killed = leaders[0]
    async with ShareConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=group,
        max_poll_records=20,
        metadata_max_age_ms=2000,
    ) as consumer:

        def sessions_everywhere() -> bool:
            # One session per leader broker, each opened and moved past its first epoch. The
            # fetch loops of the brokers start independently, so poll for it (a third of the
            # records may well come from two of them first).
            sessions = consumer.statistics()["fetcher"]["sessions"]
            return {int(n) for n in sessions} == set(leaders.values()) and all(
                s["opened"] >= 1 and s["epoch"] >= 1 for s in sessions.values()
            )

        with anyio.fail_after(60):
            while len(seen) < TOTAL // 3 or not sessions_everywhere():
                for records in (await consumer.getmany(timeout_ms=500, max_records=10)).values():
                    seen.update(r.value or b"" for r in records)
        assert len(seen) < TOTAL, "the kill must happen while records are left to read"
        await cluster.akill_node(killed)
        try:
            with anyio.fail_after(120):
                while len(seen) < TOTAL:
                    for records in (await consumer.getmany(timeout_ms=500)).values():
                        seen.update(r.value or b"" for r in records)
            moved_to = cluster.leader_of(topic, 0)
            sessions = consumer.statistics()["fetcher"]["sessions"]
        finally:
            await cluster.astart_node(killed)
    assert seen == set(values)
    # Partition 0 is read from its new leader, in a session there.
    assert moved_to != killed
    assert sessions[str(moved_to)]["partitions"] >= 1
    assert sessions[str(moved_to)]["epoch"] >= 1
