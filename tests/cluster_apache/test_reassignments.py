"""Partition reassignment (KIP-455) through our admin client and the ``kafka-async reassign``
command, on the three-node cluster: a move completes (replicas and leader as asked, the data
still there), a move that cannot complete is listed with what it adds and removes and can be
cancelled, refusals are typed item errors. The replication-factor guard
(``allow_replication_factor_change=False``) needs AlterPartitionReassignments v1 (KIP-860);
where the broker advertises only v0 (2.8.2 and 3.6.2 in ZooKeeper mode) the client's typed
refusal is checked and the guard's test is skipped quoting the broker's range."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Mapping, Sequence

import anyio
import pytest

from kafka_async import AdminClient, Consumer, NewTopic, Producer
from kafka_async.admin import ConfigResource
from kafka_async.errors import (
    IncompatibleBrokerVersionError,
    InvalidReplicaAssignmentError,
    NoReassignmentInProgressError,
)
from kafka_async.structs import TopicPartition
from kafka_async.testing.apache import ApacheKafka
from kafka_async.testing.capabilities import advertised_apis, api_key_of

pytestmark = [pytest.mark.integration, pytest.mark.anyio, pytest.mark.timeout(600)]


async def _topic(cluster: ApacheKafka, assignment: Mapping[int, Sequence[int]]) -> str:
    name = f"ra-{uuid.uuid4().hex[:10]}"
    async with AdminClient(cluster.bootstrap_servers) as admin:
        await admin.create_topics(
            [NewTopic(name, replica_assignment=assignment)], raise_on_error=True
        )
    await cluster.await_in_sync(name, timeout=60)
    return name


async def _replicas(cluster: ApacheKafka, topic: str, partition: int) -> list[int]:
    replicas, _ = await anyio.to_thread.run_sync(cluster.replicas_of, topic, partition)
    return replicas


async def _until_moved(
    admin: AdminClient, cluster: ApacheKafka, tp: TopicPartition, target: list[int]
) -> None:
    """Poll until the controller no longer lists the move and metadata shows the target."""
    with anyio.fail_after(60):
        while True:
            moving = await admin.list_partition_reassignments([tp])
            if not moving and sorted(await _replicas(cluster, tp.topic, tp.partition)) == sorted(
                target
            ):
                return
            await anyio.sleep(0.2)


async def test_move_completes_and_refusals_are_item_errors(apache_cluster: ApacheKafka) -> None:
    cluster = apache_cluster
    topic = await _topic(cluster, {0: [1, 2], 1: [2, 3]})
    tp0, tp1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
    async with Producer(cluster.bootstrap_servers, acks="all") as producer:
        for i in range(20):
            await producer.send(topic, b"v%d" % i, partition=0)
    async with AdminClient(cluster.bootstrap_servers) as admin:
        assert await admin.list_partition_reassignments([tp0, tp1]) == {}
        # Partition 0 moves off node 1, its leader: leadership moves to a target replica.
        result = await admin.alter_partition_reassignments({tp0: [3, 2], tp1: [2, 99]})
        assert result[tp0].error is None
        assert isinstance(result[tp1].error, InvalidReplicaAssignmentError), result[tp1]
        await _until_moved(admin, cluster, tp0, [2, 3])
        assert await anyio.to_thread.run_sync(cluster.leader_of, topic, 0) in (2, 3)
        # Nothing to cancel now: a typed item error, not a failure of the call.
        cancel = await admin.alter_partition_reassignments({tp0: None})
        assert isinstance(cancel[tp0].error, NoReassignmentInProgressError), cancel[tp0]
    # The data came along: every record, in order, from the new replicas.
    consumer: Consumer[bytes, bytes] = Consumer(
        bootstrap_servers=cluster.bootstrap_servers,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    async with consumer:
        consumer.assign([tp0])
        got: list[bytes | None] = []
        with anyio.fail_after(30):
            while len(got) < 20:
                for records in (await consumer.getmany(timeout_ms=500)).values():
                    got.extend(r.value for r in records)
    assert got == [b"v%d" % i for i in range(20)]


async def test_replication_factor_guard_refuses_a_changed_count(
    apache_cluster: ApacheKafka,
) -> None:
    """With ``allow_replication_factor_change=False`` (AlterPartitionReassignments v1) the
    broker refuses [2,3] -> [1] and the replicas stay; a broker that advertises only v0
    cannot be asked, and the client says so with a typed error before sending anything."""
    cluster = apache_cluster
    topic = await _topic(cluster, {0: [2, 3]})
    tp = TopicPartition(topic, 0)
    advertised = await anyio.to_thread.run_sync(advertised_apis, cluster.bootstrap_servers)
    have = advertised.get(api_key_of("AlterPartitionReassignments"))
    async with AdminClient(cluster.bootstrap_servers) as admin:
        if have is None or have[1] < 1:
            with pytest.raises(IncompatibleBrokerVersionError):
                await admin.alter_partition_reassignments(
                    {tp: [1]}, allow_replication_factor_change=False
                )
            assert await _replicas(cluster, topic, 0) in ([2, 3], [3, 2])
            said = "nothing" if have is None else f"v{have[0]}-v{have[1]}"
            pytest.skip(
                f"Apache Kafka {cluster.version} ({cluster.mode}) advertises "
                f"AlterPartitionReassignments {said}; the replication-factor guard needs v1 "
                "(checked: the client refuses with IncompatibleBrokerVersionError)"
            )
        guarded = await admin.alter_partition_reassignments(
            {tp: [1]}, allow_replication_factor_change=False
        )
        assert guarded[tp].error is not None
        assert await _replicas(cluster, topic, 0) in ([2, 3], [3, 2])


#: Replication throttles (KIP-73, what ``kafka-reassign-partitions --throttle`` sets): a
#: replica being added copies at most this many bytes per second once its first fetch is in.
_THROTTLE = {"leader.replication.throttled.rate": "1", "follower.replication.throttled.rate": "1"}
_THROTTLED_REPLICAS = {
    "leader.replication.throttled.replicas": "*",
    "follower.replication.throttled.replicas": "*",
}


async def test_move_in_progress_is_listed_and_cancelled(apache_cluster: ApacheKafka) -> None:
    """A move that copies 6 MB at a throttled 1 byte/s cannot complete during the test: the
    controller lists it (replicas, adding, removing) until it is cancelled, which restores
    the old replicas. (Not a move onto a node that is down: a ZooKeeper-mode controller
    refuses that, INVALID_REPLICA_ASSIGNMENT 'brokers that are not alive', where a KRaft
    controller takes it.)"""
    cluster = apache_cluster
    topic = await _topic(cluster, {0: [2, 3]})
    tp = TopicPartition(topic, 0)
    async with Producer(cluster.bootstrap_servers, acks="all") as producer:
        for i in range(60):  # 60 x 100 KB: a replica's fetch brings at most 1 MB at a time
            await producer.send(topic, bytes([i]) * 100_000, partition=0)
    brokers = [ConfigResource.broker(n) for n in (1, 2, 3)]
    async with AdminClient(cluster.bootstrap_servers) as admin:
        try:
            throttled = await admin.incremental_alter_configs(
                {
                    **dict.fromkeys(brokers, _THROTTLE),
                    ConfigResource.topic(topic): _THROTTLED_REPLICAS,
                }
            )
            assert throttled.ok, throttled
            result = await admin.alter_partition_reassignments({tp: [3, 1]})
            assert result[tp].error is None, result[tp]
            ongoing = await admin.list_partition_reassignments()
            assert tp in ongoing, ongoing
            move = ongoing[tp]
            assert sorted(move.replicas) == [1, 2, 3]
            assert move.adding_replicas == (1,)
            assert move.removing_replicas == (2,)
            assert move.target_replicas == (3, 1)
            # Listing by partition agrees; another topic's partition is simply absent.
            assert await admin.list_partition_reassignments([tp]) == {tp: move}
            assert await admin.list_partition_reassignments([TopicPartition("nope", 0)]) == {}
            cancel = await admin.alter_partition_reassignments({tp: None})
            assert cancel[tp].error is None, cancel[tp]
            # The controller forgets the move first; a broker's metadata cache learns the
            # restored replica set a moment later.
            await _until_moved(admin, cluster, tp, [2, 3])
        finally:
            # The cluster is the module's: the other tests replicate at full speed.
            unthrottled = await admin.incremental_alter_configs(
                {b: dict.fromkeys(_THROTTLE) for b in brokers}
            )
            assert unthrottled.ok, unthrottled


_ENV = {**os.environ, "NO_COLOR": "1", "KAFKA_BOOTSTRAP_SERVERS": "", "PYTHONUNBUFFERED": "1"}


def _cli(bootstrap: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kafka_async.cli", "-b", bootstrap, "--timeout", "30", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=_ENV,
        check=False,
    )


async def test_cli_reassign_start_wait_list_cancel(apache_cluster: ApacheKafka) -> None:
    cluster = apache_cluster
    topic = await _topic(cluster, {0: [1, 2]})
    boot = cluster.bootstrap_servers
    started = await anyio.to_thread.run_sync(
        _cli, boot, "reassign", "start", f"{topic}:0=2,3", "--wait"
    )
    assert started.returncode == 0, (started.stdout, started.stderr)
    said = started.stdout + started.stderr
    assert f"{topic}:0: moving to 2,3" in said
    assert "done in" in said
    # The controller has finished the move; a broker's metadata cache learns it a moment later.
    async with AdminClient(boot) as admin:
        await _until_moved(admin, cluster, TopicPartition(topic, 0), [2, 3])
    listed = await anyio.to_thread.run_sync(_cli, boot, "reassign", "list", topic)
    assert listed.returncode == 0, (listed.stdout, listed.stderr)
    assert "no partition is being moved" in listed.stdout + listed.stderr
    # Cancelling what is not moving: exit 1, the broker's reason on one line.
    cancel = await anyio.to_thread.run_sync(_cli, boot, "reassign", "cancel", f"{topic}:0")
    assert cancel.returncode == 1, (cancel.stdout, cancel.stderr)
    assert "NO_REASSIGNMENT_IN_PROGRESS" in cancel.stdout + cancel.stderr
    # Usage errors are exit 2 and name the problem.
    bad = await anyio.to_thread.run_sync(_cli, boot, "reassign", "start", f"{topic}:0=2,x")
    assert bad.returncode == 2, (bad.stdout, bad.stderr)
    assert "broker ids" in bad.stderr
