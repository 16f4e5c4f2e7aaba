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
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import anyio

from ..cluster.client import ClusterClient
from ..errors import (
    BrokerResponseError,
    ConfigError,
    IncompatibleBrokerVersionError,
    KafkaConnectionError,
    KafkaTimeoutError,
    error_for_code,
)
from ..protocol.apis import LIST_OFFSETS, OFFSET_COMMIT, OFFSET_FETCH
from ..structs import OffsetAndMetadata, TopicPartition
from ._io import send
from .errors import CommitFailedError

log = logging.getLogger(__name__)

#: Commit errors that mean "your generation is over".
GENERATION_ERRORS = frozenset({22, 25, 27})
FENCED_INSTANCE_ID = 82
_COORDINATOR_ERRORS = frozenset({14, 15, 16})
#: ListOffsets errors after which the leader is looked up again.
_LEADER_ERRORS = frozenset({3, 5, 6, 9, 56, 74, 75})
#: OffsetFetch: a transactional commit is pending for the partition (retry shortly).
_UNSTABLE_OFFSET_COMMIT = 88


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

        def body(version: int) -> dict[str, Any]:
            topics = [{"name": t, "partition_indexes": ps} for t, ps in _by_topic(wanted).items()]
            if version >= 8:
                return {
                    "groups": [{"group_id": group, "topics": topics}],
                    "require_stable": require_stable,
                }
            out: dict[str, Any] = {"group_id": group, "topics": topics}
            if version >= 7:
                out["require_stable"] = require_stable
            return out

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
                if version >= 8:
                    grp = resp.groups[0] if resp.groups else None
                    top_error = grp.error_code if grp is not None else 0
                    topics = grp.topics if grp is not None else []
                else:
                    top_error = getattr(resp, "error_code", 0)
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
    ) -> None:
        """Commit ``offsets`` for this group; raises ``CommitFailedError`` if the group
        rebalanced (after telling ``on_generation_error`` the code), the broker's typed
        error for other non-retriable failures, ``KafkaTimeoutError`` at the deadline."""
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
                )
                if self.on_committed is not None:
                    self.on_committed(offsets)
        finally:
            self._lock.release()

    async def _commit_locked(
        self,
        group: str,
        offsets: Mapping[TopicPartition, OffsetAndMetadata],
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
        deadline: float,
        on_generation_error: Callable[[int], None] | None,
    ) -> None:

        def body(version: int) -> dict[str, Any]:
            topics: dict[str, list[dict[str, Any]]] = {}
            for tp, om in offsets.items():
                topics.setdefault(tp.topic, []).append(
                    {
                        "partition_index": tp.partition,
                        "committed_offset": om.offset,
                        "committed_leader_epoch": om.leader_epoch,
                        "committed_metadata": om.metadata,
                    }
                )
            out: dict[str, Any] = {
                "group_id": group,
                "generation_id_or_member_epoch": generation_id,
                "member_id": member_id,
                "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()],
            }
            if version >= 7:
                out["group_instance_id"] = group_instance_id
            return out

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
                    await self._client.refresh_metadata({tp.topic for tp in missing})
                    md = self._client.metadata
                for tp, ts in pending.items():
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

        def body(version: int) -> dict[str, Any]:
            topics: dict[str, list[dict[str, Any]]] = {}
            for tp, ts in batch.items():
                topics.setdefault(tp.topic, []).append(
                    {"partition_index": tp.partition, "timestamp": ts}
                )
            out: dict[str, Any] = {
                "replica_id": -1,
                "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()],
                "timeout_ms": int(self._timeout * 1000),
            }
            if version >= 2:
                out["isolation_level"] = isolation
            return out

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


__all__ = ["GENERATION_ERRORS", "OffsetClient"]
