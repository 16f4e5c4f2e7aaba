"""Confluent's wire format and the subject-name strategies, without a registry: the frame,
Protobuf's message indexes (round trips, and the bytes confluent-kafka's own reader takes),
and what a malformed value raises."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_async.errors import ConfigError
from kafka_async.schema_registry import SerializationError, subject_name_strategy
from kafka_async.schema_registry.wire import (
    decode_message_indexes,
    encode_message_indexes,
    frame,
    split_frame,
)


@given(st.integers(0, 2**31 - 1), st.binary(max_size=64))
def test_frame_round_trip(schema_id: int, payload: bytes) -> None:
    data = frame(schema_id) + payload
    assert data[0] == 0
    assert int.from_bytes(data[1:5], "big") == schema_id
    got_id, got = split_frame(data)
    assert (got_id, bytes(got)) == (schema_id, payload)


@given(st.lists(st.integers(0, 10_000), min_size=1, max_size=6), st.binary(max_size=32))
def test_message_indexes_round_trip(indexes: list[int], body: bytes) -> None:
    got, rest = decode_message_indexes(memoryview(encode_message_indexes(indexes) + body))
    assert (got, bytes(rest)) == (indexes, body)


def test_message_indexes_golden_bytes() -> None:
    # [0] is the single byte 0; otherwise a zigzag-varint count then zigzag-varint indexes.
    assert encode_message_indexes([0]) == b"\x00"
    assert encode_message_indexes([1]) == b"\x02\x02"
    assert encode_message_indexes([1, 0]) == b"\x04\x02\x00"
    assert encode_message_indexes([0, 64]) == b"\x04\x00\x80\x01"


def test_malformed_values_are_serialization_errors() -> None:
    with pytest.raises(SerializationError, match="too short"):
        split_frame(b"\x00\x00")
    with pytest.raises(SerializationError, match="magic byte 1"):
        split_frame(b"\x01\x00\x00\x00\x01x")
    with pytest.raises(SerializationError, match="truncated"):
        decode_message_indexes(memoryview(b"\x04\x82"))


def test_subject_name_strategies() -> None:
    assert subject_name_strategy("topic")("orders", False, "a.B") == "orders-value"
    assert subject_name_strategy("topic")("orders", True, None) == "orders-key"
    assert subject_name_strategy("record")(None, False, "a.B") == "a.B"
    assert subject_name_strategy("topic_record")("orders", False, "a.B") == "orders-a.B"
    with pytest.raises(ConfigError):
        subject_name_strategy("topic")(None, False, "a.B")
    with pytest.raises(ConfigError):
        subject_name_strategy("record")("orders", False, None)
    with pytest.raises(ConfigError):
        subject_name_strategy("subject")


def test_schema_ids_and_guids_in_prefix_or_header_value() -> None:
    from kafka_async.schema_registry.wire import guid_header_value, read_schema_id

    guid = "8f14e45f-ceea-467a-9575-7f9c0c1b5d3a"
    value = guid_header_value(guid)
    assert value[:1] == b"\x01"
    assert len(value) == 17
    got, rest = read_schema_id(value + b"\x02\x02payload")
    assert (got, bytes(rest)) == (guid, b"\x02\x02payload")
    got, rest = read_schema_id(b"\x00\x00\x00\x00\x07abc")
    assert (got, bytes(rest)) == (7, b"abc")
    with pytest.raises(SerializationError, match="16-byte schema GUID"):
        read_schema_id(b"\x01" + bytes(8))
