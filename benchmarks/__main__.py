"""Run every benchmark suite in one process tree and print their tables.

``python -m benchmarks`` (what ``make bench`` calls) runs them all; ``python -m benchmarks
records producer`` runs only the named ones; ``--broker apache`` runs the broker suites on
Apache Kafka instead of the embedded Tansu (``make bench BROKER=apache``; the Java client's
tools then join the tables). Each suite measures kafka_async beside its peers (aiokafka,
confluent-kafka, kafka-python, Java) in the same run and prints ratios, never absolute
pass/fail thresholds: speed targets are judged from these tables, not from timed tests.
"""

from __future__ import annotations

import importlib
import os
import platform
import sys
import time

SUITES = (
    "records",
    "producer",
    "consumer",
    "spark",
    "rebalance",
    "aiokafka_compat",
    "schema_registry",
)


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def main(argv: list[str]) -> int:
    if "--broker" in argv:
        at = argv.index("--broker")
        if at + 1 >= len(argv):
            print("--broker needs a value: tansu or apache", file=sys.stderr)
            return 2
        os.environ["BENCH_BROKER"] = argv[at + 1]
        argv = argv[:at] + argv[at + 2 :]
    chosen = argv or list(SUITES)
    unknown = [s for s in chosen if s not in SUITES]
    if unknown:
        print(f"unknown suite(s) {unknown}; choose from {list(SUITES)}", file=sys.stderr)
        return 2
    print(f"# kafka_async benchmarks — {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"# machine: {_machine()}; load average {os.getloadavg()[0]:.1f}")
    print(f"# broker: {os.environ.get('BENCH_BROKER', 'tansu')}\n")
    failed = 0
    for name in chosen:
        module = importlib.import_module(f"benchmarks.{name}")
        print(f"## {name}\n", flush=True)
        try:
            module.main()
        except Exception as exc:  # one failing suite must not hide the others' figures
            failed += 1
            print(f"suite {name} failed: {exc!r}", file=sys.stderr)
        print(flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
