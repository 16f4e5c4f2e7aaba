"""Exponential backoff with jitter: growth, cap and jitter bounds."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_async.errors import ConfigError
from kafka_async.net.backoff import BackoffState, ExponentialBackoff


def test_base_grows_exponentially_then_caps() -> None:
    b = ExponentialBackoff.from_ms(50, 1000)
    assert [b.base(n) for n in range(7)] == [0.0, 0.05, 0.1, 0.2, 0.4, 0.8, 1.0]
    assert b.base(10_000) == 1.0  # no overflow for huge failure counts


def test_jitter_extremes() -> None:
    b = ExponentialBackoff(0.1, 10.0, jitter=0.2)
    assert b.delay(1, rand=lambda: 0.0) == pytest.approx(0.08)
    assert b.delay(1, rand=lambda: 1.0) == pytest.approx(0.12)
    assert b.delay(0, rand=lambda: 1.0) == 0.0
    # Jitter never pushes past the cap.
    assert b.delay(100, rand=lambda: 1.0) == 10.0


@given(
    failures=st.integers(min_value=1, max_value=200),
    r=st.floats(min_value=0.0, max_value=1.0),
    jitter=st.floats(min_value=0.0, max_value=1.0),
)
def test_delay_always_within_bounds(failures: int, r: float, jitter: float) -> None:
    b = ExponentialBackoff(0.05, 1.0, jitter=jitter)
    lo, hi = b.bounds(failures)
    d = b.delay(failures, rand=lambda: r)
    assert lo - 1e-12 <= d <= hi + 1e-12
    assert d <= 1.0


def test_jitter_spreads_delays() -> None:
    b = ExponentialBackoff(1.0, 100.0, jitter=0.2)
    rng = random.Random(7)
    delays = {round(b.delay(3, rng.random), 6) for _ in range(50)}
    assert len(delays) > 40
    assert all(3.2 <= d <= 4.8 for d in delays)


def test_state_records_failures_and_resets() -> None:
    policy = ExponentialBackoff(0.1, 1.0, jitter=0.0)
    s = BackoffState()
    assert s.remaining(now=5.0) == 0.0
    assert s.record_failure(policy, now=10.0) == pytest.approx(0.1)
    assert s.record_failure(policy, now=10.0) == pytest.approx(0.2)
    assert s.remaining(now=10.05) == pytest.approx(0.15)
    assert s.remaining(now=11.0) == 0.0
    s.record_success()
    assert s.failures == 0
    assert s.remaining(now=10.0) == 0.0


@pytest.mark.parametrize(
    "kwargs",
    [
        {"initial": -1, "maximum": 1},
        {"initial": 2, "maximum": 1},
        {"initial": 1, "maximum": 2, "multiplier": 0.5},
        {"initial": 1, "maximum": 2, "jitter": 1.5},
    ],
)
def test_bad_policies_rejected(kwargs: dict[str, float]) -> None:
    with pytest.raises(ConfigError, match="backoff"):
        ExponentialBackoff(**kwargs)
