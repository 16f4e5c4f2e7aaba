"""The producer's per-record steps in Python: the twins of ``_fastpath.c``.

Used when the C extension ``kafka_async.producer._fastpath`` is not built (see
:mod:`kafka_async.producer.fastpath`, which picks one); the tests compare both:

* :func:`append_record`: one record into a producer batch's writer, and the record's
  delivery handle;
* :func:`delivery_metadata`: a settled record's metadata.

``Producer.enqueue`` itself is the twin of ``_fastpath.Enqueuer``, and
``partitioner.murmur2_py`` that of ``_fastpath.murmur2``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from operator import attrgetter
from typing import Any

#: A record's key or value: bytes, bytearray or memoryview (the buffer protocol).
Buffer = Any
Header = tuple[str, "bytes | None"]

#: The delivery handle's slots, read by name as the C twin reads them (fastpath.C_FIELDS).
_delivery_fields = attrgetter("_batch", "_delta", "_timestamp", "_key_size", "_value_size")


def append_record(
    batch: Any,
    timestamp: int | None,
    key: Buffer | None,
    value: Buffer | None,
    headers: Iterable[Header] | None,
    size: int,
    cls: Callable[..., Any],
) -> Any:
    """Append a record to ``batch.writer`` and return ``cls(batch, offset delta, timestamp,
    key size, value size)``, after adding 1 to ``batch.record_count`` and ``size`` to
    ``batch.reserved``; None (nothing written or changed) when ``batch`` is closed, has no
    writer (it was settled) or is full. A None ``timestamp`` means now.

    ``batch`` is the producer's batch (slots ``writer``, ``closed``, ``record_count``,
    ``reserved``) and ``cls`` its delivery handle class (slots ``_batch``, ``_delta``,
    ``_timestamp``, ``_key_size``, ``_value_size``); the C twin fills those slots directly.
    """
    if not isinstance(size, int):
        raise TypeError("size must be an int")
    writer = batch.writer
    if batch.closed or writer is None:
        return None
    if timestamp is None:
        timestamp = time.time_ns() // 1_000_000
    delta = writer.append(timestamp, key, value, headers)
    if delta is None:
        return None
    batch.record_count += 1
    batch.reserved += size
    key_size = -1 if key is None else len(key)
    return cls(batch, delta, timestamp, key_size, -1 if value is None else len(value))


def delivery_metadata(delivery: Any, cls: Callable[..., Any]) -> Any:
    """The metadata of a record whose batch settled without an error, else None.

    ``delivery`` is the producer's delivery handle (slots ``_batch``, ``_delta``,
    ``_timestamp``, ``_key_size``, ``_value_size``), its batch has slots ``done``, ``error``,
    ``tp`` (a (topic, partition) tuple), ``base_offset`` and ``log_append_time``, and ``cls``
    is the metadata's named tuple: ``cls(topic, partition, offset, timestamp, timestamp type,
    key size, value size)``. The offset is ``base_offset + delta``, or -1 when the base offset
    is negative (acks=0); a log-append time (>= 0) replaces the record's own timestamp and
    makes the timestamp type 1 (else 0). The C twin builds the tuple without calling ``cls``.
    """
    if not (isinstance(cls, type) and issubclass(cls, tuple)) or cls.__dictoffset__ != 0:
        raise TypeError("cls must be a tuple subclass without a __dict__")
    batch, delta, own_timestamp, key_size, value_size = _delivery_fields(delivery)
    if batch.done is not True or batch.error is not None:
        return None
    tp = batch.tp
    if not isinstance(tp, tuple) or len(tp) != 2:
        raise TypeError("the batch's tp must be a (topic, partition) tuple")
    base = batch.base_offset
    lat = batch.log_append_time
    if not (isinstance(base, int) and isinstance(lat, int) and isinstance(delta, int)):
        raise TypeError("offsets and times must be ints")
    offset = -1 if base < 0 else base + delta
    if lat >= 0:
        timestamp, ts_type = lat, 1
    else:
        timestamp, ts_type = own_timestamp, 0
    return tuple.__new__(
        cls,
        (tp[0], tp[1], offset, timestamp, ts_type, key_size, value_size),
    )
