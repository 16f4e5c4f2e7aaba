"""BrokerConnection over in-memory streams: pipelining, cancellation, failures, timeouts.

The peer is either ``FakeBroker`` (decodes our frames with the real protocol definitions and
answers in order) or a hand-scripted stream end for malformed traffic.
"""

from __future__ import annotations

import struct
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel
import pytest
from netfakes import (
    FakeBroker,
    FakeNetwork,
    FakeRequest,
    MemoryByteStream,
    echo_metadata,
    frame,
    memory_stream_pair,
    read_frame,
)

from kafka_async.errors import (
    IncompatibleBrokerVersionError,
    KafkaConnectionError,
    KafkaTimeoutError,
    ResponseTooLargeError,
    SaslAuthenticationFailedError,
    UnsupportedFieldError,
)
from kafka_async.net.config import ClientConfig
from kafka_async.net.connection import BrokerConnection
from kafka_async.protocol import headers
from kafka_async.protocol.apis import API_VERSIONS, CREATE_TOPICS, METADATA, PRODUCE
from kafka_async.protocol.apis.metadata import MetadataRequest, MetadataRequestTopic
from kafka_async.protocol.apis.produce import ProduceRequest
from kafka_async.protocol.codec import Reader

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"]),
]


def md_body(*names: str) -> MetadataRequest:
    return MetadataRequest(topics=[MetadataRequestTopic(name=n) for n in names])


@asynccontextmanager
async def connected(
    broker: FakeBroker | None = None, net_out: list[FakeNetwork] | None = None, **cfg: Any
) -> AsyncIterator[tuple[BrokerConnection, FakeBroker, anyio.abc.TaskGroup]]:
    broker = broker or FakeBroker(handlers={3: echo_metadata})
    async with anyio.create_task_group() as tg:
        net = FakeNetwork(tg, brokers={("b", 1): broker})
        if net_out is not None:
            net_out.append(net)
        conn = BrokerConnection(
            "b", 1, ClientConfig(bootstrap_servers="b:1", **cfg), stream_factory=net
        )
        await conn.connect(tg)
        try:
            yield conn, broker, tg
        finally:
            await conn.close()
            tg.cancel_scope.cancel()


class ScriptedPeer:
    """A StreamFactory whose server side the test drives by hand (after ApiVersions)."""

    def __init__(self) -> None:
        self.server: MemoryByteStream | None = None
        self.buf = bytearray()

    async def __call__(self, host: str, port: int, config: ClientConfig) -> MemoryByteStream:
        client, self.server = memory_stream_pair()
        return client

    async def answer_api_versions(self) -> None:
        assert self.server is not None
        req = await read_frame(self.server, self.buf)
        r = Reader(req)
        _, version, cid, _ = headers.decode_request_header(r)
        keys = [
            {"api_key": 3, "min_version": 0, "max_version": 12},
            {"api_key": 18, "min_version": 0, "max_version": 4},
        ]
        await self.server.send(
            frame(headers.encode_response(API_VERSIONS, version, cid, {"api_keys": keys}))
        )

    async def next_request(self) -> tuple[int, int]:
        """(correlation id, api version) of the next request frame."""
        assert self.server is not None
        r = Reader(await read_frame(self.server, self.buf))
        _, version, cid, _ = headers.decode_request_header(r)
        return cid, version

    async def send_metadata(self, cid: int, version: int, node_id: int) -> None:
        assert self.server is not None
        body = {"brokers": [{"node_id": node_id, "host": "x", "port": 1}], "topics": []}
        await self.server.send(frame(headers.encode_response(METADATA, version, cid, body)))


@asynccontextmanager
async def scripted(**cfg: Any) -> AsyncIterator[tuple[BrokerConnection, ScriptedPeer]]:
    peer = ScriptedPeer()
    async with anyio.create_task_group() as tg:
        conn = BrokerConnection(
            "s", 1, ClientConfig(bootstrap_servers="s:1", **cfg), stream_factory=peer
        )
        async with anyio.create_task_group() as hs:
            hs.start_soon(conn.connect, tg)
            while peer.server is None:
                await anyio.lowlevel.checkpoint()
            await peer.answer_api_versions()
        try:
            yield conn, peer
        finally:
            await conn.close()
            tg.cancel_scope.cancel()


async def test_negotiates_highest_common_versions() -> None:
    broker = FakeBroker(handlers={3: echo_metadata})
    broker.versions[3] = (1, 7)
    async with connected(broker) as (conn, _, _):
        assert conn.ready
        assert conn.version_for(METADATA) == 7
        assert conn.version_for(METADATA, max_version=5) == 5
        assert conn.api_versions[3] == (1, 7)
        with pytest.raises(IncompatibleBrokerVersionError, match="Metadata"):
            conn.version_for(METADATA, min_version=8)
        with pytest.raises(IncompatibleBrokerVersionError, match="CreateTopics"):
            conn.version_for(CREATE_TOPICS)
        resp = await conn.request(METADATA, md_body("3"))
        assert [b.node_id for b in resp.brokers] == [3]
        with pytest.raises(IncompatibleBrokerVersionError, match="v9"):
            await conn.request(METADATA, md_body("3"), version=9)
        with pytest.raises(UnsupportedFieldError, match="no version 99"):
            await conn.request(METADATA, md_body("3"), version=99)
        assert (await conn.request(METADATA, md_body("4"), version=1)).brokers[0].node_id == 4


async def test_api_versions_falls_back_to_the_version_the_broker_lists() -> None:
    # KIP-511: the broker answers an unknown ApiVersions version with error 35 and its range.
    broker = FakeBroker(handlers={3: echo_metadata})
    broker.versions[18] = (0, 2)
    async with connected(broker) as (conn, _, _):
        assert broker.api_versions_seen == [API_VERSIONS.max_version, 2]
        assert conn.version_for(API_VERSIONS) == 2
        assert (await conn.request(METADATA, md_body("1"))).brokers[0].node_id == 1


async def test_pipelined_requests_get_their_own_responses() -> None:
    async with connected() as (conn, broker, _):
        results: dict[int, int] = {}

        async def one(i: int) -> None:
            resp = await conn.request(METADATA, md_body(str(i)))
            results[i] = resp.brokers[0].node_id

        async with anyio.create_task_group() as tg:
            for i in range(200):
                tg.start_soon(one, i)
        assert results == {i: i for i in range(200)}
        # They really were in flight together: the broker saw them on one stream.
        assert len(broker.streams) == 1
        stats = conn.statistics()
        assert stats.requests_sent == 201  # + ApiVersions
        assert stats.responses_received == 201
        assert stats.in_flight == 0
        assert stats.bytes_sent > 0
        assert stats.bytes_received > 0


async def test_concurrent_requests_share_socket_writes() -> None:
    async with connected() as (conn, _, _):
        before = conn.statistics()
        async with anyio.create_task_group() as tg:
            for i in range(50):
                tg.start_soon(partial(conn.request, METADATA, md_body(str(i))))
        after = conn.statistics()
        assert after.requests_sent - before.requests_sent == 50
        assert after.writes - before.writes < 10


async def test_request_that_gives_up_before_being_written_is_taken_back() -> None:
    nets: list[FakeNetwork] = []
    async with connected(net_out=nets) as (conn, broker, _):
        stream = nets[0].client_streams[0]
        stream.gate = anyio.Event()  # the socket buffer is "full": writes block
        got: list[int] = []

        async def first() -> None:
            got.append((await conn.request(METADATA, md_body("1"), timeout=5)).brokers[0].node_id)

        async with anyio.create_task_group() as tg:
            tg.start_soon(first)
            await anyio.wait_all_tasks_blocked()  # first holds the write lock, blocked
            with pytest.raises(KafkaTimeoutError, match="not sent"):
                await conn.request(METADATA, md_body("2"), timeout=0.1)
            assert conn.in_flight == 1  # the second request's waiter was removed again
            stream.gate.set()
        assert got == [1]
        assert conn.ready
        assert (await conn.request(METADATA, md_body("3"))).brokers[0].node_id == 3
        assert [r.body.topics[0].name for r in broker.requests] == ["1", "3"]


async def test_cancelled_waiter_response_is_read_and_dropped() -> None:
    release = anyio.Event()

    async def slow_first(req: FakeRequest) -> dict[str, Any]:
        if req.body.topics[0].name == "1":
            await release.wait()
        return await echo_metadata(req)

    broker = FakeBroker(handlers={3: slow_first})
    async with connected(broker) as (conn, _, _):
        got: list[int] = []

        async def second() -> None:
            got.append((await conn.request(METADATA, md_body("2"))).brokers[0].node_id)

        async with anyio.create_task_group() as tg:
            async with anyio.create_task_group() as inner:
                inner.start_soon(conn.request, METADATA, md_body("1"))
                await anyio.wait_all_tasks_blocked()
                tg.start_soon(second)  # queued behind the first on the wire
                await anyio.wait_all_tasks_blocked()
                assert conn.in_flight == 2
                inner.cancel_scope.cancel()
            assert conn.in_flight == 2  # the cancelled one still waits for its frame
            release.set()
        assert got == [2]
        assert conn.statistics().responses_dropped == 1
        # The stream is still in sync for new requests.
        assert (await conn.request(METADATA, md_body("7"))).brokers[0].node_id == 7


async def test_broker_closing_fails_every_waiter() -> None:
    async def never(req: FakeRequest) -> None:
        await anyio.sleep_forever()

    broker = FakeBroker(handlers={3: never})
    async with connected(broker) as (conn, _, _):
        errors: list[BaseException] = []

        async def one(i: int) -> None:
            try:
                await conn.request(METADATA, md_body(str(i)))
            except KafkaConnectionError as exc:
                errors.append(exc)

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                for i in range(5):
                    tg.start_soon(one, i)
                await anyio.wait_all_tasks_blocked()
                await broker.streams[0].aclose()
        assert len(errors) == 5
        assert conn.closed
        with pytest.raises(KafkaConnectionError, match="closed"):
            await conn.request(METADATA, md_body("1"))


async def test_oversized_frame_is_refused_before_reading_the_body() -> None:
    async with scripted(max_response_size=4096) as (conn, peer):
        assert peer.server is not None
        outcomes: dict[int, BaseException] = {}

        async def one(i: int) -> None:
            try:
                await conn.request(METADATA, md_body(str(i)))
            except KafkaConnectionError as exc:
                outcomes[i] = exc

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(one, 1)
                await anyio.wait_all_tasks_blocked()
                tg.start_soon(one, 2)
                await peer.next_request()
                await peer.next_request()
                # Only a size prefix: a client that tried to read the body would hang here.
                await peer.server.send(struct.pack(">i", 5000))
        assert isinstance(outcomes[1], ResponseTooLargeError)
        assert "5000" in str(outcomes[1])
        assert type(outcomes[2]) is KafkaConnectionError
        assert conn.closed


async def test_correlation_id_mismatch_is_fatal() -> None:
    async with scripted() as (conn, peer):
        failures: list[BaseException] = []

        async def one() -> None:
            try:
                await conn.request(METADATA, md_body("1"))
            except KafkaConnectionError as exc:
                failures.append(exc)

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(one)
                tg.start_soon(one)
                cid, version = await peer.next_request()
                await peer.next_request()
                await peer.send_metadata(cid + 1, version, 9)  # answers the wrong request
        assert len(failures) == 2
        assert "correlation id" in str(failures[0])
        assert conn.closed


async def test_timeout_of_the_oldest_request_closes_the_connection() -> None:
    async def never(req: FakeRequest) -> None:
        await anyio.sleep_forever()

    async with connected(FakeBroker(handlers={3: never})) as (conn, _, _):
        start = anyio.current_time()
        with pytest.raises(KafkaTimeoutError, match="Metadata"):
            await conn.request(METADATA, md_body("1"), timeout=0.2)
        # At least the timeout; the upper bound leaves room for a loaded CI machine.
        assert 0.2 <= anyio.current_time() - start < 3.0
        assert conn.closed  # the broker stopped answering


async def test_timeout_behind_a_long_poll_keeps_the_connection() -> None:
    release = anyio.Event()

    async def slow_first(req: FakeRequest) -> dict[str, Any]:
        if req.body.topics[0].name == "1":
            await release.wait()
        return await echo_metadata(req)

    async with connected(FakeBroker(handlers={3: slow_first})) as (conn, _, _):
        got: list[int] = []

        async def long_poll() -> None:
            got.append((await conn.request(METADATA, md_body("1"), timeout=10)).brokers[0].node_id)

        async with anyio.create_task_group() as tg:
            tg.start_soon(long_poll)
            await anyio.wait_all_tasks_blocked()
            with pytest.raises(KafkaTimeoutError):
                await conn.request(METADATA, md_body("2"), timeout=0.1)
            assert conn.ready  # queued behind a request still within its deadline
            release.set()
        assert got == [1]
        assert (await conn.request(METADATA, md_body("3"))).brokers[0].node_id == 3
        assert conn.statistics().responses_dropped == 1


async def test_requests_without_response_add_no_waiter() -> None:
    async with connected() as (conn, broker, _):
        body = ProduceRequest(acks=0, timeout_ms=1000)
        assert await conn.request(PRODUCE, body, expect_response=False) is None
        assert conn.in_flight == 0
        assert (await conn.request(METADATA, md_body("4"))).brokers[0].node_id == 4
        assert [r.api_key for r in broker.requests] == [PRODUCE.key, METADATA.key]


async def test_body_that_does_not_fit_the_version_is_rejected_before_sending() -> None:
    async with connected() as (conn, broker, _):
        with pytest.raises(UnsupportedFieldError):
            # allow_auto_topic_creation=False cannot be carried by Metadata v3.
            await conn.request(
                METADATA, MetadataRequest(topics=[], allow_auto_topic_creation=False), version=3
            )
        assert broker.requests == []
        assert (await conn.request(METADATA, md_body("5"))).brokers[0].node_id == 5


async def test_close_with_requests_in_flight_returns_promptly() -> None:
    async def never(req: FakeRequest) -> None:
        await anyio.sleep_forever()

    async with connected(FakeBroker(handlers={3: never})) as (conn, _, _):
        errors: list[BaseException] = []

        async def one() -> None:
            try:
                await conn.request(METADATA, md_body("1"))
            except KafkaConnectionError as exc:
                errors.append(exc)

        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(one)
            await anyio.wait_all_tasks_blocked()
            with anyio.fail_after(5):
                await conn.close()
        assert len(errors) == 3
        assert conn.closed
        await conn.close()  # idempotent


async def test_connect_failure_and_handshake_timeout_raise_connection_errors() -> None:
    async with anyio.create_task_group() as tg:
        net = FakeNetwork(tg)
        conn = BrokerConnection(
            "nowhere", 1, ClientConfig(bootstrap_servers="x:1"), stream_factory=net
        )
        with pytest.raises(KafkaConnectionError, match="cannot connect"):
            await conn.connect(tg)
        assert conn.closed

        async def silent(host: str, port: int, config: ClientConfig) -> MemoryByteStream:
            client, server = memory_stream_pair()
            tg.start_soon(_swallow, server)
            return client

        conn = BrokerConnection(
            "quiet",
            1,
            ClientConfig(bootstrap_servers="x:1", request_timeout_ms=200),
            stream_factory=silent,
        )
        with anyio.fail_after(6), pytest.raises(KafkaConnectionError, match="handshake"):
            await conn.connect(tg)
        tg.cancel_scope.cancel()


async def _swallow(stream: MemoryByteStream) -> None:
    try:
        while True:
            await stream.receive()
    except (anyio.EndOfStream, anyio.ClosedResourceError):
        pass


async def test_async_with_runs_the_reader_in_a_private_group() -> None:
    broker = FakeBroker(handlers={3: echo_metadata})
    async with anyio.create_task_group() as tg:
        net = FakeNetwork(tg, brokers={("b", 1): broker})
        async with BrokerConnection(
            "b", 1, ClientConfig(bootstrap_servers="b:1"), stream_factory=net
        ) as conn:
            assert (await conn.request(METADATA, md_body("8"))).brokers[0].node_id == 8
        assert conn.closed
        tg.cancel_scope.cancel()


async def test_sasl_plain_handshake_and_authenticate() -> None:
    seen: list[Any] = []

    async def handshake(req: FakeRequest) -> dict[str, Any]:
        seen.append(("handshake", req.version, req.body.mechanism))
        return {"error_code": 0, "mechanisms": ["PLAIN"]}

    async def authenticate(req: FakeRequest) -> dict[str, Any]:
        seen.append(("auth", bytes(req.body.auth_bytes)))
        ok = bytes(req.body.auth_bytes) == b"\0alice\0pw"
        return {
            "error_code": 0 if ok else 58,
            "error_message": None if ok else "bad",
            "auth_bytes": b"",
        }

    broker = FakeBroker(handlers={3: echo_metadata, 17: handshake, 36: authenticate})
    sasl: dict[str, Any] = {"security_protocol": "SASL_PLAINTEXT", "sasl_plain_username": "alice"}
    async with connected(broker, **sasl, sasl_plain_password="pw") as (conn, _, _):
        assert seen == [("handshake", 1, "PLAIN"), ("auth", b"\0alice\0pw")]
        assert (await conn.request(METADATA, md_body("2"))).brokers[0].node_id == 2

    async with anyio.create_task_group() as tg:
        net = FakeNetwork(tg, brokers={("b", 1): broker})
        cfg = ClientConfig(bootstrap_servers="b:1", **sasl, sasl_plain_password="wrong")
        conn = BrokerConnection("b", 1, cfg, stream_factory=net)
        with pytest.raises(SaslAuthenticationFailedError, match="bad"):
            await conn.connect(tg)
        assert conn.closed
        tg.cancel_scope.cancel()


async def test_close_interrupts_a_slow_connect_and_a_stuck_handshake() -> None:
    async with anyio.create_task_group() as tg:
        net = FakeNetwork(tg, brokers={("b", 1): FakeBroker()}, connect_delay=5.0)
        conn = BrokerConnection("b", 1, ClientConfig(bootstrap_servers="b:1"), stream_factory=net)

        async def close_soon(c: BrokerConnection) -> None:
            await anyio.sleep(0.05)
            await c.close()

        tg.start_soon(close_soon, conn)
        with anyio.fail_after(3), pytest.raises(KafkaConnectionError, match="while connecting"):
            await conn.connect(tg)

        async def silent(host: str, port: int, config: ClientConfig) -> MemoryByteStream:
            client, server = memory_stream_pair()
            tg.start_soon(_swallow, server)
            return client

        conn = BrokerConnection(
            "q", 1, ClientConfig(bootstrap_servers="q:1"), stream_factory=silent
        )
        tg.start_soon(close_soon, conn)
        with anyio.fail_after(3), pytest.raises(KafkaConnectionError, match="handshake"):
            await conn.connect(tg)
        tg.cancel_scope.cancel()


async def test_announced_size_is_not_trusted_for_allocation() -> None:
    # Regression: a frame announcing 64 MiB but carrying 1 KiB once allocated 64 MiB up front.
    import tracemalloc

    async with scripted() as (conn, peer):
        assert peer.server is not None
        failures: list[BaseException] = []

        async def one() -> None:
            try:
                await conn.request(METADATA, md_body("1"))
            except KafkaConnectionError as exc:
                failures.append(exc)

        tracemalloc.start()
        try:
            with anyio.fail_after(5):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(one)
                    await peer.next_request()
                    await peer.server.send(struct.pack(">i", 64 << 20) + b"\0" * 1024)
                    await anyio.wait_all_tasks_blocked()
                    await peer.server.aclose()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert len(failures) == 1
        assert peak < 8 << 20, f"peak allocation {peak} bytes"


async def test_throttled_response_pauses_the_next_writes() -> None:
    async def throttling(req: FakeRequest) -> dict[str, Any]:
        resp = await echo_metadata(req)
        resp["throttle_time_ms"] = 300 if req.body.topics[0].name == "1" else 0
        return resp

    async with connected(FakeBroker(handlers={3: throttling})) as (conn, _, _):
        await conn.request(METADATA, md_body("1"))
        start = anyio.current_time()
        assert (await conn.request(METADATA, md_body("2"))).brokers[0].node_id == 2
        assert anyio.current_time() - start >= 0.25
        assert conn.statistics().throttles == 1
        # A deadline shorter than the pause takes the unsent request back.
        await conn.request(METADATA, md_body("1"))
        with pytest.raises(KafkaTimeoutError, match="not sent"):
            await conn.request(METADATA, md_body("3"), timeout=0.05)
        assert conn.in_flight == 0
        assert conn.ready


async def test_huge_throttle_is_capped_at_half_the_request_timeout() -> None:
    """A broker saying 2^31-1 ms (24 days) pauses our writes for half the request timeout,
    not 24 days: the next request with the default deadline is sent and answered."""

    async def throttling(req: FakeRequest) -> dict[str, Any]:
        resp = await echo_metadata(req)
        resp["throttle_time_ms"] = 2**31 - 1 if req.body.topics[0].name == "1" else 0
        return resp

    broker = FakeBroker(handlers={3: throttling})
    async with connected(broker, request_timeout_ms=1000) as (conn, _, _):
        await conn.request(METADATA, md_body("1"))
        start = anyio.current_time()
        with anyio.fail_after(10):
            assert (await conn.request(METADATA, md_body("2"))).brokers[0].node_id == 2
        # The pause happened (0.5 s cap), and the request made it within its 1 s deadline.
        assert anyio.current_time() - start >= 0.45
        assert conn.ready
        assert conn.statistics().throttles == 1


async def test_request_with_deadline_inside_the_throttle_fails_at_once() -> None:
    """Waiting out a pause that outlasts the request's deadline could only end in the same
    timeout: the request fails at once, unsent, and the connection stays usable."""

    async def throttling(req: FakeRequest) -> dict[str, Any]:
        resp = await echo_metadata(req)
        resp["throttle_time_ms"] = 60_000 if req.body.topics[0].name == "1" else 0
        return resp

    broker = FakeBroker(handlers={3: throttling})
    async with connected(broker, request_timeout_ms=10_000) as (conn, _, _):
        await conn.request(METADATA, md_body("1"))  # pause: 60 s, capped at 5 s
        start = anyio.current_time()
        with pytest.raises(KafkaTimeoutError, match="not sent: the broker throttled"):
            await conn.request(METADATA, md_body("3"), timeout=4.0)
        # Waiting would have taken the full 4 s (the slack is for a loaded machine).
        assert anyio.current_time() - start < 3.0
        assert conn.in_flight == 0
        assert len(broker.requests) == 1
        assert conn.ready


async def test_connection_lost_while_throttled_gives_a_typed_error_at_once() -> None:
    """The peer goes away while a request waits out a throttle: the waiting request gets
    ``KafkaConnectionError`` as soon as the connection fails (not an IndexError, and not
    only after the pause)."""

    async def throttling(req: FakeRequest) -> dict[str, Any]:
        resp = await echo_metadata(req)
        resp["throttle_time_ms"] = 20_000 if req.body.topics[0].name == "1" else 0
        return resp

    broker = FakeBroker(handlers={3: throttling})
    async with connected(broker, request_timeout_ms=60_000) as (conn, _, _):
        await conn.request(METADATA, md_body("1"))
        errors: list[Exception] = []

        async def waiting_request() -> None:
            try:
                await conn.request(METADATA, md_body("2"))
            except Exception as exc:  # recorded, checked below
                errors.append(exc)

        start = anyio.current_time()
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(waiting_request)
                # Cut the peer once the request is queued behind the pause.
                while conn.in_flight == 0:
                    await anyio.lowlevel.checkpoint()
                await broker.streams[0].aclose()
                with pytest.raises(KafkaConnectionError):
                    await conn.request(METADATA, md_body("3"))
        assert isinstance(errors[0], KafkaConnectionError), errors
        # Woken by the failure, not by the end of the 10 s pause.
        assert anyio.current_time() - start < 8.0
        assert not conn.ready
