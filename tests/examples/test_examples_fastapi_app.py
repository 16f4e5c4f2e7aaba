"""examples/fastapi_app.py (the code of docs/guides/fastapi.md) with FastAPI's TestClient
against the real broker: POST /orders returns where the broker stored the order, the worker
writes each order to the journal once, and the lifespan's shutdown leaves the group with
every processed order committed."""

from __future__ import annotations

import time
import uuid
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from examples_helpers import load_example

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


def _journal_lines(journal: Path) -> list[str]:
    return journal.read_text().splitlines() if journal.exists() else []


def test_fastapi_app_sends_processes_once_and_shuts_down_cleanly(
    kafka_broker: str, new_topic: Callable[..., str], tmp_path: Path
) -> None:
    example = load_example("fastapi_app")
    topic = new_topic(3, prefix="ex-fastapi")
    group = f"ex-fastapi-{uuid.uuid4().hex[:8]}"
    journal = tmp_path / "orders.journal"
    app = example.create_app(kafka_broker, topic, group, journal)

    deliveries: list[dict[str, int]] = []
    with TestClient(app) as client:
        for i in range(6):
            resp = client.post("/orders", json={"id": f"o-{i % 3}", "total": i})
            assert resp.status_code == 200, resp.text
            deliveries.append(resp.json())
        # Bad input is the framework's 422, never a send.
        assert client.post("/orders", json={"id": "x"}).status_code == 422
        # Same key, same partition; offsets within a partition are distinct.
        by_key: dict[str, set[int]] = {}
        for i, d in enumerate(deliveries):
            by_key.setdefault(f"o-{i % 3}", set()).add(d["partition"])
        assert all(len(parts) == 1 for parts in by_key.values())
        assert len({(d["partition"], d["offset"]) for d in deliveries}) == 6

        deadline = time.monotonic() + 30
        while len(_journal_lines(journal)) < 6:
            assert time.monotonic() < deadline, _journal_lines(journal)
            time.sleep(0.1)
        shutdown_started = time.monotonic()
    shutdown = time.monotonic() - shutdown_started
    assert shutdown < 12, f"lifespan shutdown took {shutdown:.1f} s"

    lines = _journal_lines(journal)
    assert sorted((int(p), int(o)) for p, o, _ in (ln.split(" ", 2) for ln in lines)) == sorted(
        (d["partition"], d["offset"]) for d in deliveries
    )
    # The worker committed what it processed, and its consumer left the group on close.
    committed, group_desc = anyio.run(_group_after_shutdown, kafka_broker, group)
    ends: dict[int, int] = {}
    for d in deliveries:
        ends[d["partition"]] = max(ends.get(d["partition"], 0), d["offset"] + 1)
    assert committed == ends
    assert group_desc.members == ()
