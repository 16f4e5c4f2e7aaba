"""Offset planning for the Spark source: pure functions, no I/O, no pyspark.

The driver looks up earliest/latest offsets (that is I/O, in ``kafka_io``) and then decides
here, synchronously, which offset range each Spark task reads. The invariants the tests check
with hypothesis:

* the ranges of one plan cover ``[start, end)`` of every partition exactly once (no offset is
  read twice, none is skipped);
* ``rate_limit`` admits exactly ``min(limit, total lag)`` offsets and never moves a partition
  backwards or past its latest offset.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from ..errors import ConfigError, KafkaError
from ..structs import TopicPartition
from .options import EARLIEST, LATEST, OffsetSpec


class DataLossError(KafkaError):
    """Offsets the query needs are gone (retention, a deleted partition or topic).

    Raised only with ``failOnDataLoss=true`` (the default); with false, the source logs the
    gap and moves on from the earliest offset still present.
    """


@dataclass(frozen=True, order=True)
class OffsetRange:
    """One Spark task's share of a partition: offsets ``start`` (inclusive) to ``end``."""

    topic: str
    partition: int
    start: int
    end: int

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)

    @property
    def size(self) -> int:
        return max(0, self.end - self.start)


def split_range(rng: OffsetRange, parts: int) -> list[OffsetRange]:
    """Split ``rng`` into ``parts`` contiguous pieces whose sizes differ by at most one."""
    parts = max(1, min(parts, rng.size))
    bounds = [rng.start + (rng.size * i) // parts for i in range(parts + 1)]
    return [OffsetRange(rng.topic, rng.partition, bounds[i], bounds[i + 1]) for i in range(parts)]


def plan_ranges(
    starts: Mapping[TopicPartition, int],
    ends: Mapping[TopicPartition, int],
    *,
    min_partitions: int | None = None,
    max_records_per_partition: int | None = None,
) -> list[OffsetRange]:
    """The ranges Spark tasks read, one or more per partition with data, in partition order.

    Without options, one range per non-empty partition. ``minPartitions`` splits ranges in
    proportion to their size so that there are at least that many tasks whenever there are at
    least that many records; ``maxRecordsPerPartition`` caps the size of each range.
    """
    missing = set(ends) - set(starts)
    if missing:
        raise ValueError(f"no start offset for {sorted(missing)}")
    ranges = [
        OffsetRange(tp.topic, tp.partition, starts[tp], ends[tp])
        for tp in sorted(ends)
        if ends[tp] > starts[tp]
    ]
    if max_records_per_partition is not None:
        ranges = [
            piece
            for r in ranges
            for piece in split_range(r, -(-r.size // max_records_per_partition))
        ]
    if min_partitions is not None and len(ranges) < min_partitions:
        total = sum(r.size for r in ranges)
        # Rounding each share up makes the sum reach min_partitions; it cannot exceed a range's
        # size unless there are fewer records than min_partitions (then split_range caps it).
        ranges = [
            piece for r in ranges for piece in split_range(r, -(-r.size * min_partitions // total))
        ]
    return ranges


def rate_limit(
    starts: Mapping[TopicPartition, int],
    latest: Mapping[TopicPartition, int],
    limit: int | None,
) -> dict[TopicPartition, int]:
    """End offsets admitting at most ``limit`` records in total (maxOffsetsPerTrigger).

    Each partition gets a share proportional to its lag; the shares are rounded down and the
    remainder goes to the largest fractional parts, so exactly ``min(limit, total lag)``
    offsets are admitted and a busy partition cannot starve the others.
    """
    lags = {tp: max(0, latest[tp] - starts.get(tp, latest[tp])) for tp in latest}
    total = sum(lags.values())
    if limit is None or total <= limit:
        return {tp: max(latest[tp], starts.get(tp, latest[tp])) for tp in latest}
    shares = {tp: (limit * lag) // total for tp, lag in lags.items()}
    left = limit - sum(shares.values())
    by_remainder = sorted(lags, key=lambda tp: (-((limit * lags[tp]) % total), tp))
    for tp in by_remainder[:left]:
        shares[tp] += 1
    return {tp: starts.get(tp, latest[tp]) + shares[tp] for tp in latest}


def resolve_spec(
    spec: OffsetSpec,
    partitions: Iterable[TopicPartition],
    earliest: Mapping[TopicPartition, int],
    latest: Mapping[TopicPartition, int],
    option: str,
) -> dict[TopicPartition, int]:
    """Concrete offsets for ``earliest``/``latest``/JSON (-2/-1 replaced) for ``partitions``.

    Like Spark, JSON offsets must name every partition the query reads, so nothing is read
    from an unintended position by accident.
    """
    parts = sorted(set(partitions))
    if spec == "earliest":
        return {tp: earliest[tp] for tp in parts}
    if spec == "latest":
        return {tp: latest[tp] for tp in parts}
    if set(spec) != set(parts):
        raise ConfigError(
            f"option {option!r} must give an offset for every partition read "
            f"(use -2 for earliest, -1 for latest); given {sorted(spec)}, read {parts}"
        )
    out: dict[TopicPartition, int] = {}
    for tp in parts:
        value = spec[tp]
        out[tp] = earliest[tp] if value == EARLIEST else latest[tp] if value == LATEST else value
    return out


def resolve_timestamps(
    found: Mapping[TopicPartition, int | None],
    latest: Mapping[TopicPartition, int],
    strategy: Literal["error", "latest"],
    option: str,
) -> dict[TopicPartition, int]:
    """Offsets from a by-timestamp lookup; ``None`` (no record that new) per ``strategy``."""
    out: dict[TopicPartition, int] = {}
    for tp, offset in found.items():
        if offset is None:
            if strategy == "error":
                raise ConfigError(
                    f"option {option!r}: no record in {tp.topic}-{tp.partition} has a "
                    "timestamp at or after the one asked for (set "
                    "startingOffsetsByTimestampStrategy=latest to start at the end)"
                )
            out[tp] = latest[tp]
        else:
            out[tp] = offset
    return out


def check_starts(
    starts: Mapping[TopicPartition, int],
    earliest: Mapping[TopicPartition, int],
    latest: Mapping[TopicPartition, int],
    *,
    fail_on_data_loss: bool,
) -> tuple[dict[TopicPartition, int], list[str]]:
    """Validate planned start offsets against what the broker still has.

    A start below the earliest offset means retention deleted records the query needs; a
    start above the latest means the partition was recreated or truncated; a partition that
    vanished lost everything after its start. Each is a DataLossError with
    ``fail_on_data_loss``, otherwise a message in the returned list and a start moved to the
    earliest offset still present (vanished partitions are dropped).
    """
    out: dict[TopicPartition, int] = {}
    problems: list[str] = []
    for tp, start in sorted(starts.items()):
        if tp not in earliest or tp not in latest:
            problems.append(f"partition {tp.topic}-{tp.partition} no longer exists")
            continue
        if start < earliest[tp]:
            problems.append(
                f"offsets {start}..{earliest[tp] - 1} of {tp.topic}-{tp.partition} were "
                "deleted before they were read"
            )
            out[tp] = earliest[tp]
        elif start > latest[tp]:
            problems.append(
                f"{tp.topic}-{tp.partition} ends at {latest[tp]} but reading was to start at "
                f"{start} (was the topic recreated?)"
            )
            out[tp] = earliest[tp]
        else:
            out[tp] = start
    if problems and fail_on_data_loss:
        raise DataLossError(
            "; ".join(problems) + ". Set failOnDataLoss=false to skip lost data instead."
        )
    return out, problems


def check_batch_ends(
    starts: Mapping[TopicPartition, int],
    ends: Mapping[TopicPartition, int],
    latest: Mapping[TopicPartition, int],
) -> None:
    """A batch query's end offsets must lie between its starts and the latest offsets."""
    for tp in sorted(ends):
        if ends[tp] > latest[tp]:
            raise ConfigError(
                f"endingOffsets for {tp.topic}-{tp.partition} is {ends[tp]} but the partition "
                f"ends at {latest[tp]}"
            )
        if ends[tp] < starts[tp]:
            raise ConfigError(
                f"{tp.topic}-{tp.partition}: starting offset {starts[tp]} is after ending "
                f"offset {ends[tp]}"
            )
