"""The I/O edge of the Spark source and sink: every call that talks to Kafka.

Spark calls a data source synchronously, on the driver (planning, streaming offsets) and in
executor tasks (reading a range, writing rows). The reader and writer objects Spark pickles
to executors hold only parsed options, never a connection or a loop.

* Driver calls are short: :func:`run` wraps them in ``anyio.run`` under a deadline.
* A task's read streams: :func:`read_range` borrows a consumer from the worker process's pool
  (:mod:`.consumer_pool`, one long-lived event loop per process) and calls it through that
  pool's blocking portal, so records flow in bounded chunks instead of being collected whole.
  The consumer goes back to the pool when the range is read or Spark closes the generator
  early (a ``limit`` was satisfied); a failed read closes it. With the pool switched off the
  task runs its own consumer in its own portal and closes both.
* A task's write: :func:`write_rows` runs a producer in a blocking portal owned by the task.
"""

from __future__ import annotations

import logging
import ssl
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
from anyio.from_thread import BlockingPortal, start_blocking_portal

from ..cluster import ClusterClient
from ..consumer import Consumer
from ..consumer.errors import NoOffsetForPartitionError
from ..errors import ConfigError, KafkaError, KafkaTimeoutError, OffsetOutOfRangeError
from ..net.config import ClientConfig
from ..structs import ConsumerRecord, TopicPartition
from .consumer_pool import PooledConsumer, PoolKey, pool_key, shared
from .options import SinkOptions, SourceOptions, Subscription
from .planning import (
    DataLossError,
    OffsetRange,
    check_batch_ends,
    check_starts,
    plan_ranges,
    rate_limit,
    resolve_spec,
    resolve_timestamps,
)
from .rows import SinkRecord, records_to_arrow, row_to_record

if TYPE_CHECKING:
    from ..producer import Producer
    from ..producer.accumulator import Delivery

log = logging.getLogger("kafka_async.spark")

T = TypeVar("T")

#: Deadline for one driver-side call (metadata and offset lookups).
DRIVER_TIMEOUT_S = 60.0
#: Records per Arrow batch a read task hands Spark (bounded memory per task).
READ_CHUNK = 20_000
#: A read consumer's ``max_partition_fetch_bytes`` unless ``kafka.max.partition.fetch.bytes``
#: says otherwise: 8 MiB, so one Fetch carries a micro-batch task's whole share (50,000
#: records of 100 B at the benchmark's settings) where the consumer default (1 MiB) took six
#: round trips and six Arrow batches. Measured outside Spark, 50,000-record ranges read
#: back to back: 55 against 83 CPU-ms per range, a quarter of the wall time (load 28).
READ_PARTITION_FETCH_BYTES = 8 * 1024 * 1024
#: Empty 500 ms polls of a range with data before the reader re-seeks (see _RangeReader).
_POLLS_BEFORE_RESEEK = 10
#: Rows enqueued per hop into the writer's event loop.
WRITE_CHUNK = 5_000
#: The partition part of a driver consumer's key (it reads no partition).
_NO_PARTITION = TopicPartition("", -1)


def run(fn: Callable[..., Awaitable[T]], *args: Any, timeout: float = DRIVER_TIMEOUT_S) -> T:
    """Run ``fn(*args)`` in a fresh event loop, failing with KafkaTimeoutError after ``timeout``."""

    async def bounded() -> T:
        with anyio.fail_after(timeout):
            return await fn(*args)

    try:
        return anyio.run(bounded)
    except TimeoutError:
        raise KafkaTimeoutError(f"Kafka did not answer within {timeout} s") from None


_SSL_KEYS = ("ssl_cafile", "ssl_certfile", "ssl_keyfile", "ssl_password", "ssl_check_hostname")


def client_kwargs(config: dict[str, object]) -> dict[str, Any]:
    """Keyword arguments for a client: TLS file options turned into an ``ssl_context``."""
    kwargs: dict[str, Any] = {k: v for k, v in config.items() if k not in _SSL_KEYS}
    ssl_opts = {k: config[k] for k in _SSL_KEYS if k in config}
    protocol = str(config.get("security_protocol", "PLAINTEXT")).upper()
    if ssl_opts or protocol in ("SSL", "SASL_SSL"):
        cafile = ssl_opts.get("ssl_cafile")
        context = ssl.create_default_context(cafile=str(cafile) if cafile else None)
        if "ssl_check_hostname" in ssl_opts:
            context.check_hostname = bool(ssl_opts["ssl_check_hostname"])
        certfile = ssl_opts.get("ssl_certfile")
        if certfile:
            keyfile = ssl_opts.get("ssl_keyfile")
            password = ssl_opts.get("ssl_password")
            context.load_cert_chain(
                str(certfile),
                str(keyfile) if keyfile else None,
                str(password) if password else None,
            )
        kwargs["ssl_context"] = context
    return kwargs


def read_consumer(config: dict[str, object], **overrides: Any) -> Consumer[bytes, bytes]:
    """A new (not yet started) consumer for reading offset ranges: no group, no commits, no
    reset (a range out of range is reported, not silently moved), and fetches of
    :data:`READ_PARTITION_FETCH_BYTES` unless the options set their own. ``overrides``
    replace the options' settings (the driver's consumer, see :data:`DRIVER_FETCH_MAX_WAIT_MS`)."""
    kwargs = client_kwargs(config)
    kwargs.setdefault("max_partition_fetch_bytes", READ_PARTITION_FETCH_BYTES)
    kwargs.update(overrides)
    return Consumer(group_id=None, enable_auto_commit=False, auto_offset_reset="none", **kwargs)


@asynccontextmanager
async def _consumer(config: dict[str, object]) -> AsyncIterator[Consumer[bytes, bytes]]:
    async with read_consumer(config) as consumer:
        yield consumer


# --------------------------------------------------------------------------------------------
# Driver: partitions and offsets
# --------------------------------------------------------------------------------------------


async def _partitions(
    config: dict[str, object], subscription: Subscription, cluster: ClusterClient | None = None
) -> list[TopicPartition]:
    """The partitions the subscription covers now. ``cluster``: a connected client to ask
    (a driver consumer's) for a topic list; a pattern always gets a client of its own, since
    matching it needs the metadata of every topic."""
    if subscription.assign:
        return sorted(subscription.assign)
    if cluster is not None and subscription.pattern is None:
        topics = list(subscription.topics)
        metadata = await cluster.refresh_metadata(topics)
        return _topic_partitions(metadata, topics)
    client_config, _rest = ClientConfig.from_kwargs(**client_kwargs(config))
    async with ClusterClient(client_config) as client:
        if subscription.pattern is not None:
            client.set_topics(None)  # every topic, to match the pattern against
            metadata = await client.refresh_metadata()
            topics = sorted(t for t in metadata.topics if subscription.matches(t))
        else:
            topics = list(subscription.topics)
            metadata = await client.refresh_metadata(topics)
    return _topic_partitions(metadata, topics)


def _topic_partitions(metadata: Any, topics: list[str]) -> list[TopicPartition]:
    out: list[TopicPartition] = []
    for topic in topics:
        # An unknown topic has no partitions yet, as with Spark's source.
        parts = metadata.partitions_for(topic) or frozenset()
        out.extend(TopicPartition(topic, p) for p in sorted(parts))
    return out


#: Earliest and latest offsets by partition.
Bounds = tuple[dict[TopicPartition, int], dict[TopicPartition, int]]


async def bounds(opts: SourceOptions) -> Bounds:
    """Earliest and latest offsets of every partition the subscription covers right now."""
    parts = await _partitions(opts.consumer_config, opts.subscription)
    if not parts:
        return {}, {}
    async with _consumer(opts.consumer_config) as consumer:
        return await _offsets(consumer, parts)


async def bounds_on(consumer: Consumer[bytes, bytes], opts: SourceOptions) -> Bounds:
    """:func:`bounds` asked through a connected consumer (see :func:`run_driver`)."""
    parts = await _partitions(opts.consumer_config, opts.subscription, consumer.cluster)
    if not parts:
        return {}, {}
    return await _offsets(consumer, parts)


async def _offsets(consumer: Consumer[bytes, bytes], parts: list[TopicPartition]) -> Bounds:
    earliest: dict[TopicPartition, int] = {}
    latest: dict[TopicPartition, int] = {}

    async def lookup(into: dict[TopicPartition, int], method: Any) -> None:
        into.update(await method(parts))

    # Both lists at once: one round trip's wait instead of two.
    async with anyio.create_task_group() as tg:
        tg.start_soon(lookup, earliest, consumer.beginning_offsets)
        tg.start_soon(lookup, latest, consumer.end_offsets)
    exact = await _exact_ends(consumer, parts)
    try:
        unsure = {tp: off for tp, off in latest.items() if tp not in exact}
        latest.update(await _probe_ends(consumer, earliest, unsure))
    finally:
        # A consumer kept for the next call must not go on fetching what it probed.
        consumer.assign([])
    return earliest, latest


#: ``fetch_max_wait_ms`` of the driver's kept consumer. It fetches only to probe end offsets
#: (:func:`_probe_ends`), where the data is known to be there; but once a probe has read up
#: to the end, the consumer's next (prefetch) Fetch asks for data past the end, which the
#: broker holds for this long, and the next lookup's Fetch waits behind it. With the
#: consumer default (500 ms) a lookup right after another took 510 ms instead of 20 ms
#: (measured on Apache Kafka 4.4.0): Spark's first latestOffset after
#: prepareForTriggerAvailableNow paid it at every query start.
DRIVER_FETCH_MAX_WAIT_MS = 10

#: The driver's connected consumers by client configuration (see :func:`run_driver`).
_driver_consumers: dict[PoolKey, Consumer[bytes, bytes]] = {}
_driver_lock = threading.Lock()


async def _driver_consumer(config: dict[str, object]) -> Consumer[bytes, bytes]:
    key = pool_key(config, _NO_PARTITION)
    consumer = _driver_consumers.get(key)
    if consumer is None:
        consumer = read_consumer(config, fetch_max_wait_ms=DRIVER_FETCH_MAX_WAIT_MS)
        await consumer.start()
        _driver_consumers[key] = consumer
    return consumer


async def _drop_driver_consumer(config: dict[str, object]) -> None:
    consumer = _driver_consumers.pop(pool_key(config, _NO_PARTITION), None)
    if consumer is not None:
        with anyio.CancelScope(shield=True), anyio.move_on_after(DRIVER_TIMEOUT_S):
            await consumer.close()


def run_driver(
    fn: Callable[..., Awaitable[T]],
    opts: SourceOptions,
    *args: Any,
    timeout: float = DRIVER_TIMEOUT_S,
) -> T:
    """``fn(consumer, opts, *args)`` with a consumer this process keeps connected.

    For the streaming reader, which Spark keeps in one long-running driver process and asks
    for offsets every micro-batch: the consumer (and its connections and metadata) lives on
    the consumer pool's event loop between calls, so a micro-batch's offsets cost the
    lookups themselves, not a new event loop, bootstrap and ApiVersions each time. A failed
    call closes the consumer (the next call connects a new one).
    """
    portal = shared().portal()

    async def bounded() -> T:
        try:
            with anyio.fail_after(timeout):
                consumer = await _driver_consumer(opts.consumer_config)
                return await fn(consumer, opts, *args)
        except BaseException:
            await _drop_driver_consumer(opts.consumer_config)
            raise

    with _driver_lock:
        try:
            return portal.call(bounded)
        except TimeoutError:
            raise KafkaTimeoutError(f"Kafka did not answer within {timeout} s") from None


def close_driver(opts: SourceOptions) -> None:
    """Close the consumer :func:`run_driver` keeps for these options (if any)."""
    if pool_key(opts.consumer_config, _NO_PARTITION) not in _driver_consumers:
        return
    with _driver_lock:
        shared().portal().call(_drop_driver_consumer, opts.consumer_config)


#: The API key of LeaderAndIsr, the controller's request to brokers, which Apache Kafka in
#: ZooKeeper mode advertises in ApiVersions (KRaft brokers and Tansu do not).
_LEADER_AND_ISR = 4


async def _exact_ends(
    consumer: Consumer[bytes, bytes], parts: list[TopicPartition]
) -> set[TopicPartition]:
    """The partitions whose leader is known to answer ListOffsets(latest) exactly: an
    Apache Kafka broker, recognised in ApiVersions by the ``metadata.version`` feature it
    finalizes in KRaft mode (every KRaft cluster does) or, in ZooKeeper mode (2.8, 3.x),
    by the LeaderAndIsr API it advertises, in a cluster whose id is not Tansu's default.
    Tansu, which advertises neither and answers the last batch's base offset + 1, and
    anything unrecognised keep the probe of :func:`_probe_ends`; skipping it saves a Fetch
    round trip per lookup."""
    cluster = consumer.cluster
    metadata = cluster.metadata
    if (metadata.cluster_id or "").startswith("tansu"):
        return set()
    exact: set[TopicPartition] = set()
    for tp in parts:
        leader = metadata.leader_for(tp)
        if leader is None:
            continue
        try:
            connection = await cluster.connection(leader)
        except KafkaError:
            continue
        if (
            "metadata.version" in connection.finalized_features
            or _LEADER_AND_ISR in connection.api_versions
        ):
            exact.add(tp)
    return exact


#: How long the end-offset probe waits for the last batches.
PROBE_TIMEOUT_S = 5.0


async def _probe_ends(
    consumer: Consumer[bytes, bytes],
    earliest: dict[TopicPartition, int],
    latest: dict[TopicPartition, int],
) -> dict[TopicPartition, int]:
    """Check each end offset by fetching the record just before it.

    Some brokers (the Tansu build the tests run on) answer ListOffsets(latest) with the last
    batch's base offset + 1, which cuts a multi-record last batch short. Fetching from
    ``latest - 1`` returns that whole batch, and the consumer's position after it is the true
    end. On a correct broker the position simply equals ``latest``. Control batches advance
    the position too, so a transactional topic does not stall the probe.
    """
    probe = [tp for tp in latest if latest[tp] > earliest.get(tp, 0)]
    if not probe:
        return {}
    consumer.assign(probe)
    for tp in probe:
        consumer.seek(tp, latest[tp] - 1)
    ends: dict[TopicPartition, int] = {}
    with anyio.move_on_after(PROBE_TIMEOUT_S):
        while len(ends) < len(probe):
            try:
                await consumer.getmany(*probe, timeout_ms=200)
            except (OffsetOutOfRangeError, NoOffsetForPartitionError):
                break  # retention removed it meanwhile: keep the listed offsets
            for tp in probe:
                if tp not in ends:
                    position = await consumer.position(tp)
                    if position >= latest[tp]:
                        ends[tp] = position
    return ends


async def _by_timestamp(
    opts: SourceOptions,
    stamps: dict[TopicPartition, int],
    latest: dict[TopicPartition, int],
    option: str,
) -> dict[TopicPartition, int]:
    if set(stamps) != set(latest):
        raise ConfigError(
            f"option {option!r} must give a timestamp for every partition read; given "
            f"{sorted(stamps)}, read {sorted(latest)}"
        )
    async with _consumer(opts.consumer_config) as consumer:
        found = await consumer.offsets_for_times(stamps)
    offsets = {tp: (None if v is None else int(v.offset)) for tp, v in found.items()}
    for tp in stamps:
        offsets.setdefault(tp, None)
    return resolve_timestamps(offsets, latest, opts.timestamp_strategy, option)


async def _resolve_start(
    opts: SourceOptions,
    earliest: dict[TopicPartition, int],
    latest: dict[TopicPartition, int],
) -> dict[TopicPartition, int]:
    parts = sorted(latest)
    # Spark's precedence: startingTimestamp, then startingOffsetsByTimestamp, then offsets.
    if opts.starting_timestamp is not None:
        stamps = dict.fromkeys(parts, opts.starting_timestamp)
        return await _by_timestamp(opts, stamps, latest, "startingTimestamp")
    if opts.starting_by_timestamp is not None:
        resolve_spec(
            opts.starting_by_timestamp, parts, earliest, latest, "startingOffsetsByTimestamp"
        )
        return await _by_timestamp(
            opts, dict(opts.starting_by_timestamp), latest, "startingOffsetsByTimestamp"
        )
    return resolve_spec(opts.starting, parts, earliest, latest, "startingOffsets")


async def plan_batch(opts: SourceOptions) -> list[OffsetRange]:
    """The offset ranges of a batch query, checked against what the broker holds now."""
    earliest, latest = await bounds(opts)
    starts = await _resolve_start(opts, earliest, latest)
    parts = sorted(latest)
    if opts.ending_timestamp is not None:
        ends = await _by_timestamp(
            opts, dict.fromkeys(parts, opts.ending_timestamp), latest, "endingTimestamp"
        )
    elif opts.ending_by_timestamp is not None:
        ends = await _by_timestamp(
            opts, dict(opts.ending_by_timestamp), latest, "endingOffsetsByTimestamp"
        )
    else:
        ends = resolve_spec(opts.ending, parts, earliest, latest, "endingOffsets")
    starts, problems = check_starts(
        starts, earliest, latest, fail_on_data_loss=opts.fail_on_data_loss
    )
    for problem in problems:
        log.warning("data loss: %s", problem)
    ends = {tp: ends[tp] for tp in starts}
    check_batch_ends(starts, ends, latest)
    return plan_ranges(
        starts,
        ends,
        min_partitions=opts.min_partitions,
        max_records_per_partition=opts.max_records_per_partition,
    )


async def initial_offsets(opts: SourceOptions) -> dict[TopicPartition, int]:
    """Where a new streaming query starts (a restarted one uses its checkpoint instead)."""
    earliest, latest = await bounds(opts)
    return await _resolve_start(opts, earliest, latest)


async def initial_offsets_on(
    consumer: Consumer[bytes, bytes], opts: SourceOptions
) -> dict[TopicPartition, int]:
    """:func:`initial_offsets` asked through a connected consumer (see :func:`run_driver`)."""
    earliest, latest = await bounds_on(consumer, opts)
    return await _resolve_start(opts, earliest, latest)


def next_end(
    starts: dict[TopicPartition, int],
    earliest: dict[TopicPartition, int],
    latest: dict[TopicPartition, int],
    max_rows: int | None,
) -> dict[TopicPartition, int]:
    """End offsets of the next micro-batch (pure; the caller fetched ``earliest``/``latest``).

    Partitions that appeared since ``starts`` begin at their earliest offset, as in Spark;
    partitions that vanished are left out, and a partition that now ends before its start
    (the topic was recreated) is measured from its earliest offset. ``plan_stream`` then
    reports both as data loss (failing, or reading on from the earliest offset).
    """
    full = {
        tp: starts[tp] if tp in starts and starts[tp] <= latest[tp] else earliest[tp]
        for tp in latest
    }
    return rate_limit(full, latest, max_rows)


async def plan_stream(
    opts: SourceOptions,
    starts: dict[TopicPartition, int],
    ends: dict[TopicPartition, int],
    known: Bounds | None = None,
) -> list[OffsetRange]:
    """Ranges of one micro-batch between two checkpointed offset maps.

    ``known`` are the bounds the micro-batch's end was computed from, when the caller has
    them (they are looked up otherwise: a restarted query plans its last batch again).
    """
    earliest, latest = known if known is not None else await bounds(opts)
    full = {tp: starts.get(tp, earliest.get(tp, 0)) for tp in ends}
    checked, problems = check_starts(
        full, earliest, latest, fail_on_data_loss=opts.fail_on_data_loss
    )
    gone = sorted(set(starts) - set(ends))
    if gone:
        problems.append(f"partitions {gone} are no longer read (deleted?)")
        if opts.fail_on_data_loss:
            raise DataLossError(
                f"partitions {gone} disappeared. Set failOnDataLoss=false to go on without them."
            )
    for problem in problems:
        log.warning("data loss: %s", problem)
    return plan_ranges(
        {tp: min(checked[tp], ends[tp]) for tp in checked},
        {tp: ends[tp] for tp in checked},
        min_partitions=opts.min_partitions,
        max_records_per_partition=opts.max_records_per_partition,
    )


# --------------------------------------------------------------------------------------------
# Executor: read one range
# --------------------------------------------------------------------------------------------


class _RangeReader:
    """Reads ``[rng.start, rng.end)`` of one partition in chunks, each under a deadline."""

    def __init__(
        self,
        consumer: Consumer[bytes, bytes],
        rng: OffsetRange,
        opts: SourceOptions,
        pooled: PooledConsumer | None = None,
    ) -> None:
        self._consumer = consumer
        self._rng = rng
        self._tp = rng.topic_partition
        self._opts = opts
        self._next = rng.start
        self._pooled = pooled

    async def start(self) -> None:
        pooled = self._pooled
        if pooled is not None and pooled.reused and pooled.topic_id is not None:
            # A consumer from the pool, on the same topic as when it was first used (the pool
            # checked its id). Where the range starts at its position, what it prefetched
            # past the last range is this range's beginning: read on, no seek.
            try:
                position = await self._consumer.position(self._tp, timeout_ms=0)
            except KafkaError:
                position = None
            if position == self._next:
                pooled.contiguous = True
                self._consumer.resume(self._tp)
                return
        await self._seek_start()
        if pooled is not None:
            pooled.remember_topic_id()
            # The pool paused the partition while the consumer waited; resumed only now,
            # after the seek, so the first fetch asks for this range's start.
            self._consumer.resume(self._tp)

    async def start_and_chunk(self) -> list[ConsumerRecord[bytes, bytes]] | None:
        """:meth:`start`, then the first :meth:`chunk`."""
        await self.start()
        return await self.chunk()

    async def _seek_start(self) -> None:
        # Looking the earliest offset up first teaches the consumer the partition's leader:
        # a partition assigned before its leader is known is first fetched only after the
        # consumer's retry backoff (100 ms by default), which a short range (a streaming
        # micro-batch's share) notices. It also reports offsets already deleted at once.
        earliest = (await self._consumer.beginning_offsets([self._tp]))[self._tp]
        self._consumer.assign([self._tp])
        if earliest > self._next:
            self._report(f"offset {self._next} is out of range (earliest is now {earliest})")
            self._next = earliest
        self._consumer.seek(self._tp, self._next)

    async def chunk(self) -> list[ConsumerRecord[bytes, bytes]] | None:
        """The next records of the range (maybe none yet), or None once the range is done."""
        if self._next >= self._rng.end:
            return None
        timeout_s = self._opts.poll_timeout_ms / 1000
        empty_polls = 0
        with anyio.move_on_after(timeout_s):
            while True:
                try:
                    batch = await self._consumer.getmany(
                        self._tp,
                        timeout_ms=min(500, self._opts.poll_timeout_ms),
                        max_records=min(READ_CHUNK, self._rng.end - self._next),
                    )
                except (OffsetOutOfRangeError, NoOffsetForPartitionError):
                    await self._lost()
                    continue
                records = self._in_range(batch.get(self._tp, []))
                position = await self._consumer.position(self._tp)
                before = self._next
                if records:
                    if records[0].offset > self._next:
                        await self._check_gap(records[0].offset)
                    self._next = records[-1].offset + 1
                # Offsets without a record (transaction markers, compaction) still count.
                self._next = max(self._next, min(position, self._rng.end))
                if self._next == before:
                    empty_polls += 1
                    # The range ends at or below an end offset the broker reported, so the
                    # data is there: a long run of empty polls means the fetch state went
                    # astray (an early consumer build stalled like this behind its
                    # prefetch). Seeking restarts fetching at the position. Not sooner: a
                    # seek discards a fetch in flight, which a slow broker needs to finish.
                    if empty_polls % _POLLS_BEFORE_RESEEK == 0:
                        log.info("no data for %s at %d: seeking to it", self._tp, self._next)
                        self._consumer.seek(self._tp, self._next)
                    continue
                if records or self._next >= self._rng.end:
                    return records
        raise KafkaTimeoutError(
            f"no progress reading {self._tp.topic}-{self._tp.partition} at offset {self._next} "
            f"(range ends at {self._rng.end}) within kafkaConsumer.pollTimeoutMs="
            f"{self._opts.poll_timeout_ms}"
        )

    def _in_range(
        self, records: list[ConsumerRecord[bytes, bytes]]
    ) -> list[ConsumerRecord[bytes, bytes]]:
        """The records within the unread part of the range (offsets only grow in a batch)."""
        if not records or (self._next <= records[0].offset and records[-1].offset < self._rng.end):
            return records
        return [r for r in records if self._next <= r.offset < self._rng.end]

    async def _check_gap(self, first: int) -> None:
        # A gap is normal after compaction or transaction markers; it is data loss only when
        # retention deleted the offsets we were asked to read.
        earliest = (await self._consumer.beginning_offsets([self._tp]))[self._tp]
        if earliest > self._next:
            self._report(f"offsets {self._next}..{min(first, earliest) - 1} were deleted")

    async def _lost(self) -> None:
        earliest = (await self._consumer.beginning_offsets([self._tp]))[self._tp]
        self._report(f"offset {self._next} is out of range (earliest is now {earliest})")
        self._next = max(self._next, earliest)
        self._consumer.seek(self._tp, self._next)

    def _report(self, what: str) -> None:
        message = f"{self._tp.topic}-{self._tp.partition}: {what}"
        if self._opts.fail_on_data_loss:
            raise DataLossError(message + ". Set failOnDataLoss=false to skip lost data.")
        log.warning("data loss: %s", message)


def read_range(opts: SourceOptions, rng: OffsetRange) -> Generator[Any, None, None]:
    """Arrow record batches of exactly the records in ``rng`` (a Spark task's ``read``).

    The consumer comes from this process's pool (``consumer_pool``) and goes back to it
    after the range, unless ``kafkaConsumer.useConsumerCache`` is false: then the task opens
    its own consumer and event loop and closes both at its end.
    """
    if rng.size == 0:
        return
    if opts.use_consumer_cache:
        with shared().lease(opts, rng.topic_partition) as (portal, pooled):
            reader = _RangeReader(pooled.consumer, rng, opts, pooled)
            yield from _read_chunks(portal, reader, opts, rng)
        return
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(_consumer(opts.consumer_config)) as consumer,
    ):
        yield from _read_chunks(portal, _RangeReader(consumer, rng, opts), opts, rng)


def _read_chunks(
    portal: BlockingPortal, reader: _RangeReader, opts: SourceOptions, rng: OffsetRange
) -> Generator[Any, None, None]:
    # Each portal call is a hop to the event loop's thread and back, a wait for a CPU each
    # way on a busy machine: the start and the first chunk go in one.
    records = portal.call(reader.start_and_chunk)
    while records is not None:
        if records:
            yield records_to_arrow(records, opts.include_headers, rng.topic)
        records = portal.call(reader.chunk)


# --------------------------------------------------------------------------------------------
# Executor: write rows
# --------------------------------------------------------------------------------------------


async def enqueue_chunk(
    producer: Producer, records: list[SinkRecord], previous: list[Delivery]
) -> list[Delivery]:
    """Queue ``records``, then wait for the ``previous`` chunk's acknowledgements."""
    deliveries = [
        await producer.enqueue(
            r.topic, value=r.value, key=r.key, partition=r.partition, headers=r.headers
        )
        for r in records
    ]
    # Waiting for the previous chunk only now keeps one chunk in flight while the next is
    # enqueued, and surfaces a failed delivery within two chunks.
    for delivery in previous:
        await delivery
    return deliveries


async def _finish(
    producer: Producer,
    records: list[SinkRecord],
    previous: list[Delivery],
    timeout_s: float,
) -> None:
    pending = await enqueue_chunk(producer, records, previous)
    try:
        with anyio.fail_after(timeout_s):
            await producer.flush()
            for delivery in pending:
                await delivery
    except TimeoutError:
        raise KafkaTimeoutError(f"records not acknowledged within {timeout_s} s") from None


@asynccontextmanager
async def _producer(config: dict[str, object]) -> AsyncIterator[Producer]:
    # Imported here: read tasks, the common case, need not load the producer.
    from ..producer import Producer

    async with Producer(**client_kwargs(config)) as producer:
        yield producer


def write_rows(opts: SinkOptions, rows: Iterable[Any]) -> int:
    """Produce every row (a Spark task's ``write``); returns the count once all are acked.

    Raises the first delivery error, so the task fails and Spark retries or aborts the job.
    """
    count = 0
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(_producer(opts.producer_config)) as producer,
    ):
        chunk: list[SinkRecord] = []
        pending: list[Delivery] = []
        for row in rows:
            chunk.append(row_to_record(row, opts.topic))
            if len(chunk) >= WRITE_CHUNK:
                pending = portal.call(enqueue_chunk, producer, chunk, pending)
                count += len(chunk)
                chunk = []
        portal.call(_finish, producer, chunk, pending, opts.flush_timeout_ms / 1000)
        count += len(chunk)
    return count
