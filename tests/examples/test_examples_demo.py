"""`make demo` runs examples/demo.py; this runs it small, end to end, against the test broker."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo.py"


@pytest.mark.integration
def test_demo_produces_and_consumes_every_record_exactly_once(kafka_broker: str) -> None:
    topic = f"demo-{uuid.uuid4().hex[:8]}"
    proc = subprocess.run(
        [
            sys.executable,
            str(DEMO),
            "--records",
            "5000",
            "--topic",
            topic,
            "--bootstrap-servers",
            kafka_broker,
            "--timeout",
            "120",
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "produced 5,000 records" in proc.stdout
    assert "every record exactly once" in proc.stdout
