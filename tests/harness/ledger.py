"""A ledger of produced records, and a checker that compares it with what a topic holds.

Every record a reliability test produces carries its run id, the partition it was sent to and
a per-partition sequence number, inside its value (so any reader, ours or a peer client, sees
them without header support)::

    ledger = Ledger(partitions=3)
    seq, value = ledger.next_record(partition)        # value = b"KAL1|<run>|<p>|<seq>|...."
    delivery = await producer.enqueue(topic, value, partition=partition)
    ...
    ledger.acked(partition, seq, offset)              # or ledger.failed(partition, seq, exc)
    observed = read_back_confluent(bootstrap, topic, 3, expect=ledger.expected_present())
    report = ledger.check(observed)
    assert report.ok, report.summary()

The read-back is independent of the client under test: :func:`read_back_confluent` uses
librdkafka in assign mode, so a consumer bug cannot hide a producer bug; :func:`read_back_ours`
reads the same topic with ``kafka_async.Consumer`` as a second pass.

What the checker counts (per run id; records of other runs are ignored):

* **lost**: acknowledged by the broker, absent from the log;
* **duplicated**: extra copies of a record present more than once;
* **reordered**: records that appear after a record with a higher sequence number of the
  same partition (first copies only; a partition's log order must be its send order);
* **phantom**: reported failed to the application, yet present in the log;
* **misrouted**: present in another partition than the one it was sent to;
* **unknown**: present, but carrying a sequence number the ledger never handed out;
* **offset_mismatch**: present, but at another offset than the acknowledgement said.

Records whose outcome was never reported (still pending when the test ended) are only
counted (``unresolved``), they are neither lost nor phantom.
"""

from __future__ import annotations

import time
import uuid
from array import array
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

__all__ = [
    "Ledger",
    "LedgerReport",
    "Observed",
    "RecordTag",
    "encode_value",
    "parse_value",
    "read_back_confluent",
    "read_back_ours",
]

_MAGIC = b"KAL1"
_SEP = b"|"


class RecordTag(NamedTuple):
    """What a ledger record's value says about itself."""

    run_id: str
    partition: int
    seq: int


class Observed(NamedTuple):
    """One record as a reader found it: where, and its raw value."""

    partition: int
    offset: int
    value: bytes | None


def encode_value(run_id: str, partition: int, seq: int, size: int = 0) -> bytes:
    """The value of ledger record ``seq`` of ``partition``, padded to at least ``size`` bytes."""
    if _SEP.decode() in run_id:
        raise ValueError(f"run id must not contain '|': {run_id!r}")
    head = _SEP.join((_MAGIC, run_id.encode(), b"%d" % partition, b"%d" % seq, b""))
    if len(head) < size:
        head += b"." * (size - len(head))
    return head


def parse_value(value: bytes | bytearray | memoryview | None) -> RecordTag | None:
    """The tag of a ledger value; None for anything else (another writer's record, garbage)."""
    if value is None:
        return None
    raw = bytes(value[:200])
    parts = raw.split(_SEP, 4)
    if len(parts) < 5 or parts[0] != _MAGIC:
        return None
    try:
        return RecordTag(parts[1].decode(), int(parts[2]), int(parts[3]))
    except (UnicodeDecodeError, ValueError):
        return None


@dataclass
class _Entry:
    state: str = "pending"  # pending | acked | failed
    error: str | None = None


@dataclass
class LedgerReport:
    """The outcome of :meth:`Ledger.check`; ``ok`` when nothing was lost, duplicated,
    reordered, phantom, misrouted or unknown. The ``*_examples`` lists hold a few
    ``(partition, seq)`` pairs per kind for the failure message."""

    run_id: str
    produced: int
    acked: int
    failed: int
    unresolved: int
    present: int
    lost: int = 0
    duplicated: int = 0
    reordered: int = 0
    phantom: int = 0
    misrouted: int = 0
    unknown: int = 0
    offset_mismatch: int = 0
    foreign: int = 0
    examples: dict[str, list[tuple[int, int]]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when the log holds exactly what the producer reported, in order."""
        return not (
            self.lost
            or self.duplicated
            or self.reordered
            or self.phantom
            or self.misrouted
            or self.unknown
            or self.offset_mismatch
        )

    def summary(self) -> str:
        """One line of counts, then examples of every problem found."""
        line = (
            f"run {self.run_id}: produced={self.produced} acked={self.acked} "
            f"failed={self.failed} unresolved={self.unresolved} present={self.present} "
            f"lost={self.lost} duplicated={self.duplicated} reordered={self.reordered} "
            f"phantom={self.phantom} misrouted={self.misrouted} unknown={self.unknown} "
            f"offset_mismatch={self.offset_mismatch}"
        )
        for kind, items in sorted(self.examples.items()):
            line += f"\n  {kind}: {items[:10]}"
        return line

    def _note(self, kind: str, partition: int, seq: int) -> None:
        items = self.examples.setdefault(kind, [])
        if len(items) < 20:
            items.append((partition, seq))


class Ledger:
    """The producer side of a reliability run: what was sent, acknowledged and failed.

    Pure bookkeeping (no I/O). Sequence numbers start at 0 per partition and follow the order
    of :meth:`next_record` calls, which must be the order records were handed to the producer.
    """

    def __init__(self, partitions: int = 1, run_id: str | None = None) -> None:
        if partitions < 1:
            raise ValueError(f"partitions must be >= 1, got {partitions}")
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self.partitions = partitions
        self._next: list[int] = [0] * partitions
        self._entries: dict[tuple[int, int], _Entry] = {}
        # Acknowledged offsets by partition and sequence, as machine integers: the ledger
        # must not keep the client's own int objects alive, or a memory-growth measurement
        # of the client (tracemalloc, by allocating file) would count the ledger's records.
        self._offsets: list[array[int]] = [array("q") for _ in range(partitions)]
        self._created = time.monotonic()

    def __repr__(self) -> str:
        counts = self.counts()
        return f"<Ledger {self.run_id} {counts}>"

    def next_record(self, partition: int, size: int = 0) -> tuple[int, bytes]:
        """Reserve the next sequence number of ``partition``; returns it and the value."""
        if not 0 <= partition < self.partitions:
            raise ValueError(f"partition {partition} out of range 0..{self.partitions - 1}")
        seq = self._next[partition]
        self._next[partition] = seq + 1
        self._entries[(partition, seq)] = _Entry()
        self._offsets[partition].append(-1)
        return seq, encode_value(self.run_id, partition, seq, size)

    def acked(self, partition: int, seq: int, offset: int | None = -1) -> None:
        """The producer reported success (``offset`` -1 or None when unknown, e.g. acks=0)."""
        entry = self._entry(partition, seq)
        entry.state, entry.error = "acked", None
        self._offsets[partition][seq] = -1 if offset is None else offset

    def failed(self, partition: int, seq: int, error: BaseException | str) -> None:
        """The producer reported failure to the application."""
        entry = self._entry(partition, seq)
        entry.state, entry.error = "failed", repr(error) if not isinstance(error, str) else error

    def _entry(self, partition: int, seq: int) -> _Entry:
        try:
            return self._entries[(partition, seq)]
        except KeyError:
            raise KeyError(f"sequence {seq} of partition {partition} was never reserved") from None

    def counts(self) -> dict[str, int]:
        """How many records are pending, acknowledged and failed."""
        out = {"pending": 0, "acked": 0, "failed": 0}
        for entry in self._entries.values():
            out[entry.state] += 1
        return out

    def acked_offset(self, partition: int, seq: int) -> int:
        """The offset the acknowledgement gave (-1 when unknown or not acknowledged)."""
        entry = self._entry(partition, seq)
        return self._offsets[partition][seq] if entry.state == "acked" else -1

    def lost_offsets_reused(self, observed: Iterable[Observed]) -> tuple[int, int]:
        """For records that are lost: how many had an acknowledged offset at all, and at how
        many of those offsets the log now holds a *different* record.

        A reused offset proves the broker lost data it had acknowledged (a client cannot pick
        offsets): the evidence that a loss is the broker's.
        """
        at: dict[tuple[int, int], RecordTag | None] = {}
        present: set[tuple[int, int]] = set()
        for obs in observed:
            tag = parse_value(obs.value)
            at[(obs.partition, obs.offset)] = tag
            if tag is not None and tag.run_id == self.run_id:
                present.add((tag.partition, tag.seq))
        with_offset = reused = 0
        for (p, seq), entry in self._entries.items():
            offset = self._offsets[p][seq]
            if entry.state != "acked" or (p, seq) in present or offset < 0:
                continue
            with_offset += 1
            if (p, offset) in at:
                reused += 1
        return with_offset, reused

    def lost_in_offset_holes(self, observed: Iterable[Observed]) -> int:
        """How many lost records sit in a hole of the log that the broker made for them.

        For each run of consecutive lost sequence numbers of a partition, take the records
        just before and just after it that are present, at offsets ``a`` and ``b``. When the
        log holds nothing between ``a`` and ``b`` and ``b - a - 1`` equals the run's length,
        the broker assigned offsets to exactly these records (offsets are the broker's to
        assign; a client cannot skip any) and then lost their data: the evidence that such a
        loss is the broker's, whatever the client did.
        """
        seq_offset: dict[tuple[int, int], int] = {}
        offsets: dict[int, set[int]] = {}
        for obs in observed:
            offsets.setdefault(obs.partition, set()).add(obs.offset)
            tag = parse_value(obs.value)
            if tag is not None and tag.run_id == self.run_id:
                seq_offset[(tag.partition, tag.seq)] = obs.offset
        proven = 0
        for p in range(self.partitions):
            seq, end = 0, self._next[p]
            while seq < end:
                entry = self._entries[(p, seq)]
                if entry.state != "acked" or (p, seq) in seq_offset:
                    seq += 1
                    continue
                first = seq
                while (
                    seq < end
                    and self._entries[(p, seq)].state == "acked"
                    and ((p, seq) not in seq_offset)
                ):
                    seq += 1
                before = seq_offset.get((p, first - 1))
                after = seq_offset.get((p, seq))
                if before is None or after is None:
                    continue
                hole = after - before - 1
                in_hole = any(before < o < after for o in offsets.get(p, ()))
                if hole == seq - first and not in_hole:
                    proven += seq - first
        return proven

    def phantom_errors(self, observed: Iterable[Observed]) -> dict[str, int]:
        """For phantom records (reported failed, yet in the log): how many failed with each
        error (by class name). A delivery that timed out may still have been written (the
        outcome is unknown to any client); one refused with a broker error must not be."""
        present: set[tuple[int, int]] = set()
        for obs in observed:
            tag = parse_value(obs.value)
            if tag is not None and tag.run_id == self.run_id:
                present.add((tag.partition, tag.seq))
        out: dict[str, int] = {}
        for key in present:
            entry = self._entries.get(key)
            if entry is not None and entry.state == "failed":
                name = (entry.error or "?").split("(", 1)[0]
                out[name] = out.get(name, 0) + 1
        return out

    def acked_count(self) -> int:
        """Records acknowledged so far."""
        return sum(1 for e in self._entries.values() if e.state == "acked")

    def expected_present(self) -> dict[int, set[int]]:
        """Per partition, the sequence numbers that must be in the log (the acknowledged)."""
        out: dict[int, set[int]] = {p: set() for p in range(self.partitions)}
        for (p, seq), entry in self._entries.items():
            if entry.state == "acked":
                out[p].add(seq)
        return out

    def failures(self) -> dict[str, int]:
        """How many records failed with each error (by its repr's class name)."""
        out: dict[str, int] = {}
        for entry in self._entries.values():
            if entry.state == "failed" and entry.error is not None:
                name = entry.error.split("(", 1)[0]
                out[name] = out.get(name, 0) + 1
        return out

    def check(self, observed: Iterable[Observed]) -> LedgerReport:
        """Compare the log (as a reader found it) with the ledger.

        ``observed`` may come in any order across partitions; within a partition it is sorted
        by offset here, so a reader that interleaves partitions is fine.
        """
        counts = self.counts()
        report = LedgerReport(
            run_id=self.run_id,
            produced=len(self._entries),
            acked=counts["acked"],
            failed=counts["failed"],
            unresolved=counts["pending"],
            present=0,
        )
        by_partition: dict[int, list[tuple[int, RecordTag]]] = {}
        for obs in observed:
            tag = parse_value(obs.value)
            if tag is None or tag.run_id != self.run_id:
                report.foreign += 1
                continue
            by_partition.setdefault(obs.partition, []).append((obs.offset, tag))
        seen: dict[tuple[int, int], int] = {}
        for partition, items in by_partition.items():
            items.sort(key=lambda item: item[0])
            high = -1
            last_offset: int | None = None
            for offset, tag in items:
                if offset == last_offset:
                    continue  # one record read twice by the reader, not a duplicate in the log
                last_offset = offset
                key = (tag.partition, tag.seq)
                entry = self._entries.get(key)
                if tag.partition != partition:
                    report.misrouted += 1
                    report._note("misrouted", tag.partition, tag.seq)
                if entry is None:
                    report.unknown += 1
                    report._note("unknown", tag.partition, tag.seq)
                    continue
                copies = seen.get(key, 0)
                seen[key] = copies + 1
                if copies:
                    report.duplicated += 1
                    report._note("duplicated", tag.partition, tag.seq)
                    continue
                report.present += 1
                if tag.seq < high:
                    report.reordered += 1
                    report._note("reordered", tag.partition, tag.seq)
                high = max(high, tag.seq)
                if entry.state == "failed":
                    report.phantom += 1
                    report._note("phantom", tag.partition, tag.seq)
                elif (
                    entry.state == "acked" and 0 <= self._offsets[tag.partition][tag.seq] != offset
                ):
                    report.offset_mismatch += 1
                    report._note("offset_mismatch", tag.partition, tag.seq)
        for key, entry in self._entries.items():
            if entry.state == "acked" and key not in seen:
                report.lost += 1
                report._note("lost", *key)
        return report


# --------------------------------------------------------------------------------------------
# Read-back
# --------------------------------------------------------------------------------------------


def _complete(found: Mapping[int, set[int]], expect: Mapping[int, set[int]] | None) -> bool:
    if expect is None:
        return False
    return all(seqs <= found.get(p, set()) for p, seqs in expect.items())


def _tag_seen(found: dict[int, set[int]], value: bytes | None) -> None:
    tag = parse_value(value)
    if tag is not None:
        found.setdefault(tag.partition, set()).add(tag.seq)


def _reached(next_offset: Mapping[int, int], ends: Mapping[int, tuple[int, int]] | None) -> bool:
    """True when every partition was read up to the end offset taken at the start."""
    if ends is None:
        return False
    return all(next_offset.get(p, low) >= high for p, (low, high) in ends.items())


def _trusted(
    next_offset: Mapping[int, int], ends: dict[int, tuple[int, int]] | None
) -> dict[int, tuple[int, int]] | None:
    """``ends``, or None once a record was read past one of them.

    Nothing is produced during a read-back, so an end offset that was passed was stale: a
    durable Tansu restarted after a kill -9 answers ListOffsets with an end offset below the
    records it serves. Stopping there would report the records after it as lost.
    """
    if ends is None or any(next_offset.get(p, low) > high for p, (low, high) in ends.items()):
        return None
    return ends


def read_back_confluent(
    bootstrap: str,
    topic: str,
    partitions: int,
    *,
    expect: Mapping[int, set[int]] | None = None,
    timeout: float = 60.0,
    idle: float = 3.0,
    grace: float = 1.0,
) -> list[Observed]:
    """Read every partition of ``topic`` from the beginning with librdkafka (assign mode).

    Blocking (call it through ``anyio.to_thread.run_sync`` from async code). The end offsets
    are taken first, so call it once producing has stopped: reading stops once every
    partition was read up to them and one more read found nothing past them (the whole log:
    every copy of every record; Tansu's end offset can be too low). When that
    never happens (a transaction marker is the last offset, say), or a record turns up past
    an end offset (it was stale), it stops once every ``expect``-ed sequence was seen plus
    ``grace`` seconds (for duplicates to show up), after ``idle`` seconds without a new
    record, or at ``timeout``.
    """
    import confluent_kafka

    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"ledger-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "enable.partition.eof": False,
            "check.crcs": True,
            "isolation.level": "read_uncommitted",
        }
    )
    out: list[Observed] = []
    found: dict[int, set[int]] = {}
    next_offset: dict[int, int] = {}
    try:
        start = time.monotonic()
        ends: dict[int, tuple[int, int]] | None = {}
        for p in range(partitions):
            try:
                marks = consumer.get_watermark_offsets(
                    confluent_kafka.TopicPartition(topic, p), timeout=min(timeout, 10.0)
                )
            except confluent_kafka.KafkaException:
                marks = None
            if marks is None or ends is None:
                ends = None  # no end offsets: the expect/idle rules decide when to stop
                break
            ends[p] = (int(marks[0]), int(marks[1]))
        consumer.assign(
            [
                confluent_kafka.TopicPartition(topic, p, confluent_kafka.OFFSET_BEGINNING)
                for p in range(partitions)
            ]
        )
        last_new = time.monotonic()
        done_at: float | None = None
        looked_past = False
        while not _reached(next_offset, ends) or not looked_past:
            if _reached(next_offset, ends):
                # One more read: Tansu's end offset can be too low (ListOffsets answers the
                # last batch's base offset + 1), so anything past it must still be seen.
                looked_past = True
            now = time.monotonic()
            if now - start > timeout or now - last_new > idle:
                break
            if done_at is not None and now - done_at > grace:
                break
            for msg in consumer.consume(10_000, 0.2):
                err = msg.error()
                if err is not None:
                    raise RuntimeError(f"confluent-kafka read-back error: {err}")
                value = msg.value()
                partition, offset = int(msg.partition() or 0), int(msg.offset() or 0)
                out.append(Observed(partition, offset, value))
                next_offset[partition] = max(next_offset.get(partition, 0), offset + 1)
                _tag_seen(found, value)
                last_new = time.monotonic()
            ends = _trusted(next_offset, ends)
            if done_at is None and _complete(found, expect):
                done_at = time.monotonic()
        return out
    finally:
        consumer.close()


async def read_back_ours(
    bootstrap: str,
    topic: str,
    partitions: int,
    *,
    expect: Mapping[int, set[int]] | None = None,
    timeout: float = 60.0,
    idle: float = 3.0,
    grace: float = 1.0,
    **consumer_config: Any,
) -> list[Observed]:
    """The same read-back with ``kafka_async.Consumer`` (assign mode, from the beginning),
    with the same stopping rules (end offsets from ``Consumer.end_offsets``)."""
    import anyio

    from kafka_async.consumer import Consumer
    from kafka_async.errors import KafkaError
    from kafka_async.structs import TopicPartition

    out: list[Observed] = []
    found: dict[int, set[int]] = {}
    next_offset: dict[int, int] = {}
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    consumer: Consumer[bytes, bytes] = Consumer(
        bootstrap_servers=bootstrap,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        **consumer_config,
    )
    async with consumer:
        start = anyio.current_time()
        with anyio.fail_after(timeout + 10):
            ends: dict[int, tuple[int, int]] | None = None
            with anyio.move_on_after(min(timeout, 10.0)):
                try:
                    lows = await consumer.beginning_offsets(tps)
                    highs = await consumer.end_offsets(tps)
                except KafkaError:
                    pass  # no end offsets: the expect/idle rules decide when to stop
                else:
                    if len(lows) == len(highs) == len(tps):
                        ends = {tp.partition: (lows[tp], highs[tp]) for tp in tps}
            consumer.assign(tps)
            await consumer.seek_to_beginning(*tps)
            last_new = anyio.current_time()
            done_at: float | None = None
            looked_past = False
            while not _reached(next_offset, ends) or not looked_past:
                if _reached(next_offset, ends):
                    looked_past = True  # one more read past a possibly stale end offset
                now = anyio.current_time()
                if now - start > timeout or now - last_new > idle:
                    break
                if done_at is not None and now - done_at > grace:
                    break
                batches = await consumer.getmany(timeout_ms=200)
                for tp, records in batches.items():
                    for rec in records:
                        out.append(Observed(tp.partition, rec.offset, rec.value))
                        next_offset[tp.partition] = max(
                            next_offset.get(tp.partition, 0), rec.offset + 1
                        )
                        _tag_seen(found, rec.value)
                        last_new = anyio.current_time()
                ends = _trusted(next_offset, ends)
                if done_at is None and _complete(found, expect):
                    done_at = anyio.current_time()
    return out
