"""examples/fastapi_app.py with FastAPI's TestClient against the real broker: the POST
endpoint returns the broker's RecordMetadata, the background worker sees every event, and
shutdown is clean (worker commits what it consumed and leaves the group, quickly)."""

from __future__ import annotations

import time
import uuid
import warnings
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from examples_helpers import load_example, produce

from kafka_async import AdminClient

pytestmark = pytest.mark.integration

with warnings.catch_warnings():
    # Starlette's TestClient warns that it would prefer another httpx package; not ours.
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient


async def _group_after_shutdown(bootstrap: str, group: str) -> tuple[dict[int, int], Any]:
    async with AdminClient(bootstrap_servers=bootstrap) as admin:
        offsets = await admin.list_consumer_group_offsets(group, raise_on_error=True)
        described = await admin.describe_groups([group], raise_on_error=True)
    committed = {tp.partition: r.offset for tp, r in offsets.items() if r.offset >= 0}
    return committed, described[group]


def _poll_stats(client: Any, until: Callable[[dict[str, Any]], bool], timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        resp = client.get("/events/stats")
        assert resp.status_code == 200
        stats = resp.json()
        if until(stats):
            return stats
        assert time.monotonic() < deadline, f"worker did not catch up within {timeout} s: {stats}"
        time.sleep(0.1)


def test_fastapi_app_produces_consumes_and_shuts_down_cleanly(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    example = load_example("fastapi_app")
    topic = new_topic(3, prefix="ex-fastapi")
    group = f"ex-fastapi-{uuid.uuid4().hex[:8]}"
    # A record that is not JSON: the worker must count it and keep going.
    anyio.run(produce, kafka_broker, topic, [b"not json"])
    app = example.create_app(kafka_broker, topic, group)

    deliveries: list[dict[str, Any]] = []
    with TestClient(app) as client:
        for i in range(6):
            resp = client.post("/events", json={"key": f"user-{i % 3}", "payload": {"n": i}})
            assert resp.status_code == 200, resp.text
            deliveries.append(resp.json())
        # Bad input is the framework's 422, never a send.
        assert client.post("/events", json={"key": "x"}).status_code == 422

        for d in deliveries:
            assert d["topic"] == topic
            assert 0 <= d["partition"] < 3
            assert d["timestamp"] > 0
        # Same key, same partition; offsets within a partition are distinct and ascending.
        by_key: dict[str, set[int]] = {}
        for i, d in enumerate(deliveries):
            by_key.setdefault(f"user-{i % 3}", set()).add(d["partition"])
        assert all(len(parts) == 1 for parts in by_key.values())
        next_offsets: dict[int, int] = {}
        for d in deliveries:
            assert d["offset"] >= next_offsets.get(d["partition"], 0)
            next_offsets[d["partition"]] = d["offset"] + 1

        stats = _poll_stats(client, lambda s: s["consumed"] >= 6, timeout=20)
        assert stats["consumed"] == 6
        assert stats["invalid"] == 1
        assert stats["by_key"] == {"user-0": 2, "user-1": 2, "user-2": 2}
        assert stats["worker_errors"] == 0
        for p, off in next_offsets.items():
            assert stats["next_offsets"][str(p)] >= off
        seen = sorted(r["payload"]["n"] for r in stats["recent"])
        assert seen == list(range(6))
        final_offsets = {int(p): off for p, off in stats["next_offsets"].items()}
        shutdown_started = time.monotonic()
    shutdown = time.monotonic() - shutdown_started
    assert shutdown < 12, f"lifespan shutdown took {shutdown:.1f} s"

    # The worker ended through its own close(): what it consumed is committed and it left.
    committed, group_desc = anyio.run(_group_after_shutdown, kafka_broker, group)
    # (A partition with no records may have its position 0 committed, or nothing.)
    assert {p: committed.get(p, 0) for p in range(3)} == {
        p: final_offsets.get(p, 0) for p in range(3)
    }
    assert group_desc.members == ()


def test_fastapi_app_kafka_error_is_a_503_within_the_delivery_timeout(kafka_broker: str) -> None:
    example = load_example("fastapi_app")
    # A topic that does not exist (and is not created by metadata requests): the send waits
    # for it until the delivery timeout, then the endpoint answers 503.
    missing = f"ex-fastapi-missing-{uuid.uuid4().hex[:8]}"
    app = example.create_app(
        kafka_broker,
        missing,
        f"ex-fastapi-{uuid.uuid4().hex[:8]}",
        producer_config={
            "request_timeout_ms": 1_000,
            "delivery_timeout_ms": 2_000,
            "allow_auto_create_topics": False,
        },
    )
    with TestClient(app) as client:
        started = time.monotonic()
        resp = client.post("/events", json={"payload": {"n": 1}})
        took = time.monotonic() - started
        assert resp.status_code == 503, resp.text
        assert resp.json()["detail"].startswith("Kafka: ")
        assert missing in resp.json()["detail"]
        # At least most of the delivery timeout; the upper bound only rules out a hang
        # (a loaded 2-core CI machine can stretch a 2 s timeout a lot).
        assert 1.5 < took < 18
        assert client.get("/events/stats").json()["consumed"] == 0
