"""What the benchmark suites share: the broker they run on, rounds and medians, tables.

Broker: ``--broker tansu`` (default; the embedded Tansu of ``kafka_async.testing``),
``--broker apache`` (a one-node Apache Kafka 4.x from ``kafka_async.testing.apache``, which
also gives the Java client's performance tools), or ``$KAFKA_BOOTSTRAP_SERVERS`` (a broker
already running; named "external"). ``$BENCH_BROKER`` sets the default.

Every client runs in a subprocess of its own, so its CPU time and peak RSS are its own; each
suite runs every client once per round, rounds interleaved (a change in the machine's load
then touches every client alike), and reports the median and the range over rounds.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

BROKERS = ("tansu", "apache")


@dataclass
class Broker:
    """A running broker for a suite: where it listens and what it is."""

    kind: str
    bootstrap: str
    description: str
    #: The Apache Kafka distribution (its jars run the Java client's tools), else None.
    distribution: Any = None


@contextlib.contextmanager
def broker(kind: str | None = None) -> Iterator[Broker]:
    """Start the broker named by ``kind`` (or ``$BENCH_BROKER``), or use the external one."""
    external = os.environ.get("KAFKA_BOOTSTRAP_SERVERS", "").strip()
    if external:
        yield Broker("external", external, f"external broker at {external}")
        return
    kind = kind or os.environ.get("BENCH_BROKER", "tansu")
    if kind == "apache":
        from kafka_async.testing.apache import ApacheKafka, ensure_distribution

        dist = ensure_distribution()
        with ApacheKafka() as kafka:
            yield Broker(
                "apache",
                kafka.bootstrap_servers,
                f"Apache Kafka {dist.version} (one KRaft node, same machine)",
                dist,
            )
        return
    if kind != "tansu":
        raise SystemExit(f"unknown broker {kind!r}; choose from {', '.join(BROKERS)}")
    from kafka_async.testing import EmbeddedBroker

    tansu = EmbeddedBroker()
    tansu.start()
    try:
        yield Broker("tansu", tansu.bootstrap_servers, "Tansu (embedded, memory storage)")
    finally:
        tansu.stop()


def run_json_child(cmd: Sequence[str], timeout: float = 1800) -> dict[str, Any]:
    """Run a child that prints one JSON object as its last ``{``-line; return it."""
    import json

    proc = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout, check=False)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"exit {proc.returncode}: {proc.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def load_average() -> str:
    """The 1-minute load average (the machine is shared; say how busy it was)."""
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:
        return "?"


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def spread(values: Sequence[float], fmt: str = "{:,.0f}") -> str:
    """``median (min-max)`` of one figure over rounds; just the value for one round."""
    if not values:
        return "-"
    if len(values) == 1:
        return fmt.format(values[0])
    return f"{fmt.format(median(values))} ({fmt.format(min(values))}-{fmt.format(max(values))})"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], markdown: bool) -> str:
    """Rows under headers, as Markdown or as aligned plain text."""
    if markdown:
        out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(out)
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*headers), *(fmt.format(*r) for r in rows)])


def python_child(module: str, *args: str) -> list[str]:
    """The command line that runs ``python -m module args`` with this interpreter."""
    return [sys.executable, "-m", module, *args]
