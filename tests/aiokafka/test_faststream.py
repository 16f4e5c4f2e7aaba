"""FastStream 0.7.8 runs on kafka_async through ``kafka_async.aiokafka.install()``, against
Apache Kafka: a subscriber with a publisher, a batch subscriber with manual commits and a
subscriber with manual acknowledgement each process every message exactly once, and the
groups' committed offsets say so. Plain (``KafkaBroker``) and through FastStream's FastAPI
integration (``KafkaRouter`` lifespan).

The application (``faststream_app.py``) runs in a subprocess: install() must happen before
FastStream is imported, and this test process keeps the real aiokafka for the other tests.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_async import AdminClient

pytestmark = [pytest.mark.integration, pytest.mark.anyio, pytest.mark.timeout(150)]

pytest.importorskip("faststream.kafka")

APP = Path(__file__).with_name("faststream_app.py")
N = 40


def run_app(bootstrap: str, *extra: str) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, str(APP), bootstrap, str(N), *extra],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


async def committed_total(bootstrap: str, group: str) -> int:
    async with AdminClient(bootstrap) as admin:
        got = await admin.list_consumer_group_offsets(group)
    return sum(max(o.offset, 0) for o in got.values())


@pytest.mark.parametrize("mode", ["plain", "fastapi"])
async def test_faststream_app_exactly_once(kafka_broker: str, mode: str) -> None:
    seen = run_app(kafka_broker, *(["--fastapi"] if mode == "fastapi" else []))
    assert seen["consumer_class"] == "kafka_async.aiokafka.consumer"
    assert seen["producer_class"] == "kafka_async.aiokafka.producer"
    assert sorted(seen["in"]) == list(range(N))  # type: ignore[call-overload]
    assert sorted(seen["mid"]) == [2 * i for i in range(N)]  # type: ignore[call-overload]
    assert sorted(seen["out"]) == [2 * i + 1 for i in range(N)]  # type: ignore[call-overload]
    batches = seen["batches"]
    assert isinstance(batches, list)
    assert sum(batches) == N
    assert max(batches) <= 7  # max_records
    suffix = seen["suffix"]
    # Every message acknowledged: the groups committed past all of them (the topics have
    # one partition each, created by FastStream through the admin client).
    for stage in ("in", "mid", "out"):
        assert await committed_total(kafka_broker, f"g-{stage}-{suffix}") == N, stage
