"""Transactions: a pure state machine plus the coordinator calls that drive it.

``TransactionState`` is the whole truth about where a transactional producer is; every
transition is a synchronous method that checks it is legal and raises a typed error if not.
The async ``TransactionCoordinator`` does the talking (FindCoordinator, AddPartitionsToTxn,
AddOffsetsToTxn, TxnOffsetCommit, EndTxn) and feeds the outcomes back into the state.

Lifecycle::

    READY --begin--> IN_TRANSACTION --commit--> COMMITTING --EndTxn ok--> READY
                           |  \\--abort--> ABORTING --EndTxn ok--> READY
                           v
                    ABORTABLE_ERROR --abort--> ABORTING
    any --fenced / fatal--> FATAL_ERROR (the producer must be closed)

Partitions join the transaction lazily: the first batch for a partition marks it pending;
the sender adds pending partitions with one AddPartitionsToTxn before draining them, and
only partitions already in the transaction may be drained.

Transactions version 2 (KIP-890 part 2): where the cluster finalized the feature
``transaction.version`` at 2 or above (ApiVersions v3+), a transaction needs no
AddPartitionsToTxn and no AddOffsetsToTxn: Produce v12 adds its partition to the transaction
(the partition leader asks the coordinator itself) and TxnOffsetCommit v5 adds the group;
every EndTxn (v5) then bumps the producer epoch (or hands out a new producer id once the epoch
is exhausted) and answers with what the next transaction uses. Where the level is below 2
the producer keeps those versions below the transactions-version-2 ones (Produce <= 11,
TxnOffsetCommit <= 4, EndTxn <= 4), as the Java client does. The level is read when a
transaction begins (``update_transaction_version``), from the newest feature epoch any
connection reported, and holds for the whole transaction.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from ..errors import (
    BrokerResponseError,
    InvalidProducerEpochError,
    ProducerFencedError,
    TransactionAbortedError,
    TransactionStateError,
)
from ..structs import TopicPartition

__all__ = [
    "TRANSACTION_VERSION_FEATURE",
    "GroupMetadata",
    "TransactionAbortedError",
    "TransactionState",
    "TransactionStateError",
    "TxnState",
    "group_metadata_fields",
]


#: The finalized feature whose level 2 turns on transactions version 2 (KIP-890 part 2).
TRANSACTION_VERSION_FEATURE = "transaction.version"
#: Highest versions a transactional producer uses while transactions version 2 is off: the
#: next ones (Produce 12, TxnOffsetCommit 5, EndTxn 5) mean version 2 to the broker.
TV1_MAX_PRODUCE = 11
TV1_MAX_TXN_OFFSET_COMMIT = 4
TV1_MAX_END_TXN = 4


def newest_finalized_features(
    reports: Iterable[tuple[int, Mapping[str, int]]],
) -> tuple[int, Mapping[str, int]] | None:
    """Of ``(finalized_features_epoch, finalized levels)`` reports (one per connection), the
    newest: the highest epoch, as the Java client's ApiVersions keeps it. None if no report
    has an epoch (brokers before ApiVersions v3 report -1)."""
    best: tuple[int, Mapping[str, int]] | None = None
    for epoch, levels in reports:
        if epoch >= 0 and (best is None or epoch > best[0]):
            best = (epoch, levels)
    return best


_E = TypeVar("_E", bound=BaseException)


class TxnState(enum.Enum):
    """States of a transactional producer."""

    UNINITIALIZED = "uninitialized"
    READY = "ready"
    IN_TRANSACTION = "in_transaction"
    COMMITTING = "committing"
    ABORTING = "aborting"
    ABORTABLE_ERROR = "abortable_error"
    FATAL_ERROR = "fatal_error"
    #: The open transaction was flushed and left for another process to end with EndTxn
    #: (the Spark exactly-once sink's write tasks); the producer can only be closed now.
    HANDED_OFF = "handed_off"


class GroupMetadata:
    """KIP-447 consumer group metadata for ``send_offsets_to_transaction``."""

    __slots__ = ("generation_id", "group_id", "group_instance_id", "member_id")

    def __init__(
        self,
        group_id: str,
        generation_id: int = -1,
        member_id: str = "",
        group_instance_id: str | None = None,
    ) -> None:
        self.group_id = group_id
        self.generation_id = generation_id
        self.member_id = member_id
        self.group_instance_id = group_instance_id

    def __repr__(self) -> str:
        return (
            f"GroupMetadata(group_id={self.group_id!r}, generation_id={self.generation_id}, "
            f"member_id={self.member_id!r}, group_instance_id={self.group_instance_id!r})"
        )


def group_metadata_fields(group_metadata: Any) -> GroupMetadata:
    """Normalise what users pass as group metadata.

    Accepts a :class:`GroupMetadata`, any object with ``group_id`` (and optionally
    ``generation_id``, ``member_id``, ``group_instance_id``) attributes such as the consumer's
    own group metadata, a mapping with those keys, or a bare group id string (no KIP-447
    fencing then: generation -1, empty member id).
    """
    if isinstance(group_metadata, GroupMetadata):
        return group_metadata
    if isinstance(group_metadata, str):
        return GroupMetadata(group_metadata)
    if isinstance(group_metadata, Mapping):
        get = group_metadata.get
    else:

        def get(name: str, default: Any = None) -> Any:
            return getattr(group_metadata, name, default)

    group_id = get("group_id")
    if not isinstance(group_id, str) or not group_id:
        raise TypeError(
            "group_metadata needs a non-empty group_id (a GroupMetadata, an object with "
            "group_id/generation_id/member_id/group_instance_id, or a dict); "
            f"got {group_metadata!r}"
        )
    generation_id = get("generation_id", -1)
    member_id = get("member_id", "")
    instance = get("group_instance_id", None)
    if not isinstance(generation_id, int) or isinstance(generation_id, bool):
        raise TypeError(f"group_metadata.generation_id must be an int, got {generation_id!r}")
    if not isinstance(member_id, str):
        raise TypeError(f"group_metadata.member_id must be a str, got {member_id!r}")
    if instance is not None and not isinstance(instance, str):
        raise TypeError(f"group_metadata.group_instance_id must be a str, got {instance!r}")
    return GroupMetadata(group_id, generation_id, member_id, instance)


class TransactionState:
    """The transactional producer's state. Pure: no I/O, no awaiting."""

    def __init__(self, transactional_id: str, transaction_timeout_ms: int) -> None:
        self.transactional_id = transactional_id
        self.transaction_timeout_ms = transaction_timeout_ms
        self.state = TxnState.UNINITIALIZED
        self.producer_id = -1
        self.producer_epoch = -1
        #: Partitions the coordinator knows are part of the current transaction.
        self.partitions: set[TopicPartition] = set()
        #: Partitions that received records but were not added to the transaction yet.
        self.pending: set[TopicPartition] = set()
        #: The error that moved us to ABORTABLE_ERROR or FATAL_ERROR.
        self.last_error: BaseException | None = None
        #: Transactions version 2 (KIP-890 part 2) for the current transaction; see the
        #: module docstring. Changes only between transactions.
        self.tv2 = False
        self._features_epoch = -1

    def __repr__(self) -> str:
        return (
            f"<TransactionState {self.transactional_id!r} {self.state.value} "
            f"pid={self.producer_id} epoch={self.producer_epoch} "
            f"partitions={len(self.partitions)} pending={len(self.pending)}>"
        )

    # -- checks ----------------------------------------------------------------------------

    def _require(self, *states: TxnState, action: str) -> None:
        if self.state is TxnState.FATAL_ERROR:
            raise TransactionStateError(
                f"cannot {action}: the producer hit a fatal error ({self.last_error!r}); "
                "close it and create a new one"
            ) from self.last_error
        if self.state not in states:
            allowed = ", ".join(s.value for s in states)
            raise TransactionStateError(
                f"cannot {action} in state {self.state.value} (needs: {allowed})"
            ) from self.last_error

    def check_can_send(self) -> None:
        """Records of a transactional producer may only be sent inside a transaction."""
        if self.state is TxnState.IN_TRANSACTION:
            return
        if self.state is TxnState.ABORTABLE_ERROR:
            raise TransactionStateError(
                f"the transaction must be aborted after an error: {self.last_error!r}"
            ) from self.last_error
        self._require(TxnState.IN_TRANSACTION, action="send outside a transaction")

    # -- transitions -----------------------------------------------------------------------

    def initialized(self, producer_id: int, producer_epoch: int) -> None:
        """InitProducerId succeeded."""
        if self.state is TxnState.FATAL_ERROR:
            return
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.state = TxnState.READY

    def update_transaction_version(self, features_epoch: int, level: int | None) -> None:
        """The cluster's ``transaction.version`` level as of finalized features epoch
        ``features_epoch``; taken if newer than the last one seen (Java's
        ``maybeUpdateTransactionV2Enabled``). Call it between transactions only."""
        if features_epoch <= self._features_epoch:
            return
        self._features_epoch = features_epoch
        self.tv2 = level is not None and level >= 2

    def epoch_bumped(self, producer_id: int, producer_epoch: int) -> None:
        """EndTxn v5+ gave the producer a new epoch (or id) for the next transaction."""
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch

    def begin(self) -> None:
        """Start a transaction (local only: the coordinator learns of it from the first
        AddPartitionsToTxn or AddOffsetsToTxn)."""
        self._require(TxnState.READY, action="begin a transaction")
        self.partitions.clear()
        self.pending.clear()
        self.last_error = None
        self.state = TxnState.IN_TRANSACTION

    def add_partition(self, tp: TopicPartition) -> None:
        """A record for ``tp`` was appended in the transaction. With transactions version 2
        the partition is in at once: its Produce request adds it (no AddPartitionsToTxn)."""
        if tp not in self.partitions:
            if self.tv2:
                self.partitions.add(tp)
            else:
                self.pending.add(tp)

    def partitions_added(self, tps: Iterable[TopicPartition]) -> None:
        """AddPartitionsToTxn succeeded for ``tps``."""
        for tp in tps:
            self.pending.discard(tp)
            self.partitions.add(tp)

    def can_send(self, tp: TopicPartition) -> bool:
        """May batches of ``tp`` be drained (the partition is part of the transaction)?"""
        return tp in self.partitions

    def check_can_add_offsets(self) -> None:
        """``send_offsets_to_transaction`` needs an open transaction."""
        self._require(TxnState.IN_TRANSACTION, action="send offsets to the transaction")

    def begin_commit(self) -> None:
        """Start committing; only from IN_TRANSACTION."""
        if self.state is TxnState.ABORTABLE_ERROR:
            raise TransactionStateError(
                f"cannot commit: the transaction failed and must be aborted ({self.last_error!r})"
            ) from self.last_error
        self._require(TxnState.IN_TRANSACTION, TxnState.COMMITTING, action="commit")
        self.state = TxnState.COMMITTING

    def begin_abort(self) -> None:
        """Start aborting; from IN_TRANSACTION or ABORTABLE_ERROR (or a retried abort)."""
        self._require(
            TxnState.IN_TRANSACTION,
            TxnState.ABORTABLE_ERROR,
            TxnState.ABORTING,
            action="abort",
        )
        self.state = TxnState.ABORTING

    def completed(self) -> None:
        """EndTxn succeeded: ready for the next transaction."""
        if self.state in (TxnState.COMMITTING, TxnState.ABORTING):
            self.partitions.clear()
            self.pending.clear()
            self.state = TxnState.READY

    def handed_off(self) -> None:
        """The flushed transaction now belongs to whoever ends it by producer id and epoch:
        close() must not abort it, and nothing more may be sent."""
        self._require(TxnState.IN_TRANSACTION, action="hand the transaction off")
        self.state = TxnState.HANDED_OFF

    def abortable_error(self, error: BaseException) -> None:
        """A send inside the transaction failed: it can only be aborted now."""
        if self.state in (TxnState.IN_TRANSACTION, TxnState.COMMITTING):
            self.last_error = error
            self.state = TxnState.ABORTABLE_ERROR

    def fatal_error(self, error: BaseException) -> None:
        """Fenced or otherwise unusable: every later call raises."""
        self.last_error = error
        self.state = TxnState.FATAL_ERROR

    @property
    def is_fatal(self) -> bool:
        return self.state is TxnState.FATAL_ERROR

    @property
    def in_transaction(self) -> bool:
        """True between ``begin`` and the end of commit/abort."""
        return self.state in (
            TxnState.IN_TRANSACTION,
            TxnState.COMMITTING,
            TxnState.ABORTING,
            TxnState.ABORTABLE_ERROR,
        )


#: Error names after which a transactional producer can never continue.
FATAL_ERROR_NAMES = frozenset(
    {
        "PRODUCER_FENCED",
        "INVALID_PRODUCER_EPOCH",
        "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
        "INVALID_PRODUCER_ID_MAPPING",
        "UNSUPPORTED_VERSION",
        "UNSUPPORTED_FOR_MESSAGE_FORMAT",
        "INVALID_TXN_STATE",
        "CLUSTER_AUTHORIZATION_FAILED",
    }
)


def is_fatal_txn_error(error: BaseException) -> bool:
    """True for coordinator/broker errors that end a transactional producer's life."""
    return isinstance(error, BrokerResponseError) and error.name in FATAL_ERROR_NAMES


#: Coordinator answers (EndTxn, AddOffsetsToTxn) after which the transaction can only be
#: aborted, as the Java client's TransactionManager has them: TRANSACTION_ABORTABLE
#: (KIP-890), a group the producer may not use, and a producer id the coordinator lost
#: (which the abort's epoch bump recovers from).
ABORTABLE_COORDINATOR_ERRORS = frozenset(
    {"TRANSACTION_ABORTABLE", "GROUP_AUTHORIZATION_FAILED", "UNKNOWN_PRODUCER_ID"}
)


def coordinator_error_is_fatal(error: BaseException, *, aborting: bool) -> bool:
    """Does this non-retriable coordinator answer end the producer? Fatal errors, and a
    TRANSACTION_ABORTABLE answer to an abort (nothing is left to recover with; the Java
    client fails with "Failed to abort transaction" there too)."""
    if is_fatal_txn_error(error):
        return True
    return (
        aborting
        and isinstance(error, BrokerResponseError)
        and (error.name == "TRANSACTION_ABORTABLE")
    )


def as_fenced(error: _E) -> _E | ProducerFencedError:
    """A coordinator's INVALID_PRODUCER_EPOCH (to EndTxn, AddPartitionsToTxn,
    AddOffsetsToTxn, TxnOffsetCommit) as what it means there: :class:`ProducerFencedError`
    (cause: the broker's error), as the Java client maps it. Under transactions version 2 a
    newer instance's fencing reaches an old one this way (TxnOffsetCommit v5). Other errors
    are returned as they are."""
    if isinstance(error, InvalidProducerEpochError):
        fenced = ProducerFencedError(
            f"fenced: the coordinator answered {error.name} (a newer producer with the same "
            "transactional id, or a newer epoch, exists)"
        )
        fenced.__cause__ = error
        return fenced
    return error


def coordinator_error_is_abortable(error: BaseException) -> bool:
    """Does this non-retriable coordinator answer leave the transaction abortable?"""
    return isinstance(error, BrokerResponseError) and error.name in ABORTABLE_COORDINATOR_ERRORS
