"""What the consumer reads and where it is: subscription, assignment, per-partition positions.

Pure bookkeeping shared by the Consumer, the fetcher and the group coordinator; no I/O.

Two offsets matter per partition and they are kept apart on purpose:

* ``position``: the next offset to hand to the application. ``getmany``/``async for`` move it
  as records are returned; commits (manual and auto) write it. This is why auto commit never
  commits a record the application has not seen.
* the fetch offset, owned by the fetcher: where the next Fetch starts. It runs ahead of
  ``position`` by whatever is prefetched.

Every seek, reset or reassignment bumps the partition's ``epoch``; fetched data tagged with an
older epoch is dropped, so a response that was in flight during a seek can never deliver
records from before the seek.

Position validation (KIP-320): a position carries the leader epoch of the last record read
(``leader_epoch``) and the partition leader's epoch it was last known good under
(``current_leader_epoch``). When metadata shows a newer leader epoch, or the position came
from a commit or seek that names an epoch, the partition waits (``awaiting_validation``,
not fetched) until OffsetForLeaderEpoch has told where the new leader's log ends for that
epoch: at or past the position, fetching goes on; below it, records the consumer read are
gone (an unclean leader election truncated the log) and :meth:`complete_validation` decides
as the Java client does: move back to where the logs part (a reset strategy is set), or
report the truncation (``auto_offset_reset="none"``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..errors import ConfigError
from ..structs import OffsetAndMetadata, TopicPartition

#: ListOffsets timestamps for the two reset strategies.
EARLIEST = -2
LATEST = -1

RESET_STRATEGIES: dict[str, int | None] = {"earliest": EARLIEST, "latest": LATEST, "none": None}


class SubscriptionType:
    NONE = "none"
    TOPICS = "topics"
    PATTERN = "pattern"
    USER_ASSIGNED = "user_assigned"


@dataclass(slots=True)
class PartitionState:
    """One assigned partition's consumption state."""

    position: int | None = None
    leader_epoch: int | None = None
    paused: bool = False
    #: The position is unknown: look up the committed offset (group mode) first.
    awaiting_committed: bool = False
    #: Pending offset reset (EARLIEST/LATEST); consulted after a failed committed lookup or
    #: on OFFSET_OUT_OF_RANGE.
    reset_to: int | None = None
    #: Bumped on every seek/reset: fetched data from an older epoch is discarded.
    epoch: int = 0
    #: Being given up (revocation in progress): no more records are handed out or fetched.
    revoking: bool = False
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    #: KIP-320: the partition leader's epoch (from metadata) the position is known good
    #: under; None until the first metadata after the position was set.
    current_leader_epoch: int | None = None
    #: KIP-320: the leader changed (or the position came with an epoch from a commit or a
    #: seek): not fetched until OffsetForLeaderEpoch confirms the position.
    awaiting_validation: bool = False

    @property
    def has_position(self) -> bool:
        return (
            self.position is not None
            and not self.awaiting_committed
            and self.reset_to is None
            and not self.awaiting_validation
        )


class SubscriptionState:
    """Subscription (topics, pattern or manual assignment) and the assigned partitions."""

    def __init__(self, auto_offset_reset: str = "latest") -> None:
        if auto_offset_reset not in RESET_STRATEGIES:
            raise ConfigError(
                f"auto_offset_reset: expected one of {sorted(RESET_STRATEGIES)}, "
                f"got {auto_offset_reset!r}"
            )
        self.default_reset: int | None = RESET_STRATEGIES[auto_offset_reset]
        self.type = SubscriptionType.NONE
        self.topics: frozenset[str] = frozenset()
        self.pattern: re.Pattern[str] | None = None
        self.assignment: dict[TopicPartition, PartitionState] = {}
        #: Bumped whenever the assignment changes, so waiters can notice.
        self.assignment_version = 0

    # -- subscription ------------------------------------------------------------------------

    def _check_not_manual(self, what: str) -> None:
        if self.type == SubscriptionType.USER_ASSIGNED:
            raise ConfigError(
                f"{what}: the consumer uses assign(); call unsubscribe() before subscribing"
            )

    def subscribe(self, topics: Iterable[str]) -> bool:
        """Subscribe to exactly these topics; True if that changed anything."""
        self._check_not_manual("subscribe")
        new = frozenset(topics)
        for t in new:
            if not isinstance(t, str) or not t:
                raise ConfigError(f"subscribe: topic names must be non-empty strings, got {t!r}")
        changed = self.type != SubscriptionType.TOPICS or new != self.topics
        self.type = SubscriptionType.TOPICS
        self.topics = new
        self.pattern = None
        return changed

    def subscribe_pattern(self, pattern: str | re.Pattern[str]) -> None:
        self._check_not_manual("subscribe")
        try:
            compiled = re.compile(pattern)
        except re.error as exc:
            raise ConfigError(f"subscribe: bad pattern {pattern!r}: {exc}") from None
        self.type = SubscriptionType.PATTERN
        self.pattern = compiled
        self.topics = frozenset()

    def match_pattern(self, all_topics: Iterable[str]) -> bool:
        """Pattern subscription: set topics to the matching ones; True if they changed."""
        if self.pattern is None:
            return False
        matched = frozenset(
            t for t in all_topics if self.pattern.fullmatch(t) and not t.startswith("__")
        )
        if matched == self.topics:
            return False
        self.topics = matched
        return True

    def assign_from_user(
        self, partitions: Iterable[TopicPartition], *, awaiting_committed: bool = False
    ) -> None:
        """Manual assignment; with a group id the committed offsets are looked up first."""
        if self.type in (SubscriptionType.TOPICS, SubscriptionType.PATTERN):
            raise ConfigError("assign: the consumer is subscribed; call unsubscribe() first")
        tps = list(partitions)
        for tp in tps:
            if not isinstance(tp, TopicPartition):
                raise ConfigError(f"assign: expected TopicPartition values, got {tp!r}")
        self.type = SubscriptionType.USER_ASSIGNED
        self.topics = frozenset(tp.topic for tp in tps)
        self._set_assignment(tps, awaiting_committed=awaiting_committed)

    def assign_from_group(self, partitions: Iterable[TopicPartition], *, add: bool) -> None:
        """Partitions handed over by the group; ``add`` keeps the current ones
        (cooperative protocol), otherwise they are replaced."""
        tps = list(partitions)
        if add:
            for tp in tps:
                if tp not in self.assignment:
                    self.assignment[tp] = PartitionState(awaiting_committed=True)
            self.assignment_version += 1
        else:
            self._set_assignment(tps, awaiting_committed=True)

    def remove(self, partitions: Iterable[TopicPartition]) -> None:
        for tp in partitions:
            self.assignment.pop(tp, None)
        self.assignment_version += 1

    def _set_assignment(self, tps: list[TopicPartition], *, awaiting_committed: bool) -> None:
        old = self.assignment
        self.assignment = {}
        for tp in tps:
            state = old.get(tp)
            if state is None:
                # A group member looks up the committed offset; a manual one too when it has
                # a group (the Consumer decides), else it resets.
                state = PartitionState(awaiting_committed=awaiting_committed)
            self.assignment[tp] = state
        self.assignment_version += 1

    def unsubscribe(self) -> None:
        self.type = SubscriptionType.NONE
        self.topics = frozenset()
        self.pattern = None
        self.assignment = {}
        self.assignment_version += 1

    @property
    def is_group_managed(self) -> bool:
        return self.type in (SubscriptionType.TOPICS, SubscriptionType.PATTERN)

    # -- positions ---------------------------------------------------------------------------

    def state(self, tp: TopicPartition) -> PartitionState:
        try:
            return self.assignment[tp]
        except KeyError:
            raise ConfigError(f"{tp} is not assigned to this consumer") from None

    def seek(self, tp: TopicPartition, offset: int, leader_epoch: int | None = None) -> None:
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise ConfigError(f"seek: offset must be a non-negative integer, got {offset!r}")
        st = self.state(tp)
        st.position = offset
        st.leader_epoch = leader_epoch
        st.awaiting_committed = False
        st.reset_to = None
        st.epoch += 1
        # An epoch says which log the offset was read from: check it against the leader's.
        st.awaiting_validation = leader_epoch is not None and leader_epoch >= 0
        st.current_leader_epoch = None

    def request_reset(self, tp: TopicPartition, strategy: int | None) -> None:
        """Schedule a reset to EARLIEST/LATEST (None: use the configured default)."""
        st = self.state(tp)
        st.reset_to = self.default_reset if strategy is None else strategy
        st.awaiting_committed = False
        st.awaiting_validation = False
        st.epoch += 1

    def set_committed_or_reset(
        self, tp: TopicPartition, committed: OffsetAndMetadata | None
    ) -> bool:
        """The committed-offset lookup came back. Returns False if a reset is now needed
        and none is configured (auto_offset_reset="none")."""
        st = self.assignment.get(tp)
        if st is None or not st.awaiting_committed:
            return True
        st.awaiting_committed = False
        if committed is not None and committed.offset >= 0:
            st.position = committed.offset
            st.leader_epoch = committed.leader_epoch if committed.leader_epoch >= 0 else None
            st.epoch += 1
            # A commit names the epoch of the last record read: the log may have been
            # truncated since (KIP-320), so the position is checked before fetching.
            st.awaiting_validation = st.leader_epoch is not None
            st.current_leader_epoch = None
            return True
        st.reset_to = self.default_reset
        return self.default_reset is not None

    def set_reset_position(self, tp: TopicPartition, offset: int, epoch: int) -> None:
        """A ListOffsets answer for a pending reset; ignored if the partition was seeked
        since the request was made (``epoch`` differs)."""
        st = self.assignment.get(tp)
        if st is None or st.reset_to is None or st.epoch != epoch:
            return
        st.reset_to = None
        st.position = offset
        st.leader_epoch = None
        st.current_leader_epoch = None
        st.epoch += 1

    # -- KIP-320 position validation -------------------------------------------------------

    def note_leader_epoch(self, tp: TopicPartition, leader_epoch: int) -> bool:
        """Metadata shows ``leader_epoch`` for ``tp``'s leader. Returns True when the
        position must now be validated: the leader changed since the position was known
        good, and the position names the epoch of what was read. The first epoch seen for
        a position is taken as the one it is good under; an older one (a broker whose
        metadata lags) changes nothing."""
        st = self.assignment.get(tp)
        if (
            st is None
            or leader_epoch < 0
            or st.position is None
            or st.awaiting_committed
            or st.reset_to is not None
        ):
            return False
        known = st.current_leader_epoch
        if known is not None and leader_epoch <= known:
            return False
        st.current_leader_epoch = leader_epoch
        if st.awaiting_validation:
            if known is not None:
                st.epoch += 1  # an answer from the old leader, still on its way, is stale
            return False
        if known is None or st.leader_epoch is None:
            return False
        st.awaiting_validation = True
        # Data fetched from the old leader is not handed out: it may be among what the new
        # leader's log no longer holds.
        st.epoch += 1
        return True

    def needing_validation(self) -> dict[TopicPartition, tuple[int, int, int]]:
        """Partitions awaiting validation: ``{tp: (leader epoch of the last record read,
        position, partition epoch)}`` (the epoch to pass back to
        :meth:`complete_validation`)."""
        return {
            tp: (st.leader_epoch, st.position, st.epoch)
            for tp, st in self.assignment.items()
            if st.awaiting_validation
            and st.position is not None
            and st.leader_epoch is not None
            and not st.awaiting_committed
            and st.reset_to is None
        }

    def complete_validation(
        self, tp: TopicPartition, epoch: int, end_epoch: int, end_offset: int
    ) -> tuple[int, int] | None:
        """OffsetForLeaderEpoch answered for ``tp``: the new leader's log holds epoch
        ``end_epoch`` (the largest not above the one asked for) up to ``end_offset``.

        At or past the position: the position is good, fetching goes on. Below it (or no
        such epoch: -1): the log was truncated under the consumer; with a reset strategy
        the position moves back to ``end_offset`` (or, when the leader knows no such epoch,
        the configured reset runs), and with "none" the partition stays unfetched and
        ``(position, end_offset)`` is returned: a truncation to report (until a seek).
        Ignored when the partition moved since the request (``epoch`` differs)."""
        st = self.assignment.get(tp)
        if st is None or st.epoch != epoch or not st.awaiting_validation or st.position is None:
            return None
        if end_epoch < 0:
            end_offset = -1
        if end_offset >= 0 and end_offset >= st.position:
            st.awaiting_validation = False
            return None
        if self.default_reset is None:
            return st.position, end_offset
        st.awaiting_validation = False
        return self.on_divergence(tp, epoch, end_epoch, end_offset)

    def skip_validation(self, tp: TopicPartition, epoch: int) -> None:
        """The leader cannot validate (a broker without OffsetForLeaderEpoch v3): fetch
        without it, as the Java client does; Fetch's own diverging-epoch check remains."""
        st = self.assignment.get(tp)
        if st is not None and st.epoch == epoch:
            st.awaiting_validation = False

    def on_divergence(
        self, tp: TopicPartition, epoch: int, diverging_epoch: int, end_offset: int
    ) -> tuple[int, int] | None:
        """KIP-320: the leader's log matches what was read only up to ``end_offset`` (the end
        of ``diverging_epoch``, the last leader epoch both share). Moves the position back
        to that offset when ``auto_offset_reset`` allows moving on by itself (the Java
        client's rule: records from the fork on are read again from the new leader), or,
        when the epoch is unknown to the leader, schedules the configured reset. Returns
        ``(position, end_offset)`` when it may not (reset "none"): a truncation to report.
        Ignored when the partition moved since (``epoch`` differs) or nothing was lost."""
        st = self.assignment.get(tp)
        if st is None or st.epoch != epoch or st.position is None:
            return None
        if end_offset >= 0 and end_offset >= st.position:
            st.leader_epoch = diverging_epoch if diverging_epoch >= 0 else None
            st.epoch += 1
            return None
        if self.default_reset is None:
            return st.position, end_offset
        if end_offset < 0:
            self.request_reset(tp, None)
            return None
        st.position = end_offset
        st.leader_epoch = diverging_epoch if diverging_epoch >= 0 else None
        st.epoch += 1
        return None

    def needing_committed(self) -> list[TopicPartition]:
        return [tp for tp, st in self.assignment.items() if st.awaiting_committed]

    def needing_reset(self) -> dict[TopicPartition, int]:
        return {
            tp: st.reset_to
            for tp, st in self.assignment.items()
            if st.reset_to is not None and not st.awaiting_committed
        }

    def missing_positions(self) -> list[TopicPartition]:
        """Partitions with neither position nor a way to get one (reset "none")."""
        return [
            tp
            for tp, st in self.assignment.items()
            if st.position is None and not st.awaiting_committed and st.reset_to is None
        ]

    def fetchable(self) -> list[TopicPartition]:
        return [
            tp
            for tp, st in self.assignment.items()
            if st.has_position and not st.paused and not st.revoking
        ]

    def mark_revoking(self, tps: Iterable[TopicPartition]) -> None:
        """Freeze partitions about to be given up: their positions stop moving, so the
        commit made for them covers exactly what the application received."""
        for tp in tps:
            st = self.assignment.get(tp)
            if st is not None:
                st.revoking = True

    def consumed_offsets(self) -> dict[TopicPartition, OffsetAndMetadata]:
        """Positions of every assigned partition that has one (what a commit writes)."""
        return {
            tp: OffsetAndMetadata(
                st.position, "", -1 if st.leader_epoch is None else st.leader_epoch
            )
            for tp, st in self.assignment.items()
            if st.position is not None and not st.awaiting_committed
        }

    # -- pause -------------------------------------------------------------------------------

    def pause(self, tps: Iterable[TopicPartition]) -> None:
        for tp in tps:
            self.state(tp).paused = True

    def resume(self, tps: Iterable[TopicPartition]) -> None:
        for tp in tps:
            self.state(tp).paused = False

    def paused(self) -> frozenset[TopicPartition]:
        return frozenset(tp for tp, st in self.assignment.items() if st.paused)
