"""Upgrading a live consumer group from the classic protocol to the consumer protocol
(KIP-848 online migration), the documented path (docs/guides/consumer-groups.md): a rolling
restart, one member at a time, each restarted with ``group_protocol="consumer"``.

The group runs two classic members (cooperative-sticky, auto commit). Member 1 is stopped
and comes back on the consumer protocol: the broker converts the group (its type turns
"consumer") while member 2 keeps reading on the classic protocol inside it. Then member 2
does the same. Every record is read exactly once over the whole upgrade (each member commits
what it was handed before it gives a partition up), the group ends as a consumer group, and
its committed offsets are the ends of the partitions.

Runs where the broker advertises ConsumerGroupHeartbeat v1 (Apache Kafka 4.0+), whose
``group.consumer.migration.policy`` allows upgrades by default (``bidirectional``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from consumer_helpers import produce

from kafka_async.admin import AdminClient, ConfigResource
from kafka_async.consumer import Consumer
from kafka_async.structs import TopicPartition

pytestmark = [
    pytest.mark.integration,
    pytest.mark.anyio,
    pytest.mark.requires_api("ConsumerGroupHeartbeat", 1),
]

PARTITIONS = 4
TOTAL = 2000


async def _group_type(admin: AdminClient, group: str) -> str:
    listing = {g.group_id: g for g in await admin.list_groups()}
    return str(listing[group].type)


async def _drain(
    members: list[Consumer[bytes, bytes]],
    seen: Counter[tuple[int, int]],
    until: Callable[[], bool],
) -> None:
    with anyio.fail_after(60):
        while not until():
            for c in members:
                batch = await c.getmany(timeout_ms=50, max_records=20)
                for recs in batch.values():
                    seen.update((r.partition, r.offset) for r in recs)


def _all_owned(members: list[Consumer[bytes, bytes]]) -> Callable[[], bool]:
    def check() -> bool:
        sets = [m.assignment() for m in members]
        return all(sets) and sum(map(len, sets)) == PARTITIONS

    return check


async def test_rolling_upgrade_from_classic_to_consumer(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(PARTITIONS)
    produce(kafka_broker, topic, TOTAL, partitions=PARTITIONS)
    group = f"upgrade-{topic}"
    common: dict[str, Any] = {
        "bootstrap_servers": kafka_broker,
        "group_id": group,
        "auto_offset_reset": "earliest",
        "enable_auto_commit": True,
        "auto_commit_interval_ms": 300,
    }
    classic = {
        **common,
        "group_protocol": "classic",
        "partition_assignment_strategy": "cooperative-sticky",
        "session_timeout_ms": 6000,
        "heartbeat_interval_ms": 500,
    }
    modern = {**common, "group_protocol": "consumer"}
    seen: Counter[tuple[int, int]] = Counter()
    async with AdminClient(bootstrap_servers=kafka_broker) as admin:
        await admin.incremental_alter_configs(
            {ConfigResource.group(group): {"consumer.heartbeat.interval.ms": "500"}},
            raise_on_error=True,
        )
        async with Consumer(topic, **classic) as c2:
            async with Consumer(topic, **classic) as c1:
                await _drain([c1, c2], seen, _all_owned([c1, c2]))
                await _drain([c1, c2], seen, lambda: len(seen) >= TOTAL // 4)
                assert await _group_type(admin, group) == "classic"
            # Member 1 restarted on the consumer protocol; member 2 is still classic.
            async with Consumer(topic, **modern) as m1:
                await _drain([c2, m1], seen, _all_owned([c2, m1]))
                assert await _group_type(admin, group) == "consumer"
                await _drain([c2, m1], seen, lambda: len(seen) >= TOTAL // 2)
                await c2.close()
                # Member 2 restarted on the consumer protocol too.
                async with Consumer(topic, **modern) as m2:
                    await _drain([m1, m2], seen, _all_owned([m1, m2]))
                    await _drain([m1, m2], seen, lambda: len(seen) >= TOTAL)
                    assert m1.statistics()["group"]["group_protocol"] == "consumer"
                    assert await _group_type(admin, group) == "consumer"
        committed = await admin.list_consumer_group_offsets(group, raise_on_error=True)
    # Nothing lost, nothing read twice.
    assert set(seen) == {(p, o) for p in range(PARTITIONS) for o in range(TOTAL // PARTITIONS)}
    twice = {k: n for k, n in seen.items() if n > 1}
    assert not twice, sorted(twice)[:10]
    assert {tp: o.offset for tp, o in committed.items()} == {
        TopicPartition(topic, p): TOTAL // PARTITIONS for p in range(PARTITIONS)
    }
