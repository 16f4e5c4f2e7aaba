"""``commit()`` outlives a coordinator failover within its deadline (``default_api_timeout_ms``,
60 s, as Java's ``commitSync``), not within one request's timeout: on a single Apache Kafka
node that is killed while a commit is pending, the commit completes once the node is back;
with a deadline shorter than the outage it raises ``KafkaTimeoutError`` naming the deadline.
``committed()``, ``position()`` and the offset lookups (``beginning_offsets``,
``end_offsets``, ``offsets_for_times``) have the same deadline (Java's
``default.api.timeout.ms`` for them too): they outlive a node that stops answering (SIGSTOP)
for longer than a request may take.

The consumer assigns its partition by hand (a group id, no membership): the commit is then
a plain OffsetCommit with no generation, so what the test sees is the commit's own retrying,
not a rejoin after the session expired during the outage."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import anyio
import pytest
from consumer_helpers import produce

from kafka_async.consumer import Consumer
from kafka_async.errors import ConfigError, KafkaTimeoutError
from kafka_async.structs import TopicPartition
from kafka_async.testing.apache import ApacheKafka
from kafka_async.testing.topics import create_topic

pytestmark = pytest.mark.integration

#: Far below the outage: with the old deadline (one request timeout) the commit failed.
REQUEST_TIMEOUT_MS = 2000


@pytest.mark.anyio
async def test_commit_survives_a_coordinator_restart(apache_kafka: ApacheKafka) -> None:
    bootstrap = apache_kafka.bootstrap_servers
    topic = "commit-failover"
    create_topic(bootstrap, topic, 1)
    produce(bootstrap, topic, 10)
    tp = TopicPartition(topic, 0)
    async with Consumer(
        bootstrap_servers=bootstrap,
        group_id="commit-failover",
        enable_auto_commit=False,
        request_timeout_ms=REQUEST_TIMEOUT_MS,
        # The default (60 s) with room for a slow restart on a loaded machine.
        default_api_timeout_ms=90_000,
        reconnect_backoff_max_ms=500,
    ) as consumer:
        consumer.assign([tp])
        await consumer.commit({tp: 3})  # the coordinator is known and has loaded the group
        with pytest.raises(ConfigError, match="timeout_ms"):
            await consumer.commit({tp: 4}, timeout_ms=-1)

        await anyio.to_thread.run_sync(apache_kafka.kill)
        started = time.monotonic()
        with pytest.raises(KafkaTimeoutError, match=r"within 1\.500 s"):
            await consumer.commit({tp: 4}, timeout_ms=1500)
        assert 1.4 < time.monotonic() - started < 10

        done = anyio.Event()
        failure: list[BaseException] = []

        async def pending_commit() -> None:
            try:
                await consumer.commit({tp: 7})  # deadline: default_api_timeout_ms
            except BaseException as exc:  # the assertion below reports it
                failure.append(exc)
            finally:
                done.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(pending_commit)
            # Pending for longer than a request may take, then the node comes back.
            await anyio.sleep(REQUEST_TIMEOUT_MS / 1000 * 2)
            assert not done.is_set(), f"commit returned while the node was down: {failure}"
            await anyio.to_thread.run_sync(apache_kafka.start)
            with anyio.fail_after(100):
                await done.wait()
        assert not failure, failure
        assert await consumer.committed(tp, timeout_ms=30_000) == 7


@pytest.mark.anyio
async def test_offset_lookups_outlive_a_broker_that_stops_answering(
    apache_kafka: ApacheKafka,
) -> None:
    bootstrap = apache_kafka.bootstrap_servers
    topic = "lookups-stalled"
    create_topic(bootstrap, topic, 1)
    produce(bootstrap, topic, 10)
    tp = TopicPartition(topic, 0)
    pid = apache_kafka.pid()
    assert pid is not None
    async with Consumer(
        bootstrap_servers=bootstrap,
        group_id="lookups-stalled",
        enable_auto_commit=False,
        request_timeout_ms=REQUEST_TIMEOUT_MS,
        reconnect_backoff_max_ms=500,
        # default_api_timeout_ms left at its default (60 s): the deadline under test.
    ) as consumer:
        await consumer.commit({tp: 4})  # a plain commit: nothing is assigned yet
        with pytest.raises(ConfigError, match="timeout_ms"):
            await consumer.end_offsets([tp], timeout_ms=-1)
        results: dict[str, Any] = {}

        async def call(name: str, make: Any) -> None:
            try:
                results[name] = await make()
            except BaseException as exc:  # reported by the assertion below
                results[name] = exc

        os.kill(pid, signal.SIGSTOP)
        try:
            # Assigned only now: position() waits for the committed offset, which the
            # background task cannot fetch while the broker is stopped.
            consumer.assign([tp])
            async with anyio.create_task_group() as tg:
                tg.start_soon(call, "committed", lambda: consumer.committed(tp))
                tg.start_soon(call, "position", lambda: consumer.position(tp))
                tg.start_soon(call, "beginning", lambda: consumer.beginning_offsets([tp]))
                tg.start_soon(call, "end", lambda: consumer.end_offsets([tp]))
                tg.start_soon(call, "times", lambda: consumer.offsets_for_times({tp: 0}))
                # Unanswered for longer than two request timeouts: each call has had a
                # request time out (the old deadline) and is retrying.
                await anyio.sleep(REQUEST_TIMEOUT_MS / 1000 * 2 + 1)
                assert results == {}, f"returned while the broker was stopped: {results}"
                os.kill(pid, signal.SIGCONT)
                with anyio.fail_after(50):
                    while len(results) < 5:  # noqa: ASYNC110 - the calls run in tg
                        await anyio.sleep(0.1)
        finally:
            os.kill(pid, signal.SIGCONT)
        assert results["committed"] == 4, results
        assert results["position"] == 4, results
        assert results["beginning"] == {tp: 0}, results
        assert results["end"] == {tp: 10}, results
        assert results["times"][tp].offset == 0, results
