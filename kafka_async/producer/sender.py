"""The sender: moves ready batches from the accumulator to the brokers and settles them.

One loop (``Sender.run``) in the producer's task group:

1. make sure a producer id exists (InitProducerId) when idempotent, and bump the epoch when a
   sequence went astray (KIP-360), waiting first until nothing is in flight;
2. add partitions to the open transaction (AddPartitionsToTxn) before their batches go;
3. expire batches past ``delivery_timeout_ms``;
4. ask the accumulator which brokers have sendable batches, drain each into one Produce
   request and hand it to a request task, at most ``max_in_flight_requests_per_connection``
   per broker;
5. sleep until a record opens or fills a batch, a request finishes, a linger or backoff
   timer runs out, or a flush starts.

Request tasks write the request (pipelined on the broker's connection), wait for the answer,
and then handle answers of one broker strictly in the order the requests were sent: each
waits for its predecessor's handling to finish. Settling a batch is synchronous (accumulator
calls), so the order of settlement is the order of the log.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from .. import errors as E
from ..cluster.client import TRANSACTION
from ..errors import (
    BrokerResponseError,
    ClientClosedError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    ProtocolDecodeError,
    UnsupportedFieldError,
    error_for_code,
)
from ..protocol.apis import ADD_PARTITIONS_TO_TXN, INIT_PRODUCER_ID, PRODUCE
from ..protocol.apis.add_partitions_to_txn import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnTopic,
)
from ..protocol.apis.init_producer_id import InitProducerIdRequest
from ..protocol.apis.produce import (
    PartitionProduceData,
    ProduceRequest,
    ProduceResponse,
    TopicProduceData,
)
from ..structs import TopicPartition
from .accumulator import ProducerBatch, RecordAccumulator, error_name
from .config import ProducerConfig
from .transaction import TV1_MAX_PRODUCE, as_fenced, is_fatal_txn_error

if TYPE_CHECKING:
    from ..cluster.client import ClusterClient
    from .transaction import TransactionState

log = logging.getLogger(__name__)

__all__ = ["Sender"]

_OUT_OF_ORDER = E.OutOfOrderSequenceNumberError.code
_DUPLICATE_SEQUENCE = E.DuplicateSequenceNumberError.code
_NOT_LEADER_OR_FOLLOWER = E.NotLeaderOrFollowerError.code
_UNKNOWN_PRODUCER_ID = E.UnknownProducerIdError.code
_PRODUCER_FENCED = E.ProducerFencedError.code
_INVALID_PRODUCER_EPOCH = E.InvalidProducerEpochError.code
#: The broker refused a batch for its size; a batch of several records is split (the Java
#: client splits on both codes: RECORD_LIST_TOO_LARGE is what older brokers answered when a
#: batch exceeded the log segment size).
_TOO_LARGE = (E.MessageTooLargeError.code, E.RecordListTooLargeError.code)
#: Answers after which the batch may be in the log: the leader appended it and then stopped
#: waiting for the replicas (the delayed produce expired), or says outright it wrote it.
_MAYBE_WRITTEN = (E.RequestTimedOutError.code, E.NotEnoughReplicasAfterAppendError.code)


class Sender:
    """Drains the accumulator into Produce requests; see the module docstring."""

    def __init__(
        self,
        client: ClusterClient,
        accumulator: RecordAccumulator,
        config: ProducerConfig,
        txn: TransactionState | None = None,
    ) -> None:
        self._client = client
        self._acc = accumulator
        self._cfg = config
        self._txn = txn
        self._acks = config.acks
        self._idempotent = config.idempotent
        self._max_in_flight = config.max_in_flight_requests_per_connection
        self._timeout_ms = config.client.request_timeout_ms
        self._wake = anyio.Event()
        #: Set whenever buffer memory is released; the producer waits on it when full.
        self.space = anyio.Event()
        self._in_flight: dict[int, int] = {}
        #: Per broker: the event the last sent request sets once its answer was handled.
        self._last_handled: dict[int, anyio.Event] = {}
        self._bump_needed = False
        self._stopping = False
        #: Set when close() ran out of time: fail instead of retrying.
        self._stopping_hard = False
        self.running = False
        #: The error that stopped the producer for good (fenced, fatal InitProducerId).
        self.fatal_error: BaseException | None = None
        self.requests_sent = 0
        self.batches_sent = 0
        self.retries = 0
        #: Partitions whose new leader a Produce answer named (KIP-951).
        self.leader_hints = 0
        #: Every error a batch met (retried or final), per error name (see ``error_name``).
        self.errors: dict[str, int] = {}
        self.epoch_bumps = 0
        #: Recoveries that took a new producer id because the broker refused an epoch bump.
        self.producer_id_resets = 0
        self._leader_for = self._make_leader_lookup()

    # -- small helpers ---------------------------------------------------------------------

    def _make_leader_lookup(self) -> Any:
        client = self._client

        def leader_for(tp: TopicPartition) -> int | None:
            return client.metadata.leader_for(tp)

        return leader_for

    def wakeup(self) -> None:
        """Make the loop look at the accumulator again (cheap; call after appends)."""
        self._wake.set()

    def _space_freed(self) -> None:
        self.space.set()
        self.space = anyio.Event()

    def notify_space(self) -> None:
        """Wake every task waiting for buffer space (they re-check why they wait)."""
        self._space_freed()

    def statistics(self) -> dict[str, Any]:
        """Counters and in-flight requests per broker."""
        return {
            "in_flight_requests": dict(self._in_flight),
            "requests_sent": self.requests_sent,
            "batches_sent": self.batches_sent,
            "retries": self.retries,
            "leader_hints": self.leader_hints,
            "errors_by_code": dict(self.errors),
            "epoch_bumps": self.epoch_bumps,
            "producer_id_resets": self.producer_id_resets,
            "producer_id": self._acc.producer_id,
            "producer_epoch": self._acc.producer_epoch,
            "fatal_error": repr(self.fatal_error) if self.fatal_error else None,
        }

    # -- the loop --------------------------------------------------------------------------

    def stop(self) -> None:
        """Finish once everything queued is settled (``close``)."""
        self._stopping = True
        self.wakeup()

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """The sender loop; returns after ``stop()`` once nothing is left, or when cancelled."""
        self.running = True
        try:
            async with anyio.create_task_group() as tg:
                task_status.started()
                await self._loop(tg)
        finally:
            self.running = False

    async def _loop(self, tg: anyio.abc.TaskGroup) -> None:
        acc = self._acc
        while True:
            self._wake = anyio.Event()
            if self._stopping and not acc.incomplete:
                return
            if self.fatal_error is not None:
                failed = acc.fail_all_queued(self.fatal_error)
                if failed:
                    self._space_freed()
                if self._stopping and not acc.has_in_flight():
                    return
                await self._wait(None)
                continue
            # Expiry first: records must time out even while no producer id can be had.
            now = time.monotonic()
            expired, unresolved = acc.expire(now)
            if expired:
                self._space_freed()
                if unresolved and self._idempotent:
                    # expire() noted the partitions in acc.unresolved.
                    self._sequence_unresolved(expired[0].error, None)
                if self._txn is not None:
                    self._txn.abortable_error(expired[0].error or KafkaTimeoutError("expired"))
            if (
                self._idempotent
                and (acc.producer_id < 0 or self._bump_needed)
                and not await self._ensure_producer_id()
            ):
                continue
            now = time.monotonic()
            if self._txn is not None and self._txn.pending:
                await self._add_partitions_to_txn()
            nodes, delay, unknown = acc.ready(self._leader_for, now)
            if unknown:
                self._client.request_metadata_update()
                backoff = self._cfg.client.retry_backoff_ms / 1000.0
                delay = backoff if delay is None else min(delay, backoff)
            sent_any = False
            can_send = self._txn.can_send if self._txn is not None else None
            for node in nodes:
                if self._in_flight.get(node, 0) >= self._max_in_flight:
                    continue
                batches = acc.drain(
                    node, self._leader_for, self._cfg.max_request_size, now, can_send
                )
                if not batches:
                    continue
                sent_any = True
                self._start_request(tg, node, batches)
            if sent_any:
                # Let the request tasks write before looking again.
                await anyio.lowlevel.checkpoint()
                continue
            expiry = acc.next_expiry()
            if expiry is not None:
                until = max(expiry - now, 0.0)
                delay = until if delay is None else min(delay, until)
            if self._txn is not None and self._txn.pending:
                # Partitions still to be added to the transaction: try again after a backoff.
                backoff = self._cfg.client.retry_backoff_ms / 1000.0
                delay = backoff if delay is None else min(delay, backoff)
            if nodes and delay is None:
                # Ready but blocked (in-flight limit, ordering): a request finishing wakes us.
                delay = self._cfg.client.request_timeout
            await self._wait(delay)

    async def _wait(self, delay: float | None) -> None:
        if delay is None:
            await self._wake.wait()
        elif delay > 0:
            with anyio.move_on_after(delay):
                await self._wake.wait()
        else:
            await anyio.lowlevel.checkpoint()

    # -- producer id / epoch ---------------------------------------------------------------

    def _sequence_unresolved(self, error: BaseException | None, tp: TopicPartition | None) -> None:
        """A sent batch's fate is unknown or a sequence gap appeared: bump the epoch.

        The bump renumbers ``tp`` (and every partition without unsettled sequenced batches);
        the other partitions keep their old epoch until their batches are resolved.
        """
        if tp is not None:
            self._acc.sequence_unresolved(tp)
        if self._txn is None:
            self._bump_needed = True
        else:
            self._txn.abortable_error(error or KafkaTimeoutError("sequence unresolved"))

    async def _ensure_producer_id(self) -> bool:
        """Get a producer id, or bump the epoch once nothing is in flight. False: try later."""
        acc = self._acc
        if self._bump_needed and acc.has_in_flight():
            await self._wait(self._cfg.client.request_timeout)
            return False
        if self._txn is not None:
            # Transactional producers get their id from Producer.start() (InitProducerId on
            # the transaction coordinator); the sender never bumps on its own.
            self._bump_needed = False
            return True
        bump = acc.producer_id >= 0
        body = InitProducerIdRequest(
            transactional_id=None,
            transaction_timeout_ms=self._cfg.transaction_timeout_ms,
            producer_id=acc.producer_id if bump else -1,
            producer_epoch=acc.producer_epoch if bump else -1,
        )
        try:
            resp = await self._client.least_loaded_request(INIT_PRODUCER_ID, body)
        except UnsupportedFieldError:
            # InitProducerId < v3 cannot carry the current id and epoch: no bump possible,
            # take a fresh producer id (sequences restart at 0 either way).
            acc.producer_id = -1
            acc.producer_epoch = -1
            self.producer_id_resets += 1
            return False
        except KafkaError as exc:
            if not exc.retriable:
                self._fatal(exc)
                return False
            await self._wait(self._cfg.client.retry_backoff_ms / 1000.0)
            return False
        if resp.error_code:
            err = error_for_code(resp.error_code)
            if err.retriable:
                await self._wait(self._cfg.client.retry_backoff_ms / 1000.0)
                return False
            if bump:
                # Old brokers cannot bump an epoch (InitProducerId < v3): start a fresh id.
                acc.producer_id = -1
                acc.producer_epoch = -1
                self.producer_id_resets += 1
                log.warning("epoch bump refused (%r); getting a new producer id", err)
                return False
            self._fatal(err)
            return False
        if bump:
            self.epoch_bumps += 1
            log.info(
                "producer epoch bumped: id %d epoch %d -> id %d epoch %d",
                acc.producer_id,
                acc.producer_epoch,
                resp.producer_id,
                resp.producer_epoch,
            )
        acc.reset_sequences(resp.producer_id, resp.producer_epoch)
        self._bump_needed = False
        return True

    def fail_fatal(self, error: BaseException) -> None:
        """Stop the producer for good: fail queued batches now and wake waiters for space."""
        self._fatal(error)
        self.wakeup()

    def _fatal(self, error: BaseException) -> None:
        self.fatal_error = error
        if self._txn is not None:
            self._txn.fatal_error(error)
        self._acc.fail_all_queued(error)
        self._space_freed()
        log.error("producer stopped by a fatal error: %r", error)

    # -- transactions ----------------------------------------------------------------------

    async def _add_partitions_to_txn(self) -> None:
        txn = self._txn
        assert txn is not None
        pending = sorted(txn.pending)
        by_topic: dict[str, list[int]] = {}
        for tp in pending:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        topics = [AddPartitionsToTxnTopic(name=t, partitions=p) for t, p in by_topic.items()]
        try:
            node = await self._client.coordinator(txn.transactional_id, TRANSACTION)
            # v4+ is the broker-to-broker form (KIP-890); clients use v3 and below.
            conn_version = await self._client.api_version(
                ADD_PARTITIONS_TO_TXN, node, max_version=3
            )
            body = AddPartitionsToTxnRequest(
                v3_and_below_transactional_id=txn.transactional_id,
                v3_and_below_producer_id=txn.producer_id,
                v3_and_below_producer_epoch=txn.producer_epoch,
                v3_and_below_topics=topics,
            )
            resp = await self._client.request(
                node, ADD_PARTITIONS_TO_TXN, body, version=conn_version
            )
        except KafkaError as exc:
            if exc.retriable:
                if isinstance(exc, KafkaConnectionError | KafkaTimeoutError):
                    self._client.invalidate_coordinator(txn.transactional_id, TRANSACTION)
                await self._wait(self._cfg.client.retry_backoff_ms / 1000.0)
                return
            self._txn_error(exc, pending)
            return
        added: list[TopicPartition] = []
        retry = False
        for topic in resp.results_by_topic_v3_and_below:
            for part in topic.results_by_partition:
                tp = TopicPartition(topic.name, part.partition_index)
                code = part.partition_error_code
                if code == 0:
                    added.append(tp)
                    continue
                err = error_for_code(code)
                if err.name == "OPERATION_NOT_ATTEMPTED":
                    continue
                if getattr(err, "invalid_coordinator", False):
                    self._client.invalidate_coordinator(txn.transactional_id, TRANSACTION)
                if err.retriable:
                    retry = True
                    continue
                if is_fatal_txn_error(err):
                    self._fatal(as_fenced(err))
                    return
                self._txn_error(err, [tp])
                return
        txn.partitions_added(added)
        if retry:
            await self._wait(self._cfg.client.retry_backoff_ms / 1000.0)

    def _txn_error(self, error: BaseException, tps: Sequence[TopicPartition]) -> None:
        assert self._txn is not None
        if is_fatal_txn_error(error):
            self._fatal(error)
            return
        self._txn.abortable_error(error)
        self._txn.pending.difference_update(tps)
        count = self._acc.fail_queued_for(tps, error)
        if count:
            self._space_freed()

    # -- requests --------------------------------------------------------------------------

    def _start_request(
        self, tg: anyio.abc.TaskGroup, node: int, batches: list[ProducerBatch]
    ) -> None:
        self._in_flight[node] = self._in_flight.get(node, 0) + 1
        previous = self._last_handled.get(node)
        mine = anyio.Event()
        self._last_handled[node] = mine
        self.requests_sent += 1
        self.batches_sent += len(batches)
        tg.start_soon(self._produce, node, batches, previous, mine)

    def _build_body(self, batches: list[ProducerBatch]) -> ProduceRequest:
        topics: dict[str, list[PartitionProduceData]] = {}
        for batch in batches:
            tp = batch.tp
            parts = topics.get(tp.topic)
            if parts is None:
                parts = topics[tp.topic] = []
            parts.append(PartitionProduceData(index=tp.partition, records=batch.build()))
        return ProduceRequest(
            transactional_id=self._txn.transactional_id if self._txn is not None else None,
            acks=self._acks,
            timeout_ms=self._timeout_ms,
            topic_data=[TopicProduceData(name=t, partition_data=p) for t, p in topics.items()],
        )

    async def _produce(
        self,
        node: int,
        batches: list[ProducerBatch],
        previous: anyio.Event | None,
        mine: anyio.Event,
    ) -> None:
        acc = self._acc
        try:
            response: ProduceResponse | None = None
            failure: BaseException | None = None
            try:
                body = self._build_body(batches)
                txn = self._txn
                response = await self._client.request(
                    node,
                    PRODUCE,
                    body,
                    expect_response=self._acks != 0,
                    # Produce v12 in a transaction means transactions version 2 (KIP-890).
                    max_version=TV1_MAX_PRODUCE if txn is not None and not txn.tv2 else None,
                )
            except ProtocolDecodeError as exc:
                # The broker may well have written the batches: their fate is unknown, as
                # with a lost response. Retrying (under the same sequence numbers when
                # idempotent, so the broker deduplicates) is right; failing would report
                # records as failed that are in the log.
                failure = KafkaConnectionError(
                    f"the Produce response from node {node} could not be decoded ({exc}); "
                    "the outcome of its batches is unknown"
                )
                failure.__cause__ = exc
            except KafkaError as exc:
                failure = exc
            # Answers of one broker are handled in the order the requests were sent.
            if previous is not None and not previous.is_set():
                await previous.wait()
            now = time.monotonic()
            if failure is not None:
                if isinstance(failure, KafkaConnectionError | KafkaTimeoutError):
                    self._client.request_metadata_update()
                for batch in batches:
                    self._on_batch_error(batch, failure, now)
            elif response is None:  # acks=0: no response
                for batch in batches:
                    acc.complete(batch, -1)
            else:
                self._handle_response(batches, response, now)
        except BaseException as exc:
            # Cancelled (close timed out) or a bug: never leave records unsettled.
            error = (
                ClientClosedError("the producer was closed before the broker answered")
                if isinstance(exc, anyio.get_cancelled_exc_class())
                else exc
            )
            for batch in batches:
                if not batch.done:
                    acc.fail(batch, error)
            raise
        finally:
            self._in_flight[node] -= 1
            mine.set()
            if self._last_handled.get(node) is mine:
                del self._last_handled[node]
            self._space_freed()
            self.wakeup()

    def _handle_response(
        self, batches: list[ProducerBatch], response: ProduceResponse, now: float
    ) -> None:
        acc = self._acc
        by_tp = {batch.tp: batch for batch in batches}
        # KIP-951 (Produce v10+): a NOT_LEADER_OR_FOLLOWER answer names the new leader (and
        # its address): take it now, so the retry needs no metadata round trip first.
        hints = [
            (TopicPartition(topic.name, part.index), leader.leader_id, leader.leader_epoch)
            for topic in response.responses
            for part in topic.partition_responses
            if part.error_code == _NOT_LEADER_OR_FOLLOWER
            and (leader := getattr(part, "current_leader", None)) is not None
            and leader.leader_id >= 0
        ]
        moved = (
            self._client.apply_leader_hints(hints, getattr(response, "node_endpoints", None) or ())
            if hints
            else frozenset()
        )
        if moved:
            self.leader_hints += len(moved)
            log.debug("new leaders from Produce answers: %s", sorted(moved))
        for topic in response.responses:
            name = topic.name
            for part in topic.partition_responses:
                batch = by_tp.pop(TopicPartition(name, part.index), None)
                if batch is None:
                    continue
                code = part.error_code
                if code == 0 or code == _DUPLICATE_SEQUENCE:
                    acc.complete(batch, part.base_offset, part.log_append_time_ms)
                    continue
                message = part.error_message
                if part.record_errors:
                    detail = "; ".join(
                        f"record {e.batch_index}: {e.batch_index_error_message}"
                        for e in part.record_errors
                    )
                    message = f"{message}; {detail}" if message else detail
                self._on_batch_error(
                    batch, error_for_code(code, message), now, leader_known=batch.tp in moved
                )
        for batch in by_tp.values():
            self._on_batch_error(
                batch,
                KafkaConnectionError(f"the Produce response did not mention {batch.tp}"),
                now,
            )

    def _on_batch_error(
        self, batch: ProducerBatch, error: BaseException, now: float, *, leader_known: bool = False
    ) -> None:
        """A batch failed; ``leader_known``: the answer named the partition's new leader and
        the metadata has it already (KIP-951), so the retry goes now, without a refresh."""
        acc = self._acc
        name = error_name(error)
        self.errors[name] = self.errors.get(name, 0) + 1
        if log.isEnabledFor(logging.DEBUG):
            log.debug("batch %r to %s failed: %r", batch, batch.tp, error)
        code = getattr(error, "code", None)
        if isinstance(error, KafkaConnectionError | KafkaTimeoutError) or code in _MAYBE_WRITTEN:
            batch.maybe_written = True
        if (
            code in _TOO_LARGE
            and batch.record_count > 1
            and not batch.done
            and not self._stopping_hard
        ):
            self._split(batch, error)
            return
        # INVALID_PRODUCER_EPOCH to a transactional producer's Produce (KIP-588; under
        # transactions version 2 also how a newer instance's fencing or a transaction the
        # coordinator aborted on timeout shows) leaves the transaction abortable, as in the
        # Java client: the abort's EndTxn then tells fenced (fatal) from recoverable.
        txn = self._txn
        if (
            code == _PRODUCER_FENCED
            or (code == _INVALID_PRODUCER_EPOCH and txn is None)
            or (code == E.TransactionalIdAuthorizationFailedError.code and txn is not None)
        ):
            acc.fail(batch, error)
            self._fatal(error)
            return
        if self._idempotent and code in (_OUT_OF_ORDER, _UNKNOWN_PRODUCER_ID):
            self._on_sequence_error(batch, error, now)
            return
        retriable = isinstance(error, KafkaError) and error.retriable
        if retriable and now < batch.created + acc.delivery_timeout and not self._stopping_hard:
            if leader_known:
                self.retries += 1
                acc.reenqueue(batch, now, error, backoff=False)
                return
            if getattr(error, "invalid_metadata", False) or isinstance(error, KafkaConnectionError):
                self._client.request_metadata_update()
            self.retries += 1
            acc.reenqueue(batch, now, error)
            return
        if retriable and batch.maybe_written:
            # Out of time after an attempt the broker may have written (its answer was lost,
            # or said REQUEST_TIMED_OUT / NOT_ENOUGH_REPLICAS_AFTER_APPEND): this answer's
            # refusal (NOT_ENOUGH_REPLICAS, ...) is about the last attempt only, and a broker
            # checks the in-sync count before it looks for a duplicate. The delivery failed
            # with an unknown outcome, as one that expired: a timeout saying so, the last
            # error its cause.
            error = acc.timed_out(batch, error)
        if self._idempotent and batch.base_sequence >= 0:
            if (
                isinstance(error, BrokerResponseError)
                and not error.retriable
                and not isinstance(error, E.UnknownServerError | E.UnknownBrokerError)
            ):
                # The broker rejected the batch (INVALID_RECORD, MESSAGE_TOO_LARGE, an
                # authorization error...) and still expects its sequence.
                self._fail_rejected(batch, error)
                return
            # Given up on a batch the broker may have written (or an error that says
            # nothing about it, like UNKNOWN_SERVER_ERROR): its sequence is unresolved.
            acc.fail(batch, error)
            self._sequence_unresolved(error, batch.tp)
        else:
            acc.fail(batch, error)
        if self._txn is not None:
            self._txn.abortable_error(error)

    def _split(self, batch: ProducerBatch, error: BaseException) -> None:
        """Re-enqueue a batch refused as too large as smaller batches (see
        ``RecordAccumulator.split``); a split is not a retry and costs no transaction."""
        size = batch.size
        pieces = self._acc.split(batch, error)
        log.info(
            "%s-%d: the broker refused a batch of %d records (%d bytes) with %s; split it "
            "into %d batches of %s records",
            batch.tp.topic,
            batch.tp.partition,
            batch.record_count,
            size,
            error_name(error),
            len(pieces),
            "/".join(str(p.record_count) for p in pieces),
        )

    def _fail_rejected(self, batch: ProducerBatch, error: BaseException) -> None:
        """Fail a sequenced batch the broker answered with an error that rejects it.

        The broker still expects the batch's sequence, so the partition's later batches
        would come back OUT_OF_ORDER_SEQUENCE_NUMBER for ever unless their sequences move.
        Without a transaction the epoch is bumped and the partition renumbered (as the Java
        client does): a later batch is then written even if the broker did write this one
        after all (a proxy or a buggy broker rewriting the answer). Inside a transaction,
        which can only be aborted now, the later batches move down by this batch's record
        count instead (the Java client's ``adjustSequencesDueToFailedBatch``), so they
        settle without waiting for a bump.
        """
        if self._txn is None:
            self._acc.fail(batch, error)
            self._sequence_unresolved(error, batch.tp)
            return
        self._acc.fail(batch, error, unwritten=True)
        self._txn.abortable_error(error)

    def _on_sequence_error(self, batch: ProducerBatch, error: BaseException, now: float) -> None:
        """OUT_OF_ORDER_SEQUENCE_NUMBER or UNKNOWN_PRODUCER_ID for an idempotent batch.

        Either way the broker did not write the batch.
        """
        acc = self._acc
        ps = acc.partition_state(batch.tp)
        expected = (
            ps is not None and not batch.sequence_reset and ps.acked_sequence == batch.base_sequence
        )
        if now >= batch.created + acc.delivery_timeout or self._stopping_hard:
            # Out of time (or closing): fail it like any other rejected batch instead of
            # re-queueing it for ever.
            self._fail_rejected(batch, error)
            return
        if not expected:
            # Not the batch the broker expected next: an earlier batch of the partition
            # failed (or this one was renumbered while in flight), and this one merely
            # follows it. Retry it (as the Java client does); an epoch bump in progress
            # gives it a fresh sequence first.
            self.retries += 1
            acc.reenqueue(batch, now)
            return
        if self._txn is None:
            # The broker lost our state (UNKNOWN_PRODUCER_ID: retention) or sees a gap
            # before the batch it expected next (OUT_OF_ORDER_SEQUENCE: e.g. its state
            # went back after a leader change). Every batch before this one is
            # acknowledged, and one the broker had written would have come back as a
            # duplicate, so resending it under a bumped epoch is safe; the Java client
            # retries both cases the same way.
            self._sequence_unresolved(error, batch.tp)
            self.retries += 1
            acc.reenqueue(batch, now)
            return
        self._fail_rejected(batch, error)

    def abort_retries(self) -> None:
        """From now on fail instead of retrying (close ran out of time)."""
        self._stopping_hard = True
