"""A FastStream 0.7 application run on kafka_async through ``kafka_async.aiokafka.install()``
(started by ``test_faststream.py`` in a subprocess, so the real aiokafka other tests import
is never replaced in the test process).

``python faststream_app.py BOOTSTRAP N [--fastapi]`` wires: a subscriber on ``in`` (group,
default acknowledgement) that publishes each message doubled to ``mid`` through a
publisher; a batch subscriber on ``mid`` (group, manual commits through ``msg.ack()``)
forwarding to ``out``; a subscriber with manual acknowledgement on ``out``; then publishes N
messages to ``in`` and waits until ``out`` has seen them. It prints one JSON line: the
values each stage saw and the module the broker ran on. ``--fastapi`` does the same through
FastStream's FastAPI router (``KafkaRouter``), driving the app's lifespan.
"""

import asyncio
import json
import sys
import time
import uuid
from typing import Any

from kafka_async.aiokafka import install

install()

# Imported after install(): FastStream binds aiokafka's names at import time.
import aiokafka  # noqa: E402
from faststream import AckPolicy  # noqa: E402
from faststream.kafka import KafkaBroker, KafkaMessage  # noqa: E402


def wire(broker: Any, suffix: str, seen: dict[str, list[Any]], message: Any = KafkaMessage) -> None:
    """The three stages on ``broker`` (a KafkaBroker or FastAPI KafkaRouter); ``message``
    is the KafkaMessage annotation that integration wants."""
    # ``broker`` is either integration's object (typed Any here): its decorators are untyped.
    t_in, t_mid, t_out = (f"fs-{name}-{suffix}" for name in ("in", "mid", "out"))
    out_pub = broker.publisher(t_out)

    @broker.subscriber(t_in, group_id=f"g-in-{suffix}", auto_offset_reset="earliest")  # type: ignore[untyped-decorator]
    @broker.publisher(t_mid)  # type: ignore[untyped-decorator]
    async def double(body: int) -> int:
        seen["in"].append(body)
        return body * 2

    @broker.subscriber(  # type: ignore[untyped-decorator]
        t_mid,
        group_id=f"g-mid-{suffix}",
        auto_offset_reset="earliest",
        batch=True,
        max_records=7,
        ack_policy=AckPolicy.MANUAL,
    )
    async def batch(bodies: list[int], msg: message) -> None:
        seen["batches"].append(len(bodies))
        seen["mid"].extend(bodies)
        for b in bodies:
            await out_pub.publish(b + 1)
        await msg.ack()

    @broker.subscriber(  # type: ignore[untyped-decorator]
        t_out,
        group_id=f"g-out-{suffix}",
        auto_offset_reset="earliest",
        ack_policy=AckPolicy.MANUAL,
    )
    async def final(body: int, msg: message) -> None:
        seen["out"].append(body)
        await msg.ack()


async def wait_for(seen: dict[str, list[Any]], n: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while len(seen["out"]) < n and time.monotonic() < deadline:  # noqa: ASYNC110 - polls a list
        await asyncio.sleep(0.1)
    # A little longer: a duplicate would show up now.
    await asyncio.sleep(1.0)


async def plain(bootstrap: str, n: int) -> dict[str, Any]:
    seen: dict[str, Any] = {"in": [], "mid": [], "out": [], "batches": []}
    seen["suffix"] = suffix = uuid.uuid4().hex[:8]
    broker = KafkaBroker(bootstrap)
    wire(broker, suffix, seen)
    async with broker:
        await broker.start()
        for i in range(n):
            await broker.publish(i, f"fs-in-{suffix}")
        await wait_for(seen, n, 60)
    return seen


async def fastapi(bootstrap: str, n: int) -> dict[str, Any]:
    from fastapi import FastAPI
    from faststream.kafka.fastapi import KafkaMessage as FastAPIKafkaMessage
    from faststream.kafka.fastapi import KafkaRouter

    seen: dict[str, Any] = {"in": [], "mid": [], "out": [], "batches": []}
    seen["suffix"] = suffix = uuid.uuid4().hex[:8]
    router = KafkaRouter(bootstrap)
    wire(router, suffix, seen, FastAPIKafkaMessage)
    app = FastAPI()
    app.include_router(router)
    async with router.lifespan_context(app):
        for i in range(n):
            await router.broker.publish(i, f"fs-in-{suffix}")
        await wait_for(seen, n, 60)
    return seen


def main() -> None:
    bootstrap, n = sys.argv[1], int(sys.argv[2])
    run = fastapi if "--fastapi" in sys.argv else plain
    seen = asyncio.run(run(bootstrap, n))
    seen["consumer_class"] = aiokafka.AIOKafkaConsumer.__module__
    seen["producer_class"] = aiokafka.AIOKafkaProducer.__module__
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
