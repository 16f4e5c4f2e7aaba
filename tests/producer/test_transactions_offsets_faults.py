"""``send_offsets_to_transaction`` through a lost connection or a request timeout.

The transactional producer reaches the run's broker (Apache Kafka in the broker tier)
through a :class:`~kafka_async.testing.proxy.FaultProxy`: the proxy rewrites every broker
address in Metadata and FindCoordinator answers to its own (``advertise_self``), so all of
the producer's connections, the group coordinator's included, go through it. The consumer
group and the readers connect to the broker directly.

While ``send_offsets_to_transaction`` runs, the proxy loses the TxnOffsetCommit exchange once:

* ``reset``: the broker applies the request, the answer is lost and the connection is reset
  (the client sees a connection error);
* ``timeout``: the request never reaches the broker and no answer comes (the client's
  request times out after ``request_timeout_ms``).

The call must find the group coordinator again and retry, as ``_txn_call`` does for the
transaction coordinator and as the Java client does; the transaction then commits, and a
fresh member of the group resumes after the committed offset while a read_committed reader
sees the transaction's records. Before the fix the connection or timeout error escaped from
``send_offsets_to_transaction`` at once.

A call that does not complete (here: cancelled while its TxnOffsetCommit goes unanswered)
leaves the transaction open without the offsets: ``commit_transaction`` must refuse it (it
would commit the records without the offsets) and leave the transaction abortable, while
calling ``send_offsets_to_transaction`` again first lets the commit carry the offsets.
Before that guard the commit went through without the offsets.

A coordinator that never answers: every transactional call gives up with
:class:`KafkaTimeoutError` once ``max_block_ms`` has passed (the Java client's bound for its
transactional calls), retries included; the transaction stays abortable, and a later call
succeeds once the coordinator answers again. Before, each call retried 60 times, every
attempt waiting ``request_timeout_ms``: with the defaults, up to about an hour.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from kafka_async import Consumer, Producer, TopicPartition
from kafka_async.admin import AdminClient
from kafka_async.errors import KafkaTimeoutError
from kafka_async.producer.transaction import TransactionStateError, TxnState
from kafka_async.protocol.apis import END_TXN, TXN_OFFSET_COMMIT
from kafka_async.testing.proxy import FaultProxy

pytestmark = [pytest.mark.integration, pytest.mark.anyio]

RECORDS = 8
TAKEN = 5


def _address(bootstrap: str) -> tuple[str, int]:
    first = bootstrap.split(",")[0]
    host, _, port = first.rpartition(":")
    return host, int(port)


async def _take(consumer: Consumer[bytes, bytes], n: int) -> list[bytes]:
    values: list[bytes] = []
    with anyio.fail_after(20):
        while len(values) < n:
            batch = await consumer.getmany(timeout_ms=500, max_records=n - len(values))
            values += [r.value for recs in batch.values() for r in recs if r.value]
    return values


@pytest.mark.parametrize("fault", ["reset", "timeout"])
async def test_offsets_commit_survives_a_lost_exchange(
    kafka_broker: str, new_topic: Any, fault: str
) -> None:
    source, sink = new_topic(1), new_topic(1)
    group = f"offsets-faults-{source}"
    tp = TopicPartition(source, 0)
    async with Producer(bootstrap_servers=kafka_broker) as seed:
        for i in range(RECORDS):
            await seed.send(source, b"in-%d" % i, partition=0)

    consumer_settings: dict[str, Any] = {
        "bootstrap_servers": kafka_broker,
        "group_id": group,
        "enable_auto_commit": False,
        "auto_offset_reset": "earliest",
        "isolation_level": "read_committed",
        "session_timeout_ms": 6000,
        "heartbeat_interval_ms": 500,
    }
    async with FaultProxy(*_address(kafka_broker)) as proxy:
        proxy.advertise_self()
        async with (
            Consumer(source, **consumer_settings) as consumer,
            Producer(
                bootstrap_servers=proxy.address,
                transactional_id=f"offsets-faults-{source}",
                request_timeout_ms=3_000,
                retry_backoff_ms=50,
            ) as producer,
        ):
            await consumer.wait_for_assignment(timeout=20)
            inputs = await _take(consumer, TAKEN)
            assert inputs == [b"in-%d" % i for i in range(TAKEN)]
            producer.begin_transaction()
            for value in inputs:
                await producer.send(sink, value.replace(b"in", b"out"))
            if fault == "reset":
                proxy.drop_responses(TXN_OFFSET_COMMIT.key, count=1, reset=True)
            else:
                proxy.drop_requests(TXN_OFFSET_COMMIT.key, count=1)
            with anyio.fail_after(20):
                await producer.send_offsets_to_transaction({tp: TAKEN}, consumer.group_metadata())
            # The fault hit the producer's TxnOffsetCommit, and the call sent it again.
            assert proxy.stats.rewrite_failures == 0
            assert proxy.stats.responses_rewritten >= 2
            dropped = (
                proxy.stats.responses_dropped if fault == "reset" else proxy.stats.requests_dropped
            )
            assert dropped == 1
            # (A dropped request is not counted as forwarded.)
            attempts = proxy.stats.requests_by_api.get(TXN_OFFSET_COMMIT.key, 0)
            attempts += proxy.stats.requests_dropped
            assert attempts >= 2
            with anyio.fail_after(20):
                await producer.commit_transaction()

    async with AdminClient(kafka_broker) as admin:
        got = await admin.list_consumer_group_offsets(group, [tp])
    assert got[tp].offset == TAKEN
    # A fresh member of the group resumes after the committed offset.
    async with Consumer(source, **consumer_settings) as fresh:
        assert await _take(fresh, RECORDS - TAKEN) == [b"in-%d" % i for i in range(TAKEN, RECORDS)]
    # A read_committed reader sees the transaction's records.
    reader_settings = {**consumer_settings, "group_id": f"{group}-reader"}
    async with Consumer(sink, **reader_settings) as reader:
        assert await _take(reader, TAKEN) == [b"out-%d" % i for i in range(TAKEN)]


async def test_commit_refused_after_an_unfinished_offsets_call(
    kafka_broker: str, new_topic: Any
) -> None:
    source, sink = new_topic(1), new_topic(1)
    group = f"offsets-unsent-{source}"
    tp = TopicPartition(source, 0)

    async def committed() -> int | None:
        async with AdminClient(kafka_broker) as admin:
            got = await admin.list_consumer_group_offsets(group, [tp])
        return got[tp].offset if tp in got and got[tp].offset >= 0 else None

    async with FaultProxy(*_address(kafka_broker)) as proxy:
        proxy.advertise_self()
        async with Producer(
            bootstrap_servers=proxy.address, transactional_id=group, retry_backoff_ms=50
        ) as producer:
            txn = producer._txn
            assert txn is not None
            # The call is cancelled while its TxnOffsetCommit goes unanswered: commit refused.
            producer.begin_transaction()
            await producer.send(sink, b"first")
            proxy.drop_requests(TXN_OFFSET_COMMIT.key, count=1)
            with anyio.move_on_after(1.5) as scope:
                await producer.send_offsets_to_transaction({tp: 3}, group)
            assert scope.cancelled_caught
            assert proxy.stats.requests_dropped == 1
            with pytest.raises(TransactionStateError, match="send_offsets_to_transaction"):
                await producer.commit_transaction()
            assert txn.state is TxnState.ABORTABLE_ERROR
            with anyio.fail_after(20):
                await producer.abort_transaction()
            assert await committed() is None
            # Called again after the cancelled call: the commit carries the offsets.
            producer.begin_transaction()
            await producer.send(sink, b"second")
            proxy.drop_requests(TXN_OFFSET_COMMIT.key, count=1)
            with anyio.move_on_after(1.5) as scope:
                await producer.send_offsets_to_transaction({tp: 5}, group)
            assert scope.cancelled_caught
            with anyio.fail_after(20):
                await producer.send_offsets_to_transaction({tp: 5}, group)
                await producer.commit_transaction()
    assert await committed() == 5
    reader_settings: dict[str, Any] = {
        "bootstrap_servers": kafka_broker,
        "group_id": f"{group}-reader",
        "auto_offset_reset": "earliest",
        "isolation_level": "read_committed",
    }
    async with Consumer(sink, **reader_settings) as reader:
        assert await _take(reader, 1) == [b"second"]


async def test_transactional_calls_give_up_after_max_block_ms(
    kafka_broker: str, new_topic: Any
) -> None:
    sink = new_topic(1)
    group = f"offsets-max-block-{sink}"
    tp = TopicPartition(sink, 0)
    max_block_ms = 2_000
    async with FaultProxy(*_address(kafka_broker)) as proxy:
        proxy.advertise_self()
        async with Producer(
            bootstrap_servers=proxy.address,
            transactional_id=group,
            max_block_ms=max_block_ms,
            request_timeout_ms=1_000,
            retry_backoff_ms=50,
        ) as producer:
            producer.begin_transaction()
            await producer.send(sink, b"held")
            # Every TxnOffsetCommit and EndTxn from now on is swallowed: no answer ever.
            proxy.drop_requests(TXN_OFFSET_COMMIT.key, count=None)
            proxy.drop_requests(END_TXN.key, count=None)
            # A deadline far above max_block_ms and far below the old bound (60 attempts of
            # request_timeout_ms each): the call must end by itself, with a typed error.
            with anyio.fail_after(30):
                with pytest.raises(KafkaTimeoutError, match="max_block_ms"):
                    await producer.send_offsets_to_transaction({tp: 1}, group)
            dropped = proxy.stats.requests_dropped
            assert dropped >= 2, "the call did not retry within max_block_ms"
            with anyio.fail_after(30):
                with pytest.raises(KafkaTimeoutError, match="EndTxn"):
                    await producer.abort_transaction()
            assert proxy.stats.requests_dropped > dropped
            # The coordinator answers again: the abort goes through and nothing is visible.
            proxy.clear()
            with anyio.fail_after(30):
                await producer.abort_transaction()
    reader_settings: dict[str, Any] = {
        "bootstrap_servers": kafka_broker,
        "group_id": f"{group}-reader",
        "auto_offset_reset": "earliest",
        "isolation_level": "read_committed",
    }
    async with Consumer(sink, **reader_settings) as reader:
        batch = await reader.getmany(timeout_ms=2_000)
        assert not any(batch.values())
