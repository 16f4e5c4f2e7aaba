"""Exactly-once writes of the Spark sink (``exactlyOnce=true``): tasks prepare, the driver commits.

Kafka offers no usable two-phase commit to clients yet (KIP-939's API was withdrawn; brokers
up to 4.4 refuse ``keepPreparedTxn``), so this follows the design of Flink's KafkaSink on
plain transactions: a transaction may be ended by anyone who knows its transactional id,
producer id and epoch, because EndTxn carries exactly those.

1. A write task (:func:`write_task`) starts a transactional producer under
   ``<prefix>-<sink partition>``. Its InitProducerId bumps the id's epoch, which aborts the
   open transaction of any earlier attempt of the same partition (a killed Python worker, a
   failed batch). The task produces every row, flushes, and hands the still-open
   transaction (:class:`PreparedTxn`) to the driver in its commit message. It never commits.
2. The driver's ``commit(messages, batch_id)`` (:func:`commit`) runs in a fresh Python process
   per call (PySpark 4.x), so it learns everything from the messages, the batch id and the
   options. It reads the prefix's last record in the state topic (compacted, key = prefix).
   A batch id at or below the recorded one is a batch Spark replays after committing it: its
   transactions are aborted. Otherwise it writes the intent ``{batch, committing, txns}``,
   ends each transaction with EndTxn(commit), then writes ``{batch, committed}``.
3. When the query (re)starts, the driver (:func:`recover`, from the ``streamWriter()`` call
   that plans the query) first refuses a broker whose ApiVersions lack an API this needs
   (DescribeTransactions and ListTransactions came with Kafka 3.0), then finishes an intent
   a killed driver left ``committing`` (EndTxn(commit) again; a transaction the coordinator
   already committed is recognised by DescribeTransactions). Transactions of attempts whose
   batch never reached the commit are aborted by the replayed tasks' InitProducerId under
   the same ids (or, for a partition the replay no longer has, by the broker after
   ``transaction.timeout.ms``).
4. A commit (or a recovery) that finds some of batch N's transactions aborted by Kafka (their
   timeout passed, or they were fenced) records ``{batch N, partial, committed, lost}``
   (transactional ids, i.e. sink partitions) and raises :class:`TransactionLostError`
   (recovery only logs it). Spark's commit log never recorded N, so the restarted query
   replays N with the same input offsets; its commit ends the replay's transactions of the
   ``lost`` ids with EndTxn(commit), those of the other ids with EndTxn(abort), then records
   N ``committed``. This holds when the replay writes the same records to the same sink
   partitions (same offsets, a deterministic plan).

Invariants that keep this exactly-once:

* Micro-batches run one at a time, and the commit of batch N ends before a task of batch
  N+1 starts: so one transactional id per sink partition suffices (Flink needs a pool of
  ids because its checkpoints overlap; Spark's batches do not).
* Recovery runs before any task of the restarted query: a replayed task's InitProducerId
  would otherwise abort transactions the intent says to commit.
* The intent is written (acks=all) before the first EndTxn(commit): a driver killed between
  two EndTxn calls leaves a record that says "commit all of these".
* Speculative execution is refused: two live attempts of one partition would fence each
  other and the driver could receive the fenced one's message.

A transaction left open longer than ``transaction.timeout.ms`` is aborted by the broker;
a commit that finds this raises :class:`TransactionLostError` naming the sink partitions
whose records are gone (never duplicated; the replay writes them, see 4.). :func:`fault` is
the failure-injection point the tests use.
"""

from __future__ import annotations

import inspect
import json
import logging
import os
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from hashlib import sha256
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import anyio
from anyio.from_thread import start_blocking_portal

from ..cluster import TRANSACTION, ClusterClient
from ..errors import (
    ConfigError,
    IncompatibleBrokerVersionError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    error_for_code,
)
from ..net.config import ClientConfig
from ..protocol.apis import (
    ADD_PARTITIONS_TO_TXN,
    DESCRIBE_TRANSACTIONS,
    END_TXN,
    INIT_PRODUCER_ID,
    LIST_TRANSACTIONS,
)
from ..protocol.apis.end_txn import EndTxnRequest
from ..protocol.schema import AnyApi
from ..structs import TopicPartition
from . import kafka_io
from .options import SinkOptions
from .rows import SinkRecord, row_to_record

if TYPE_CHECKING:
    from ..admin import AdminClient
    from ..producer import Producer
    from ..producer.accumulator import Delivery

log = logging.getLogger("kafka_async.spark.exactly_once")

#: Environment variables of the failure-injection points (tests only).
FAULT_ENV = "KAFKA_ASYNC_SPARK_FAULT"
FAULT_DIR_ENV = "KAFKA_ASYNC_SPARK_FAULT_DIR"
#: Rows a task writes before the ``task-mid-write`` fault kills its Python worker.
FAULT_ROWS = 100
#: Errors EndTxn answers when the transaction is no longer the one named (ended already,
#: aborted by its timeout, or fenced by a newer epoch).
_ENDED = frozenset(
    {
        "PRODUCER_FENCED",
        "INVALID_PRODUCER_EPOCH",
        "INVALID_TXN_STATE",
        "INVALID_PRODUCER_ID_MAPPING",
    }
)
_STATE_VERSION = 1
#: EndTxn v5 means transactions version 2 to the coordinator.
_TV1_MAX_END_TXN = 4


class TransactionLostError(KafkaError):
    """Transactions the driver meant to commit were aborted (by their timeout, or fenced):
    the records of those sink partitions are not in Kafka, the others' are. Raised instead of
    writing anything twice; the state topic records the batch as ``partial``, and the
    restarted query's replay of the batch commits exactly the lost sink partitions again."""


@dataclass(frozen=True)
class PreparedTxn:
    """A write task's flushed, still-open transaction, as the driver needs it to end it."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    #: The task's producer ran the transaction under transactions version 2 (KIP-890):
    #: EndTxn must then be v5+, and below v5 otherwise, as the producer itself would send.
    tv2: bool = True

    def to_json(self) -> list[object]:
        """A compact form for the state topic."""
        return [self.transactional_id, self.producer_id, self.producer_epoch, self.tv2]

    @classmethod
    def from_json(cls, doc: Sequence[Any]) -> PreparedTxn:
        """Inverse of :meth:`to_json`."""
        return cls(str(doc[0]), int(doc[1]), int(doc[2]), bool(doc[3]) if len(doc) > 3 else True)


@dataclass(frozen=True)
class Intent:
    """The last record of a prefix in the state topic."""

    batch: int | None
    #: "committing" (EndTxn(commit) under way for ``txns``), "committed", or "partial"
    #: (some of the batch's transactions were lost: the replay commits those ids again).
    status: str
    txns: tuple[PreparedTxn, ...] = ()
    #: Transactional ids of the batch whose records are in Kafka: of a "partial" batch, and,
    #: while its replay is "committing" the lost ones, those committed before.
    committed: tuple[str, ...] = ()
    #: Of a "partial" batch: the transactional ids whose transactions Kafka aborted.
    lost: tuple[str, ...] = ()

    def encode(self) -> bytes:
        """The record value."""
        doc: dict[str, object] = {
            "v": _STATE_VERSION,
            "batch": self.batch,
            "status": self.status,
            "txns": [t.to_json() for t in self.txns],
            "time_ms": int(time.time() * 1000),
        }
        if self.committed:
            doc["committed"] = list(self.committed)
        if self.lost:
            doc["lost"] = list(self.lost)
        return json.dumps(doc, separators=(",", ":")).encode()

    @classmethod
    def decode(cls, raw: bytes) -> Intent:
        """Inverse of :meth:`encode`."""
        doc = json.loads(raw)
        batch = doc.get("batch")
        return cls(
            batch=None if batch is None else int(batch),
            status=str(doc["status"]),
            txns=tuple(PreparedTxn.from_json(t) for t in doc.get("txns", ())),
            committed=tuple(str(t) for t in doc.get("committed", ())),
            lost=tuple(str(t) for t in doc.get("lost", ())),
        )


# --------------------------------------------------------------------------------------------
# Options: the transactional id prefix
# --------------------------------------------------------------------------------------------


def with_prefix(opts: SinkOptions, *, streaming: bool) -> SinkOptions:
    """``opts`` with the transactional id prefix settled (driver side, once per query/write).

    A streaming query needs the same prefix after a restart: ``transactionalIdPrefix``, or
    one derived from ``checkpointLocation``. A batch write without one gets a random prefix
    (it has no restart to recover in).
    """
    if opts.transactional_id_prefix is not None:
        return opts
    if opts.checkpoint_location is not None:
        digest = sha256(opts.checkpoint_location.encode()).hexdigest()[:20]
        return replace(opts, transactional_id_prefix=f"kafka-async-spark-{digest}")
    if streaming:
        raise ConfigError(
            "exactlyOnce=true on a stream needs a prefix that survives a restart: set the "
            "option 'transactionalIdPrefix' (unique per query) or pass 'checkpointLocation' "
            "as a writeStream option"
        )
    return replace(opts, transactional_id_prefix=f"kafka-async-spark-batch-{uuid.uuid4().hex}")


def transactional_id(opts: SinkOptions, partition: int) -> str:
    """The transactional id of sink partition ``partition``."""
    assert opts.transactional_id_prefix is not None, "with_prefix() settles it on the driver"
    return f"{opts.transactional_id_prefix}-{partition}"


# --------------------------------------------------------------------------------------------
# Failure injection (tests)
# --------------------------------------------------------------------------------------------


def fault(point: str, batch_id: int | None = None) -> None:
    """Fail here if the tests asked for it.

    ``KAFKA_ASYNC_SPARK_FAULT`` lists points, each ``name`` or ``name@batch``; each fires once
    (a marker file in ``KAFKA_ASYNC_SPARK_FAULT_DIR`` remembers it). ``task-*`` and ``udf-*``
    points end the Python worker at once; driver points write the marker and hang, for the
    test to SIGKILL the driver.
    """
    spec = os.environ.get(FAULT_ENV)
    folder = os.environ.get(FAULT_DIR_ENV)
    if not spec or not folder:
        return
    wanted = {p.strip() for p in spec.split(",") if p.strip()}
    name = point if batch_id is None else f"{point}@{batch_id}"
    if point not in wanted and name not in wanted:
        return
    marker = Path(folder) / name
    try:
        marker.touch(exist_ok=False)
    except FileExistsError:
        return
    log.warning("fault injection: %s", name)
    if point.startswith(("task-", "udf-")):
        os._exit(17)
    time.sleep(600)


# --------------------------------------------------------------------------------------------
# Executor: a write task
# --------------------------------------------------------------------------------------------


async def _transactional_producer(opts: SinkOptions, tid: str) -> Producer:
    from ..producer import Producer

    config = dict(opts.producer_config)
    config["transactional_id"] = tid
    config["acks"] = "all"
    config["enable_idempotence"] = True
    config.setdefault("transaction_timeout_ms", opts.transaction_timeout_ms)
    producer = Producer(**kafka_io.client_kwargs(config))
    await producer.start()  # InitProducerId: fences (aborts) an earlier attempt's transaction
    producer.begin_transaction()
    return producer


async def _hand_off(
    producer: Producer, records: list[SinkRecord], pending: list[Delivery], timeout_s: float
) -> tuple[int, int] | None:
    last = await kafka_io.enqueue_chunk(producer, records, pending)
    try:
        with anyio.fail_after(timeout_s):
            # Internal on purpose: only this sink leaves a transaction for another process.
            ids = await producer._hand_off_transaction()  # noqa: SLF001
            for delivery in last:
                await delivery
    except TimeoutError:
        raise KafkaTimeoutError(f"records not acknowledged within {timeout_s} s") from None
    return ids


def write_task(
    opts: SinkOptions, rows: Iterable[Any], partition: int
) -> tuple[int, PreparedTxn | None]:
    """Write a task's rows in one transaction and leave it open for the driver.

    Returns the number of rows and the transaction (None when the task had no row: no
    transaction exists at the coordinator then).
    Any error fails the task; its transaction is aborted when the producer closes, or at
    the latest by the next attempt's InitProducerId.
    """
    tid = transactional_id(opts, partition)
    timeout_s = opts.flush_timeout_ms / 1000
    with start_blocking_portal() as portal:
        producer = portal.call(_transactional_producer, opts, tid)
        try:
            chunk: list[SinkRecord] = []
            pending: list[Delivery] = []
            written = 0
            for written, row in enumerate(rows, 1):
                chunk.append(row_to_record(row, opts.topic))
                if written == FAULT_ROWS and os.environ.get(FAULT_ENV):
                    pending = portal.call(kafka_io.enqueue_chunk, producer, chunk, pending)
                    chunk = []
                    portal.call(producer.flush)
                    fault("task-mid-write")
                if len(chunk) >= kafka_io.WRITE_CHUNK:
                    pending = portal.call(kafka_io.enqueue_chunk, producer, chunk, pending)
                    chunk = []
            ids = portal.call(_hand_off, producer, chunk, pending, timeout_s)
            tv2 = bool(getattr(producer.transaction_state, "tv2", True))
        finally:
            # After a hand-off close() leaves the transaction open; after an error it aborts.
            portal.call(producer.close)
    if ids is None:
        return written, None
    return written, PreparedTxn(tid, ids[0], ids[1], tv2)


# --------------------------------------------------------------------------------------------
# Driver: the record of intent
# --------------------------------------------------------------------------------------------


def _common_kwargs(opts: SinkOptions) -> dict[str, Any]:
    """The connection settings of the producer's configuration (for admin and consumer)."""
    kwargs = kafka_io.client_kwargs(opts.producer_config)
    _config, rest = ClientConfig.from_kwargs(**kwargs)
    return {k: v for k, v in kwargs.items() if k not in rest}


def _admin(opts: SinkOptions) -> AdminClient:
    from ..admin import AdminClient

    return AdminClient(**_common_kwargs(opts))


async def _ensure_state_topic(opts: SinkOptions) -> None:
    from ..admin import NewTopic

    async with _admin(opts) as admin:
        result = await admin.create_topics(
            [
                NewTopic(
                    opts.state_topic,
                    num_partitions=1,
                    config={"cleanup.policy": "compact", "min.compaction.lag.ms": "0"},
                )
            ]
        )
        err = result.errors.get(opts.state_topic)
        if err is not None and getattr(err, "name", "") != "TOPIC_ALREADY_EXISTS":
            raise err


async def read_intent(opts: SinkOptions) -> Intent | None:
    """The prefix's last record in the state topic, or None."""
    from ..consumer import Consumer

    key = (opts.transactional_id_prefix or "").encode()
    tp = TopicPartition(opts.state_topic, 0)
    consumer: Consumer[bytes, bytes] = Consumer(
        group_id=None,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        **_common_kwargs(opts),
    )
    last: bytes | None = None
    async with consumer:
        end = (await consumer.end_offsets([tp]))[tp]
        start = (await consumer.beginning_offsets([tp]))[tp]
        if end <= start:
            return None
        consumer.assign([tp])
        consumer.seek(tp, start)
        while await consumer.position(tp) < end:
            batch = await consumer.getmany(tp, timeout_ms=500)
            for record in batch.get(tp, []):
                if record.key == key and record.value is not None:
                    last = record.value
    return None if last is None else Intent.decode(last)


async def _write_intent(producer: Producer, opts: SinkOptions, intent: Intent) -> None:
    key = (opts.transactional_id_prefix or "").encode()
    # A finished batch write (no batch id) leaves nothing to recover: a tombstone lets
    # compaction drop its key, which is random unless transactionalIdPrefix was given.
    done = intent.batch is None and intent.status == "committed"
    value = None if done else intent.encode()
    await producer.send(opts.state_topic, value=value, key=key, partition=0)


async def _state_producer(opts: SinkOptions) -> Producer:
    from ..producer import Producer

    config = {
        k: v
        for k, v in opts.producer_config.items()
        if k not in ("transactional_id", "transaction_timeout_ms")
    }
    config["acks"] = "all"
    config["enable_idempotence"] = True
    producer = Producer(**kafka_io.client_kwargs(config))
    await producer.start()
    return producer


# --------------------------------------------------------------------------------------------
# Driver: ending transactions by producer id and epoch
# --------------------------------------------------------------------------------------------


async def end_transaction(
    client: ClusterClient, txn: PreparedTxn, *, commit: bool, deadline_s: float
) -> str | None:
    """EndTxn for ``txn``'s producer id and epoch, retried while retriable.

    Returns None on success, or the error name when the coordinator no longer has that
    transaction open (one of ``_ENDED``); raises other errors.
    """
    backoff = client.config.retry_backoff_ms / 1000.0
    last: BaseException | None = None
    with anyio.move_on_after(deadline_s):
        while True:
            try:
                node = await client.coordinator(txn.transactional_id, TRANSACTION)
                resp = await client.request(
                    node,
                    END_TXN,
                    EndTxnRequest(
                        transactional_id=txn.transactional_id,
                        producer_id=txn.producer_id,
                        producer_epoch=txn.producer_epoch,
                        committed=commit,
                    ),
                    max_version=None if txn.tv2 else _TV1_MAX_END_TXN,
                )
            except KafkaError as exc:
                if not exc.retriable:
                    raise
                if isinstance(exc, KafkaConnectionError | KafkaTimeoutError):
                    client.invalidate_coordinator(txn.transactional_id, TRANSACTION)
                last = exc
                await anyio.sleep(backoff)
                continue
            if resp.error_code == 0:
                return None
            err = error_for_code(resp.error_code)
            if getattr(err, "invalid_coordinator", False):
                client.invalidate_coordinator(txn.transactional_id, TRANSACTION)
            if err.retriable:
                last = err
                await anyio.sleep(backoff)
                continue
            name = getattr(err, "name", "")
            if name in _ENDED:
                return str(name)
            raise err
    raise KafkaTimeoutError(
        f"EndTxn for {txn.transactional_id}: the transaction coordinator kept failing: {last!r}"
    )


async def _committed_already(opts: SinkOptions, txns: Sequence[PreparedTxn]) -> list[PreparedTxn]:
    """Of ``txns`` (whose EndTxn(commit) was refused), those the coordinator did not commit."""
    async with _admin(opts) as admin:
        found = await admin.describe_transactions([t.transactional_id for t in txns])
    lost = []
    for txn in txns:
        desc = found.get(txn.transactional_id)
        ok = (
            desc is not None
            and desc.error is None
            and desc.state == "CompleteCommit"
            and desc.producer_id == txn.producer_id
            # Transactions v2 bump the epoch at every EndTxn; v1 keeps it.
            and desc.producer_epoch in (txn.producer_epoch, txn.producer_epoch + 1)
        )
        if not ok:
            lost.append(txn)
    return lost


async def _end_all(
    opts: SinkOptions, txns: Sequence[PreparedTxn], *, commit: bool, batch_id: int | None
) -> list[PreparedTxn]:
    """EndTxn for each of ``txns``. For a commit, returns those Kafka aborted before it (lost)."""
    config, _rest = ClientConfig.from_kwargs(**kafka_io.client_kwargs(opts.producer_config))
    deadline_s = max(kafka_io.DRIVER_TIMEOUT_S, opts.flush_timeout_ms / 1000)
    refused: list[PreparedTxn] = []
    async with ClusterClient(config) as client:
        for i, txn in enumerate(txns):
            if commit and i == len(txns) // 2 and i > 0:
                fault("driver-mid-commit", batch_id)
            outcome = await end_transaction(client, txn, commit=commit, deadline_s=deadline_s)
            if outcome is not None:
                log.info("EndTxn(%s) %s: %s", commit, txn.transactional_id, outcome)
                refused.append(txn)
    if commit and refused:
        return await _committed_already(opts, refused)
    return []


def _sink_partition(tid: str) -> int:
    """The sink partition of a transactional id ``<prefix>-<sink partition>``."""
    return int(tid.rsplit("-", 1)[1])


def _by_partition(tids: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(set(tids), key=_sink_partition))


async def _end_recorded(opts: SinkOptions, intent: Intent) -> Intent:
    """EndTxn(commit) for a ``committing`` intent's transactions; the record of the outcome:
    ``committed``, or ``partial`` with the ids committed (now or before) and those lost."""
    lost = await _end_all(opts, intent.txns, commit=True, batch_id=intent.batch)
    if not lost:
        return Intent(intent.batch, "committed")
    lost_ids = {t.transactional_id for t in lost}
    ended = [t.transactional_id for t in intent.txns if t.transactional_id not in lost_ids]
    return Intent(
        intent.batch,
        "partial",
        committed=_by_partition([*intent.committed, *ended]),
        lost=_by_partition(lost_ids),
    )


def _lost_text(opts: SinkOptions, partial: Intent) -> str:
    """What a ``partial`` record means, for :class:`TransactionLostError` and the log."""
    what = "a batch write" if partial.batch is None else f"batch {partial.batch}"
    lost = [_sink_partition(t) for t in partial.lost]
    kept = [_sink_partition(t) for t in partial.committed]
    return (
        f"{what}: Kafka aborted the transactions {list(partial.lost)} before the driver "
        f"could commit them (transaction.timeout.ms={opts.transaction_timeout_ms} passed, "
        "or a second writer used the same transactionalIdPrefix): the records of sink "
        f"partitions {lost} are not in Kafka; those of sink partitions {kept} were committed"
    )


def _replay_text(partial: Intent) -> str:
    lost = [_sink_partition(t) for t in partial.lost]
    return (
        f"Restart the query: Spark replays batch {partial.batch} (its commit log does not "
        f"have it) and the sink commits the replay's records of sink partitions {lost} and "
        "discards the rest, so each record is written once, provided the replay writes the "
        "same records to the same sink partitions (same input offsets, deterministic plan)"
    )


async def _commit_txns(producer: Producer, opts: SinkOptions, intent: Intent) -> None:
    """Record ``intent`` (``committing``), EndTxn(commit) its transactions, record the outcome.
    Raises :class:`TransactionLostError` after recording a ``partial`` outcome."""
    await _write_intent(producer, opts, intent)
    outcome = await _end_recorded(opts, intent)
    if outcome.status == "committed":
        fault("driver-after-commit", intent.batch)
    await _write_intent(producer, opts, outcome)
    if outcome.status == "partial":
        text = _lost_text(opts, outcome)
        if outcome.batch is None:
            raise TransactionLostError(f"{text}; a batch write is not replayed")
        raise TransactionLostError(f"{text}. {_replay_text(outcome)}")


async def _settle(producer: Producer, opts: SinkOptions, intent: Intent) -> Intent:
    """Finish an intent a killed driver left ``committing``, and record the outcome."""
    outcome = await _end_recorded(opts, intent)
    await _write_intent(producer, opts, outcome)
    if outcome.status == "partial":
        if outcome.batch is None:
            log.error(
                "exactly-once sink: %s; a batch write is not replayed", _lost_text(opts, outcome)
            )
        else:
            log.warning(
                "exactly-once sink: %s. This query's replay of batch %s commits them again",
                _lost_text(opts, outcome),
                outcome.batch,
            )
    return outcome


async def _commit_replay_of_partial(
    producer: Producer, opts: SinkOptions, partial: Intent, txns: list[PreparedTxn]
) -> None:
    """The replay of a ``partial`` batch: commit its transactions of the lost ids, abort the
    others (their records are in Kafka from the first attempt), then record it committed."""
    lost = set(partial.lost)
    redo = [t for t in txns if t.transactional_id in lost]
    # Aborted first: they must never be committed, and a driver killed here leaves the record
    # "partial", so the next replay of the batch does the same again.
    await _end_all(
        opts,
        [t for t in txns if t.transactional_id not in lost],
        commit=False,
        batch_id=partial.batch,
    )
    missing = lost - {t.transactional_id for t in redo}
    if missing:
        log.error(
            "exactly-once sink: the replay of batch %s has no records for the sink partitions "
            "%s, which lost theirs: the replay did not write the same records to the same sink "
            "partitions, and those records are not in Kafka",
            partial.batch,
            [_sink_partition(t) for t in _by_partition(missing)],
        )
    if not redo:
        await _write_intent(producer, opts, Intent(partial.batch, "committed"))
        return
    # The ids committed before travel in the intent: if this commit loses transactions
    # again, the new "partial" record still names every id already in Kafka.
    await _commit_txns(
        producer,
        opts,
        Intent(partial.batch, "committing", tuple(redo), committed=partial.committed),
    )


async def _commit(opts: SinkOptions, txns: list[PreparedTxn], batch_id: int | None) -> str:
    # The state topic exists: recover() created it when the query or write started.
    intent = await read_intent(opts)
    producer = await _state_producer(opts)
    try:
        if intent is not None and intent.status == "committing":
            # A driver died inside an earlier commit and recover() did not run: finish it.
            # (recover() runs before the tasks: here they may have re-initialised some of the
            # ids already, and DescribeTransactions can then not tell a committed
            # transaction of those ids from a lost one.)
            intent = await _settle(producer, opts, intent)
        if (
            batch_id is not None
            and intent is not None
            and intent.status == "partial"
            and intent.batch == batch_id
        ):
            await _commit_replay_of_partial(producer, opts, intent, txns)
            return "completed"
        if (
            batch_id is not None
            and intent is not None
            and intent.batch is not None
            and batch_id <= intent.batch
        ):
            await _end_all(opts, txns, commit=False, batch_id=batch_id)
            return "replayed"
        if intent is not None and intent.status == "partial" and intent.batch is not None:
            log.error(
                "exactly-once sink: batch %s is committed without replaying batch %s, whose "
                "sink partitions %s lost their records",
                batch_id,
                intent.batch,
                [_sink_partition(t) for t in intent.lost],
            )
        if not txns:
            await _write_intent(producer, opts, Intent(batch_id, "committed"))
            return "empty"
        await _commit_txns(producer, opts, Intent(batch_id, "committing", tuple(txns)))
        return "committed"
    finally:
        await producer.close()


def commit(opts: SinkOptions, txns: list[PreparedTxn], batch_id: int | None) -> str:
    """The driver's commit of a batch: ``"committed"``, ``"replayed"`` (a batch committed
    before: its transactions were aborted), ``"completed"`` (the replay of a batch recorded
    ``partial``: its transactions of the lost sink partitions were committed, the others
    aborted) or ``"empty"``. Raises :class:`TransactionLostError` after recording the batch
    ``partial`` when Kafka aborted some of its transactions."""
    outcome = kafka_io.run(_commit, opts, txns, batch_id, timeout=_commit_timeout(opts, txns))
    log.info("exactly-once batch %s of %s: %s", batch_id, opts.transactional_id_prefix, outcome)
    return outcome


def _commit_timeout(opts: SinkOptions, txns: Sequence[PreparedTxn]) -> float:
    return kafka_io.DRIVER_TIMEOUT_S * 2 + 0.5 * len(txns)


def abort(opts: SinkOptions, txns: list[PreparedTxn]) -> None:
    """Abort a failed batch: the transactions of the tasks whose messages Spark passed, then
    any other transaction still open under the prefix. A task still running when Spark gave
    up on the job hands its transaction off after the job was aborted, and Spark drops its
    message; left open, it would hold read_committed readers back until its timeout."""

    async def go() -> None:
        if txns:
            await _end_all(opts, txns, commit=False, batch_id=None)
        await _fence_open(opts)

    kafka_io.run(go, timeout=_commit_timeout(opts, txns))


def _owned(opts: SinkOptions, tid: str) -> bool:
    prefix = f"{opts.transactional_id_prefix}-"
    return tid.startswith(prefix) and tid[len(prefix) :].isdigit()


async def _fence_open(opts: SinkOptions) -> None:
    """Fence (InitProducerId, which aborts the open transaction) every transactional id of
    the prefix that has a transaction open."""
    async with _admin(opts) as admin:
        listed = await admin.list_transactions(states=["Ongoing"])
        open_ids = sorted(t.transactional_id for t in listed if _owned(opts, t.transactional_id))
        if open_ids:
            log.warning(
                "aborting %d open transaction(s) of a failed batch: %s", len(open_ids), open_ids
            )
            await admin.fence_producers(open_ids)


#: The APIs the design calls, with the Kafka release that added each: transactions
#: (InitProducerId, AddPartitionsToTxn, EndTxn), DescribeTransactions (to tell a committed
#: transaction from one Kafka aborted, when EndTxn(commit) is refused) and ListTransactions
#: (the transactions a failed batch left open).
_NEEDED_APIS: tuple[tuple[AnyApi, str], ...] = (
    (INIT_PRODUCER_ID, "Kafka 0.11.0 (KIP-98)"),
    (ADD_PARTITIONS_TO_TXN, "Kafka 0.11.0 (KIP-98)"),
    (END_TXN, "Kafka 0.11.0 (KIP-98)"),
    (DESCRIBE_TRANSACTIONS, "Kafka 3.0 (KIP-664)"),
    (LIST_TRANSACTIONS, "Kafka 3.0 (KIP-664)"),
)


async def _check_apis(opts: SinkOptions) -> None:
    """Refuse the query or write before anything is written when the broker does not
    advertise an API the design needs (in its ApiVersions answer): otherwise the tasks would
    write the batch in open transactions and only the driver's commit would fail."""
    config, _rest = ClientConfig.from_kwargs(**kafka_io.client_kwargs(opts.producer_config))
    async with ClusterClient(config) as client:
        connection = await client.connection(await client.any_node())
        advertised = connection.api_versions
        address = connection.address
    missing = []
    for api, since in _NEEDED_APIS:
        have = advertised.get(api.key)
        if have is None:
            missing.append(f"{api.name} (api key {api.key}, added in {since})")
        elif have[1] < api.min_version or have[0] > api.max_version:
            missing.append(
                f"{api.name} in a version this client speaks (the broker advertises "
                f"v{have[0]}-v{have[1]}, the client v{api.min_version}-v{api.max_version})"
            )
    if missing:
        raise IncompatibleBrokerVersionError(
            f"exactlyOnce=true needs {', '.join(missing)}, which the broker at {address} "
            "does not advertise in ApiVersions: nothing was written. Exactly-once writes "
            "need a broker that has DescribeTransactions (Kafka 3.0+), or write at least "
            "once (exactlyOnce=false)"
        )


async def _recover(opts: SinkOptions) -> str:
    await _check_apis(opts)
    await _ensure_state_topic(opts)
    await _check_timeout(opts)
    intent = await read_intent(opts)
    if intent is None or intent.status != "committing":
        # "partial" is settled too: the replay of its batch commits the lost ids.
        return "nothing to finish"
    producer = await _state_producer(opts)
    try:
        outcome = await _settle(producer, opts, intent)
    finally:
        await producer.close()
    return (
        f"finished the commit of batch {intent.batch} ({len(intent.txns)} transactions): "
        f"{outcome.status}"
    )


def recover(opts: SinkOptions) -> None:
    """At the start of a query or batch write (driver): refuse a broker that does not
    advertise every API the design needs (``IncompatibleBrokerVersionError``, before any
    task writes), then finish a commit the last attempt left half-done. Safe to run at any
    time outside a commit (it only completes recorded commits); it must run before the tasks
    of a restarted query, whose InitProducerId would otherwise abort the recorded
    transactions. Transactions Kafka aborted meanwhile are recorded (batch ``partial``) and
    logged, not raised: the replay of the batch that follows commits those sink partitions
    again."""
    done = kafka_io.run(_recover, opts, timeout=kafka_io.DRIVER_TIMEOUT_S * 3)
    log.info("exactly-once sink %s: %s", opts.transactional_id_prefix, done)


def in_commit_runner() -> bool:
    """True inside PySpark's streaming commit process, which calls ``streamWriter()`` again
    before each ``commit``: recovery is not needed there (``commit`` finishes a recorded
    commit itself), and skipping it saves the round trips per micro-batch."""
    frame: FrameType | None = inspect.currentframe()
    while frame is not None:
        if frame.f_code.co_filename.endswith("python_streaming_sink_runner.py"):
            return True
        frame = frame.f_back
    return False


async def _check_timeout(opts: SinkOptions) -> None:
    """Refuse a transaction timeout above the brokers' ``transaction.max.timeout.ms`` (every
    task's InitProducerId would fail), and say how much time a driver has to commit."""
    from ..admin import ConfigResource

    async with _admin(opts) as admin:
        cluster = await admin.describe_cluster()
        node = cluster.brokers[0].node_id if cluster.brokers else 0
        resource = ConfigResource.broker(node)
        found = await admin.describe_configs(
            [resource], config_names=["transaction.max.timeout.ms"]
        )
    limit: int | None = None
    if resource in found and found.errors.get(resource) is None:
        entry = found[resource].entries.get("transaction.max.timeout.ms")
        if entry is not None and entry.value is not None:
            limit = int(entry.value)
    timeout = opts.transaction_timeout_ms
    if limit is not None and timeout > limit:
        raise ConfigError(
            f"kafka.transaction.timeout.ms={timeout} is above the brokers' "
            f"transaction.max.timeout.ms={limit}: lower it (a micro-batch plus a driver's "
            "recovery must fit in it) or raise the broker's limit"
        )
    log.warning(
        "exactly-once sink: a batch's transactions stay open from its first write until the "
        "driver commits; a batch whose processing plus any driver restart takes longer than "
        "transaction.timeout.ms=%d ms is aborted by Kafka and fails with TransactionLostError",
        timeout,
    )


__all__ = [
    "Intent",
    "PreparedTxn",
    "TransactionLostError",
    "abort",
    "commit",
    "recover",
    "transactional_id",
    "with_prefix",
    "write_task",
]
