"""The consumer of ``async_consumer.py``, written for trio.

kafka_async is built on anyio, so the same ``Consumer`` runs unchanged under ``trio.run``:
this program uses only trio's own primitives around it (a nursery, ``trio.Event``,
``trio.open_signal_receiver``, ``trio.move_on_after``), no asyncio anywhere.

What it does: joins a consumer group, prints each record (``async for``), commits the offset
after each processed record every ``--commit-every`` records (manual commits), and on SIGTERM
or SIGINT stops the loop from inside the consumer's ``async with`` block, commits what it
processed, leaves the group and exits with status 0 (a second signal stops at once).

    python examples/trio_consumer.py --bootstrap-servers 127.0.0.1:9092 --topic events

Without ``--bootstrap-servers`` it starts an embedded broker (Tansu) with a few records in
``events``. Output: ``processed TOPIC/PARTITION/OFFSET value=...`` per record, then
``committed TOPIC/PARTITION OFFSET`` per partition.
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import trio

from kafka_async import AdminClient, Consumer, ConsumerRecord, NewTopic, Producer, TopicPartition
from kafka_async.consumer import CommitFailedError
from kafka_async.errors import KafkaError

FINAL_COMMIT_TIMEOUT = 5.0


def print_record(record: ConsumerRecord[bytes, bytes]) -> None:
    value = record.value.decode(errors="replace") if record.value is not None else None
    print(f"processed {record.topic}/{record.partition}/{record.offset} value={value}", flush=True)


async def commit(
    consumer: Consumer[bytes, bytes],
    pending: dict[TopicPartition, int],
    committed: dict[TopicPartition, int],
) -> None:
    """Commit ``pending`` (offsets after processed records) for the partitions still ours."""
    assigned = consumer.assignment()
    offsets = {tp: off for tp, off in pending.items() if tp in assigned}
    if not offsets:
        return
    try:
        await consumer.commit(offsets)
    except CommitFailedError as exc:
        # Lost the partitions in a rebalance: their new owner re-reads from the last commit.
        print(f"commit failed after a rebalance: {exc}", file=sys.stderr, flush=True)
        return
    committed.update(offsets)
    for tp, off in offsets.items():
        # Forget only what is committed: a record processed during the commit stays pending.
        if pending.get(tp) == off:
            del pending[tp]


async def consume(
    bootstrap_servers: str,
    topic: str,
    group_id: str,
    *,
    stop: trio.Event | None = None,
    handle: Callable[[ConsumerRecord[bytes, bytes]], None] = print_record,
    commit_every: int = 100,
    max_records: int | None = None,
) -> dict[TopicPartition, int]:
    """Consume until ``stop`` is set or ``max_records`` were handled; return the committed
    offsets.

    ``stop`` cancels only the loop, inside ``async with consumer``, so the consumer's own
    tasks are still there for the final commit and for leaving the group. An error from
    ``handle`` or the consumer is raised after the records handled before it were committed.
    """
    pending: dict[TopicPartition, int] = {}
    committed: dict[TopicPartition, int] = {}
    consumer: Consumer[bytes, bytes] = Consumer(
        topic,
        bootstrap_servers=bootstrap_servers,
        group_id=group_id,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    failure: Exception | None = None
    async with consumer:
        async with trio.open_nursery() as nursery:
            if stop is not None:

                async def cancel_on_stop() -> None:
                    await stop.wait()
                    nursery.cancel_scope.cancel()

                nursery.start_soon(cancel_on_stop)
            try:
                count = 0
                async for record in consumer:
                    handle(record)
                    pending[record.topic_partition] = record.offset + 1
                    count += 1
                    if max_records is not None and count >= max_records:
                        break
                    if count % commit_every == 0:
                        await commit(consumer, pending, committed)
            except Exception as exc:
                # Raised again after the final commit, and unwrapped: leaving the nursery
                # would wrap it in an ExceptionGroup.
                failure = exc
            nursery.cancel_scope.cancel()
        with trio.move_on_after(FINAL_COMMIT_TIMEOUT):
            try:
                await commit(consumer, pending, committed)
            except KafkaError as exc:
                print(f"final commit failed: {exc}", file=sys.stderr, flush=True)
    if failure is not None:
        raise failure
    return committed


class Shutdown:
    """SIGTERM/SIGINT: the first signal sets ``requested`` (graceful stop); a second one
    cancels ``scope`` at once (e.g. while the broker is unreachable)."""

    def __init__(self) -> None:
        self.requested = trio.Event()
        self.forced = False

    async def watch(self, scope: trio.CancelScope, *, task_status: trio.TaskStatus[None]) -> None:
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            task_status.started()  # handlers installed: no signal is missed from here on
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
                await producer.send(topic, value=f"hello from trio {i}".encode())
        yield servers


async def main(args: argparse.Namespace) -> int:
    async with bootstrap_or_embedded(args.bootstrap_servers, args.topic) as servers:
        shutdown = Shutdown()
        committed: dict[TopicPartition, int] = {}
        async with trio.open_nursery() as nursery:
            await nursery.start(shutdown.watch, nursery.cancel_scope)
            try:
                committed = await consume(
                    servers,
                    args.topic,
                    args.group,
                    stop=shutdown.requested,
                    commit_every=args.commit_every,
                    max_records=args.max_records,
                )
            except KafkaError as exc:
                print(f"consumer failed: {exc!r}", file=sys.stderr, flush=True)
                return 1
            finally:
                nursery.cancel_scope.cancel()  # stop listening for signals
        if shutdown.forced:
            return 1
        for tp, offset in sorted(committed.items()):
            print(f"committed {tp.topic}/{tp.partition} {offset}", flush=True)
    return 0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--bootstrap-servers", help="HOST:PORT of a broker (default: start an embedded one)"
    )
    parser.add_argument("--topic", default="events")
    parser.add_argument("--group", default="trio-consumer-example")
    parser.add_argument("--max-records", type=int, help="stop after this many records")
    parser.add_argument("--commit-every", type=int, default=100, help="records per commit")
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(trio.run(main, parse_args()))
