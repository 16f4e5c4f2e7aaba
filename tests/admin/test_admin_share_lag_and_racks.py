"""Share group admin of Kafka 4.2+, against a real broker: the share lag in
``list_share_group_offsets`` (KIP-1226, DescribeShareGroupOffsets v1) and the members' racks
in ``describe_share_groups`` (KIP-1227).

The lag test runs where the broker advertises DescribeShareGroupOffsets v1 (Apache Kafka
4.2+) and checks that an older one (4.1) answers without it (lag -1); both are skipped with
what the broker advertised where the other applies.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
import pytest

from kafka_async.admin import AdminClient
from kafka_async.admin.results import ResultMap
from kafka_async.admin.share_groups import ShareGroupOffset
from kafka_async.consumer.share import ShareConsumer, ShareConsumerSettings
from kafka_async.errors import GroupIdNotFoundError
from kafka_async.structs import TopicPartition
from kafka_async.testing.capabilities import api_key_of
from kafka_async.testing.plugin import KafkaService
from tests.share.test_share_consumer import Records, produce, share_group

pytestmark = [pytest.mark.integration, pytest.mark.requires_api("ShareGroupHeartbeat", 1)]

T = TypeVar("T")


def _group(name: str) -> str:
    return f"share-{name}-{time.monotonic_ns()}"


async def _until(get: Callable[[], Awaitable[T]], ok: Callable[[T], bool], what: str) -> T:
    """Poll ``get`` until ``ok`` (the share coordinator persists state asynchronously)."""
    last: T | None = None
    with anyio.move_on_after(20):
        while True:
            last = await get()
            if ok(last):
                return last
            await anyio.sleep(0.2)
    raise AssertionError(f"{what}: not reached within 20 s; last answer {last!r}")


async def _consume(bootstrap: str, topic: str, group: str, count: int) -> None:
    """Join ``group`` and accept ``count`` records (implicit mode: commit accepts what the
    polls delivered; close releases what else the fetches acquired)."""
    got = 0
    async with ShareConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=group,
        max_poll_records=count,
    ) as consumer:
        with anyio.fail_after(60):  # a fresh broker creates its share-state topic first
            while got < count:
                records: Records = await consumer.getmany(timeout_ms=500, max_records=count - got)
                got += sum(len(rs) for rs in records.values())
        assert set((await consumer.commit()).values()) <= {None}


@pytest.mark.anyio
async def test_share_lag_follows_what_the_group_acknowledged(
    kafka_service: KafkaService, kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """10 records, 4 accepted: lag 6 from start offset 4; 5 more produced: lag 11; the
    other 11 accepted: lag 0. A broker without DescribeShareGroupOffsets v1 says -1."""
    have = kafka_service.apis().get(api_key_of("DescribeShareGroupOffsets"))
    topic = new_topic(1)
    tp = TopicPartition(topic, 0)
    group = _group("lag")
    await share_group(kafka_broker, group)
    await produce(kafka_broker, topic, 10)
    await _consume(kafka_broker, topic, group, 4)

    async with AdminClient(kafka_broker) as admin:

        async def offsets() -> ShareGroupOffset:
            got: ResultMap[TopicPartition, ShareGroupOffset]
            got = await admin.list_share_group_offsets(group, raise_on_error=True)
            return got.get(tp) or ShareGroupOffset(topic, 0)

        if have is None or have[1] < 1:
            old = await _until(offsets, lambda o: o.start_offset == 4, "start offset 4")
            assert old.lag == -1
            said = "nothing" if have is None else f"v{have[0]}-v{have[1]}"
            pytest.skip(
                f"{kafka_service.kind} {kafka_service.version} advertises "
                f"DescribeShareGroupOffsets {said}: no lag before v1 (checked: -1)"
            )
        first = await _until(offsets, lambda o: (o.start_offset, o.lag) == (4, 6), "lag 6")
        assert first.error is None
        await produce(kafka_broker, topic, 5)
        await _until(offsets, lambda o: (o.start_offset, o.lag) == (4, 11), "lag 11")
        await _consume(kafka_broker, topic, group, 11)
        # The start offset the coordinator reports moves lazily (it persists the state
        # in snapshots); the lag counts what is acknowledged at once.
        await _until(offsets, lambda o: o.lag == 0 and o.start_offset >= 4, "lag 0")


@pytest.mark.anyio
async def test_share_group_members_show_their_racks(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """Two members, one with ``client_rack``: each member's description carries its rack
    (None for the one without)."""
    topic = new_topic(1)
    group = _group("racks")
    await share_group(kafka_broker, group)
    settings: ShareConsumerSettings = {"bootstrap_servers": kafka_broker, "group_id": group}
    racked: ShareConsumerSettings = {**settings, "client_rack": "rack-a"}
    async with (
        ShareConsumer(topic, **racked) as a,
        ShareConsumer(topic, **settings) as b,
        AdminClient(kafka_broker) as admin,
    ):

        async def members() -> dict[str, str | None]:
            desc = (await admin.describe_share_groups([group]))[group]
            if isinstance(desc.error, GroupIdNotFoundError):
                return {}  # no member's first heartbeat has reached the coordinator yet
            if desc.error is not None:
                raise desc.error
            return {m.member_id: m.rack_id for m in desc.members}

        got = await _until(members, lambda m: len(m) == 2, "both members")
        assert got == {a.member_id: "rack-a", b.member_id: None}
