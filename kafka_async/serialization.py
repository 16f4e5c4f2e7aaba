"""What a serializer or deserializer raises when it needs I/O before it can answer.

The producer calls ``key_serializer``/``value_serializer`` and the consumer calls
``key_deserializer``/``value_deserializer`` synchronously, per record: that keeps the
plain-bytes path free of coroutines. A serializer that must first ask a server (a schema
registry: the id of a schema not cached yet) cannot do so synchronously without blocking the
event loop, so it raises :class:`NeedsResolution` instead, carrying the async work to do.

* The producer's ``send``/``enqueue``/``produce``/``enqueue_many`` catch it, ``await
  exc.resolve(timeout_s)`` (bounded by ``max_block_ms``) and call the serializer again,
  once. A failed resolution raises the resolver's own typed error (for the registry
  serializers a :class:`~kafka_async.schema_registry.errors.SchemaRegistryError`).
* The consumer's ``getmany``/``getone``/``async for`` catch it on the record being
  deserialized, await the resolution (bounded by ``default_api_timeout_ms``) and deserialize
  the same record again; positions do not move meanwhile. A failed resolution is a
  :class:`~kafka_async.errors.RecordDeserializationError` naming the record, with the
  resolver's error as ``cause``; the next read tries the same record again. The share
  consumer does the same within ``request_timeout_ms`` (the record waits in its buffer); a
  failed resolution fails that record as a deserializer's error does (it is released).

The exception is only ever raised on the first record that meets something new; a
serializer raises it at most once per resolution (raising it again right after a successful
``resolve`` is a bug of the serializer, reported as such).

**Context-aware serializers** (opt-in). A plain callable ``value -> bytes`` sees the value
only. A :class:`Serializer` (or :class:`Deserializer`) subclass is also given a
:class:`SerializationContext`: the record's topic, whether it is the key or the value, and
its headers, which a serializer may add to (the producer sends what it appended; a schema
registry serializer writes its schema id there). The clients tell the two apart once, when
they are built: plain callables keep their direct calls (the producer's C fast path
included); a context-aware one is called as ``serialize(obj, ctx)`` in Python, with one
small context object per record::

    class Tagged(Serializer):
        def serialize(self, obj, ctx):
            ctx.headers.append(("content-type", b"text/plain"))
            return f"{ctx.topic}:{obj}".encode()
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from enum import Enum
from typing import Any

import anyio

from .errors import KafkaError, KafkaTimeoutError

__all__ = [
    "Deserializer",
    "MessageField",
    "NeedsResolution",
    "Resolver",
    "SerializationContext",
    "Serializer",
    "UnresolvedSerializerError",
    "deserialize",
    "resolve_within",
]

#: How much longer than its timeout a resolver may take before the caller gives up on it.
_GRACE_S = 0.5

#: ``resolve(timeout_s)``: do the I/O (within ``timeout_s`` seconds, raising a typed error
#: when it cannot), so that the same call succeeds synchronously afterwards.
Resolver = Callable[[float], Awaitable[None]]


class NeedsResolution(Exception):
    """Raised by a serializer or deserializer that needs async I/O before it can answer.

    ``await exc.resolve(timeout_s)`` does that I/O (it raises the resolver's typed error on
    failure, and gives up after ``timeout_s`` seconds); then the same call answers without
    I/O. Not a :class:`~kafka_async.errors.KafkaError`: the clients handle it, and an
    application sees it only when it calls a serializer itself.
    """

    def __init__(self, what: str, resolve: Resolver) -> None:
        super().__init__(
            f"{what}: needs an async resolution first (the producer's send/enqueue/produce "
            "and the consumer's getmany/getone/async for do it; elsewhere await "
            "exc.resolve(timeout_s), or the serializer's prepare(), and call again)"
        )
        #: What is missing, for messages (e.g. "schema id 7").
        self.what = what
        self._resolve = resolve

    def resolve(self, timeout_s: float) -> Awaitable[None]:
        """Do the I/O the serializer needs, within ``timeout_s`` seconds."""
        return self._resolve(timeout_s)


class UnresolvedSerializerError(KafkaError):
    """A serializer or deserializer raised :class:`NeedsResolution` again right after its
    ``resolve`` succeeded (a bug of that serializer: its resolution did not take)."""


async def resolve_within(exc: NeedsResolution, timeout_s: float) -> None:
    """``await exc.resolve(timeout_s)``, and never longer than that (plus a short grace for
    the resolver's own typed error): a resolver that overruns gives
    :class:`~kafka_async.errors.KafkaTimeoutError`."""
    with anyio.move_on_after(timeout_s + _GRACE_S) as scope:
        await exc.resolve(timeout_s)
    if scope.cancelled_caught:
        raise KafkaTimeoutError(f"{exc.what}: not resolved within {timeout_s:g} s")


class MessageField(str, Enum):
    """Which part of a record a serializer is working on."""

    KEY = "key"
    VALUE = "value"


class SerializationContext:
    """What a :class:`Serializer` or :class:`Deserializer` is told besides the object.

    * ``topic``: the record's topic.
    * ``field``: :attr:`MessageField.KEY` or :attr:`MessageField.VALUE`.
    * ``headers``: the record's headers as ``(name, value)`` pairs. For a serializer a
      ``list`` it may append to (the producer sends the list as the record's headers); for a
      deserializer the record's headers as received (read them, do not change them).
    """

    __slots__ = ("field", "headers", "topic")

    def __init__(
        self,
        topic: str,
        field: MessageField,
        headers: Sequence[tuple[str, bytes | None]] | None = None,
    ) -> None:
        self.topic = topic
        self.field = field
        self.headers: Any = headers

    @property
    def is_key(self) -> bool:
        """True for the key, False for the value."""
        return self.field is MessageField.KEY

    def __repr__(self) -> str:
        return f"SerializationContext({self.topic!r}, {self.field.value}, headers={self.headers!r})"


class Serializer(ABC):
    """A context-aware serializer: give an instance as ``key_serializer``/
    ``value_serializer`` and the producer calls :meth:`serialize` with the record's
    :class:`SerializationContext` (a plain callable ``obj -> bytes`` keeps working as
    before, and keeps the producer's C fast path; a subclass runs in Python, per record)."""

    @abstractmethod
    def serialize(self, obj: Any, ctx: SerializationContext | None) -> bytes | None:
        """``obj`` as bytes (or None). ``ctx`` is None only when called outside a client
        (``serializer(obj)``); may append to ``ctx.headers``; may raise
        :class:`NeedsResolution`."""

    def __call__(self, obj: Any) -> bytes | None:
        """:meth:`serialize` without a context (for code that calls plain callables)."""
        return self.serialize(obj, None)


class Deserializer(ABC):
    """A context-aware deserializer: give an instance as ``key_deserializer``/
    ``value_deserializer`` and the consumer (and share consumer) calls :meth:`deserialize`
    with the record's :class:`SerializationContext` (topic, key or value, headers)."""

    @abstractmethod
    def deserialize(self, data: bytes | None, ctx: SerializationContext | None) -> Any:
        """The object ``data`` stands for. ``ctx`` is None only when called outside a client;
        may raise :class:`NeedsResolution`."""

    def __call__(self, data: bytes | None) -> Any:
        """:meth:`deserialize` without a context (for code that calls plain callables)."""
        return self.deserialize(data, None)


def deserialize(
    d: Callable[[bytes | None], Any],
    data: bytes | None,
    topic: str,
    field: MessageField,
    headers: Any,
) -> Any:
    """``d(data)``, or ``d.deserialize(data, ctx)`` for a context-aware :class:`Deserializer`
    (how the consumers call a deserializer on their per-record paths)."""
    if isinstance(d, Deserializer):
        return d.deserialize(data, SerializationContext(topic, field, headers))
    return d(data)
