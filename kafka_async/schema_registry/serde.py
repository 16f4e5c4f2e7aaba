"""What every registry serializer and deserializer shares: choosing the subject, resolving
the schema id (asynchronously, never blocking the event loop), and caching decoded writer
schemas by id on the reading side.

The producer calls ``value_serializer(value)`` synchronously, in the ``send``/``enqueue``
call, while the registry is reached over async HTTP. A serializer that has no schema id yet
raises :class:`~kafka_async.serialization.NeedsResolution`; the producer awaits its
``resolve`` (register or look up the schema, or fetch the subject's latest version, bounded
by ``max_block_ms``) and calls the serializer again, which then frames every value with the
cached id without any I/O. ``await serializer.prepare()`` does the same ahead, as an optional
warm-up (and surfaces a registry error before the first record). A producer without
serializers is untouched.

The consumer calls ``value_deserializer(data)`` synchronously too, and the ids it meets are
only known as records arrive: a deserializer decodes with its cache, and on a miss (the
first record of a new schema id) raises :class:`~kafka_async.serialization.NeedsResolution`;
the consumer awaits the fetch of that schema (and what it references) and deserializes the
same record again, its position unchanged. ``await deserializer.prepare(subject, ...)`` fills
the cache ahead for the subjects' versions (optional). Code without an event loop (the
Spark functions) calls :meth:`RegistryDeserializer.decode_blocking`, which fetches a miss with
a blocking request.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

import anyio

from kafka_async.serialization import NeedsResolution

from . import wire as _wire
from .client import SchemaRegistryClient
from .errors import (
    RegistryUnavailableError,
    SchemaRegistryConfigError,
    SchemaRegistryError,
    SerializationError,
)
from .schema import RegisteredSchema, Schema
from .wire import SubjectNameStrategy, frame, split_frame

__all__ = ["RegistryDeserializer", "RegistrySerializer"]

T = TypeVar("T")
P = TypeVar("P")


async def _within(timeout_s: float, what: str, work: Callable[[], Awaitable[object]]) -> None:
    """``work()`` within ``timeout_s`` seconds, else the registry's typed timeout error."""
    with anyio.move_on_after(timeout_s) as scope:
        await work()
    if scope.cancelled_caught:
        raise RegistryUnavailableError(
            f"schema registry: {what} not resolved within {timeout_s:g} s (no answer in time)"
        )


class RegistrySerializer(ABC, Generic[P]):
    """Base of the registry serializers: plug one into ``value_serializer`` /
    ``key_serializer`` (``None`` stays ``None``, a tombstone). The first call raises
    :class:`~kafka_async.serialization.NeedsResolution` (the producer resolves the schema id
    and calls again); ``await prepare()`` resolves it ahead instead (optional).

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
        self._lock: anyio.Lock | None = None

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
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:  # concurrent sends resolve once
            done = self.registered  # another task may have resolved it meanwhile
            return done if done is not None else await self._prepare()

    async def _prepare(self) -> RegisteredSchema:
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
            raise NeedsResolution(
                f"{type(self).__name__} for subject {self.subject!r}: no schema id yet",
                self._resolve,
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

    async def _resolve(self, timeout_s: float) -> None:
        """:class:`~kafka_async.serialization.NeedsResolution`'s work: :meth:`prepare`."""
        await _within(timeout_s, f"the schema id of subject {self.subject!r}", self.prepare)


class RegistryDeserializer(ABC, Generic[P, T]):
    """Base of the registry deserializers: plug one into ``value_deserializer`` /
    ``key_deserializer``. It reads the schema id of each value, decodes with the writer
    schema of that id (cached; on a miss it raises
    :class:`~kafka_async.serialization.NeedsResolution`, and the consumer awaits the fetch
    and deserializes the record again), and raises
    :class:`~kafka_async.schema_registry.errors.SerializationError` for a value it cannot
    read, which the consumer hands out as
    :class:`~kafka_async.errors.RecordDeserializationError` naming topic, partition and
    offset."""

    def __init__(self, client: SchemaRegistryClient) -> None:
        self._client = client
        self._readers: dict[int, P] = {}

    @abstractmethod
    def _parse_blocking(self, schema: Schema) -> P:
        """The format's decoder for one writer schema; its references come from the client's
        cache (:meth:`fetch` fills it first), else from a blocking request (only
        :meth:`decode_blocking`, outside any event loop, gets there)."""

    @abstractmethod
    def _decode(self, reader: P, payload: memoryview) -> T:
        """The value."""

    async def prepare(self, *subjects: str) -> None:
        """Fetch every version of these subjects into the cache ahead (optional: a record of
        an id not cached is resolved by the consumer when it comes)."""
        for subject in subjects:
            for v in await self._client.versions(subject):
                reg = await self._client.version(subject, v)
                await self.fetch(reg.schema_id)

    async def fetch(self, schema_id: int) -> None:
        """Put the writer schema of ``schema_id`` (and what it references, transitively)
        into the cache."""
        if schema_id in self._readers:
            return
        schema = await self._client.schema_by_id(schema_id)

        async def walk(s: Schema) -> None:
            for ref in s.references:
                reg = await self._client.version(ref.subject, ref.version)
                await walk(reg.schema)

        await walk(schema)
        if schema_id not in self._readers:
            self._readers[schema_id] = self._parse_blocking(schema)

    def _reader(self, schema_id: int) -> P:
        reader = self._readers.get(schema_id)
        if reader is None:
            raise NeedsResolution(
                f"schema id {schema_id}",
                lambda timeout_s: _within(
                    timeout_s, f"schema id {schema_id}", lambda: self.fetch(schema_id)
                ),
            )
        return reader

    def _fetch_blocking(self, schema_id: int) -> None:
        """:meth:`fetch` with blocking requests (for :meth:`decode_blocking`)."""
        try:
            schema = self._client.schema_by_id_blocking(schema_id)
            if schema_id not in self._readers:
                self._readers[schema_id] = self._parse_blocking(schema)
        except SchemaRegistryError as exc:
            raise SerializationError(f"schema id {schema_id}: {exc}") from exc

    def decode_blocking(self, data: bytes | None) -> T | None:
        """The decoded value, for synchronous code that runs no event loop (the Spark
        functions): a schema id not cached yet is fetched with a blocking request. Never
        call it on an event loop (the consumer calls the deserializer itself)."""
        try:
            return self(data)
        except NeedsResolution:
            assert data is not None
            self._fetch_blocking(split_frame(data)[0])
            return self(data)

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
