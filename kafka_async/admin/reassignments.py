"""Partition reassignments (KIP-455): move a partition's replicas to other brokers, cancel a
move, list the moves in progress.

Pure parts of :meth:`AdminClient.alter_partition_reassignments` and
:meth:`~AdminClient.list_partition_reassignments`: checking what the caller asks for, the
request bodies of AlterPartitionReassignments (45) and ListPartitionReassignments (46), and
mapping the answers to typed results.

How Kafka carries a move out: the controller adds the target replicas that are missing
(``adding_replicas``), waits until every one of them is in sync, makes a target replica the
leader if the current leader is not one, then drops the replicas that are not targets
(``removing_replicas``). While it runs, a partition's replica list holds both old and new
replicas. Cancelling (a ``None`` target) returns the partition to the replicas it had
before the move, as far as the move has not completed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..cluster.routing import error_or_none
from ..errors import ConfigError, KafkaError, error_for_code
from ..protocol.apis.alter_partition_reassignments import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    ReassignablePartition,
    ReassignableTopic,
)
from ..protocol.apis.list_partition_reassignments import (
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
    ListPartitionReassignmentsTopics,
)
from ..structs import TopicPartition
from .mapping import unsupported

__all__ = ["PartitionReassignment", "ReassignmentResult"]


@dataclass(frozen=True)
class ReassignmentResult:
    """What the controller answered for one partition of
    :meth:`~kafka_async.admin.AdminClient.alter_partition_reassignments`: ``error`` is None
    when the move (or its cancellation) was accepted; the move itself then runs in the
    background (:meth:`~kafka_async.admin.AdminClient.list_partition_reassignments` shows it
    until it is done). A cancellation of a partition that is not moving gets
    NoReassignmentInProgressError."""

    topic: str
    partition: int
    error: KafkaError | None = None


@dataclass(frozen=True)
class PartitionReassignment:
    """A move in progress, as the controller reports it."""

    topic: str
    partition: int
    #: Every replica the partition has now: the old ones and the ones being added.
    replicas: tuple[int, ...]
    #: Target replicas not yet in sync.
    adding_replicas: tuple[int, ...]
    #: Replicas that leave once the added ones are in sync.
    removing_replicas: tuple[int, ...]

    @property
    def target_replicas(self) -> tuple[int, ...]:
        """The replicas the partition will have once the move completes."""
        return tuple(r for r in self.replicas if r not in self.removing_replicas)


def check_targets(
    reassignments: Mapping[TopicPartition, Sequence[int] | None],
) -> dict[TopicPartition, tuple[int, ...] | None]:
    """The caller's reassignments, checked: a non-empty list of distinct broker ids
    (>= 0) per partition, or None to cancel that partition's move."""
    if not isinstance(reassignments, Mapping):
        raise ConfigError(
            "alter_partition_reassignments expects a mapping of TopicPartition to a list of "
            f"broker ids (or None to cancel), got {type(reassignments).__name__}"
        )
    if not reassignments:
        raise ConfigError("alter_partition_reassignments needs at least one partition")
    out: dict[TopicPartition, tuple[int, ...] | None] = {}
    for key, target in reassignments.items():
        tp = _topic_partition(key)
        if tp in out:
            raise ConfigError(f"duplicate partition {tp!r}")
        if target is None:
            out[tp] = None
            continue
        if isinstance(target, (str, bytes)) or not isinstance(target, Iterable):
            raise ConfigError(f"{tp}: replicas must be a list of broker ids, got {target!r}")
        replicas = tuple(target)
        if not replicas:
            raise ConfigError(f"{tp}: a reassignment needs at least one replica (None cancels)")
        for r in replicas:
            if not isinstance(r, int) or isinstance(r, bool) or r < 0:
                raise ConfigError(f"{tp}: broker ids are ints >= 0, got {r!r}")
        if len(set(replicas)) != len(replicas):
            raise ConfigError(f"{tp}: duplicate broker id in {list(replicas)}")
        out[tp] = replicas
    return out


def _topic_partition(value: object) -> TopicPartition:
    if isinstance(value, TopicPartition):
        tp = value
    elif (
        isinstance(value, tuple)
        and len(value) == 2
        and isinstance(value[0], str)
        and isinstance(value[1], int)
    ):
        tp = TopicPartition(value[0], value[1])
    else:
        raise ConfigError(f"expected a TopicPartition, got {value!r}")
    if not tp.topic or tp.partition < 0:
        raise ConfigError(f"expected a topic name and a partition >= 0, got {tp!r}")
    return tp


def alter_request(
    targets: Mapping[TopicPartition, tuple[int, ...] | None],
    allow_replication_factor_change: bool,
    timeout_ms: int,
    version: int,
) -> AlterPartitionReassignmentsRequest:
    """The AlterPartitionReassignments body (v1 adds the replication-factor guard; v0
    brokers always allow a change, so only ``True`` can be sent to them)."""
    if version < 1 and not allow_replication_factor_change:
        raise unsupported(
            "AlterPartitionReassignments", "allow_replication_factor_change=False", version
        )
    by_topic: dict[str, list[ReassignablePartition]] = {}
    for tp, replicas in targets.items():
        by_topic.setdefault(tp.topic, []).append(
            ReassignablePartition(
                partition_index=tp.partition,
                replicas=None if replicas is None else list(replicas),
            )
        )
    return AlterPartitionReassignmentsRequest(
        timeout_ms=timeout_ms,
        allow_replication_factor_change=allow_replication_factor_change,
        topics=[ReassignableTopic(name=t, partitions=ps) for t, ps in by_topic.items()],
    )


def alter_results(
    resp: AlterPartitionReassignmentsResponse, asked: Iterable[TopicPartition]
) -> tuple[KafkaError | None, dict[TopicPartition, ReassignmentResult]]:
    """The request-level error (if any) and one result per partition asked about (a
    partition the answer left out gets a client-side error saying so)."""
    top = error_or_none(resp.error_code, resp.error_message)
    got: dict[TopicPartition, ReassignmentResult] = {}
    for t in resp.responses:
        for p in t.partitions:
            got[TopicPartition(t.name, p.partition_index)] = ReassignmentResult(
                t.name, p.partition_index, error_or_none(p.error_code, p.error_message)
            )
    out: dict[TopicPartition, ReassignmentResult] = {}
    for tp in asked:
        out[tp] = got.get(tp) or ReassignmentResult(
            tp.topic, tp.partition, top or error_for_code(-1, "no result for this partition")
        )
    return top, out


def list_request(
    partitions: Sequence[TopicPartition] | None, timeout_ms: int
) -> ListPartitionReassignmentsRequest:
    """The ListPartitionReassignments body (``None``: every move in progress)."""
    topics: list[ListPartitionReassignmentsTopics] | None = None
    if partitions is not None:
        by_topic: dict[str, list[int]] = {}
        for tp in partitions:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        topics = [
            ListPartitionReassignmentsTopics(name=t, partition_indexes=ps)
            for t, ps in by_topic.items()
        ]
    return ListPartitionReassignmentsRequest(timeout_ms=timeout_ms, topics=topics)


def list_results(
    resp: ListPartitionReassignmentsResponse,
) -> tuple[KafkaError | None, dict[TopicPartition, PartitionReassignment]]:
    """The request-level error (if any) and the moves in progress, by partition."""
    out: dict[TopicPartition, PartitionReassignment] = {}
    for t in resp.topics:
        for p in t.partitions:
            out[TopicPartition(t.name, p.partition_index)] = PartitionReassignment(
                t.name,
                p.partition_index,
                tuple(p.replicas),
                tuple(p.adding_replicas),
                tuple(p.removing_replicas),
            )
    return error_or_none(resp.error_code, resp.error_message), out
