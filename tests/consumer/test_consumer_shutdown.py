"""Consumer shutdown: an outer cancellation still commits and leaves; close() before the
join is quiet; group metadata for transactions."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from consumer_helpers import produce

from kafka_async.admin import AdminClient
from kafka_async.consumer import Consumer, ConsumerGroupMetadata
from kafka_async.errors import ConfigError
from kafka_async.producer.transaction import group_metadata_fields
from kafka_async.structs import ConsumerRecord, TopicPartition

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

#: A session long enough that a member which did not send LeaveGroup is still listed when
#: the test looks (a ghost), short enough that Tansu's join round stays a few seconds.
GROUP: dict[str, Any] = {
    "session_timeout_ms": 6_000,
    "heartbeat_interval_ms": 500,
    "auto_offset_reset": "earliest",
}


async def group_members(bootstrap: str, group: str) -> tuple[str, int]:
    async with AdminClient(bootstrap) as admin:
        got = await admin.describe_groups([group], raise_on_error=True)
        desc = got[group]
        return desc.state, len(desc.members)


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_outer_cancel_commits_and_leaves_group(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """Regression: cancelling the scope around ``async with Consumer`` (FastAPI shutdown)
    cancelled the background tasks before close(): the final auto commit failed and
    LeaveGroup was never sent (offsets lost, a ghost member left in the group)."""
    topic = new_topic(2)
    produce(kafka_broker, topic, 40, partitions=2)
    group = f"g-{topic}"
    got: list[ConsumerRecord[bytes, bytes]] = []
    consumed = anyio.Event()
    closed_at: list[float] = []
    revoked: list[set[TopicPartition]] = []

    class Listener:
        async def on_partitions_revoked(self, tps: set[TopicPartition]) -> None:
            revoked.append(tps)

        async def on_partitions_assigned(self, tps: set[TopicPartition]) -> None:
            pass

    async def consume() -> None:
        try:
            async with Consumer(
                topic,
                listener=Listener(),
                bootstrap_servers=kafka_broker,
                group_id=group,
                enable_auto_commit=True,
                auto_commit_interval_ms=600_000,  # only close() commits
                close_timeout_ms=10_000,
                **GROUP,
            ) as c:
                try:
                    async for record in c:
                        got.append(record)
                        if len(got) == 40:
                            consumed.set()
                finally:
                    # The application's own shutdown work (flushing its outputs) runs
                    # first: by the time close() runs, the outer cancellation has reached
                    # every task it can reach.
                    with anyio.CancelScope(shield=True):
                        await anyio.sleep(0.5)
        finally:
            closed_at.append(time.monotonic())

    async with anyio.create_task_group() as tg:
        tg.start_soon(consume)
        with anyio.fail_after(60):
            await consumed.wait()
        cancelled_at = time.monotonic()
        tg.cancel_scope.cancel()
    # The application's 0.5 s plus close_timeout_ms (10 s) at most, with CI slack; it
    # normally takes a second or two.
    assert closed_at[0] - cancelled_at < 10.5 + 4, "close() did not keep its deadline"
    assert len(got) == 40
    assert revoked == [{TopicPartition(topic, 0), TopicPartition(topic, 1)}]
    state, members = await group_members(kafka_broker, group)
    assert members == 0, f"ghost member left behind (group {state}, {members} members)"
    async with Consumer(bootstrap_servers=kafka_broker, group_id=group) as check:
        for p in (0, 1):
            assert await check.committed(TopicPartition(topic, p)) == 20


async def test_outer_cancel_with_broker_gone_returns_within_deadline(
    embedded_broker: Any,
) -> None:
    """The shielded close() still keeps its deadline when nothing answers."""
    from kafka_async.testing.topics import acreate_topic

    bootstrap = embedded_broker.bootstrap_servers
    await acreate_topic(bootstrap, "gone-cancel", 2)
    produce(bootstrap, "gone-cancel", 20, partitions=2)
    took: list[float] = []
    with anyio.CancelScope() as outer:
        async with Consumer(
            "gone-cancel",
            bootstrap_servers=bootstrap,
            group_id="gone-cancel-g",
            close_timeout_ms=2000,
            **GROUP,
        ) as c:
            n = 0
            with anyio.fail_after(30):
                while n < 20:
                    n += sum(map(len, (await c.getmany(timeout_ms=200)).values()))
            embedded_broker.kill()
            # Cancel once the consumer has noticed (a failed heartbeat), not after a guess.
            with anyio.fail_after(20):
                while not c.statistics()["group"]["heartbeat_failures"]:  # noqa: ASYNC110
                    await anyio.sleep(0.05)
            t = time.monotonic()
            outer.cancel()
            try:
                await anyio.sleep(30)
            finally:
                took.append(t)
    assert outer.cancelled_caught
    elapsed = time.monotonic() - took[0]
    # close_timeout_ms (2 s) plus socket closing; generous for a loaded 2-core CI runner.
    assert elapsed < 2.0 + 5.0, f"close took {elapsed:.2f} s"


async def test_close_before_join_skips_the_final_commit(
    kafka_broker: str, new_topic: Callable[..., str], caplog: pytest.LogCaptureFixture
) -> None:
    """Regression: close() before the join finished logged 'final commit failed: ... not
    in a group generation'."""
    caplog.set_level(logging.WARNING, logger="kafka_async")
    topic = new_topic(1)
    c = Consumer(topic, bootstrap_servers=kafka_broker, group_id=f"g-{topic}", **GROUP)
    await c.start()
    assert c.group_metadata().generation_id == -1
    await c.close()
    messages = [r.getMessage() for r in caplog.records]
    assert not [m for m in messages if "commit" in m], messages


async def test_group_metadata_for_transactions(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(1)
    group = f"g-{topic}"
    async with Consumer(
        topic, bootstrap_servers=kafka_broker, group_id=group, group_instance_id="inst-1", **GROUP
    ) as c:
        await c.wait_for_assignment(30)
        meta = c.group_metadata()
        assert isinstance(meta, ConsumerGroupMetadata)
        stats = c.statistics()["group"]
        assert meta.group_id == group
        assert meta.generation_id == stats["generation_id"] >= 0
        assert meta.member_id == stats["member_id"] != ""
        assert meta.group_instance_id == "inst-1"
        # What Producer.send_offsets_to_transaction accepts and sends (KIP-447 fields).
        fields = group_metadata_fields(meta)
        assert (fields.group_id, fields.generation_id, fields.member_id) == (
            group,
            meta.generation_id,
            meta.member_id,
        )
        assert fields.group_instance_id == "inst-1"
    without_group = Consumer(bootstrap_servers=kafka_broker)
    with pytest.raises(ConfigError):
        without_group.group_metadata()


async def test_close_commits_only_what_changed(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """close() (final commit, then the commit on revocation) writes nothing that is already
    committed: one OffsetCommit after consuming, none after consuming nothing."""
    topic = new_topic(1)
    produce(kafka_broker, topic, 10)
    group = f"g-{topic}"
    tp = TopicPartition(topic, 0)
    cfg: dict[str, Any] = {
        "bootstrap_servers": kafka_broker,
        "group_id": group,
        "auto_commit_interval_ms": 600_000,
        **GROUP,
    }
    c: Consumer[bytes, bytes] = Consumer(topic, **cfg)
    async with c:
        await c.wait_for_assignment(30)
        n = 0
        with anyio.fail_after(30):
            while n < 10:
                n += sum(map(len, (await c.getmany(timeout_ms=500)).values()))
    assert c.statistics()["commits"] == 1
    # The same group again: its position comes from the committed offset; nothing consumed.
    c = Consumer(topic, **cfg)
    async with c:
        await c.wait_for_assignment(30)
        assert await c.position(tp) == 10
        assert c.statistics()["partitions"][f"{topic}-0"]["committed"] == 10
    assert c.statistics()["commits"] == 0
    async with Consumer(bootstrap_servers=kafka_broker, group_id=group) as check:
        assert await check.committed(tp) == 10
