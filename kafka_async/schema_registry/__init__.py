"""Schema Registry serializers (extra ``schema-registry``): an async client of Confluent's
Schema Registry REST API, and Avro, JSON Schema and Protobuf serializers and deserializers in
Confluent's wire format that plug into the producer's ``value_serializer``/``key_serializer``
and the consumer's ``value_deserializer``/``key_deserializer``::

    from kafka_async.schema_registry import SchemaRegistryClient
    from kafka_async.schema_registry.avro import AvroSerializer, AvroDeserializer

    async with SchemaRegistryClient("http://127.0.0.1:8081") as registry:
        ser = AvroSerializer(registry, schema_text, topic="orders")
        async with Producer(bootstrap_servers=..., value_serializer=ser) as producer:
            await producer.send("orders", {"id": 1})  # registers the schema id, once

No ``prepare()`` is needed: a serializer or deserializer that needs the registry (a schema id
not cached yet) raises :class:`kafka_async.serialization.NeedsResolution`, and the producer
or consumer awaits that I/O and calls it again; nothing blocks the event loop.
``await ser.prepare()`` does it ahead, optionally.

The format modules (``avro``, ``json_schema``, ``protobuf``) import fastavro, jsonschema and
protobuf; this package's top level needs only httpx. See docs/guides/schema-registry.md.
"""

from __future__ import annotations

from .client import COMPATIBILITY_LEVELS, SchemaRegistryClient
from .errors import (
    IncompatibleSchemaError,
    InvalidSchemaError,
    RegistryAuthError,
    RegistryUnavailableError,
    SchemaNotFoundError,
    SchemaRegistryConfigError,
    SchemaRegistryError,
    SerializationError,
    SubjectNotFoundError,
    VersionNotFoundError,
)
from .schema import RegisteredSchema, Schema, SchemaReference
from .serde import RegistryDeserializer, RegistrySerializer
from .wire import (
    record_subject_name,
    subject_name_strategy,
    topic_record_subject_name,
    topic_subject_name,
)

__all__ = [
    "COMPATIBILITY_LEVELS",
    "IncompatibleSchemaError",
    "InvalidSchemaError",
    "RegisteredSchema",
    "RegistryAuthError",
    "RegistryDeserializer",
    "RegistrySerializer",
    "RegistryUnavailableError",
    "Schema",
    "SchemaNotFoundError",
    "SchemaReference",
    "SchemaRegistryClient",
    "SchemaRegistryConfigError",
    "SchemaRegistryError",
    "SerializationError",
    "SubjectNotFoundError",
    "VersionNotFoundError",
    "record_subject_name",
    "subject_name_strategy",
    "topic_record_subject_name",
    "topic_subject_name",
]
