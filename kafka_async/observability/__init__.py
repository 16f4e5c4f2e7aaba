"""Observability hooks: how the clients report what they do, for tracing and metrics.

Off by default. A client takes ``hooks=`` (an :class:`ClientHooks` instance); without it the
hot paths test one attribute for ``None`` and do nothing else. Nothing here imports
OpenTelemetry: :mod:`kafka_async.observability.otel` (the ``otel`` extra) is imported only by
code that asks for it, e.g. ``hooks=OpenTelemetryHooks()``.

The interface is deliberately coarse, so that hooks cost nothing per record:

* :meth:`ClientHooks.client_started` / :meth:`ClientHooks.client_closed`: a client hands
  over its ``statistics()`` callable once; metric exporters read it when they collect
  (observable instruments), never on the produce or fetch path.
* :meth:`ClientHooks.on_produce`: once per settled producer batch (all records of one
  partition sent in one request, acknowledged or failed), with the batch's timing, so a
  tracer can record one span per batch with explicit start and end times.
* :meth:`ClientHooks.on_consume`: once per partition each time the consumer's ``getmany``
  hands records out; ``getone`` and ``async for`` take records through ``getmany`` a chunk
  at a time, so they too report per chunk, never per record.

Logging goes through :mod:`logging`, one logger per module under ``kafka_async`` (configure
``kafka_async`` or a subtree such as ``kafka_async.producer``): ``kafka_async.producer.producer``
(close deadlines, aborted transactions), ``kafka_async.producer.sender`` (epoch bumps, fatal
errors; batch errors at DEBUG), ``kafka_async.consumer.consumer``,
``kafka_async.consumer.fetcher``, ``kafka_async.consumer.group.coordinator``,
``kafka_async.consumer.offsets``, ``kafka_async.cluster.client`` (metadata refreshes),
``kafka_async.net.connection``, ``kafka_async.net.pool``, ``kafka_async.net.config``,
``kafka_async.admin``, ``kafka_async.spark`` and ``kafka_async.observability`` (failing
hooks). Passwords, tokens and the token provider never reach a log record: settings are
logged only through ``ClientConfig.to_dict()``, which masks them.

Hooks run synchronously on the client's event loop: they must be quick and must not block;
an exception raised by a hook is logged (``kafka_async.observability``) and swallowed, so a
broken exporter cannot break producing or consuming.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ClientHooks",
    "ConsumeEvent",
    "ProduceEvent",
    "call_hook",
]

log = logging.getLogger(__name__)

#: A client's statistics callable (``Producer.statistics``, ``Consumer.statistics``).
StatisticsSource = Callable[[], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class ProduceEvent:
    """One producer batch settled: the records of one partition in one Produce request.

    Times are wall-clock nanoseconds since the epoch (what tracing APIs take). ``start_ns``
    is when the batch's first record was queued, ``end_ns`` when the batch was settled.
    ``base_offset`` is the first record's offset (-1 when failed or with ``acks=0``);
    ``error`` is the exception every record of the batch failed with, or None.
    """

    client_id: str
    topic: str
    partition: int
    record_count: int
    size_bytes: int
    base_offset: int
    attempts: int
    start_ns: int
    end_ns: int
    error: BaseException | None


@dataclass(frozen=True, slots=True)
class ConsumeEvent:
    """Records of one partition handed to the application in one ``getmany``/iteration step.

    ``first_offset``/``last_offset`` bound the offsets handed out; ``group_id`` is None for a
    consumer without a group. Times as in :class:`ProduceEvent`: ``start_ns`` is when the
    ``getmany`` call that returned them began (so it includes waiting for data),
    ``end_ns`` when it returned. For ``async for``/``getone`` that is when the iterator
    took its chunk from the fetch buffer, not when each record was yielded; records of a
    chunk that a revocation put back unyielded are reported again when read again.
    """

    client_id: str
    group_id: str | None
    topic: str
    partition: int
    record_count: int
    first_offset: int
    last_offset: int
    start_ns: int
    end_ns: int


class ClientHooks:
    """Base class of observability hooks; every method is a no-op. Subclass what you need.

    One instance may serve several clients (each call says which client through its
    ``kind``/``client_id`` or the event's ``client_id``).
    """

    def client_started(self, kind: str, client_id: str, statistics: StatisticsSource) -> None:
        """A client started; ``kind`` is ``"producer"``, ``"consumer"`` or ``"admin"``.

        ``statistics()`` returns the client's current statistics dictionary; it may be
        called at any time until :meth:`client_closed` (metric collection).
        """

    def client_closed(self, kind: str, client_id: str, statistics: StatisticsSource) -> None:
        """The client closed: stop reading its statistics (``statistics`` is the callable
        given to :meth:`client_started`, which tells clients sharing a client id apart)."""

    def on_produce(self, event: ProduceEvent) -> None:
        """A producer batch was acknowledged or failed (see :class:`ProduceEvent`)."""

    def on_consume(self, event: ConsumeEvent) -> None:
        """The consumer handed records of one partition to the application."""


def call_hook(func: Callable[..., None], *args: Any) -> None:
    """Call a hook method, logging (not raising) what it raises."""
    try:
        func(*args)
    except Exception:
        log.exception("observability hook %s failed", getattr(func, "__qualname__", func))
