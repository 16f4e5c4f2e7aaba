"""A FastAPI service with kafka_async: POST /orders sends to Kafka, a worker consumes.

The lifespan opens one Producer for the app (``app.state.producer``) and starts a consumer
worker in a task group. The worker commits by hand (``enable_auto_commit=False``) and stops
without losing or repeating an order: the stop request is looked at only between batches,
and each batch's processing and commit run shielded from cancellation (with a deadline).

Serve it (needs uvicorn) and stop it with Ctrl-C::

    KAFKA_BOOTSTRAP_SERVERS=localhost:9092 uvicorn fastapi_app:app
    curl -X POST localhost:8000/orders -H 'content-type: application/json' \\
         -d '{"id": "o-1", "total": 12}'
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import anyio.abc
from fastapi import FastAPI, HTTPException, Request
from pydantic import BaseModel

from kafka_async import Consumer, ConsumerRecord, Producer, TopicPartition
from kafka_async.consumer import CommitFailedError
from kafka_async.errors import KafkaError

log = logging.getLogger("fastapi_app")

#: How long one batch may take to process and commit once started, stop or no stop.
BATCH_DEADLINE = 30.0
#: How long the shutdown waits for the worker before cancelling it.
SHUTDOWN_DEADLINE = 40.0

Batch = dict[TopicPartition, list[ConsumerRecord[bytes, bytes]]]


class Order(BaseModel):
    id: str
    total: float


def write_journal(journal: Path, batch: Batch) -> None:
    """The work done per order (here: a line in a file; in your service, a database write)."""
    with journal.open("a") as f:
        for records in batch.values():
            for record in records:
                f.write(f"{record.partition} {record.offset} {record.value!r}\n")
        f.flush()
        os.fsync(f.fileno())


async def order_worker(
    bootstrap_servers: str,
    topic: str,
    group_id: str,
    journal: Path,
    stop: anyio.Event,
    *,
    task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Process the orders of ``topic`` until ``stop`` is set, each once."""
    consumer = Consumer(
        topic,
        bootstrap_servers=bootstrap_servers,
        group_id=group_id,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    async with consumer:
        task_status.started()
        # The stop request is seen here only, between batches.
        while not stop.is_set():
            batch = await consumer.getmany(timeout_ms=500, max_records=500)
            if not batch:
                continue
            # Processing and commit of a batch are not interrupted by a stop request or a
            # cancellation (fail_after's deadline still applies): a stop that arrives now
            # waits for the commit, so the batch is neither lost nor processed twice.
            with anyio.fail_after(BATCH_DEADLINE, shield=True):
                await anyio.to_thread.run_sync(write_journal, journal, batch)
                try:
                    await consumer.commit({tp: rs[-1].offset + 1 for tp, rs in batch.items()})
                except CommitFailedError as exc:
                    # The group rebalanced meanwhile: partitions that moved are read again
                    # by their new owner from the last commit (at least once, not exactly).
                    log.warning("commit failed after a rebalance: %s", exc)
    # Leaving ``async with`` closed the consumer: it left the group, nothing to commit.


def create_app(
    bootstrap_servers: str,
    topic: str = "orders",
    group_id: str = "orders-worker",
    journal: Path = Path("orders.journal"),
) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        stop = anyio.Event()
        producer = Producer(bootstrap_servers=bootstrap_servers)
        async with producer, anyio.create_task_group() as tg:
            await tg.start(order_worker, bootstrap_servers, topic, group_id, journal, stop)
            app.state.producer = producer
            try:
                yield
            finally:
                stop.set()  # the worker ends after its current batch
                tg.cancel_scope.deadline = anyio.current_time() + SHUTDOWN_DEADLINE
        # Leaving ``async with Producer`` flushed and closed it.

    app = FastAPI(lifespan=lifespan)

    @app.post("/orders")
    async def post_order(order: Order, request: Request) -> dict[str, int]:
        producer: Producer = request.app.state.producer
        try:
            md = await producer.send(
                topic, key=order.id.encode(), value=json.dumps(order.model_dump()).encode()
            )
        except KafkaError as exc:
            raise HTTPException(status_code=503, detail=str(exc)) from exc
        return {"partition": md.partition, "offset": md.offset}

    return app


app = create_app(os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "localhost:9092"))
