"""A FastAPI service that produces to Kafka in its request handlers and consumes in the
background, with kafka_async.

What it shows:

* one ``Producer`` for the whole app, opened in the app's *lifespan* (``async with``), so
  connections and batching are shared by every request and closed (flushed) at shutdown;
* ``POST /events`` awaits ``producer.send(...)``, i.e. the broker's acknowledgement, and
  returns the ``RecordMetadata`` (topic, partition, offset, timestamp) as JSON; a Kafka error
  becomes a 503 rather than a hung request (``delivery_timeout_ms`` bounds the wait);
* a background consumer worker started in the same lifespan, inside an anyio task group
  (structured concurrency: no stray tasks; if the worker crashes the app stops instead of
  running half-alive), that keeps in-memory statistics exposed by ``GET /events/stats``;
* clean shutdown: the lifespan sets a stop event; the worker ends its ``async for`` loop from
  *inside* ``async with consumer`` (so the consumer still has its connections to commit and
  leave the group), bounded by a deadline after which the task group cancels it.

Run::

    python examples/fastapi_app.py --bootstrap-servers 127.0.0.1:9092 --topic events
    curl -X POST localhost:8000/events -H 'content-type: application/json' \\
         -d '{"key": "user-1", "payload": {"action": "login"}}'
    curl localhost:8000/events/stats

Serving needs ``uvicorn`` (``pip install uvicorn``). Without ``--bootstrap-servers`` an
embedded broker (Tansu) is started. ``--demo`` drives the app in this process with FastAPI's
``TestClient`` instead of serving it: it posts a few events, waits until the worker has seen
them and prints the statistics.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections import Counter, deque
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
from fastapi import Depends, FastAPI, HTTPException, Request
from pydantic import BaseModel

from kafka_async import Consumer, Producer
from kafka_async.errors import KafkaError

log = logging.getLogger("fastapi_app")

#: How long shutdown waits for the worker's last commit and LeaveGroup before cancelling it.
SHUTDOWN_TIMEOUT = 10.0
#: Pause before the worker starts its consumer again after a Kafka error.
WORKER_RETRY_BACKOFF = 1.0


# -- API models ---------------------------------------------------------------------------------


class EventIn(BaseModel):
    """An event to publish: an optional key (same key, same partition) and a JSON payload."""

    key: str | None = None
    payload: dict[str, Any]


class Delivery(BaseModel):
    """Where the broker stored the event (the producer's ``RecordMetadata``)."""

    topic: str
    partition: int
    offset: int
    timestamp: int


class Stats(BaseModel):
    """What the background worker has consumed so far."""

    consumed: int
    invalid: int
    by_key: dict[str, int]
    next_offsets: dict[int, int]
    recent: list[dict[str, Any]]
    worker_errors: int
    last_error: str | None


# -- state shared by the handlers and the worker ------------------------------------------------


@dataclass
class EventStats:
    """In-memory view the worker builds; plain data, changed only by synchronous calls."""

    consumed: int = 0
    invalid: int = 0
    by_key: Counter[str] = field(default_factory=Counter)
    next_offsets: dict[int, int] = field(default_factory=dict)
    recent: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=10))
    worker_errors: int = 0
    last_error: str | None = None

    def record(self, partition: int, offset: int, key: bytes | None, value: bytes | None) -> None:
        self.next_offsets[partition] = offset + 1
        try:
            payload = json.loads(value) if value is not None else None
        except ValueError:
            # A bad record must not stop the worker: count it and move on.
            self.invalid += 1
            return
        self.consumed += 1
        key_text = key.decode(errors="replace") if key is not None else ""
        self.by_key[key_text] += 1
        self.recent.append(
            {"key": key_text or None, "payload": payload, "partition": partition, "offset": offset}
        )

    def snapshot(self) -> Stats:
        return Stats(
            consumed=self.consumed,
            invalid=self.invalid,
            by_key=dict(self.by_key),
            next_offsets=dict(self.next_offsets),
            recent=list(self.recent),
            worker_errors=self.worker_errors,
            last_error=self.last_error,
        )


@dataclass
class Service:
    """What the lifespan opens, for the request handlers."""

    producer: Producer
    topic: str
    stats: EventStats


# -- the background worker ----------------------------------------------------------------------


async def consume_once(
    bootstrap_servers: str, topic: str, group_id: str, stats: EventStats, stop: anyio.Event
) -> None:
    """One consumer's life: consume into ``stats`` until ``stop``; Kafka errors propagate."""
    consumer: Consumer[bytes, bytes] = Consumer(
        topic,
        bootstrap_servers=bootstrap_servers,
        group_id=group_id,
        # A new group reads the topic from its start; afterwards the group's commits (auto
        # commit, of records already handed to this loop) tell where to resume.
        auto_offset_reset="earliest",
    )
    failure: KafkaError | None = None
    async with consumer, anyio.create_task_group() as tg:

        async def cancel_on_stop() -> None:
            await stop.wait()
            tg.cancel_scope.cancel()

        tg.start_soon(cancel_on_stop)
        try:
            async for record in consumer:
                stats.record(record.partition, record.offset, record.key, record.value)
        except KafkaError as exc:
            # Raised again once the consumer is closed, and unwrapped (leaving the task
            # group would wrap it in an ExceptionGroup), for the worker's retry loop.
            failure = exc
        tg.cancel_scope.cancel()
    if failure is not None:
        raise failure


async def consumer_worker(
    bootstrap_servers: str,
    topic: str,
    group_id: str,
    stats: EventStats,
    stop: anyio.Event,
    *,
    task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Consume ``topic`` into ``stats`` until ``stop`` is set; restart after Kafka errors."""
    task_status.started()
    while not stop.is_set():
        try:
            await consume_once(bootstrap_servers, topic, group_id, stats, stop)
        except KafkaError as exc:
            stats.worker_errors += 1
            stats.last_error = repr(exc)
            log.warning("consumer worker failed, restarting: %s", exc)
            with anyio.move_on_after(WORKER_RETRY_BACKOFF):
                await stop.wait()


# -- the app ------------------------------------------------------------------------------------


def create_app(
    bootstrap_servers: str,
    topic: str = "events",
    group_id: str = "fastapi-example",
    *,
    producer_config: Mapping[str, Any] | None = None,
) -> FastAPI:
    """The FastAPI app, configured for one topic; nothing connects until the lifespan runs.

    ``producer_config`` overrides the ``Producer`` settings below (e.g. its timeouts).
    """
    config: dict[str, Any] = {
        "linger_ms": 5,
        # A web request should not wait two minutes (the default) for a dead broker.
        "request_timeout_ms": 5_000,
        "delivery_timeout_ms": 15_000,
        **(producer_config or {}),
    }

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        stats = EventStats()
        stop = anyio.Event()
        producer = Producer(bootstrap_servers=bootstrap_servers, **config)
        async with producer, anyio.create_task_group() as tg:
            await tg.start(consumer_worker, bootstrap_servers, topic, group_id, stats, stop)
            app.state.service = Service(producer, topic, stats)
            try:
                yield
            finally:
                stop.set()
                # The worker now finishes by itself; this deadline cancels it if it can't.
                tg.cancel_scope.deadline = anyio.current_time() + SHUTDOWN_TIMEOUT

    app = FastAPI(title="kafka_async example", lifespan=lifespan)

    def service(request: Request) -> Service:
        svc: Service = request.app.state.service
        return svc

    @app.post("/events", response_model=Delivery)
    async def publish(event: EventIn, svc: Service = Depends(service)) -> Delivery:  # noqa: B008
        """Publish one event and return where it was stored (after the broker's ack)."""
        key = event.key.encode() if event.key is not None else None
        try:
            md = await svc.producer.send(
                svc.topic, value=json.dumps(event.payload).encode(), key=key
            )
        except KafkaError as exc:
            raise HTTPException(status_code=503, detail=f"Kafka: {exc}") from exc
        return Delivery(
            topic=md.topic, partition=md.partition, offset=md.offset, timestamp=md.timestamp
        )

    @app.get("/events/stats", response_model=Stats)
    async def stats(svc: Service = Depends(service)) -> Stats:  # noqa: B008
        """What the background consumer has seen."""
        return svc.stats.snapshot()

    return app


# -- running it ---------------------------------------------------------------------------------


@contextmanager
def bootstrap_or_embedded(bootstrap: str | None, topic: str) -> Iterator[str]:
    if bootstrap:
        yield bootstrap
        return
    from kafka_async.testing import EmbeddedBroker

    with EmbeddedBroker() as broker:
        servers = broker.bootstrap_servers
        print(f"embedded broker at {servers}", file=sys.stderr, flush=True)
        broker.create_topic(topic, partitions=3)
        yield servers


def demo(app: FastAPI, events: int = 5, timeout: float = 30.0) -> Stats:
    """Post ``events`` events through the app and wait until its worker consumed them."""
    from fastapi.testclient import TestClient

    with TestClient(app) as client:
        for i in range(events):
            body = {"key": f"user-{i % 2}", "payload": {"n": i}}
            resp = client.post("/events", json=body)
            resp.raise_for_status()
            print(f"POST /events {body} -> {resp.json()}", flush=True)
        deadline = time.monotonic() + timeout
        while True:
            stats = Stats.model_validate(client.get("/events/stats").json())
            if stats.consumed >= events or time.monotonic() > deadline:
                break
            time.sleep(0.2)
    print(f"GET /events/stats -> {stats.model_dump_json()}", flush=True)
    return stats


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--bootstrap-servers", help="HOST:PORT of a broker (default: start an embedded one)"
    )
    parser.add_argument("--topic", default="events")
    parser.add_argument("--group", default="fastapi-example")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument(
        "--demo", action="store_true", help="drive the app in-process instead of serving it"
    )
    args = parser.parse_args(argv)
    if args.demo:
        with bootstrap_or_embedded(args.bootstrap_servers, args.topic) as servers:
            stats = demo(create_app(servers, args.topic, args.group))
        return 0 if stats.consumed >= 5 else 1
    try:
        import uvicorn  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        print("serving needs uvicorn: pip install uvicorn (or run with --demo)", file=sys.stderr)
        return 2
    with bootstrap_or_embedded(args.bootstrap_servers, args.topic) as servers:
        uvicorn.run(create_app(servers, args.topic, args.group), host=args.host, port=args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
