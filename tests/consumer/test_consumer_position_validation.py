"""KIP-320 position validation, with injected answers (FakeBroker): after the metadata shows
a new leader epoch for a partition the consumer has a position in, it stops fetching that
partition and asks the leader (OffsetForLeaderEpoch) where the epoch of the last record it
read ends; the answer decides: read on, move back to where the logs part (a reset strategy
is set), or raise LogTruncationError (``auto_offset_reset="none"``).

The same on a real cluster with a really truncated log: tests/cluster_apache/
test_cluster_truncation.py."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Literal

import anyio
import pytest
from consumer_helpers import fetch_topic

from kafka_async.consumer import Consumer, LogTruncationError
from kafka_async.protocol.apis import FETCH, LIST_OFFSETS, METADATA, OFFSET_FOR_LEADER_EPOCH
from kafka_async.records.batch import build_batch
from kafka_async.structs import TopicPartition
from tests.harness.fake_broker import FakeBroker, FakeRequest

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

TP = TopicPartition("t", 0)


def _batch(base: int, n: int, epoch: int, tag: bytes) -> bytes:
    return build_batch(
        [(None, None, tag + b"%d" % (base + i), None) for i in range(n)],
        base_offset=base,
        partition_leader_epoch=epoch,
    )


class Log:
    """The partition as the leader serves it: offsets 0-9 written in epoch 3; after the
    leader change either offsets 10-12 follow in epoch 5 (nothing lost), or the new
    leader's log forked after offset 5 and holds 6-8 of epoch 4 (``truncated``)."""

    def __init__(self, *, truncated: bool) -> None:
        self.truncated = truncated
        self.moved = False
        self.fetches: list[Any] = []

    def fetch(self, req: FakeRequest) -> Any:
        p = req.body.topics[0].partitions[0]
        self.fetches.append(p)
        end = 9 if self.truncated and self.moved else (13 if self.moved else 10)
        part: dict[str, Any] = {
            "partition_index": 0,
            "error_code": 0,
            "high_watermark": end,
            "last_stable_offset": end,
            "log_start_offset": 0,
            "records": b"",
        }
        if p.fetch_offset == 0:
            part["records"] = _batch(0, 10, 3, b"old-")
        elif self.moved and not self.truncated and p.fetch_offset == 10:
            part["records"] = _batch(10, 3, 5, b"new-")
        elif self.moved and self.truncated and p.fetch_offset == 6:
            part["records"] = _batch(6, 3, 4, b"new-")
        return {"responses": [fetch_topic(req, part)], "session_id": 0}


def _epoch_answer(epoch: int, end_offset: int, error_code: int = 0) -> Any:
    def answer(req: FakeRequest) -> Any:
        return {
            "topics": [
                {
                    "topic": "t",
                    "partitions": [
                        {
                            "error_code": error_code,
                            "partition": 0,
                            "leader_epoch": epoch,
                            "end_offset": end_offset,
                        }
                    ],
                }
            ]
        }

    return answer


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


async def _broker(log: Log, **kw: Any) -> AsyncIterator[FakeBroker]:
    async with FakeBroker({"t": 1}, **kw) as broker:
        broker.set_default(FETCH.key, log.fetch)
        broker.set_default(LIST_OFFSETS.key, _list_offsets)
        yield broker


def _consumer(
    broker: FakeBroker, reset: Literal["earliest", "latest", "none"]
) -> Consumer[bytes, bytes]:
    return Consumer(
        bootstrap_servers=broker.address,
        auto_offset_reset=reset,
        enable_fetch_sessions=False,
        metadata_max_age_ms=200,
        retry_backoff_ms=50,
    )


async def _read(c: Consumer[bytes, bytes], n: int) -> list[tuple[int, bytes]]:
    got: list[tuple[int, bytes]] = []
    with anyio.fail_after(10):
        while len(got) < n:
            batch = await c.getmany(timeout_ms=100)
            got += [(r.offset, r.value or b"") for recs in batch.values() for r in recs]
    return got


async def _new_leader(broker: FakeBroker, log: Log) -> FakeRequest:
    """The leader changes (epoch 0 -> 1 in Metadata); the validation request it causes."""
    log.moved = True
    broker.leader_epochs[("t", 0)] = 1
    return await broker.wait_for_request(OFFSET_FOR_LEADER_EPOCH.key, timeout=10)


async def test_position_confirmed_reads_on() -> None:
    log = Log(truncated=False)
    async for broker in _broker(log):
        broker.set_default(OFFSET_FOR_LEADER_EPOCH.key, _epoch_answer(3, 10))
        async with _consumer(broker, "none") as c:
            c.assign([TP])
            c.seek(TP, 0)
            assert len(await _read(c, 10)) == 10
            req = await _new_leader(broker, log)
            asked = req.body.topics[0].partitions[0]
            # The metadata's leader epoch (fencing), and the epoch of the last record read.
            assert (asked.current_leader_epoch, asked.leader_epoch) == (1, 3)
            assert req.body.replica_id == -1
            assert await _read(c, 3) == [(10, b"new-10"), (11, b"new-11"), (12, b"new-12")]
            stats = c.statistics()["fetcher"]
            assert stats["validations"] == 1
            assert stats["truncations"] == 0


async def test_truncated_with_reset_none_raises_until_seek() -> None:
    log = Log(truncated=True)
    async for broker in _broker(log):
        broker.set_default(OFFSET_FOR_LEADER_EPOCH.key, _epoch_answer(2, 6))
        async with _consumer(broker, "none") as c:
            c.assign([TP])
            c.seek(TP, 0)
            assert len(await _read(c, 10)) == 10
            await _new_leader(broker, log)
            with pytest.raises(LogTruncationError) as info:
                await _read(c, 1)
            err = info.value
            assert (err.partition, err.position, err.divergent_offset, err.leader_epoch) == (
                TP,
                10,
                6,
                2,
            )
            # Not fetched past the truncation meanwhile; asked again, raised again.
            with pytest.raises(LogTruncationError):
                await _read(c, 1)
            c.seek(TP, err.divergent_offset)
            assert await _read(c, 3) == [(6, b"new-6"), (7, b"new-7"), (8, b"new-8")]
            assert c.statistics()["fetcher"]["truncations"] >= 1


async def test_truncated_with_a_reset_policy_moves_back_to_the_fork() -> None:
    log = Log(truncated=True)
    async for broker in _broker(log):
        broker.set_default(OFFSET_FOR_LEADER_EPOCH.key, _epoch_answer(2, 6))
        async with _consumer(broker, "earliest") as c:
            c.assign([TP])
            c.seek(TP, 0)
            assert len(await _read(c, 10)) == 10
            await _new_leader(broker, log)
            assert await _read(c, 3) == [(6, b"new-6"), (7, b"new-7"), (8, b"new-8")]
            assert c.statistics()["fetcher"]["truncations"] == 1


async def test_unknown_epoch_with_a_reset_policy_resets() -> None:
    """The leader knows no epoch at or below the one asked for (-1): the configured reset
    runs (earliest here: offset 0 per the scripted ListOffsets)."""
    log = Log(truncated=True)
    async for broker in _broker(log):
        broker.set_default(OFFSET_FOR_LEADER_EPOCH.key, _epoch_answer(-1, -1))
        async with _consumer(broker, "earliest") as c:
            c.assign([TP])
            c.seek(TP, 0)
            assert len(await _read(c, 10)) == 10
            listed = broker.stats.requests
            await _new_leader(broker, log)
            await broker.wait_for_request(LIST_OFFSETS.key, timeout=10)
            assert broker.stats.requests > listed
            first = await _read(c, 1)
            assert first[0][0] == 0


async def test_fenced_answer_is_asked_again_after_metadata() -> None:
    log = Log(truncated=False)
    async for broker in _broker(log):
        # The first answer says our leader epoch is stale (FENCED_LEADER_EPOCH, 74).
        broker.script(OFFSET_FOR_LEADER_EPOCH.key, _epoch_answer(-1, -1, 74), count=1)
        broker.set_default(OFFSET_FOR_LEADER_EPOCH.key, _epoch_answer(3, 10))
        async with _consumer(broker, "none") as c:
            c.assign([TP])
            c.seek(TP, 0)
            assert len(await _read(c, 10)) == 10
            await _new_leader(broker, log)
            assert await _read(c, 3) == [(10, b"new-10"), (11, b"new-11"), (12, b"new-12")]
            asked = [r for r in broker.requests if r.api_key == OFFSET_FOR_LEADER_EPOCH.key]
            assert len(asked) >= 2


async def test_broker_without_offset_for_leader_epoch_v3_skips_validation() -> None:
    log = Log(truncated=False)
    async for broker in _broker(log, api_versions={OFFSET_FOR_LEADER_EPOCH.key: (0, 2)}):
        async with _consumer(broker, "none") as c:
            c.assign([TP])
            c.seek(TP, 0)
            assert len(await _read(c, 10)) == 10
            broker.leader_epochs[("t", 0)] = 1
            # The consumer has seen the new epoch (two metadata answers later) before the
            # new leader's records exist: they are read only if validation was skipped.
            for _ in range(2):
                await broker.wait_for_request(METADATA.key, timeout=10)
            with anyio.fail_after(10):
                while c.statistics()["fetcher"]["validations"] < 1:
                    await c.getmany(timeout_ms=50)
            log.moved = True
            assert await _read(c, 3) == [(10, b"new-10"), (11, b"new-11"), (12, b"new-12")]
            assert not [r for r in broker.requests if r.api_key == OFFSET_FOR_LEADER_EPOCH.key]
