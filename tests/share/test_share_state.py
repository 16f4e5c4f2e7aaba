"""The share consumer's pure parts: membership transitions, share session epochs,
acknowledgement bookkeeping and encoding, acquired-record selection, settings.

No broker: each transition is driven by hand (times are arguments, answers are values).
"""

from __future__ import annotations

import uuid

import pytest

from kafka_async.consumer.share import (
    AcknowledgementStateError,
    AcknowledgeType,
    ShareConsumer,
    ShareConsumerConfig,
)
from kafka_async.consumer.share.acks import (
    GAP,
    UNSETTLED,
    AcknowledgementBook,
    acknowledgement_batches,
)
from kafka_async.consumer.share.membership import (
    Assignment,
    Fail,
    FindCoordinator,
    ResolveTopics,
    ShareHeartbeatResponse,
    ShareMembership,
    ShareMemberState,
)
from kafka_async.consumer.share.records import select_acquired
from kafka_async.consumer.share.session import (
    FINAL_EPOCH,
    INITIAL_EPOCH,
    ShareSession,
    next_epoch,
)
from kafka_async.errors import ConfigError, GroupAuthorizationFailedError, InvalidRecordStateError
from kafka_async.records.batch import BatchBuilder, ControlRecordType, control_record_payload
from kafka_async.structs import TopicPartition

T = uuid.uuid4()
TP0 = TopicPartition("jobs", 0)
TP1 = TopicPartition("jobs", 1)

# -- membership --------------------------------------------------------------------------------


def joined(assignment: dict[uuid.UUID, frozenset[int]] | None = None) -> ShareMembership:
    m = ShareMembership()
    m.subscribe(["jobs"])
    m.build_heartbeat(0.0)
    m.on_heartbeat_response(
        ShareHeartbeatResponse(0, member_epoch=1, heartbeat_interval_ms=500, assignment=assignment),
        0.0,
        {T: "jobs"},
    )
    return m


def test_join_sends_subscription_then_only_changes() -> None:
    m = ShareMembership(rack_id="r1")
    assert m.state.value == "unjoined"
    m.subscribe(["jobs", "jobs"])
    assert m.state.value == "joining"
    assert m.heartbeat_due(0.0)
    first = m.build_heartbeat(0.0)
    assert (first.member_epoch, first.subscribed_topic_names, first.rack_id) == (
        0,
        ("jobs",),
        "r1",
    )
    assert first.member_id == m.member_id
    assert len(m.member_id) == 22
    actions = m.on_heartbeat_response(
        ShareHeartbeatResponse(0, member_epoch=3, heartbeat_interval_ms=500), 0.0, {}
    )
    assert actions == []
    assert m.state is ShareMemberState.STABLE
    assert m.member_epoch == 3
    later = m.build_heartbeat(1.0)
    assert later.subscribed_topic_names is None
    assert later.rack_id is None
    assert later.member_epoch == 3
    assert not m.heartbeat_due(1.2)
    assert m.heartbeat_due(1.5)
    m.subscribe(["jobs", "other"])
    assert m.build_heartbeat(2.0).subscribed_topic_names == ("jobs", "other")


def test_assignment_resolves_names_and_asks_for_unknown_ids() -> None:
    other = uuid.uuid4()
    m = joined({T: frozenset({0, 1}), other: frozenset({0})})
    assert m.assigned == {("jobs", 0), ("jobs", 1)}
    m.build_heartbeat(1.0)
    actions = m.on_heartbeat_response(
        ShareHeartbeatResponse(0, member_epoch=2, assignment={T: frozenset({1})}), 1.0, {}
    )
    # The id is unknown in this snapshot: nothing assigned from it yet, and a lookup asked.
    assert actions == [Assignment(frozenset()), ResolveTopics(frozenset({T}))]
    assert m.resolve({T: "jobs"}) == [Assignment(frozenset({("jobs", 1)}))]
    # An answer without an assignment keeps it.
    m.build_heartbeat(2.0)
    assert m.on_heartbeat_response(ShareHeartbeatResponse(0, member_epoch=2), 2.0, {}) == []
    assert m.assigned == {("jobs", 1)}


@pytest.mark.parametrize("code", [25, 110])
def test_fenced_member_rejoins_with_epoch_zero_and_same_id(code: int) -> None:
    m = joined({T: frozenset({0})})
    member = m.member_id
    m.build_heartbeat(1.0)
    actions = m.on_heartbeat_response(ShareHeartbeatResponse(code), 1.0, {T: "jobs"})
    assert actions == [Assignment(frozenset())]
    assert m.state is ShareMemberState.JOINING
    assert m.member_epoch == 0
    again = m.build_heartbeat(1.0)
    assert again.member_id == member
    assert again.subscribed_topic_names == ("jobs",)


def test_coordinator_errors_and_lost_heartbeats_retry_after_backoff() -> None:
    m = joined()
    m.build_heartbeat(1.0)
    assert m.on_heartbeat_response(ShareHeartbeatResponse(16), 1.0, {}) == [FindCoordinator()]
    assert not m.heartbeat_due(1.05)
    assert m.heartbeat_due(1.1)
    m.build_heartbeat(1.1)
    assert m.on_heartbeat_failed(1.1) == [FindCoordinator()]
    # After an error the subscription is sent again.
    assert m.build_heartbeat(1.3).subscribed_topic_names == ("jobs",)
    m.build_heartbeat(2.0)
    assert m.on_heartbeat_response(ShareHeartbeatResponse(14), 2.0, {}) == []
    assert m.state is ShareMemberState.STABLE


def test_fatal_error_fails_the_member_with_the_typed_error() -> None:
    m = joined({T: frozenset({0})})
    m.build_heartbeat(1.0)
    actions = m.on_heartbeat_response(
        ShareHeartbeatResponse(30, error_message="denied"), 1.0, {T: "jobs"}
    )
    assert actions[0] == Assignment(frozenset())
    fail = actions[1]
    assert isinstance(fail, Fail)
    assert isinstance(fail.error, GroupAuthorizationFailedError)
    assert "denied" in str(fail.error)
    assert m.state is ShareMemberState.FAILED
    assert not m.heartbeat_due(99.0)
    assert m.leave() is None


def test_leave_sends_epoch_minus_one_only_after_a_heartbeat() -> None:
    m = ShareMembership()
    m.subscribe(["jobs"])
    assert m.leave() is None  # never heard of by the coordinator
    m = joined({T: frozenset({0})})
    req = m.leave()
    assert req is not None
    assert req.member_epoch == -1
    assert req.member_id == m.member_id
    assert m.state.value == "leaving"
    assert not m.heartbeat_due(99.0)
    # A straggling answer does not bring the member back.
    assert m.on_heartbeat_response(ShareHeartbeatResponse(0, member_epoch=5), 1.0, {}) == []
    assert m.finish_leave() == [Assignment(frozenset())]
    assert m.state is ShareMemberState.LEFT


# -- share sessions ------------------------------------------------------------------------------


def test_session_epochs_open_increment_wrap_and_close() -> None:
    assert next_epoch(0) == 1
    assert next_epoch(2**31 - 1) == 1
    assert next_epoch(-1) == -1
    s = ShareSession(1)
    plan = s.plan({TP0, TP1})
    assert (plan.epoch, plan.send, plan.forget) == (
        INITIAL_EPOCH,
        frozenset({TP0, TP1}),
        frozenset(),
    )
    assert not plan.may_acknowledge
    assert s.acknowledge_epoch() is None
    s.on_fetch_answered(plan)
    assert s.epoch == 1
    assert s.partitions == {TP0, TP1}
    assert s.opened == 1
    plan = s.plan({TP1})
    assert (plan.epoch, plan.send, plan.forget) == (1, frozenset(), frozenset({TP0}))
    assert plan.may_acknowledge
    s.on_fetch_answered(plan)
    assert s.epoch == 2
    assert s.partitions == {TP1}
    assert s.acknowledge_epoch() == 2
    s.on_acknowledge_answered(2)
    assert s.epoch == 3
    s.on_acknowledge_answered(FINAL_EPOCH)
    assert s.epoch == INITIAL_EPOCH
    assert not s.partitions


def test_session_error_starts_a_new_session_with_every_partition() -> None:
    s = ShareSession(1)
    s.on_fetch_answered(s.plan({TP0}))
    s.on_fetch_answered(s.plan({TP0, TP1}))
    s.reset()
    assert s.resets == 1
    plan = s.plan({TP0, TP1})
    assert (plan.epoch, plan.send) == (0, frozenset({TP0, TP1}))


# -- acknowledgements ----------------------------------------------------------------------------


def test_acknowledgement_batches_encoding() -> None:
    assert acknowledgement_batches({}) == []
    assert acknowledgement_batches({5: 1, 6: 1, 7: 1}) == [(5, 7, (1,))]
    assert acknowledgement_batches({5: 1, 6: 2, 7: 1}) == [(5, 7, (1, 2, 1))]
    assert acknowledgement_batches({9: 3, 5: 1, 6: 0, 10: 3}) == [(5, 6, (1, 0)), (9, 10, (3,))]


def test_book_tracks_each_record_from_delivery_to_result() -> None:
    book = AcknowledgementBook()
    for offset in (10, 11, 12):
        book.deliver(TP0, offset, node_id=1)
    book.add(1, TP0, 13, GAP)
    assert book.unacknowledged() == 3
    book.acknowledge(TP0, 10, AcknowledgeType.ACCEPT)
    book.acknowledge(TP0, 11, AcknowledgeType.RELEASE)
    with pytest.raises(AcknowledgementStateError, match="acknowledged already"):
        book.acknowledge(TP0, 11, AcknowledgeType.REJECT)
    with pytest.raises(AcknowledgementStateError):
        book.acknowledge(TP1, 10, AcknowledgeType.ACCEPT)
    with pytest.raises(AcknowledgementStateError, match="AcknowledgeType"):
        book.acknowledge(TP0, 12, 1)  # type: ignore[arg-type]
    assert book.unacknowledged() == 1
    assert book.pending_nodes() == {1}
    taken = book.take(1)
    assert taken == {TP0: {10: 1, 11: 2, 13: 0}}
    assert not book.pending_nodes()
    refused = InvalidRecordStateError("lock expired")
    book.settle(taken, {TP0: refused})
    assert book.take_results() == {TP0: refused}
    assert book.failed == 3
    assert book.acknowledge_delivered(AcknowledgeType.ACCEPT) == 1
    taken = book.take(1)
    book.settle(taken, {})
    assert book.take_results() == {TP0: None}
    assert book.sent["accept"] == 1
    assert book.take_results() == {}


def test_book_tells_its_listener_each_settled_partition_without_gaps() -> None:
    told: list[tuple[TopicPartition, frozenset[int], object]] = []
    book = AcknowledgementBook(
        listener=lambda tp, offsets, error: told.append((tp, offsets, error))
    )
    book.add(1, TP0, 4, GAP)
    book.add(1, TP0, 5, int(AcknowledgeType.ACCEPT))
    book.add(1, TP0, 6, int(AcknowledgeType.REJECT))
    book.add(1, TP1, 9, GAP)  # gaps only: nothing to tell
    refused = InvalidRecordStateError("lock expired")
    book.settle(book.take(1), {TP0: refused})
    assert told == [(TP0, frozenset({5, 6}), refused)]
    told.clear()
    book.add(2, TP1, 3, int(AcknowledgeType.RELEASE))
    book.settle(book.take(2), {})
    assert told == [(TP1, frozenset({3}), None)]
    told.clear()
    book.add(2, TP1, 4, int(AcknowledgeType.ACCEPT))
    lost = ConfigError("connection lost")
    book.fail(book.take(2), lost)
    assert told == [(TP1, frozenset({4}), lost)]


def test_book_refuses_a_record_object_from_an_earlier_delivery() -> None:
    """The application kept a record object of delivery 1, the consumer now holds delivery
    2 of the same offset: acknowledging the old object is refused (the Java client's
    "record cannot be acknowledged"); the current one is taken."""
    book = AcknowledgementBook()
    book.deliver(TP0, 7, node_id=1, delivery_count=2)
    with pytest.raises(AcknowledgementStateError, match="delivery 1"):
        book.acknowledge(TP0, 7, AcknowledgeType.ACCEPT, delivery_count=1)
    assert book.unacknowledged() == 1
    book.acknowledge(TP0, 7, AcknowledgeType.ACCEPT, delivery_count=2)
    assert book.unacknowledged() == 0
    assert book.take(1) == {TP0: {7: 1}}


def test_book_take_only_some_partitions() -> None:
    book = AcknowledgementBook()
    book.add(1, TP0, 1, 1)
    book.add(1, TP1, 1, 3)
    book.add(2, TP1, 5, 1)
    assert book.take(1, only=[TP1]) == {TP1: {1: 3}}
    assert book.pending_nodes() == {1, 2}
    assert book.pending_count() == 2


def test_book_renewals_keep_the_record_and_never_ride_on_a_fetch() -> None:
    """A RENEW (KIP-1222) leaves the record delivered (still to be acknowledged), stays
    pending when a fetch takes acknowledgements (a fetch cannot carry it), goes with the
    next ShareAcknowledge, reports its outcome to a waiting renew() and not to commit()'s
    results; an acknowledgement of the record before it was sent replaces it."""
    book = AcknowledgementBook()
    for offset in (1, 2, 3):
        book.deliver(TP0, offset, node_id=1, delivery_count=1)
    assert book.renew(TP0, 1) == 1
    book.acknowledge(TP0, 2, AcknowledgeType.RENEW)
    book.acknowledge(TP0, 3, AcknowledgeType.ACCEPT)
    assert book.unacknowledged() == 2
    with pytest.raises(AcknowledgementStateError, match="renew"):
        book.renew(TP0, 3)
    with pytest.raises(AcknowledgementStateError, match="delivery 2"):
        book.renew(TP0, 1, delivery_count=2)
    assert book.renewals_pending(1)
    assert book.take(1, renewals=False) == {TP0: {3: 1}}
    book.settle({TP0: {3: 1}}, {})
    assert book.take(1, renewals=False) == {}
    book.renewals[TP0, 1] = UNSETTLED
    taken = book.take(1)
    assert taken == {TP0: {1: 4, 2: 4}}
    assert not book.renewals_pending(1)
    book.take_results()
    refused = InvalidRecordStateError("lock expired")
    book.settle(taken, {TP0: refused})
    assert book.renewals == {(TP0, 1): refused}
    assert book.take_results() == {}  # renewals only: nothing for commit() to report
    book.renew(TP0, 1)
    book.acknowledge(TP0, 1, AcknowledgeType.ACCEPT)  # replaces the RENEW not sent yet
    assert book.take(1) == {TP0: {1: 1}}
    assert book.unacknowledged() == 1  # offset 2, renewed, still held


# -- acquired records ------------------------------------------------------------------------------


def _batch(base: int, values: list[bytes], *, control: bool = False) -> bytes:
    b = BatchBuilder(is_control=control, is_transactional=control)
    for v in values:
        b.append(1000, None, v)
    return bytes(b.build(base_offset=base, producer_id=7 if control else -1))


def test_select_acquired_keeps_only_acquired_offsets_with_their_delivery_counts() -> None:
    data = _batch(0, [b"a", b"b", b"c", b"d"]) + _batch(4, [b"e", b"f"])
    part = select_acquired(data, [(1, 2, 1), (4, 4, 3)])
    assert [(r.offset, r.value, r.delivery_count) for r in part.records] == [
        (1, b"b", 1),
        (2, b"c", 1),
        (4, b"e", 3),
    ]
    assert part.gaps == []
    assert part.undecoded == []
    assert part.error is None


def test_acquired_offsets_without_a_visible_record_are_gaps() -> None:
    marker = BatchBuilder(is_control=True, is_transactional=True)
    marker.append(1000, *control_record_payload(ControlRecordType.COMMIT, 0))
    data = _batch(0, [b"a", b"b"]) + bytes(marker.build(base_offset=2, producer_id=7))
    part = select_acquired(data, [(0, 3, 2)])
    assert [r.offset for r in part.records] == [0, 1]
    assert part.gaps == [2, 3]


def test_damaged_data_leaves_the_rest_undecoded() -> None:
    good = _batch(0, [b"a"])
    bad = bytearray(_batch(1, [b"b", b"c"]))
    bad[-1] ^= 0xFF  # the CRC no longer matches
    part = select_acquired(good + bytes(bad), [(0, 2, 1)])
    assert [r.offset for r in part.records] == [0]
    assert part.undecoded == [1, 2]
    assert part.error is not None


# -- settings -------------------------------------------------------------------------------


def test_settings_are_validated() -> None:
    with pytest.raises(ConfigError, match="group_id"):
        ShareConsumerConfig.from_kwargs(bootstrap_servers="x:1")
    with pytest.raises(ConfigError, match="share_acknowledgement_mode"):
        ShareConsumerConfig.from_kwargs(
            bootstrap_servers="x:1", group_id="g", share_acknowledgement_mode="auto"
        )
    with pytest.raises(ConfigError, match="max_poll_records"):
        ShareConsumerConfig.from_kwargs(bootstrap_servers="x:1", group_id="g", max_poll_records=0)
    with pytest.raises(ConfigError, match="unknown share consumer setting"):
        ShareConsumerConfig.from_kwargs(bootstrap_servers="x:1", group_id="g", enable_auto_commit=1)
    with pytest.raises(ConfigError, match="topic names"):
        ShareConsumer("", bootstrap_servers="x:1", group_id="g")
    with pytest.raises(ConfigError, match="acknowledgement_commit_callback"):
        ShareConsumer("t", bootstrap_servers="x:1", group_id="g", acknowledgement_commit_callback=1)  # type: ignore[call-overload]
    with pytest.raises(ConfigError, match="share_acquire_mode"):
        ShareConsumerConfig.from_kwargs(
            bootstrap_servers="x:1", group_id="g", share_acquire_mode="strict"
        )
    cfg = ShareConsumerConfig.from_kwargs(bootstrap_servers="x:1", group_id="g")
    assert cfg.share_acknowledgement_mode == "implicit"
    assert cfg.max_poll_records == 500
    assert (cfg.share_acquire_mode, cfg.record_limit) == ("batch_optimized", False)


@pytest.mark.anyio
async def test_calls_before_start_and_implicit_acknowledge_are_refused() -> None:
    from kafka_async.consumer.share import ShareRecord
    from kafka_async.errors import ClientClosedError

    c = ShareConsumer("jobs", bootstrap_servers="127.0.0.1:1", group_id="g")
    record: ShareRecord[bytes, bytes] = ShareRecord("jobs", 0, 0, 0, 0, None, b"v")
    with pytest.raises(ClientClosedError, match="not started"):
        await c.getmany()
    with pytest.raises(ClientClosedError, match="not started"):
        c.accept(record)
    await c.close()
    assert c.statistics()["state"] == "closed"


@pytest.mark.anyio
async def test_subscription_before_start_and_bad_arguments() -> None:
    """Without topics the constructor makes an unsubscribed consumer; ``subscribe`` sets
    (a name or names), an empty one unsubscribes; bad names, a negative close timeout and a
    callback that is not callable are ``ConfigError``."""
    c = ShareConsumer(bootstrap_servers="127.0.0.1:1", group_id="g")
    assert c.subscription() == frozenset()
    c.subscribe(["b", "a", "b"])
    assert c.subscription() == {"a", "b"}
    c.subscribe("jobs")
    assert c.subscription() == {"jobs"}
    with pytest.raises(ConfigError, match="topic names"):
        c.subscribe(["ok", ""])
    for bad in ("topic abc", "..", "x" * 250, "caf\u00e9"):
        # Kafka cannot have such a topic (the Java client's poll raises InvalidTopicException
        # once the metadata says so; here the name is refused at once).
        with pytest.raises(ConfigError, match="not a valid topic name"):
            c.subscribe([bad])
        with pytest.raises(ConfigError, match="not a valid topic name"):
            ShareConsumer(bad, bootstrap_servers="127.0.0.1:1", group_id="g")
    assert c.subscription() == {"jobs"}  # unchanged by the refusals
    c.subscribe(["a.b_c-9", "x" * 249])
    assert c.subscription() == {"a.b_c-9", "x" * 249}
    c.subscribe([])
    assert c.subscription() == frozenset()
    c.unsubscribe()
    with pytest.raises(ConfigError, match="callable"):
        c.set_acknowledgement_commit_callback("nope")  # type: ignore[arg-type]
    c.set_acknowledgement_commit_callback(lambda offsets, error: None)
    c.set_acknowledgement_commit_callback(None)
    assert c.acquisition_lock_timeout_ms is None
    with pytest.raises(ConfigError, match="timeout"):
        await c.close(timeout=-1)
    await c.close(timeout=0)
    assert c.state.value == "closed"
    from kafka_async.errors import ClientClosedError

    with pytest.raises(ClientClosedError, match="closed"):
        c.subscribe(["jobs"])


def test_settings_typeddict_names_every_setting() -> None:
    from kafka_async.consumer.share import ShareConsumerSettings
    from kafka_async.net.config import ClientConfig

    keys = set(ShareConsumerSettings.__optional_keys__)
    assert not ShareConsumerSettings.__required_keys__
    own = {n for n in ShareConsumerConfig.__dataclass_fields__ if n != "client"}
    deserializers = {"key_deserializer", "value_deserializer"}
    assert keys == (ClientConfig.field_names() | own) - deserializers


def test_exported_from_the_package() -> None:
    import kafka_async

    for name in ("ShareConsumer", "ShareConsumerSettings", "ShareRecord", "AcknowledgeType"):
        assert name in kafka_async.__all__
        assert getattr(kafka_async, name).__name__ == name
