"""Hostile input for every response type the clients decode, at the schema level.

The consumer (Fetch, the group protocol, offsets), the producer (InitProducerId and the
transaction APIs), the admin client (DescribeGroups, ListGroups, DescribeCluster) and the
connection handshake (ApiVersions, SASL) each decode their own responses. For every one of
them, a fake broker answers a request with a well-formed response cut at every byte offset,
then with random mutations of it. Pass criteria, as in ``test_reliability_hostile.py``: the
request ends with a typed ``KafkaError`` (or, for a mutation that still parses, a decoded
response), never hangs (``anyio.fail_after``), handling a response of about 1 KiB never
allocates 1 MiB (tracemalloc), and afterwards both brokers still answer.

Responses are built from the schemas: every field the version carries gets a non-default
value (arrays two elements long, tagged fields set), so each mutation lands on a field a
real decoder reads. Opaque bytes carry what real brokers put there: record batches built
with ``kafka_async.records`` in Fetch, consumer-protocol subscriptions and assignments in
the group APIs (mutated responses that still parse also have those decoded, as the group
coordinator and the admin client do).

ApiVersions and the SASL APIs are answered during the connection handshake; besides the
plain request, they are also fuzzed there (a new connection per example; the pool turns an
untyped handshake failure into a KafkaConnectionError, so the tests check it was not one).

The quick tier runs every truncation, 200 mutations per type and 50 per handshake response;
``-m slow`` runs 100,000 mutations per type and 20,000 per handshake response
(``KAFKA_ASYNC_FUZZ_EXAMPLES`` overrides every mutation count).
"""

from __future__ import annotations

import random
import struct
import tracemalloc
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import pytest
from reliability_support import HEALTHY, HOSTILE, Cluster
from reliability_support import open_cluster as open_hostile_cluster

from kafka_async.errors import KafkaConnectionError, KafkaError, ProtocolDecodeError
from kafka_async.protocol import headers
from kafka_async.protocol.apis import (
    ADD_OFFSETS_TO_TXN,
    ADD_PARTITIONS_TO_TXN,
    API_VERSIONS,
    DESCRIBE_CLUSTER,
    DESCRIBE_GROUPS,
    END_TXN,
    FETCH,
    HEARTBEAT,
    INIT_PRODUCER_ID,
    JOIN_GROUP,
    LEAVE_GROUP,
    LIST_GROUPS,
    METADATA,
    OFFSET_COMMIT,
    OFFSET_FETCH,
    SASL_AUTHENTICATE,
    SASL_HANDSHAKE,
    SYNC_GROUP,
    TXN_OFFSET_COMMIT,
)
from kafka_async.protocol.apis.metadata import MetadataRequest, MetadataRequestTopic
from kafka_async.protocol.codec import Reader
from kafka_async.protocol.consumer_protocol import Assignment, Subscription
from kafka_async.protocol.schema import AnyApi, Array, Primitive, StructDef, Type
from kafka_async.records.batch import build_batch, decode_batches
from kafka_async.structs import TopicPartition
from tests.harness.fake_broker import FakeBroker, FakeRequest, Payload, response_payload
from tests.harness.mutations import fuzz_examples, mutate
from tests.harness.soak import record_result

#: Every exchange must settle within this (the client's request timeout is 2 s).
DEADLINE = 10.0
#: A Metadata request for topic "t".
_METADATA_T = MetadataRequest(topics=[MetadataRequestTopic(name="t")])
#: Allocation budget for handling one response of about 1 KiB.
ALLOC_BUDGET = 1024 * 1024
QUICK_EXAMPLES = 200
FULL_EXAMPLES = 100_000
#: A new connection per example costs ~5 ms; the same responses also get FULL_EXAMPLES
#: mutations as plain requests.
HANDSHAKE_FULL_EXAMPLES = 20_000


@dataclass(frozen=True)
class Case:
    """One response type: its API and the version bounds its client asks for."""

    api: AnyApi
    min_version: int | None = None
    max_version: int | None = None


#: Response type -> how its client requests it (see the modules that send each).
CASES: dict[str, Case] = {
    "Fetch": Case(FETCH, 4, 17),  # consumer.fetcher: MAX_FETCH_VERSION
    "ApiVersions": Case(API_VERSIONS),  # net.connection handshake
    "SaslHandshake": Case(SASL_HANDSHAKE, 1),  # net.sasl
    "SaslAuthenticate": Case(SASL_AUTHENTICATE),
    "JoinGroup": Case(JOIN_GROUP),  # consumer.group.coordinator
    "SyncGroup": Case(SYNC_GROUP),
    "Heartbeat": Case(HEARTBEAT),
    "LeaveGroup": Case(LEAVE_GROUP),
    "OffsetFetch": Case(OFFSET_FETCH, 1),  # consumer.offsets, admin
    "OffsetCommit": Case(OFFSET_COMMIT, 2),
    "InitProducerId": Case(INIT_PRODUCER_ID),  # producer
    "AddPartitionsToTxn": Case(ADD_PARTITIONS_TO_TXN, None, 3),
    "AddOffsetsToTxn": Case(ADD_OFFSETS_TO_TXN),
    "TxnOffsetCommit": Case(TXN_OFFSET_COMMIT),
    "EndTxn": Case(END_TXN),
    "DescribeGroups": Case(DESCRIBE_GROUPS),  # admin
    "ListGroups": Case(LIST_GROUPS),
    "DescribeCluster": Case(DESCRIBE_CLUSTER),
}


# --------------------------------------------------------------------------------------------
# Well-formed responses, filled from the schemas
# --------------------------------------------------------------------------------------------

_SUBSCRIPTION = Subscription(
    ("t",), user_data=b"ud", owned_partitions=(TopicPartition("t", 0),), generation_id=3
).encode()
_ASSIGNMENT = Assignment((TopicPartition("t", 0), TopicPartition("t", 1)), b"ud").encode()

#: Opaque byte fields that hold something a client decodes further.
_BYTES_BY_NAME: dict[str, bytes] = {
    "metadata": _SUBSCRIPTION,  # JoinGroup members
    "member_metadata": _SUBSCRIPTION,  # DescribeGroups
    "assignment": _ASSIGNMENT,  # SyncGroup
    "member_assignment": _ASSIGNMENT,  # DescribeGroups
    "auth_bytes": b"",  # PLAIN expects an empty server answer
}
#: Fields that would make the client pause or that must read as "no error".
_ZERO_FIELDS = ("throttle_time_ms", "error_code")


def _records() -> bytes:
    """Two record batches, one compressed, as a broker stores them."""
    ts = 1_700_000_000_000
    first = build_batch([(ts, b"k0", b"v0", [("h", b"x")]), (ts + 1, None, b"v1", None)])
    second = build_batch(
        [(ts + 2, b"k2", b"v2" * 20, None), (ts + 3, b"k3", None, None)], "gzip", base_offset=2
    )
    return first + second


def _primitive(t: Primitive, name: str) -> Any:
    kind = t.name
    if kind == "records":
        return _records()
    if kind == "bytes":
        return _BYTES_BY_NAME.get(name, b"\x01\x02\x03")
    if kind == "string":
        if name == "protocol_type":
            return "consumer"
        if name.endswith("mechanisms") or name == "mechanism":
            return "PLAIN"
        return "t" if name in ("name", "topic") else f"{name[:6]}-x"
    if kind == "uuid":
        return uuid.UUID(int=0x1234)
    if kind == "bool":
        return True
    if kind == "float64":
        return 1.5
    if any(name.endswith(z) for z in _ZERO_FIELDS):
        return 0
    return 3


def _value(t: Type | StructDef, name: str, version: int, items: int) -> Any:
    if isinstance(t, StructDef):
        return fill(t, version, items)
    if isinstance(t, Array):
        return [_value(t.elem, name, version, items) for _ in range(items)]
    assert isinstance(t, Primitive), t
    return _primitive(t, name)


def fill(struct: StructDef, version: int, items: int = 2) -> dict[str, Any]:
    """A body for ``struct`` at ``version`` with every field of that version set and
    ``items`` elements in every array."""
    return {
        fld.name: _value(fld.type, fld.name, version, items)
        for fld in struct.fields
        if version in fld.versions
    }


#: One element per array where two would take the response well past 1 KiB (the quick
#: tier cuts every response at every byte).
_SINGLE_ITEMS = {FETCH.key, DESCRIBE_GROUPS.key}


def good_body(api: AnyApi, version: int) -> dict[str, Any]:
    body = fill(api.response, version, 1 if api.key in _SINGLE_ITEMS else 2)
    if api is API_VERSIONS:
        # The handshake needs a usable answer: every API the client may pick.
        body["api_keys"] = [
            {"api_key": a.key, "min_version": 0, "max_version": a.max_version}
            for a in sorted(CASES_APIS, key=lambda a: a.key)
        ]
    if api is SASL_HANDSHAKE:
        body["mechanisms"] = ["PLAIN"]
    if api is SASL_AUTHENTICATE:
        body["session_lifetime_ms"] = 0  # no re-authentication loop
    return body


CASES_APIS: list[AnyApi] = [METADATA, *(c.api for c in CASES.values())]


def check_embedded(api: AnyApi, resp: Any) -> None:
    """Decode what the clients decode inside a parsed response (typed errors only)."""
    if api is FETCH:
        for topic in resp.responses or ():
            for part in topic.partitions or ():
                for batch in decode_batches(part.records or b""):
                    batch.records()
    elif api is JOIN_GROUP:
        for m in resp.members or ():
            Subscription.decode(m.metadata or b"")
    elif api is SYNC_GROUP:
        Assignment.decode(resp.assignment or b"")
    elif api is DESCRIBE_GROUPS:
        for g in resp.groups or ():
            for m in g.members or ():
                Subscription.decode(m.member_metadata or b"")
                Assignment.decode(m.member_assignment or b"")


# --------------------------------------------------------------------------------------------
# The cluster: node 1 hostile, node 2 healthy (and the bootstrap server)
# --------------------------------------------------------------------------------------------


@asynccontextmanager
async def open_cluster(*, sasl: bool = False) -> AsyncIterator[Cluster]:
    """The hostile cluster of reliability_support, with SASL PLAIN (answered properly by both
    brokers unless scripted otherwise) if ``sasl``."""
    if not sasl:
        async with open_hostile_cluster() as c:
            yield c
        return
    async with open_hostile_cluster(
        _sasl_answers,
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="PLAIN",
        sasl_plain_username="u",
        sasl_plain_password="p",
    ) as c:
        yield c


def _sasl_answers(broker: FakeBroker) -> None:
    for api in (SASL_HANDSHAKE, SASL_AUTHENTICATE):

        def answer(req: FakeRequest, api: AnyApi = api) -> Any:
            return good_body(api, req.api_version)

        broker.set_default(api.key, answer)


@pytest.fixture
async def cluster() -> AsyncIterator[Cluster]:
    async with open_cluster() as c:
        yield c


async def _version(c: Cluster, case: Case) -> int:
    return await c.client.version_for(
        HOSTILE, case.api, min_version=case.min_version, max_version=case.max_version
    )


def _request_body(api: AnyApi, version: int) -> dict[str, Any]:
    # Every request field has a default that encodes; the fake broker answers whatever
    # was asked with the scripted bytes.
    return {}


async def still_works(c: Cluster) -> None:
    """Both brokers answer Metadata (the hostile one on a new connection if need be)."""
    with anyio.fail_after(DEADLINE):
        for node in (HEALTHY, HOSTILE):
            resp = await c.client.request(node, METADATA, _METADATA_T)
            assert [t.name for t in resp.topics] == ["t"]


class Exchanges:
    """Requests to the hostile broker answered with given bytes, tallied.

    tracemalloc runs for the whole series (starting and stopping it per request would cost
    more than the requests); the peak is reset before each one and measured from the
    memory in use at that moment.
    """

    def __init__(self, c: Cluster, name: str) -> None:
        self.c = c
        self.name = name
        self.case = CASES[name]
        self.outcomes: dict[str, int] = {}
        self.worst = 0
        self.version = -1

    async def __aenter__(self) -> Exchanges:
        self.version = await _version(self.c, self.case)
        tracemalloc.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        tracemalloc.stop()
        self.c.hostile.clear_scripts()

    def template(self) -> bytes:
        """The well-formed response body (header included, correlation id 0)."""
        api = self.case.api
        return response_payload(api, self.version, 0, good_body(api, self.version))

    async def answer(self, payload_after_corr: bytes) -> tuple[Any, KafkaError | None]:
        """One request answered with ``payload_after_corr`` after the right correlation id."""
        api = self.case.api

        def reply(req: FakeRequest) -> Any:
            return Payload(struct.pack(">i", req.correlation_id) + payload_after_corr)

        resp: Any = None
        err: KafkaError | None = None
        with anyio.fail_after(DEADLINE):
            # Open (and negotiate) the connection first: a reconnect after the previous
            # example must not take the scripted answer for its own ApiVersions.
            await self.c.client.connection(HOSTILE)
            self.c.hostile.script(api.key, reply, count=1)
            tracemalloc.reset_peak()
            base = tracemalloc.get_traced_memory()[0]
            try:
                resp = await self.c.client.request(
                    HOSTILE, api, _request_body(api, self.version), version=self.version
                )
                check_embedded(api, resp)
            except KafkaError as exc:
                err = exc
            finally:
                self.c.hostile.clear_scripts()
        self.worst = max(self.worst, tracemalloc.get_traced_memory()[1] - base)
        key = "decoded" if err is None else type(err).__name__
        self.outcomes[key] = self.outcomes.get(key, 0) + 1
        await self._calm_down()
        return resp, err

    async def _calm_down(self) -> None:
        """A mutation that parses may carry any throttle time, which the client honours
        (capped), even when what is inside then fails to decode; drop such a connection so
        later examples keep testing decoding."""
        conn = self.c.client.pool.connection(HOSTILE)
        if conn is not None and conn.statistics().throttles:
            await conn.close()


# --------------------------------------------------------------------------------------------
# Mutations
# --------------------------------------------------------------------------------------------


def _seed(name: str) -> int:
    return sum(name.encode()) * 7919


# --------------------------------------------------------------------------------------------
# Schema-level tests
# --------------------------------------------------------------------------------------------


def test_templates_decode_and_carry_every_field() -> None:
    """The starting points are good responses: they decode back to what was encoded, and
    the embedded records, subscriptions and assignments decode too (else the fuzz would
    start from garbage and prove little)."""
    for name, case in CASES.items():
        api = case.api
        hi = case.max_version if case.max_version is not None else api.max_version
        body = good_body(api, hi)
        payload = response_payload(api, hi, 7, body)
        r = Reader(payload)
        assert headers.read_response_header(r, api, hi) == 7
        resp = api.decode_response(hi, r)
        assert r.remaining == 0, name
        check_embedded(api, resp)
        assert getattr(resp, "throttle_time_ms", 0) == 0
    fetch = response_payload(FETCH, 12, 0, good_body(FETCH, 12))
    assert _records() in fetch
    assert [len(b.records()) for b in decode_batches(_records())] == [2, 2]


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(CASES))
async def test_hostile_api_truncated_at_every_offset(cluster: Cluster, name: str) -> None:
    """The size prefix is honest, the message is cut short: every cut is a typed error."""
    async with Exchanges(cluster, name) as ex:
        template = ex.template()
        for cut in range(4, len(template)):
            resp, err = await ex.answer(template[4:cut])
            assert resp is None, f"{name} cut at {cut}/{len(template)} decoded: {resp!r}"
            assert isinstance(err, ProtocolDecodeError | KafkaConnectionError), (cut, err)
        # The whole message decodes (the cuts above were the only thing wrong).
        resp, err = await ex.answer(template[4:])
        assert err is None, err
    assert ex.worst < ALLOC_BUDGET, f"peak allocation {ex.worst} bytes"
    await still_works(cluster)
    record_result(
        f"hostile: {name} truncated at every offset",
        runs=len(template) - 4,
        extra_outcomes=str(ex.outcomes),
        peak_alloc_kib=ex.worst // 1024,
    )


async def _fuzz(cluster: Cluster, name: str, examples: int) -> tuple[dict[str, int], int]:
    rng = random.Random(_seed(name))
    async with Exchanges(cluster, name) as ex:
        body = ex.template()[4:]
        for _ in range(examples):
            await ex.answer(mutate(body, rng))
    assert ex.worst < ALLOC_BUDGET, f"peak allocation {ex.worst} bytes"
    await still_works(cluster)
    assert sum(ex.outcomes.values()) == examples
    return ex.outcomes, ex.worst


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(CASES))
async def test_hostile_api_random_mutations_quick(cluster: Cluster, name: str) -> None:
    n = fuzz_examples(QUICK_EXAMPLES)
    outcomes, peak = await _fuzz(cluster, name, n)
    record_result(
        f"hostile: {name} random mutations",
        runs=n,
        extra_outcomes=str(outcomes),
        peak_alloc_kib=peak // 1024,
    )


@pytest.mark.anyio
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
async def test_hostile_api_random_mutations_full(cluster: Cluster, name: str) -> None:
    n = fuzz_examples(FULL_EXAMPLES)
    outcomes, peak = await _fuzz(cluster, name, n)
    record_result(
        f"hostile: {name} random mutations (full)",
        runs=n,
        extra_outcomes=str(outcomes),
        peak_alloc_kib=peak // 1024,
    )


# --------------------------------------------------------------------------------------------
# The handshake: ApiVersions and SASL answered while a connection opens
# --------------------------------------------------------------------------------------------

#: Responses of the handshake, and whether the client must use SASL for them to be asked.
HANDSHAKE: dict[str, bool] = {"ApiVersions": False, "SaslHandshake": True, "SaslAuthenticate": True}


async def _handshake_with(c: Cluster, api: AnyApi, after_corr: bytes) -> KafkaError | None:
    """Open a new connection to the hostile broker whose ``api`` answer is ``after_corr``;
    send Metadata on it. The error, if any (a typed one, or this raises)."""
    await c.client.pool.close_node(HOSTILE)

    def reply(req: FakeRequest) -> Any:
        return Payload(struct.pack(">i", req.correlation_id) + after_corr)

    c.hostile.script(api.key, reply, count=1)
    try:
        with anyio.fail_after(DEADLINE):
            await c.client.request(HOSTILE, METADATA, _METADATA_T)
    except KafkaError as exc:
        return exc
    finally:
        c.hostile.clear_scripts()
    return None


async def _handshake_series(
    c: Cluster, name: str, payloads: Callable[[bytes], list[bytes]]
) -> dict[str, int]:
    api = CASES[name].api
    # The versions the handshake uses: ApiVersions at our newest, SASL as negotiated.
    version = API_VERSIONS.max_version if api is API_VERSIONS else await _version(c, CASES[name])
    template = response_payload(api, version, 0, good_body(api, version))
    outcomes: dict[str, int] = {}
    worst = 0
    tracemalloc.start()
    try:
        for data in payloads(template[4:]):
            tracemalloc.reset_peak()
            base = tracemalloc.get_traced_memory()[0]
            err = await _handshake_with(c, api, data)
            # The pool wraps an untyped connect failure in a KafkaConnectionError saying
            # so (net.pool): a decoder bug must not hide behind that.
            assert not str(err).startswith(f"connect to node {HOSTILE} failed"), err
            worst = max(worst, tracemalloc.get_traced_memory()[1] - base)
            key = "connected" if err is None else type(err).__name__
            outcomes[key] = outcomes.get(key, 0) + 1
    finally:
        tracemalloc.stop()
    assert worst < ALLOC_BUDGET, f"peak allocation {worst} bytes"
    await c.client.pool.close_node(HOSTILE)
    await still_works(c)
    return outcomes


async def _handshake_test(
    name: str, sasl: bool, payloads: Callable[[bytes], list[bytes]]
) -> dict[str, int]:
    async with open_cluster(sasl=sasl) as c:
        return await _handshake_series(c, name, payloads)


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(HANDSHAKE))
async def test_hostile_handshake_truncated_at_every_offset(name: str) -> None:
    """Every cut of a handshake response fails that connection with a typed error; the
    next connection (answered properly) works."""
    outcomes = await _handshake_test(
        name, HANDSHAKE[name], lambda body: [body[:cut] for cut in range(len(body))]
    )
    assert "connected" not in outcomes, outcomes
    record_result(
        f"hostile: {name} (handshake) truncated at every offset",
        runs=sum(outcomes.values()),
        extra_outcomes=str(outcomes),
    )


def _mutations(name: str, n: int) -> Callable[[bytes], list[bytes]]:
    def make(body: bytes) -> list[bytes]:
        rng = random.Random(_seed(name) + 1)
        return [mutate(body, rng) for _ in range(n)]

    return make


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(HANDSHAKE))
async def test_hostile_handshake_random_mutations_quick(name: str) -> None:
    n = fuzz_examples(QUICK_EXAMPLES // 4)
    outcomes = await _handshake_test(name, HANDSHAKE[name], _mutations(name, n))
    record_result(
        f"hostile: {name} (handshake) random mutations", runs=n, extra_outcomes=str(outcomes)
    )


@pytest.mark.anyio
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(HANDSHAKE))
async def test_hostile_handshake_random_mutations_full(name: str) -> None:
    n = fuzz_examples(HANDSHAKE_FULL_EXAMPLES)
    outcomes = await _handshake_test(name, HANDSHAKE[name], _mutations(name, n))
    record_result(
        f"hostile: {name} (handshake) random mutations (full)",
        runs=n,
        extra_outcomes=str(outcomes),
    )
