"""The producer's per-record CPU without a broker: where ``send`` and ``enqueue`` spend it.

A real :class:`~kafka_async.Producer` whose sender and cluster client are replaced by stubs:
metadata names 4 partitions, and the stub sender settles every batch (drain, build,
complete) once every task waits, so each round is the same whatever the machine's load. What
is left is our per-record path and the event loop's own work, nothing of the network.

* ``send``: ``await producer.send(...)`` from 1,000 tasks of an anyio task group (the
  web-service pattern of issue 17);
* ``enqueue``: one task, ``await producer.enqueue(...)`` in a loop, nothing awaited;
* ``produce``: the same loop with ``await producer.produce(...)`` (no handle per record);
* ``floor``: the same 1,000 tasks each awaiting a bare future that a driver sets: what
  asyncio's wake-up costs by itself (``send`` cannot cost less).

Prints CPU microseconds per record (``time.process_time``; noisy on a shared machine). For
figures independent of the load, count instructions with callgrind and take the difference
of two record counts (start-up cancels out)::

    valgrind --tool=callgrind python -m benchmarks.producer_cpu send 10000
    valgrind --tool=callgrind python -m benchmarks.producer_cpu send 30000
    # (Ir of the second - Ir of the first) / 20000 = instructions per record

``python -m benchmarks.producer_cpu --count`` does that for ``send``, ``enqueue`` and
``produce`` and prints instructions per record, with which C extensions were in use
(``records.SPEEDUPS``, ``producer.fastpath.FASTPATH``).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
import time
from typing import Any

TASKS = 1000
PARTITIONS = frozenset(range(4))


class _Metadata:
    def partitions_for(self, topic: str) -> frozenset[int]:
        return PARTITIONS

    def available_partitions_for(self, topic: str) -> frozenset[int]:
        return PARTITIONS


class _Client:
    """What ``Producer.enqueue`` reads of the cluster client."""

    def __init__(self) -> None:
        self._metadata = _Metadata()

    @property
    def metadata(self) -> _Metadata:
        return self._metadata


class _Sender:
    """Settles every queued batch once ``waiting()`` records are queued (all tasks wait)."""

    fatal_error: BaseException | None = None

    def __init__(self, acc: Any) -> None:
        self._acc = acc
        self.offset = 0
        self.stop = False

    def wakeup(self) -> None:
        pass

    async def run(self, waiting: Any) -> None:
        acc = self._acc

        def leader(tp: Any) -> int:
            return 0

        while not self.stop:
            await asyncio.sleep(0)
            if not acc.incomplete or sum(b.record_count for b in acc.incomplete) < waiting():
                continue
            acc.flushing += 1
            while True:
                batches = acc.drain(0, leader, 1 << 30, time.monotonic())
                if not batches:
                    break
                for batch in batches:
                    batch.build()
                    acc.complete(batch, self.offset)
                    self.offset += batch.record_count
            acc.flushing -= 1


def _producer() -> tuple[Any, _Sender]:
    from kafka_async import Producer

    producer = Producer("127.0.0.1:1", acks="all", linger_ms=5, max_batch_size=256 * 1024)
    producer._acc.loop = asyncio.get_running_loop()
    producer._client = _Client()  # type: ignore[assignment]
    sender = _Sender(producer._acc)
    producer._sender = sender  # type: ignore[assignment]
    producer._running = True
    return producer, sender


async def _run(mode: str, n: int) -> float:
    import anyio

    values = [i.to_bytes(8, "big") + b"x" * 92 for i in range(10_000)]
    per_task = max(n // TASKS, 1)
    if mode in ("enqueue", "produce"):
        producer, _ = _producer()
        call = producer.enqueue if mode == "enqueue" else producer.produce
        cpu0 = time.process_time()
        for i in range(n):
            await call("t", values[i % 10_000])
        return time.process_time() - cpu0
    if mode == "floor":
        loop = asyncio.get_running_loop()
        futures: list[asyncio.Future[None]] = []
        left = [TASKS]

        async def waiter() -> None:
            for _ in range(per_task):
                fut = loop.create_future()
                futures.append(fut)
                await fut
            left[0] -= 1

        async def driver() -> None:
            while left[0]:
                await asyncio.sleep(0)
                ready = futures[:]
                futures.clear()
                for fut in ready:
                    fut.set_result(None)

        task = asyncio.ensure_future(driver())
        cpu0 = time.process_time()
        async with anyio.create_task_group() as tg:
            for _ in range(TASKS):
                tg.start_soon(waiter)
        cpu = time.process_time() - cpu0
        await task
        return cpu
    producer, sender = _producer()
    active = [TASKS]

    async def worker(w: int) -> None:
        try:
            for i in range(per_task):
                await producer.send("t", values[(w * per_task + i) % 10_000])
        finally:
            active[0] -= 1

    task = asyncio.ensure_future(sender.run(lambda: active[0]))
    cpu0 = time.process_time()
    async with anyio.create_task_group() as tg:
        for w in range(TASKS):
            tg.start_soon(worker, w)
    cpu = time.process_time() - cpu0
    sender.stop = True
    await task
    if sender.offset != per_task * TASKS:
        raise SystemExit(f"settled {sender.offset} records, expected {per_task * TASKS}")
    return cpu


#: Record counts of the two callgrind runs per mode (their difference cancels start-up).
COUNT_RUNS = {"send": (2_000, 12_000), "enqueue": (5_000, 25_000), "produce": (5_000, 25_000)}


def _instructions(args: list[str]) -> int:
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    for line in out.stderr.splitlines():
        if "Collected :" in line:
            return int(line.split(":")[1].strip())
    raise RuntimeError(out.stderr[-2000:])


def count(mode: str) -> float:
    """Instructions per record of ``mode``: callgrind of two record counts, differenced."""
    lo, hi = COUNT_RUNS[mode]
    base = [sys.executable, "-m", "benchmarks.producer_cpu", mode]
    return (_instructions([*base, str(hi)]) - _instructions([*base, str(lo)])) / (hi - lo)


def main(argv: list[str] | None = None) -> None:
    """``python -m benchmarks.producer_cpu {send,enqueue,produce,floor} [records]``, or
    ``--count`` (instructions per record under callgrind)."""
    args_in = sys.argv[1:] if argv is None else argv
    if args_in[:1] == ["--count"]:
        if shutil.which("valgrind") is None:
            raise SystemExit("valgrind is not installed")
        from kafka_async.producer.fastpath import FASTPATH
        from kafka_async.records import SPEEDUPS

        print(f"records.SPEEDUPS={SPEEDUPS} producer.fastpath.FASTPATH={FASTPATH}")
        for mode in COUNT_RUNS:
            print(f"{mode:8} {count(mode):10,.0f} instructions/record")
        return
    parser = argparse.ArgumentParser(prog="python -m benchmarks.producer_cpu")
    parser.add_argument("mode", choices=("send", "enqueue", "produce", "floor"))
    parser.add_argument("records", type=int, nargs="?", default=200_000)
    args = parser.parse_args(args_in)
    n = (
        args.records
        if args.mode in ("enqueue", "produce")
        else max(args.records // TASKS, 1) * TASKS
    )
    cpu = asyncio.run(_run(args.mode, n))
    print(f"{args.mode}: {n:,} records, {cpu / n * 1e6:.3f} CPU-us per record")


if __name__ == "__main__":
    main()
