"""Leader epochs in the consumer (KIP-320): fetches carry the leader epoch the metadata knows
(not the epoch of the last record read), so a position taken before a leader change keeps
working after it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from consumer_helpers import fetch_topic, produce

from kafka_async.admin import AdminClient
from kafka_async.consumer import Consumer, LogTruncationError
from kafka_async.protocol.apis import FETCH, LIST_OFFSETS
from kafka_async.records.batch import build_batch
from kafka_async.structs import OffsetAndMetadata, TopicPartition
from kafka_async.testing.apache import ApacheKafka
from kafka_async.testing.topics import create_topic
from tests.harness.fake_broker import FakeBroker, FakeRequest

pytestmark = pytest.mark.integration


async def _leader_epoch(bootstrap: str, topic: str) -> int:
    async with AdminClient(bootstrap_servers=bootstrap) as admin:
        desc = (await admin.describe_topics([topic]))[topic]
    return desc.partitions[0].leader_epoch


@pytest.mark.anyio
async def test_committed_position_from_an_older_leader_epoch_is_read_on(
    apache_kafka: ApacheKafka,
) -> None:
    """The group's committed offset carries the leader epoch of its records (as Java and
    librdkafka commit it); the leader is elected again under a newer epoch (a restart);
    a member resuming there reads on. Sending the committed epoch as the fetch's current
    leader epoch (what the fetcher did before KIP-320) was fenced on every fetch."""
    bootstrap = apache_kafka.bootstrap_servers
    async with AdminClient(bootstrap_servers=bootstrap) as admin:
        finalized = (await admin.describe_features()).finalized
    if "metadata.version" not in finalized:
        # A ZooKeeper-mode controller elects no leader again when the only replica comes
        # back: it keeps the leader and its epoch (seen on 2.8.2 and 3.6.2: the epoch stayed 0
        # for 60 s after the restart). A KRaft cluster (metadata.version finalized) fences
        # the node and elects it again under a newer epoch.
        pytest.skip(
            "the broker finalizes no metadata.version (ApiVersions finalized features: "
            f"{sorted(finalized)}): no KRaft controller, so a restart of the only replica "
            "keeps the partition's leader epoch and there is no newer epoch to resume under"
        )
    topic = "epochs"
    create_topic(bootstrap, topic, 1)
    produce(bootstrap, topic, 100)
    first = await _leader_epoch(bootstrap, topic)
    kw: dict[str, Any] = {
        "bootstrap_servers": bootstrap,
        "group_id": "epochs",
        "auto_offset_reset": "earliest",
        "enable_auto_commit": False,
    }
    async with Consumer(topic, **kw) as c:
        await c.wait_for_assignment(60)
        await c.commit({TopicPartition(topic, 0): OffsetAndMetadata(50, "", first)})
    await anyio.to_thread.run_sync(apache_kafka.restart)
    with anyio.fail_after(60):
        while (now := await _leader_epoch(bootstrap, topic)) <= first:  # noqa: ASYNC110
            await anyio.sleep(0.5)
    async with Consumer(topic, **kw) as c:
        rest: list[int] = []
        with anyio.fail_after(60):
            while len(rest) < 50:
                batch = await c.getmany(timeout_ms=200)
                rest += [r.offset for recs in batch.values() for r in recs]
        assert rest == list(range(50, 100))
        # Commits carry the epoch of the records read (KIP-320).
        await c.commit()
        committed = await c.committed(TopicPartition(topic, 0))
        assert committed == 100
    assert now > first


# -- injected answers (FakeBroker) ------------------------------------------------------------

TP = TopicPartition("t", 0)


def _batch(base: int, n: int, epoch: int, tag: bytes) -> bytes:
    return build_batch(
        [(None, None, tag + b"%d" % (base + i), None) for i in range(n)],
        base_offset=base,
        partition_leader_epoch=epoch,
    )


class Log:
    """A scripted partition: what Fetch returns at each offset, and the diverging epoch to
    answer once the consumer has read past ``truncate_at``."""

    def __init__(self) -> None:
        self.truncated = False
        self.requests: list[Any] = []

    def fetch(self, req: FakeRequest) -> Any:
        p = req.body.topics[0].partitions[0]
        self.requests.append(p)
        part: dict[str, Any] = {
            "partition_index": 0,
            "error_code": 0,
            "high_watermark": 10,
            "last_stable_offset": 10,
            "log_start_offset": 0,
            "records": b"",
        }
        if not self.truncated:
            if p.fetch_offset == 0:
                # The old leader's log: offsets 0-9, written in leader epoch 3.
                part["records"] = _batch(0, 10, 3, b"old-")
            else:
                # An unclean election: the new leader's log forked after offset 5 (its
                # epoch 2 ends at 6); it wrote offsets 6-8 in epoch 4.
                self.truncated = True
                part["diverging_epoch"] = {"epoch": 2, "end_offset": 6}
                part["high_watermark"] = part["last_stable_offset"] = 9
        elif p.fetch_offset == 6:
            part["records"] = _batch(6, 3, 4, b"new-")
            part["high_watermark"] = part["last_stable_offset"] = 9
        return {"responses": [fetch_topic(req, part)], "session_id": 0}


def _list_offsets(req: FakeRequest) -> Any:
    return {
        "topics": [
            {
                "name": "t",
                "partitions": [
                    {"partition_index": 0, "error_code": 0, "timestamp": -1, "offset": 0}
                ],
            }
        ]
    }


@pytest.fixture
async def scripted() -> AsyncIterator[tuple[FakeBroker, Log]]:
    async with FakeBroker({"t": 1}) as broker:
        log = Log()
        broker.set_default(FETCH.key, log.fetch)
        broker.set_default(LIST_OFFSETS.key, _list_offsets)
        yield broker, log


async def _read(c: Consumer[bytes, bytes], n: int) -> list[tuple[int, bytes]]:
    got: list[tuple[int, bytes]] = []
    with anyio.fail_after(10):
        while len(got) < n:
            batch = await c.getmany(timeout_ms=200)
            got += [(r.offset, r.value or b"") for recs in batch.values() for r in recs]
    return got


@pytest.mark.anyio
async def test_diverging_epoch_with_reset_none_raises_log_truncation(
    scripted: tuple[FakeBroker, Log],
) -> None:
    broker, log = scripted
    async with Consumer(
        bootstrap_servers=broker.address, auto_offset_reset="none", enable_fetch_sessions=False
    ) as c:
        c.assign([TP])
        c.seek(TP, 0)
        assert len(await _read(c, 10)) == 10

        async def poll() -> None:
            with anyio.fail_after(10):
                while True:
                    await c.getmany(timeout_ms=200)

        with pytest.raises(LogTruncationError) as info:
            await poll()
        err = info.value
        assert err.partition == TP
        assert err.position == 10
        assert err.divergent_offset == 6
        assert err.leader_epoch == 2
        assert "t-0" in str(err)
        # The fetch carried the metadata's leader epoch (0 on this broker) as the current
        # one, and the epoch of the records read (3) as the last fetched one.
        second = log.requests[1]
        assert second.fetch_offset == 10
        assert second.current_leader_epoch == 0
        assert second.last_fetched_epoch == 3
        # The application decides: back to the fork, and the new leader's records follow.
        c.seek(TP, err.divergent_offset)
        assert await _read(c, 3) == [(6, b"new-6"), (7, b"new-7"), (8, b"new-8")]


@pytest.mark.anyio
async def test_diverging_epoch_with_a_reset_policy_reads_on_from_the_fork(
    scripted: tuple[FakeBroker, Log],
) -> None:
    broker, log = scripted
    async with Consumer(
        bootstrap_servers=broker.address,
        auto_offset_reset="earliest",
        enable_fetch_sessions=False,
    ) as c:
        c.assign([TP])
        c.seek(TP, 0)
        assert len(await _read(c, 10)) == 10
        # Truncated to 6: the records from the fork on are the new leader's.
        assert await _read(c, 3) == [(6, b"new-6"), (7, b"new-7"), (8, b"new-8")]
        assert await c.position(TP) == 9
        assert c.statistics()["fetcher"]["truncations"] == 1
        # The next fetch (offset 9) carries the epoch of the new leader's records.
        with anyio.fail_after(10):
            while not any(r.fetch_offset == 9 for r in log.requests):
                await c.getmany(timeout_ms=100)
        at_fork = next(r for r in log.requests if r.fetch_offset == 6)
        assert at_fork.last_fetched_epoch == 2
        after = next(r for r in log.requests if r.fetch_offset == 9)
        assert after.last_fetched_epoch == 4
