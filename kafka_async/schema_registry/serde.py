"""What every registry serializer and deserializer shares: choosing the subject, resolving
the schema id once (asynchronously, in :meth:`RegistrySerializer.prepare`), and caching
decoded writer schemas by id on the reading side.

Why ``prepare``: the producer calls ``value_serializer(value)`` synchronously, in the
``send``/``enqueue`` call, while the registry is reached over async HTTP. So a serializer
does its registry work once, ahead, in ``await serializer.prepare()`` (register or look up
the schema, or fetch the subject's latest version), and then frames every value with the
cached id without any I/O; a producer without serializers is untouched. A serializer called
before ``prepare`` raises :class:`~kafka_async.schema_registry.errors.SchemaRegistryConfigError`.

The consumer calls ``value_deserializer(data)`` synchronously too, but the ids it meets are
only known as records arrive: a deserializer decodes with its cache, and on a miss (the
first record of a new schema id) fetches that schema with one blocking request
(:meth:`~kafka_async.schema_registry.client.SchemaRegistryClient.schema_by_id_blocking`);
``await deserializer.prepare(subject, ...)`` fills the cache ahead for the subjects' versions.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Generic, TypeVar

from . import wire as _wire
from .client import SchemaRegistryClient
from .errors import SchemaRegistryConfigError, SchemaRegistryError, SerializationError
from .schema import RegisteredSchema, Schema
from .wire import SubjectNameStrategy, frame, split_frame

__all__ = ["RegistryDeserializer", "RegistrySerializer"]

T = TypeVar("T")
P = TypeVar("P")


class RegistrySerializer(ABC, Generic[P]):
    """Base of the registry serializers: ``await prepare()`` once, then call it like any
    ``value_serializer``/``key_serializer`` (``None`` stays ``None``, a tombstone).

    * ``topic``: the topic the serializer writes to (the ``topic`` and ``topic_record``
      strategies need it; the producer's serializer settings pass no topic).
    * ``is_key``: for ``key_serializer`` (the subject ends in ``-key``).
    * ``subject_name_strategy``: ``"topic"`` (default), ``"record"``, ``"topic_record"`` or a
      callable ``(topic, is_key, record_name) -> subject``; ``subject`` overrides it.
    * ``auto_register`` (True): register the schema if the subject lacks it; False: look it
      up and fail with :class:`~kafka_async.schema_registry.errors.SchemaNotFoundError`.
    * ``use_latest_version`` (False): write with the subject's latest version instead of the
      given schema (which may then be omitted, for Avro and JSON).
    * ``normalize`` (False): ask the registry to normalize the schema (``?normalize=true``).
    """

    schema_type: str = ""

    def __init__(
        self,
        client: SchemaRegistryClient,
        schema: Schema | None,
        *,
        topic: str | None = None,
        is_key: bool = False,
        subject_name_strategy: str | SubjectNameStrategy = "topic",
        subject: str | None = None,
        auto_register: bool = True,
        use_latest_version: bool = False,
        normalize: bool = False,
    ) -> None:
        if schema is None and not use_latest_version:
            raise SchemaRegistryConfigError(
                f"a {type(self).__name__} needs a schema unless use_latest_version=True"
            )
        self._client = client
        self._schema = schema
        self._topic = topic
        self._is_key = is_key
        self._strategy = _wire.subject_name_strategy(subject_name_strategy)
        self._subject_given = subject
        self._auto_register = auto_register
        self._use_latest = use_latest_version
        self._normalize = normalize
        #: Set by prepare(): the registered schema the values are written with.
        self.registered: RegisteredSchema | None = None
        self._prefix: bytes | None = None
        self._writer: P | None = None

    def __repr__(self) -> str:
        state = (
            f"subject={self.registered.subject!r} id={self.registered.schema_id}"
            if self.registered is not None
            else "not prepared"
        )
        return f"<{type(self).__name__} {state}>"

    @abstractmethod
    def _record_name(self, schema: Schema | None) -> str | None:
        """The schema's record name for the record strategies (None if it has none)."""

    @abstractmethod
    async def _parse(self, schema: Schema) -> P:
        """The format's parsed writer schema (references resolved through the client)."""

    @abstractmethod
    def _encode(self, prefix: bytes, writer: P, value: Any) -> bytes:
        """The framed value."""

    @property
    def subject(self) -> str:
        """The subject this serializer writes under (its strategy applied)."""
        if self._subject_given is not None:
            return self._subject_given
        return self._strategy(self._topic, self._is_key, self._record_name(self._schema))

    async def _register_references(self, schema: Schema) -> Schema:
        """Hook: register what the schema refers to (Protobuf's imports); default none."""
        return schema

    async def prepare(self) -> RegisteredSchema:
        """Resolve the schema id (register, look up, or take the latest version) and parse
        the writer schema; idempotent. Raises the registry's typed error, e.g.
        :class:`~kafka_async.schema_registry.errors.IncompatibleSchemaError` when
        registration breaks the subject's compatibility rule."""
        if self.registered is not None:
            return self.registered
        subject = self.subject
        if self._use_latest:
            reg = await self._client.latest_version(subject)
        else:
            assert self._schema is not None
            schema = await self._register_references(self._schema)
            if self._auto_register:
                schema_id = await self._client.register(subject, schema, normalize=self._normalize)
                # The register answer has the id only; the lookup adds the version.
                found = await self._client.lookup(subject, schema, normalize=self._normalize)
                reg = RegisteredSchema(schema_id, subject, found.version, schema)
            else:
                try:
                    reg = await self._client.lookup(subject, schema, normalize=self._normalize)
                except SchemaRegistryError as exc:
                    raise type(exc)(
                        f"{exc} (auto_register is off: register the schema under "
                        f"{subject!r} first)",
                        status=exc.status,
                        error_code=exc.error_code,
                        subject=subject,
                    ) from exc
                reg = RegisteredSchema(reg.schema_id, subject, reg.version, schema)
        self._writer = await self._parse(reg.schema)
        self._prefix = frame(reg.schema_id)
        self.registered = reg
        return reg

    def __call__(self, value: Any) -> bytes | None:
        """The value in Confluent's wire format (None stays None)."""
        if value is None:
            return None
        prefix = self._prefix
        if prefix is None:
            raise SchemaRegistryConfigError(
                f"{type(self).__name__} for subject {self.subject!r} is not prepared: "
                "await serializer.prepare() before producing"
            )
        try:
            return self._encode(prefix, self._writer, value)  # type: ignore[arg-type]
        except SerializationError:
            raise
        except Exception as exc:
            raise SerializationError(
                f"cannot serialize {type(value).__name__} with schema id "
                f"{self.registered.schema_id if self.registered else '?'} "
                f"(subject {self.subject!r}): {type(exc).__name__}: {exc}"
            ) from exc


class RegistryDeserializer(ABC, Generic[P, T]):
    """Base of the registry deserializers: plug one into ``value_deserializer`` /
    ``key_deserializer``. It reads the schema id of each value, decodes with the writer
    schema of that id (cached; a miss costs one blocking request), and raises
    :class:`~kafka_async.schema_registry.errors.SerializationError` for a value it cannot
    read, which the consumer hands out as
    :class:`~kafka_async.errors.RecordDeserializationError` naming topic, partition and
    offset."""

    def __init__(self, client: SchemaRegistryClient) -> None:
        self._client = client
        self._readers: dict[int, P] = {}

    @abstractmethod
    def _parse_blocking(self, schema: Schema) -> P:
        """The format's decoder for one writer schema (references fetched synchronously)."""

    @abstractmethod
    def _decode(self, reader: P, payload: memoryview) -> T:
        """The value."""

    async def prepare(self, *subjects: str) -> None:
        """Fetch every version of these subjects into the cache, so no record of theirs
        costs a blocking request later."""
        for subject in subjects:
            for v in await self._client.versions(subject):
                reg = await self._client.version(subject, v)
                await self.fetch(reg.schema_id)

    async def fetch(self, schema_id: int) -> None:
        """Put the writer schema of ``schema_id`` (and what it references) into the cache."""
        schema = await self._client.schema_by_id(schema_id)
        for ref in schema.references:
            await self._client.version(ref.subject, ref.version)
        if schema_id not in self._readers:
            self._readers[schema_id] = self._parse_blocking(schema)

    def _reader(self, schema_id: int) -> P:
        reader = self._readers.get(schema_id)
        if reader is None:
            try:
                schema = self._client.schema_by_id_blocking(schema_id)
            except SchemaRegistryError as exc:
                raise SerializationError(f"schema id {schema_id}: {exc}") from exc
            reader = self._readers[schema_id] = self._parse_blocking(schema)
        return reader

    def __call__(self, data: bytes | None) -> T | None:
        """The decoded value (None stays None)."""
        if data is None:
            return None
        schema_id, payload = split_frame(data)
        reader = self._reader(schema_id)
        try:
            return self._decode(reader, payload)
        except SerializationError:
            raise
        except Exception as exc:
            raise SerializationError(
                f"cannot deserialize {len(data)} bytes with schema id {schema_id}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
