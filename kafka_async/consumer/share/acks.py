"""Acknowledgement bookkeeping of the share consumer, as plain data (no I/O, no clock).

A record a share fetch acquired for this member goes through::

    buffered --delivered to the application--> delivered --acknowledge()--> pending
        |                                          |                          |
        |  (close: released)                       |  (implicit mode: the     | taken into a
        +-------------------> pending <------------+   next poll accepts it)  v request
                                                                            in flight
                                                                              |
                                                  settled: an error or None per partition

*Pending* acknowledgements wait for the next ShareFetch to the broker that delivered the
records (they ride on it) or for a ShareAcknowledge (``commit()``, ``close()``). Offsets a
fetch acquired that hold no record the application can see (control records, compacted-away
offsets) are acknowledged as gaps at once. The book never waits and never sends: the share
fetcher takes what is pending per broker and reports how each request ended.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from ...errors import KafkaError
from ...structs import TopicPartition
from .errors import AcknowledgementStateError


class AcknowledgeType(enum.IntEnum):
    """How a delivered record is acknowledged (Kafka's wire values, KIP-932 and KIP-1222).

    ``ACCEPT``: processed; never delivered again. ``RELEASE``: give it back; the broker
    delivers it again (its delivery count goes up), to this or another member.
    ``REJECT``: unprocessable; never delivered again (archived). ``RENEW``: still being
    processed; the broker restarts the record's acquisition lock, and the record stays with
    this member, which acknowledges it later with one of the three others (ShareAcknowledge
    v2, Apache Kafka 4.2+).
    """

    ACCEPT = 1
    RELEASE = 2
    REJECT = 3
    RENEW = 4


#: The wire value for an acquired offset that holds no deliverable record.
GAP = 0
#: The wire value of a renewal (KIP-1222): never rides on a ShareFetch that also fetches.
RENEW = int(AcknowledgeType.RENEW)
#: A RENEW ``AcknowledgementBook.renewals`` waits for whose request was not answered yet.
UNSETTLED = object()
#: Names of the wire values, as counted in ``AcknowledgementBook.sent``.
TYPE_NAMES = {GAP: "gap", 1: "accept", 2: "release", 3: "reject", RENEW: "renew"}

#: ``(first offset, last offset, types)``: one type for the whole range, or one per offset.
Batch = tuple[int, int, tuple[int, ...]]


def acknowledgement_batches(acks: Mapping[int, int]) -> list[Batch]:
    """Encode ``{offset: type}`` as Kafka's acknowledgement batches: one batch per run of
    consecutive offsets, carrying a single type when every offset of the run has it and
    one type per offset otherwise."""
    batches: list[Batch] = []
    first = last = -2
    types: list[int] = []
    for offset in sorted(acks):
        if offset != last + 1 and types:
            batches.append(_batch(first, last, types))
            types = []
        if not types:
            first = offset
        types.append(int(acks[offset]))
        last = offset
    if types:
        batches.append(_batch(first, last, types))
    return batches


def _batch(first: int, last: int, types: list[int]) -> Batch:
    if all(t == types[0] for t in types):
        return (first, last, (types[0],))
    return (first, last, tuple(types))


#: ``{partition: {offset: type}}``: acknowledgements for one broker.
Acks = dict[TopicPartition, dict[int, int]]

#: The application's acknowledgement commit callback (the Java client's
#: ``AcknowledgementCommitCallback``): called once per partition whose acknowledgements the
#: broker answered, with ``{partition: offsets}`` and the partition's error (None: applied).
AcknowledgementCommitCallback = Callable[
    [Mapping[TopicPartition, frozenset[int]], KafkaError | None], None
]

#: What the book tells its listener when a partition's acknowledgements settle: the
#: partition, the offsets of records (not gaps) and the error (None: applied).
SettledListener = Callable[[TopicPartition, frozenset[int], KafkaError | None], None]


@dataclass
class AcknowledgementBook:
    """What this member owes the brokers: delivered records not yet acknowledged, and
    acknowledgements not yet sent, by the broker whose share session acquired them."""

    #: ``{partition: {offset: node id}}``: handed to the application, not acknowledged.
    delivered: dict[TopicPartition, dict[int, int]] = field(default_factory=dict)
    #: ``{partition: {offset: delivery count}}`` of the delivered records (which delivery
    #: of the record the application holds).
    delivery_counts: dict[TopicPartition, dict[int, int]] = field(default_factory=dict)
    #: ``{node id: {partition: {offset: type}}}``: acknowledged, not sent yet.
    pending: dict[int, Acks] = field(default_factory=dict)
    #: How each settled partition's acknowledgements ended since :meth:`take_results`
    #: (None: the broker applied them; else the typed error).
    results: dict[TopicPartition, KafkaError | None] = field(default_factory=dict)
    #: Offsets acknowledged per type name ("accept", "release", "reject", "gap", "renew"),
    #: as sent and applied.
    sent: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TYPE_NAMES.values(), 0))
    #: Offsets whose acknowledgement failed (a per-partition error or a lost request).
    failed: int = 0
    #: ``{(partition, offset): outcome}`` of the RENEWs a ``renew()`` call waits for:
    #: :data:`UNSETTLED` until a request carrying it is answered, then None or the error.
    renewals: dict[tuple[TopicPartition, int], KafkaError | object | None] = field(
        default_factory=dict
    )
    #: Told of each settled partition (the consumer's acknowledgement commit callback).
    listener: SettledListener | None = field(default=None, repr=False)

    # -- records going to the application ----------------------------------------------------

    def deliver(
        self, tp: TopicPartition, offset: int, node_id: int, delivery_count: int = 0
    ) -> None:
        """The record was handed to the application; it now waits for its acknowledgement."""
        self.delivered.setdefault(tp, {})[offset] = node_id
        self.delivery_counts.setdefault(tp, {})[offset] = delivery_count

    def add(self, node_id: int, tp: TopicPartition, offset: int, ack: int) -> None:
        """An acknowledgement decided without the application (a gap; a buffered record
        released at close; a record that failed to deserialize)."""
        self.pending.setdefault(node_id, {}).setdefault(tp, {})[offset] = ack

    def acknowledge(
        self,
        tp: TopicPartition,
        offset: int,
        ack: AcknowledgeType,
        delivery_count: int | None = None,
    ) -> None:
        """The application acknowledged a delivered record (once). ``delivery_count`` (the
        record's, when known) must be the delivery the application holds now: a record
        object kept from an earlier delivery of the same offset is refused."""
        if not isinstance(ack, AcknowledgeType):
            raise AcknowledgementStateError(
                f"acknowledge type: expected an AcknowledgeType, got {ack!r}"
            )
        if ack is AcknowledgeType.RENEW:
            self.renew(tp, offset, delivery_count)
            return
        offsets = self.delivered.get(tp)
        node_id = None if offsets is None else offsets.get(offset)
        if offsets is None or node_id is None:
            raise AcknowledgementStateError(
                f"{tp.topic}-{tp.partition} offset {offset} is not a record this consumer "
                "delivered and has not acknowledged yet (acknowledged already, or never "
                "delivered to it)"
            )
        counts = self.delivery_counts.get(tp, {})
        held = counts.get(offset)
        if delivery_count is not None and held and delivery_count != held:
            raise AcknowledgementStateError(
                f"{tp.topic}-{tp.partition} offset {offset}: this record object is delivery "
                f"{delivery_count}, the consumer holds delivery {held} of it (acknowledge the "
                "record the last poll returned)"
            )
        del offsets[offset]
        counts.pop(offset, None)
        if not offsets:
            del self.delivered[tp]
            self.delivery_counts.pop(tp, None)
        self.add(node_id, tp, offset, int(ack))

    def renew(self, tp: TopicPartition, offset: int, delivery_count: int | None = None) -> int:
        """Ask for a delivered record's acquisition lock to be renewed: a RENEW waits for
        the broker that delivered it, and the record stays delivered (the application still
        owes its acknowledgement). Returns that broker's id."""
        node_id = self.holder(tp, offset, delivery_count)
        self.add(node_id, tp, offset, RENEW)
        return node_id

    def holder(self, tp: TopicPartition, offset: int, delivery_count: int | None = None) -> int:
        """The broker whose session delivered the record the application holds (refused
        when it holds no such record, or holds a later delivery of it)."""
        node_id = self.delivered.get(tp, {}).get(offset)
        if node_id is None:
            raise AcknowledgementStateError(
                f"renew: {tp.topic}-{tp.partition} offset {offset} is not a record this "
                "consumer delivered and has not acknowledged yet (acknowledged already, or "
                "never delivered to it)"
            )
        held = self.delivery_counts.get(tp, {}).get(offset)
        if delivery_count is not None and held and delivery_count != held:
            raise AcknowledgementStateError(
                f"renew: {tp.topic}-{tp.partition} offset {offset}: this record object is "
                f"delivery {delivery_count}, the consumer holds delivery {held} of it"
            )
        return node_id

    def renewals_pending(self, node_id: int) -> bool:
        """RENEWs wait for ``node_id`` (they go in a ShareAcknowledge of their own kind)."""
        return any(RENEW in offsets.values() for offsets in self.pending.get(node_id, {}).values())

    def acknowledge_delivered(self, ack: AcknowledgeType) -> int:
        """Acknowledge every delivered record with ``ack`` (implicit mode accepts the
        previous poll's records; close releases what explicit mode left). Returns how many."""
        count = 0
        for tp, offsets in self.delivered.items():
            for offset, node_id in offsets.items():
                self.add(node_id, tp, offset, int(ack))
                count += 1
        self.delivered.clear()
        self.delivery_counts.clear()
        return count

    def unacknowledged(self) -> int:
        """Delivered records still waiting for their acknowledgement."""
        return sum(len(offsets) for offsets in self.delivered.values())

    # -- acknowledgements going to the brokers -----------------------------------------------

    def pending_nodes(self) -> set[int]:
        return {node for node, acks in self.pending.items() if acks}

    def pending_count(self) -> int:
        return sum(len(o) for acks in self.pending.values() for o in acks.values())

    def take(
        self,
        node_id: int,
        only: Iterable[TopicPartition] | None = None,
        *,
        renewals: bool = True,
    ) -> Acks:
        """Remove and return what is pending for ``node_id`` (only those partitions, if
        given): it goes into the next request to that broker. ``renewals=False`` leaves the
        RENEWs pending (a ShareFetch that fetches cannot carry them: KIP-1222)."""
        acks = self.pending.get(node_id)
        if not acks:
            return {}
        if not renewals:
            taken_now: Acks = {}
            for tp in list(acks) if only is None else [t for t in only if t in acks]:
                offsets = acks[tp]
                moved = {o: a for o, a in offsets.items() if a != RENEW}
                if not moved:
                    continue
                taken_now[tp] = moved
                for o in moved:
                    del offsets[o]
                if not offsets:
                    del acks[tp]
            if not acks:
                del self.pending[node_id]
            return taken_now
        if only is None:
            del self.pending[node_id]
            return acks
        wanted = set(only)
        taken = {tp: offsets for tp, offsets in acks.items() if tp in wanted}
        for tp in taken:
            del acks[tp]
        if not acks:
            del self.pending[node_id]
        return taken

    def settle(self, taken: Acks, errors: Mapping[TopicPartition, KafkaError | None]) -> None:
        """A request carrying ``taken`` was answered (``errors`` per partition; a partition
        missing from the answer counts as applied) or failed (every partition errs). The
        listener hears of each partition that carried record acknowledgements, once the
        book is up to date. A partition that carried only RENEWs leaves ``results`` alone
        (``renew()`` reports its outcome; nothing was settled)."""
        told: list[tuple[TopicPartition, frozenset[int], KafkaError | None]] = []
        for tp, offsets in taken.items():
            error = errors.get(tp)
            if self.renewals:
                for offset, ack in offsets.items():
                    if ack == RENEW and (tp, offset) in self.renewals:
                        self.renewals[tp, offset] = error
            if any(ack != RENEW for ack in offsets.values()):
                self.results[tp] = error if error is not None else self.results.get(tp)
            if error is None:
                for ack in offsets.values():
                    self.sent[TYPE_NAMES.get(ack, "gap")] += 1
            else:
                self.failed += len(offsets)
            records = frozenset(o for o, ack in offsets.items() if ack != GAP)
            if records:
                told.append((tp, records, error))
        if self.listener is not None:
            for tp, records, error in told:
                self.listener(tp, records, error)

    def fail(self, taken: Acks, error: KafkaError) -> None:
        """The request carrying ``taken`` got no answer (or a request-level error)."""
        self.settle(taken, dict.fromkeys(taken, error))

    def take_results(self) -> dict[TopicPartition, KafkaError | None]:
        results, self.results = self.results, {}
        return results


__all__ = [
    "GAP",
    "RENEW",
    "TYPE_NAMES",
    "UNSETTLED",
    "AcknowledgeType",
    "AcknowledgementBook",
    "AcknowledgementCommitCallback",
    "Acks",
    "SettledListener",
    "acknowledgement_batches",
]
