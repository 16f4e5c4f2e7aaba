"""The primitive codec and the schema engine's handling of hostile or invalid input."""

from __future__ import annotations

import struct as pystruct
import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_async.errors import ProtocolDecodeError, ProtocolEncodeError, UnsupportedFieldError
from kafka_async.protocol import codec as c
from kafka_async.protocol.apis import ALL_APIS, API_VERSIONS, FETCH, METADATA, PRODUCE
from kafka_async.protocol.apis.produce import ProduceRequest
from kafka_async.protocol.codec import Reader
from kafka_async.protocol.schema import INT32, INT64, STRING, AnyApi, Api, array, f, struct

# --------------------------------------------------------------------------------------------
# Varints
# --------------------------------------------------------------------------------------------

UVARINT_CASES = [
    (0, b"\x00"),
    (1, b"\x01"),
    (127, b"\x7f"),
    (128, b"\x80\x01"),
    (300, b"\xac\x02"),
    (16383, b"\xff\x7f"),
    (16384, b"\x80\x80\x01"),
    (2**31 - 1, b"\xff\xff\xff\xff\x07"),
    (2**32 - 1, b"\xff\xff\xff\xff\x0f"),
    (2**64 - 1, b"\xff" * 9 + b"\x01"),
]


@pytest.mark.parametrize(("value", "wire"), UVARINT_CASES)
def test_uvarint_known_bytes(value: int, wire: bytes) -> None:
    out = bytearray()
    c.write_uvarint(out, value)
    assert bytes(out) == wire
    assert c.uvarint_size(value) == len(wire)
    r = Reader(wire)
    assert r.uvarint() == value
    assert r.remaining == 0


ZIGZAG_CASES = [(0, 0), (-1, 1), (1, 2), (-2, 3), (2**31 - 1, 2**32 - 2), (-(2**31), 2**32 - 1)]


@pytest.mark.parametrize(("value", "zigzag"), ZIGZAG_CASES)
def test_varint_zigzag(value: int, zigzag: int) -> None:
    out = bytearray()
    c.write_varint(out, value)
    expected = bytearray()
    c.write_uvarint(expected, zigzag)
    assert out == expected
    assert Reader(out).varint() == value


@pytest.mark.parametrize("value", [0, -1, 2**63 - 1, -(2**63), 2**31, -(2**31) - 1])
def test_varlong_extremes(value: int) -> None:
    out = bytearray()
    c.write_varlong(out, value)
    assert len(out) <= 10
    assert Reader(out).varlong() == value


@given(st.integers(-(2**31), 2**31 - 1))
def test_varint_roundtrip(value: int) -> None:
    out = bytearray()
    c.write_varint(out, value)
    assert Reader(out).varint() == value


@given(st.integers(-(2**63), 2**63 - 1))
def test_varlong_roundtrip(value: int) -> None:
    out = bytearray()
    c.write_varlong(out, value)
    assert Reader(out).varlong() == value


def test_uvarint_rejects_negative() -> None:
    with pytest.raises(ValueError, match="cannot hold"):
        c.write_uvarint(bytearray(), -1)


def test_varint_longer_than_ten_bytes_is_an_error() -> None:
    with pytest.raises(ProtocolDecodeError, match="longer than 10"):
        Reader(b"\x80" * 11 + b"\x00").uvarint()


@pytest.mark.parametrize("wire", [b"", b"\x80", b"\xff\xff"])
def test_truncated_varint(wire: bytes) -> None:
    with pytest.raises(ProtocolDecodeError):
        Reader(wire).uvarint()


# --------------------------------------------------------------------------------------------
# Strings, bytes, UUIDs, fixed width
# --------------------------------------------------------------------------------------------


def test_classic_and_compact_strings() -> None:
    out = bytearray()
    c.write_string(out, "ab")
    c.write_nullable_string(out, None)
    c.write_compact_string(out, "")
    c.write_compact_nullable_string(out, None)
    c.write_compact_string(out, "é")
    assert bytes(out) == b"\x00\x02ab" + b"\xff\xff" + b"\x01" + b"\x00" + b"\x03\xc3\xa9"
    r = Reader(out)
    assert r.string() == "ab"
    assert r.nullable_string() is None
    assert r.compact_string() == ""
    assert r.compact_nullable_string() is None
    assert r.compact_string() == "é"
    r.expect_end()


def test_classic_and_compact_bytes() -> None:
    out = bytearray()
    c.write_bytes(out, b"xyz")
    c.write_nullable_bytes(out, None)
    c.write_compact_bytes(out, b"")
    c.write_compact_nullable_bytes(out, None)
    assert bytes(out) == b"\x00\x00\x00\x03xyz" + b"\xff\xff\xff\xff" + b"\x01" + b"\x00"
    r = Reader(out)
    assert r.bytes_() == b"xyz"
    assert r.nullable_bytes() is None
    assert r.compact_bytes() == b""
    assert r.compact_nullable_bytes() is None
    r.expect_end()


def test_null_where_not_nullable_is_a_decode_error() -> None:
    with pytest.raises(ProtocolDecodeError):
        Reader(b"\xff\xff").string()
    with pytest.raises(ProtocolDecodeError):
        Reader(b"\x00").compact_string()
    with pytest.raises(ProtocolDecodeError):
        Reader(b"\xff\xff\xff\xff").bytes_()
    with pytest.raises(ProtocolDecodeError):
        Reader(b"\x00").compact_bytes()


@pytest.mark.parametrize(
    ("method", "wire"),
    [
        ("string", b"\xff\xfb"),  # -5
        ("nullable_string", b"\xff\xfe"),  # -2 is not null
        ("bytes_", b"\xff\xff\xff\xfe"),
        ("nullable_bytes", b"\xff\xff\xff\xfe"),
        ("array_len", b"\xff\xff\xff\xfe"),
        ("records", b"\xff\xff\xff\xfe"),
    ],
)
def test_negative_lengths(method: str, wire: bytes) -> None:
    with pytest.raises(ProtocolDecodeError):
        getattr(Reader(wire), method)()


@pytest.mark.parametrize("wire", [b"\x00\x02\xc3\x28", b"\x00\x01\xff", b"\x00\x03\xed\xa0\x80"])
def test_invalid_utf8(wire: bytes) -> None:
    with pytest.raises(ProtocolDecodeError, match="UTF-8"):
        Reader(wire).string()
    compact = bytes([wire[1] + 1]) + wire[2:]
    with pytest.raises(ProtocolDecodeError, match="UTF-8"):
        Reader(compact).compact_string()


def test_uuid_roundtrip_and_null_as_zero() -> None:
    u = uuid.uuid4()
    out = bytearray()
    c.write_uuid(out, u)
    c.write_uuid(out, None)
    r = Reader(out)
    assert r.uuid() == u
    assert r.uuid() == c.ZERO_UUID
    # The decoded UUID is a whole one: same value, hash, text, bytes and version.
    got = Reader(u.bytes).uuid()
    assert type(got) is uuid.UUID
    assert (got, hash(got), str(got), got.bytes, got.version) == (
        u,
        hash(u),
        str(u),
        u.bytes,
        u.version,
    )
    assert {got: 1}[u] == 1
    assert got.is_safe is uuid.SafeUUID.unknown
    with pytest.raises(ProtocolDecodeError):
        Reader(b"\x00" * 15).uuid()


@pytest.mark.parametrize(
    ("writer", "reader", "value", "size"),
    [
        ("write_int8", "int8", -128, 1),
        ("write_int16", "int16", -32768, 2),
        ("write_uint16", "uint16", 65535, 2),
        ("write_int32", "int32", -(2**31), 4),
        ("write_uint32", "uint32", 2**32 - 1, 4),
        ("write_int64", "int64", 2**63 - 1, 8),
        ("write_float64", "float64", -1.5, 8),
        ("write_bool", "boolean", True, 1),
    ],
)
def test_fixed_width(writer: str, reader: str, value: Any, size: int) -> None:
    out = bytearray()
    getattr(c, writer)(out, value)
    assert len(out) == size
    assert getattr(Reader(out), reader)() == value
    with pytest.raises(ProtocolDecodeError):
        getattr(Reader(out[:-1]), reader)()


def test_array_count_larger_than_the_bytes_left() -> None:
    with pytest.raises(ProtocolDecodeError, match="claims more"):
        Reader(b"\x7f\xff\xff\xff" + b"\x00" * 8).array_len()
    huge = bytearray()
    c.write_uvarint(huge, 2**62)
    with pytest.raises(ProtocolDecodeError, match="claims more"):
        Reader(bytes(huge) + b"\x00").compact_array_len()


def test_reader_window_is_respected() -> None:
    r = Reader(b"\x00\x00\x00\x01\x00\x00\x00\x02", 0, 4)
    assert r.int32() == 1
    with pytest.raises(ProtocolDecodeError):
        r.int32()


# --------------------------------------------------------------------------------------------
# Tagged fields
# --------------------------------------------------------------------------------------------

TAGGED: AnyApi = Api(
    9999,
    "TaggedTest",
    "0-1",
    "1+",
    request=[
        f("a", INT32),
        f("note", STRING, "1+", nullable="1+", default=None, tag=3),
        f("big", INT64, "1+", default=-1, tag=1),
    ],
    response=[f("items", array(struct("Item", [f("x", INT32)])))],
)


def test_tagged_fields_written_in_tag_order_only_when_not_default() -> None:
    assert bytes(TAGGED.encode_request(1, {"a": 7})) == b"\x00\x00\x00\x07\x00"
    wire = bytes(TAGGED.encode_request(1, {"a": 7, "note": "hi", "big": 5}))
    assert wire == (
        b"\x00\x00\x00\x07"
        + b"\x02"  # two tagged fields
        + b"\x01\x08"
        + pystruct.pack(">q", 5)  # tag 1 first
        + b"\x03\x03\x03hi"  # tag 3: size 3, compact string "hi"
    )
    msg = TAGGED.decode_request(1, wire)
    assert (msg.a, msg.note, msg.big) == (7, "hi", 5)


def test_unknown_tags_are_skipped() -> None:
    wire = b"\x00\x00\x00\x07" + b"\x03" + b"\x00\x02zz" + b"\x03\x03\x03ok" + b"\x63\x00"
    msg = TAGGED.decode_request(1, wire)
    assert (msg.a, msg.note, msg.big) == (7, "ok", -1)


def test_tagged_field_size_must_match_its_content() -> None:
    # tag 1 says 9 bytes but an int64 is 8: the extra byte must not be silently ignored.
    wire = b"\x00\x00\x00\x07\x01\x01\x09" + pystruct.pack(">q", 5) + b"\x00"
    with pytest.raises(ProtocolDecodeError):
        TAGGED.decode_request(1, wire)
    # ... and a size beyond the end of the message is a truncation.
    with pytest.raises(ProtocolDecodeError):
        TAGGED.decode_request(1, b"\x00\x00\x00\x07\x01\x05\x7f\x00")


def test_tag_count_larger_than_the_bytes_left() -> None:
    with pytest.raises(ProtocolDecodeError):
        TAGGED.decode_request(1, b"\x00\x00\x00\x07\xff\xff\xff\x07")


# --------------------------------------------------------------------------------------------
# Hostile responses: truncation at every offset, random garbage
# --------------------------------------------------------------------------------------------


def _records(n: int) -> bytes:
    return bytes(range(256)) * (n // 256) + bytes(n % 256)


def _metadata_response() -> dict[str, Any]:
    return {
        "throttle_time_ms": 5,
        "brokers": [
            {"node_id": i, "host": f"b{i}.example", "port": 9092, "rack": "r"} for i in range(3)
        ],
        "cluster_id": "cluster",
        "controller_id": 1,
        "topics": [
            {
                "error_code": 0,
                "name": f"topic-{t}",
                "topic_id": uuid.UUID(int=t + 1),
                "partitions": [
                    {
                        "partition_index": p,
                        "leader_id": p % 3,
                        "leader_epoch": 4,
                        "replica_nodes": [0, 1, 2],
                        "isr_nodes": [0, 1],
                        "offline_replicas": [2],
                    }
                    for p in range(3)
                ],
            }
            for t in range(2)
        ],
    }


def _fetch_response(version: int) -> dict[str, Any]:
    return {
        "throttle_time_ms": 1,
        "session_id": 3 if version >= 7 else 0,
        "responses": [
            {
                "topic": "orders" if version < 13 else "",
                "topic_id": uuid.UUID(int=9) if version >= 13 else c.ZERO_UUID,
                "partitions": [
                    {
                        "partition_index": p,
                        "high_watermark": 100,
                        "last_stable_offset": 90,
                        "log_start_offset": 0,
                        "aborted_transactions": [{"producer_id": 7, "first_offset": 3}],
                        "records": _records(40),
                    }
                    for p in range(2)
                ],
            }
        ],
    }


def _produce_response(version: int) -> dict[str, Any]:
    return {
        "responses": [
            {
                "name": "orders",
                "partition_responses": [
                    {
                        "index": p,
                        "base_offset": 10,
                        "log_append_time_ms": 5,
                        "log_start_offset": 0,
                        "record_errors": [{"batch_index": 1, "batch_index_error_message": "bad"}]
                        if version >= 8
                        else [],
                        "error_message": "oops" if version >= 8 else None,
                    }
                    for p in range(2)
                ],
            }
        ],
        "throttle_time_ms": 2,
    }


HOSTILE: list[tuple[AnyApi, int, dict[str, Any]]] = [
    (METADATA, 0, _metadata_response()),
    (METADATA, 1, _metadata_response()),
    (METADATA, 8, _metadata_response()),
    (METADATA, 12, _metadata_response()),
    (FETCH, 4, _fetch_response(4)),
    (FETCH, 11, _fetch_response(11)),
    (FETCH, 12, _fetch_response(12)),
    (FETCH, 17, _fetch_response(17)),
    (PRODUCE, 3, _produce_response(3)),
    (PRODUCE, 8, _produce_response(8)),
    (PRODUCE, 11, _produce_response(11)),
]


@pytest.mark.parametrize(
    ("api", "version", "body"), HOSTILE, ids=[f"{a.name}-v{v}" for a, v, _ in HOSTILE]
)
def test_truncated_response_at_every_offset(
    api: AnyApi, version: int, body: dict[str, Any]
) -> None:
    data = bytes(api.encode_response(version, body))
    full = api.decode_response(version, data)
    assert full.to_dict()["throttle_time_ms"] in (0, 1, 2, 5)
    for cut in range(len(data)):
        with pytest.raises(ProtocolDecodeError):
            api.decode_response(version, data[:cut])


@pytest.mark.parametrize(
    ("api", "version", "body"), HOSTILE, ids=[f"{a.name}-v{v}" for a, v, _ in HOSTILE]
)
def test_corrupted_response_raises_only_decode_errors(
    api: AnyApi, version: int, body: dict[str, Any]
) -> None:
    data = bytes(api.encode_response(version, body))

    @settings(max_examples=60, deadline=None, database=None)
    @given(st.data())
    def run(draw: st.DataObject) -> None:
        buf = bytearray(data)
        for _ in range(draw.draw(st.integers(1, 4))):
            pos = draw.draw(st.integers(0, len(buf) - 1))
            buf[pos] = draw.draw(st.integers(0, 255))
        try:
            api.decode_response(version, bytes(buf))
        except ProtocolDecodeError:
            pass

    run()


@settings(max_examples=200, deadline=None, database=None)
@given(st.binary(max_size=200), st.sampled_from([(METADATA, 12), (FETCH, 17), (PRODUCE, 9)]))
def test_random_bytes_raise_only_decode_errors(data: bytes, case: tuple[AnyApi, int]) -> None:
    api, version = case
    try:
        api.decode_response(version, data)
    except ProtocolDecodeError:
        pass


GARBAGE_CASES = [(api, v) for api in ALL_APIS for v in sorted({api.min_version, api.max_version})]


@pytest.mark.parametrize(
    ("api", "version"), GARBAGE_CASES, ids=[f"{a.name}-v{v}" for a, v in GARBAGE_CASES]
)
def test_every_decoder_raises_only_decode_errors(api: AnyApi, version: int) -> None:
    @settings(max_examples=15, deadline=None, database=None)
    @given(st.binary(max_size=64))
    def run(data: bytes) -> None:
        for decode in (api.decode_request, api.decode_response):
            try:
                decode(version, data)
            except ProtocolDecodeError:
                pass

    run()


def test_huge_array_count_fails_fast_without_allocating() -> None:
    # Metadata v0 response: brokers array claiming 2**31-1 entries in a 12-byte message.
    data = b"\x7f\xff\xff\xff" + b"\x00" * 8
    with pytest.raises(ProtocolDecodeError, match="claims more"):
        METADATA.decode_response(0, data)


# --------------------------------------------------------------------------------------------
# Encoding rules
# --------------------------------------------------------------------------------------------


def test_non_ignorable_field_absent_from_version_is_refused() -> None:
    body = {"transactional_id": "tx", "acks": 1, "timeout_ms": 1000, "topic_data": []}
    with pytest.raises(UnsupportedFieldError, match="transactional_id"):
        PRODUCE.encode_request(2, body)
    # The same field at its default is fine, and so is a version that has it.
    PRODUCE.encode_request(2, {**body, "transactional_id": None})
    PRODUCE.encode_request(3, body)
    # Message objects are checked the same way as dicts.
    with pytest.raises(UnsupportedFieldError):
        PRODUCE.encode_request(2, ProduceRequest(transactional_id="tx", acks=1, timeout_ms=1000))


def test_ignorable_field_absent_from_version_is_dropped() -> None:
    base = {"max_wait_ms": 10, "min_bytes": 1, "topics": []}
    assert FETCH.encode_request(3, {**base, "isolation_level": 1}) == FETCH.encode_request(3, base)
    assert API_VERSIONS.encode_request(2, {"client_software_name": "x"}) == bytearray()


def test_struct_given_as_dict_is_compared_with_its_defaults() -> None:
    base = {"max_wait_ms": 10, "min_bytes": 1, "topics": []}
    # replica_state exists from v15 only and is not ignorable; a dict restating its defaults
    # is as good as leaving it out, a dict with a real value is refused.
    same = FETCH.encode_request(14, {**base, "replica_state": {"replica_id": -1}})
    assert same == FETCH.encode_request(14, base)
    with pytest.raises(UnsupportedFieldError, match="replica_state"):
        FETCH.encode_request(14, {**base, "replica_state": {"replica_id": 5}})


def test_fields_named_like_codec_locals() -> None:
    odd: AnyApi = Api(
        9998,
        "OddNames",
        "0-1",
        "1+",
        request=[f("self", INT32), f("extra", STRING), f("out", INT64), f("value", INT32)],
        response=[f("o", INT32), f("r", STRING, nullable="0+"), f("n", array(INT32))],
    )
    req = odd.request_cls(self=1, extra="x", out=2, value=3)
    for v in (0, 1):
        assert odd.decode_request(v, odd.encode_request(v, req)) == req
        resp = odd.response_cls(o=1, r=None, n=[4, 5])
        assert odd.decode_response(v, odd.encode_response(v, resp)) == resp


def test_unknown_field_name_is_refused() -> None:
    with pytest.raises(UnsupportedFieldError, match="no field"):
        METADATA.encode_request(12, {"topics": None, "nope": 1})
    with pytest.raises(TypeError, match="nope"):
        METADATA.request_cls(nope=1)  # type: ignore[call-arg]


def test_null_outside_nullable_versions_is_refused() -> None:
    with pytest.raises(UnsupportedFieldError):
        METADATA.encode_request(0, {"topics": None})  # topics nullable from v1
    assert METADATA.decode_request(1, METADATA.encode_request(1, {"topics": None})).topics is None
    with pytest.raises(UnsupportedFieldError):
        METADATA.encode_request(9, {"topics": [{"name": None}]})  # name nullable from v10


def test_unknown_version_is_refused() -> None:
    with pytest.raises(UnsupportedFieldError, match="no version"):
        PRODUCE.encode_request(PRODUCE.max_version + 1, {})


@pytest.mark.parametrize(
    "body",
    [
        {"acks": 1 << 20, "timeout_ms": 1, "topic_data": []},  # int16 out of range
        {"acks": "1", "timeout_ms": 1, "topic_data": []},  # wrong type
        {"acks": 1, "timeout_ms": 1, "topic_data": [{"name": 5}]},
        {"acks": 1, "timeout_ms": 1, "topic_data": 7},
    ],
)
def test_bad_values_raise_a_typed_encode_error(body: dict[str, Any]) -> None:
    with pytest.raises(ProtocolEncodeError, match="ProduceRequest"):
        PRODUCE.encode_request(9, body)
