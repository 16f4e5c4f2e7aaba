"""Pure parts of fetching: decoding, positions, transactions, buffer order, sessions, config."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from kafka_async.consumer._signal import Signal
from kafka_async.consumer.config import ConsumerConfig
from kafka_async.consumer.fetch_session import FetchSession, PartitionFetch
from kafka_async.consumer.fetcher import CompletedFetch, Fetcher, next_fetch_offset
from kafka_async.consumer.positions import EARLIEST, SubscriptionState
from kafka_async.errors import (
    ConfigError,
    CorruptRecordError,
    KafkaError,
    RecordDeserializationError,
)
from kafka_async.net.config import ClientConfig
from kafka_async.records.batch import BatchBuilder, ControlRecordType, control_record_payload
from kafka_async.structs import OffsetAndMetadata
from kafka_async.structs import TopicPartition as TP

T0 = TP("t", 0)
T1 = TP("t", 1)


def batch(
    base: int,
    n: int,
    *,
    pid: int = -1,
    txn: bool = False,
    codec: str | None = None,
    value: bytes = b"v",
) -> bytes:
    b = BatchBuilder(codec, batch_size_limit=1 << 20, is_transactional=txn)
    for i in range(n):
        b.append(1000 + base + i, str(base + i).encode(), value, [("h", b"1")])
    return b.build(pid, 0 if pid >= 0 else -1, 0 if pid >= 0 else -1, base_offset=base)


def marker(offset: int, pid: int, kind: int) -> bytes:
    b = BatchBuilder(None, is_transactional=True, is_control=True)
    key, value = control_record_payload(kind, 0)
    b.append(1, key, value)
    return b.build(pid, 0, -1, base_offset=offset)


def config(**kw: Any) -> ConsumerConfig:
    return ConsumerConfig(client=ClientConfig(), **kw)


def offsets(records: list[Any]) -> list[int]:
    return [r.offset for r in records]


def test_next_fetch_offset_reads_headers_only() -> None:
    data = batch(0, 3) + batch(3, 5)
    assert next_fetch_offset(data, 0) == 8
    # A batch cut short by the broker is ignored.
    assert next_fetch_offset(data[:-7], 0) == 3
    assert next_fetch_offset(b"", 42) == 42


def test_take_respects_position_limit_and_headers() -> None:
    data = batch(0, 5) + batch(5, 5, codec="lz4")
    cf = CompletedFetch(T0, 0, 0, data, 10)
    recs, pos, done = cf.take(2, 4, config())
    assert offsets(recs) == [2, 3, 4, 5]
    assert pos == 6
    assert not done
    assert recs[0].key == b"2"
    assert recs[0].headers == [("h", b"1")]
    assert recs[0].timestamp == 1002
    assert recs[0].serialized_value_size == 1
    recs, pos, done = cf.take(pos, 100, config())
    assert offsets(recs) == [6, 7, 8, 9]
    assert (pos, done) == (10, True)


def test_deserializers_applied() -> None:
    cfg = config(key_deserializer=lambda b: int(b), value_deserializer=lambda b: b.upper())
    cf = CompletedFetch(T0, 0, 0, batch(0, 2), 2)
    recs, _, _ = cf.take(0, 10, cfg)
    assert [(r.key, r.value) for r in recs] == [(0, b"V"), (1, b"V")]


def test_read_committed_skips_aborted_and_markers() -> None:
    data = (
        batch(0, 2, pid=7, txn=True)  # aborted below
        + batch(2, 2, pid=8, txn=True)  # committed
        + marker(4, 7, ControlRecordType.ABORT)
        + marker(5, 8, ControlRecordType.COMMIT)
        + batch(6, 2)
    )
    cf = CompletedFetch(T0, 0, 0, data, 8, aborted=[(7, 0)], read_committed=True)
    recs, pos, done = cf.take(0, 100, config(isolation_level="read_committed"))
    assert offsets(recs) == [2, 3, 6, 7]
    assert (pos, done) == (8, True)
    # read_uncommitted shows the aborted records but never the markers.
    cf = CompletedFetch(T0, 0, 0, data, 8)
    recs, _, _ = cf.take(0, 100, config())
    assert offsets(recs) == [0, 1, 2, 3, 6, 7]


def test_position_moves_past_trailing_markers() -> None:
    data = batch(0, 1, pid=3, txn=True) + marker(1, 3, ControlRecordType.COMMIT)
    cf = CompletedFetch(T0, 0, 0, data, 2, read_committed=True)
    recs, pos, done = cf.take(0, 100, config())
    assert offsets(recs) == [0]
    assert (pos, done) == (2, True)


def test_corrupt_batch_raises_after_good_records() -> None:
    bad = bytearray(batch(3, 2))
    bad[-1] ^= 0xFF  # breaks the CRC
    cf = CompletedFetch(T0, 0, 0, batch(0, 3) + bytes(bad), 5)
    recs, pos, done = cf.take(0, 100, config())
    assert offsets(recs) == [0, 1, 2]
    assert pos == 3
    assert not done
    with pytest.raises(CorruptRecordError):
        cf.take(pos, 100, config())
    # check_crcs=False reads it.
    cf = CompletedFetch(T0, 0, 0, batch(0, 3) + bytes(bad), 5)
    recs, _, _ = cf.take(0, 100, config(check_crcs=False))
    assert len(recs) == 5


class _Meta:
    def leader_for(self, tp: TP) -> int:
        return 1

    def leader_epoch_for(self, tp: TP) -> int:
        return -1


class _NoNetwork:
    """drain() and _wanted() only read metadata; no request is ever sent in these tests."""

    metadata = _Meta()

    def request_metadata_update(self) -> None:
        raise AssertionError("not expected")


def fetcher(**kw: Any) -> tuple[Fetcher, SubscriptionState]:
    subs = SubscriptionState("earliest")
    subs.assign_from_user([T0, T1])
    subs.seek(T0, 0)
    subs.seek(T1, 0)
    f = Fetcher(_NoNetwork(), subs, config(**kw), Signal())  # type: ignore[arg-type]
    return f, subs


def add(f: Fetcher, subs: SubscriptionState, tp: TP, start: int, n: int) -> None:
    f._add(CompletedFetch(tp, subs.assignment[tp].epoch, start, batch(start, n), start + n))


def test_drain_keeps_partition_order_when_budget_runs_out() -> None:
    """Regression: a partly drained fetch was moved behind the next fetch of the same
    partition, which was then dropped as out of place, leaving a gap never refetched."""
    f, subs = fetcher()
    add(f, subs, T0, 0, 10)
    add(f, subs, T0, 10, 10)
    add(f, subs, T1, 0, 5)
    got: list[int] = []
    while True:
        out = f.drain(3)
        if not out:
            break
        got += offsets(out.get(T0, []))
    assert got == list(range(20))
    assert subs.assignment[T0].position == 20
    assert subs.assignment[T1].position == 5
    assert f.buffered_bytes == 0


def test_drain_drops_stale_and_paused_waits() -> None:
    f, subs = fetcher()
    add(f, subs, T0, 0, 5)
    add(f, subs, T1, 0, 5)
    subs.pause([T1])
    out = f.drain(100)
    assert set(out) == {T0}
    subs.resume([T1])
    assert offsets(f.drain(100)[T1]) == [0, 1, 2, 3, 4]
    # A seek makes buffered data stale: it is dropped, never handed out.
    add(f, subs, T0, 5, 5)
    subs.seek(T0, 2)
    assert f.drain(100) == {}
    assert f.buffered_bytes == 0


def test_drain_raises_stored_error_after_records() -> None:
    f, subs = fetcher()
    add(f, subs, T0, 0, 2)
    f._add(CompletedFetch(T1, subs.assignment[T1].epoch, 0, b"", 0, error=KafkaError("boom")))
    assert offsets(f.drain(100)[T0]) == [0, 1]
    with pytest.raises(KafkaError, match="boom"):
        f.drain(100)


def test_deserializer_error_repeats_until_seek() -> None:
    def picky(b: bytes) -> bytes:
        if b == b"3":
            raise ValueError("bad key")
        return b

    f, subs = fetcher(key_deserializer=picky)
    add(f, subs, T0, 0, 6)
    assert offsets(f.drain(100)[T0]) == [0, 1, 2]
    for _ in range(2):
        with pytest.raises(RecordDeserializationError, match="bad key") as info:
            f.drain(100)
        assert (info.value.offset, info.value.origin) == (3, "key")
        assert isinstance(info.value.__cause__, ValueError)
    assert subs.assignment[T0].position == 3
    subs.seek(T0, 4)
    add(f, subs, T0, 4, 2)
    assert offsets(f.drain(100)[T0]) == [4, 5]


def test_prefetch_bounds() -> None:
    f, subs = fetcher(max_partition_fetch_bytes=100, fetch_max_bytes=10_000)
    wanted, worth = f._wanted(1)
    assert set(wanted) == {T0, T1}
    assert worth
    add(f, subs, T0, 0, 20)  # > 100 bytes, not started: T0 is held back
    f._fetch_offsets[T0] = (subs.assignment[T0].epoch, 20, -1)
    wanted, worth = f._wanted(1)
    assert set(wanted) == {T1}
    # T1 caught up (offset at the high watermark) while T0 waits: not worth a long poll.
    subs.assignment[T1].high_watermark = 0
    assert f._wanted(1)[1] is False
    # Once the application starts on T0's data, T0 may be fetched again (double buffer).
    f.drain(1)
    wanted, worth = f._wanted(1)
    assert wanted[T0].fetch_offset == 20
    assert worth
    f2, subs2 = fetcher(fetch_max_bytes=10)
    add(f2, subs2, T0, 0, 5)
    assert f2._wanted(1) == ({}, False)


@pytest.mark.anyio
async def test_node_loop_holds_a_long_poll_back_while_held_back_data_waits() -> None:
    """With T0's data held back (buffered, not started) and T1 caught up, a Fetch for T1
    alone would sit out fetch_max_wait_ms on the broker. The loop looks again after each
    change instead of sending it, and asks for both once the application starts on T0
    (an ``async for`` draining in small steps emptied the buffer meanwhile and stalled)."""
    import anyio

    f, subs = fetcher(max_partition_fetch_bytes=100, fetch_max_wait_ms=60_000)
    add(f, subs, T0, 0, 20)
    f._fetch_offsets[T0] = (subs.assignment[T0].epoch, 20, -1)
    subs.assignment[T0].high_watermark = 40
    subs.assignment[T1].high_watermark = 0
    sent: list[set[TP]] = []
    asked = anyio.Event()

    async def fetch_once(
        node_id: int, session: FetchSession, wanted: Mapping[TP, PartitionFetch]
    ) -> bool:
        sent.append(set(wanted))
        asked.set()
        await anyio.sleep_forever()
        return True

    f._fetch_once = fetch_once  # type: ignore[method-assign]
    f._loops[1] = FetchSession(1)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(f._node_loop, 1)
            for _ in range(3):  # changes that leave T0 held back: nothing is sent
                await anyio.wait_all_tasks_blocked()
                f._changed.notify()
            await anyio.wait_all_tasks_blocked()
            assert sent == []
            f.drain(1)  # the application starts on T0: now worth a request, with T1 in it
            await asked.wait()
            assert sent == [{T0, T1}]
            tg.cancel_scope.cancel()


def test_fetch_session_incremental() -> None:
    s = FetchSession(1)
    a, b = PartitionFetch(0, 100), PartitionFetch(5, 100)
    plan = s.plan({T0: a, T1: b})
    assert plan.is_full
    assert (plan.session_id, plan.epoch) == (0, 0)
    s.on_response(plan, 0, 77)
    assert (s.session_id, s.epoch) == (77, 1)
    # Only the changed partition is sent; a dropped one is forgotten.
    plan = s.plan({T0: PartitionFetch(10, 100), T1: b})
    assert not plan.is_full
    assert dict(plan.to_send) == {T0: PartitionFetch(10, 100)}
    s.on_response(plan, 0, 77)
    assert s.epoch == 2
    plan = s.plan({T0: PartitionFetch(10, 100)})
    assert dict(plan.to_send) == {}
    assert plan.to_forget == (T1,)
    # A session error or a failed request starts over with a full request.
    s.on_response(plan, 71, 0)
    assert (s.session_id, s.epoch) == (0, 0)
    s.on_response(s.plan({T0: a}), 0, 5)
    s.on_failure()
    assert s.plan({T0: a}).is_full
    # A broker without sessions (id 0) keeps every request full.
    s2 = FetchSession(1)
    p = s2.plan({T0: a})
    s2.on_response(p, 0, 0)
    assert s2.plan({T0: a}).is_full
    off = FetchSession(1, enabled=False)
    assert off.plan({T0: a}).epoch == -1


def test_positions_committed_reset_and_revoking() -> None:
    subs = SubscriptionState("none")
    subs.subscribe(["t"])
    subs.assign_from_group([T0, T1], add=False)
    assert subs.needing_committed() == [T0, T1]
    assert subs.set_committed_or_reset(T0, OffsetAndMetadata(7, "", 3))
    assert not subs.set_committed_or_reset(T1, None)  # reset "none": no position
    assert subs.assignment[T0].position == 7
    assert subs.assignment[T0].leader_epoch == 3
    assert subs.missing_positions() == [T1]
    # The commit names the epoch of the records read: checked against the leader first.
    assert subs.fetchable() == []
    epoch0 = subs.assignment[T0].epoch
    assert subs.needing_validation() == {T0: (3, 7, epoch0)}
    assert subs.complete_validation(T0, epoch0, 3, 9) is None
    assert subs.fetchable() == [T0]
    subs.request_reset(T1, EARLIEST)
    epoch = subs.assignment[T1].epoch
    subs.set_reset_position(T1, 0, epoch - 1)  # an answer to an older request: ignored
    assert subs.assignment[T1].position is None
    subs.set_reset_position(T1, 4, epoch)
    assert subs.assignment[T1].position == 4
    subs.mark_revoking([T0])
    assert subs.fetchable() == [T1]
    assert subs.consumed_offsets()[T0] == OffsetAndMetadata(7, "", 3)
    with pytest.raises(ConfigError):
        subs.assign_from_user([T0])
    subs.unsubscribe()
    subs.assign_from_user([T0])
    with pytest.raises(ConfigError):
        subs.subscribe(["t"])


def test_pattern_matching_skips_internal_topics() -> None:
    subs = SubscriptionState()
    subs.subscribe_pattern(r"orders-.*")
    assert subs.match_pattern(["orders-a", "payments", "__consumer_offsets", "orders-b"])
    assert subs.topics == {"orders-a", "orders-b"}
    assert not subs.match_pattern(["orders-a", "orders-b"])
    with pytest.raises(ConfigError):
        subs.subscribe_pattern("(")


@pytest.mark.parametrize(
    "kw",
    [
        {"auto_offset_reset": "sometimes"},
        {"isolation_level": "serializable"},
        {"fetch_max_bytes": 0},
        {"max_poll_records": 0},
        {"enable_auto_commit": "yes"},
        {"group_instance_id": "x"},
        {"group_id": ""},
        {"heartbeat_interval_ms": 10_000, "session_timeout_ms": 10_000},
        {"key_deserializer": 5},
        {"partition_assignment_strategy": []},
    ],
)
def test_config_validation(kw: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        ConsumerConfig.from_kwargs(bootstrap_servers="localhost:9092", **kw)


def test_config_defaults_follow_aiokafka() -> None:
    cfg = ConsumerConfig.from_kwargs(bootstrap_servers="h:1", group_id="g")
    assert cfg.fetch_max_wait_ms == 500
    assert cfg.max_partition_fetch_bytes == 1_048_576
    assert cfg.auto_offset_reset == "latest"
    assert cfg.rebalance_timeout == cfg.max_poll_interval_ms
    assert [a.name for a in cfg.partition_assignment_strategy] == ["range", "cooperative-sticky"]
    assert cfg.client.bootstrap_servers == "h:1"


def test_fetched_records_spare_the_cyclic_gc() -> None:
    """Regression (issue 4 benchmark): about half the consumer's CPU went to the cyclic GC
    scanning millions of tracked records. Records without deserializers are built in C and
    left out of the GC; with deserializers (any object may come back) they stay tracked."""
    import gc

    from kafka_async.records import SPEEDUPS

    cf = CompletedFetch(T0, 0, 0, batch(0, 3), 3)
    recs, _, _ = cf.take(0, 10, config())
    assert [r.headers for r in recs] == [[("h", b"1")]] * 3
    if SPEEDUPS:
        assert not any(gc.is_tracked(r) or gc.is_tracked(r.headers) for r in recs)
    cf = CompletedFetch(T0, 0, 0, batch(0, 3), 3)
    recs, _, _ = cf.take(0, 10, config(value_deserializer=lambda b: [b]))
    assert all(gc.is_tracked(r) for r in recs)


def test_take_in_slices_from_the_middle_of_a_batch() -> None:
    cf = CompletedFetch(T0, 0, 0, batch(0, 50) + batch(50, 10), 60)
    got: list[int] = []
    pos, done = 17, False
    while not done:
        recs, pos, done = cf.take(pos, 7, config())
        assert len(recs) <= 7
        got += offsets(recs)
    assert got == list(range(17, 60))
    assert pos == 60


def test_position_validation_transitions() -> None:
    """KIP-320, pure: a leader change holds a partition back until validated; the answer
    confirms, moves back (reset strategy) or reports (reset "none"); stale answers and
    older metadata change nothing."""
    subs = SubscriptionState("earliest")
    subs.assign_from_user([T0, T1])
    subs.seek(T0, 10)
    st = subs.assignment[T0]
    # No epoch of a record read yet: nothing to validate against.
    assert not subs.note_leader_epoch(T0, 5)
    assert st.current_leader_epoch == 5
    st.leader_epoch = 5  # records of epoch 5 were read (drain sets it)
    assert not subs.note_leader_epoch(T0, 5)  # same leader
    assert not subs.note_leader_epoch(T0, 4)  # a broker whose metadata lags
    epoch = st.epoch
    assert subs.note_leader_epoch(T0, 6)
    assert T0 in subs.needing_validation()
    assert st.epoch == epoch + 1  # data fetched from the old leader is dropped
    assert T0 not in subs.fetchable()
    assert subs.needing_validation() == {T0: (5, 10, st.epoch)}
    # A newer leader while the question is out: the answer on its way is stale.
    stale = st.epoch
    assert not subs.note_leader_epoch(T0, 7)
    assert subs.complete_validation(T0, stale, 5, 10) is None
    assert T0 in subs.needing_validation()
    # Confirmed: epoch 5 ends at 12 >= 10.
    assert subs.complete_validation(T0, st.epoch, 5, 12) is None
    assert T0 not in subs.needing_validation()
    assert st.position == 10
    assert T0 in subs.fetchable()
    # Truncated with a reset strategy: back to where the logs part.
    assert subs.note_leader_epoch(T0, 8)
    assert subs.complete_validation(T0, st.epoch, 4, 7) is None
    assert (st.position, st.leader_epoch) == (7, 4)
    assert T0 not in subs.needing_validation()
    # No such epoch on the leader (-1): the configured reset.
    assert subs.note_leader_epoch(T0, 9)
    assert subs.complete_validation(T0, st.epoch, -1, 3) is None
    assert st.reset_to == EARLIEST
    # Reset "none": reported, and the partition stays held back until a seek.
    strict = SubscriptionState("none")
    strict.assign_from_user([T1])
    strict.seek(T1, 20)
    s1 = strict.assignment[T1]
    s1.leader_epoch = 2
    strict.note_leader_epoch(T1, 2)
    assert strict.note_leader_epoch(T1, 3)
    assert strict.complete_validation(T1, s1.epoch, 2, 15) == (20, 15)
    assert T1 in strict.needing_validation()
    assert strict.fetchable() == []
    strict.seek(T1, 15)
    assert strict.fetchable() == [T1]
    # A broker that cannot validate: fetch without it.
    assert strict.note_leader_epoch(T1, 4) is False  # no record read since the seek
    s1.leader_epoch = 3
    assert strict.note_leader_epoch(T1, 5)
    strict.skip_validation(T1, s1.epoch)
    assert strict.fetchable() == [T1]


@pytest.mark.anyio
async def test_fetch_skips_partitions_revoked_while_connecting() -> None:
    """Regression: a partition revoked (a fenced KIP-848 member losing everything) while
    the fetch waited for its connection was still planned, and looking up its state
    raised KeyError, which stopped the consumer. Only what is still assigned is asked for;
    with nothing left the round ends quietly."""
    import anyio

    from kafka_async.errors import KafkaConnectionError

    class _Meta2(_Meta):
        topics: dict[str, Any] = {}

    class _Conn:
        sent: list[set[TP]] = []

        def version_for(self, api: Any, lo: int, hi: int) -> int:
            return 12

        async def request(self, api: Any, body: Any, **kw: Any) -> Any:
            self.sent.append({TP(t.topic, p.partition) for t in body.topics for p in t.partitions})
            raise KafkaConnectionError("closed by the test")

    gate = anyio.Event()

    class _Slow(_NoNetwork):
        metadata = _Meta2()

        async def connection(self, node_id: int, purpose: str) -> _Conn:
            await gate.wait()
            return _Conn()

        def request_metadata_update(self) -> None:
            pass

    subs = SubscriptionState("earliest")
    subs.assign_from_user([T0, T1])
    subs.seek(T0, 0)
    subs.seek(T1, 0)
    f = Fetcher(_Slow(), subs, config(), Signal())  # type: ignore[arg-type]
    wanted = {tp: PartitionFetch(0, 1 << 20) for tp in (T0, T1)}
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(f._fetch_once, 1, FetchSession(1), wanted)
            await anyio.wait_all_tasks_blocked()
            subs.remove([T1])  # revoked while the fetch waits for its connection
            gate.set()
        assert _Conn.sent == [{T0}]
        subs.remove([T0])  # nothing assigned any more: no request at all
        assert await f._fetch_once(1, FetchSession(1), wanted)
        assert _Conn.sent == [{T0}]
