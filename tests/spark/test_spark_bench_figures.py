"""The Spark benchmark's arithmetic (``benchmarks/spark.py``): the figures it derives from
Spark's progress reports, which its verdicts and the docs' tables rest on."""

from __future__ import annotations

from typing import Any

from benchmarks.spark import _break_even, _outside


def _run(outside: float, per_batch: float) -> dict[str, Any]:
    return {"phases_warm": {"outsideBatches": outside, "triggerExecution": per_batch}}


def test_outside_splits_a_query_into_its_batches_and_the_rest() -> None:
    progress = [
        {"timestamp": "2026-01-01T00:00:01.000Z", "durationMs": {"triggerExecution": 500}},
        {"timestamp": "2026-01-01T00:00:01.500Z", "durationMs": {"triggerExecution": 300}},
    ]
    start = 1767225600.0  # 2026-01-01T00:00:00Z
    got = _outside(progress, start, start + 2.0)
    assert got["insideBatches"] == 800
    assert round(got["startToFirstBatch"]) == 1000
    assert round(got["lastBatchToEnd"]) == 200
    assert round(got["outsideBatches"]) == 1200


def test_break_even_from_start_up_and_per_batch_time() -> None:
    # Ours: 1,800 ms outside, 600 ms per batch; theirs: 200 ms and 800 ms -> 8 batches.
    crun = {"kafka_async": [_run(1800, 600)], "spark": [_run(200, 800)]}
    assert "from 8.0 micro-batches" in _break_even(crun)
    slower = {"kafka_async": [_run(1800, 900)], "spark": [_run(200, 800)]}
    assert "never catches up" in _break_even(slower)
    quicker = {"kafka_async": [_run(100, 900)], "spark": [_run(200, 800)]}
    assert "at any length" in _break_even(quicker)
    assert _break_even({"kafka_async": [_run(1, 1)]}) == ""
