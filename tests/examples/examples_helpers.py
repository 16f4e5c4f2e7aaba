"""Shared by the tests of examples/: load an example as a module, run one as a child
process and watch its output, produce records, read a topic back to its end."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from types import ModuleType

import anyio
import anyio.abc

from kafka_async import Consumer, ConsumerRecord, Producer, TopicPartition
from kafka_async.consumer.config import IsolationLevelName

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load_example(name: str) -> ModuleType:
    """Import ``examples/<name>.py`` as module ``example_<name>`` (once per session)."""
    mod_name = f"example_{name}"
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    spec = importlib.util.spec_from_file_location(mod_name, EXAMPLES / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    spec.loader.exec_module(module)
    return module


async def produce(
    bootstrap: str, topic: str, values: Sequence[bytes], *, partition: int | None = None
) -> list[tuple[int, int]]:
    """Send ``values`` (key = value) and return their (partition, offset)s."""
    out = []
    async with Producer(bootstrap_servers=bootstrap) as producer:
        for value in values:
            md = await producer.send(topic, value=value, key=value, partition=partition)
            out.append((md.partition, md.offset))
    return out


async def read_to_end(
    bootstrap: str,
    topic: str,
    partitions: int,
    *,
    isolation_level: IsolationLevelName = "read_uncommitted",
    timeout: float = 10.0,  # noqa: ASYNC109 - a deadline
) -> list[ConsumerRecord[bytes, bytes]]:
    """Every record of ``topic`` up to its current end offsets (assign mode, no group)."""
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    out: list[ConsumerRecord[bytes, bytes]] = []
    consumer: Consumer[bytes, bytes] = Consumer(
        bootstrap_servers=bootstrap, isolation_level=isolation_level
    )
    async with consumer:
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        ends = await consumer.end_offsets(tps)
        with anyio.fail_after(timeout):
            for tp in tps:
                while await consumer.position(tp) < ends[tp]:
                    batch = await consumer.getmany(tp, timeout_ms=200)
                    out.extend(batch.get(tp, []))
    return out


class ExampleProcess:
    """An example running as a child process; its stdout and stderr are collected as lines
    by tasks in the caller's task group."""

    def __init__(self, process: anyio.abc.Process) -> None:
        self.process = process
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self._changed = anyio.Event()

    async def _collect(self, stream: anyio.abc.ByteReceiveStream, into: list[str]) -> None:
        pending = b""
        async for chunk in stream:
            pending += chunk
            *lines, pending = pending.split(b"\n")
            into.extend(line.decode(errors="replace") for line in lines)
            self._changed.set()
            self._changed = anyio.Event()
        if pending:
            into.append(pending.decode(errors="replace"))
        self._changed.set()

    async def wait_for(
        self,
        predicate: Callable[[list[str]], bool],
        timeout: float,  # noqa: ASYNC109 - a deadline
    ) -> None:
        """Wait until ``predicate(stdout lines)`` holds; fail with the output on timeout."""
        await self._wait_for(self.stdout, predicate, timeout)

    async def wait_for_stderr(
        self,
        predicate: Callable[[list[str]], bool],
        timeout: float,  # noqa: ASYNC109 - a deadline
    ) -> None:
        """Wait until ``predicate(stderr lines)`` holds; fail with the output on timeout."""
        await self._wait_for(self.stderr, predicate, timeout)

    async def _wait_for(
        self,
        lines: list[str],
        predicate: Callable[[list[str]], bool],
        timeout: float,  # noqa: ASYNC109 - a deadline
    ) -> None:
        with anyio.move_on_after(timeout):
            while not predicate(lines):
                if self.process.returncode is not None:
                    break
                event = self._changed
                with anyio.move_on_after(0.2):
                    await event.wait()
            if predicate(lines):
                return
        raise AssertionError(
            f"example output did not match within {timeout} s "
            f"(exit code {self.process.returncode});\n{self.transcript()}"
        )

    async def terminate_and_wait(self, timeout: float) -> int:  # noqa: ASYNC109 - a deadline
        """SIGTERM, then the exit code (the test fails if it takes more than ``timeout``)."""
        self.process.send_signal(signal.SIGTERM)
        return await self.wait(timeout)

    async def wait(self, timeout: float) -> int:  # noqa: ASYNC109 - a deadline
        with anyio.move_on_after(timeout):
            return await self.process.wait()
        self.process.kill()
        raise AssertionError(f"example still running after {timeout} s;\n{self.transcript()}")

    def transcript(self) -> str:
        return "--- stdout\n" + "\n".join(self.stdout) + "\n--- stderr\n" + "\n".join(self.stderr)


@asynccontextmanager
async def run_example(name: str, *args: str) -> AsyncIterator[ExampleProcess]:
    """Run ``python examples/<name>.py ARGS`` with output collected; killed on exit if it is
    still running."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = await anyio.open_process(
        [sys.executable, str(EXAMPLES / f"{name}.py"), *args],
        stdin=subprocess.DEVNULL,
        env=env,
    )
    ex = ExampleProcess(process)
    async with process, anyio.create_task_group() as tg:
        assert process.stdout is not None
        assert process.stderr is not None
        tg.start_soon(ex._collect, process.stdout, ex.stdout)
        tg.start_soon(ex._collect, process.stderr, ex.stderr)
        try:
            yield ex
        finally:
            if process.returncode is None:
                process.kill()
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                await process.wait()
