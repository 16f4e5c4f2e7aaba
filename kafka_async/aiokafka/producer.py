"""``AIOKafkaProducer`` with aiokafka 0.14's signature and semantics, on
:class:`kafka_async.Producer`.

What differs from aiokafka, and why (the migration guide lists these too):

* records without a key are spread batch by batch (uniform sticky, KIP-480) where aiokafka
  picks a random partition per record; keyed records land where aiokafka puts them (murmur2);
* a record's future fails after ``delivery_timeout_ms`` (120 s; aiokafka: ``request_timeout_ms``
  for the wait in its buffer) and retries are bounded by it, as in the Java client;
* ``send_batch`` queues the batch's records one by one on the partition given; the future
  gives the first record's metadata (the batch's base offset) once all are acknowledged;
* ``RecordMetadata.log_start_offset`` is None;
* ``sasl_mechanism="GSSAPI"`` (Kerberos) logs in from the ticket cache, as aiokafka does, with
  ``sasl_kerberos_service_name`` / ``sasl_kerberos_domain_name``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

from kafka_async import errors as _k
from kafka_async.producer import Producer
from kafka_async.producer.accumulator import record_size
from kafka_async.serialization import NeedsResolution, Serializer
from kafka_async.structs import OffsetAndMetadata as _OurOffsetAndMetadata
from kafka_async.structs import RecordMetadata as _OurRecordMetadata
from kafka_async.structs import TopicPartition

from ._settings import client_settings
from .errors import IllegalOperation, ProducerClosed
from .partitioner import DefaultPartitioner
from .structs import OffsetAndMetadata, RecordMetadata

if TYPE_CHECKING:
    from kafka_async.producer.accumulator import Delivery

__all__ = ["AIOKafkaProducer", "BatchBuilder", "TransactionContext"]

#: The "not given" marker of ``acks`` (aiokafka's: it tells a default from an explicit 1).
_missing: Any = object()
_DEFAULT_PARTITIONER = DefaultPartitioner()
_COMPRESSION = ("gzip", "snappy", "lz4", "zstd", None)


def to_record_metadata(md: _OurRecordMetadata) -> RecordMetadata:
    """kafka_async's record metadata in aiokafka's shape."""
    return RecordMetadata(
        md.topic,
        md.partition,
        TopicPartition(md.topic, md.partition),
        md.offset,
        md.timestamp,
        md.timestamp_type,
        None,
    )


def _translate(exc: BaseException) -> BaseException:
    """An error of kafka_async's producer as aiokafka's producer raises it."""
    if isinstance(exc, _k.ClientClosedError) and not isinstance(exc, ProducerClosed):
        new = ProducerClosed(str(exc))
        new.__cause__ = exc
        return new
    if isinstance(exc, _k.RecordTooLargeClientError):
        # aiokafka checks max_request_size itself and raises the broker's class for it.
        big = _k.MessageTooLargeError(str(exc))
        big.__cause__ = exc
        return big
    return exc


def _settle(fut: asyncio.Future[RecordMetadata], delivery: Delivery) -> None:
    if fut.done():  # cancelled by its owner
        return
    exc = delivery.exception()
    if exc is not None:
        fut.set_exception(_translate(exc))
        if isinstance(exc, _k.TransactionAbortedError):
            # The application aborted: a record it did not wait for is not an error to
            # report when its future is dropped (aiokafka does not report it either).
            fut.exception()
    else:
        fut.set_result(to_record_metadata(delivery.result()))


class BatchBuilder:
    """Records gathered by the caller for :meth:`AIOKafkaProducer.send_batch`
    (``producer.create_batch()``); ``append`` returns None once the batch is full.

    A record whose serializer cannot answer at once (a schema registry serializer whose
    schema id is not resolved yet: :class:`~kafka_async.serialization.NeedsResolution`), or
    needs the topic (a context-aware :class:`~kafka_async.serialization.Serializer`, which
    a batch without a topic cannot give), is kept unserialized and serialized by
    ``send_batch``, which knows the topic and may await; it counts at its headers' and the
    record overhead's size only.
    """

    def __init__(
        self,
        batch_size: int,
        key_serializer: Callable[[Any], Any] | None,
        value_serializer: Callable[[Any], Any] | None,
    ) -> None:
        self._batch_size = batch_size
        self._key_ser = key_serializer
        self._value_ser = value_serializer
        self._records: list[tuple[Any, Any, int | None, list[tuple[str, bytes]] | None]] = []
        #: Indexes of the records kept unserialized (see the class docstring).
        self.deferred: set[int] = set()
        #: Estimated encoded size (a batch header plus each record).
        self._size = 61
        self._closed = False

    def append(
        self,
        *,
        timestamp: int | None,
        key: Any,
        value: Any,
        headers: Sequence[tuple[str, bytes]] | None = None,
    ) -> BatchRecordMetadata | None:
        """Add a record (``timestamp`` in ms, None: now); None if the batch is full or
        closed (the first record is always taken)."""
        if self._closed:
            return None
        hdrs = list(headers) if headers else None
        ks, vs = self._key_ser, self._value_ser
        defer = isinstance(ks, Serializer) or isinstance(vs, Serializer)
        if not defer:
            try:
                kb = key if ks is None else ks(key)
                vb = value if vs is None else vs(value)
            except NeedsResolution:
                defer = True
        if defer:
            kb, vb = key, value
            size = record_size(None, None, hdrs)
        else:
            size = record_size(kb, vb, hdrs)
        if self._records and self._size + size > self._batch_size:
            self._closed = True
            return None
        self._size += size
        if defer:
            self.deferred.add(len(self._records))
        self._records.append((kb, vb, timestamp, hdrs))
        return BatchRecordMetadata(len(self._records) - 1, size, timestamp)

    def close(self) -> None:
        """Take no more records."""
        self._closed = True

    def size(self) -> int:
        """Estimated size of the batch in bytes."""
        return self._size

    def record_count(self) -> int:
        """Records appended so far."""
        return len(self._records)

    def __iter__(self) -> Iterator[tuple[Any, Any, int | None, list[tuple[str, bytes]] | None]]:
        """The records appended so far, serialized: ``(key, value, timestamp, headers)``
        (what ``send_batch`` queues)."""
        return iter(self._records)


class BatchRecordMetadata:
    """What ``BatchBuilder.append`` returns for a record it took."""

    __slots__ = ("offset", "size", "timestamp")

    def __init__(self, offset: int, size: int, timestamp: int | None) -> None:
        #: Offset within the batch (0 for the first record).
        self.offset = offset
        self.size = size
        self.timestamp = timestamp

    @property
    def crc(self) -> None:
        """Not computed per record (aiokafka: None for v2 batches as well)."""
        return None


class AIOKafkaProducer:
    """aiokafka's producer on kafka_async. Same arguments as aiokafka 0.14:

    * used as given: ``bootstrap_servers``, ``client_id``, ``metadata_max_age_ms``,
      ``request_timeout_ms``, ``acks`` (default 1, or ``all`` with idempotence, as
      aiokafka), ``key_serializer``, ``value_serializer``, ``compression_type``,
      ``max_batch_size``, ``partitioner`` (aiokafka's ``DefaultPartitioner``: kafka_async's
      default; any other callable ``(key_bytes, all, available) -> int`` is called per record),
      ``max_request_size``, ``linger_ms``, ``retry_backoff_ms``, ``security_protocol``,
      ``ssl_context``, ``connections_max_idle_ms``, ``enable_idempotence`` (default off, as
      aiokafka), ``transactional_id``, ``transaction_timeout_ms``, ``sasl_mechanism``,
      ``sasl_plain_username``, ``sasl_plain_password``, ``sasl_oauth_token_provider``,
      ``sasl_kerberos_service_name``, ``sasl_kerberos_domain_name`` (GSSAPI);
    * accepted with no effect: ``loop`` (deprecated in aiokafka too; warns), ``api_version``
      (versions are negotiated).

    ``producer`` is the :class:`kafka_async.Producer` underneath, for what aiokafka lacks
    (``enqueue_many``, ``statistics()``).
    """

    def __init__(
        self,
        *,
        loop: object = None,
        bootstrap_servers: str | Sequence[str] = "localhost",
        client_id: str | None = None,
        metadata_max_age_ms: int = 300000,
        request_timeout_ms: int = 40000,
        api_version: object = None,
        acks: Any = _missing,
        key_serializer: Callable[[Any], Any] | None = None,
        value_serializer: Callable[[Any], Any] | None = None,
        compression_type: str | None = None,
        max_batch_size: int = 16384,
        partitioner: Callable[..., int] = _DEFAULT_PARTITIONER,
        max_request_size: int = 1048576,
        linger_ms: int = 0,
        retry_backoff_ms: int = 100,
        security_protocol: str = "PLAINTEXT",
        ssl_context: Any = None,
        connections_max_idle_ms: int = 540000,
        enable_idempotence: bool = False,
        transactional_id: str | None = None,
        transaction_timeout_ms: int = 60000,
        sasl_mechanism: str = "PLAIN",
        sasl_plain_password: str | None = None,
        sasl_plain_username: str | None = None,
        sasl_kerberos_service_name: str = "kafka",
        sasl_kerberos_domain_name: str | None = None,
        sasl_oauth_token_provider: Any = None,
    ) -> None:
        if acks not in (0, 1, -1, "all", _missing):
            raise ValueError("Invalid ACKS parameter")
        if compression_type not in _COMPRESSION:
            raise ValueError("Invalid compression type!")
        if transactional_id is not None:
            enable_idempotence = True
        if enable_idempotence:
            if acks is _missing:
                acks = -1
            elif acks not in ("all", -1):
                raise ValueError(f"acks={acks} not supported if enable_idempotence=True")
        if acks is _missing:
            acks = 1
        settings = client_settings(
            bootstrap_servers=bootstrap_servers,
            client_id=client_id,
            metadata_max_age_ms=metadata_max_age_ms,
            request_timeout_ms=request_timeout_ms,
            retry_backoff_ms=retry_backoff_ms,
            security_protocol=security_protocol,
            ssl_context=ssl_context,
            connections_max_idle_ms=connections_max_idle_ms,
            sasl_mechanism=sasl_mechanism,
            sasl_plain_username=sasl_plain_username,
            sasl_plain_password=sasl_plain_password,
            sasl_oauth_token_provider=sasl_oauth_token_provider,
            sasl_kerberos_service_name=sasl_kerberos_service_name,
            sasl_kerberos_domain_name=sasl_kerberos_domain_name,
            api_version=api_version,
            loop=loop,
        )
        is_default = isinstance(partitioner, DefaultPartitioner) or (
            type(partitioner).__name__ == "DefaultPartitioner"
            and type(partitioner).__module__.startswith("aiokafka")
        )
        self._transactional = transactional_id is not None
        self._max_batch_size = max_batch_size
        self._key_serializer = key_serializer
        self._value_serializer = value_serializer
        config: dict[str, Any] = dict(
            **settings,
            acks=-1 if acks == "all" else acks,
            key_serializer=key_serializer,
            value_serializer=value_serializer,
            compression_type=compression_type,
            # kafka_async refuses batches under 100 bytes; aiokafka takes any size (a record
            # larger than the batch goes alone). create_batch() keeps the size given.
            max_batch_size=max(max_batch_size, 100),
            partitioner="default" if is_default else partitioner,
            max_request_size=max_request_size,
            linger_ms=linger_ms,
            enable_idempotence=enable_idempotence,
            transactional_id=transactional_id,
            transaction_timeout_ms=transaction_timeout_ms,
            # aiokafka waits for a topic's metadata up to request_timeout_ms.
            max_block_ms=request_timeout_ms,
        )
        self.producer: Producer = Producer(**config)
        #: Read by frameworks (FastStream's ``closed``): True once stopped.
        self._closed = False
        self._started = False

    def __repr__(self) -> str:
        return f"<AIOKafkaProducer on {self.producer!r}>"

    # -- life ---------------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect to the cluster (and, with ``transactional_id``, get a producer id)."""
        await self.producer.start()
        self._started = True

    async def stop(self) -> None:
        """Send what is queued, wait for it, and close; a second call does nothing."""
        if self._closed:
            return
        self._closed = True
        if self._started:
            await self.producer.close()

    async def flush(self) -> None:
        """Wait until every record queued so far is acknowledged or failed."""
        try:
            await self.producer.flush()
        except _k.ClientClosedError as exc:
            raise _translate(exc) from exc

    async def __aenter__(self) -> AIOKafkaProducer:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    async def partitions_for(self, topic: str) -> set[int]:
        """The partition ids of ``topic`` (waits for its metadata)."""
        return await self.producer.partitions_for(topic)

    # -- sending ------------------------------------------------------------------------------

    def _check_send(self) -> None:
        if self._closed:
            raise ProducerClosed("the producer is stopped")
        if self._transactional and not self._in_transaction():
            raise IllegalOperation("Can't send messages while not in transaction")

    def _in_transaction(self) -> bool:
        txn = self.producer.transaction_state
        return txn is not None and txn.in_transaction

    def _future(self, delivery: Delivery) -> asyncio.Future[RecordMetadata]:
        fut: asyncio.Future[RecordMetadata] = asyncio.get_running_loop().create_future()
        if delivery.done():
            _settle(fut, delivery)
            return fut
        # One waiter on the record's batch, settled by the batch in the same loop turn as
        # every other record of it: no task per record.
        waiter = delivery.settled()
        if isinstance(waiter, asyncio.Future):
            waiter.add_done_callback(lambda _w: _settle(fut, delivery))
        else:  # pragma: no cover - only off asyncio, which aiokafka code never is
            task = asyncio.ensure_future(delivery.wait())
            task.add_done_callback(lambda _t: _settle(fut, delivery))
        return fut

    async def send(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
        headers: Iterable[tuple[str, bytes]] | None = None,
    ) -> asyncio.Future[RecordMetadata]:
        """Queue a record; returns an :class:`asyncio.Future` of its
        :class:`~kafka_async.aiokafka.structs.RecordMetadata` (awaiting it waits for the
        broker's acknowledgement). Waits only for buffer space and the topic's metadata.
        Cancelling the future does not take the record back."""
        if value is None and key is None:
            raise AssertionError("Need at least one: key or value")
        self._check_send()
        try:
            delivery = await self.producer.enqueue(
                topic,
                value,
                key,
                partition,
                timestamp_ms,
                list(headers) if headers else None,
            )
        except (_k.ClientClosedError, _k.RecordTooLargeClientError) as exc:
            raise _translate(exc) from exc
        return self._future(delivery)

    async def send_and_wait(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
        headers: Iterable[tuple[str, bytes]] | None = None,
    ) -> RecordMetadata:
        """Send a record and wait for its acknowledgement."""
        fut = await self.send(topic, value, key, partition, timestamp_ms, headers)
        return await fut

    def create_batch(self) -> BatchBuilder:
        """An empty batch to fill with ``append`` and give to :meth:`send_batch`."""
        return BatchBuilder(self._max_batch_size, self._key_serializer, self._value_serializer)

    async def send_batch(
        self, batch: BatchBuilder, topic: str, *, partition: int
    ) -> asyncio.Future[RecordMetadata]:
        """Queue the batch's records on ``topic``/``partition``; the future gives the first
        record's metadata once every record is acknowledged (or the first error)."""
        self._check_send()
        batch.close()
        deliveries: list[Delivery] = []
        producer = self.producer
        try:
            # The batch's records are serialized already: bypass the producer's serializers
            # (except for those kept unserialized: the producer's enqueue serializes them).
            deferred = batch.deferred
            for i, (key, value, ts, hdrs) in enumerate(batch):
                enqueue = producer.enqueue if i in deferred else producer.enqueue_serialized
                deliveries.append(await enqueue(topic, value, key, partition, ts, hdrs))
        except (_k.ClientClosedError, _k.RecordTooLargeClientError) as exc:
            raise _translate(exc) from exc
        loop = asyncio.get_running_loop()
        if not deliveries:
            done: asyncio.Future[RecordMetadata] = loop.create_future()
            done.set_result(
                RecordMetadata(
                    topic, partition, TopicPartition(topic, partition), -1, None, 0, None
                )
            )
            return done

        async def wait_all() -> RecordMetadata:
            first: RecordMetadata | None = None
            for d in deliveries:
                try:
                    md = await d
                except Exception as exc:
                    raise _translate(exc) from None
                if first is None:
                    first = to_record_metadata(md)
            assert first is not None
            return first

        return asyncio.ensure_future(wait_all())

    # -- transactions -------------------------------------------------------------------------

    def _ensure_transactional(self) -> None:
        if not self._transactional:
            raise IllegalOperation("You need to configure transaction_id to use transactions")

    async def begin_transaction(self) -> None:
        """Start a transaction: records sent until commit/abort belong to it."""
        self._ensure_transactional()
        self.producer.begin_transaction()

    async def commit_transaction(self) -> None:
        """Flush the transaction's records and commit it."""
        self._ensure_transactional()
        await self.producer.commit_transaction()

    async def abort_transaction(self) -> None:
        """Abort the transaction: its records are never read by read_committed consumers."""
        self._ensure_transactional()
        await self.producer.abort_transaction()

    def transaction(self) -> TransactionContext:
        """``async with producer.transaction():`` begins; commits on success, aborts when
        the block raises (then the exception goes on)."""
        return TransactionContext(self)

    async def send_offsets_to_transaction(
        self,
        offsets: Mapping[TopicPartition, int | OffsetAndMetadata | tuple[int, str]],
        group_id: str,
    ) -> None:
        """Commit ``offsets`` for consumer group ``group_id`` with the transaction."""
        self._ensure_transactional()
        if not self._in_transaction():
            raise IllegalOperation("Not in the middle of a transaction")
        if not group_id or not isinstance(group_id, str):
            raise ValueError(group_id)
        ours: dict[TopicPartition, _OurOffsetAndMetadata] = {}
        for tp, value in offsets.items():
            if not isinstance(tp, tuple) or len(tp) != 2:
                raise ValueError(offsets)
            if isinstance(value, tuple):
                offset, metadata = value
            elif isinstance(value, int) and not isinstance(value, bool):
                offset, metadata = value, ""
            else:
                raise ValueError(offsets)
            ours[TopicPartition(tp[0], tp[1])] = _OurOffsetAndMetadata(int(offset), str(metadata))
        await self.producer.send_offsets_to_transaction(ours, group_id)


class TransactionContext:
    """What :meth:`AIOKafkaProducer.transaction` returns (an async context manager)."""

    def __init__(self, producer: AIOKafkaProducer) -> None:
        self._producer = producer

    async def __aenter__(self) -> TransactionContext:
        await self._producer.begin_transaction()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            await self._producer.commit_transaction()
            return
        txn = self._producer.producer.transaction_state
        if txn is not None and txn.is_fatal:
            return
        await self._producer.abort_transaction()
