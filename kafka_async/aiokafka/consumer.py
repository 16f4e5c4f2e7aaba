"""``AIOKafkaConsumer`` with aiokafka 0.14's signature and semantics, on
:class:`kafka_async.Consumer`.

What differs from aiokafka, and why (the migration guide lists these too):

* the rebalance listener is told as aiokafka tells it (see
  :class:`~kafka_async.aiokafka.abc.ConsumerRebalanceListener`), but the group runs
  kafka_async's coordinator: a listener given a cooperative assignor of kafka_async's is told
  about increments instead;
* ``subscribe`` without ``group_id`` reads every partition of the topics (aiokafka's
  behaviour); new partitions and, for a pattern, new topics are picked up within a second;
* ``consumer_timeout_ms`` (the wait of aiokafka's internal fetch task) has no equivalent and no
  visible effect: it is accepted and not used;
* ``last_poll_timestamp`` is not tracked: it returns None.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import math
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kafka_async import errors as _k
from kafka_async.consumer import Consumer
from kafka_async.consumer.group.assignors import Assignor, RoundRobinAssignor
from kafka_async.structs import ConsumerRecord as _OurRecord
from kafka_async.structs import TopicPartition

from ._settings import client_settings
from .errors import ConsumerStoppedError, IllegalOperation, IllegalStateError
from .structs import ConsumerRecord, OffsetAndMetadata, OffsetAndTimestamp

__all__ = ["AIOKafkaConsumer"]

log = logging.getLogger(__name__)

_AIOKAFKA_VERSION = "0.14.0"


def _record(r: _OurRecord[Any, Any]) -> ConsumerRecord[Any, Any]:
    return ConsumerRecord(
        r.topic,
        r.partition,
        r.offset,
        r.timestamp,
        r.timestamp_type,
        r.key,
        r.value,
        None,
        r.serialized_key_size,
        r.serialized_value_size,
        r.headers,  # type: ignore[arg-type]  # values may be None (a header without value)
    )


def _assignors(strategy: Sequence[Any]) -> tuple[Any, ...]:
    """aiokafka's assignor classes (or ours) as kafka_async assignors, by protocol name."""
    out: list[Any] = []
    for item in strategy:
        if isinstance(item, Assignor) or (isinstance(item, type) and issubclass(item, Assignor)):
            out.append(item)
            continue
        name = getattr(item, "name", None)
        if isinstance(item, str):
            name = item
        if name in ("roundrobin", "range", "sticky", "cooperative-sticky"):
            out.append(name)
            continue
        raise _k.ConfigError(
            f"partition_assignment_strategy: {item!r} is an aiokafka assignor kafka_async "
            "cannot run (custom AbstractPartitionAssignor subclasses are not supported); use "
            "RoundRobinPartitionAssignor, RangePartitionAssignor, StickyPartitionAssignor or a "
            "kafka_async.consumer.group.assignors.Assignor"
        )
    return tuple(out)


class _Listener:
    """Between kafka_async's coordinator and the user's listener: calls the user's listener
    as aiokafka does (revoked with the previous assignment before each assignment, even an
    empty one; nothing during stop(); exceptions logged)."""

    def __init__(self, user: Any, group_id: str | None) -> None:
        self.user = user
        self.group_id = group_id
        #: A revocation was told since the last assignment.
        self.revoked = False
        #: stop() has begun: the revocation of close() is not told (aiokafka does not).
        self.stopping = False
        #: An assignment (even empty) arrived since subscribe().
        self.assigned = False

    async def _call(self, name: str, tps: set[TopicPartition]) -> None:
        if self.user is None:
            return
        try:
            result = getattr(self.user, name)(set(tps))
            if inspect.isawaitable(result):
                await result
        except Exception:
            log.exception(
                "User provided subscription listener %r for group %s failed on %s",
                self.user,
                self.group_id,
                name,
            )

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        self.revoked = True
        if not self.stopping:
            await self._call("on_partitions_revoked", revoked)

    async def on_partitions_lost(self, lost: set[TopicPartition]) -> None:
        await self.on_partitions_revoked(lost)

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        if not self.revoked:
            await self._call("on_partitions_revoked", set())
        self.revoked = False
        self.assigned = True
        await self._call("on_partitions_assigned", assigned)


class _CoordinatorView:
    """What frameworks read of aiokafka's ``consumer._coordinator``."""

    def __init__(self, consumer: AIOKafkaConsumer) -> None:
        self._consumer = consumer

    @property
    def member_id(self) -> str:
        """The member id the group gave (empty before joining)."""
        try:
            return self._consumer.consumer.group_metadata().member_id
        except _k.ConfigError:
            return ""

    @property
    def generation(self) -> int:
        """The group generation (-1 before joining)."""
        try:
            return self._consumer.consumer.group_metadata().generation_id
        except _k.ConfigError:
            return -1


class _SubscriptionView:
    """What frameworks read of aiokafka's ``consumer._subscription``."""

    def __init__(self, consumer: AIOKafkaConsumer) -> None:
        self._consumer = consumer

    @property
    def topics(self) -> set[str]:
        """The subscribed topics (matched ones for a pattern)."""
        return self._consumer.subscription()


class AIOKafkaConsumer:
    """aiokafka's consumer on kafka_async. Same arguments as aiokafka 0.14:

    * used as given: ``*topics``, ``bootstrap_servers``, ``client_id``, ``group_id``,
      ``group_instance_id``, ``key_deserializer``, ``value_deserializer``,
      ``fetch_max_wait_ms``, ``fetch_max_bytes``, ``fetch_min_bytes``,
      ``max_partition_fetch_bytes``, ``request_timeout_ms``, ``retry_backoff_ms``,
      ``auto_offset_reset``, ``enable_auto_commit``, ``auto_commit_interval_ms``,
      ``check_crcs``, ``metadata_max_age_ms``, ``partition_assignment_strategy`` (default
      roundrobin, as aiokafka, so mixed groups agree), ``max_poll_interval_ms``,
      ``rebalance_timeout_ms``, ``session_timeout_ms``, ``heartbeat_interval_ms``,
      ``max_poll_records``, ``ssl_context``, ``security_protocol``,
      ``exclude_internal_topics``, ``connections_max_idle_ms``, ``isolation_level``,
      ``sasl_mechanism``, ``sasl_plain_username``, ``sasl_plain_password``,
      ``sasl_oauth_token_provider``, ``client_rack``, ``sasl_kerberos_service_name``,
      ``sasl_kerberos_domain_name`` (with ``sasl_mechanism="GSSAPI"``: Kerberos from the
      ticket cache);
    * accepted with no effect: ``loop`` (warns), ``api_version``, ``consumer_timeout_ms``.

    ``consumer`` is the :class:`kafka_async.Consumer` underneath.
    """

    def __init__(
        self,
        *topics: str,
        loop: object = None,
        bootstrap_servers: str | Sequence[str] = "localhost",
        client_id: str = "aiokafka-" + _AIOKAFKA_VERSION,
        group_id: str | None = None,
        group_instance_id: str | None = None,
        key_deserializer: Any = None,
        value_deserializer: Any = None,
        fetch_max_wait_ms: int = 500,
        fetch_max_bytes: int = 52428800,
        fetch_min_bytes: int = 1,
        max_partition_fetch_bytes: int = 1 * 1024 * 1024,
        request_timeout_ms: int = 40 * 1000,
        retry_backoff_ms: int = 100,
        auto_offset_reset: str = "latest",
        enable_auto_commit: bool = True,
        auto_commit_interval_ms: int = 5000,
        check_crcs: bool = True,
        metadata_max_age_ms: int = 5 * 60 * 1000,
        partition_assignment_strategy: Sequence[Any] = (RoundRobinAssignor,),
        max_poll_interval_ms: int = 300000,
        rebalance_timeout_ms: int | None = None,
        session_timeout_ms: int = 10000,
        heartbeat_interval_ms: int = 3000,
        consumer_timeout_ms: int = 200,
        max_poll_records: int | None = None,
        ssl_context: Any = None,
        security_protocol: str = "PLAINTEXT",
        api_version: object = None,
        exclude_internal_topics: bool = True,
        connections_max_idle_ms: int = 540000,
        isolation_level: str = "read_uncommitted",
        sasl_mechanism: str = "PLAIN",
        sasl_plain_password: str | None = None,
        sasl_plain_username: str | None = None,
        sasl_kerberos_service_name: str = "kafka",
        sasl_kerberos_domain_name: str | None = None,
        sasl_oauth_token_provider: Any = None,
        client_rack: str | None = None,
    ) -> None:
        del consumer_timeout_ms
        if max_poll_records is not None and (
            not isinstance(max_poll_records, int) or max_poll_records < 1
        ):
            raise ValueError("`max_poll_records` should be positive Integer")
        if rebalance_timeout_ms is None:
            rebalance_timeout_ms = session_timeout_ms
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
        extra: dict[str, Any] = {}
        if client_rack is not None:
            extra["client_rack"] = client_rack
        if group_instance_id is not None:
            extra["group_instance_id"] = group_instance_id
        self._group_id = group_id
        config: dict[str, Any] = dict(
            key_deserializer=key_deserializer,
            value_deserializer=value_deserializer,
            group_id=group_id,
            fetch_max_wait_ms=fetch_max_wait_ms,
            fetch_max_bytes=fetch_max_bytes,
            fetch_min_bytes=fetch_min_bytes,
            max_partition_fetch_bytes=max_partition_fetch_bytes,
            auto_offset_reset=auto_offset_reset,
            enable_auto_commit=enable_auto_commit and group_id is not None,
            auto_commit_interval_ms=auto_commit_interval_ms,
            check_crcs=check_crcs,
            partition_assignment_strategy=_assignors(partition_assignment_strategy),
            max_poll_interval_ms=max_poll_interval_ms,
            rebalance_timeout_ms=rebalance_timeout_ms,
            session_timeout_ms=session_timeout_ms,
            heartbeat_interval_ms=heartbeat_interval_ms,
            max_poll_records=max_poll_records,
            isolation_level=isolation_level,
            exclude_internal_topics=exclude_internal_topics,
            **settings,
            **extra,
        )
        self.consumer: Consumer[Any, Any] = Consumer(**config)
        self._max_poll_interval = max_poll_interval_ms / 1000
        self._request_timeout_ms = request_timeout_ms
        self._listener: _Listener | None = None
        #: Without a group: the subscribed topics or pattern, read in full (aiokafka's
        #: behaviour); kept up to date by ``_follow_task``.
        self._groupless: tuple[str, ...] | re.Pattern[str] | None = None
        self._follow_task: asyncio.Task[None] | None = None
        #: A pattern given to subscribe() before start(): subscribed by start().
        self._pattern: str | None = None
        self._closed = False
        self._started = False
        #: Frameworks read aiokafka's private ``_coordinator`` and ``_subscription``.
        self._coordinator = _CoordinatorView(self)
        self._subscription = _SubscriptionView(self)
        if topics:
            self.subscribe(topics=topics)

    def __repr__(self) -> str:
        return f"<AIOKafkaConsumer on {self.consumer!r}>"

    # -- life ---------------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect; with a subscription, return once the group gave this member its
        partitions (possibly none), as aiokafka does."""
        if self._started:
            raise AssertionError("Did you call `start` twice?")
        self._started = True
        await self.consumer.start()
        if self._groupless is not None:
            await self._assign_groupless(wait=True)
            self._follow_task = asyncio.create_task(self._follow())
            await self._known_positions()
            return
        listener = self._listener
        if listener is None:
            return
        if self._pattern is not None:
            self.consumer.cluster.set_topics(None)  # every topic's metadata
            await self.consumer.cluster.refresh_metadata(None)
            self.consumer.subscribe(pattern=self._pattern, listener=listener)
            self._pattern = None
        deadline = time.monotonic() + self._max_poll_interval
        while not listener.assigned:
            # A fatal group error (an ACL, a bad group id) ends the wait.
            self.consumer.raise_pending(retriable=False)
            if time.monotonic() > deadline:
                raise _k.KafkaTimeoutError(
                    f"no assignment from group {self._group_id!r} within "
                    f"{self._max_poll_interval:.0f} s"
                )
            await asyncio.sleep(0.02)
        await self._known_positions()

    async def _known_positions(self) -> None:
        """Wait until every assigned partition's position is known (committed offset or
        ``auto_offset_reset``), so a record produced once ``start()`` returned is read even
        with ``auto_offset_reset="latest"``: code (and FastStream's tests) produce right
        after ``start()``. Bounded by ``request_timeout_ms`` per partition."""
        for tp in sorted(self.consumer.assignment()):
            try:
                await self.consumer.position(tp, timeout_ms=self._request_timeout_ms)
            except _k.KafkaError as exc:  # revoked meanwhile, or no answer: not fatal here
                log.debug("position of %s not known at start: %s", tp, exc)

    async def stop(self) -> None:
        """Commit (auto commit), leave the group and close; a second call does nothing.
        The rebalance listener is not told."""
        if self._closed:
            return
        self._closed = True
        if self._listener is not None:
            self._listener.stopping = True
        if self._follow_task is not None:
            self._follow_task.cancel()
        await self.consumer.close()

    # -- assignment ---------------------------------------------------------------------------

    def subscribe(
        self,
        topics: Iterable[str] = (),
        pattern: str | None = None,
        listener: Any = None,
    ) -> None:
        """Subscribe to ``topics`` or to the topics matching ``pattern`` (a regex), with an
        optional :class:`~kafka_async.aiokafka.abc.ConsumerRebalanceListener`. Replaces any
        previous subscription."""
        topics = tuple(topics)
        if not (topics or pattern):
            raise TypeError("You should provide either `topics` or `pattern`")
        if topics and pattern:
            raise TypeError("You can't provide both `topics` and `pattern`")
        if listener is not None and not (
            hasattr(listener, "on_partitions_revoked")
            and hasattr(listener, "on_partitions_assigned")
        ):
            raise TypeError("listener should be an instance of ConsumerRebalanceListener")
        self._pattern = None
        if self._group_id is None:
            self._groupless = re.compile(pattern) if pattern else topics
            if self._started:
                self.consumer.cluster.request_metadata_update()
            return
        self._listener = _Listener(listener, self._group_id)
        try:
            if pattern and not self._started:
                # Matched against the cluster's topics once start() has them: subscribing
                # now would join the group with nothing matched, then again.
                self._pattern = pattern
            elif pattern:
                self.consumer.subscribe(pattern=pattern, listener=self._listener)
            else:
                self.consumer.subscribe(topics=topics, listener=self._listener)
        except _k.ClientClosedError as exc:
            raise IllegalStateError(str(exc)) from exc

    def subscription(self) -> set[str]:
        """The subscribed topics (for a pattern: those it matches now)."""
        if self._groupless is not None:
            if isinstance(self._groupless, tuple):
                return set(self._groupless)
            return {tp.topic for tp in self.consumer.assignment()}
        return self.consumer.subscription()

    def unsubscribe(self) -> None:
        """Drop the subscription and every partition."""
        self._groupless = None
        self.consumer.unsubscribe()

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Read exactly these partitions, without group membership (the committed offsets
        are the starting points when ``group_id`` is set)."""
        tps = [TopicPartition(tp[0], tp[1]) for tp in partitions]
        self._groupless = None
        self.consumer.assign(tps)

    def assignment(self) -> set[TopicPartition]:
        """The partitions assigned now."""
        return self.consumer.assignment()

    async def _assign_groupless(self, *, wait: bool) -> None:
        client = self.consumer.cluster
        want = self._groupless
        if want is None:
            return
        if isinstance(want, tuple):
            if wait:
                for topic in want:
                    try:
                        await client.wait_for_topic(topic)
                    except _k.KafkaTimeoutError:
                        log.warning("topic %r not found; it is read once it exists", topic)
            names: Iterable[str] = want
        else:
            client.set_topics(None)  # every topic's metadata
            await client.refresh_metadata(None)
            names = [t for t in client.metadata.topics if want.match(t)]
        tps = set()
        for topic in names:
            for p in client.metadata.partitions_for(topic) or ():
                tps.add(TopicPartition(topic, p))
        if tps != self.consumer.assignment():
            self.consumer.assign(sorted(tps))

    async def _follow(self) -> None:
        """Without a group: pick up new partitions (and topics matching a pattern)."""
        while True:
            await asyncio.sleep(1.0)
            try:
                await self._assign_groupless(wait=False)
            except _k.KafkaError as exc:
                log.warning("could not refresh the partitions to read: %s", exc)

    # -- positions ----------------------------------------------------------------------------

    def _check_assigned(self, partitions: Iterable[TopicPartition]) -> None:
        for tp in partitions:
            if not isinstance(tp, TopicPartition):
                raise TypeError("partitions must be TopicPartition instances")
        missing = set(partitions) - self.consumer.assignment()
        if missing:
            raise IllegalStateError(f"Partitions {missing} are not assigned")

    def seek(self, partition: TopicPartition, offset: int) -> None:
        """Read ``partition`` from ``offset`` on (the next getone/getmany)."""
        if not isinstance(offset, int) or offset < 0:
            raise ValueError("Offset must be a positive integer")
        self._check_assigned([partition])
        self.consumer.seek(partition, offset)

    async def seek_to_beginning(self, *partitions: TopicPartition) -> None:
        """Move to the earliest offset (of ``partitions``, or every assigned one)."""
        self._check_assigned(partitions)
        await self.consumer.seek_to_beginning(*partitions)

    async def seek_to_end(self, *partitions: TopicPartition) -> None:
        """Move past the last record (of ``partitions``, or every assigned one)."""
        self._check_assigned(partitions)
        await self.consumer.seek_to_end(*partitions)

    async def seek_to_committed(
        self, *partitions: TopicPartition
    ) -> dict[TopicPartition, int | None]:
        """Move to the committed offset (where there is one); returns the committed
        offsets."""
        if self._group_id is None:
            raise IllegalOperation("seek_to_committed needs a group_id")
        self._check_assigned(partitions)
        tps = list(partitions) or sorted(self.consumer.assignment())
        out: dict[TopicPartition, int | None] = {}
        for tp in tps:
            offset = await self.committed(tp)
            out[tp] = offset
            if offset is not None and offset > 0:
                self.consumer.seek(tp, offset)
        return out

    async def position(self, partition: TopicPartition) -> int:
        """The offset of the next record to be returned for ``partition``."""
        self._check_assigned([partition])
        return await self.consumer.position(partition)

    async def committed(self, partition: TopicPartition) -> int | None:
        """The group's committed offset of ``partition`` (None if nothing is)."""
        if self._group_id is None:
            raise IllegalOperation("Requires group_id")
        return await self.consumer.committed(partition)

    async def beginning_offsets(
        self, partitions: Iterable[TopicPartition]
    ) -> dict[TopicPartition, int]:
        """The earliest offset of each partition."""
        return await self.consumer.beginning_offsets(partitions)

    async def end_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """The offset after the last record of each partition."""
        return await self.consumer.end_offsets(partitions)

    async def offsets_for_times(
        self, timestamps: Mapping[TopicPartition, int]
    ) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        """Per partition, the first offset with a timestamp >= the given one (ms), or
        None."""
        for tp, ts in timestamps.items():
            if not isinstance(tp, TopicPartition):
                raise TypeError("partitions must be TopicPartition instances")
            if not isinstance(ts, int) or ts < 0:
                raise ValueError(f"The target time for partition {tp} is {ts}.")
        got = await self.consumer.offsets_for_times(timestamps)
        return {
            tp: None if v is None else OffsetAndTimestamp(v.offset, v.timestamp)
            for tp, v in got.items()
        }

    def highwater(self, partition: TopicPartition) -> int | None:
        """The high watermark as of the last fetch (None before one)."""
        self._check_assigned([partition])
        return self.consumer.highwater(partition)

    def last_stable_offset(self, partition: TopicPartition) -> int | None:
        """The last stable offset as of the last fetch (None before one)."""
        self._check_assigned([partition])
        return self.consumer.last_stable_offset(partition)

    def last_poll_timestamp(self, partition: TopicPartition) -> int | None:
        """Not tracked by kafka_async: None."""
        self._check_assigned([partition])
        return None

    def pause(self, *partitions: TopicPartition) -> None:
        """Stop returning (and fetching) records of these partitions."""
        self._check_assigned(partitions)
        self.consumer.pause(*partitions)

    def resume(self, *partitions: TopicPartition) -> None:
        """Return records of these paused partitions again."""
        self._check_assigned(partitions)
        self.consumer.resume(*partitions)

    def paused(self) -> set[TopicPartition]:
        """The partitions paused now."""
        return self.consumer.paused()

    async def topics(self) -> set[str]:
        """Every topic of the cluster."""
        client = self.consumer.cluster
        # Track every topic from now on (as aiokafka's client does after this call).
        client.set_topics(None)
        md = await client.refresh_metadata(None)
        return set(md.topics)

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        """The partition ids of ``topic`` as of the last metadata (None if unknown)."""
        got = self.consumer.cluster.metadata.partitions_for(topic)
        return None if got is None else set(got)

    # -- commits ------------------------------------------------------------------------------

    async def commit(
        self,
        offsets: Mapping[TopicPartition, int | OffsetAndMetadata | tuple[int, str]] | None = None,
    ) -> None:
        """Commit ``offsets`` (the next offset to read, per partition), or the position of
        every record returned so far. ``CommitFailedError`` when the group rebalanced."""
        if self._group_id is None:
            raise IllegalOperation("Requires group_id")
        if offsets is not None:
            if not isinstance(offsets, Mapping):
                raise ValueError(offsets)
            ours: dict[TopicPartition, Any] = {}
            for tp, value in offsets.items():
                if not isinstance(tp, TopicPartition):
                    raise ValueError(offsets)
                if isinstance(value, tuple):
                    ours[tp] = (int(value[0]), str(value[1]))
                elif isinstance(value, int) and not isinstance(value, bool):
                    ours[tp] = (value, "")
                else:
                    raise ValueError(offsets)
            await self.consumer.commit(ours)
            return
        await self.consumer.commit()

    # -- reading ------------------------------------------------------------------------------

    def _check_running(self) -> None:
        if self._closed:
            raise ConsumerStoppedError()

    async def getone(self, *partitions: TopicPartition) -> ConsumerRecord[Any, Any]:
        """The next record (of ``partitions``, if given); waits as long as it takes.
        ``ConsumerStoppedError`` once the consumer is stopped."""
        self._check_running()
        try:
            return _record(await self.consumer.getone(*partitions))
        except _k.ClientClosedError as exc:
            raise ConsumerStoppedError() from exc

    async def getmany(
        self,
        *partitions: TopicPartition,
        timeout_ms: float = 0,
        max_records: int | None = None,
    ) -> dict[TopicPartition, list[ConsumerRecord[Any, Any]]]:
        """Records by partition: what is buffered, else what arrives within ``timeout_ms``
        (an empty dict if nothing does); at most ``max_records``."""
        self._check_running()
        if max_records is not None and (not isinstance(max_records, int) or max_records < 1):
            raise ValueError("`max_records` must be a positive Integer")
        try:
            # aiokafka's callers pass float milliseconds (FastStream does): round up.
            got = await self.consumer.getmany(
                *partitions, timeout_ms=math.ceil(timeout_ms), max_records=max_records
            )
        except _k.ClientClosedError as exc:
            raise ConsumerStoppedError() from exc
        return {tp: [_record(r) for r in recs] for tp, recs in got.items()}

    def __aiter__(self) -> AIOKafkaConsumer:
        if self._closed:
            raise ConsumerStoppedError()
        return self

    async def __anext__(self) -> ConsumerRecord[Any, Any]:
        try:
            return await self.getone()
        except ConsumerStoppedError:
            raise StopAsyncIteration from None
