"""Offsets: committed ones (OffsetFetch / OffsetCommit at the group coordinator) and log
ones (ListOffsets at partition leaders).

Every call has a deadline and retries what Kafka calls retriable within it: a moved or
loading coordinator (looked up again), a leader change (metadata refreshed), a dropped
connection. What cannot succeed by retrying is raised as a typed error, in particular a
commit refused because the group moved on is :class:`CommitFailedError`, never a silent loss.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence

import anyio

from .. import errors as E
from ..cluster.client import ClusterClient
from ..errors import (
    BrokerResponseError,
    ConfigError,
    IncompatibleBrokerVersionError,
    KafkaConnectionError,
    KafkaTimeoutError,
    TopicAuthorizationFailedError,
    error_for_code,
)
from ..protocol.apis import LIST_OFFSETS, OFFSET_COMMIT, OFFSET_FETCH, OFFSET_FOR_LEADER_EPOCH
from ..protocol.apis.list_offsets import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from ..protocol.apis.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from ..protocol.apis.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopic,
    OffsetFetchRequestTopics,
    OffsetFetchResponseTopic,
    OffsetFetchResponseTopics,
)
from ..protocol.apis.offset_for_leader_epoch import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
)
from ..structs import OffsetAndMetadata, TopicPartition
from ._io import send
from .errors import CommitFailedError

log = logging.getLogger(__name__)

#: Commit errors that mean "your generation is over" (FENCED_MEMBER_EPOCH: the consumer
#: group protocol's way of saying it).
GENERATION_ERRORS = frozenset(
    {
        E.IllegalGenerationError.code,
        E.UnknownMemberIdError.code,
        E.RebalanceInProgressError.code,
        E.FencedMemberEpochError.code,
    }
)
#: The consumer group protocol: the commit carried an older member epoch than the member
#: has now (a heartbeat moved it on meanwhile); retried with the current one.
STALE_MEMBER_EPOCH = E.StaleMemberEpochError.code
FENCED_INSTANCE_ID = E.FencedInstanceIdError.code
_COORDINATOR_ERRORS = frozenset(
    {
        E.CoordinatorLoadInProgressError.code,
        E.CoordinatorNotAvailableError.code,
        E.NotCoordinatorError.code,
    }
)
#: ListOffsets errors after which the leader is looked up again (errors.py's flags).
_LEADER_ERRORS = E.INVALID_METADATA_CODES
#: OffsetFetch: a transactional commit is pending for the partition (retry shortly).
_UNSTABLE_OFFSET_COMMIT = E.UnstableOffsetCommitError.code


def _by_topic(tps: Iterable[TopicPartition]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for tp in tps:
        out.setdefault(tp.topic, []).append(tp.partition)
    return out


class OffsetClient:
    """Offset requests of one consumer."""

    def __init__(
        self,
        client: ClusterClient,
        group_id: str | None,
        *,
        isolation_level: int = 0,
        request_timeout: float = 30.0,
        retry_backoff: float = 0.1,
    ) -> None:
        self._client = client
        self.group_id = group_id
        self._isolation = isolation_level
        self._timeout = request_timeout
        self._backoff = retry_backoff
        self.commits = 0
        self.commit_failures = 0
        self._lock = anyio.Lock()
        #: Called with the offsets after each successful commit.
        self.on_committed: Callable[[Mapping[TopicPartition, OffsetAndMetadata]], None] | None = (
            None
        )

    def _need_group(self, what: str) -> str:
        if self.group_id is None:
            raise ConfigError(f"{what} needs a group_id")
        return self.group_id

    async def _coordinator(self) -> int:
        return await self._client.coordinator(self._need_group("committed offsets"))

    def _coordinator_failed(self) -> None:
        if self.group_id is not None:
            self._client.invalidate_coordinator(self.group_id)

    # -- committed offsets -------------------------------------------------------------------

    async def fetch_committed(
        self,
        tps: Iterable[TopicPartition],
        timeout: float | None = None,  # noqa: ASYNC109 - a deadline for the whole call
    ) -> dict[TopicPartition, OffsetAndMetadata | None]:
        """The committed offset of each partition (None where nothing is committed)."""
        group = self._need_group("committed()")
        wanted = list(dict.fromkeys(tps))
        if not wanted:
            return {}
        deadline = self._timeout if timeout is None else timeout
        require_stable = self._isolation == 1

        def body(version: int) -> OffsetFetchRequest:
            by_topic = _by_topic(wanted).items()
            if version >= 8:
                return OffsetFetchRequest(
                    groups=[
                        OffsetFetchRequestGroup(
                            group_id=group,
                            topics=[
                                OffsetFetchRequestTopics(name=t, partition_indexes=ps)
                                for t, ps in by_topic
                            ],
                        )
                    ],
                    require_stable=require_stable,
                )
            return OffsetFetchRequest(
                group_id=group,
                topics=[
                    OffsetFetchRequestTopic(name=t, partition_indexes=ps) for t, ps in by_topic
                ],
                require_stable=require_stable and version >= 7,
            )

        last: BaseException | None = None
        with anyio.move_on_after(deadline):
            while True:
                try:
                    node = await self._coordinator()
                    version, resp = await send(
                        self._client, node, OFFSET_FETCH, body, min_version=1
                    )
                except (KafkaConnectionError, KafkaTimeoutError) as exc:
                    last = exc
                    self._coordinator_failed()
                    await anyio.sleep(self._backoff)
                    continue
                topics: Sequence[OffsetFetchResponseTopic | OffsetFetchResponseTopics]
                if version >= 8:
                    grp = resp.groups[0] if resp.groups else None
                    top_error = grp.error_code if grp is not None else 0
                    topics = grp.topics if grp is not None else []
                else:
                    top_error = resp.error_code
                    topics = resp.topics
                retry_code = 0
                result: dict[TopicPartition, OffsetAndMetadata | None] = {}
                if top_error:
                    retry_code = top_error
                for t in topics:
                    for p in t.partitions:
                        tp = TopicPartition(t.name, p.partition_index)
                        if p.error_code:
                            if p.error_code in _COORDINATOR_ERRORS or (
                                p.error_code == _UNSTABLE_OFFSET_COMMIT
                            ):
                                retry_code = p.error_code
                                continue
                            raise error_for_code(p.error_code, f"OffsetFetch for {tp}")
                        if p.committed_offset < 0:
                            result[tp] = None
                        else:
                            result[tp] = OffsetAndMetadata(
                                p.committed_offset,
                                p.metadata or "",
                                p.committed_leader_epoch,
                            )
                if retry_code:
                    err = error_for_code(retry_code, "OffsetFetch")
                    if not (retry_code in _COORDINATOR_ERRORS or err.retriable):
                        raise err
                    if getattr(err, "invalid_coordinator", False):
                        self._coordinator_failed()
                    last = err
                    await anyio.sleep(self._backoff)
                    continue
                for tp in wanted:
                    result.setdefault(tp, None)
                log.debug(
                    "group %s: fetched committed %s",
                    group,
                    {
                        f"{tp.topic}-{tp.partition}": (om.offset if om else None)
                        for tp, om in result.items()
                    },
                )
                return result
        raise KafkaTimeoutError(
            f"committed offsets not fetched within {deadline:.3f} s"
            + (f" (last error: {last})" if last else "")
        )

    async def commit(
        self,
        offsets: Mapping[TopicPartition, OffsetAndMetadata]
        | Callable[[], Mapping[TopicPartition, OffsetAndMetadata]],
        *,
        generation_id: int = -1,
        member_id: str = "",
        group_instance_id: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - a deadline for the whole call
        on_generation_error: Callable[[int], None] | None = None,
        current_generation: Callable[[], int] | None = None,
    ) -> None:
        """Commit ``offsets`` for this group; raises ``CommitFailedError`` if the group
        rebalanced (after telling ``on_generation_error`` the code), the broker's typed
        error for other non-retriable failures, ``KafkaTimeoutError`` at the deadline.

        ``current_generation`` gives the member's generation (member epoch) now: a commit
        refused with STALE_MEMBER_EPOCH is sent again with it if it moved on."""
        group = self._need_group("commit()")
        deadline = self._timeout if timeout is None else timeout
        end = time.monotonic() + deadline
        # One commit at a time, and a callable's offsets are read only once it is this
        # commit's turn: otherwise an auto commit computed before a revocation's commit could
        # land after it and move the committed offset back (records read twice).
        with anyio.move_on_after(deadline) as scope:
            await self._lock.acquire()
        if scope.cancelled_caught:
            raise KafkaTimeoutError(f"commit not started within {deadline:.3f} s")
        try:
            if callable(offsets):
                offsets = offsets()
            if offsets:
                # The deadline is for the whole call: waiting for the lock used part of it.
                await self._commit_locked(
                    group,
                    offsets,
                    generation_id,
                    member_id,
                    group_instance_id,
                    max(0.0, end - time.monotonic()),
                    on_generation_error,
                    current_generation,
                )
                if self.on_committed is not None:
                    self.on_committed(offsets)
        finally:
            self._lock.release()

    async def commits_settled(self, timeout: float) -> bool:  # noqa: ASYNC109 - a deadline
        """Wait until the commits started so far have been answered (True), or ``timeout``
        seconds (False). A member calls it before it rejoins: a commit the application sent
        in the generation being ended lands before the JoinGroup can end it (they travel on
        different connections, so the broker could otherwise take the JoinGroup first)."""
        with anyio.move_on_after(timeout):
            async with self._lock:
                return True
        return False

    async def _commit_locked(
        self,
        group: str,
        offsets: Mapping[TopicPartition, OffsetAndMetadata],
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
        deadline: float,
        on_generation_error: Callable[[int], None] | None,
        current_generation: Callable[[], int] | None = None,
    ) -> None:

        def body(version: int) -> OffsetCommitRequest:
            topics: dict[str, list[OffsetCommitRequestPartition]] = {}
            for tp, om in offsets.items():
                topics.setdefault(tp.topic, []).append(
                    OffsetCommitRequestPartition(
                        partition_index=tp.partition,
                        committed_offset=om.offset,
                        committed_leader_epoch=om.leader_epoch,
                        committed_metadata=om.metadata,
                    )
                )
            return OffsetCommitRequest(
                group_id=group,
                generation_id_or_member_epoch=generation,
                member_id=member_id,
                # v7 added static membership; older versions cannot carry the id.
                group_instance_id=group_instance_id if version >= 7 else None,
                topics=[
                    OffsetCommitRequestTopic(name=t, partitions=ps) for t, ps in topics.items()
                ],
            )

        generation = generation_id
        last: BaseException | None = None
        self.commits += 1
        with anyio.move_on_after(deadline):
            while True:
                try:
                    node = await self._coordinator()
                    _, resp = await send(self._client, node, OFFSET_COMMIT, body, min_version=2)
                except (KafkaConnectionError, KafkaTimeoutError) as exc:
                    last = exc
                    self._coordinator_failed()
                    await anyio.sleep(self._backoff)
                    continue
                retry: BrokerResponseError | None = None
                for t in resp.topics:
                    for p in t.partitions:
                        code = p.error_code
                        if not code:
                            continue
                        err = error_for_code(code, f"OffsetCommit for {t.name}-{p.partition_index}")
                        if code == STALE_MEMBER_EPOCH and current_generation is not None:
                            # The coordinator moved the member on and the heartbeat telling
                            # it is on its way: retry with the epoch the member has then.
                            # Out of the group meanwhile: the partitions may be gone.
                            generation = current_generation()
                            if generation > 0:
                                retry = err
                                continue
                            self.commit_failures += 1
                            raise CommitFailedError(
                                f"commit failed: {err}, and this member is no longer in the "
                                "group; its partitions may be reassigned",
                                err,
                            )
                        if code in GENERATION_ERRORS or code == FENCED_INSTANCE_ID:
                            self.commit_failures += 1
                            if on_generation_error is not None:
                                on_generation_error(code)
                            if code == FENCED_INSTANCE_ID:
                                raise err
                            raise CommitFailedError(
                                f"commit failed: {err}. The group has rebalanced (or this "
                                "member was evicted); its partitions may be reassigned, and "
                                "records after the last successful commit will be read again",
                                err,
                            )
                        if code in _COORDINATOR_ERRORS or err.retriable:
                            retry = err
                            continue
                        self.commit_failures += 1
                        raise err
                if retry is None:
                    log.debug(
                        "group %s: committed %s (generation %s)",
                        group,
                        {f"{tp.topic}-{tp.partition}": om.offset for tp, om in offsets.items()},
                        generation_id,
                    )
                    return
                if retry.invalid_coordinator:
                    self._coordinator_failed()
                last = retry
                await anyio.sleep(self._backoff)
        self.commit_failures += 1
        raise KafkaTimeoutError(
            f"commit not acknowledged within {deadline:.3f} s"
            + (f" (last error: {last})" if last else "")
        )

    # -- log offsets -------------------------------------------------------------------------

    async def list_offsets(
        self,
        timestamps: Mapping[TopicPartition, int],
        timeout: float | None = None,  # noqa: ASYNC109 - a deadline for the whole call
    ) -> dict[TopicPartition, tuple[int, int] | None]:
        """ListOffsets per leader: ``{tp: (offset, timestamp)}``, None where no record has a
        timestamp at or after the one asked for. Timestamps -2/-1 mean earliest/latest."""
        pending = dict(timestamps)
        result: dict[TopicPartition, tuple[int, int] | None] = {}
        deadline = self._timeout if timeout is None else timeout
        last: BaseException | None = None
        with anyio.move_on_after(deadline):
            while pending:
                by_leader: dict[int, dict[TopicPartition, int]] = {}
                md = self._client.metadata
                missing = [tp for tp in pending if md.partitions_for(tp.topic) is None]
                if missing:
                    try:
                        await self._client.refresh_metadata({tp.topic for tp in missing})
                    except (KafkaConnectionError, KafkaTimeoutError) as exc:
                        # No broker answered in one request's time: ask again until the
                        # call's own deadline.
                        last = exc
                        await anyio.sleep(self._backoff)
                        continue
                    md = self._client.metadata
                for tp, ts in pending.items():
                    if tp.topic in md.unauthorized_topics:
                        # Metadata refused the topic (ACLs): no leader will ever be known.
                        raise TopicAuthorizationFailedError(tp.topic)
                    leader = md.leader_for(tp)
                    if leader is None or leader < 0:
                        parts = md.partitions_for(tp.topic)
                        if parts is not None and tp.partition not in parts:
                            raise error_for_code(3, f"{tp} does not exist")
                        continue
                    by_leader.setdefault(leader, {})[tp] = ts
                errors: list[BaseException] = []

                async def one(
                    node: int, batch: dict[TopicPartition, int], errors: list[BaseException]
                ) -> None:
                    try:
                        got = await self._list_offsets_once(node, batch)
                    except (KafkaConnectionError, KafkaTimeoutError) as exc:
                        errors.append(exc)
                        return
                    for tp, value in got.items():
                        if isinstance(value, BrokerResponseError):
                            if value.code in _LEADER_ERRORS or value.retriable:
                                errors.append(value)
                                continue
                            raise value
                        result[tp] = value
                        pending.pop(tp, None)

                async with anyio.create_task_group() as tg:
                    for node, batch in by_leader.items():
                        tg.start_soon(one, node, batch, errors)
                if pending:
                    last = errors[-1] if errors else last
                    self._client.request_metadata_update()
                    await anyio.sleep(self._backoff)
            return result
        raise KafkaTimeoutError(
            f"offsets of {sorted(pending)} not listed within {deadline:.3f} s"
            + (f" (last error: {last})" if last else "")
        )

    async def _list_offsets_once(
        self, node: int, batch: Mapping[TopicPartition, int]
    ) -> dict[TopicPartition, tuple[int, int] | BrokerResponseError | None]:
        isolation = self._isolation

        def body(version: int) -> ListOffsetsRequest:
            topics: dict[str, list[ListOffsetsPartition]] = {}
            for tp, ts in batch.items():
                topics.setdefault(tp.topic, []).append(
                    ListOffsetsPartition(partition_index=tp.partition, timestamp=ts)
                )
            return ListOffsetsRequest(
                replica_id=-1,
                # v0-1 have no isolation level (read uncommitted).
                isolation_level=isolation if version >= 2 else 0,
                topics=[ListOffsetsTopic(name=t, partitions=ps) for t, ps in topics.items()],
                timeout_ms=int(self._timeout * 1000),
            )

        try:
            _, resp = await send(self._client, node, LIST_OFFSETS, body, min_version=1)
        except IncompatibleBrokerVersionError:
            raise
        out: dict[TopicPartition, tuple[int, int] | BrokerResponseError | None] = {}
        for t in resp.topics:
            for p in t.partitions:
                tp = TopicPartition(t.name, p.partition_index)
                if tp not in batch:
                    continue
                if p.error_code:
                    out[tp] = error_for_code(p.error_code, f"ListOffsets for {tp}")
                elif p.offset < 0:
                    out[tp] = None
                else:
                    out[tp] = (p.offset, p.timestamp)
        return out

    # -- leader epochs (KIP-320) -------------------------------------------------------------

    async def epoch_end_offsets(
        self, wanted: Mapping[TopicPartition, tuple[int, int]]
    ) -> dict[TopicPartition, tuple[int, int] | BrokerResponseError | None]:
        """OffsetForLeaderEpoch at each partition's leader, one request per leader, sent
        concurrently: ``wanted`` maps a partition to (the leader epoch the consumer knows
        for its leader, the epoch of the last record read). Each answer is ``(epoch,
        end_offset)`` (the largest epoch not above the one asked for, and where it ends),
        the broker's error for that partition, or None when no leader is known or the
        leader could not be reached (ask again later). Raises
        IncompatibleBrokerVersionError when a leader lacks version 3 (the first a client
        may send, with replica_id -1)."""
        md = self._client.metadata
        by_leader: dict[int, dict[TopicPartition, tuple[int, int]]] = {}
        out: dict[TopicPartition, tuple[int, int] | BrokerResponseError | None] = {}
        for tp, epochs in wanted.items():
            leader = md.leader_for(tp)
            if leader is None:
                out[tp] = None
            else:
                by_leader.setdefault(leader, {})[tp] = epochs

        async def one(node: int, batch: dict[TopicPartition, tuple[int, int]]) -> None:
            topics: dict[str, list[OffsetForLeaderPartition]] = {}
            for tp, (current, last) in batch.items():
                topics.setdefault(tp.topic, []).append(
                    OffsetForLeaderPartition(
                        partition=tp.partition, current_leader_epoch=current, leader_epoch=last
                    )
                )
            body = OffsetForLeaderEpochRequest(
                replica_id=-1,
                topics=[OffsetForLeaderTopic(topic=t, partitions=ps) for t, ps in topics.items()],
            )
            try:
                _, resp = await send(
                    self._client,
                    node,
                    OFFSET_FOR_LEADER_EPOCH,
                    body,
                    min_version=3,
                    timeout=self._timeout,
                )
            except (KafkaConnectionError, KafkaTimeoutError) as exc:
                log.debug("OffsetForLeaderEpoch to node %s failed: %r", node, exc)
                out.update(dict.fromkeys(batch))
                return
            except Exception as exc:  # raised below as itself, not in an exception group
                failures.append(exc)
                return
            for t in resp.topics:
                for p in t.partitions:
                    tp = TopicPartition(t.topic, p.partition)
                    if tp not in batch:
                        continue
                    if p.error_code:
                        out[tp] = error_for_code(p.error_code, f"OffsetForLeaderEpoch for {tp}")
                    else:
                        out[tp] = (p.leader_epoch, p.end_offset)
            for tp in batch:
                out.setdefault(tp, None)

        failures: list[Exception] = []
        async with anyio.create_task_group() as tg:
            for node, batch in by_leader.items():
                tg.start_soon(one, node, batch)
        if failures:
            raise failures[0]
        return out


__all__ = ["GENERATION_ERRORS", "OffsetClient"]
