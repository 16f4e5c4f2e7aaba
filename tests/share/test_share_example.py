"""examples/share_worker.py against a real broker: every job is acknowledged the way its
value asks (accepted, released then accepted on its second delivery, rejected once), and
SIGTERM stops the worker cleanly (exit status 0)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from kafka_async import Producer

pytestmark = [pytest.mark.integration, pytest.mark.requires_api("ShareGroupHeartbeat", 1)]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "share_worker.py"
LINE = re.compile(r"^(accepted|released|rejected) (\S+)/(\d+)/(\d+) delivery=(\d+) value=(.*)$")


def start_worker(bootstrap: str, topic: str, group: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            str(EXAMPLE),
            "--bootstrap-servers",
            bootstrap,
            "--topic",
            topic,
            "--group",
            group,
            "--from-beginning",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


@pytest.mark.anyio
async def test_share_worker_acknowledges_each_job_and_stops_on_sigterm(
    kafka_broker: str, new_topic: Callable[..., str]
) -> None:
    topic = new_topic(2)
    group = f"workers-{uuid.uuid4().hex[:8]}"
    values = [f"job-{i}" for i in range(10)] + ["poison-10", "flaky-11"]
    async with Producer(kafka_broker) as producer:
        for v in values:
            await producer.send(topic, v.encode())
    proc = start_worker(kafka_broker, topic, group)
    outcomes: list[tuple[str, str, int]] = []
    try:
        assert proc.stdout is not None
        with anyio.fail_after(60):
            while len(outcomes) < 13:  # 12 jobs, one of them released once
                line = await anyio.to_thread.run_sync(proc.stdout.readline)
                assert line, "the worker exited early"
                m = LINE.match(line.strip())
                if m:
                    outcomes.append((m.group(1), m.group(6), int(m.group(5))))
        proc.send_signal(signal.SIGTERM)
        started = time.monotonic()
        code = await anyio.to_thread.run_sync(proc.wait, 30)
        took = time.monotonic() - started
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 0
    assert took < 15
    accepted = sorted(v for what, v, _ in outcomes if what == "accepted")
    assert accepted == sorted(v for v in values if not v.startswith("poison"))
    assert [(w, d) for w, v, d in outcomes if v == "poison-10"] == [("rejected", 1)]
    assert [(w, d) for w, v, d in outcomes if v == "flaky-11"] == [("released", 1), ("accepted", 2)]
