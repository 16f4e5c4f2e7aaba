"""The share group heartbeat loop: carries out what ``membership.ShareMembership`` decides.

One task in the share consumer's task group sends ShareGroupHeartbeat to the group
coordinator whenever one is due (at once to join or to tell a new subscription, then at the
interval the coordinator names) and feeds each answer to the state machine; the actions it
gets back are carried out here: a new assignment goes to the fetcher, unknown topic ids
refresh the metadata, a fatal error is kept for the consumer to raise. ``leave`` (close())
sends the heartbeat with epoch -1.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import anyio.abc

from ...cluster.client import ClusterClient
from ...cluster.routing import send_request
from ...errors import BrokerResponseError, IncompatibleBrokerVersionError, KafkaError
from ...protocol.apis import SHARE_GROUP_HEARTBEAT
from ...protocol.apis.share_group_heartbeat import (
    ShareGroupHeartbeatRequest,
    ShareGroupHeartbeatResponse,
)
from ...structs import TopicPartition
from .._signal import Signal
from ..group.heartbeat_coordinator import heartbeat_answer
from .config import ShareConsumerConfig
from .membership import (
    Action,
    Assignment,
    Fail,
    FindCoordinator,
    ResolveTopics,
    ShareHeartbeatRequest,
    ShareMembership,
    ShareMemberState,
)

log = logging.getLogger(__name__)

#: ShareGroupHeartbeat v1: Apache Kafka 4.1 (KIP-932 final).
MIN_HEARTBEAT_VERSION = 1


class ShareHeartbeat:
    """Membership of one share consumer in its share group."""

    def __init__(
        self,
        client: ClusterClient,
        config: ShareConsumerConfig,
        on_assignment: Callable[[frozenset[TopicPartition]], None],
        changed: Signal,
    ) -> None:
        self.group_id = config.group_id
        self._client = client
        self._config = config
        self._on_assignment = on_assignment
        self._changed = changed
        self.membership = ShareMembership(
            rack_id=config.client_rack, retry_backoff_ms=config.client.retry_backoff_ms
        )
        self._beat = Signal()
        #: A fatal error, raised by the consumer to the application.
        self.error: KafkaError | None = None
        self.heartbeats = 0
        self.heartbeat_failures = 0

    def subscribe(self, topics: tuple[str, ...]) -> None:
        self.membership.subscribe(topics)
        self._beat.notify()

    def _names(self) -> Mapping[uuid.UUID, str]:
        md = self._client.metadata
        return {t.topic_id: name for name, t in md.topics.items() if t.topic_id}

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        task_status.started()
        while True:
            event = self._beat.current()
            m = self.membership
            now = time.monotonic()
            if m.heartbeat_due(now):
                await self._heartbeat_once()
                continue
            if m.state in (ShareMemberState.JOINING, ShareMemberState.STABLE):
                wait = min(max(0.0, m.next_heartbeat_at - now), 1.0)
            else:
                wait = 1.0
            await self._beat.wait(wait, event)

    def _body(self, req: ShareHeartbeatRequest) -> ShareGroupHeartbeatRequest:
        return ShareGroupHeartbeatRequest(
            group_id=self.group_id,
            member_id=req.member_id,
            member_epoch=req.member_epoch,
            rack_id=req.rack_id,
            subscribed_topic_names=None
            if req.subscribed_topic_names is None
            else list(req.subscribed_topic_names),
        )

    async def _send(
        self,
        req: ShareHeartbeatRequest,
        timeout: float | None = None,  # noqa: ASYNC109 - a deadline
    ) -> ShareGroupHeartbeatResponse:
        node = await self._client.coordinator(self.group_id, timeout=timeout)
        _, resp = await send_request(
            self._client,
            node,
            SHARE_GROUP_HEARTBEAT,
            self._body(req),
            purpose="group",
            min_version=MIN_HEARTBEAT_VERSION,
            timeout=timeout or self._config.client.request_timeout,
        )
        return resp

    async def _heartbeat_once(self) -> None:
        m = self.membership
        req = m.build_heartbeat(time.monotonic())
        self.heartbeats += 1
        try:
            resp = await self._send(req)
        except IncompatibleBrokerVersionError as exc:
            self._execute(
                m.fail(
                    IncompatibleBrokerVersionError(
                        f"share group {self.group_id}: the broker does not support share "
                        f"groups (ShareGroupHeartbeat v{MIN_HEARTBEAT_VERSION}+: Apache Kafka "
                        f"4.1+ with the share.version=1 feature) ({exc})"
                    )
                )
            )
            return
        except BrokerResponseError as exc:
            self.heartbeat_failures += 1
            if exc.retriable or exc.invalid_coordinator:
                log.info("share group %s: heartbeat failed: %s", self.group_id, exc)
                self._execute(m.on_heartbeat_failed(time.monotonic()))
                return
            # Refused before the heartbeat was sent (FindCoordinator: the group is not ours
            # to read, e.g. GROUP_AUTHORIZATION_FAILED): trying again changes nothing.
            self._execute(m.fail(exc))
            return
        except KafkaError as exc:
            self.heartbeat_failures += 1
            log.info("share group %s: heartbeat failed: %s", self.group_id, exc)
            self._execute(m.on_heartbeat_failed(time.monotonic()))
            return
        if resp.error_code:
            self.heartbeat_failures += 1
            log.info(
                "share group %s: heartbeat (epoch %d) answered %d %s",
                self.group_id,
                req.member_epoch,
                resp.error_code,
                resp.error_message or "",
            )
        before = m.state
        actions = m.on_heartbeat_response(heartbeat_answer(resp), time.monotonic(), self._names())
        if before is ShareMemberState.JOINING and m.state is ShareMemberState.STABLE:
            log.info(
                "share group %s: joined as %s, epoch %d", self.group_id, m.member_id, m.member_epoch
            )
            self._changed.notify()
        self._execute(actions)
        if any(isinstance(a, ResolveTopics) for a in actions):
            await self._resolve()

    def _execute(self, actions: list[Action]) -> None:
        for action in actions:
            if isinstance(action, FindCoordinator):
                self._client.invalidate_coordinator(self.group_id)
            elif isinstance(action, Assignment):
                tps = frozenset(TopicPartition(t, p) for t, p in action.partitions)
                log.info("share group %s: assigned %s", self.group_id, sorted(tps))
                self._on_assignment(tps)
                self._changed.notify()
            elif isinstance(action, Fail):
                log.error("share group %s: fatal: %s", self.group_id, action.error)
                self.error = action.error
                self._changed.notify()

    async def _resolve(self) -> None:
        """The assignment named topic ids the metadata lacks: refresh, then resolve."""
        try:
            await self._client.refresh_metadata(self.membership.topics)
        except KafkaError as exc:
            log.info("share group %s: metadata refresh failed: %s", self.group_id, exc)
        actions = self.membership.resolve(self._names())
        self._execute([a for a in actions if not isinstance(a, ResolveTopics)])
        if any(isinstance(a, ResolveTopics) for a in actions):
            self.membership.next_heartbeat_at = min(
                self.membership.next_heartbeat_at,
                time.monotonic() + self._config.client.retry_backoff_ms / 1000,
            )

    async def leave(self, timeout: float) -> None:  # noqa: ASYNC109 - a deadline
        """Send the leave heartbeat (epoch -1), within ``timeout`` seconds."""
        req = self.membership.leave()
        try:
            if req is not None:
                with anyio.move_on_after(timeout):
                    try:
                        resp = await self._send(req, timeout=max(timeout, 0.001))
                        if resp.error_code:
                            log.info(
                                "share group %s: leave heartbeat answered %d",
                                self.group_id,
                                resp.error_code,
                            )
                    except KafkaError as exc:
                        log.info("share group %s: leave heartbeat failed: %s", self.group_id, exc)
        finally:
            self._execute(self.membership.finish_leave())

    def statistics(self) -> Mapping[str, Any]:
        m = self.membership
        return {
            "group_id": self.group_id,
            "state": m.state.value,
            "member_id": m.member_id,
            "member_epoch": m.member_epoch,
            "subscription": list(m.topics),
            "assigned_partitions": len(m.assigned),
            "joins": m.joins,
            "join_reason": m.join_reason,
            "heartbeats": self.heartbeats,
            "heartbeat_failures": self.heartbeat_failures,
            "heartbeat_interval_ms": m.heartbeat_interval_ms,
            "error": repr(self.error) if self.error else None,
        }


__all__ = ["ShareHeartbeat"]
