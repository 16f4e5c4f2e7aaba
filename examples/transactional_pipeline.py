"""Consume-transform-produce with Kafka transactions (exactly once, where the broker
supports it).

Each batch the consumer returns becomes one transaction: the transformed records are
produced to the output topic *and* the input offsets after the batch are committed for the
consumer group, both inside ``async with producer.transaction():``, through
``producer.send_offsets_to_transaction(offsets, group_metadata)``. Either both happen or
neither does, so after a crash the group resumes exactly after the last committed batch and
a ``read_committed`` reader of the output sees every input record transformed exactly once.

What it shows:

* ``Producer(transactional_id=...)`` (idempotent, fenced by a newer instance with the same
  id) and ``Consumer(..., enable_auto_commit=False, isolation_level="read_committed")``;
* the KIP-447 group metadata (group id, generation, member id) handed to the transaction, so
  a member that lost its partitions in a rebalance cannot commit offsets for them;
* failure handling: if the transform or Kafka fails, the transaction is aborted (by the
  ``async with``), the consumer is rewound to the start of the batch, and the error
  propagates (this program then exits with status 1; a restart resumes from the last
  commit);
* a graceful stop on SIGTERM/SIGINT: the batch in progress is finished and committed, then
  the loop ends (no abort, no re-processing); a second signal stops at once, and the broker
  aborts the open transaction (when the next instance with the same transactional id starts,
  or after the transaction timeout).

Run::

    python examples/transactional_pipeline.py --bootstrap-servers 127.0.0.1:9092 \\
        --input orders --output orders-upper --group upper --transactional-id upper-1

Without ``--bootstrap-servers`` it starts an embedded broker (Tansu), seeds 20 records, runs
until they are processed and prints the output topic. Output lines:
``transaction N: R records, offsets {partition: next offset}``.

Tansu note: the transactions and the offset commits work there, but its ``read_committed``
fetches may still return records of *aborted* transactions (the abort markers are written;
Apache Kafka hides those records). The exactly-once claim above holds on Apache Kafka.
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
import anyio.abc

from kafka_async import (
    AdminClient,
    Consumer,
    ConsumerRecord,
    NewTopic,
    Producer,
    TopicPartition,
)

#: A transform maps an input record to the output (key, value, headers).
Output = tuple[bytes | None, bytes | None, list[tuple[str, bytes]]]
Transform = Callable[[ConsumerRecord[bytes, bytes]], Output]


def upper(record: ConsumerRecord[bytes, bytes]) -> Output:
    """The example's transform: upper-case the value; a header names the source record."""
    source = f"{record.topic}/{record.partition}/{record.offset}".encode()
    value = record.value.upper() if record.value is not None else None
    return record.key, value, [("source", source)]


@dataclass
class PipelineStats:
    """What ``run_pipeline`` committed: transactions, input records, input offsets."""

    transactions: int = 0
    records: int = 0
    #: Next input offset per partition, as committed by the last transaction.
    committed: dict[TopicPartition, int] = field(default_factory=dict)


async def process_batch(
    producer: Producer,
    consumer: Consumer[bytes, bytes],
    batch: dict[TopicPartition, list[ConsumerRecord[bytes, bytes]]],
    output_topic: str,
    transform: Transform,
) -> dict[TopicPartition, int]:
    """Produce the batch's transformed records and commit its offsets in one transaction.

    On any error the transaction is aborted and the consumer rewound to the batch start, so
    nothing of the batch counts as done; the error propagates.
    """
    offsets = {tp: records[-1].offset + 1 for tp, records in batch.items()}
    try:
        async with producer.transaction():
            for records in batch.values():
                for record in records:
                    key, value, headers = transform(record)
                    # enqueue waits only for buffer space; the commit at the end of the
                    # ``async with`` flushes and fails if any record of the batch failed.
                    await producer.enqueue(output_topic, value=value, key=key, headers=headers)
            await producer.send_offsets_to_transaction(offsets, consumer.group_metadata())
    except BaseException:
        for tp, records in batch.items():
            if tp in consumer.assignment():
                consumer.seek(tp, records[0].offset)
        raise
    return offsets


async def run_pipeline(
    bootstrap_servers: str,
    input_topic: str,
    output_topic: str,
    group_id: str,
    transactional_id: str,
    *,
    stop: anyio.Event | None = None,
    transform: Transform = upper,
    max_records: int | None = None,
    batch_size: int = 500,
    on_commit: Callable[[int, int, dict[TopicPartition, int]], None] | None = None,
) -> PipelineStats:
    """Run the pipeline until ``stop`` is set or ``max_records`` input records were
    committed; errors propagate after the failed batch was aborted."""
    stats = PipelineStats()
    consumer: Consumer[bytes, bytes] = Consumer(
        input_topic,
        bootstrap_servers=bootstrap_servers,
        group_id=group_id,
        enable_auto_commit=False,  # offsets are committed by the transactions only
        isolation_level="read_committed",  # inputs may come from transactions too
        auto_offset_reset="earliest",
    )
    producer = Producer(bootstrap_servers=bootstrap_servers, transactional_id=transactional_id)
    async with producer, consumer:
        while stop is None or not stop.is_set():
            if max_records is not None and stats.records >= max_records:
                break
            # A short poll keeps ``stop`` responsive without cancelling a transaction: a
            # stop request lets the batch in progress commit.
            limit = batch_size
            if max_records is not None:
                limit = min(limit, max_records - stats.records)
            batch = await consumer.getmany(timeout_ms=200, max_records=limit)
            if not batch:
                continue
            offsets = await process_batch(producer, consumer, batch, output_topic, transform)
            stats.transactions += 1
            stats.records += sum(len(records) for records in batch.values())
            stats.committed.update(offsets)
            if on_commit is not None:
                on_commit(stats.transactions, stats.records, offsets)
    return stats


def print_commit(transaction: int, records: int, offsets: dict[TopicPartition, int]) -> None:
    shown = {tp.partition: off for tp, off in sorted(offsets.items())}
    print(f"transaction {transaction}: {records} records so far, offsets {shown}", flush=True)


class Shutdown:
    """SIGTERM/SIGINT: the first signal sets ``requested`` (finish the batch, then stop); a
    second one cancels ``scope`` at once (the broker then aborts an open transaction)."""

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
            task_status.started()
            async for signum in signals:
                name = signal.Signals(signum).name
                if not self.requested.is_set():
                    print(f"received {name}, finishing the batch", file=sys.stderr, flush=True)
                    self.requested.set()
                    continue
                print(f"received {name} again, stopping now", file=sys.stderr, flush=True)
                self.forced = True
                scope.cancel()
                return


@asynccontextmanager
async def bootstrap_or_embedded(args: argparse.Namespace) -> AsyncIterator[str]:
    if args.bootstrap_servers:
        yield args.bootstrap_servers
        return
    from kafka_async.testing import EmbeddedBroker

    async with EmbeddedBroker() as broker:
        servers = broker.bootstrap_servers
        print(f"embedded broker at {servers}", file=sys.stderr, flush=True)
        async with AdminClient(bootstrap_servers=servers) as admin:
            topics = [
                NewTopic(args.input, num_partitions=2),
                NewTopic(args.output, num_partitions=1),
            ]
            await admin.create_topics(topics, raise_on_error=True)
        async with Producer(bootstrap_servers=servers) as producer:
            for i in range(20):
                await producer.send(args.input, value=f"order {i}".encode(), key=b"%d" % i)
        if args.max_records is None:
            args.max_records = 20
        yield servers
        await print_output(servers, args.output)


async def print_output(servers: str, topic: str) -> None:
    """Print the output topic as a read_committed reader sees it."""
    tp = TopicPartition(topic, 0)
    reader: Consumer[bytes, bytes] = Consumer(
        bootstrap_servers=servers, isolation_level="read_committed"
    )
    async with reader:
        reader.assign([tp])
        await reader.seek_to_beginning(tp)
        (end,) = (await reader.end_offsets([tp])).values()
        with anyio.fail_after(10):
            while await reader.position(tp) < end:
                for record in (await reader.getmany(timeout_ms=200)).get(tp, []):
                    headers = dict(record.headers)
                    print(f"output {record.offset}: {record.value!r} from {headers['source']!r}")


async def main(args: argparse.Namespace) -> int:
    async with bootstrap_or_embedded(args) as servers:
        shutdown = Shutdown()
        stats = PipelineStats()
        async with anyio.create_task_group() as tg:
            await tg.start(shutdown.watch, tg.cancel_scope)
            try:
                stats = await run_pipeline(
                    servers,
                    args.input,
                    args.output,
                    args.group,
                    args.transactional_id,
                    stop=shutdown.requested,
                    max_records=args.max_records,
                    batch_size=args.batch_size,
                    on_commit=print_commit,
                )
            except Exception as exc:
                print(
                    f"pipeline failed: {exc!r} (a transaction in progress was aborted; a "
                    "restart resumes after the last committed one)",
                    file=sys.stderr,
                    flush=True,
                )
                return 1
            finally:
                tg.cancel_scope.cancel()  # stop listening for signals
        if shutdown.forced:
            return 1
        print(f"done: {stats.records} records in {stats.transactions} transactions", flush=True)
    return 0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--bootstrap-servers", help="HOST:PORT of a broker (default: start an embedded one)"
    )
    parser.add_argument("--input", default="orders")
    parser.add_argument("--output", default="orders-upper")
    parser.add_argument("--group", default="transactional-pipeline")
    parser.add_argument("--transactional-id", default="transactional-pipeline-1")
    parser.add_argument("--batch-size", type=int, default=500, help="records per transaction")
    parser.add_argument("--max-records", type=int, help="stop after this many input records")
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(anyio.run(main, parse_args()))
