"""docs/guides/fastapi.md: the worker of examples/fastapi_app.py stops on SIGINT without
losing or repeating a record.

Each round starts a process that runs the example app's lifespan as a server does (uvicorn
catches SIGINT, then runs the lifespan's shutdown; here ``anyio.open_signal_receiver`` plays
that part), lets the worker process records a random while as a producer feeds the topic,
sends SIGINT and waits for the process to end; the next round starts again in the same
group. A last round runs until every record sent is processed. Every record must be in the
worker's journal exactly once.

The control is the naive worker a newcomer writes (``async for record``: process, then
``commit()``, the loop cancelled at shutdown): over the same rounds it repeats records (a
SIGINT that lands after the journal write and before the commit lands), which shows the
rounds do reach the window the guide's pattern closes.
"""

from __future__ import annotations

import itertools
import random
import re
import signal
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from kafka_async import Consumer, Producer, TopicPartition

pytestmark = pytest.mark.integration

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

#: The example app's lifespan, run as a server runs it: SIGINT starts the shutdown.
GUIDE_PROGRAM = """
import asyncio, logging, signal, sys
from pathlib import Path
import anyio
sys.path.insert(0, sys.argv[5])
import fastapi_app

logging.basicConfig(level=logging.INFO, stream=sys.stderr)

def dump_tasks():
    # The harness sends SIGUSR1 when a worker does not stop: show where every task waits.
    for task in asyncio.all_tasks():
        task.print_stack(file=sys.stderr)
    sys.stderr.flush()

bootstrap, topic, group, journal = sys.argv[1:5]
app = fastapi_app.create_app(bootstrap, topic, group, Path(journal))

async def main():
    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, dump_tasks)
    with anyio.open_signal_receiver(signal.SIGINT) as signals:
        async with app.router.lifespan_context(app):
            print("ready", flush=True)
            async for _ in signals:
                break

anyio.run(main)
"""

#: The naive worker (the shape of the newcomer's report): it processes a record, then
#: commits, and shutdown cancels it wherever it is.
NAIVE_PROGRAM = """
import asyncio, logging, signal, sys
from pathlib import Path
import anyio
sys.path.insert(0, sys.argv[5])
import fastapi_app

logging.basicConfig(level=logging.INFO, stream=sys.stderr)

def dump_tasks():
    # The harness sends SIGUSR1 when a worker does not stop: show where every task waits.
    for task in asyncio.all_tasks():
        task.print_stack(file=sys.stderr)
    sys.stderr.flush()
from kafka_async import Consumer

bootstrap, topic, group, journal = sys.argv[1:5]

async def worker(stop):
    consumer = Consumer(topic, bootstrap_servers=bootstrap, group_id=group,
                        enable_auto_commit=False, auto_offset_reset="earliest")
    async with consumer, anyio.create_task_group() as tg:
        async def cancel_on_stop():
            await stop.wait()
            tg.cancel_scope.cancel()
        tg.start_soon(cancel_on_stop)
        async for record in consumer:
            batch = {record.topic_partition: [record]}
            await anyio.to_thread.run_sync(fastapi_app.write_journal, Path(journal), batch)
            await consumer.commit()

async def main():
    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, dump_tasks)
    stop = anyio.Event()
    with anyio.open_signal_receiver(signal.SIGINT) as signals:
        async with anyio.create_task_group() as tg:
            tg.start_soon(worker, stop)
            print("ready", flush=True)
            async for _ in signals:
                break
            stop.set()

anyio.run(main)
"""

ROUNDS = 8
GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "fastapi.md"


def test_the_guide_shows_the_example() -> None:
    """The guide's FastAPI block is examples/fastapi_app.py, the code these tests run."""
    text = GUIDE.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    example = (EXAMPLES / "fastapi_app.py").read_text()
    assert example in blocks


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-6000:]


def _journal(journal: Path) -> list[tuple[str, str]]:
    """(partition offset, value) per record processed."""
    if not journal.exists():
        return []
    out = []
    for line in journal.read_text().splitlines():
        partition, offset, value = line.split(" ", 2)
        out.append((f"{partition} {offset}", value))
    return out


def _journal_values(journal: Path) -> list[str]:
    return [value for _, value in _journal(journal)]


async def _stored_records(bootstrap: str, topic: str) -> list[tuple[str, str]]:
    """(partition offset, value) of every record in ``topic`` (3 partitions), read to its end."""
    tps = [TopicPartition(topic, p) for p in range(3)]
    out: list[tuple[str, str]] = []
    async with Consumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest") as consumer:
        consumer.assign(tps)
        ends = await consumer.end_offsets(tps)
        with anyio.fail_after(60, reason="reading the topic back"):
            while [tp for tp, end in ends.items() if await consumer.position(tp) < end]:
                batch = await consumer.getmany(timeout_ms=500)
                for records in batch.values():
                    out.extend((f"{r.partition} {r.offset}", repr(r.value)) for r in records)
    return out


async def _stored_values(bootstrap: str, topic: str) -> set[str]:
    return {value for _, value in await _stored_records(bootstrap, topic)}


async def _run_rounds(
    program: str, bootstrap: str, topic: str, group: str, journal: Path, seed: int
) -> list[str]:
    """Run ``ROUNDS`` interrupted rounds and a last complete one; return the values sent."""
    rng = random.Random(seed)
    sent: list[str] = []
    numbers = itertools.count()
    args = [sys.executable, "-c", program, bootstrap, topic, group, str(journal), str(EXAMPLES)]

    async def feed(producer: Producer) -> None:
        while True:
            # Named before the send: a send cancelled at the end of a round may still have
            # been stored, and its value must not be sent again.
            value = f"r-{next(numbers)}"
            sent.append(repr(value.encode()))
            await producer.send(topic, key=value.encode(), value=value.encode())
            await anyio.sleep(0.002)

    async def wait_for(condition: Callable[[], bool], what: str, timeout: float) -> None:  # noqa: ASYNC109
        with anyio.fail_after(timeout, reason=what):
            while not condition():  # noqa: ASYNC110 - a file written by another process
                await anyio.sleep(0.02)

    async def one_round(producer: Producer, interrupt: bool, n: int) -> None:
        before = len(_journal_values(journal))
        log = journal.with_name(f"worker-{n}.log")
        with log.open("wb") as stderr:
            proc = await anyio.open_process(args, stdout=subprocess.PIPE, stderr=stderr)
        try:
            assert proc.stdout is not None
            with anyio.fail_after(60, reason="the worker process did not start"):
                assert (await proc.stdout.receive()).startswith(b"ready")
            async with anyio.create_task_group() as tg:
                if interrupt:
                    tg.start_soon(feed, producer)
                    # Interrupt at a random moment while the worker is busy.
                    await wait_for(
                        lambda: len(_journal_values(journal)) > before, "no record processed", 60
                    )
                    await anyio.sleep(rng.uniform(0.0, 1.0))
                else:
                    stored = await _stored_values(bootstrap, topic)
                    # Every value stored (one whose send was cancelled may be missing).
                    await wait_for(
                        lambda: set(_journal_values(journal)) >= stored,
                        "the last round did not process every record",
                        60,
                    )
                proc.send_signal(signal.SIGINT)
                with anyio.move_on_after(60):
                    await proc.wait()
                tg.cancel_scope.cancel()
            if proc.returncode is None:
                proc.send_signal(signal.SIGUSR1)
                await anyio.sleep(1)
                pytest.fail(f"round {n}: the worker did not stop after SIGINT:\n{_tail(log)}")
            assert proc.returncode == 0, f"round {n}:\n{_tail(log)}"
        finally:
            if proc.returncode is None:
                proc.kill()
                with anyio.CancelScope(shield=True):
                    await proc.wait()
            await proc.aclose()

    async with Producer(bootstrap_servers=bootstrap, linger_ms=0) as producer:
        for n in range(ROUNDS):
            await one_round(producer, interrupt=True, n=n)
        await one_round(producer, interrupt=False, n=ROUNDS)
    return sent


@pytest.mark.timeout(900)
@pytest.mark.parametrize("worker", ["guide", "naive"])
def test_worker_stops_on_sigint_without_losing_or_repeating(
    worker: str, kafka_broker: str, new_topic: Callable[..., str], tmp_path: Path
) -> None:
    topic = new_topic(3, prefix=f"guide-fastapi-stop-{worker}")
    group = f"guide-fastapi-stop-{worker}-{uuid.uuid4().hex[:8]}"
    journal = tmp_path / "journal"
    program = GUIDE_PROGRAM if worker == "guide" else NAIVE_PROGRAM
    sent = anyio.run(_run_rounds, program, kafka_broker, topic, group, journal, 1363)

    # What the topic holds (a send cancelled at the end of a round may have been stored or
    # not), against what the worker processed, by partition and offset.
    stored = anyio.run(_stored_records, kafka_broker, topic)
    assert len(stored) >= ROUNDS * 10
    assert {v for _, v in stored} <= set(sent)
    counts = Counter(where for where, _ in _journal(journal))
    lost = [where for where, _ in stored if where not in counts]
    repeated = {where: n for where, n in counts.items() if n > 1}
    assert not lost, f"{len(lost)} of {len(stored)} records never processed: {lost[:5]}"
    assert set(counts) == {where for where, _ in stored}
    print(f"{worker}: {len(stored)} records, {len(repeated)} repeated, {len(lost)} lost")
    if worker == "guide":
        assert not repeated, f"{len(repeated)} of {len(sent)} records repeated: {repeated}"
    else:
        # The control: the naive worker repeats, so the rounds reach the window.
        assert repeated, f"the naive worker repeated nothing in {ROUNDS} rounds"
