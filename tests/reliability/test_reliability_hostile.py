"""Hostile input: a fake broker answers with bytes no real broker sends.

Each case must give ONE typed ``kafka_async`` error at the client, never hang (every test runs
under ``anyio.fail_after``), stay within bounded memory (tracemalloc: a response of about
1 KiB never costs more than 1 MiB of allocation), and leave the client working on its other
connections. Two fake brokers form the cluster: node 1 is hostile, node 2 stays healthy and
is the bootstrap server.

The quick tier runs a few hundred random mutations per response type; ``-m slow`` runs
100,000 per response type (``KAFKA_ASYNC_FUZZ_EXAMPLES`` overrides both).
"""

from __future__ import annotations

import random
import struct
import tracemalloc
import zlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reliability_support import HEALTHY, HOSTILE, Cluster, open_cluster

from kafka_async.errors import (
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    ProtocolDecodeError,
    ResponseTooLargeError,
)
from kafka_async.protocol.apis import (
    FIND_COORDINATOR,
    LIST_OFFSETS,
    METADATA,
    PRODUCE,
)
from kafka_async.protocol.schema import AnyApi
from tests.harness.fake_broker import (
    SILENCE,
    FakeBroker,
    FakeRequest,
    Payload,
    Raw,
    frame,
    response_payload,
)
from tests.harness.mutations import fuzz_examples, mutate
from tests.harness.soak import record_result

#: A request must settle within this (the client's request timeout is 2 s).
DEADLINE = 10.0
#: Allocation budget for handling one small hostile response.
ALLOC_BUDGET = 1024 * 1024


@pytest.fixture
async def cluster() -> AsyncIterator[Cluster]:
    async with open_cluster() as c:
        yield c


# --------------------------------------------------------------------------------------------
# Well-formed responses to start from
# --------------------------------------------------------------------------------------------


def _metadata_body(broker: FakeBroker, version: int) -> Any:
    return broker.metadata_body()


def _produce_body(_: FakeBroker, version: int) -> Any:
    return {
        "responses": [
            {
                "name": "t",
                "partition_responses": [
                    {"index": 0, "error_code": 0, "base_offset": 42, "record_errors": []}
                ],
            }
        ],
        "throttle_time_ms": 0,
    }


def _list_offsets_body(_: FakeBroker, version: int) -> Any:
    return {
        "throttle_time_ms": 0,
        "topics": [
            {
                "name": "t",
                "partitions": [
                    {
                        "partition_index": 0,
                        "error_code": 0,
                        **(
                            {"timestamp": -1, "offset": 17, "leader_epoch": 0}
                            if version >= 1
                            else {"old_style_offsets": [17]}
                        ),
                    }
                ],
            }
        ],
    }


def _find_coordinator_body(broker: FakeBroker, version: int) -> Any:
    if version < 4:
        return {
            "throttle_time_ms": 0,
            "error_code": 0,
            "error_message": None,
            "node_id": HOSTILE,
            "host": broker.host,
            "port": broker.port,
        }
    return {
        "throttle_time_ms": 0,
        "coordinators": [
            {
                "key": "g",
                "node_id": HOSTILE,
                "host": broker.host,
                "port": broker.port,
                "error_code": 0,
                "error_message": None,
            }
        ],
    }


def _metadata_request(version: int = 0) -> Any:
    return {"topics": [{"name": "t"}]}


def _produce_request(version: int) -> Any:
    return {"acks": 1, "timeout_ms": 1000, "topic_data": []}


def _list_offsets_request(version: int) -> Any:
    return {"replica_id": -1, "topics": []}


def _find_coordinator_request(version: int) -> Any:
    if version < 4:
        return {"key": "g", "key_type": 0}
    return {"key_type": 0, "coordinator_keys": ["g"]}


#: name -> (api, request body, good response body)
RESPONSE_TYPES: dict[str, tuple[AnyApi, Callable[[int], Any], Callable[[FakeBroker, int], Any]]] = {
    "Metadata": (METADATA, _metadata_request, _metadata_body),
    "Produce": (PRODUCE, _produce_request, _produce_body),
    "ListOffsets": (LIST_OFFSETS, _list_offsets_request, _list_offsets_body),
    "FindCoordinator": (FIND_COORDINATOR, _find_coordinator_request, _find_coordinator_body),
}


async def _version(c: Cluster, api: AnyApi) -> int:
    return await c.client.version_for(HOSTILE, api)


async def _good_payload(c: Cluster, name: str, corr_id: int) -> bytes:
    api, _, body = RESPONSE_TYPES[name]
    version = await _version(c, api)
    return response_payload(api, version, corr_id, body(c.hostile, version))


async def _hostile_exchange(
    c: Cluster, api: AnyApi, body: Any, reply: Callable[[FakeRequest], Any]
) -> tuple[Any, BaseException | None, int]:
    """One request to the hostile broker answered by ``reply``: (response, error, peak
    bytes allocated meanwhile)."""
    c.hostile.script(api.key, reply, count=1)
    tracemalloc.start()
    try:
        with anyio.fail_after(DEADLINE):
            try:
                resp = await c.client.request(HOSTILE, api, body)
            except KafkaError as exc:
                return None, exc, tracemalloc.get_traced_memory()[1]
            return resp, None, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        c.hostile.clear_scripts()


async def _still_works(c: Cluster) -> None:
    """Both brokers answer a plain Metadata request (the hostile one on a new connection
    if its old one was closed)."""
    with anyio.fail_after(DEADLINE):
        for node in (HEALTHY, HOSTILE):
            resp = await c.client.request(node, METADATA, _metadata_request())
            assert [t.name for t in resp.topics] == ["t"]


def _with_corr(payload: bytes, corr_id: int) -> bytes:
    return struct.pack(">i", corr_id) + payload[4:]


# --------------------------------------------------------------------------------------------
# Truncation
# --------------------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(RESPONSE_TYPES))
async def test_hostile_truncated_at_every_offset(cluster: Cluster, name: str) -> None:
    """A frame whose size prefix is honest but whose message is cut short, at every byte."""
    api, make_request, _ = RESPONSE_TYPES[name]
    template = await _good_payload(cluster, name, 0)
    version = await _version(cluster, api)

    def request() -> Any:
        return make_request(version)

    outcomes: dict[str, int] = {}
    worst = 0
    for cut in range(len(template)):

        def reply(req: FakeRequest, cut: int = cut) -> Any:
            return Payload(_with_corr(template, req.correlation_id)[:cut])

        resp, err, peak = await _hostile_exchange(cluster, api, request(), reply)
        assert resp is None, f"{name} cut at {cut}/{len(template)} decoded: {resp!r}"
        assert isinstance(err, ProtocolDecodeError | KafkaConnectionError), (cut, err)
        outcomes[type(err).__name__] = outcomes.get(type(err).__name__, 0) + 1
        worst = max(worst, peak)
    assert worst < ALLOC_BUDGET, f"peak allocation {worst} bytes"
    await _still_works(cluster)
    record_result(f"hostile: {name} truncated at every offset", runs=len(template), ok=True)


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(RESPONSE_TYPES))
async def test_hostile_frame_cut_then_closed(cluster: Cluster, name: str) -> None:
    """The size prefix promises the whole message, the broker sends part of it and closes."""
    api, make_request, _ = RESPONSE_TYPES[name]
    template = await _good_payload(cluster, name, 0)
    version = await _version(cluster, api)

    def request() -> Any:
        return make_request(version)

    step = 1 if len(template) < 120 else 3
    for cut in [*range(0, len(template) + 4, step), len(template) + 4]:

        async def reply(req: FakeRequest, cut: int = cut) -> Any:
            data = frame(_with_corr(template, req.correlation_id))[:cut]
            return Raw(data, close=True)

        cluster.hostile.script(api.key, reply, count=1)
        err: BaseException | None = None
        with anyio.fail_after(DEADLINE):
            try:
                await cluster.client.request(HOSTILE, api, request())
            except KafkaError as exc:
                err = exc
        if cut < 4 + len(template):
            assert isinstance(err, KafkaConnectionError), (cut, err)
        else:
            assert err is None, err  # the whole frame arrived before the close
        cluster.hostile.clear_scripts()
    await _still_works(cluster)


# --------------------------------------------------------------------------------------------
# Frame lengths, counts, correlation ids
# --------------------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("size", "expected"),
    [
        (-1, KafkaConnectionError),
        (-(2**31), KafkaConnectionError),
        (0, KafkaConnectionError),
        (3, KafkaConnectionError),
        (2**31 - 1, ResponseTooLargeError),
    ],
)
async def test_hostile_frame_length(cluster: Cluster, size: int, expected: type) -> None:
    resp, err, peak = await _hostile_exchange(
        cluster, METADATA, _metadata_request(), lambda req: Raw(struct.pack(">i", size) + b"x" * 64)
    )
    assert resp is None
    assert type(err) is expected, err
    assert peak < ALLOC_BUDGET
    await _still_works(cluster)


@pytest.mark.anyio
async def test_hostile_large_announced_frame_small_body(cluster: Cluster) -> None:
    """A frame that announces 64 MiB (allowed by max_response_size) but carries 1 KiB and
    then stalls must not make the client allocate the 64 MiB up front.

    Regression: BrokerConnection._read_exactly used to allocate bytearray(size) first.
    """

    def reply(req: FakeRequest) -> Any:
        return Raw(struct.pack(">ii", 64 * 1024 * 1024, req.correlation_id) + b"\0" * 1020)

    cluster.hostile.script(METADATA.key, reply, count=1)
    tracemalloc.start()
    try:
        with anyio.fail_after(DEADLINE), pytest.raises(KafkaTimeoutError):
            await cluster.client.request(HOSTILE, METADATA, _metadata_request(), timeout=0.5)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    await _still_works(cluster)
    assert peak < ALLOC_BUDGET, f"peak allocation {peak} bytes for a 1 KiB response"


@pytest.mark.anyio
async def test_hostile_counts_claim_more_than_bytes(cluster: Cluster) -> None:
    """Array, string and bytes lengths of 2^31-1 (and a huge compact length) in a short
    response: a decode error before any allocation."""
    version = await _version(cluster, METADATA)
    flexible = METADATA.is_flexible(version)

    def reply(req: FakeRequest) -> Any:
        head = struct.pack(">i", req.correlation_id) + (b"\0" if flexible else b"")
        throttle = struct.pack(">i", 0) if version >= 3 else b""
        # uvarint 2^31-1 (compact arrays store count + 1) or an int32 of 2^31-1
        count = b"\xff\xff\xff\xff\x07" if flexible else struct.pack(">i", 2**31 - 1)
        return Payload(head + throttle + count + b"\0" * 200)

    for _ in range(3):
        resp, err, peak = await _hostile_exchange(cluster, METADATA, _metadata_request(), reply)
        assert resp is None
        assert isinstance(err, ProtocolDecodeError), err
        assert peak < ALLOC_BUDGET, peak
    await _still_works(cluster)


@pytest.mark.anyio
async def test_hostile_correlation_id_mismatch(cluster: Cluster) -> None:
    template = await _good_payload(cluster, "Metadata", 0)

    def reply(req: FakeRequest) -> Any:
        return Payload(_with_corr(template, req.correlation_id + 1))

    resp, err, _ = await _hostile_exchange(cluster, METADATA, _metadata_request(), reply)
    assert resp is None
    assert isinstance(err, KafkaConnectionError), err
    assert "correlation id" in str(err)
    await _still_works(cluster)


@pytest.mark.anyio
async def test_hostile_black_hole_times_out_and_other_connections_work(cluster: Cluster) -> None:
    cluster.hostile.script(METADATA.key, lambda req: SILENCE, count=1)
    start = anyio.current_time()
    async with anyio.create_task_group() as tg:

        async def healthy_meanwhile() -> None:
            await anyio.sleep(0.2)
            resp = await cluster.client.request(HEALTHY, METADATA, _metadata_request())
            assert resp.topics[0].name == "t"
            # The healthy broker answered while the hostile one was still silent.
            assert anyio.current_time() - start < 1.5

        tg.start_soon(healthy_meanwhile)
        with anyio.fail_after(DEADLINE), pytest.raises(KafkaTimeoutError):
            await cluster.client.request(HOSTILE, METADATA, _metadata_request())
    assert anyio.current_time() - start < 2.0 + 1.0
    await _still_works(cluster)


@pytest.mark.anyio
async def test_hostile_huge_throttle_time(cluster: Cluster) -> None:
    """A (buggy or hostile) broker answers with throttle_time_ms = 2^31-1: the client must
    not stop talking to it for 24 days (regression: the pause had no cap)."""
    body = cluster.hostile.metadata_body()
    body.throttle_time_ms = 2**31 - 1
    cluster.hostile.script(METADATA.key, lambda req: body, count=1)
    with anyio.fail_after(DEADLINE):
        await cluster.client.request(HOSTILE, METADATA, _metadata_request())
        # The next request to that broker must be answered within its own timeout.
        await cluster.client.request(HOSTILE, METADATA, _metadata_request())


@pytest.mark.anyio
async def test_hostile_connection_lost_while_throttled(cluster: Cluster) -> None:
    """A connection that dies while a request waits out a throttle: a typed error
    (regression: _flush raised IndexError on the emptied outbox)."""
    body = cluster.hostile.metadata_body()
    body.throttle_time_ms = 1500
    cluster.hostile.script(METADATA.key, lambda req: body, count=1)
    with anyio.fail_after(DEADLINE):
        await cluster.client.request(HOSTILE, METADATA, _metadata_request())
        async with anyio.create_task_group() as tg:

            async def cut() -> None:
                await anyio.sleep(0.3)
                cluster.hostile.close_connections()

            tg.start_soon(cut)
            with pytest.raises(KafkaConnectionError):
                await cluster.client.request(HOSTILE, METADATA, _metadata_request())


# --------------------------------------------------------------------------------------------
# Random mutations
# --------------------------------------------------------------------------------------------


async def _drop_if_throttled(cluster: Cluster) -> None:
    """A mutation may set throttle_time_ms to anything the client honours (up to its cap,
    see test_hostile_huge_throttle_time), which would slow every later example down. Start
    over on a fresh connection instead, so the fuzz keeps testing decoding."""
    conn = cluster.client.pool.connection(HOSTILE)
    if conn is not None and conn.statistics().throttles:
        await conn.close()


async def _fuzz(cluster: Cluster, name: str, examples: int, seed: int) -> dict[str, int]:
    api, make_request, _ = RESPONSE_TYPES[name]
    template = await _good_payload(cluster, name, 0)
    version = await _version(cluster, api)

    def request() -> Any:
        return make_request(version)

    rng = random.Random(seed)
    outcomes: dict[str, int] = {}
    worst = 0
    for _ in range(examples):
        mutated = mutate(template[4:], rng)

        def reply(req: FakeRequest, body: bytes = mutated) -> Any:
            return Payload(struct.pack(">i", req.correlation_id) + body)

        _resp, err, peak = await _hostile_exchange(cluster, api, request(), reply)
        worst = max(worst, peak)
        await _drop_if_throttled(cluster)
        key = "decoded" if err is None else type(err).__name__
        outcomes[key] = outcomes.get(key, 0) + 1
        # Only typed errors, and no hang: anything else propagated out of the exchange.
        assert err is None or isinstance(err, KafkaError)
    assert worst < ALLOC_BUDGET, f"peak allocation {worst} bytes"
    await _still_works(cluster)
    return outcomes


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(RESPONSE_TYPES))
async def test_hostile_random_mutations_quick(cluster: Cluster, name: str) -> None:
    n = fuzz_examples(300)
    # crc32, not hash(): str hashes change per process, and a failure must replay.
    outcomes = await _fuzz(cluster, name, n, seed=zlib.crc32(name.encode()))
    assert sum(outcomes.values()) == n
    record_result(f"hostile: {name} random mutations", runs=n, ok=True)


@pytest.mark.anyio
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(RESPONSE_TYPES))
async def test_hostile_random_mutations_full(cluster: Cluster, name: str) -> None:
    n = fuzz_examples(100_000)
    outcomes = await _fuzz(cluster, name, n, seed=1234)
    assert sum(outcomes.values()) == n
    record_result(f"hostile: {name} random mutations (full)", runs=n, ok=True)


@pytest.mark.anyio
@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.binary(min_size=0, max_size=600))
async def test_hostile_metadata_arbitrary_bytes_hypothesis(cluster: Cluster, data: bytes) -> None:
    """Hypothesis-chosen bytes after a correct correlation id: decoded or a typed error."""

    def reply(req: FakeRequest) -> Any:
        return Payload(struct.pack(">i", req.correlation_id) + data)

    _resp, err, peak = await _hostile_exchange(cluster, METADATA, _metadata_request(), reply)
    assert err is None or isinstance(err, KafkaError)
    assert peak < ALLOC_BUDGET
