"""What a ShareFetch answer holds for one partition, as records the member acquired.

A ShareFetch answer carries whole record batches plus the ranges of offsets the broker
acquired for this member (``acquired_records``, each range with its delivery count). Only
records inside those ranges are this member's to deliver; the rest of a batch belongs to
other members or was already acknowledged. An acquired offset without a record the
application can see (a transaction marker, an offset compacted away) is a *gap* and is
acknowledged as such at once. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

from ...errors import KafkaError
from ...records.batch import decode_batches
from ...structs import ConsumerRecord

K = TypeVar("K")
V = TypeVar("V")


@dataclass(slots=True)
class ShareRecord(ConsumerRecord[K, V], Generic[K, V]):
    """A record delivered by a share consumer: a :class:`~kafka_async.ConsumerRecord` with
    the number of times the broker has delivered it (1 the first time; a release or an
    expired acquisition lock makes the next delivery count one more)."""

    delivery_count: int = 1


@dataclass(slots=True)
class AcquiredRecord:
    """One acquired record, not deserialized yet."""

    offset: int
    timestamp: int
    timestamp_type: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    leader_epoch: int | None
    delivery_count: int


@dataclass
class AcquiredPartition:
    """The outcome of one partition of a ShareFetch answer."""

    records: list[AcquiredRecord]
    #: Acquired offsets holding no deliverable record (acknowledged as gaps).
    gaps: list[int]
    #: Acquired offsets not reached because the data was damaged (released again), and the
    #: error that stopped decoding.
    undecoded: list[int]
    error: KafkaError | None = None


def acquired_offsets(ranges: Iterable[tuple[int, int, int]]) -> dict[int, int]:
    """``{offset: delivery count}`` of ``(first, last, delivery count)`` ranges."""
    out: dict[int, int] = {}
    for first, last, count in ranges:
        for offset in range(first, last + 1):
            out[offset] = count
    return out


def select_acquired(
    data: bytes | bytearray | memoryview | None,
    ranges: Iterable[tuple[int, int, int]],
    *,
    check_crcs: bool = True,
    max_decompressed_size: int = 64 * 1024 * 1024,
) -> AcquiredPartition:
    """The acquired records of ``data`` (the partition's record batches), in offset order."""
    acquired = acquired_offsets(ranges)
    records: list[AcquiredRecord] = []
    seen: set[int] = set()
    error: KafkaError | None = None
    if data and acquired:
        try:
            for batch in decode_batches(
                data, check_crcs=check_crcs, max_decompressed_size=max_decompressed_size
            ):
                if batch.last_offset < min(acquired) or batch.is_control:
                    continue
                epoch = batch.partition_leader_epoch
                leader_epoch = epoch if epoch >= 0 else None
                ts_type = batch.timestamp_type
                for r in batch.records():
                    count = acquired.get(r.offset)
                    if count is None:
                        continue
                    seen.add(r.offset)
                    records.append(
                        AcquiredRecord(
                            r.offset,
                            r.timestamp,
                            ts_type,
                            r.key,
                            r.value,
                            r.headers,
                            leader_epoch,
                            count,
                        )
                    )
        except KafkaError as exc:  # CorruptRecordError, a decompression limit or codec
            error = exc
    if error is not None:
        last = max(seen, default=-1)
        undecoded = sorted(o for o in acquired if o not in seen and o > last)
        gaps = sorted(o for o in acquired if o not in seen and o <= last)
    else:
        undecoded = []
        gaps = sorted(o for o in acquired if o not in seen)
    return AcquiredPartition(records, gaps, undecoded, error)


__all__ = [
    "AcquiredPartition",
    "AcquiredRecord",
    "ShareRecord",
    "acquired_offsets",
    "select_acquired",
]
