"""KIP-951 for the consumer on the three-node cluster: the leadership of a partition moves
while our consumer reads it; the old leader, still up, answers the next Fetch (v16+) with
NOT_LEADER_OR_FOLLOWER naming the new leader, and the consumer goes on from the new leader
without waiting for a metadata refresh, every record read once and in order. A broker that
advertises Fetch below v16 sends no hint: there the move is still checked (every record once
and in order, the consumer learning of it from metadata), and the hint checks are skipped
with the broker's ApiVersions range."""

from __future__ import annotations

import anyio
import pytest
from cluster_support import new_topic

from kafka_async import AdminClient, Consumer, Producer
from kafka_async.protocol.apis import FETCH
from kafka_async.structs import ConsumerRecord, TopicPartition
from kafka_async.testing.apache import ApacheKafka
from kafka_async.testing.capabilities import advertised_apis

pytestmark = [pytest.mark.integration, pytest.mark.anyio, pytest.mark.timeout(300)]

N = 300
#: The first Fetch version whose answers carry the new leader (KIP-951).
HINT_FETCH_VERSION = 16


async def _send(bootstrap: str, topic: str, start: int, n: int) -> None:
    async with Producer(bootstrap, acks="all", linger_ms=5) as p:
        for i in range(start, start + n):
            await p.enqueue(topic, b"v%d" % i, key=b"%d" % i)
        await p.flush()


async def _leader(cluster: ApacheKafka, topic: str) -> int:
    return await anyio.to_thread.run_sync(cluster.leader_of, topic, 0)


async def test_consumer_follows_a_moved_leader_from_the_fetch_answer(
    apache_cluster: ApacheKafka,
) -> None:
    cluster = apache_cluster
    boot = cluster.bootstrap_servers
    topic = await new_topic(cluster, 1, prefix="hint", assignment={0: [1, 2, 3]})
    tp = TopicPartition(topic, 0)
    advertised = await anyio.to_thread.run_sync(advertised_apis, boot)
    fetch = advertised.get(FETCH.key)
    hints = fetch is not None and fetch[1] >= HINT_FETCH_VERSION
    assert await _leader(cluster, topic) == 1
    await _send(boot, topic, 0, N)
    got: list[ConsumerRecord[bytes, bytes]] = []

    async def read_until(n: int) -> None:
        with anyio.fail_after(30):
            while len(got) < n:
                for recs in (await c.getmany(timeout_ms=200, max_records=50)).values():
                    got.extend(recs)

    async with Consumer(
        bootstrap_servers=boot,
        fetch_max_wait_ms=100,
        # No periodic refresh during the test: the move is learnt from Fetch answers.
        metadata_max_age_ms=300_000,
    ) as c:
        c.assign([tp])
        c.seek(tp, 0)
        await read_until(N // 2)
        refreshes = c._client.statistics()["refreshes"]
        # Partition 0's preferred replica becomes 2 (same replicas, new order), then the
        # preferred election hands it the leadership; node 1 stays up.
        async with AdminClient(boot) as admin:
            moved = await admin.alter_partition_reassignments({tp: [2, 1, 3]})
            assert moved.ok, moved.errors
            with anyio.fail_after(30):
                while await admin.list_partition_reassignments([tp]):  # noqa: ASYNC110 - polls state no event announces
                    await anyio.sleep(0.1)
            with anyio.fail_after(30):
                while await _leader(cluster, topic) != 2:
                    await admin.elect_leaders([tp])
                    await anyio.sleep(0.2)
        await _send(boot, topic, N, N)
        await read_until(2 * N)
        await c.getmany(timeout_ms=300)
        fetcher = c.statistics()["fetcher"]
        client = c._client.statistics()
    keys = [r.key for r in got]
    assert keys == [b"%d" % i for i in range(2 * N)], "records lost, repeated or reordered"
    assert [r.offset for r in got] == list(range(2 * N))
    assert fetcher["fetches_by_node"].get(2, 0) >= 1, fetcher
    if not hints:
        said = "no Fetch" if fetch is None else f"Fetch v{fetch[0]}-v{fetch[1]}"
        pytest.skip(
            f"Apache Kafka {cluster.version} ({cluster.mode}) advertises {said}; leader hints "
            f"in Fetch answers (KIP-951) need v{HINT_FETCH_VERSION}+ (checked: the consumer "
            "followed the moved leader through metadata, every record once and in order)"
        )
    assert fetcher["leader_hints"] >= 1, fetcher
    assert fetcher["fetches_by_node"].get(2, 0) >= 1, fetcher
    assert set(fetcher["fetches_by_version"]) == {17}, fetcher
    assert client["leader_hints"] >= 1, client
    print(
        "KIP-951:",
        {
            "leader_hints": fetcher["leader_hints"],
            "metadata_refreshes_during_move": client["refreshes"] - refreshes,
            "fetches_by_node": fetcher["fetches_by_node"],
        },
    )
