"""Avro in Confluent's wire format, with fastavro.

    ser = AvroSerializer(registry, schema_str, topic="orders")
    producer = Producer(..., value_serializer=ser)   # await ser.prepare(): optional warm-up
    consumer = Consumer("orders", ..., value_deserializer=AvroDeserializer(registry))

Named types defined in other subjects are schema references
(``Schema(text, "AVRO", (SchemaReference("com.acme.Address", "address", 1),))``): the
referenced schemas are parsed first, so the referring schema can name them.
"""

from __future__ import annotations

import io
import json
from typing import Any

from .client import SchemaRegistryClient
from .errors import SchemaRegistryConfigError
from .schema import Schema
from .serde import RegistryDeserializer, RegistrySerializer
from .wire import SubjectNameStrategy

try:
    import fastavro
except ImportError as exc:  # pragma: no cover - the extra is missing
    raise ImportError(
        "kafka_async.schema_registry.avro needs fastavro: pip install "
        "'kafka-async-client[schema-registry]'"
    ) from exc

__all__ = ["AvroDeserializer", "AvroSerializer"]

_Parsed = Any  # fastavro's parsed schema (a dict or list)


def _as_schema(schema: Schema | str | None) -> Schema | None:
    if isinstance(schema, str):
        return Schema(schema, "AVRO")
    if schema is not None and schema.schema_type != "AVRO":
        raise SchemaRegistryConfigError(f"not an Avro schema: type {schema.schema_type}")
    return schema


def _full_name(doc: Any) -> str | None:
    """An Avro schema's full name (records, enums, fixed), or None for unnamed types."""
    if isinstance(doc, dict) and "name" in doc:
        name = str(doc["name"])
        ns = doc.get("namespace")
        return name if "." in name or not ns else f"{ns}.{name}"
    return None


def _parse_with(schema: Schema, named: dict[str, Any], fetched: list[Schema]) -> _Parsed:
    """Parse ``schema`` after the referenced schemas in ``fetched`` (depth-first order)."""
    for ref_schema in fetched:
        fastavro.parse_schema(json.loads(ref_schema.schema_str), named_schemas=named)
    return fastavro.parse_schema(json.loads(schema.schema_str), named_schemas=named)


class AvroSerializer(RegistrySerializer[_Parsed]):
    """Serializes dicts (or anything fastavro writes) with an Avro schema; see
    :class:`~kafka_async.schema_registry.serde.RegistrySerializer` for the options."""

    schema_type = "AVRO"

    def __init__(
        self,
        client: SchemaRegistryClient,
        schema: Schema | str | None = None,
        *,
        topic: str | None = None,
        is_key: bool = False,
        subject_name_strategy: str | SubjectNameStrategy = "topic",
        subject: str | None = None,
        auto_register: bool = True,
        use_latest_version: bool = False,
        normalize: bool = False,
        schema_id_in_header: bool = False,
    ) -> None:
        super().__init__(
            client,
            _as_schema(schema),
            topic=topic,
            is_key=is_key,
            subject_name_strategy=subject_name_strategy,
            subject=subject,
            auto_register=auto_register,
            use_latest_version=use_latest_version,
            normalize=normalize,
            schema_id_in_header=schema_id_in_header,
        )

    def _record_name(self, schema: Schema | None) -> str | None:
        if schema is None:
            return None
        return _full_name(json.loads(schema.schema_str))

    async def _parse(self, schema: Schema) -> _Parsed:
        fetched: list[Schema] = []

        async def walk(s: Schema) -> None:
            for ref in s.references:
                reg = await self._client.version(ref.subject, ref.version)
                await walk(reg.schema)
                fetched.append(reg.schema)

        await walk(schema)
        return _parse_with(schema, {}, fetched)

    def _encode(self, prefix: bytes, writer: _Parsed, value: Any) -> bytes:
        buf = io.BytesIO()
        buf.write(prefix)
        fastavro.schemaless_writer(buf, writer, value)
        return buf.getvalue()


class AvroDeserializer(RegistryDeserializer[tuple[_Parsed, _Parsed | None], Any]):
    """Decodes values written with any registered Avro schema (the writer schema comes from
    the value's id). ``reader_schema``: decode into this schema instead (Avro's schema
    resolution: added fields take their defaults, removed ones are dropped).
    ``return_record_name``: unions of records give ``(name, value)`` tuples."""

    def __init__(
        self,
        client: SchemaRegistryClient,
        reader_schema: Schema | str | None = None,
        *,
        return_record_name: bool = False,
    ) -> None:
        super().__init__(client)
        rs = _as_schema(reader_schema)
        self._reader_schema: _Parsed | None = (
            fastavro.parse_schema(json.loads(rs.schema_str)) if rs is not None else None
        )
        self._return_record_name = return_record_name

    def _parse_blocking(self, schema: Schema) -> tuple[_Parsed, _Parsed | None]:
        fetched: list[Schema] = []

        def walk(s: Schema) -> None:
            for ref in s.references:
                reg = self._client.version_blocking(ref.subject, ref.version)
                walk(reg.schema)
                fetched.append(reg.schema)

        walk(schema)
        return _parse_with(schema, {}, fetched), self._reader_schema

    def _decode(self, reader: tuple[_Parsed, _Parsed | None], payload: memoryview) -> Any:
        writer, read_as = reader
        return fastavro.schemaless_reader(
            io.BytesIO(payload),
            writer,
            read_as,
            return_record_name=self._return_record_name,
        )
