"""examples/trio_consumer.py runs under trio: in this process (the anyio pytest plugin on
its trio backend) and as a program (``trio.run``) stopped by SIGTERM."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable

import pytest
import sniffio
import trio
from examples_helpers import load_example, produce, run_example

from kafka_async import AdminClient, ConsumerRecord, TopicPartition

pytestmark = pytest.mark.integration

PROCESSED = re.compile(r"^processed \S+/(\d+)/(\d+) value=(.*)$")


async def _committed(bootstrap: str, group: str, topic: str) -> dict[TopicPartition, int]:
    async with AdminClient(bootstrap_servers=bootstrap) as admin:
        got = await admin.list_consumer_group_offsets(group, raise_on_error=True)
    return {tp: r.offset for tp, r in got.items() if tp.topic == topic and r.offset >= 0}


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_trio_consumer_in_process_stops_on_event(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    assert sniffio.current_async_library() == "trio"
    example = load_example("trio_consumer")
    topic = new_topic(3, prefix="ex-trio")
    group = f"ex-trio-{uuid.uuid4().hex[:8]}"
    values = [f"v{i}".encode() for i in range(30)]
    placed = await produce(kafka_broker, topic, values)
    ends: dict[TopicPartition, int] = {}
    for p, offset in placed:
        tp = TopicPartition(topic, p)
        ends[tp] = max(ends.get(tp, 0), offset + 1)

    seen: list[ConsumerRecord[bytes, bytes]] = []
    all_seen = trio.Event()
    stop = trio.Event()

    def handle(record: ConsumerRecord[bytes, bytes]) -> None:
        seen.append(record)
        if len(seen) == len(values):
            all_seen.set()

    committed: dict[TopicPartition, int] = {}

    async def run() -> None:
        nonlocal committed
        committed = await example.consume(
            kafka_broker, topic, group, stop=stop, handle=handle, commit_every=7
        )

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run)
            await all_seen.wait()
            stop.set()
    assert sorted(r.value or b"" for r in seen) == sorted(values)
    assert committed == ends
    assert await _committed(kafka_broker, group, topic) == ends


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_trio_consumer_program_sigterm(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(2, prefix="ex-trio-sig")
    group = f"ex-trio-sig-{uuid.uuid4().hex[:8]}"
    values = [f"s{i}".encode() for i in range(12)]
    placed = await produce(kafka_broker, topic, values)
    ends: dict[int, int] = {}
    for p, offset in placed:
        ends[p] = max(ends.get(p, 0), offset + 1)
    args = ["--bootstrap-servers", kafka_broker, "--topic", topic, "--group", group]

    def processed(lines: list[str]) -> list[tuple[int, int, str]]:
        matches = (PROCESSED.match(line) for line in lines)
        return [(int(m.group(1)), int(m.group(2)), m.group(3)) for m in matches if m]

    async with run_example("trio_consumer", *args, "--commit-every", "5") as ex:
        await ex.wait_for(lambda lines: len(processed(lines)) >= len(values), timeout=20)
        code = await ex.terminate_and_wait(timeout=10)
    assert code == 0, ex.transcript()
    assert "received SIGTERM, shutting down" in ex.stderr
    assert sorted((p, o) for p, o, _ in processed(ex.stdout)) == sorted(placed)
    printed = {}
    for line in ex.stdout:
        m = re.match(r"^committed \S+/(\d+) (\d+)$", line)
        if m:
            printed[int(m.group(1))] = int(m.group(2))
    assert printed == ends
    got = await _committed(kafka_broker, group, topic)
    assert {tp.partition: off for tp, off in got.items()} == ends


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_trio_consumer_handler_error_is_raised_after_the_commit(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    example = load_example("trio_consumer")
    topic = new_topic(1, prefix="ex-trio-err")
    group = f"ex-trio-err-{uuid.uuid4().hex[:8]}"
    await produce(kafka_broker, topic, [f"e{i}".encode() for i in range(8)])
    handled: list[int] = []

    def handle(record: ConsumerRecord[bytes, bytes]) -> None:
        if record.offset == 5:
            raise ValueError("cannot handle offset 5")
        handled.append(record.offset)

    with trio.fail_after(20), pytest.raises(ValueError, match="offset 5"):
        await example.consume(kafka_broker, topic, group, handle=handle, commit_every=2)
    assert handled == [0, 1, 2, 3, 4]
    assert await _committed(kafka_broker, group, topic) == {TopicPartition(topic, 0): 5}
