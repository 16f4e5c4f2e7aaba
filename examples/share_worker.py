"""A job worker on a share group (KIP-932, "queues for Kafka"): start as many as you like.

What it shows:

* ``async for record in consumer`` with a :class:`~kafka_async.ShareConsumer`: every worker
  in the share group reads the same topic, and the broker hands each record to one worker
  at a time (no partition is owned by one worker; more workers than partitions is fine);
* explicit acknowledgement of each job (``share_acknowledgement_mode="explicit"``): a job
  that worked is accepted, a job that failed for a passing reason is released (the broker
  hands it out again, ``record.delivery_count`` one higher, to this or another worker), a
  job that can never work is rejected (never handed out again);
* the acknowledgement commit callback: an acknowledgement the broker refused (the job took
  longer than the record's lock, so another worker may run it again) is reported on stderr;
* graceful shutdown on SIGTERM/SIGINT: the loop stops, ``close()`` sends what is pending,
  releases the records fetched but never processed (another worker gets them at once,
  instead of after the lock times out) and leaves the group;
* ``--from-beginning`` sets the share group's ``share.auto.offset.reset`` to ``earliest``
  (a share group starts at the end of the log by default); the group's settings live on the
  broker (``AdminClient.incremental_alter_configs`` on ``ConfigResource.group``).

The "jobs" here are record values: ``poison...`` is rejected, ``flaky...`` fails on its
first delivery (released) and works on the next, anything else works. Each outcome prints
one line: ``accepted|released|rejected TOPIC/PARTITION/OFFSET delivery=N value=...``.

Run it against Apache Kafka 4.1+ (share groups enabled: ``share.version=1``)::

    python examples/share_worker.py --bootstrap-servers 127.0.0.1:9092 --topic jobs \\
        --group workers --from-beginning

Without ``--bootstrap-servers`` it starts a throwaway Apache Kafka (needs Java 17+ and Maven;
the first run fetches Kafka from Maven Central) with a few jobs in ``jobs``.
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

import anyio
import anyio.abc
import anyio.lowlevel

from kafka_async import AcknowledgeType, AdminClient, NewTopic, Producer, ShareConsumer, ShareRecord
from kafka_async.admin import ConfigResource
from kafka_async.errors import KafkaError
from kafka_async.structs import TopicPartition


async def run_job(record: ShareRecord[bytes, bytes]) -> AcknowledgeType:
    """The work of this example; returns how the record is to be acknowledged."""
    value = (record.value or b"").decode(errors="replace")
    await anyio.lowlevel.checkpoint()  # real work would await something here
    if value.startswith("poison"):
        return AcknowledgeType.REJECT
    if value.startswith("flaky") and record.delivery_count < 2:
        return AcknowledgeType.RELEASE
    return AcknowledgeType.ACCEPT


_DONE = {
    AcknowledgeType.ACCEPT: "accepted",
    AcknowledgeType.RELEASE: "released",
    AcknowledgeType.REJECT: "rejected",
}


def report_refused(
    offsets: Mapping[TopicPartition, frozenset[int]], error: KafkaError | None
) -> None:
    """The acknowledgement commit callback: called for every acknowledgement the broker
    answered; only refusals are worth a line here (it must not block)."""
    if error is not None:
        for tp, done in offsets.items():
            print(
                f"acknowledgement refused {tp.topic}/{tp.partition} offsets={sorted(done)}: "
                f"{error}",
                file=sys.stderr,
                flush=True,
            )


async def work(
    bootstrap_servers: str,
    topic: str,
    group: str,
    *,
    stop: anyio.Event,
    max_jobs: int | None = None,
) -> int:
    """Process jobs until ``stop`` is set (or ``max_jobs`` were acknowledged); returns how
    many were acknowledged."""
    count = 0
    consumer = ShareConsumer(
        topic,
        bootstrap_servers=bootstrap_servers,
        group_id=group,
        share_acknowledgement_mode="explicit",
        max_poll_records=50,  # what one fetch locks for this worker
        acknowledgement_commit_callback=report_refused,
    )
    # Leaving ``async with``: close() sends the acknowledgements still pending and releases
    # what this worker fetched but did not process.
    async with consumer, anyio.create_task_group() as tg:

        async def stop_when_asked() -> None:
            await stop.wait()
            tg.cancel_scope.cancel()

        tg.start_soon(stop_when_asked)
        async for record in consumer:
            outcome = await run_job(record)
            consumer.acknowledge(record, outcome)
            print(
                f"{_DONE[outcome]} {record.topic}/{record.partition}/{record.offset} "
                f"delivery={record.delivery_count} "
                f"value={(record.value or b'').decode(errors='replace')}",
                flush=True,
            )
            count += 1
            if max_jobs is not None and count >= max_jobs:
                break
        tg.cancel_scope.cancel()
    return count


async def start_from_beginning(bootstrap_servers: str, group: str) -> None:
    async with AdminClient(bootstrap_servers) as admin:
        await admin.incremental_alter_configs(
            {ConfigResource.group(group): {"share.auto.offset.reset": "earliest"}},
            raise_on_error=True,
        )


async def watch_signals(
    stop: anyio.Event, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        task_status.started()
        async for signum in signals:
            print(f"received {signal.Signals(signum).name}, stopping", file=sys.stderr, flush=True)
            stop.set()
            return


@asynccontextmanager
async def bootstrap_or_local(bootstrap: str | None, topic: str) -> AsyncIterator[str]:
    """The given bootstrap servers, or a throwaway Apache Kafka with a few jobs in
    ``topic`` (Tansu, the embedded broker, has no share groups)."""
    if bootstrap:
        yield bootstrap
        return
    from kafka_async.testing.apache import ApacheKafka

    async with ApacheKafka() as kafka:
        servers = kafka.bootstrap_servers
        print(f"Apache Kafka at {servers}", file=sys.stderr, flush=True)
        async with AdminClient(servers) as admin:
            await admin.create_topics([NewTopic(topic, num_partitions=2)], raise_on_error=True)
        async with Producer(servers) as producer:
            for value in ("job-1", "poison-2", "flaky-3", "job-4", "job-5"):
                await producer.send(topic, value.encode())
        yield servers


async def main(args: argparse.Namespace) -> int:
    async with bootstrap_or_local(args.bootstrap_servers, args.topic) as servers:
        if args.from_beginning or not args.bootstrap_servers:
            await start_from_beginning(servers, args.group)
        stop = anyio.Event()
        async with anyio.create_task_group() as tg:
            await tg.start(watch_signals, stop)
            print(
                f"working on {args.topic} in share group {args.group}; SIGTERM or Ctrl-C stops",
                file=sys.stderr,
                flush=True,
            )
            done = await work(servers, args.topic, args.group, stop=stop, max_jobs=args.max_jobs)
            tg.cancel_scope.cancel()
    print(f"acknowledged {done} jobs", file=sys.stderr, flush=True)
    return 0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--bootstrap-servers", help="HOST:PORT[,...]; default: a local Apache Kafka")
    p.add_argument("--topic", default="jobs")
    p.add_argument("--group", default="workers", help="the share group id")
    p.add_argument(
        "--from-beginning",
        action="store_true",
        help="set the group's share.auto.offset.reset to earliest first",
    )
    p.add_argument("--max-jobs", type=int, default=None, help="stop after this many")
    return p.parse_args(argv)


if __name__ == "__main__":
    sys.exit(anyio.run(main, parse_args()))
