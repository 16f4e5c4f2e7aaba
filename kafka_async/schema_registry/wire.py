"""Confluent's wire format and the subject-name strategies.

A value written by a registry-aware serializer is ``0x00`` (the magic byte), the schema id
as 4 bytes big-endian, then the payload (Avro binary, JSON text, or, for Protobuf, the
message indexes followed by the message bytes). Protobuf's message indexes say which message
of the schema's file the payload is: the path of indexes from the file's top-level messages
down through nested ones, written as a zigzag-varint count then each index, except the
common ``[0]`` (the file's first message), written as the single byte ``0x00``.

Confluent's newer format (confluent-kafka 2.11+, Schema Registry 8) carries the schema's
GUID in a record header instead: ``__value_schema_id`` (``__key_schema_id`` for keys) holds
magic byte 1 and the GUID's 16 bytes (for Protobuf followed by the message indexes), and the
value is the bare payload. Readers look for the header first and fall back to the prefix,
which may itself be magic byte 1 and a GUID.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable, Sequence

from .errors import SchemaRegistryConfigError, SerializationError

__all__ = [
    "KEY_SCHEMA_ID_HEADER",
    "MAGIC_BYTE",
    "MAGIC_BYTE_GUID",
    "VALUE_SCHEMA_ID_HEADER",
    "SubjectNameStrategy",
    "decode_message_indexes",
    "encode_message_indexes",
    "frame",
    "guid_header_value",
    "read_schema_id",
    "record_subject_name",
    "split_frame",
    "subject_name_strategy",
    "topic_record_subject_name",
    "topic_subject_name",
]

MAGIC_BYTE = 0
#: The magic byte of a GUID (16 bytes) instead of a 4-byte id.
MAGIC_BYTE_GUID = 1
#: The record headers of the header-carried format.
KEY_SCHEMA_ID_HEADER = "__key_schema_id"
VALUE_SCHEMA_ID_HEADER = "__value_schema_id"
_HEADER = struct.Struct(">bI")


def guid_header_value(guid: str) -> bytes:
    """Magic byte 1 and the GUID's 16 bytes (the header's value, before any Protobuf
    message indexes)."""
    return bytes((MAGIC_BYTE_GUID,)) + uuid.UUID(guid).bytes


def read_schema_id(data: bytes | bytearray | memoryview) -> tuple[int | str, memoryview]:
    """``(schema id or GUID string, what follows)`` of a prefix or header value: magic byte
    0 and a 4-byte id, or magic byte 1 and a 16-byte GUID; raises
    :class:`~kafka_async.schema_registry.errors.SerializationError` for anything else."""
    if len(data) >= 1 and data[0] == MAGIC_BYTE_GUID:
        if len(data) < 17:
            raise SerializationError(
                f"{len(data)} bytes are too short for magic byte 1 and a 16-byte schema GUID"
            )
        return str(uuid.UUID(bytes=bytes(data[1:17]))), memoryview(data)[17:]
    return split_frame(data)


#: ``(topic, is_key, record_name) -> subject``; record_name is None when the schema has none.
SubjectNameStrategy = Callable[[str | None, bool, str | None], str]


def frame(schema_id: int) -> bytes:
    """The 5-byte prefix of a value written with schema ``schema_id``."""
    return _HEADER.pack(MAGIC_BYTE, schema_id)


def split_frame(data: bytes | bytearray | memoryview) -> tuple[int, memoryview]:
    """``(schema_id, payload)`` of a value in Confluent's wire format; raises
    :class:`~kafka_async.schema_registry.errors.SerializationError` for anything else."""
    if len(data) < 5:
        raise SerializationError(
            f"{len(data)} bytes are too short for Confluent's wire format (magic byte and "
            "4-byte schema id)"
        )
    magic, schema_id = _HEADER.unpack_from(data)
    if magic != MAGIC_BYTE:
        raise SerializationError(
            f"unknown magic byte {magic} (Confluent's wire format starts with {MAGIC_BYTE}): "
            "not a value written by a schema-registry serializer"
        )
    return schema_id, memoryview(data)[5:]


def _zigzag_varint(n: int, out: bytearray) -> None:
    z = (n << 1) ^ (n >> 63)
    while z > 0x7F:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)


def encode_message_indexes(indexes: Sequence[int]) -> bytes:
    """Protobuf's message-index prefix (``[0]`` is the single byte 0)."""
    if list(indexes) == [0]:
        return b"\x00"
    out = bytearray()
    _zigzag_varint(len(indexes), out)
    for i in indexes:
        _zigzag_varint(i, out)
    return bytes(out)


def _read_zigzag(data: memoryview, pos: int) -> tuple[int, int]:
    shift = 0
    z = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise SerializationError("truncated Protobuf message indexes")
        b = data[pos]
        pos += 1
        z |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
    return (z >> 1) ^ -(z & 1), pos


def decode_message_indexes(data: memoryview) -> tuple[list[int], memoryview]:
    """``(indexes, message bytes)`` of a Protobuf payload (after the 5-byte frame)."""
    count, pos = _read_zigzag(data, 0)
    if count == 0:
        return [0], data[pos:]
    if count < 0 or count > len(data):
        raise SerializationError(f"bad Protobuf message index count {count}")
    indexes = []
    for _ in range(count):
        i, pos = _read_zigzag(data, pos)
        indexes.append(i)
    return indexes, data[pos:]


def topic_subject_name(topic: str | None, is_key: bool, record_name: str | None) -> str:
    """``<topic>-key`` / ``<topic>-value`` (Confluent's default, ``TopicNameStrategy``)."""
    if topic is None:
        raise SchemaRegistryConfigError("the topic subject-name strategy needs a topic")
    return f"{topic}-{'key' if is_key else 'value'}"


def record_subject_name(topic: str | None, is_key: bool, record_name: str | None) -> str:
    """The record's full name (``RecordNameStrategy``)."""
    if not record_name:
        raise SchemaRegistryConfigError(
            "the record subject-name strategy needs a named schema (an Avro record, a JSON "
            "Schema with a title, a Protobuf message)"
        )
    return record_name


def topic_record_subject_name(topic: str | None, is_key: bool, record_name: str | None) -> str:
    """``<topic>-<record full name>`` (``TopicRecordNameStrategy``)."""
    if topic is None:
        raise SchemaRegistryConfigError("the topic-record subject-name strategy needs a topic")
    return f"{topic}-{record_subject_name(topic, is_key, record_name)}"


_STRATEGIES: dict[str, SubjectNameStrategy] = {
    "topic": topic_subject_name,
    "record": record_subject_name,
    "topic_record": topic_record_subject_name,
    "topic-record": topic_record_subject_name,
}


def subject_name_strategy(name: str | SubjectNameStrategy) -> SubjectNameStrategy:
    """A strategy by name (``"topic"``, ``"record"``, ``"topic_record"``) or the callable
    itself."""
    if callable(name):
        return name
    try:
        return _STRATEGIES[name]
    except KeyError:
        raise SchemaRegistryConfigError(
            f"subject_name_strategy must be 'topic', 'record' or 'topic_record' (or a "
            f"callable), got {name!r}"
        ) from None
