"""Share groups (KIP-932): list, describe and delete them, and read, set and delete the start
offsets of their share-partitions.

:meth:`AdminClient.list_share_groups`, :meth:`~AdminClient.describe_share_groups`,
:meth:`~AdminClient.delete_share_groups`, :meth:`~AdminClient.list_share_group_offsets`,
:meth:`~AdminClient.alter_share_group_offsets` and
:meth:`~AdminClient.delete_share_group_offsets` delegate here.

A share group has no committed offsets per member: each share-partition keeps a *start
offset* (the first record not yet acknowledged by the group as a whole), which the share
coordinator stores. Listing is ListGroups with the type filter ``share`` on every broker;
deleting is DeleteGroups at the group's coordinator (an empty group only, like consumer
groups); everything else goes to the group's coordinator (ShareGroupDescribe,
DescribeShareGroupOffsets, AlterShareGroupOffsets, DeleteShareGroupOffsets). Altering and
deleting offsets need the group to be empty (no member), as for consumer groups.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..cluster.routing import (
    COORDINATOR_LOADING,
    COORDINATOR_MOVED,
    Router,
    error_code,
    error_or_none,
)
from ..errors import ConfigError, KafkaError, UnknownServerError, error_for_code
from ..protocol import apis
from ..protocol.apis.alter_share_group_offsets import (
    AlterShareGroupOffsetsRequest,
    AlterShareGroupOffsetsRequestPartition,
    AlterShareGroupOffsetsRequestTopic,
    AlterShareGroupOffsetsResponse,
)
from ..protocol.apis.delete_share_group_offsets import (
    DeleteShareGroupOffsetsRequest,
    DeleteShareGroupOffsetsRequestTopic,
    DeleteShareGroupOffsetsResponse,
)
from ..protocol.apis.describe_share_group_offsets import (
    DescribeShareGroupOffsetsRequest,
    DescribeShareGroupOffsetsRequestGroup,
    DescribeShareGroupOffsetsRequestTopic,
    DescribeShareGroupOffsetsResponse,
)
from ..protocol.apis.share_group_describe import (
    ShareGroupDescribeRequest,
    ShareGroupDescribeResponse,
)
from ..structs import TopicPartition
from . import checks
from .mapping import authorized_ops
from .results import PartitionResult, ResultMap

__all__ = [
    "ShareGroupDescription",
    "ShareGroupMember",
    "ShareGroupOffset",
    "ShareGroupTopicResult",
]

_NO_AUTHORIZED_OPS = -(2**31)


@dataclass(frozen=True)
class ShareGroupMember:
    """A member of a share group and the partitions assigned to it."""

    member_id: str
    client_id: str
    client_host: str
    member_epoch: int
    rack_id: str | None = None
    subscribed_topics: tuple[str, ...] = ()
    assignment: tuple[TopicPartition, ...] = ()


@dataclass(frozen=True)
class ShareGroupDescription:
    """A share group (:meth:`AdminClient.describe_share_groups`): its state (``Empty``,
    ``Stable``, ``Dead``...), epochs, the broker's assignor and its members."""

    group_id: str
    state: str = ""
    group_epoch: int = -1
    assignment_epoch: int = -1
    assignor: str = ""
    members: tuple[ShareGroupMember, ...] = ()
    coordinator: int = -1
    authorized_operations: frozenset[int] | None = None
    error: KafkaError | None = None


@dataclass(frozen=True)
class ShareGroupOffset:
    """A share-partition's start offset (-1: the group has none there yet), the leader
    epoch it was recorded in, and its lag (KIP-1226: the records from the start offset to
    the end of the partition the group has not acknowledged yet; -1 when the broker does
    not say: DescribeShareGroupOffsets before v1, Apache Kafka before 4.2)."""

    topic: str
    partition: int
    start_offset: int = -1
    leader_epoch: int = -1
    error: KafkaError | None = None
    lag: int = -1


@dataclass(frozen=True)
class ShareGroupTopicResult:
    """Outcome of deleting a share group's state for one topic."""

    topic: str
    error: KafkaError | None = None


# -- pure request building and mapping -------------------------------------------------------


def describe_results(
    resp: ShareGroupDescribeResponse, coordinator: int, with_ops: bool
) -> dict[str, ShareGroupDescription]:

    out: dict[str, ShareGroupDescription] = {}
    for g in resp.groups:
        if g.error_code:
            out[g.group_id] = ShareGroupDescription(
                g.group_id,
                coordinator=coordinator,
                error=error_or_none(g.error_code, g.error_message),
            )
            continue
        members = tuple(
            ShareGroupMember(
                member_id=mb.member_id,
                client_id=mb.client_id,
                client_host=mb.client_host,
                member_epoch=mb.member_epoch,
                rack_id=mb.rack_id,
                subscribed_topics=tuple(mb.subscribed_topic_names),
                assignment=tuple(
                    sorted(
                        TopicPartition(t.topic_name, p)
                        for t in mb.assignment.topic_partitions
                        for p in t.partitions
                    )
                ),
            )
            for mb in g.members
        )
        out[g.group_id] = ShareGroupDescription(
            group_id=g.group_id,
            state=g.group_state,
            group_epoch=g.group_epoch,
            assignment_epoch=g.assignment_epoch,
            assignor=g.assignor_name,
            members=members,
            coordinator=coordinator,
            authorized_operations=(
                authorized_ops(g.authorized_operations)
                if with_ops and g.authorized_operations != _NO_AUTHORIZED_OPS
                else None
            ),
        )
    return out


def offsets_request(
    group_id: str, tps: Sequence[TopicPartition] | None
) -> DescribeShareGroupOffsetsRequest:
    topics: list[DescribeShareGroupOffsetsRequestTopic] | None = None
    if tps is not None:
        by_topic: dict[str, list[int]] = {}
        for tp in tps:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        topics = [
            DescribeShareGroupOffsetsRequestTopic(topic_name=t, partitions=ps)
            for t, ps in by_topic.items()
        ]
    return DescribeShareGroupOffsetsRequest(
        groups=[DescribeShareGroupOffsetsRequestGroup(group_id=group_id, topics=topics)]
    )


def offsets_results(
    resp: DescribeShareGroupOffsetsResponse, group_id: str
) -> tuple[KafkaError | None, dict[TopicPartition, ShareGroupOffset]]:
    """(the group's error, per-partition start offsets)."""
    for g in resp.groups:
        if g.group_id != group_id:
            continue
        if g.error_code:
            return error_or_none(g.error_code, g.error_message), {}
        out = {
            TopicPartition(t.topic_name, p.partition_index): ShareGroupOffset(
                t.topic_name,
                p.partition_index,
                p.start_offset,
                p.leader_epoch,
                error_or_none(p.error_code, p.error_message),
                lag=p.lag,
            )
            for t in g.topics
            for p in t.partitions
        }
        return None, dict(sorted(out.items()))
    return UnknownServerError(f"the coordinator's answer left out group {group_id!r}"), {}


def alter_request(
    group_id: str, offsets: Mapping[TopicPartition, int]
) -> AlterShareGroupOffsetsRequest:
    by_topic: dict[str, list[AlterShareGroupOffsetsRequestPartition]] = {}
    for tp, offset in offsets.items():
        by_topic.setdefault(tp.topic, []).append(
            AlterShareGroupOffsetsRequestPartition(
                partition_index=tp.partition, start_offset=offset
            )
        )
    return AlterShareGroupOffsetsRequest(
        group_id=group_id,
        topics=[
            AlterShareGroupOffsetsRequestTopic(topic_name=t, partitions=ps)
            for t, ps in by_topic.items()
        ],
    )


def alter_results(resp: AlterShareGroupOffsetsResponse) -> dict[TopicPartition, PartitionResult]:
    return {
        TopicPartition(t.topic_name, p.partition_index): PartitionResult(
            t.topic_name, p.partition_index, error_or_none(p.error_code, p.error_message)
        )
        for t in resp.responses
        for p in t.partitions
    }


def delete_request(group_id: str, topics: Sequence[str]) -> DeleteShareGroupOffsetsRequest:
    return DeleteShareGroupOffsetsRequest(
        group_id=group_id,
        topics=[DeleteShareGroupOffsetsRequestTopic(topic_name=t) for t in topics],
    )


def delete_results(resp: DeleteShareGroupOffsetsResponse) -> dict[str, ShareGroupTopicResult]:
    return {
        t.topic_name: ShareGroupTopicResult(
            t.topic_name, error_or_none(t.error_code, t.error_message)
        )
        for t in resp.responses
    }


# -- the calls ------------------------------------------------------------------------------


def _moved(code: int) -> bool:
    """A group-level answer that sends the request to the coordinator again."""
    return code in COORDINATOR_MOVED | COORDINATOR_LOADING


async def describe_share_groups(
    router: Router,
    group_ids: Sequence[str],
    *,
    include_authorized_operations: bool,
    timeout_ms: int | None,
    raise_on_error: bool,
) -> ResultMap[str, ShareGroupDescription]:

    groups = checks.group_ids(group_ids)
    deadline = router.deadline(timeout_ms)

    async def send(node: int, gs: Sequence[str]) -> Mapping[str, ShareGroupDescription]:
        body = ShareGroupDescribeRequest(
            group_ids=list(gs), include_authorized_operations=include_authorized_operations
        )
        _, resp = await router.send(node, apis.SHARE_GROUP_DESCRIBE, lambda v: body, deadline)
        return describe_results(resp, node, include_authorized_operations)

    got = await router.per_coordinator(
        groups,
        send,
        lambda r: error_code(r.error),
        deadline,
        lambda g, e: ShareGroupDescription(g, error=e),
    )
    result = ResultMap({g: got[g] for g in groups if g in got})
    if raise_on_error:
        result.raise_first()
    return result


async def list_share_group_offsets(
    router: Router,
    group_id: str,
    partitions: Sequence[TopicPartition] | None,
    *,
    timeout_ms: int | None,
    raise_on_error: bool,
) -> ResultMap[TopicPartition, ShareGroupOffset]:

    tps = (
        None
        if partitions is None
        else checks.unique((checks.topic_partition(p) for p in partitions), "partition")
    )
    body = offsets_request(group_id, tps)
    deadline = router.deadline(timeout_ms)
    _, resp = await router.to_coordinator(
        checks.group_id(group_id),
        apis.DESCRIBE_SHARE_GROUP_OFFSETS,
        lambda v: body,
        deadline,
        moved=lambda v, r: _moved(error_code(offsets_results(r, group_id)[0])),
    )
    error, got = offsets_results(resp, group_id)
    code = error_code(error)
    if error is not None:
        router.note_errors([code])
        raise error
    router.note_errors(error_code(r.error) for r in got.values())
    if tps is not None:
        got = {tp: got.get(tp, ShareGroupOffset(tp.topic, tp.partition)) for tp in tps}
    result: ResultMap[TopicPartition, ShareGroupOffset] = ResultMap(got)
    if raise_on_error:
        result.raise_first()
    return result


async def alter_share_group_offsets(
    router: Router,
    group_id: str,
    offsets: Mapping[TopicPartition, int],
    *,
    timeout_ms: int | None,
    raise_on_error: bool,
) -> ResultMap[TopicPartition, PartitionResult]:

    if not isinstance(offsets, Mapping) or not offsets:
        raise ConfigError("alter_share_group_offsets expects a non-empty mapping")
    checked: dict[TopicPartition, int] = {}
    for key, offset in offsets.items():
        tp = checks.topic_partition(key)
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise ConfigError(f"start offset for {tp} must be a non-negative int, got {offset!r}")
        checked[tp] = offset
    body = alter_request(group_id, checked)
    deadline = router.deadline(timeout_ms)
    _, resp = await router.to_coordinator(
        checks.group_id(group_id),
        apis.ALTER_SHARE_GROUP_OFFSETS,
        lambda v: body,
        deadline,
        moved=lambda v, r: _moved(r.error_code),
    )
    if resp.error_code:
        router.note_errors([resp.error_code])
        raise error_for_code(resp.error_code, resp.error_message or None)
    got = alter_results(resp)
    router.note_errors(error_code(r.error) for r in got.values())
    missing = UnknownServerError("the coordinator returned no result for this partition")
    out = {tp: got.get(tp) or PartitionResult(tp.topic, tp.partition, missing) for tp in checked}
    result: ResultMap[TopicPartition, PartitionResult] = ResultMap(out)
    if raise_on_error:
        result.raise_first()
    return result


async def delete_share_group_offsets(
    router: Router,
    group_id: str,
    topics: Sequence[str],
    *,
    timeout_ms: int | None,
    raise_on_error: bool,
) -> ResultMap[str, ShareGroupTopicResult]:

    names = checks.topic_names(topics)
    if not names:
        raise ConfigError("delete_share_group_offsets needs at least one topic")
    body = delete_request(group_id, names)
    deadline = router.deadline(timeout_ms)
    _, resp = await router.to_coordinator(
        checks.group_id(group_id),
        apis.DELETE_SHARE_GROUP_OFFSETS,
        lambda v: body,
        deadline,
        moved=lambda v, r: _moved(r.error_code),
    )
    if resp.error_code:
        router.note_errors([resp.error_code])
        raise error_for_code(resp.error_code, resp.error_message or None)
    got = delete_results(resp)
    router.note_errors(error_code(r.error) for r in got.values())
    missing = UnknownServerError("the coordinator returned no result for this topic")
    out = {t: got.get(t) or ShareGroupTopicResult(t, missing) for t in names}
    result = ResultMap(out)
    if raise_on_error:
        result.raise_first()
    return result
