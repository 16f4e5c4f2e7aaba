"""An ``async for`` consumer that commits what it processed and stops cleanly on SIGTERM.

What it shows:

* ``async for record in consumer`` as a member of a consumer group;
* manual commits (``enable_auto_commit=False``): after a record is *processed*, the offset
  after it is remembered per partition and committed every ``--commit-every`` records or
  ``--commit-interval`` seconds, so a crash re-delivers at most the records processed since
  the last commit (at-least-once), never skips one;
* graceful shutdown: SIGTERM or SIGINT (Ctrl-C), received with ``anyio.open_signal_receiver``,
  sets an event; a task *inside* ``async with consumer`` then cancels just the loop, the
  final commit runs (under a deadline), ``Consumer.close()`` leaves the group (so the
  partitions move to another member at once instead of after the session timeout), and the
  process exits with status 0. (Cancelling a scope around ``async with consumer`` instead
  would also cancel the consumer's own connections before that final commit.) A second
  signal stops at once (exit status 1), e.g. while the broker is still unreachable.

Run it against a broker you have::

    python examples/async_consumer.py --bootstrap-servers 127.0.0.1:9092 --topic events

or without ``--bootstrap-servers`` to start an embedded broker (Tansu) with a few records in
``events``. It prints one line per record, ``processed TOPIC/PARTITION/OFFSET key=... value=...``,
and ``committed TOPIC/PARTITION OFFSET`` for the final commit.
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import anyio
import anyio.abc

from kafka_async import AdminClient, Consumer, ConsumerRecord, NewTopic, Producer, TopicPartition
from kafka_async.consumer import CommitFailedError
from kafka_async.errors import KafkaError

#: How long the final commit at shutdown may take before we give up on it.
FINAL_COMMIT_TIMEOUT = 5.0


def print_record(record: ConsumerRecord[bytes, bytes]) -> None:
    """The "processing" of this example: one line on stdout per record."""
    key = record.key.decode(errors="replace") if record.key is not None else None
    value = record.value.decode(errors="replace") if record.value is not None else None
    print(
        f"processed {record.topic}/{record.partition}/{record.offset} key={key} value={value}",
        flush=True,
    )


class OffsetTracker:
    """Offsets to commit: for each partition, the offset after the last processed record.

    Pure bookkeeping, no I/O; ``consume`` decides when to commit.
    """

    def __init__(self, commit_every: int, commit_interval: float) -> None:
        self.commit_every = commit_every
        self.commit_interval = commit_interval
        self.pending: dict[TopicPartition, int] = {}
        self.committed: dict[TopicPartition, int] = {}
        self._since_commit = 0

    def processed(self, record: ConsumerRecord[bytes, bytes]) -> None:
        self.pending[record.topic_partition] = record.offset + 1
        self._since_commit += 1

    def due(self) -> bool:
        """``commit_every`` records were processed since the last commit started."""
        return self._since_commit >= self.commit_every

    def to_commit(self, assigned: set[TopicPartition]) -> dict[TopicPartition, int]:
        """The offsets to commit now. Partitions no longer assigned are left out: after a
        rebalance their new owner re-reads from the last commit, which only repeats work."""
        self._since_commit = 0
        return {tp: off for tp, off in self.pending.items() if tp in assigned}

    def done(self, offsets: dict[TopicPartition, int]) -> None:
        """``offsets`` are committed. Pending offsets are only forgotten here, not when the
        commit starts, so a commit cut short by cancellation is simply made again."""
        self.committed.update(offsets)
        for tp, off in offsets.items():
            if self.pending.get(tp) == off:
                del self.pending[tp]


async def commit_processed(consumer: Consumer[bytes, bytes], tracker: OffsetTracker) -> None:
    offsets = tracker.to_commit(consumer.assignment())
    if not offsets:
        return
    try:
        await consumer.commit(offsets)
    except CommitFailedError as exc:
        # A rebalance took the partitions away meanwhile; their next owner will process
        # those records again (at-least-once), so this is worth a warning, not a crash.
        print(f"commit failed after a rebalance: {exc}", file=sys.stderr, flush=True)
        return
    tracker.done(offsets)


async def consume(
    bootstrap_servers: str,
    topic: str,
    group_id: str,
    *,
    tracker: OffsetTracker,
    stop: anyio.Event | None = None,
    handle: Callable[[ConsumerRecord[bytes, bytes]], None] = print_record,
    max_records: int | None = None,
) -> None:
    """Consume ``topic`` in group ``group_id`` until ``stop`` is set (or ``max_records``
    records were handled), calling ``handle`` on each record and committing what was
    handled; ``tracker.committed`` then holds what was committed. An error from ``handle``
    or the consumer is raised after the records handled before it were committed.

    Why an event and not a cancellation from outside: the consumer's own background tasks
    (connections, heartbeats) live in a task group inside ``async with consumer``, so a
    cancellation of a scope *around* it reaches them too, and the final commit and the
    LeaveGroup in ``close()`` would have no connection left to use. Cancelling only the loop,
    from inside, keeps the consumer whole for its clean exit.
    """
    consumer: Consumer[bytes, bytes] = Consumer(
        topic,
        bootstrap_servers=bootstrap_servers,
        group_id=group_id,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    failure: Exception | None = None
    async with consumer:
        async with anyio.create_task_group() as tg:
            if stop is not None:
                tg.start_soon(cancel_when_set, stop, tg.cancel_scope)
            tg.start_soon(commit_periodically, consumer, tracker)
            try:
                await process_records(consumer, tracker, handle, max_records)
            except Exception as exc:
                # Re-raised below: after the final commit of what *was* processed, and
                # unwrapped (leaving the task group would wrap it in an ExceptionGroup).
                failure = exc
            tg.cancel_scope.cancel()  # done: stop the helper tasks
        # The deadline keeps a dead broker from holding shutdown hostage.
        with anyio.move_on_after(FINAL_COMMIT_TIMEOUT):
            try:
                await commit_processed(consumer, tracker)
            except KafkaError as exc:
                print(f"final commit failed: {exc}", file=sys.stderr, flush=True)
    if failure is not None:
        raise failure


async def process_records(
    consumer: Consumer[bytes, bytes],
    tracker: OffsetTracker,
    handle: Callable[[ConsumerRecord[bytes, bytes]], None],
    max_records: int | None,
) -> None:
    count = 0
    async for record in consumer:
        handle(record)
        # Marked only once handled: a record whose handling failed is not committed.
        tracker.processed(record)
        count += 1
        if max_records is not None and count >= max_records:
            return
        if tracker.due():
            await commit_processed(consumer, tracker)


async def commit_periodically(consumer: Consumer[bytes, bytes], tracker: OffsetTracker) -> None:
    """Every ``commit_interval`` seconds, commit what was processed (also when no records
    arrive, which is when the loop's own commits do not happen)."""
    while True:
        await anyio.sleep(tracker.commit_interval)
        try:
            await commit_processed(consumer, tracker)
        except KafkaError as exc:
            # Not fatal: the offsets stay pending for the next commit.
            print(f"periodic commit failed: {exc}", file=sys.stderr, flush=True)


async def cancel_when_set(event: anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    scope.cancel()


class Shutdown:
    """SIGTERM/SIGINT handling: the first signal asks for a graceful stop (``requested``);
    a second one cancels ``scope`` at once, e.g. while still waiting for an unreachable
    broker, skipping the final commit."""

    def __init__(self) -> None:
        self.requested = anyio.Event()
        self.forced = False

    async def watch(
        self,
        scope: anyio.CancelScope,
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            # Only now are the handlers installed: report readiness, so no signal is missed.
            task_status.started()
            async for signum in signals:
                name = signal.Signals(signum).name
                if not self.requested.is_set():
                    print(f"received {name}, shutting down", file=sys.stderr, flush=True)
                    self.requested.set()
                    continue
                print(f"received {name} again, stopping now", file=sys.stderr, flush=True)
                self.forced = True
                scope.cancel()
                return


@asynccontextmanager
async def bootstrap_or_embedded(bootstrap: str | None, topic: str) -> AsyncIterator[str]:
    """The given bootstrap servers, or an embedded broker with a few records in ``topic``."""
    if bootstrap:
        yield bootstrap
        return
    from kafka_async.testing import EmbeddedBroker

    async with EmbeddedBroker() as broker:
        servers = broker.bootstrap_servers
        print(f"embedded broker at {servers}", file=sys.stderr, flush=True)
        async with AdminClient(bootstrap_servers=servers) as admin:
            await admin.create_topics([NewTopic(topic, num_partitions=3)], raise_on_error=True)
        async with Producer(bootstrap_servers=servers) as producer:
            for i in range(10):
                await producer.send(topic, value=f"hello {i}".encode(), key=f"k{i}".encode())
        yield servers


async def main(args: argparse.Namespace) -> int:
    async with bootstrap_or_embedded(args.bootstrap_servers, args.topic) as servers:
        tracker = OffsetTracker(args.commit_every, args.commit_interval)
        shutdown = Shutdown()
        async with anyio.create_task_group() as tg:
            await tg.start(shutdown.watch, tg.cancel_scope)
            print(
                f"consuming {args.topic} in group {args.group}; SIGTERM or Ctrl-C stops",
                file=sys.stderr,
                flush=True,
            )
            try:
                await consume(
                    servers,
                    args.topic,
                    args.group,
                    tracker=tracker,
                    stop=shutdown.requested,
                    max_records=args.max_records,
                )
            except KafkaError as exc:
                print(f"consumer failed: {exc!r}", file=sys.stderr, flush=True)
                return 1
            finally:
                tg.cancel_scope.cancel()  # stop listening for signals
        if shutdown.forced:
            return 1
        # Reached after a signal too: ``consume`` made its final commit before returning.
        for tp, offset in sorted(tracker.committed.items()):
            print(f"committed {tp.topic}/{tp.partition} {offset}", flush=True)
    return 0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--bootstrap-servers", help="HOST:PORT of a broker (default: start an embedded one)"
    )
    parser.add_argument("--topic", default="events")
    parser.add_argument("--group", default="async-consumer-example")
    parser.add_argument("--max-records", type=int, help="stop after this many records")
    parser.add_argument("--commit-every", type=int, default=100, help="records per commit")
    parser.add_argument(
        "--commit-interval", type=float, default=1.0, help="seconds between commits at most"
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(anyio.run(main, parse_args()))
