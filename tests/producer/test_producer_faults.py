"""Retries and idempotence under lost responses, through a fault-injecting TCP proxy.

The proxy sits between the producer and a real Tansu broker (which advertises the proxy's
address, so every connection goes through it). It forwards bytes unchanged, except that it
can swallow a Produce *response* and cut the connection: the broker has written the batch,
but the producer never hears so. That is the case idempotence exists for: the retried batch
must be recognised as a duplicate, and the log must hold every record exactly once.
"""

from __future__ import annotations

import socket
import struct
import time
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import pytest
from producer_readback import consume_confluent

from kafka_async import Producer
from kafka_async.testing import EmbeddedBroker
from kafka_async.testing.topics import create_topic

pytestmark = [pytest.mark.integration]

PRODUCE = 0


class FaultProxy:
    """Forwards Kafka frames; ``drop_produce_responses`` of them are swallowed (and the
    connection cut) after the first ``pass_first`` Produce responses went through."""

    def __init__(self, port: int, upstream_port: int) -> None:
        self.port = port
        self.upstream_port = upstream_port
        self.drop_produce_responses = 0
        self.pass_first = 0
        self.produce_responses = 0
        self.dropped = 0
        #: When set, the next Produce request gets its first batch's base sequence pushed
        #: ahead (CRC fixed up): the broker sees a gap, as if it had lost earlier batches.
        self.skew_next_sequence = False
        self.skewed = 0
        #: Error codes to write into the next Produce responses (first partition of each).
        #: The broker did write those batches: an answer rewritten in transit.
        self.inject_errors: deque[int] = deque()
        self.injected = 0
        #: Error codes the broker "rejects" the next Produce requests with (first partition
        #: of each): the request names a partition that does not exist instead, so the broker
        #: really writes nothing, and its answer comes back with the partition and this code.
        self.reject_errors: deque[int] = deque()
        #: Per correlation id: the code to answer a request redirected by ``reject_errors``.
        self._rejecting: dict[int, int] = {}

    async def serve(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=self.port)
        async with listener:
            task_status.started()
            await listener.serve(self._handle)

    async def _handle(self, client: anyio.abc.SocketStream) -> None:
        try:
            upstream = await anyio.connect_tcp("127.0.0.1", self.upstream_port)
        except OSError:
            await client.aclose()
            return
        api_keys: deque[tuple[int, int]] = deque()
        async with client, upstream, anyio.create_task_group() as tg:

            async def requests() -> None:
                async for frame in _frames(client):
                    api_key, version = struct.unpack_from(">hh", frame, 4)
                    api_keys.append((api_key, version))
                    if api_key == PRODUCE and self.reject_errors:
                        frame, cid = _redirect_first_partition(frame)
                        self._rejecting[cid] = self.reject_errors.popleft()
                    if api_key == PRODUCE and self.skew_next_sequence:
                        self.skew_next_sequence = False
                        self.skewed += 1
                        frame = _skew_first_sequence(frame)
                    await upstream.send(frame)
                tg.cancel_scope.cancel()

            async def responses() -> None:
                async for frame in _frames(upstream):
                    api_key, version = api_keys.popleft() if api_keys else (-1, -1)
                    cid = struct.unpack_from(">i", frame, 4)[0]
                    if api_key == PRODUCE and cid in self._rejecting:
                        self.injected += 1
                        frame = _inject_error(frame, version, self._rejecting.pop(cid))
                    elif api_key == PRODUCE and self.inject_errors:
                        self.injected += 1
                        frame = _inject_error(frame, version, self.inject_errors.popleft())
                    if api_key == PRODUCE:
                        self.produce_responses += 1
                        if (
                            self.produce_responses > self.pass_first
                            and self.dropped < self.drop_produce_responses
                        ):
                            self.dropped += 1
                            tg.cancel_scope.cancel()  # both sides close: response lost
                            return
                    await client.send(frame)
                tg.cancel_scope.cancel()

            tg.start_soon(requests)
            tg.start_soon(responses)


def _skew_first_sequence(frame: bytes) -> bytes:
    import crc32c

    from kafka_async.protocol import headers
    from kafka_async.protocol.apis import PRODUCE as PRODUCE_API
    from kafka_async.protocol.codec import Reader

    r = Reader(frame, 4)
    _, version, correlation_id, client_id = headers.decode_request_header(r)
    if PRODUCE_API.is_flexible(version):
        headers.skip_tags(r)
    body = PRODUCE_API.decode_request(version, r)
    part = body.topic_data[0].partition_data[0]
    assert part.records is not None
    batch = bytearray(part.records)
    seq = struct.unpack_from(">i", batch, 53)[0]
    struct.pack_into(">i", batch, 53, seq + 7)
    struct.pack_into(">I", batch, 17, crc32c.crc32c(bytes(batch[21:])))
    part.records = bytes(batch)
    out = headers.encode_request(PRODUCE_API, version, correlation_id, client_id, body)
    return struct.pack(">i", len(out)) + bytes(out)


#: Where ``reject_errors`` sends a batch: no topic has that many partitions.
_NOWHERE = 99_999


def _redirect_first_partition(frame: bytes) -> tuple[bytes, int]:
    """Point a Produce request's first partition at ``_NOWHERE``; returns it and its
    correlation id (the answer is matched back by it)."""
    from kafka_async.protocol import headers
    from kafka_async.protocol.apis import PRODUCE as PRODUCE_API
    from kafka_async.protocol.codec import Reader

    r = Reader(frame, 4)
    _, version, correlation_id, client_id = headers.decode_request_header(r)
    if PRODUCE_API.is_flexible(version):
        headers.skip_tags(r)
    body = PRODUCE_API.decode_request(version, r)
    body.topic_data[0].partition_data[0].index = _NOWHERE
    out = headers.encode_request(PRODUCE_API, version, correlation_id, client_id, body)
    return struct.pack(">i", len(out)) + bytes(out), correlation_id


def _inject_error(frame: bytes, version: int, code: int) -> bytes:
    """Rewrite a Produce response: its first partition answers ``code`` (and, when the
    request was redirected to ``_NOWHERE``, names the partition the client asked for)."""
    from kafka_async.protocol import headers
    from kafka_async.protocol.apis import PRODUCE as PRODUCE_API
    from kafka_async.protocol.codec import Reader

    r = Reader(frame, 4)
    correlation_id = headers.read_response_header(r, PRODUCE_API, version)
    body = PRODUCE_API.decode_response(version, r)
    part = body.responses[0].partition_responses[0]
    if part.index == _NOWHERE:
        part.index = 0  # the tests redirect partition 0
    part.error_code = code
    part.base_offset = -1
    out = headers.encode_response(PRODUCE_API, version, correlation_id, body)
    return struct.pack(">i", len(out)) + bytes(out)


async def _frames(stream: anyio.abc.ByteReceiveStream) -> AsyncIterator[bytes]:
    buf = bytearray()
    try:
        while True:
            while len(buf) >= 4:
                size = struct.unpack_from(">i", buf, 0)[0]
                if len(buf) < 4 + size:
                    break
                frame = bytes(buf[: 4 + size])
                del buf[: 4 + size]
                yield frame
            chunk = await stream.receive(65536)
            buf += chunk
    except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        return


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def faulty_broker() -> Any:
    proxy_port = _free_port()
    with EmbeddedBroker(advertised_port=proxy_port) as broker:
        yield broker, proxy_port


@asynccontextmanager
async def _behind_proxy(
    faulty_broker: Any, prefix: str, partitions: int
) -> AsyncIterator[tuple[str, FaultProxy]]:
    """A fresh topic, and a FaultProxy serving the broker's advertised address while the
    block runs: yields the topic and the proxy (bootstrap through ``_bootstrap(proxy)``)."""
    broker, proxy_port = faulty_broker
    topic = f"{prefix}-{time.monotonic_ns()}"
    await anyio.to_thread.run_sync(create_topic, broker.bootstrap_servers, topic, partitions)
    proxy = FaultProxy(proxy_port, broker.port)
    async with anyio.create_task_group() as tg:
        await tg.start(proxy.serve)
        yield topic, proxy
        tg.cancel_scope.cancel()


def _bootstrap(proxy: FaultProxy) -> str:
    return f"127.0.0.1:{proxy.port}"


async def _read_back(faulty_broker: Any, topic: str, partitions: int, expected: int) -> list[Any]:
    """confluent-kafka's read of ``topic``. The broker advertises the proxy, so the reader goes
    through it too: call it inside ``_behind_proxy``, once the faults are spent."""
    broker, _ = faulty_broker
    msgs: list[Any] = await anyio.to_thread.run_sync(
        consume_confluent, broker.bootstrap_servers, topic, partitions, expected
    )
    return msgs


async def _produce_through_faults(
    faulty_broker: Any, *, idempotent: bool, total: int
) -> tuple[list[Any], FaultProxy, dict[str, Any]]:
    async with _behind_proxy(faulty_broker, "faults", 2) as (topic, proxy):
        async with Producer(
            bootstrap_servers=_bootstrap(proxy),
            enable_idempotence=idempotent,
            linger_ms=2,
            max_batch_size=2048,
            request_timeout_ms=3000,
            retry_backoff_ms=20,
        ) as producer:
            await producer.send(topic, b"warm-up", partition=0)
            # From now on, lose 3 of the Produce responses (after letting a few through).
            proxy.pass_first = proxy.produce_responses + 3
            proxy.drop_produce_responses = 3
            deliveries = []
            for i in range(total):
                deliveries.append(
                    await producer.enqueue(topic, value=i.to_bytes(4, "big"), partition=i % 2)
                )
                if i % 200 == 0:
                    await anyio.sleep(0.01)  # spread the records over many requests
            with anyio.fail_after(60):
                await producer.flush()
            stats = producer.statistics()
            errors = [d.exception() for d in deliveries if d.exception() is not None]
            assert errors == []
        msgs = await _read_back(faulty_broker, topic, 2, total + 1)
    return [m for m in msgs if m.value() != b"warm-up"], proxy, stats


@pytest.mark.anyio
@pytest.mark.interop
async def test_idempotence_dedups_retries_after_lost_responses(faulty_broker: Any) -> None:
    total = 3000
    msgs, proxy, stats = await _produce_through_faults(faulty_broker, idempotent=True, total=total)
    assert proxy.dropped == 3
    assert stats["retries"] > 0
    values = [int.from_bytes(m.value(), "big") for m in msgs]
    assert sorted(values) == list(range(total))  # exactly once: no loss, no duplicate
    for partition in (0, 1):
        ordered = [int.from_bytes(m.value(), "big") for m in msgs if m.partition() == partition]
        assert ordered == sorted(ordered)


@pytest.mark.anyio
@pytest.mark.interop
async def test_without_idempotence_retries_keep_order_but_may_duplicate(
    faulty_broker: Any,
) -> None:
    total = 3000
    msgs, proxy, stats = await _produce_through_faults(faulty_broker, idempotent=False, total=total)
    assert proxy.dropped == 3
    assert stats["retries"] > 0
    values = [int.from_bytes(m.value(), "big") for m in msgs]
    assert set(values) == set(range(total))  # at least once
    assert len(values) > total  # the lost responses' batches were written twice
    for partition in (0, 1):
        ordered = [int.from_bytes(m.value(), "big") for m in msgs if m.partition() == partition]
        # A retried batch is resent before anything after it: order holds, with repeats.
        firsts = list(dict.fromkeys(ordered))
        assert firsts == sorted(firsts)


@pytest.mark.anyio
@pytest.mark.interop
async def test_sequence_gap_bumps_the_epoch_and_retries(faulty_broker: Any) -> None:
    """OUT_OF_ORDER_SEQUENCE_NUMBER for the batch the broker should have accepted (as after
    broker-side data loss): the epoch is bumped (KIP-360) and that batch is sent again under
    it, as the Java client does for an idempotent producer; every record lands exactly once
    and in order."""
    async with _behind_proxy(faulty_broker, "gap", 1) as (topic, proxy):
        async with Producer(
            bootstrap_servers=_bootstrap(proxy), linger_ms=2, max_batch_size=1024
        ) as producer:
            first = [await producer.send(topic, value=b"a%d" % i) for i in range(5)]
            proxy.skew_next_sequence = True
            deliveries = [await producer.enqueue(topic, value=b"b%d" % i) for i in range(300)]
            with anyio.fail_after(60):
                await producer.flush()
            stats = producer.statistics()
            last = await producer.send(topic, value=b"after")
        accepted_gap = bool(proxy.skewed) and (
            stats["errors_by_code"].get("OUT_OF_ORDER_SEQUENCE_NUMBER") is None
        )
        msgs = [] if accepted_gap else await _read_back(faulty_broker, topic, 1, 306)
    if accepted_gap:
        pytest.skip("Tansu gap: a Produce batch with a sequence gap is accepted")
    assert proxy.skewed == 1
    assert [d.exception() for d in deliveries if d.exception() is not None] == []
    assert stats["retries"] >= 1
    # KIP-360 bump (InitProducerId with the current id and epoch). Tansu answers that with
    # UNKNOWN_SERVER_ERROR, so there the producer recovers with a fresh producer id instead.
    assert stats["epoch_bumps"] + stats["producer_id_resets"] == 1
    assert [md.offset for md in first] == [0, 1, 2, 3, 4]
    values = [m.value() for m in msgs]
    expected = [b"a%d" % i for i in range(5)] + [b"b%d" % i for i in range(300)] + [b"after"]
    assert values == expected  # exactly once, in order
    assert last.offset == len(values) - 1
    assert [d.result().offset for d in deliveries] == list(range(5, 305))


@pytest.mark.anyio
@pytest.mark.interop
async def test_broker_errors_retriable_and_not(faulty_broker: Any) -> None:
    """NOT_LEADER_OR_FOLLOWER is retried (after a metadata refresh) and, thanks to
    idempotence, lands once; INVALID_RECORD fails just that batch with its typed error."""
    from kafka_async.errors import InvalidRecordError, NotLeaderOrFollowerError

    async with _behind_proxy(faulty_broker, "errs", 1) as (topic, proxy):
        async with Producer(
            bootstrap_servers=_bootstrap(proxy), linger_ms=0, retry_backoff_ms=10
        ) as producer:
            proxy.inject_errors.extend([NotLeaderOrFollowerError.code] * 2)
            retried = await producer.send(topic, value=b"retried")
            assert producer.statistics()["retries"] == 2
            proxy.inject_errors.append(InvalidRecordError.code)
            with pytest.raises(InvalidRecordError):
                await producer.send(topic, value=b"rejected")
            after = await producer.send(topic, value=b"after")
            stats = producer.statistics()
        msgs = await _read_back(faulty_broker, topic, 1, 3)
    assert proxy.injected == 3
    # The broker did write every batch (the proxy only rewrote answers): the retried one
    # exactly once, the "rejected" one too, which shows the error came from the answer.
    assert [m.value() for m in msgs] == [b"retried", b"rejected", b"after"]
    # The retry was a duplicate the broker recognised; such an answer may carry no offset
    # (Tansu sends -1; the Java client reports -1 for DUPLICATE_SEQUENCE_NUMBER too).
    assert retried.offset in (0, -1)
    assert after.offset == 2
    # statistics(): every error a batch met, and what the records finally became.
    assert stats["errors_by_code"] == {"NOT_LEADER_OR_FOLLOWER": 2, "INVALID_RECORD": 1}
    assert stats["records_failed_by_error"] == {"INVALID_RECORD": 1}
    assert (stats["records_acked"], stats["records_failed"]) == (2, 1)
    assert stats["buffered_records"] == 0
    assert all(n == 0 for n in stats["in_flight_requests"].values())


@pytest.mark.anyio
async def test_produce_failures_are_raised_by_the_next_flush(faulty_broker: Any) -> None:
    """Records queued with ``produce`` have no handle: a batch the broker rejects is counted,
    the next ``flush`` raises ProduceFailedError (count, first error) once, and later
    records go on."""
    from kafka_async.errors import InvalidRecordError, ProduceFailedError

    async with _behind_proxy(faulty_broker, "prod", 1) as (topic, proxy):
        async with Producer(
            bootstrap_servers=_bootstrap(proxy), linger_ms=0, retry_backoff_ms=10
        ) as producer:
            await producer.produce(topic, value=b"first")
            await producer.flush()
            proxy.reject_errors.append(InvalidRecordError.code)
            await producer.produce(topic, value=b"doomed")
            with pytest.raises(ProduceFailedError) as info:
                await producer.flush()
            assert info.value.count == 1
            assert isinstance(info.value.first_error, InvalidRecordError)
            assert info.value.__cause__ is info.value.first_error
            assert producer.statistics()["records_failed_unreported"] == 0
            await producer.flush()  # reported once
            await producer.produce(topic, value=b"after")
            await producer.flush()
            stats = producer.statistics()
        msgs = await _read_back(faulty_broker, topic, 1, 2)
    assert [m.value() for m in msgs] == [b"first", b"after"]  # "doomed" was never written
    assert (stats["records_acked"], stats["records_failed"]) == (2, 1)


@pytest.mark.anyio
async def test_failed_record_makes_the_transaction_abort(faulty_broker: Any) -> None:
    """A record of a transaction that fails for good forbids the commit: the block raises,
    the transaction is aborted, and the next one works."""
    from kafka_async.errors import InvalidRecordError
    from kafka_async.producer import TransactionStateError

    async with (
        _behind_proxy(faulty_broker, "txerr", 1) as (topic, proxy),
        Producer(bootstrap_servers=_bootstrap(proxy), transactional_id=f"tx-{topic}") as producer,
    ):
        proxy.reject_errors.append(InvalidRecordError.code)
        delivery = None
        with pytest.raises(TransactionStateError, match="abort") as info:
            async with producer.transaction():
                delivery = await producer.enqueue(topic, value=b"doomed")
        assert isinstance(info.value.__cause__, InvalidRecordError)
        assert delivery is not None
        assert isinstance(delivery.exception(), InvalidRecordError)
        assert producer.statistics()["transaction"]["state"] == "ready"
        async with producer.transaction():
            md = await producer.send(topic, value=b"fine")
        # "doomed" was never written; an abort marker may precede "fine" or not (Tansu
        # writes none for a partition without data). Before review issue 3.1 was fixed,
        # "fine" kept the sequence after "doomed"'s and was refused for ever.
        assert md.offset in (0, 1)
    assert proxy.injected == 1


@pytest.mark.anyio
async def test_rejected_batch_does_not_stall_partition(faulty_broker: Any) -> None:
    """Review issue 3.1: a batch the broker rejects (not written) held its sequence, so every
    later batch of the partition came back OUT_OF_ORDER_SEQUENCE_NUMBER and was re-queued
    for ever. Now the partition is renumbered (epoch bump) and the next record lands."""
    from kafka_async.errors import InvalidRecordError

    async with _behind_proxy(faulty_broker, "rej", 1) as (topic, proxy):
        async with Producer(
            bootstrap_servers=_bootstrap(proxy), linger_ms=0, retry_backoff_ms=10
        ) as producer:
            first = await producer.send(topic, value=b"first")
            proxy.reject_errors.append(InvalidRecordError.code)
            with pytest.raises(InvalidRecordError):
                await producer.send(topic, value=b"rejected")
            with anyio.fail_after(30):
                after = await producer.send(topic, value=b"after")
            stats = producer.statistics()
        msgs = await _read_back(faulty_broker, topic, 1, 2)
    assert proxy.injected == 1
    assert [m.value() for m in msgs] == [b"first", b"after"]
    assert (first.offset, after.offset) == (0, 1)
    assert stats["epoch_bumps"] + stats["producer_id_resets"] >= 1
    assert stats["records_failed_by_error"] == {"INVALID_RECORD": 1}


@pytest.mark.anyio
async def test_refusal_after_a_lost_answer_fails_as_an_unknown_outcome(
    faulty_broker: Any,
) -> None:
    """A batch whose first answer was lost (the broker wrote it) and whose every retry is
    refused with NOT_ENOUGH_REPLICAS until ``delivery_timeout_ms`` is in the log: a broker
    checks the in-sync count before it looks for a duplicate, so the refusal is about the
    retry only. Its delivery fails as a timeout (an unknown outcome, as one that expired)
    with the refusal as ``__cause__``, never as a bare NotEnoughReplicasError, which says
    the record was not written. A batch refused on every attempt still fails with the
    broker's typed error (make compat on Apache Kafka 4.1.1 found two records reported as
    NotEnoughReplicasError in the log after followers were killed)."""
    from kafka_async.errors import KafkaTimeoutError, NotEnoughReplicasError

    async with _behind_proxy(faulty_broker, "unknown", 1) as (topic, proxy):
        async with Producer(
            bootstrap_servers=_bootstrap(proxy),
            linger_ms=0,
            retry_backoff_ms=300,
            request_timeout_ms=1000,
            delivery_timeout_ms=2500,
        ) as producer:
            await producer.send(topic, value=b"first")
            # Only ever refused: the broker's typed error (directly, or as the cause of the
            # timeout when the batch expired waiting to be retried), not "may be in the log";
            # and the record is not in the log.
            proxy.reject_errors.extend([NotEnoughReplicasError.code] * 1000)
            refused = await producer.enqueue(topic, value=b"refused")
            with anyio.fail_after(30):
                while not refused.done():  # noqa: ASYNC110 - the producer settles it
                    await anyio.sleep(0.05)
            proxy.reject_errors.clear()
            error = refused.exception()
            assert isinstance(error, NotEnoughReplicasError) or (
                isinstance(error, KafkaTimeoutError)
                and isinstance(error.__cause__, NotEnoughReplicasError)
                and "may be in the log" not in str(error)
            ), repr(error)
            # Written, its answer lost (the connection cut), then refused until the deadline.
            proxy.pass_first = proxy.produce_responses
            proxy.drop_produce_responses = proxy.dropped + 1
            delivery = await producer.enqueue(topic, value=b"written")
            with anyio.fail_after(10):
                while not proxy.dropped:  # noqa: ASYNC110 - the proxy runs in its own task
                    await anyio.sleep(0.01)
            proxy.reject_errors.extend([NotEnoughReplicasError.code] * 1000)
            with anyio.fail_after(30):
                while not delivery.done():  # noqa: ASYNC110 - the producer settles it
                    await anyio.sleep(0.05)
            proxy.reject_errors.clear()
            failure = delivery.exception()
            with anyio.fail_after(30):
                after = await producer.send(topic, value=b"after")
        msgs = await _read_back(faulty_broker, topic, 1, 3)
    assert isinstance(failure, KafkaTimeoutError), repr(failure)
    assert isinstance(failure.__cause__, NotEnoughReplicasError), repr(failure.__cause__)
    assert "may be in the log" in str(failure)
    assert [m.value() for m in msgs] == [b"first", b"written", b"after"]
    assert after.offset == 2
