"""KIP-1251 assignment epochs (Apache Kafka 4.3+) with the consumer group protocol, on 4.4.0.

A 4.3+ coordinator remembers, per partition, the member epoch at which it was assigned to its
member, and takes an OffsetCommit when ``assignment epoch <= sent epoch <= member epoch`` and
the partition is the sender's. So a commit of a partition that has moved to another member
(a zombie's commit: sent before the member learnt of the move, or repeated after it) is
refused with STALE_MEMBER_EPOCH whatever the epoch, while a commit of a partition the member
still holds, sent at an epoch older than the member's latest, is taken. No request field
changed (OffsetCommit v10 and ConsumerGroupHeartbeat v1 are as in 4.1; read from the
kafka-clients-4.4.0 jar): the member sends its member epoch as before.

The defect this file pins: a commit refused with STALE_MEMBER_EPOCH was sent again with the
member's current epoch until the commit's deadline; a 4.4 broker refuses the moved partition
at every epoch, so the zombie's commit ended in ``KafkaTimeoutError`` a full deadline later.
It now fails at once with ``CommitFailedError`` (cause ``StaleMemberEpochError``), as the Java
client fails it, and the partition's new owner keeps its committed offset.

The file starts its own Apache Kafka 4.4.0 (one node, small heap), whatever the run's broker.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import pytest

from kafka_async.admin import AdminClient, ConfigResource
from kafka_async.consumer import CommitFailedError, Consumer
from kafka_async.errors import StaleMemberEpochError
from kafka_async.structs import OffsetAndMetadata, TopicPartition
from kafka_async.testing.apache import ApacheKafka, KafkaPrerequisiteError
from kafka_async.testing.plugin import skip_or_fail
from kafka_async.testing.topics import create_topic

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

VERSION = "4.4.0"


@pytest.fixture(scope="module")
def broker_44() -> Iterator[str]:
    """One Apache Kafka 4.4.0 node: the release line with assignment epochs."""
    kafka = ApacheKafka(version=VERSION, heap="384m")
    try:
        kafka.start()
    except KafkaPrerequisiteError as exc:
        skip_or_fail(f"Apache Kafka {VERSION} cannot run here: {exc}")
    try:
        yield kafka.bootstrap_servers
    finally:
        kafka.stop()


async def _wait_for(cond: Callable[[], bool], timeout: float = 30.0) -> None:  # noqa: ASYNC109
    with anyio.fail_after(timeout):
        while not cond():  # noqa: ASYNC110 - the consumer's state has no event to wait on
            await anyio.sleep(0.05)


async def test_zombie_commit_of_a_moved_partition_is_fenced(broker_44: str) -> None:
    topic = f"kip1251-{uuid.uuid4().hex[:8]}"
    create_topic(broker_44, topic, 2)
    group = f"kip1251-{topic}"
    async with AdminClient(bootstrap_servers=broker_44) as admin:
        await admin.incremental_alter_configs(
            {ConfigResource.group(group): {"consumer.heartbeat.interval.ms": "500"}},
            raise_on_error=True,
        )
    p0, p1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
    settings: dict[str, Any] = {
        "bootstrap_servers": broker_44,
        "group_id": group,
        "group_protocol": "consumer",
        "enable_auto_commit": False,
        "auto_offset_reset": "earliest",
    }
    async with Consumer(topic, **settings) as a:
        # A alone holds both partitions; remember who it was then.
        await _wait_for(lambda: a.assignment() == {p0, p1})
        assert a._coordinator is not None
        old_epoch, member_id, _ = a._coordinator.generation()
        assert old_epoch > 0
        async with Consumer(topic, **settings) as b:
            with anyio.fail_after(30):
                while len(a.assignment()) != 1 or len(b.assignment()) != 1:
                    await a.getmany(timeout_ms=50)
                    await b.getmany(timeout_ms=50)
            (moved,) = b.assignment()
            (kept,) = a.assignment()
            assert a._coordinator.current_generation() > old_epoch
            await b.commit({moved: 7})

            # The broker's rule, seen directly (no retry): the partition A still holds is
            # taken at A's older epoch; the moved one is refused at it.
            await a._offsets.commit(
                {kept: OffsetAndMetadata(3)},
                generation_id=old_epoch,
                member_id=member_id,
                timeout=10,
            )
            with pytest.raises(StaleMemberEpochError):
                await a._offsets.commit(
                    {moved: OffsetAndMetadata(1)},
                    generation_id=old_epoch,
                    member_id=member_id,
                    timeout=10,
                )

            # A's commit path as the consumer runs it (its current epoch and partitions to
            # retry with): refused with the broker's error. Resent under A's current epoch,
            # which a 4.4 broker takes for any partition, it would overwrite B's commit.
            with pytest.raises(CommitFailedError) as info:
                await a._offsets.commit(
                    {moved: OffsetAndMetadata(1)},
                    generation_id=old_epoch,
                    member_id=member_id,
                    timeout=8,
                    current_generation=a._coordinator.current_generation,
                    assigned=a.assignment,
                )
            assert isinstance(info.value.cause, StaleMemberEpochError), info.value
            # The new owner's commit stands; A's kept partition has the relaxed commit.
            committed = await b.committed({moved, kept})
            offsets = {tp: None if om is None else om.offset for tp, om in committed.items()}
            assert offsets == {moved: 7, kept: 3}
            # A stays in the group and keeps consuming its partition.
            assert a.assignment() == {kept}
            assert a._coordinator.current_generation() > 0
