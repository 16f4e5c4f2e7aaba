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
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

import anyio

from .. import errors as E
from ..cluster.client import ClusterClient
from ..cluster.routing import (
    COORDINATOR_LOADING,
    COORDINATOR_MOVED,
    RETRIABLE_CODES,
    Deadline,
    Router,
    error_code,
    send_request,
)
from ..errors import (
    BrokerResponseError,
    ConfigError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    error_for_code,
)
from ..protocol.apis import LIST_OFFSETS, OFFSET_COMMIT, OFFSET_FETCH, OFFSET_FOR_LEADER_EPOCH
from ..protocol.apis.list_offsets import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopic,
)
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
    OffsetForLeaderEpochResponse,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
)
from ..structs import OffsetAndMetadata, TopicPartition
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
#: The coordinator moved or is loading: ask (a freshly looked-up) one again.
_COORDINATOR_ERRORS = COORDINATOR_MOVED | COORDINATOR_LOADING
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
        #: Routing for the per-leader queries, and the backoff between retries.
        self._router = Router(client, retry_backoff_ms=round(retry_backoff * 1000))
        self.group_id = group_id
        self._isolation = isolation_level
        self._timeout = request_timeout
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
        pause = Deadline.after(deadline)
        with anyio.move_on_after(deadline):
            while True:
                try:
                    node = await self._coordinator()
                    version, resp = await send_request(
                        self._client, node, OFFSET_FETCH, body, min_version=1
                    )
                except (KafkaConnectionError, KafkaTimeoutError) as exc:
                    last = exc
                    self._coordinator_failed()
                    if not await self._router.backoff(pause):
                        break
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
                    if not await self._router.backoff(pause):
                        break
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
        assigned: Callable[[], Collection[TopicPartition]] | None = None,
    ) -> None:
        """Commit ``offsets`` for this group; raises ``CommitFailedError`` if the group
        rebalanced (after telling ``on_generation_error`` the code), the broker's typed
        error for other non-retriable failures, ``KafkaTimeoutError`` at the deadline.

        ``current_generation`` gives the member's generation (member epoch) now: a commit
        refused with STALE_MEMBER_EPOCH is sent again with it if it moved on and, when
        ``assigned`` (the member's partitions now) is given, the refused partitions are
        still the member's; otherwise ``CommitFailedError`` (KIP-1251's fencing)."""
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
                    assigned,
                    deadline,
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
        assigned: Callable[[], Collection[TopicPartition]] | None = None,
        call_timeout: float | None = None,
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
        pause = Deadline.after(deadline)
        with anyio.move_on_after(deadline):
            while True:
                try:
                    node = await self._coordinator()
                    _, resp = await send_request(
                        self._client, node, OFFSET_COMMIT, body, min_version=2
                    )
                except (KafkaConnectionError, KafkaTimeoutError) as exc:
                    last = exc
                    self._coordinator_failed()
                    if not await self._router.backoff(pause):
                        break
                    continue
                retry: BrokerResponseError | None = None
                sent = generation  # the epoch this answer is about
                for t in resp.topics:
                    for p in t.partitions:
                        code = p.error_code
                        if not code:
                            continue
                        err = error_for_code(code, f"OffsetCommit for {t.name}-{p.partition_index}")
                        if code == STALE_MEMBER_EPOCH and current_generation is not None:
                            # The coordinator moved the member on and the heartbeat telling
                            # it is on its way: the commit is sent again with the epoch the
                            # member has now, but only for a partition the member still
                            # holds at that epoch. A broker with assignment epochs
                            # (KIP-1251, Kafka 4.3+) refuses at an older epoch a partition
                            # that has moved to another member, and takes any partition at
                            # the member's current epoch: resending a moved partition's
                            # offset under the new epoch would overwrite its new owner's
                            # commit (a zombie's write). The Java client does not resend
                            # such a commit either (StaleMemberEpochException).
                            generation = current_generation()
                            tp = TopicPartition(t.name, p.partition_index)
                            if (
                                generation > 0
                                and generation != sent
                                and (assigned is None or tp in assigned())
                            ):
                                retry = err
                                continue
                            self.commit_failures += 1
                            if generation > 0 and generation == sent:
                                raise CommitFailedError(
                                    f"commit failed: {err}; the coordinator has moved this "
                                    f"member past epoch {sent}, the newest it has heard of so "
                                    "far (its next heartbeat brings the new epoch and "
                                    f"assignment); whether {tp} is still assigned to it is not "
                                    "known yet: commit again after the next poll",
                                    err,
                                )
                            if generation > 0:
                                raise CommitFailedError(
                                    f"commit failed: {err}; {tp} is no longer assigned to "
                                    f"this member at its epoch {generation} (it moved to "
                                    "another member); its records after the last successful "
                                    "commit will be read again by their new owner",
                                    err,
                                )
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
                if not await self._router.backoff(pause):
                    break
        self.commit_failures += 1
        # Name the caller's timeout, not what was left of it after waiting for the lock.
        raise KafkaTimeoutError(
            f"commit not acknowledged within {call_timeout or deadline:.3f} s"
            + (f" (last error: {last})" if last else "")
        )

    # -- log offsets -------------------------------------------------------------------------

    async def list_offsets(
        self,
        timestamps: Mapping[TopicPartition, int],
        timeout: float | None = None,  # noqa: ASYNC109 - a deadline for the whole call
    ) -> dict[TopicPartition, tuple[int, int] | None]:
        """ListOffsets per leader: ``{tp: (offset, timestamp)}``, None where no record has a
        timestamp at or after the one asked for. Timestamps -2/-1 mean earliest/latest.

        The router sends one request per leader, concurrently, and routes again (after a
        metadata refresh) what failed retriably: a moved leader, a topic not in the
        metadata yet, a dropped connection. A partition its topic lacks, a refused topic
        and any other error raise; what is still failing at the deadline raises
        KafkaTimeoutError with the last error."""
        wanted = dict(timestamps)
        seconds = self._timeout if timeout is None else timeout
        deadline = Deadline.after(seconds)
        got: dict[TopicPartition, tuple[int, int] | KafkaError | None] = {}

        async def send(
            node: int, batch: Sequence[TopicPartition]
        ) -> dict[TopicPartition, tuple[int, int] | KafkaError | None]:
            _, resp = await self._router.send(
                node,
                LIST_OFFSETS,
                lambda v: self._list_offsets_request({tp: wanted[tp] for tp in batch}, v),
                deadline,
                min_version=1,
            )
            return _list_offsets_results(resp, batch)

        with anyio.move_on_after(seconds):
            got = await self._router.per_leader(
                list(wanted),
                send,
                _code_of,
                deadline,
                lambda tp, e: e,
                retry_codes=RETRIABLE_CODES,
                wait_for_topics=True,
            )
        failed = {tp: r for tp, r in got.items() if isinstance(r, KafkaError)}
        md = self._client.metadata
        for tp, error in failed.items():
            parts = md.partitions_for(tp.topic)
            if parts is not None and tp.partition not in parts:
                raise error_for_code(E.UnknownTopicOrPartitionError.code, f"{tp} does not exist")
            if not error.retriable:  # not worth retrying: a refused topic, ...
                raise error
        pending = sorted(set(wanted) - (set(got) - set(failed)))
        if pending:
            last = next(reversed(failed.values()), None)
            raise KafkaTimeoutError(
                f"offsets of {pending} not listed within {seconds:.3f} s"
                + (f" (last error: {last})" if last else "")
            )
        return {tp: r for tp, r in got.items() if not isinstance(r, KafkaError)}

    def _list_offsets_request(
        self, batch: Mapping[TopicPartition, int], version: int
    ) -> ListOffsetsRequest:
        topics: dict[str, list[ListOffsetsPartition]] = {}
        for tp, ts in batch.items():
            topics.setdefault(tp.topic, []).append(
                ListOffsetsPartition(partition_index=tp.partition, timestamp=ts)
            )
        return ListOffsetsRequest(
            replica_id=-1,
            # v0-1 have no isolation level (read uncommitted).
            isolation_level=self._isolation if version >= 2 else 0,
            topics=[ListOffsetsTopic(name=t, partitions=ps) for t, ps in topics.items()],
            timeout_ms=int(self._timeout * 1000),
        )

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

        async def send(
            node: int, batch: Sequence[TopicPartition]
        ) -> dict[TopicPartition, tuple[int, int] | BrokerResponseError | None]:
            topics: dict[str, list[OffsetForLeaderPartition]] = {}
            for tp in batch:
                current, last = wanted[tp]
                topics.setdefault(tp.topic, []).append(
                    OffsetForLeaderPartition(
                        partition=tp.partition, current_leader_epoch=current, leader_epoch=last
                    )
                )
            body = OffsetForLeaderEpochRequest(
                replica_id=-1,
                topics=[OffsetForLeaderTopic(topic=t, partitions=ps) for t, ps in topics.items()],
            )
            _, resp = await self._router.send(
                node, OFFSET_FOR_LEADER_EPOCH, lambda v: body, deadline, min_version=3
            )
            return _epoch_results(resp, batch)

        def unreachable(tp: TopicPartition, exc: KafkaError) -> None:
            # No leader known, or its connection failed: the caller asks again later.
            log.debug("OffsetForLeaderEpoch for %s not sent: %r", tp, exc)

        deadline = Deadline.after(self._timeout)
        return await self._router.per_leader(
            list(wanted),
            send,
            _code_of,
            deadline,
            unreachable,
            retry_codes=frozenset(),
            once=True,
        )


def _code_of(result: object) -> int:
    """The error code of a per-partition answer that is an error (0 for a value)."""
    return error_code(result) if isinstance(result, BaseException) else 0


def _list_offsets_results(
    resp: ListOffsetsResponse, batch: Sequence[TopicPartition]
) -> dict[TopicPartition, tuple[int, int] | KafkaError | None]:
    """Per partition of ``batch``: (offset, timestamp), None (no such record), the error."""
    asked = set(batch)
    out: dict[TopicPartition, tuple[int, int] | KafkaError | None] = {}
    for t in resp.topics:
        for p in t.partitions:
            tp = TopicPartition(t.name, p.partition_index)
            if tp not in asked:
                continue
            if p.error_code:
                out[tp] = error_for_code(p.error_code, f"ListOffsets for {tp}")
            elif p.offset < 0:
                out[tp] = None
            else:
                out[tp] = (p.offset, p.timestamp)
    return out


def _epoch_results(
    resp: OffsetForLeaderEpochResponse, batch: Sequence[TopicPartition]
) -> dict[TopicPartition, tuple[int, int] | BrokerResponseError | None]:
    """Per partition of ``batch``: (epoch, end offset), the broker's error, or None."""
    asked = set(batch)
    out: dict[TopicPartition, tuple[int, int] | BrokerResponseError | None] = {}
    for t in resp.topics:
        for p in t.partitions:
            tp = TopicPartition(t.topic, p.partition)
            if tp not in asked:
                continue
            if p.error_code:
                out[tp] = error_for_code(p.error_code, f"OffsetForLeaderEpoch for {tp}")
            else:
                out[tp] = (p.leader_epoch, p.end_offset)
    for tp in batch:
        out.setdefault(tp, None)
    return out


__all__ = ["GENERATION_ERRORS", "OffsetClient"]
