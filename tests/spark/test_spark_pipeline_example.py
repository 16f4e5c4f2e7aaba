"""examples/spark_pipeline.py runs end to end on small data."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "spark_pipeline.py"


def _load_example() -> Any:
    spec = importlib.util.spec_from_file_location("spark_pipeline_example", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow  # a shuffle, a write and two reads: about 30 s on a 2-core machine
def test_spark_pipeline_example(spark: Any, kafka_broker: str, new_topic: Any) -> None:
    example = _load_example()
    topic = new_topic(3, prefix="demo")
    n = 2_000
    anyio.run(example.seed, kafka_broker, topic, n, 3)
    summary = example.run(spark, kafka_broker, topic, f"{topic}-stats", "1 second")
    assert summary.records_in == n
    assert summary.total_count == n
    assert summary.total_amount == sum(seq % 997 for seq in range(n))
    assert summary.keys == 100
    assert summary.windows >= 1
    assert summary.results_out >= summary.keys
