"""Exponential backoff with jitter (pure).

The delay before attempt ``n`` (``n`` failures so far) is ``initial * multiplier**(n-1)``,
capped at ``maximum``, then spread by a random factor in ``[1 - jitter, 1 + jitter]`` and
capped again. The jitter keeps many clients that lost the same broker from reconnecting in
lock step. The random source is a parameter so tests can pin it.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import ConfigError


@dataclass(frozen=True, slots=True)
class ExponentialBackoff:
    """Delay policy in seconds; ``delay(0)`` is 0 (no failure yet, no wait)."""

    initial: float
    maximum: float
    multiplier: float = 2.0
    jitter: float = 0.2

    def __post_init__(self) -> None:
        if self.initial < 0 or self.maximum < self.initial:
            raise ConfigError(
                f"backoff: need 0 <= initial <= maximum, got {self.initial}, {self.maximum}"
            )
        if self.multiplier < 1:
            raise ConfigError(f"backoff: multiplier must be >= 1, got {self.multiplier}")
        if not 0 <= self.jitter <= 1:
            raise ConfigError(f"backoff: jitter must be within [0, 1], got {self.jitter}")

    @classmethod
    def from_ms(cls, initial_ms: int, maximum_ms: int, **kw: float) -> ExponentialBackoff:
        """Build from millisecond settings such as ``reconnect_backoff_ms``."""
        return cls(initial_ms / 1000.0, maximum_ms / 1000.0, **kw)

    def base(self, failures: int) -> float:
        """The delay before jitter after ``failures`` consecutive failures."""
        if failures <= 0:
            return 0.0
        # Cap the exponent so huge failure counts never overflow the float.
        exponent = min(failures - 1, 64)
        return float(min(self.maximum, self.initial * self.multiplier**exponent))

    def bounds(self, failures: int) -> tuple[float, float]:
        """The interval ``delay(failures)`` always falls in."""
        b = self.base(failures)
        return b * (1 - self.jitter), min(self.maximum, b * (1 + self.jitter))

    def delay(self, failures: int, rand: Callable[[], float] = random.random) -> float:
        """A jittered delay for the given number of consecutive failures."""
        b = self.base(failures)
        if b == 0.0:
            return 0.0
        factor = 1 - self.jitter + 2 * self.jitter * rand()
        return min(self.maximum, b * factor)


@dataclass(slots=True)
class BackoffState:
    """Failure count and earliest next attempt for one target (a broker, a lookup)."""

    failures: int = 0
    next_attempt_at: float = 0.0

    def record_failure(
        self,
        policy: ExponentialBackoff,
        now: float,
        rand: Callable[[], float] = random.random,
    ) -> float:
        """Count a failure; return the delay until the next attempt may start."""
        self.failures += 1
        wait = policy.delay(self.failures, rand)
        self.next_attempt_at = now + wait
        return wait

    def record_success(self) -> None:
        self.failures = 0
        self.next_attempt_at = 0.0

    def remaining(self, now: float) -> float:
        """Seconds to wait before the next attempt (0 when one may start now)."""
        return max(0.0, self.next_attempt_at - now)
