"""The share consumer (KIP-932) against a real broker.

Apache Kafka 4.1 speaks it (the test launcher formats storage with ``share.version=1``);
where the run's broker does not advertise ShareGroupHeartbeat v1 (Tansu) these tests are
skipped with what it advertised. Each test makes its own share group and sets the group's
configs (earliest start, 500 ms heartbeats, and where it matters the record lock duration).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from kafka_async import Producer
from kafka_async.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ConfigResource,
    NewTopic,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)
from kafka_async.consumer.share import (
    AcknowledgementStateError,
    AcknowledgeType,
    NotSubscribedError,
    ShareConsumer,
    ShareConsumerSettings,
    ShareRecord,
)
from kafka_async.errors import (
    GroupAuthorizationFailedError,
    InvalidRecordStateError,
    KafkaError,
    TopicAuthorizationFailedError,
)
from kafka_async.observability import ClientHooks, ConsumeEvent
from kafka_async.structs import TopicPartition
from kafka_async.testing.apache import SASL_USERS, KafkaDistribution, ensure_distribution
from kafka_async.testing.plugin import KafkaService
from tests.harness.java_peers import JavaProcess

pytestmark = [pytest.mark.integration, pytest.mark.requires_api("ShareGroupHeartbeat", 1)]

Records = dict[TopicPartition, list[ShareRecord[bytes, bytes]]]


async def share_group(
    bootstrap: str, group: str, *, lock_ms: int | None = None, **extra: str
) -> None:
    """A share group that reads from the earliest offset, heartbeats every 500 ms and
    (optionally) locks records for ``lock_ms`` (the broker's per-group settings; the test
    broker allows locks and sessions down to 1 s)."""
    configs = {
        "share.auto.offset.reset": "earliest",
        "share.heartbeat.interval.ms": "500",
        "share.session.timeout.ms": "6000",
        **extra,
    }
    if lock_ms is not None:
        configs["share.record.lock.duration.ms"] = str(lock_ms)
    async with AdminClient(bootstrap) as admin:
        await admin.incremental_alter_configs(
            {ConfigResource.group(group): configs}, raise_on_error=True
        )


async def produce(bootstrap: str, topic: str, count: int, *, partitions: int = 1) -> list[bytes]:
    """``count`` records with values b"0", b"1", ... round-robin over ``partitions``."""
    values = [str(i).encode() for i in range(count)]
    async with Producer(bootstrap) as producer:
        for i, v in enumerate(values):
            await producer.send(topic, v, partition=i % partitions)
        await producer.flush()
    return values


#: A share consumer in a child process: explicit mode, prints the offsets and delivery
#: counts of its first non-empty poll as one JSON line, then holds them (never acknowledges)
#: until it is killed.
CHILD = r"""
import json, sys, anyio
from kafka_async.consumer.share import ShareConsumer

async def main(bootstrap, topic, group):
    async with ShareConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                             share_acknowledgement_mode="explicit") as consumer:
        while True:
            got = await consumer.getmany(timeout_ms=1000)
            if got:
                held = [[r.partition, r.offset, r.delivery_count]
                        for recs in got.values() for r in recs]
                print(json.dumps({"held": held}), flush=True)
                await anyio.sleep(3600)

anyio.run(main, *sys.argv[1:])
"""


def start_child(bootstrap: str, topic: str, group: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, bootstrap, topic, group],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


class JavaShareConsumer(JavaProcess):
    """``org.apache.kafka.tools.VerifiableShareConsumer`` (the Java ``KafkaShareConsumer``),
    printing each record it consumed (``--verbose``); ``values`` collects them."""

    def __init__(
        self,
        dist: KafkaDistribution,
        bootstrap: str,
        topic: str,
        group: str,
        *,
        mode: str = "sync",
        name: str = "verifiable-share-consumer",
    ) -> None:
        folder = Path(tempfile.mkdtemp(prefix=f"java-{name}-"))
        props = folder / "consumer.properties"
        # record_limit (KIP-1206; clients before 4.2 ignore it): 20 records per fetch at most.
        # In the default batch_optimized mode a 4.2+ broker hands whole batches, so the first
        # member (this one) acquired all 600 records before ours joined.
        props.write_text(
            "client.id=java-share\nmax.poll.records=20\nshare.acquire.mode=record_limit\n"
        )
        args = [
            "--bootstrap-server",
            bootstrap,
            "--topic",
            topic,
            "--group-id",
            group,
            "--acknowledgement-mode",
            mode,
            "--verbose",
            "--command-config",
            str(props),
        ]
        super().__init__(
            dist,
            "org.apache.kafka.tools.VerifiableShareConsumer",
            args,
            name=name,
            folder=folder,
        )
        self.values: list[str] = []

    def on_event(self, event: dict[str, Any]) -> None:
        if event.get("name") == "record_data":
            self.values.append(str(event.get("value")))


def parse_held(line: str) -> list[tuple[int, int, int]]:
    return [(p, o, c) for p, o, c in json.loads(line)["held"]]


def _group(name: str) -> str:
    return f"share-{name}-{time.monotonic_ns()}"


@pytest.mark.anyio
async def test_explicit_accept_release_reject_and_delivery_counts(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(2)
    group = _group("explicit")
    await share_group(kafka_broker, group)
    values = await produce(kafka_broker, topic, 40, partitions=2)
    accepted: Counter[bytes] = Counter()
    deliveries: dict[bytes, list[int]] = {}
    async with ShareConsumer(
        topic, bootstrap_servers=kafka_broker, group_id=group, share_acknowledgement_mode="explicit"
    ) as consumer:
        refused_once = False
        with anyio.fail_after(30):
            while len(accepted) < 36:  # 40 records, 4 rejected
                got = await consumer.getmany(timeout_ms=500)
                if got and not refused_once:
                    # Polling again before acknowledging is refused in explicit mode.
                    with pytest.raises(AcknowledgementStateError, match="not acknowledged"):
                        await consumer.getmany()
                    refused_once = True
                for records in got.values():
                    for r in records:
                        assert r.value is not None
                        n = int(r.value)
                        deliveries.setdefault(r.value, []).append(r.delivery_count)
                        if n % 10 == 0 and r.delivery_count < 3:
                            consumer.release(r)  # twice: delivered three times in all
                        elif n % 10 == 1:
                            consumer.reject(r)
                        else:
                            consumer.acknowledge(r, AcknowledgeType.ACCEPT)
                            accepted[r.value] += 1
                        with pytest.raises(AcknowledgementStateError):
                            consumer.accept(r)  # once only
        # The only member: every partition is assigned to it.
        assert consumer.assignment() == {TopicPartition(topic, 0), TopicPartition(topic, 1)}
        assert consumer.statistics()["group"]["member_id"] == consumer.member_id
        results = await consumer.commit()
        assert all(error is None for error in results.values()), results
        # Nothing more comes: rejected and accepted records are never delivered again.
        extra = await consumer.getmany(timeout_ms=2000)
        assert extra == {}
        stats = consumer.statistics()
    assert set(accepted) == {v for v in values if int(v) % 10 != 1}
    assert all(count == 1 for count in accepted.values())
    for v in values:
        n = int(v)
        if n % 10 == 0:
            assert deliveries[v] == [1, 2, 3], (v, deliveries[v])  # the broker's counts
        else:
            assert deliveries[v] == [1], (v, deliveries[v])
    assert stats["state"] == "running"
    assert stats["acknowledged"]["reject"] == 4
    assert stats["acknowledged"]["release"] == 8
    assert stats["acknowledged"]["accept"] == 36
    assert stats["acknowledgements_failed"] == 0
    assert stats["fetcher"]["acquisition_lock_timeout_ms"] == 30_000  # the broker default
    # The releases rode on the fetches that brought the records back.
    assert stats["fetcher"]["acknowledged_on_fetch"] >= 8
    fetcher = stats["fetcher"]
    assert fetcher["acknowledged_on_fetch"] + fetcher["acknowledged_alone"] == 48


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_implicit_async_for_and_close_release(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """Implicit mode: each step of ``async for`` accepts the record before it; close()
    accepts the last one and releases what was fetched but never handed out, so another
    member gets exactly those at once (long before the 60 s lock would expire)."""
    topic = new_topic(1)
    group = _group("implicit")
    await share_group(kafka_broker, group, lock_ms=60_000)
    values = await produce(kafka_broker, topic, 20)
    seen: list[bytes] = []
    with anyio.fail_after(30):
        async with ShareConsumer(topic, bootstrap_servers=kafka_broker, group_id=group) as first:
            async for record in first:
                assert record.value is not None
                seen.append(record.value)
                if len(seen) == 5:
                    break
            assert first.statistics()["fetcher"]["buffered_records"] > 0
        assert first.statistics()["state"] == "closed"
    assert seen == values[:5]
    rest: dict[bytes, int] = {}
    started = time.monotonic()
    with anyio.fail_after(20):
        async with ShareConsumer(topic, bootstrap_servers=kafka_broker, group_id=group) as second:
            while len(rest) < 15:
                for records in (await second.getmany(timeout_ms=500)).values():
                    for r in records:
                        assert r.value is not None
                        rest[r.value] = r.delivery_count
    assert sorted(rest, key=int) == values[5:]
    assert set(rest.values()) == {2}  # fetched once by the first member, then released
    assert time.monotonic() - started < 20


@pytest.mark.anyio
async def test_lock_expiry_redelivers_and_late_acknowledgement_fails(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """No renewal: records held past the lock duration go to another member (delivery count
    2), and the first member's late acknowledgement is refused per partition."""
    topic = new_topic(1)
    group = _group("lock")
    await share_group(kafka_broker, group, lock_ms=2000)
    values = await produce(kafka_broker, topic, 5)
    settings: ShareConsumerSettings = {"bootstrap_servers": kafka_broker, "group_id": group}
    explicit: ShareConsumerSettings = {**settings, "share_acknowledgement_mode": "explicit"}
    told: list[tuple[Mapping[TopicPartition, frozenset[int]], KafkaError | None]] = []
    async with ShareConsumer(topic, **explicit) as slow:
        slow.set_acknowledgement_commit_callback(
            lambda offsets, error: told.append((offsets, error))
        )
        with anyio.fail_after(20):
            got: Records = {}
            while not got:
                got = await slow.getmany(timeout_ms=500, max_records=1)
        (late,) = [r for records in got.values() for r in records]
        assert late.delivery_count == 1
        # The rest of the fetch stays buffered here, so this member fetches nothing more.
        redelivered: dict[bytes, int] = {}
        async with ShareConsumer(topic, **explicit) as other:
            held: list[ShareRecord[bytes, bytes]] = []
            with anyio.fail_after(20):
                while len(redelivered) < 5:
                    for records in (await other.getmany(timeout_ms=500)).values():
                        for r in records:
                            assert r.value is not None
                            redelivered[r.value] = r.delivery_count
                            held.append(r)
            assert sorted(redelivered, key=int) == values
            assert set(redelivered.values()) == {2}
            # The other member holds them now: the first one's acknowledgement is refused.
            slow.accept(late)
            results = await slow.commit()
            assert isinstance(results[TopicPartition(topic, 0)], InvalidRecordStateError)
            # The acknowledgement commit callback heard the same refusal, for that offset.
            ((offsets, error),) = told
            assert offsets == {TopicPartition(topic, 0): frozenset({late.offset})}
            assert isinstance(error, InvalidRecordStateError)
            for r in held:
                other.accept(r)
            assert await other.commit() == {TopicPartition(topic, 0): None}
        assert slow.statistics()["acknowledgements_failed"] == 1


@pytest.mark.anyio
@pytest.mark.parametrize("how", ["SIGKILL", "SIGSTOP"])
async def test_dead_members_records_are_redelivered(
    kafka_broker: str, new_topic: Callable[..., str], how: str
) -> None:
    """A member (a child process) holding acquired records dies (SIGKILL: its connections
    close) or hangs (SIGSTOP: connections open, no heartbeats, no acknowledgements). Either
    way another member gets every record again, never before the 2 s lock expired unless
    the broker released them on the closed connection. A hung member's records come back
    through the lock timeout, so their delivery count is 2."""
    topic = new_topic(1)
    group = _group(how.lower())
    lock_s = 2.0
    await share_group(kafka_broker, group, lock_ms=int(lock_s * 1000))
    values = await produce(kafka_broker, topic, 10)
    child = start_child(kafka_broker, topic, group)
    try:
        assert child.stdout is not None
        with anyio.fail_after(60):
            line = await anyio.to_thread.run_sync(child.stdout.readline)
        held_at = time.monotonic()
        held = parse_held(line)
        assert [o for _, o, _ in held] == list(range(10))
        assert {c for _, _, c in held} == {1}
        child.send_signal(getattr(signal, how))
        got: dict[bytes, int] = {}
        async with ShareConsumer(topic, bootstrap_servers=kafka_broker, group_id=group) as other:
            with anyio.fail_after(30):
                while len(got) < 10:
                    for records in (await other.getmany(timeout_ms=500)).values():
                        for r in records:
                            assert r.value is not None
                            got[r.value] = r.delivery_count
        took = time.monotonic() - held_at
        print(f"{how}: redelivered {took:.2f} s after the records were acquired")
    finally:
        child.kill()
        child.wait()
    assert sorted(got, key=int) == values
    if how == "SIGSTOP":
        assert set(got.values()) == {2}
        assert took >= lock_s - 0.2, took  # the lock held until it expired
    else:
        # Apache Kafka 4.1 releases a closed session's records at once (delivery count
        # as the broker reports it: 1 there, the release undoing the acquisition's count).
        assert max(got.values()) <= 2
    assert took < 30


@pytest.mark.anyio
async def test_our_members_and_the_java_share_consumer_process_every_record(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """Three of our share consumers (two implicit with ``async for``, one explicit) and the
    Java ``KafkaShareConsumer`` (VerifiableShareConsumer) in one share group: every record is
    processed, and none twice (nothing was released and no lock expired)."""
    topic = new_topic(3)
    group = _group("mixed")
    await share_group(kafka_broker, group)
    # Enough that the Java member, which reads first, is still busy when ours have joined
    # (3,000 were gone before they joined in about half the runs on a fast machine).
    total = 10_000
    values = await produce(kafka_broker, topic, total, partitions=3)
    ours: Counter[bytes] = Counter()
    settings: ShareConsumerSettings = {
        "bootstrap_servers": kafka_broker,
        "group_id": group,
        "max_poll_records": 50,
    }
    java = JavaShareConsumer(ensure_distribution(), kafka_broker, topic, group)
    async with java:
        # The Java member joins and reads first (20 records a poll), then ours join in.
        await java.wait_until(lambda: bool(java.values), 60, "its first records")

        def done() -> bool:
            java.poll()
            return sum(ours.values()) + len(java.values) >= total

        async def implicit_member() -> None:
            async with ShareConsumer(topic, **settings) as c:
                while not done():
                    with anyio.move_on_after(1):
                        async for r in c:
                            assert r.value is not None
                            ours[r.value] += 1
                            await anyio.sleep(0.002)  # some work, so the others get records too
                            if done():
                                break

        async def explicit_member() -> None:
            explicit: ShareConsumerSettings = {**settings, "share_acknowledgement_mode": "explicit"}
            async with ShareConsumer(topic, **explicit) as c:
                while not done():
                    for records in (await c.getmany(timeout_ms=300)).values():
                        for r in records:
                            assert r.value is not None
                            ours[r.value] += 1
                            c.accept(r)
                    assert all(e is None for e in (await c.commit()).values())

        with anyio.fail_after(180):
            async with anyio.create_task_group() as tg:
                tg.start_soon(implicit_member)
                tg.start_soon(implicit_member)
                tg.start_soon(explicit_member)
        await java.stop()
    processed = Counter(ours)
    processed.update(v.encode() for v in java.values)
    assert set(processed) == set(values)
    assert max(processed.values()) == 1, processed.most_common(3)
    assert len(java.values) < total, "our members processed nothing"


@pytest.mark.anyio
async def test_acknowledgements_do_not_wait_for_the_buffer_to_drain(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """A slow application works through one fetch's records while their locks run: its
    acknowledgements go out (ShareAcknowledge) about every second, not only with the next
    fetch, so the records it finished early are accepted before their locks expire."""
    topic = new_topic(1)
    group = _group("linger")
    await share_group(kafka_broker, group, lock_ms=3000)
    await produce(kafka_broker, topic, 8)
    async with ShareConsumer(
        topic, bootstrap_servers=kafka_broker, group_id=group, share_acknowledgement_mode="explicit"
    ) as consumer:
        done = 0
        with anyio.fail_after(30):
            while done < 8:
                for records in (await consumer.getmany(timeout_ms=500, max_records=1)).values():
                    for r in records:
                        assert r.delivery_count == 1
                        await anyio.sleep(0.5)  # slow work: 8 records take longer than the lock
                        consumer.accept(r)
                        done += 1
        await consumer.commit()
        stats = consumer.statistics()
    # The first records' acceptances reached the broker in time; the last ones came after
    # their locks expired (acquired together, 3 s before) and were refused.
    assert stats["acknowledged"]["accept"] >= 3, stats["acknowledged"]
    assert stats["acknowledgements_failed"] >= 1
    assert stats["fetcher"]["acknowledge_requests"] >= 2


class _Recorder(ClientHooks):
    def __init__(self) -> None:
        self.started: list[str] = []
        self.closed: list[str] = []
        self.events: list[ConsumeEvent] = []
        self.last_state = ""

    def client_started(self, kind: str, client_id: str, statistics: Any) -> None:
        self.started.append(kind)

    def client_closed(self, kind: str, client_id: str, statistics: Any) -> None:
        self.closed.append(kind)
        self.last_state = statistics()["state"]

    def on_consume(self, event: ConsumeEvent) -> None:
        self.events.append(event)


@pytest.mark.anyio
async def test_hooks_see_start_each_poll_and_close(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(1)
    group = _group("hooks")
    await share_group(kafka_broker, group)
    await produce(kafka_broker, topic, 6)
    hooks = _Recorder()
    async with ShareConsumer(
        topic, bootstrap_servers=kafka_broker, group_id=group, hooks=hooks, client_id="w1"
    ) as consumer:
        got = 0
        with anyio.fail_after(20):
            while got < 6:
                for records in (await consumer.getmany(timeout_ms=500, max_records=4)).values():
                    got += len(records)
    assert hooks.started == ["share_consumer"]
    assert hooks.closed == ["share_consumer"]
    assert hooks.last_state == "closing"
    assert sum(e.record_count for e in hooks.events) == 6
    assert {(e.client_id, e.group_id, e.topic) for e in hooks.events} == {("w1", group, topic)}
    assert hooks.events[0].first_offset == 0
    assert all(e.start_ns <= e.end_ns for e in hooks.events)


@pytest.mark.anyio
async def test_close_returns_within_its_deadline_when_the_broker_hangs(
    kafka_service: KafkaService, kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """The broker stops answering (its process frozen) while the member holds records:
    ``close(timeout=2.0)`` gives up on the final acknowledgement and the leave heartbeat
    after 2 s (not the default ``close_timeout_ms`` of 5 s) and returns; the records come
    back once their locks expire."""
    kafka = kafka_service.apache
    topic = new_topic(1)
    group = _group("hang")
    await share_group(kafka_broker, group, lock_ms=2000)
    await produce(kafka_broker, topic, 3)
    consumer = ShareConsumer(
        topic,
        bootstrap_servers=kafka_broker,
        group_id=group,
        share_acknowledgement_mode="explicit",
    )
    await consumer.start()
    try:
        with anyio.fail_after(20):
            while not await consumer.getmany(timeout_ms=500):
                pass
    except BaseException:
        await consumer.close()
        raise
    pid = kafka.pid()
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        with anyio.fail_after(15):
            await consumer.close(timeout=2.0)
        took = time.monotonic() - started
        print(f"close() with the broker frozen took {took:.2f} s")
    finally:
        os.kill(pid, signal.SIGCONT)
    assert consumer.state.value == "closed"
    assert took < 2.0 + 2.5, took  # the phases' deadline, plus stopping the tasks
    got: dict[bytes, int] = {}
    async with ShareConsumer(topic, bootstrap_servers=kafka_broker, group_id=group) as other:
        with anyio.fail_after(30):
            while len(got) < 3:
                for records in (await other.getmany(timeout_ms=500)).values():
                    got.update((r.value or b"", r.delivery_count) for r in records)
    assert set(got.values()) == {2}


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("resource", "error"),
    [
        (ResourceType.GROUP, GroupAuthorizationFailedError),
        (ResourceType.TOPIC, TopicAuthorizationFailedError),
    ],
)
async def test_a_group_or_topic_the_user_may_not_read_is_a_typed_error(
    kafka_service: KafkaService,
    new_topic: Callable[..., str],
    resource: ResourceType,
    error: type[KafkaError],
) -> None:
    """An ACL denies alice READ on the share group, or on its topic: the first poll raises
    the typed authorization error (from FindCoordinator or the heartbeat's answer) at once,
    the member is failed, and close() returns."""
    kafka = kafka_service.apache
    if kafka.tls is None:
        pytest.skip("the run's Apache Kafka has no SASL listeners")
    topic = new_topic(1)
    group = _group("denied")
    acl = AclBinding(
        ResourcePattern(resource, group if resource is ResourceType.GROUP else topic),
        "User:alice",
        operation=AclOperation.READ,
        permission_type=AclPermissionType.DENY,
    )
    async with AdminClient(kafka.bootstrap_servers) as admin:
        await admin.create_acls([acl], raise_on_error=True)
    try:
        alice: ShareConsumerSettings = {
            "bootstrap_servers": kafka.bootstrap("SASL_PLAINTEXT"),
            "security_protocol": "SASL_PLAINTEXT",
            "sasl_mechanism": "PLAIN",
            "sasl_plain_username": "alice",
            "sasl_plain_password": SASL_USERS["alice"],
            "group_id": group,
        }

        async def refused() -> bool:
            async with ShareConsumer(topic, **alice) as consumer:
                try:
                    await consumer.getmany(timeout_ms=5000)
                except error:
                    return True
            return False

        with anyio.fail_after(30):
            # ACLs reach the broker through the metadata log: a first join may still pass.
            while not await refused():  # noqa: ASYNC110 - polls the broker, no event to wait on
                await anyio.sleep(0.5)
        async with ShareConsumer(topic, **alice) as consumer:
            with anyio.fail_after(10):
                with pytest.raises(error):
                    await consumer.getmany(timeout_ms=5000)
            assert consumer.statistics()["group"]["state"] == "failed"
    finally:
        async with AdminClient(kafka.bootstrap_servers) as admin:
            only_ours = AclBindingFilter(
                ResourcePatternFilter(acl.pattern.resource_type, acl.pattern.name),
                principal="User:alice",
            )
            await admin.delete_acls([only_ours], raise_on_error=True)


@pytest.mark.anyio
async def test_subscribe_later_change_it_unsubscribe_and_join_again(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """No topics at construction: a poll is refused until ``subscribe``; a new subscription
    moves the assignment to the new topic; ``unsubscribe`` gives back what the member held
    (another member gets it at once, not after the 60 s lock) and leaves; a later
    ``subscribe`` joins again."""
    first, second = new_topic(1), new_topic(1)
    group = _group("subscribe")
    await share_group(kafka_broker, group, lock_ms=60_000)
    await produce(kafka_broker, first, 5)
    second_values = await produce(kafka_broker, second, 6)
    settings: ShareConsumerSettings = {
        "bootstrap_servers": kafka_broker,
        "group_id": group,
        "share_acknowledgement_mode": "explicit",
    }
    async with ShareConsumer(**settings) as consumer:
        assert consumer.subscription() == frozenset()
        with pytest.raises(NotSubscribedError):
            await consumer.getmany()
        consumer.subscribe([first])
        assert consumer.subscription() == {first}
        seen: list[tuple[str, bytes]] = []
        with anyio.fail_after(20):
            while len(seen) < 5:
                for records in (await consumer.getmany(timeout_ms=500)).values():
                    for r in records:
                        seen.append((r.topic, r.value or b""))
                        consumer.accept(r)
        assert {t for t, _ in seen} == {first}
        assert consumer.assignment() == {TopicPartition(first, 0)}
        consumer.subscribe(second)
        assert consumer.subscription() == {second}
        held: list[ShareRecord[bytes, bytes]] = []
        with anyio.fail_after(20):
            while not held:
                for records in (await consumer.getmany(timeout_ms=500, max_records=2)).values():
                    held.extend(records)
        assert {r.topic for r in held} == {second}
        assert consumer.assignment() == {TopicPartition(second, 0)}
        # Held, not acknowledged: unsubscribe gives them (and whatever is buffered) back.
        consumer.unsubscribe()
        assert consumer.subscription() == frozenset()
        assert consumer.assignment() == frozenset()
        with pytest.raises(NotSubscribedError):
            await consumer.getmany()
        started = time.monotonic()
        got: dict[bytes, int] = {}
        async with ShareConsumer(second, **settings) as other:
            with anyio.fail_after(20):
                while len(got) < 6:
                    for records in (await other.getmany(timeout_ms=500)).values():
                        for r in records:
                            got[r.value or b""] = r.delivery_count
                            other.accept(r)
            assert sorted(got, key=int) == second_values
            for r in held:
                assert got[r.value or b""] == 2  # delivered to the first member, released
            assert time.monotonic() - started < 20  # long before the 60 s lock would expire
            with anyio.fail_after(10):
                while consumer.statistics()["group"]["state"] != "left":  # noqa: ASYNC110 - no event to wait on
                    await anyio.sleep(0.1)
            # Join again, for the first topic.
            values = [b"late-1", b"late-2"]
            async with Producer(kafka_broker) as producer:
                for v in values:
                    await producer.send(first, v, partition=0)
            consumer.subscribe([first])
            again: list[bytes] = []
            with anyio.fail_after(20):
                while len(again) < 2:
                    for records in (await consumer.getmany(timeout_ms=500)).values():
                        for r in records:
                            again.append(r.value or b"")
                            consumer.accept(r)
            assert again == values
            stats = consumer.statistics()
            assert stats["group"]["joins"] == 2
            assert stats["group"]["state"] == "stable"
            assert stats["subscription"] == [first]


@pytest.mark.anyio
async def test_commit_async_and_the_acknowledgement_commit_callback(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """``commit_async`` sends without waiting and the callback hears the answer; every
    acknowledgement sent (on a fetch, by commit_async, by close) reaches the callback
    exactly once; a callback that raises is logged and counted, the consumer goes on. A
    record object kept from an earlier delivery cannot be acknowledged."""
    topic = new_topic(1)
    group = _group("callback")
    await share_group(kafka_broker, group)
    await produce(kafka_broker, topic, 10)
    calls: list[tuple[dict[TopicPartition, frozenset[int]], KafkaError | None]] = []
    called = anyio.Event()

    def callback(
        offsets: Mapping[TopicPartition, frozenset[int]], error: KafkaError | None
    ) -> None:
        calls.append((dict(offsets), error))
        called.set()
        if len(calls) == 1:
            raise RuntimeError("a bug in the application's callback")

    tp = TopicPartition(topic, 0)
    consumer = ShareConsumer(
        topic,
        bootstrap_servers=kafka_broker,
        group_id=group,
        share_acknowledgement_mode="explicit",
        acknowledgement_commit_callback=callback,
    )
    async with consumer:
        first: list[ShareRecord[bytes, bytes]] = []
        with anyio.fail_after(20):
            while not first:
                for records in (await consumer.getmany(timeout_ms=500, max_records=4)).values():
                    first.extend(records)
        for r in first:
            consumer.accept(r)
        consumer.commit_async()  # a plain call: returns at once, nothing to await
        with anyio.fail_after(10):
            await called.wait()
        assert calls[0] == ({tp: frozenset(r.offset for r in first)}, None)
        assert consumer.statistics()["acknowledgement_callback_errors"] == 1
        assert consumer.statistics()["fetcher"]["acknowledge_requests"] >= 1
        # commit_async's outcome is also in the next commit()'s result.
        assert await consumer.commit() == {tp: None}
        # Release one record and take it back: the old record object is refused.
        released: ShareRecord[bytes, bytes] | None = None
        redelivered: ShareRecord[bytes, bytes] | None = None
        done = {r.offset for r in first}
        with anyio.fail_after(20):
            while redelivered is None or len(done) < 10:
                for records in (await consumer.getmany(timeout_ms=500)).values():
                    for r in records:
                        if released is None:
                            released = r
                            consumer.release(r)
                        elif r.offset == released.offset:
                            redelivered = r
                            assert r.delivery_count == 2
                            with pytest.raises(AcknowledgementStateError, match="delivery 1"):
                                consumer.accept(released)
                            consumer.accept(r)
                            done.add(r.offset)
                        else:
                            consumer.accept(r)
                            done.add(r.offset)
        assert consumer.acquisition_lock_timeout_ms == 30_000
    stats = consumer.statistics()
    assert all(error is None for _, error in calls), calls
    told = Counter(offset for offsets, _ in calls for offset in offsets[tp])
    sent = stats["acknowledged"]
    assert sum(told.values()) == sent["accept"] + sent["release"] + sent["reject"]
    assert released is not None
    assert told[released.offset] == 2  # released, then accepted
    assert set(told) == set(range(10))
    assert stats["acknowledgement_callback_errors"] == 1


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_a_cancelled_poll_loses_no_record(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """Cancelling a poll (a cancel scope: the Java client's ``wakeup()``) interrupts its
    wait at once; the consumer stays usable, and records it had not handed out come with a
    later poll: every record exactly once, never redelivered."""
    topic = new_topic(1)
    group = _group("cancel")
    await share_group(kafka_broker, group)
    values: list[bytes] = []
    seen: list[tuple[bytes, int]] = []
    async with ShareConsumer(topic, bootstrap_servers=kafka_broker, group_id=group) as consumer:
        for round_ in range(4):
            # Nothing to read: the poll waits, and is cancelled while its fetches go on.
            started = time.monotonic()
            with anyio.move_on_after(0.3) as scope:
                await consumer.getmany(timeout_ms=10_000)
            assert scope.cancelled_caught
            assert time.monotonic() - started < 2
            batch = [f"{round_}-{i}".encode() for i in range(8)]
            async with Producer(kafka_broker) as producer:
                for v in batch:
                    await producer.send(topic, v, partition=0)
            values += batch
            with anyio.fail_after(20):
                while len(seen) < len(values):
                    # Short polls, some cancelled before anything came.
                    with anyio.move_on_after(0.05):
                        got = await consumer.getmany(timeout_ms=5000, max_records=3)
                        seen.extend(
                            (r.value or b"", r.delivery_count) for rs in got.values() for r in rs
                        )
    assert sorted(v for v, _ in seen) == sorted(values)
    assert len(seen) == len(values)
    assert {count for _, count in seen} == {1}
    async with ShareConsumer(topic, bootstrap_servers=kafka_broker, group_id=group) as other:
        assert await other.getmany(timeout_ms=1500) == {}  # all accepted, none released


@pytest.mark.anyio
async def test_subscribing_before_the_topic_exists(
    kafka_broker: str,
) -> None:
    """A topic created after the subscription is read once it exists (the coordinator
    assigns it, the member resolves its id)."""
    topic = f"later-{uuid.uuid4().hex[:10]}"
    group = _group("later")
    await share_group(kafka_broker, group)
    async with ShareConsumer(topic, bootstrap_servers=kafka_broker, group_id=group) as consumer:
        assert await consumer.getmany(timeout_ms=500) == {}
        async with AdminClient(kafka_broker) as admin:
            await admin.create_topics([NewTopic(topic, num_partitions=1)], raise_on_error=True)
        await produce(kafka_broker, topic, 3)
        got: list[bytes] = []
        with anyio.fail_after(30):
            while len(got) < 3:
                for records in (await consumer.getmany(timeout_ms=500)).values():
                    got.extend(r.value or b"" for r in records)
        assert got == [b"0", b"1", b"2"]


@pytest.mark.anyio
async def test_a_deleted_topic_does_not_stop_the_others(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """Subscribed to two topics, one is deleted: the member goes on reading the other.

    Apache Kafka 4.1.1 may answer the session's next ShareFetch with UNKNOWN_SERVER_ERROR
    (the deleted partition is still in it); the member starts a new session and goes on
    (it must not fail). Records the broker acquired for a fetch it then failed stay locked
    until the lock expires (2 s here) and come later, so only the set is asserted."""
    doomed, kept = new_topic(1), new_topic(1)
    group = _group("deleted")
    await share_group(kafka_broker, group, lock_ms=2000)
    await produce(kafka_broker, doomed, 2)
    await produce(kafka_broker, kept, 2)
    async with ShareConsumer(
        doomed, kept, bootstrap_servers=kafka_broker, group_id=group
    ) as consumer:
        got: Counter[str] = Counter()
        with anyio.fail_after(20):
            while got != {doomed: 2, kept: 2}:
                for tp, records in (await consumer.getmany(timeout_ms=500)).items():
                    got[tp.topic] += len(records)
        async with AdminClient(kafka_broker) as admin:
            await admin.delete_topics([doomed], raise_on_error=True)
        values = [b"after-1", b"after-2", b"after-3"]
        async with Producer(kafka_broker) as producer:
            for v in values:
                await producer.send(kept, v, partition=0)
        after: list[bytes] = []
        with anyio.fail_after(30):
            while len(after) < 3:
                for tp, records in (await consumer.getmany(timeout_ms=500)).items():
                    assert tp.topic == kept
                    after.extend(r.value or b"" for r in records)
        assert sorted(after) == values
        with anyio.fail_after(30):
            while consumer.assignment() != {TopicPartition(kept, 0)}:
                await consumer.getmany(timeout_ms=200)


@pytest.mark.anyio
async def test_implicit_commit_async_accepts_what_was_delivered(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    """Implicit mode: ``commit_async`` accepts the records the last poll delivered and
    sends the acceptance; the callback hears it and no member gets them again."""
    topic = new_topic(1)
    group = _group("implicit-async")
    await share_group(kafka_broker, group)
    await produce(kafka_broker, topic, 5)
    told: list[frozenset[int]] = []
    heard = anyio.Event()

    def callback(
        offsets: Mapping[TopicPartition, frozenset[int]], error: KafkaError | None
    ) -> None:
        assert error is None
        told.extend(offsets.values())
        heard.set()

    async with ShareConsumer(
        topic,
        bootstrap_servers=kafka_broker,
        group_id=group,
        acknowledgement_commit_callback=callback,
    ) as consumer:
        offsets: set[int] = set()
        with anyio.fail_after(20):
            while len(offsets) < 5:
                for records in (await consumer.getmany(timeout_ms=500)).values():
                    offsets.update(r.offset for r in records)
        consumer.commit_async()
        # Acceptances of earlier polls may have gone on fetches already; commit_async sends
        # the rest.
        with anyio.fail_after(10):
            while set().union(*told) != set(range(5)):
                await heard.wait()
                heard = anyio.Event()
        assert offsets == set(range(5))
        stats = consumer.statistics()
        assert stats["acknowledged"]["accept"] == 5
        assert stats["acknowledgement_callback_errors"] == 0  # its asserts held
        async with ShareConsumer(topic, bootstrap_servers=kafka_broker, group_id=group) as other:
            assert await other.getmany(timeout_ms=1500) == {}
