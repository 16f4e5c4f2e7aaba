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

from abc import abstractmethod
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

import anyio

from kafka_async.serialization import (
    Deserializer,
    MessageField,
    NeedsResolution,
    SerializationContext,
    Serializer,
)

from . import wire as _wire
from .client import SchemaRegistryClient
from .errors import (
    RegistryUnavailableError,
    SchemaRegistryConfigError,
    SchemaRegistryError,
    SerializationError,
)
from .schema import RegisteredSchema, Schema
from .wire import SubjectNameStrategy, frame

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


class _Target:
    """What a serializer writes one (topic, key-or-value) with, once resolved."""

    __slots__ = ("header", "prefix", "registered", "writer")

    def __init__(
        self, registered: RegisteredSchema, writer: Any, prefix: bytes, header: bytes | None
    ) -> None:
        self.registered = registered
        self.writer = writer
        #: Written before the payload (the 5-byte frame, and Protobuf's message indexes).
        self.prefix = prefix
        #: The schema-id header's value in the header-carried format, else None.
        self.header = header


class RegistrySerializer(Serializer, Generic[P]):
    """Base of the registry serializers: plug one into ``value_serializer`` /
    ``key_serializer`` (``None`` stays ``None``, a tombstone). A context-aware
    :class:`~kafka_async.serialization.Serializer`: the producer passes each record's topic,
    key or value, and headers, so one serializer serves every topic (with the ``topic``
    strategy, a subject per topic: ``orders-value``, ``refunds-value``). The first record of
    a topic raises :class:`~kafka_async.serialization.NeedsResolution` (the producer
    resolves the schema id and calls again); ``await prepare(topic)`` resolves it ahead
    instead (optional).

    * ``topic``: the topic when the serializer is called without a context
      (``serializer(value)``, e.g. outside a producer); a record's own topic wins.
    * ``is_key``: likewise, key or value without a context.
    * ``subject_name_strategy``: ``"topic"`` (default), ``"record"``, ``"topic_record"`` or a
      callable ``(topic, is_key, record_name) -> subject``; ``subject`` overrides it.
    * ``auto_register`` (True): register the schema if the subject lacks it; False: look it
      up and fail with :class:`~kafka_async.schema_registry.errors.SchemaNotFoundError`.
    * ``use_latest_version`` (False): write with the subject's latest version instead of the
      given schema (which may then be omitted, for Avro and JSON).
    * ``normalize`` (False): ask the registry to normalize the schema (``?normalize=true``).
    * ``schema_id_in_header`` (False): write the schema's GUID in the record header
      ``__value_schema_id`` / ``__key_schema_id`` and the bare payload as the value
      (confluent-kafka 2.11+'s header format; needs a registry that gives GUIDs, Confluent
      Schema Registry 8+); False: Confluent's prefix (magic byte 0 and the 4-byte id).
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
        schema_id_in_header: bool = False,
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
        self._in_header = schema_id_in_header
        #: (topic, is_key) -> what its records are written with, once resolved.
        self._targets: dict[tuple[str | None, bool], _Target] = {}
        #: subject -> the same, shared by the targets of one subject.
        self._by_subject: dict[str, _Target] = {}
        self._lock: anyio.Lock | None = None

    def __repr__(self) -> str:
        done = ", ".join(
            f"{t.registered.subject}={t.registered.schema_id}" for t in self._by_subject.values()
        )
        return f"<{type(self).__name__} {done or 'not prepared'}>"

    @property
    def registered(self) -> RegisteredSchema | None:
        """The registered schema of the serializer's own ``topic``/``is_key`` once resolved
        (None before)."""
        t = self._targets.get((self._topic, self._is_key))
        return t.registered if t is not None else None

    @abstractmethod
    def _record_name(self, schema: Schema | None) -> str | None:
        """The schema's record name for the record strategies (None if it has none)."""

    @abstractmethod
    async def _parse(self, schema: Schema) -> P:
        """The format's parsed writer schema (references resolved through the client)."""

    @abstractmethod
    def _encode(self, prefix: bytes, writer: P, value: Any) -> bytes:
        """The framed value (``prefix`` then the payload)."""

    def _payload_prefix(self, writer: P) -> bytes:
        """Hook: bytes that follow the schema id (Protobuf's message indexes); default none."""
        return b""

    def subject_for(self, topic: str | None, is_key: bool) -> str:
        """The subject records of ``topic`` (key or value) are written under."""
        if self._subject_given is not None:
            return self._subject_given
        return self._strategy(topic, is_key, self._record_name(self._schema))

    @property
    def subject(self) -> str:
        """The subject of the serializer's own ``topic``/``is_key`` (its strategy applied)."""
        return self.subject_for(self._topic, self._is_key)

    async def _register_references(self, schema: Schema) -> Schema:
        """Hook: register what the schema refers to (Protobuf's imports); default none."""
        return schema

    async def prepare(
        self, topic: str | None = None, *, is_key: bool | None = None
    ) -> RegisteredSchema:
        """Resolve the schema id for records of ``topic`` (default: the serializer's own
        ``topic``) as key or value (default: its ``is_key``): register, look up, or take the
        latest version, and parse the writer schema; idempotent. Raises the registry's typed
        error, e.g. :class:`~kafka_async.schema_registry.errors.IncompatibleSchemaError` when
        registration breaks the subject's compatibility rule."""
        key = (
            topic if topic is not None else self._topic,
            self._is_key if is_key is None else is_key,
        )
        t = self._targets.get(key)
        if t is not None:
            return t.registered
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:  # concurrent sends resolve once
            t = self._targets.get(key)  # another task may have resolved it meanwhile
            if t is None:
                subject = self.subject_for(*key)
                t = self._by_subject.get(subject)
                if t is None:
                    t = self._by_subject[subject] = await self._prepare(subject)
                self._targets[key] = t
            return t.registered

    async def _prepare(self, subject: str) -> _Target:
        if self._use_latest:
            reg = await self._client.latest_version(subject)
        else:
            assert self._schema is not None
            schema = await self._register_references(self._schema)
            if self._auto_register:
                await self._client.register(subject, schema, normalize=self._normalize)
            try:
                # The register answer has the id only; the lookup adds version and GUID.
                found = await self._client.lookup(subject, schema, normalize=self._normalize)
            except SchemaRegistryError as exc:
                if self._auto_register:
                    raise
                raise type(exc)(
                    f"{exc} (auto_register is off: register the schema under {subject!r} first)",
                    status=exc.status,
                    error_code=exc.error_code,
                    subject=subject,
                ) from exc
            reg = RegisteredSchema(found.schema_id, subject, found.version, schema, found.guid)
        writer = await self._parse(reg.schema)
        extra = self._payload_prefix(writer)
        if self._in_header:
            if reg.guid is None:
                raise SchemaRegistryConfigError(
                    f"schema_id_in_header needs the schema's GUID, and the registry gave none "
                    f"for subject {subject!r} (GUIDs come with Confluent Schema Registry 8+)"
                )
            return _Target(reg, writer, b"", _wire.guid_header_value(reg.guid) + extra)
        return _Target(reg, writer, frame(reg.schema_id) + extra, None)

    def serialize(self, obj: Any, ctx: SerializationContext | None) -> bytes | None:
        """The value in Confluent's wire format (None stays None); with
        ``schema_id_in_header`` the bare payload, and the schema-id header appended to
        ``ctx.headers``."""
        if obj is None:
            return None
        if ctx is None:
            key = (self._topic, self._is_key)
        else:
            key = (ctx.topic, ctx.field is MessageField.KEY)
        t = self._targets.get(key)
        if t is None:
            subject = self.subject_for(*key)
            t = self._by_subject.get(subject)
            if t is None:
                raise NeedsResolution(
                    f"{type(self).__name__} for subject {subject!r}: no schema id yet",
                    lambda timeout_s: _within(
                        timeout_s,
                        f"the schema id of subject {subject!r}",
                        lambda: self.prepare(key[0], is_key=key[1]),
                    ),
                )
            self._targets[key] = t
        header = t.header
        if header is not None:
            if ctx is None or ctx.headers is None:
                raise SerializationError(
                    "schema_id_in_header: the schema id goes in a record header, and this "
                    "call has none (give the serializer to a producer)"
                )
            ctx.headers.append(
                (
                    _wire.KEY_SCHEMA_ID_HEADER if key[1] else _wire.VALUE_SCHEMA_ID_HEADER,
                    header,
                )
            )
        try:
            return self._encode(t.prefix, t.writer, obj)
        except SerializationError:
            raise
        except Exception as exc:
            raise SerializationError(
                f"cannot serialize {type(obj).__name__} with schema id "
                f"{t.registered.schema_id} (subject {t.registered.subject!r}): "
                f"{type(exc).__name__}: {exc}"
            ) from exc

    def __call__(self, value: Any) -> bytes | None:
        """:meth:`serialize` without a context: the serializer's own ``topic``/``is_key``."""
        return self.serialize(value, None)


class RegistryDeserializer(Deserializer, Generic[P, T]):
    """Base of the registry deserializers: plug one into ``value_deserializer`` /
    ``key_deserializer``. A context-aware :class:`~kafka_async.serialization.Deserializer`:
    it takes the schema from the record's ``__value_schema_id`` / ``__key_schema_id`` header
    when there is one (a GUID, the header-carried format), else from the value's prefix (a
    4-byte id, or a GUID after magic byte 1). It decodes with the writer schema of that id
    (cached; on a miss it raises :class:`~kafka_async.serialization.NeedsResolution`, and
    the consumer awaits the fetch and deserializes the record again), and raises
    :class:`~kafka_async.schema_registry.errors.SerializationError` for a value it cannot
    read, which the consumer hands out as
    :class:`~kafka_async.errors.RecordDeserializationError` naming topic, partition and
    offset."""

    def __init__(self, client: SchemaRegistryClient) -> None:
        self._client = client
        #: schema id (int) or GUID (str) -> the format's decoder.
        self._readers: dict[int | str, P] = {}

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

    async def fetch(self, schema_id: int | str) -> None:
        """Put the writer schema of ``schema_id`` (an id, or a GUID string) and what it
        references, transitively, into the cache."""
        if schema_id in self._readers:
            return
        if isinstance(schema_id, str):
            schema = await self._client.schema_by_guid(schema_id)
        else:
            schema = await self._client.schema_by_id(schema_id)

        async def walk(s: Schema) -> None:
            for ref in s.references:
                reg = await self._client.version(ref.subject, ref.version)
                await walk(reg.schema)

        await walk(schema)
        if schema_id not in self._readers:
            self._readers[schema_id] = self._parse_blocking(schema)

    def _reader(self, schema_id: int | str) -> P:
        reader = self._readers.get(schema_id)
        if reader is None:
            what = f"schema {'GUID' if isinstance(schema_id, str) else 'id'} {schema_id}"
            raise NeedsResolution(
                what,
                lambda timeout_s: _within(timeout_s, what, lambda: self.fetch(schema_id)),
            )
        return reader

    def _fetch_blocking(self, schema_id: int | str) -> None:
        """:meth:`fetch` with blocking requests (for :meth:`decode_blocking`)."""
        try:
            if isinstance(schema_id, str):
                schema = self._client.schema_by_guid_blocking(schema_id)
            else:
                schema = self._client.schema_by_id_blocking(schema_id)
            if schema_id not in self._readers:
                self._readers[schema_id] = self._parse_blocking(schema)
        except SchemaRegistryError as exc:
            raise SerializationError(f"schema id {schema_id}: {exc}") from exc

    def decode_blocking(
        self, data: bytes | None, ctx: SerializationContext | None = None
    ) -> T | None:
        """The decoded value, for synchronous code that runs no event loop (the Spark
        functions): a schema id not cached yet is fetched with a blocking request. Never
        call it on an event loop (the consumer calls the deserializer itself)."""
        try:
            return self.deserialize(data, ctx)
        except NeedsResolution:
            assert data is not None
            self._fetch_blocking(self._locate(data, ctx)[0])
            return self.deserialize(data, ctx)

    @staticmethod
    def _locate(data: bytes, ctx: SerializationContext | None) -> tuple[int | str, memoryview]:
        """``(schema id or GUID, payload)``: from the record's schema-id header if it has
        one (the payload is then the whole value, after any Protobuf message indexes the
        header carries), else from the value's prefix."""
        if ctx is not None and ctx.headers:
            name = (
                _wire.KEY_SCHEMA_ID_HEADER
                if ctx.field is MessageField.KEY
                else _wire.VALUE_SCHEMA_ID_HEADER
            )
            for h, v in ctx.headers:
                if h == name and v is not None:
                    schema_id, rest = _wire.read_schema_id(v)
                    return schema_id, memoryview(bytes(rest) + data) if rest else memoryview(data)
        return _wire.read_schema_id(data)

    def deserialize(self, data: bytes | None, ctx: SerializationContext | None) -> T | None:
        """The decoded value (None stays None)."""
        if data is None:
            return None
        schema_id, payload = self._locate(data, ctx)
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

    def __call__(self, data: bytes | None) -> T | None:
        """:meth:`deserialize` without a context (the id from the value's prefix)."""
        return self.deserialize(data, None)
