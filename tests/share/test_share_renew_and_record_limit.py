"""What Kafka 4.2 added to share consumers, against a real broker: lock renewal (KIP-1222,
``renew()`` / ``AcknowledgeType.RENEW``) and the record-limit acquire mode (KIP-1206).

Both need ShareFetch / ShareAcknowledge v2. The tests that use them run where the broker
advertises v2 (Apache Kafka 4.2+; the reference broker is 4.4.0) and are skipped with what it
advertised elsewhere; on a broker with share groups but without v2 (Apache Kafka 4.1) the
last test checks that both are refused with a typed error naming the missing version.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable

import anyio
import pytest

from kafka_async import Producer
from kafka_async.consumer.share import AcknowledgeType, ShareConsumer, ShareConsumerSettings
from kafka_async.errors import IncompatibleBrokerVersionError, InvalidRecordStateError
from kafka_async.testing.plugin import KafkaService
from tests.share.test_share_consumer import Records, produce, share_group

pytestmark = [pytest.mark.integration, pytest.mark.requires_api("ShareGroupHeartbeat", 1)]


def _group(name: str) -> str:
    return f"share-{name}-{time.monotonic_ns()}"


def _need_v2(kafka_service: KafkaService) -> None:
    for api in ("ShareFetch", "ShareAcknowledge"):
        if not kafka_service.supports(api, 2):
            pytest.skip(
                f"{kafka_service.kind} {kafka_service.version} advertises {api} "
                f"{_advertised(kafka_service, api)}, KIP-1206/KIP-1222 need v2"
            )


def _advertised(kafka_service: KafkaService, api: str) -> str:
    from kafka_async.testing.capabilities import api_key_of

    have = kafka_service.apis().get(api_key_of(api))
    return "nothing" if have is None else f"v{have[0]}-v{have[1]}"


@pytest.mark.anyio
async def test_renew_keeps_a_record_past_its_lock_until_renewals_stop(
    kafka_service: KafkaService, kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """A record held for over twice the lock duration (2 s) while it is renewed every
    0.6 s is never delivered to the other member; once renewals stop it is (a later
    delivery), and the first member's late renewal is refused."""
    _need_v2(kafka_service)
    topic = new_topic(1)
    group = _group("renew")
    lock_s = 2.0
    await share_group(kafka_broker, group, lock_ms=int(lock_s * 1000))
    await produce(kafka_broker, topic, 1)
    explicit: ShareConsumerSettings = {
        "bootstrap_servers": kafka_broker,
        "group_id": group,
        "share_acknowledgement_mode": "explicit",
    }
    async with ShareConsumer(topic, **explicit) as holder:
        # First share group of a fresh broker: it creates its 50-partition share-state
        # topic on first use, which took most of 30 s on a loaded 2-core machine.
        with anyio.fail_after(60):
            got: Records = {}
            while not got:
                got = await holder.getmany(timeout_ms=500)
        ((record,),) = got.values()
        assert record.delivery_count == 1
        assert holder.acquisition_lock_timeout_ms == int(lock_s * 1000)
        await holder.renew(record)  # the other member joins meanwhile
        async with ShareConsumer(topic, **explicit) as other:
            seen_by_other: list[int] = []

            async def other_polls(until: float) -> None:
                while time.monotonic() < until:
                    for records in (await other.getmany(timeout_ms=200)).values():
                        for r in records:
                            seen_by_other.append(r.offset)
                            other.release(r)  # (a failure already: keep polling)

            # Renew for 2.5 lock durations (both ways: awaited, and in the background).
            held_until = time.monotonic() + 2.5 * lock_s
            async with anyio.create_task_group() as tg:
                tg.start_soon(other_polls, held_until)
                renewals = 0
                while time.monotonic() < held_until:
                    if renewals % 2:
                        holder.acknowledge(record, AcknowledgeType.RENEW)
                    else:
                        await holder.renew(record)
                    renewals += 1
                    await anyio.sleep(0.3 * lock_s)
                await holder.renew(record)  # the last one, awaited: those before it were sent
            assert seen_by_other == [], "a renewed record went to another member"
            # Background RENEWs of one offset not sent yet merge into one request.
            assert holder.statistics()["acknowledged"]["renew"] >= renewals // 2 + 1
            assert holder.statistics()["acknowledgements_failed"] == 0
            # Renewals stop: the lock runs out and the other member gets the record.
            with anyio.fail_after(lock_s + 10):
                redelivered: Records = {}
                while not redelivered:
                    redelivered = await other.getmany(timeout_ms=500)
            ((again,),) = redelivered.values()
            # 2, or 3 when the holder's own fetch acquired it again first and let it expire
            # in its buffer (its application held the first delivery, not that one).
            assert again.offset == record.offset
            assert again.delivery_count >= 2
            # The holder lost it: renewing or accepting it now is refused by the broker.
            with pytest.raises(InvalidRecordStateError):
                await holder.renew(record)
            other.accept(again)
            assert set((await other.commit()).values()) == {None}


@pytest.mark.anyio
async def test_record_limit_never_acquires_more_than_max_poll_records(
    kafka_service: KafkaService, kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """Records produced in one batch of 60: with ``share_acquire_mode="record_limit"`` and
    ``max_poll_records=7`` no ShareFetch acquires more than 7 and no poll returns more, and
    every record arrives once; the default mode acquires the whole batch at once (what the
    setting changes)."""
    _need_v2(kafka_service)
    topic = new_topic(1)
    async with Producer(kafka_broker, linger_ms=1000) as producer:
        for i in range(60):
            await producer.enqueue(topic, str(i).encode())  # one batch: queued, then flushed
        await producer.flush()
    largest: dict[str, int] = {}
    for mode in ("record_limit", "batch_optimized"):
        group = _group(mode)
        await share_group(kafka_broker, group)
        seen: Counter[bytes] = Counter()
        polls: list[int] = []
        async with ShareConsumer(
            topic,
            bootstrap_servers=kafka_broker,
            group_id=group,
            max_poll_records=7,
            share_acquire_mode=mode,
        ) as consumer:
            with anyio.fail_after(30):
                while len(seen) < 60:
                    got = await consumer.getmany(timeout_ms=500)
                    n = sum(len(records) for records in got.values())
                    if n:
                        polls.append(n)
                    seen.update(r.value or b"" for records in got.values() for r in records)
            largest[mode] = consumer.statistics()["fetcher"]["largest_acquisition"]
        assert max(polls) <= 7
        assert sorted(seen, key=int) == [str(i).encode() for i in range(60)]
        assert set(seen.values()) == {1}, "a record was delivered twice"
    assert largest["record_limit"] <= 7
    assert largest["batch_optimized"] > 7, largest


@pytest.mark.anyio
async def test_a_broker_without_v2_refuses_renew_and_record_limit_by_name(
    kafka_service: KafkaService, kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """Share groups without ShareFetch/ShareAcknowledge v2 (Apache Kafka 4.1): ``renew()``
    raises ``IncompatibleBrokerVersionError`` naming ShareAcknowledge v2 and sends nothing
    (the record can still be accepted); ``record_limit`` fails the consumer with the same
    error naming ShareFetch v2; the default mode works."""
    if kafka_service.supports("ShareAcknowledge", 2) and kafka_service.supports("ShareFetch", 2):
        pytest.skip(
            f"{kafka_service.kind} {kafka_service.version} advertises ShareFetch "
            f"{_advertised(kafka_service, 'ShareFetch')} and ShareAcknowledge "
            f"{_advertised(kafka_service, 'ShareAcknowledge')}: renewal is tested above"
        )
    topic = new_topic(1)
    group = _group("old")
    await share_group(kafka_broker, group)
    await produce(kafka_broker, topic, 3)
    async with ShareConsumer(
        topic, bootstrap_servers=kafka_broker, group_id=group, share_acknowledgement_mode="explicit"
    ) as consumer:
        with anyio.fail_after(20):
            got: Records = {}
            while not got:
                got = await consumer.getmany(timeout_ms=500)
        records = [r for rs in got.values() for r in rs]
        with pytest.raises(IncompatibleBrokerVersionError, match="ShareAcknowledge v2"):
            await consumer.renew(records[0])
        for r in records:
            consumer.accept(r)
        assert set((await consumer.commit()).values()) == {None}
    async with ShareConsumer(
        topic,
        bootstrap_servers=kafka_broker,
        group_id=_group("old-limit"),
        share_acquire_mode="record_limit",
    ) as limited:
        with (
            anyio.fail_after(20),
            pytest.raises(IncompatibleBrokerVersionError, match="ShareFetch v2"),
        ):
            await limited.getmany(timeout_ms=15_000)
