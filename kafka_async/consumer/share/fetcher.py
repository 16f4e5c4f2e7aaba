"""The share fetcher: ShareFetch and ShareAcknowledge, one share session per broker.

One loop per broker that leads an assigned partition (``_node_loop``). A loop sends a
ShareFetch when nothing it fetched earlier still waits in the buffer for the application
(so a member never holds more acquired records than one answer per broker beyond what the
application has), carrying the acknowledgements pending for that broker's partitions. Every
request to a broker goes under that broker's lock: a session's epochs are strictly
sequential, so a ``commit()``'s ShareAcknowledge waits for a ShareFetch in flight (at most
``fetch_max_wait_ms`` on the broker) and takes the next epoch.

RENEW acknowledgements (KIP-1222) never ride on a ShareFetch: one that carries them must
fetch nothing (every limit 0), so the loop sends them at once in a ShareAcknowledge v2 with
``is_renew_ack`` (with whatever else is pending for that broker). ``share_acquire_mode=
"record_limit"`` (KIP-1206) asks for ShareFetch v2: a broker without it is a fatal
``IncompatibleBrokerVersionError`` naming what it advertised, never a silent downgrade.

Acquired records go into ``buffer`` (one :class:`Completed` per partition and answer); gaps
are acknowledged at once; the answer's per-partition acknowledgement errors settle what the
request carried (``AcknowledgementBook.settle``). ``close_sessions`` (close()) stops the
loops, releases what was fetched but never delivered, and sends each broker a final
ShareAcknowledge (epoch -1) with what is pending, which closes the session.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import anyio
import anyio.abc

from ...cluster.client import ClusterClient
from ...cluster.routing import send_request as send
from ...errors import (
    IncompatibleBrokerVersionError,
    KafkaError,
    KafkaTimeoutError,
    error_for_code,
)
from ...protocol.apis import SHARE_ACKNOWLEDGE, SHARE_FETCH
from ...protocol.apis import share_acknowledge as sa
from ...protocol.apis import share_fetch as sf
from ...structs import TopicPartition
from .._signal import Signal
from .acks import (
    GAP,
    RENEW,
    AcknowledgementBook,
    AcknowledgeType,
    Acks,
    acknowledgement_batches,
)
from .config import ShareConsumerConfig
from .records import AcquiredRecord, select_acquired
from .session import FATAL_FETCH_ERRORS, FINAL_EPOCH, FetchPlan, ShareSession

log = logging.getLogger(__name__)

#: ShareFetch / ShareAcknowledge v1 (Apache Kafka 4.1, KIP-932 final).
MIN_SHARE_VERSION = 1
#: ShareFetch / ShareAcknowledge v2 (Apache Kafka 4.2): RENEW (KIP-1222) and the record-limit
#: acquire mode (KIP-1206).
RENEW_VERSION = 2
#: ShareFetch's ``share_acquire_mode`` wire values.
ACQUIRE_MODES = {"batch_optimized": 0, "record_limit": 1}
#: How long acknowledgements wait for a ShareFetch to ride on (one goes only once the
#: application has taken what the last one brought) before a ShareAcknowledge takes them.
ACK_LINGER = 1.0


@dataclass
class Completed:
    """The acquired records of one partition from one ShareFetch answer."""

    node_id: int
    tp: TopicPartition
    records: deque[AcquiredRecord]
    #: When the answer arrived (monotonic) and the lock duration it named.
    acquired_at: float = 0.0


@dataclass
class _Node:
    node_id: int
    session: ShareSession
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    #: Records fetched from this broker that wait in the buffer.
    buffered: int = 0
    #: Since when acknowledgements wait while the buffer is not drained (monotonic).
    ack_wait_since: float | None = None
    running: bool = False


class ShareFetcher:
    """ShareFetch / ShareAcknowledge for one share consumer."""

    def __init__(
        self,
        client: ClusterClient,
        config: ShareConsumerConfig,
        book: AcknowledgementBook,
        member_id: Any,
        changed: Signal,
    ) -> None:
        self._client = client
        self._config = config
        self._book = book
        #: A callable giving the member id (the membership's, which is fixed for its life).
        self._member_id = member_id
        self._changed = changed
        self._wake = Signal()
        self.assigned: frozenset[TopicPartition] = frozenset()
        self.buffer: deque[Completed] = deque()
        self._nodes: dict[int, _Node] = {}
        self._tg: anyio.abc.TaskGroup | None = None
        self.closing = False
        #: A fatal error (the broker lacks the API, authorization), raised by the consumer.
        self.error: KafkaError | None = None
        #: The acquisition lock duration the brokers named last (ms; -1 before any answer).
        self.lock_timeout_ms = -1
        self.fetches = 0
        self.fetch_errors = 0
        self.acknowledge_requests = 0
        self.records_acquired = 0
        #: The most records one ShareFetch answer acquired from one broker.
        self.largest_acquisition = 0
        #: Acknowledgements (offsets) that rode on a ShareFetch / went in a ShareAcknowledge.
        self.acknowledged_on_fetch = 0
        self.acknowledged_alone = 0
        self.partition_errors: dict[str, int] = {}
        #: Topic ids this fetcher named to brokers, by name: a session may hold a partition
        #: of a topic the metadata no longer knows (deleted), and forgetting it needs its id.
        self._ids: dict[str, uuid.UUID] = {}

    # -- assignment --------------------------------------------------------------------------

    def set_assignment(self, partitions: frozenset[TopicPartition]) -> None:
        """The membership's new assignment: fetch from these partitions from now on."""
        self.assigned = partitions
        self._client.add_topics({tp.topic for tp in partitions})
        self._wake.notify()

    def wake(self) -> None:
        self._wake.notify()

    def delivered_from(self, node_id: int, count: int) -> None:
        """The application took ``count`` buffered records fetched from ``node_id``."""
        node = self._nodes.get(node_id)
        if node is not None:
            node.buffered -= count
            if node.buffered <= 0:
                node.buffered = 0
                self._wake.notify()

    def _topic_id(self, topic: str) -> uuid.UUID | None:
        """The topic's id: the metadata's, else the one named earlier (a deleted topic)."""
        topic_id = self._client.metadata.topic_id(topic)
        if topic_id is None:
            return self._ids.get(topic)
        self._ids[topic] = topic_id
        return topic_id

    def _topic_name(self, topic_id: uuid.UUID) -> str | None:
        name = self._client.metadata.topic_name(topic_id)
        if name is None:
            for known, known_id in self._ids.items():
                if known_id == topic_id:
                    return known
        return name

    def _leaders(self) -> dict[int, set[TopicPartition]]:
        md = self._client.metadata
        by_node: dict[int, set[TopicPartition]] = {}
        missing = False
        for tp in self.assigned:
            leader = md.leader_for(tp)
            if leader is None or leader < 0:
                missing = True
                continue
            by_node.setdefault(leader, set()).add(tp)
        if missing:
            self._client.request_metadata_update()
        return by_node

    # -- loops -------------------------------------------------------------------------------

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Start a loop for each broker that leads an assigned partition (or holds pending
        acknowledgements) as they appear."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            task_status.started()
            while not self.closing:
                event = self._wake.current()
                wanted = set(self._leaders()) | self._book.pending_nodes()
                for node_id in wanted:
                    node = self._node(node_id)
                    if not node.running:
                        node.running = True
                        tg.start_soon(self._node_loop, node)
                await self._wake.wait(1.0, event)

    def _stopping(self) -> bool:
        """close() began (read anew after each wait: it is set by another task)."""
        return self.closing

    def _node(self, node_id: int) -> _Node:
        node = self._nodes.get(node_id)
        if node is None:
            node = self._nodes[node_id] = _Node(node_id, ShareSession(node_id))
        return node

    async def _node_loop(self, node: _Node) -> None:
        backoff = self._config.client.retry_backoff_ms / 1000
        try:
            while not self.closing and self.error is None:
                event = self._wake.current()
                wanted = self._leaders().get(node.node_id, set())
                pending = node.node_id in self._book.pending_nodes()
                session = node.session
                if not (wanted or session.partitions or (pending and session.is_open)):
                    if not pending:
                        return  # nothing to read here any more; run() restarts it if needed
                    await self._wake.wait(1.0, event)  # acknowledgements without a session
                    continue
                if pending and self._book.renewals_pending(node.node_id):
                    # A lock is running out: RENEWs go now, in a ShareAcknowledge (a
                    # fetch cannot carry them), with what else is pending here.
                    await self.acknowledge(node.node_id)
                    continue
                if node.buffered > 0:
                    # The application has not taken everything fetched from here yet: no
                    # fetch, but acknowledgements do not wait for the buffer to drain (a
                    # record's lock runs meanwhile): they go alone after ACK_LINGER.
                    now = time.monotonic()
                    if not (pending and session.is_open):
                        node.ack_wait_since = None
                    elif node.ack_wait_since is None:
                        node.ack_wait_since = now
                    elif now - node.ack_wait_since >= ACK_LINGER:
                        node.ack_wait_since = None
                        await self.acknowledge(node.node_id)
                        continue
                    await self._wake.wait(ACK_LINGER if pending else 1.0, event)
                    continue
                node.ack_wait_since = None
                async with node.lock:
                    if self._stopping():
                        return
                    ok = await self._fetch(node, wanted)
                if not ok:
                    await anyio.sleep(backoff)
        finally:
            node.running = False

    # -- ShareFetch --------------------------------------------------------------------------

    async def _fetch(self, node: _Node, wanted: set[TopicPartition]) -> bool:
        """One ShareFetch to ``node``; False when it failed (the caller backs off)."""
        cfg = self._config
        plan = node.session.plan(wanted)
        acks: Acks = self._book.take(node.node_id, renewals=False) if plan.may_acknowledge else {}
        send_set = plan.send | frozenset(acks)
        plan = FetchPlan(plan.epoch, send_set, plan.forget - frozenset(acks))
        topics: dict[str, sf.FetchTopic] = {}
        for tp in sorted(plan.send):
            topic_id = self._topic_id(tp.topic)
            if topic_id is None:
                self._client.request_metadata_update()
                self._unsendable(tp, acks)
                continue
            entry = topics.get(tp.topic)
            if entry is None:
                entry = topics[tp.topic] = sf.FetchTopic(topic_id=topic_id, partitions=[])
            entry.partitions.append(
                sf.FetchPartition(
                    partition_index=tp.partition,
                    acknowledgement_batches=[
                        sf.AcknowledgementBatch(
                            first_offset=f, last_offset=last, acknowledge_types=list(t)
                        )
                        for f, last, t in acknowledgement_batches(acks.get(tp, {}))
                    ],
                )
            )
        forgotten: dict[str, sf.ForgottenTopic] = {}
        for tp in sorted(plan.forget):
            topic_id = self._topic_id(tp.topic)
            if topic_id is None:
                continue
            forgotten.setdefault(
                tp.topic, sf.ForgottenTopic(topic_id=topic_id, partitions=[])
            ).partitions.append(tp.partition)
        body = sf.ShareFetchRequest(
            group_id=cfg.group_id,
            member_id=self._member_id(),
            share_session_epoch=plan.epoch,
            max_wait_ms=cfg.fetch_max_wait_ms,
            min_bytes=cfg.fetch_min_bytes,
            max_bytes=cfg.fetch_max_bytes,
            max_records=cfg.max_poll_records,
            batch_size=cfg.max_poll_records,
            share_acquire_mode=ACQUIRE_MODES[cfg.share_acquire_mode],
            topics=list(topics.values()),
            forgotten_topics_data=list(forgotten.values()),
        )
        self.fetches += 1
        try:
            _, resp = await send(
                self._client,
                node.node_id,
                SHARE_FETCH,
                body,
                purpose="fetch",
                min_version=RENEW_VERSION if cfg.record_limit else MIN_SHARE_VERSION,
                timeout=cfg.client.request_timeout + cfg.fetch_max_wait_ms / 1000,
            )
        except IncompatibleBrokerVersionError as exc:
            if cfg.record_limit:
                what = (
                    f"share_acquire_mode='record_limit' (ShareFetch v{RENEW_VERSION}+, "
                    "KIP-1206, Apache Kafka 4.2+)"
                )
            else:
                what = (
                    f"share groups (ShareFetch v{MIN_SHARE_VERSION}+, Apache Kafka 4.1+ "
                    "with share.version=1)"
                )
            self._fatal(
                IncompatibleBrokerVersionError(
                    f"broker {node.node_id} does not support {what}: {exc}"
                ),
                acks,
            )
            return False
        except KafkaError as exc:
            self.fetch_errors += 1
            log.info("share fetch from broker %d failed: %s", node.node_id, exc)
            node.session.reset()
            self._book.fail(acks, exc)
            return False
        if resp.error_code:
            self.fetch_errors += 1
            error = error_for_code(resp.error_code, resp.error_message)
            node.session.reset()
            self._book.fail(acks, error)
            if resp.error_code in FATAL_FETCH_ERRORS:
                self._fatal(error, {})
                return False
            log.info("share fetch from broker %d: %s", node.node_id, error)
            self._client.request_metadata_update()
            return False
        node.session.on_fetch_answered(plan)
        self.acknowledged_on_fetch += sum(len(offsets) for offsets in acks.values())
        if resp.acquisition_lock_timeout_ms > 0:
            self.lock_timeout_ms = resp.acquisition_lock_timeout_ms
        return self._handle_answer(node, resp, acks)

    def _handle_answer(self, node: _Node, resp: sf.ShareFetchResponse, acks: Acks) -> bool:
        """Buffer the acquired records, acknowledge gaps, settle ``acks``. False when a
        partition failed and nothing came (the loop backs off until metadata moves)."""
        cfg = self._config
        now = time.monotonic()
        ack_errors: dict[TopicPartition, KafkaError | None] = {}
        hints: list[tuple[TopicPartition, int, int]] = []
        got = 0
        failed = False
        for topic in resp.responses:
            name = self._topic_name(topic.topic_id)
            if name is None:
                self._client.request_metadata_update()
                continue
            for p in topic.partitions:
                tp = TopicPartition(name, p.partition_index)
                if p.acknowledge_error_code:
                    ack_errors[tp] = error_for_code(
                        p.acknowledge_error_code, p.acknowledge_error_message
                    )
                if p.error_code:
                    err = error_for_code(p.error_code, p.error_message)
                    failed = True
                    self.partition_errors[err.name] = self.partition_errors.get(err.name, 0) + 1
                    log.info("share fetch %s from broker %d: %s", tp, node.node_id, err)
                    if err.invalid_metadata:
                        if p.current_leader.leader_id >= 0:
                            hints.append(
                                (tp, p.current_leader.leader_id, p.current_leader.leader_epoch)
                            )
                        self._client.request_metadata_update()
                    if not p.acquired_records:
                        continue
                if not p.acquired_records:
                    continue
                part = select_acquired(
                    p.records,
                    [(a.first_offset, a.last_offset, a.delivery_count) for a in p.acquired_records],
                    check_crcs=cfg.check_crcs,
                    max_decompressed_size=cfg.max_decompressed_size,
                )
                for offset in part.gaps:
                    self._book.add(node.node_id, tp, offset, GAP)
                for offset in part.undecoded:
                    self._book.add(node.node_id, tp, offset, int(AcknowledgeType.RELEASE))
                if part.error is not None:
                    log.warning("share fetch %s: undecodable data released: %s", tp, part.error)
                if part.records:
                    got += len(part.records)
                    self.buffer.append(Completed(node.node_id, tp, deque(part.records), now))
        if hints:
            self._client.apply_leader_hints(hints, resp.node_endpoints)
        node.buffered += got
        self.records_acquired += got
        acquired = sum(
            a.last_offset - a.first_offset + 1
            for topic in resp.responses
            for p in topic.partitions
            for a in p.acquired_records
        )
        self.largest_acquisition = max(self.largest_acquisition, acquired)
        self._book.settle(acks, ack_errors)
        for tp, refused in ack_errors.items():
            if refused is not None:
                log.warning("acknowledgements of %s were refused: %s", tp, refused)
        self._changed.notify()
        return got > 0 or not failed

    def _unsendable(self, tp: TopicPartition, acks: Acks) -> None:
        """``tp``'s topic has no id in the metadata (deleted meanwhile): its pending
        acknowledgements cannot be named in a request; they fail."""
        offsets = acks.pop(tp, None)
        if offsets:
            self._book.fail({tp: offsets}, KafkaError(f"{tp.topic}: topic id unknown"))

    def _fatal(self, error: KafkaError, acks: Acks) -> None:
        if acks:
            self._book.fail(acks, error)
        if self.error is None:
            log.error("share consumer: %s", error)
            self.error = error
        self._changed.notify()

    # -- ShareAcknowledge --------------------------------------------------------------------

    async def acknowledge(self, node_id: int, *, final: bool = False) -> None:
        """Send what is pending for ``node_id`` in a ShareAcknowledge (``final``: with epoch
        -1, closing the session, also when nothing is pending). How it ended goes to the
        book (``settle``/``fail``)."""
        node = self._node(node_id)
        async with node.lock:
            if final:
                self._release_buffered(node_id)
            session = node.session
            acks = self._book.take(node_id)
            if not acks and not (final and session.is_open):
                return
            epoch = FINAL_EPOCH if final and session.is_open else session.acknowledge_epoch()
            if epoch is None:
                self._book.fail(
                    acks,
                    KafkaError(
                        f"no share session is open with broker {node_id} to carry the "
                        "acknowledgements (its session was lost; the broker redelivers the "
                        "records once their acquisition locks expire)"
                    ),
                )
                return
            try:
                await self._send_acknowledge(node, epoch, acks)
            except anyio.get_cancelled_exc_class():
                self._book.fail(
                    acks, KafkaTimeoutError(f"acknowledgement to broker {node_id} abandoned")
                )
                node.session.reset()  # the broker may or may not have seen this epoch
                raise

    async def _send_acknowledge(self, node: _Node, epoch: int, acks: Acks) -> None:
        renew = any(RENEW in offsets.values() for offsets in acks.values())
        topics: dict[str, sa.AcknowledgeTopic] = {}
        for tp in sorted(acks):
            topic_id = self._topic_id(tp.topic)
            if topic_id is None:
                self._unsendable(tp, acks)
                continue
            entry = topics.get(tp.topic)
            if entry is None:
                entry = topics[tp.topic] = sa.AcknowledgeTopic(topic_id=topic_id, partitions=[])
            entry.partitions.append(
                sa.AcknowledgePartition(
                    partition_index=tp.partition,
                    acknowledgement_batches=[
                        sa.AcknowledgementBatch(
                            first_offset=f, last_offset=last, acknowledge_types=list(t)
                        )
                        for f, last, t in acknowledgement_batches(acks[tp])
                    ],
                )
            )
        body = sa.ShareAcknowledgeRequest(
            group_id=self._config.group_id,
            member_id=self._member_id(),
            share_session_epoch=epoch,
            is_renew_ack=renew,
            topics=list(topics.values()),
        )
        self.acknowledge_requests += 1
        try:
            _, resp = await send(
                self._client,
                node.node_id,
                SHARE_ACKNOWLEDGE,
                body,
                purpose="fetch",
                min_version=RENEW_VERSION if renew else MIN_SHARE_VERSION,
                timeout=self._config.client.request_timeout,
            )
        except IncompatibleBrokerVersionError as exc:
            # Nothing was sent: the session stands; the acknowledgements fail with it.
            self._book.fail(acks, renew_unsupported(node.node_id, exc))
            return
        except KafkaError as exc:
            log.info("share acknowledge to broker %d failed: %s", node.node_id, exc)
            node.session.reset()
            self._book.fail(acks, exc)
            return
        if resp.error_code:
            error = error_for_code(resp.error_code, resp.error_message)
            log.info("share acknowledge to broker %d: %s", node.node_id, error)
            node.session.reset()
            self._book.fail(acks, error)
            return
        node.session.on_acknowledge_answered(epoch)
        if resp.acquisition_lock_timeout_ms > 0:
            self.lock_timeout_ms = resp.acquisition_lock_timeout_ms
        self.acknowledged_alone += sum(len(offsets) for offsets in acks.values())
        errors: dict[TopicPartition, KafkaError | None] = {}
        for topic in resp.responses:
            name = self._topic_name(topic.topic_id)
            if name is None:
                continue
            for p in topic.partitions:
                if p.error_code:
                    tp = TopicPartition(name, p.partition_index)
                    errors[tp] = error_for_code(p.error_code, p.error_message)
                    log.warning("acknowledgements of %s were refused: %s", tp, errors[tp])
        self._book.settle(acks, errors)

    async def check_renew(self, node_id: int) -> None:
        """Raise the typed error of :func:`renew_unsupported` when ``node_id`` does not
        advertise ShareAcknowledge v2 (nothing is sent)."""
        conn = await self._client.connection(node_id, "fetch")
        try:
            conn.version_for(SHARE_ACKNOWLEDGE, RENEW_VERSION)
        except IncompatibleBrokerVersionError as exc:
            raise renew_unsupported(node_id, exc) from None

    def _release_buffered(self, node_id: int) -> int:
        """Give back what ``node_id`` delivered into the buffer that the application never
        took (close())."""
        kept: deque[Completed] = deque()
        released = 0
        for c in self.buffer:
            if c.node_id != node_id:
                kept.append(c)
                continue
            for r in c.records:
                self._book.add(node_id, c.tp, r.offset, int(AcknowledgeType.RELEASE))
                released += 1
        self.buffer = kept
        node = self._nodes.get(node_id)
        if node is not None:
            node.buffered = 0
        return released

    def session_nodes(self) -> set[int]:
        """Brokers with an open share session or pending acknowledgements."""
        return {n for n, node in self._nodes.items() if node.session.is_open} | (
            self._book.pending_nodes()
        )

    async def close_sessions(self, *, stop: bool = True) -> None:
        """close() (``stop``: no fetch from now on) or unsubscribe() (the assignment was
        emptied first): release what was fetched but not delivered, and close every share
        session with a final ShareAcknowledge carrying what is pending."""
        if stop:
            self.closing = True
        self._wake.notify()
        nodes = self.session_nodes() | {c.node_id for c in self.buffer}
        async with anyio.create_task_group() as tg:
            for node_id in nodes:
                tg.start_soon(partial(self.acknowledge, node_id, final=True))

    def statistics(self) -> Mapping[str, Any]:
        return {
            "assigned_partitions": len(self.assigned),
            "fetches": self.fetches,
            "fetch_errors": self.fetch_errors,
            "acknowledge_requests": self.acknowledge_requests,
            "acknowledged_on_fetch": self.acknowledged_on_fetch,
            "acknowledged_alone": self.acknowledged_alone,
            "records_acquired": self.records_acquired,
            "largest_acquisition": self.largest_acquisition,
            "buffered_records": sum(len(c.records) for c in self.buffer),
            "acquisition_lock_timeout_ms": self.lock_timeout_ms,
            "partition_errors": dict(self.partition_errors),
            "sessions": {
                str(n): {
                    "epoch": node.session.epoch,
                    "partitions": len(node.session.partitions),
                    "opened": node.session.opened,
                    "resets": node.session.resets,
                }
                for n, node in sorted(self._nodes.items())
            },
        }


def renew_unsupported(node_id: int, cause: Exception) -> IncompatibleBrokerVersionError:
    """The typed error of a RENEW a broker cannot take (no ShareAcknowledge v2)."""
    return IncompatibleBrokerVersionError(
        f"broker {node_id} cannot renew acquisition locks: RENEW (KIP-1222) needs "
        f"ShareAcknowledge v{RENEW_VERSION}+ (Apache Kafka 4.2+): {cause}"
    )


__all__ = ["Completed", "ShareFetcher", "renew_unsupported"]
