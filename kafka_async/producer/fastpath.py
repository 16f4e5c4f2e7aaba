"""The producer's per-record fast path: the C extension when it was built, else its twins.

``_fastpath.c`` (module ``kafka_async.producer._fastpath``) does in C what the producer does
for the common record: ``Producer.enqueue``/``send``/``produce`` (:data:`Enqueuer`), a record
into a batch (:data:`append_record`), a settled record's metadata (:data:`delivery_metadata`)
and the partitioner's hash (``partitioner.murmur2``). Its Python twins are
``_fastpath_pure.py``, the ``Producer`` methods themselves and ``partitioner.murmur2_py``; the
tests compare each pair. The extension needs the records accelerator
(``kafka_async.records._speedups``, whose record writer it appends through); without either,
:data:`FASTPATH` is False and the twins serve.

The C code reads the producer's objects by field name (slots of ``ProducerBatch``,
``Delivery`` and ``PartitionState``; attributes of ``Producer``, ``Sender``,
``ClusterClient`` and ``RecordAccumulator``). :data:`C_FIELDS` lists every such name once;
``tests/producer/test_fastpath_fields.py`` checks that each exists on the real objects and
that ``_fastpath.c`` reads no name missing here. Renaming one of these fields means changing
it here and in ``_fastpath.c``.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any

from . import _fastpath_pure

try:
    from . import _fastpath
except ImportError:  # not built, or built without the records accelerator it needs
    _fastpath = None  # type: ignore[assignment]

__all__ = [
    "C_FIELDS",
    "FASTPATH",
    "Enqueuer",
    "append_record",
    "client_metadata",
    "delivery_metadata",
]

#: True when the C fast path is in use (``kafka_async.records.SPEEDUPS`` tells the same of
#: the record codec's accelerator).
FASTPATH = _fastpath is not None

#: Every field the C fast path reads by name, by the class it reads it from (the producer's
#: own classes, the cluster client's snapshot, and the protocols of the objects it is given).
C_FIELDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Producer", ("_running", "_sender", "_txn", "_client", "_topics_snapshot")),
    ("Sender", ("fatal_error", "wakeup")),
    ("ClusterClient", ("_metadata",)),
    ("RecordAccumulator", ("buffer_used", "buffer_memory", "wakeup_needed")),
    (
        "ProducerBatch",
        (
            "writer",
            "closed",
            "record_count",
            "reserved",
            "done",
            "error",
            "tp",
            "base_offset",
            "log_append_time",
            "report_at_flush",
            "loop",
            "_waiters",
        ),
    ),
    ("PartitionState", ("batches",)),
    ("Delivery", ("_batch", "_delta", "_timestamp", "_key_size", "_value_size", "result")),
    # A batch writer that is not the C RecordWriter (the pure one) is appended to by method.
    ("RecordWriter", ("append",)),
    # The future Producer.send's C await yields, and the coroutine it may delegate to.
    ("asyncio.Future", ("_asyncio_future_blocking",)),
    ("Coroutine", ("throw", "close")),
)

#: ``client_metadata(cluster_client)``: the metadata snapshot behind
#: ``ClusterClient.metadata``, read as the C code reads it (the property would cost a Python
#: frame per record; the producer compares the object with the one its topic cache is for).
client_metadata: Callable[[Any], Any] = attrgetter(dict(C_FIELDS)["ClusterClient"][0])

#: ``append_record(batch, timestamp, key, value, headers, size, cls)``: the producer's
#: per-record step (see ``_fastpath_pure.append_record``).
append_record = _fastpath.append_record if _fastpath is not None else _fastpath_pure.append_record
#: ``delivery_metadata(delivery, cls)``: a settled record's metadata, None unless its batch
#: succeeded (see ``_fastpath_pure.delivery_metadata``).
delivery_metadata = (
    _fastpath.delivery_metadata if _fastpath is not None else _fastpath_pure.delivery_metadata
)
#: ``Enqueuer(producer=..., ...)``: ``Producer.enqueue``'s common case in C, which a producer
#: installs as its ``enqueue`` (None without the extension: the Python method serves). Its
#: twin is the method itself; the tests compare the two.
Enqueuer = _fastpath.Enqueuer if _fastpath is not None else None
