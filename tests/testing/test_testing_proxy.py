"""FaultProxy: every fault, observed with raw Kafka requests over plain sockets."""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from kafka_async.errors import KafkaConnectionError, KafkaTimeoutError, ProtocolDecodeError
from kafka_async.protocol.apis import API_VERSIONS, CREATE_TOPICS, METADATA, PRODUCE
from kafka_async.protocol.apis.api_versions import ApiVersionsRequest
from kafka_async.protocol.apis.create_topics import CreatableTopic, CreateTopicsRequest
from kafka_async.protocol.apis.metadata import MetadataRequest, MetadataRequestTopic
from kafka_async.testing import EmbeddedBroker, _procs, _wire, topic_partitions
from kafka_async.testing.proxy import (
    FaultProxy,
    ProxiedBroker,
    _parse_request,
    broker_behind_proxy,
)

pytestmark = pytest.mark.integration

_SIZE = struct.Struct(">i")


@pytest.fixture(scope="module")
def shared_broker() -> Iterator[tuple[EmbeddedBroker, FaultProxy]]:
    """One broker advertising one threaded proxy; faults are cleared around each test."""
    port = _procs.free_port()
    proxy = FaultProxy("127.0.0.1", port, seed=7)
    with proxy.in_thread(), EmbeddedBroker(port=port, advertised_port=proxy.port) as broker:
        yield broker, proxy


@pytest.fixture
def proxy(shared_broker: tuple[EmbeddedBroker, FaultProxy]) -> Iterator[FaultProxy]:
    p = shared_broker[1]
    p.clear()
    yield p
    p.clear()
    p.reset_connections()


class RawClient:
    """A plain blocking socket speaking Kafka frames, for pipelining and reset checks."""

    def __init__(self, address: str, timeout: float = 5.0) -> None:
        host, port = _wire.parse_address(address)
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def send(self, cid: int) -> None:
        """Send an ApiVersions v0 request with correlation id ``cid``."""
        self.sock.sendall(_wire.encode_frame(API_VERSIONS, 0, cid, {}))

    def read_until_closed(self) -> tuple[bytes, BaseException]:
        """Everything received until the peer ends the connection, and how it ended."""
        got = b""
        while True:
            try:
                chunk = self.sock.recv(4096)
            except OSError as exc:
                return got, exc
            if not chunk:
                return got, EOFError()
            got += chunk

    def roundtrips_until_closed(self) -> BaseException:
        """Keep doing requests (10 ms apart) until the connection breaks; how it broke."""
        for cid in range(1, 10_000):
            try:
                self.send(cid)
                self.recv_frame()
            except (OSError, EOFError) as exc:
                return exc
            time.sleep(0.01)
        raise AssertionError("the connection was never broken")

    def recv_exact(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise EOFError(f"EOF after {len(out)} of {n} bytes")
            out += chunk
        return out

    def recv_frame(self) -> bytes:
        size = _SIZE.unpack(self.recv_exact(4))[0]
        return self.recv_exact(size)

    def recv_cid(self) -> int:
        return int(_SIZE.unpack_from(self.recv_frame(), 0)[0])

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def raw(proxy: FaultProxy) -> Iterator[RawClient]:
    client = RawClient(proxy.address)
    yield client
    client.close()


def _api_versions_roundtrip(address: str, timeout: float = 5.0) -> float:
    start = time.monotonic()
    resp = _wire.request(address, API_VERSIONS, ApiVersionsRequest(), version=0, timeout=timeout)
    assert resp.error_code == 0
    return time.monotonic() - start


def _fastest_roundtrip(address: str, tries: int = 3) -> float:
    """Best of a few round trips: an upper bound on latency that a busy CI box cannot flake."""
    return min(_api_versions_roundtrip(address) for _ in range(tries))


# -- pass-through -----------------------------------------------------------------------------


def _paused(proxy: FaultProxy) -> bool:
    # Read through a call: mypy would keep an asserted ``proxy.paused`` narrowed across the
    # pause()/resume() that change it, and flag the next assertion as unreachable.
    return proxy.paused


def test_passthrough_and_metadata_points_at_proxy(
    shared_broker: tuple[EmbeddedBroker, FaultProxy], proxy: FaultProxy
) -> None:
    broker, _ = shared_broker
    before = proxy.stats.requests_by_api.get(3, 0)
    resp = _wire.request(proxy.address, METADATA, MetadataRequest(topics=[]), version=1)
    assert [(b.host, b.port) for b in resp.brokers] == [("127.0.0.1", proxy.port)]
    direct = _wire.request(broker.bootstrap_servers, API_VERSIONS, ApiVersionsRequest(), version=0)
    via = _wire.request(proxy.address, API_VERSIONS, ApiVersionsRequest(), version=0)
    assert via.to_dict() == direct.to_dict()
    assert proxy.stats.requests_by_api[3] == before + 1
    last = proxy.requests[-1]
    assert (last.api_key, last.api_version) == (18, 0)


# -- transport faults ---------------------------------------------------------------------------


def test_delay_applies_each_way_and_clears(proxy: FaultProxy) -> None:
    # A 0.4 s delay leaves wide gaps between "none", "one way" and "both ways", so the upper
    # bounds hold on a loaded machine and still tell the three apart.
    assert _fastest_roundtrip(proxy.address) < 0.35
    proxy.set_delay(0.4)
    elapsed = _api_versions_roundtrip(proxy.address)
    assert elapsed >= 0.79, elapsed  # 0.4 out + 0.4 back
    proxy.set_delay(0.4, direction="downstream")
    proxy.set_delay(0.0, direction="upstream")
    assert _api_versions_roundtrip(proxy.address) >= 0.39
    assert _fastest_roundtrip(proxy.address) < 0.79
    proxy.clear()
    assert _fastest_roundtrip(proxy.address) < 0.35


def test_jitter_never_reorders_pipelined_responses(proxy: FaultProxy, raw: RawClient) -> None:
    proxy.set_delay(0.02, jitter=0.02)
    for cid in range(1, 41):
        raw.send(cid)
    assert [raw.recv_cid() for _ in range(40)] == list(range(1, 41))


def test_bandwidth_throttle(proxy: FaultProxy, raw: RawClient) -> None:
    raw.send(1)
    size = 4 + len(raw.recv_frame())
    assert size > 100
    rate = size / 0.5  # the response should take about half a second
    proxy.set_bandwidth(rate, direction="downstream")
    elapsed = _api_versions_roundtrip(proxy.address)
    assert elapsed >= 0.4, elapsed
    proxy.set_bandwidth(None)
    assert _fastest_roundtrip(proxy.address) < 0.35  # below the throttled 0.4 s


def test_reset_now_sends_rst(proxy: FaultProxy, raw: RawClient) -> None:
    raw.send(1)
    assert raw.recv_cid() == 1
    assert proxy.reset_connections() >= 1
    _, how = raw.read_until_closed()
    assert isinstance(how, ConnectionResetError), how
    before = proxy.stats.connections_reset
    # New connections are not affected by a one-off reset.
    _api_versions_roundtrip(proxy.address)
    assert proxy.stats.connections_reset == before


def test_reset_after_bytes_cuts_the_stream(proxy: FaultProxy) -> None:
    request_size = len(_wire.encode_frame(API_VERSIONS, 0, 1, {}))
    proxy.reset_after_bytes(request_size + 10)
    client = RawClient(proxy.address)
    try:
        client.send(1)
        got, how = client.read_until_closed()
        assert isinstance(how, ConnectionResetError), how
        assert len(got) == 10  # exactly the budget left after the request went through
    finally:
        client.close()
    proxy.reset_after_bytes(None)
    _api_versions_roundtrip(proxy.address)


def test_periodic_resets_bound_connection_lifetime(proxy: FaultProxy) -> None:
    proxy.reset_periodically(0.2, 0.4)
    lifetimes = []
    for _ in range(3):
        client = RawClient(proxy.address)
        start = time.monotonic()
        try:
            how = client.roundtrips_until_closed()
            lifetimes.append(time.monotonic() - start)
            assert isinstance(how, (ConnectionResetError, EOFError, BrokenPipeError)), how
        finally:
            client.close()
    # Lower bound exact; the upper one leaves room for a loaded machine (tick + round trip).
    assert all(0.18 <= t <= 3.0 for t in lifetimes), lifetimes
    proxy.stop_periodic_resets()
    client = RawClient(proxy.address)
    try:
        # Not synchronisation: longer than the old reset period, so a reset still scheduled
        # would have cut this connection by now.
        time.sleep(0.5)
        client.send(1)
        assert client.recv_cid() == 1
    finally:
        client.close()


def test_blackhole_accepts_and_never_answers(proxy: FaultProxy) -> None:
    existing = RawClient(proxy.address, timeout=0.5)
    try:
        existing.send(1)
        assert existing.recv_cid() == 1
        proxy.set_blackhole(True)
        fresh = RawClient(proxy.address, timeout=0.5)  # the TCP handshake still succeeds
        try:
            for client in (existing, fresh):
                client.send(7)
                with pytest.raises(socket.timeout):
                    client.recv_frame()
        finally:
            fresh.close()
    finally:
        existing.close()
    proxy.set_blackhole(False)
    _api_versions_roundtrip(proxy.address)


# -- protocol faults ---------------------------------------------------------------------------


def test_drop_response_keeps_later_ones(proxy: FaultProxy, raw: RawClient) -> None:
    proxy.drop_responses(api_key=18, count=1)
    before = proxy.stats.requests
    for cid in (1, 2, 3):
        raw.send(cid)
    assert raw.recv_cid() == 2
    assert raw.recv_cid() == 3
    assert proxy.stats.requests == before + 3  # all three reached the broker
    assert proxy.stats.responses_dropped >= 1
    assert proxy.pending_rules() == 0


def test_dropped_response_request_was_applied(
    shared_broker: tuple[EmbeddedBroker, FaultProxy], proxy: FaultProxy
) -> None:
    broker, _ = shared_broker
    proxy.drop_responses(api_key=19)
    body = CreateTopicsRequest(
        topics=[CreatableTopic(name="dropped-ack", num_partitions=2, replication_factor=1)],
        timeout_ms=5000,
    )
    with pytest.raises(KafkaTimeoutError):
        _wire.request(proxy.address, CREATE_TOPICS, body, timeout=1.0)
    assert topic_partitions(broker.bootstrap_servers, "dropped-ack") == 2


def test_drop_request_never_reaches_the_broker(
    shared_broker: tuple[EmbeddedBroker, FaultProxy], proxy: FaultProxy, raw: RawClient
) -> None:
    broker, _ = shared_broker
    proxy.drop_requests(api_key=18, count=1)
    before = proxy.stats.requests_dropped
    for cid in (1, 2, 3):
        raw.send(cid)
    assert raw.recv_cid() == 2
    assert raw.recv_cid() == 3
    assert proxy.stats.requests_dropped == before + 1
    proxy.drop_requests(api_key=19)
    body = CreateTopicsRequest(
        topics=[CreatableTopic(name="never-created", num_partitions=1, replication_factor=1)],
        timeout_ms=5000,
    )
    with pytest.raises(KafkaTimeoutError):
        _wire.request(proxy.address, CREATE_TOPICS, body, timeout=0.5)
    assert topic_partitions(broker.bootstrap_servers, "never-created") is None


def test_pause_holds_bytes_and_resume_delivers_them(proxy: FaultProxy) -> None:
    client = RawClient(proxy.address, timeout=0.3)
    try:
        client.send(1)
        assert client.recv_cid() == 1
        proxy.pause()
        assert _paused(proxy)
        client.send(2)
        with pytest.raises(socket.timeout):
            client.recv_frame()
        late = RawClient(proxy.address, timeout=0.3)  # accepted even while paused
        try:
            late.send(9)
            proxy.resume()
            assert not _paused(proxy)
            client.sock.settimeout(5)
            late.sock.settimeout(5)
            assert client.recv_cid() == 2
            assert late.recv_cid() == 9
        finally:
            late.close()
    finally:
        client.close()


def test_after_lets_matching_messages_pass_first(proxy: FaultProxy, raw: RawClient) -> None:
    proxy.drop_responses(api_key=18, count=1, after=2)
    for cid in (1, 2, 3, 4):
        raw.send(cid)
    assert [raw.recv_cid() for _ in range(3)] == [1, 2, 4]
    assert proxy.pending_rules() == 0


def test_drop_response_with_reset(proxy: FaultProxy, raw: RawClient) -> None:
    before = proxy.stats.requests
    proxy.drop_responses(api_key=18, reset=True)
    raw.send(1)
    got, how = raw.read_until_closed()
    assert got == b""
    assert isinstance(how, ConnectionResetError), how
    assert proxy.stats.requests == before + 1  # the request did reach the broker


def test_mutate_requests_changes_what_the_broker_applies(
    shared_broker: tuple[EmbeddedBroker, FaultProxy], proxy: FaultProxy
) -> None:
    broker, _ = shared_broker

    def three_partitions(req: Any) -> None:
        req.topics[0].num_partitions = 3

    proxy.mutate_requests(19, three_partitions)
    body = CreateTopicsRequest(
        topics=[CreatableTopic(name="mutated-request", num_partitions=1, replication_factor=1)],
        timeout_ms=5000,
    )
    resp = _wire.request(proxy.address, CREATE_TOPICS, body)
    assert resp.topics[0].error_code == 0
    assert topic_partitions(broker.bootstrap_servers, "mutated-request") == 3
    assert proxy.stats.requests_rewritten >= 1


def test_truncated_response_reframed_fails_decoding(proxy: FaultProxy) -> None:
    proxy.truncate_responses(api_key=18, keep=6)
    with pytest.raises(ProtocolDecodeError):
        _wire.request(proxy.address, API_VERSIONS, ApiVersionsRequest(), version=0)
    assert proxy.stats.responses_truncated >= 1
    _api_versions_roundtrip(proxy.address)


def test_truncated_response_cut_on_the_wire(proxy: FaultProxy, raw: RawClient) -> None:
    proxy.truncate_responses(api_key=18, keep=5, reframe=False)
    raw.send(1)
    size = _SIZE.unpack(raw.recv_exact(4))[0]
    assert size > 5
    assert len(raw.recv_exact(5)) == 5
    with pytest.raises((ConnectionResetError, EOFError)):
        raw.recv_exact(1)


def test_corrupted_correlation_id_is_noticed(proxy: FaultProxy) -> None:
    proxy.corrupt_responses(api_key=18, offset=3)
    with pytest.raises(ProtocolDecodeError, match="correlation"):
        _wire.request(proxy.address, API_VERSIONS, ApiVersionsRequest(), version=0)


def test_random_corruption_changes_the_body(proxy: FaultProxy, raw: RawClient) -> None:
    raw.send(1)
    clean = raw.recv_frame()
    proxy.corrupt_responses(api_key=18, flips=3)
    raw.send(1)
    dirty = raw.recv_frame()
    assert len(dirty) == len(clean)
    assert dirty[:4] == clean[:4]  # the correlation id is spared
    assert dirty != clean


def test_rewrite_error_code(proxy: FaultProxy) -> None:
    proxy.rewrite_error(api_key=18, error_code=35, count=1)
    resp = _wire.request(proxy.address, API_VERSIONS, ApiVersionsRequest(), version=3)
    assert resp.error_code == 35
    assert len(resp.api_keys) > 10  # the rest of the response survived the round trip
    assert (
        _wire.request(proxy.address, API_VERSIONS, ApiVersionsRequest(), version=3).error_code == 0
    )


def test_rewrite_nested_error_codes(
    shared_broker: tuple[EmbeddedBroker, FaultProxy], proxy: FaultProxy
) -> None:
    broker, _ = shared_broker
    broker.create_topic("rewritten", partitions=2, configs=None)
    proxy.rewrite_error(api_key=3, error_code=6)  # NOT_LEADER_OR_FOLLOWER everywhere
    body = MetadataRequest(
        topics=[MetadataRequestTopic(name="rewritten")], allow_auto_topic_creation=False
    )
    resp = _wire.request(proxy.address, METADATA, body, version=9)
    (topic,) = resp.topics
    assert topic.error_code == 6
    assert [p.error_code for p in topic.partitions] == [6, 6]
    again = _wire.request(proxy.address, METADATA, body, version=9)
    assert again.topics[0].error_code == 0


def test_mutate_responses_with_a_function(proxy: FaultProxy) -> None:
    def move_broker(msg: object) -> None:
        msg.brokers[0].port = 1  # type: ignore[attr-defined]

    proxy.mutate_responses(3, move_broker)
    resp = _wire.request(proxy.address, METADATA, MetadataRequest(topics=[]), version=1)
    assert resp.brokers[0].port == 1
    assert proxy.stats.responses_rewritten >= 1


def test_rules_only_hit_their_api(proxy: FaultProxy) -> None:
    proxy.drop_responses(api_key=3, count=1)
    _api_versions_roundtrip(proxy.address)  # ApiVersions is untouched
    assert proxy.pending_rules() == 1


def test_parse_request_knows_acks_zero_has_no_response() -> None:
    for version, acks in ((0, 0), (3, 0), (9, 0), (9, 1), (11, -1)):
        body: dict[str, Any] = {
            "transactional_id": None,
            "acks": acks,
            "timeout_ms": 100,
            "topic_data": [],
        }
        if version < 3:
            body.pop("transactional_id")
        frame = _wire.encode_frame(PRODUCE, version, 42, body)
        info = _parse_request(1, frame)
        assert info is not None
        assert (info.api_key, info.api_version, info.correlation_id) == (0, version, 42)
        assert info.expects_response is (acks != 0)
    assert _parse_request(1, b"\x00\x00\x00\x01\x00") is None


def test_control_methods_validate_arguments(proxy: FaultProxy) -> None:
    with pytest.raises(ValueError):
        proxy.set_delay(-1)
    with pytest.raises(ValueError):
        proxy.set_bandwidth(0)
    with pytest.raises(ValueError):
        proxy.reset_periodically(1.0, 0.5)
    with pytest.raises(ValueError):
        proxy.drop_responses(count=0)
    with pytest.raises(ValueError):
        proxy.drop_requests(after=-1)
    with pytest.raises(ValueError):
        proxy.mutate_requests(9999, lambda m: m)
    with pytest.raises(ValueError):
        proxy.mutate_responses(9999, lambda m: m)
    with pytest.raises(ValueError):
        proxy.set_delay(0.1, direction="sideways")  # type: ignore[arg-type]


# -- life cycle --------------------------------------------------------------------------------


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
@pytest.mark.anyio
async def test_async_proxy_in_callers_loop(anyio_backend: str) -> None:
    async with broker_behind_proxy() as (broker, proxy):
        assert broker.advertised_address == proxy.address
        resp = await _wire.arequest(proxy.address, METADATA, MetadataRequest(topics=[]), version=1)
        assert resp.brokers[0].port == proxy.port
        proxy.set_delay(0.1)
        start = time.monotonic()
        await _wire.arequest(proxy.address, API_VERSIONS, ApiVersionsRequest(), version=0)
        assert time.monotonic() - start >= 0.19
        proxy.clear()
        proxy.drop_responses(18)
        with anyio.move_on_after(0.5) as scope:
            await _wire.arequest(proxy.address, API_VERSIONS, ApiVersionsRequest(), version=0)
        assert scope.cancelled_caught
        address = proxy.address
    # Closed: nothing listens any more.
    with pytest.raises(KafkaConnectionError):
        _wire.request(address, API_VERSIONS, ApiVersionsRequest(), version=0, timeout=1)


@pytest.mark.anyio
async def test_upstream_down_closes_client_connection() -> None:
    dead_port = _procs.free_port()
    async with FaultProxy("127.0.0.1", dead_port) as proxy:
        with pytest.raises(KafkaConnectionError):
            await _wire.arequest(proxy.address, API_VERSIONS, ApiVersionsRequest(), version=0)
        assert proxy.connection_count == 0


@pytest.mark.anyio
async def test_proxy_close_drops_open_connections() -> None:
    async with broker_behind_proxy() as (_broker, proxy):
        stream = await anyio.connect_tcp("127.0.0.1", proxy.port)
        await stream.send(_wire.encode_frame(API_VERSIONS, 0, 1, {}))
        await stream.receive()
        with anyio.fail_after(5):
            while True:  # the proxy counts the connection in its own task
                if proxy.connection_count == 1:
                    break
                await anyio.sleep(0.01)
        proxy_done = proxy
    assert proxy_done.connection_count == 0
    ended: BaseException | None = None
    with anyio.fail_after(5):
        try:
            while True:
                await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError, OSError) as exc:
            ended = exc
    assert ended is not None
    await stream.aclose()


def test_proxied_broker_fixture(proxied_broker: ProxiedBroker) -> None:
    pb = proxied_broker
    assert pb.bootstrap_servers == pb.proxy.address
    resp = _wire.request(pb.bootstrap_servers, METADATA, MetadataRequest(topics=[]), version=1)
    assert resp.brokers[0].port == pb.proxy.port
    pb.proxy.set_blackhole(True)
    with pytest.raises(KafkaTimeoutError):
        _wire.request(
            pb.bootstrap_servers, API_VERSIONS, ApiVersionsRequest(), version=0, timeout=0.3
        )


@pytest.mark.parametrize("proxied_broker", [{"durable": True}], indirect=True)
def test_proxied_durable_broker_survives_kill(proxied_broker: ProxiedBroker) -> None:
    pb = proxied_broker
    assert pb.broker.durable
    pb.broker.create_topic("kept", partitions=2)
    pb.broker.kill()
    with pytest.raises(KafkaConnectionError):
        _wire.request(
            pb.bootstrap_servers, API_VERSIONS, ApiVersionsRequest(), version=0, timeout=2
        )
    pb.broker.start()
    assert topic_partitions(pb.bootstrap_servers, "kept") == 2


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_threaded_proxy_resets_on_either_backend(
    shared_broker: tuple[EmbeddedBroker, FaultProxy], backend: str
) -> None:
    broker, _ = shared_broker
    own = FaultProxy("127.0.0.1", broker.port)
    with own.in_thread(backend):
        client = RawClient(own.address)
        try:
            client.send(1)
            assert client.recv_cid() == 1
            assert own.reset_connections() == 1
            _, how = client.read_until_closed()
            assert isinstance(how, ConnectionResetError), how
        finally:
            client.close()
        own.rewrite_error(18, 35)
        assert (
            _wire.request(own.address, API_VERSIONS, ApiVersionsRequest(), version=3).error_code
            == 35
        )
        address = own.address
    with pytest.raises(KafkaConnectionError):
        _wire.request(address, API_VERSIONS, ApiVersionsRequest(), version=0, timeout=1)


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
@pytest.mark.anyio
async def test_body_errors_propagate_unwrapped(anyio_backend: str) -> None:
    with pytest.raises(KeyError):
        async with FaultProxy("127.0.0.1", _procs.free_port()):
            raise KeyError("from the body")
    with anyio.move_on_after(0.05) as scope:
        async with FaultProxy("127.0.0.1", _procs.free_port()):
            await anyio.sleep(5)
    assert scope.cancelled_caught
