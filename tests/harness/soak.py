"""The reliability soak: run the reliability scenarios and print one table of results.

Scenario tests call :func:`record_result` with what they measured; when the environment
variable ``KAFKA_ASYNC_SOAK_RESULTS`` names a file, each result is appended to it as one JSON
line (otherwise results are only kept in memory, for the test's own assertions). The runner::

    python -m tests.harness.soak            # full tier: pytest -m slow + quick tier
    python -m tests.harness.soak --quick    # only the quick tier
    python -m tests.harness.soak --print FILE   # re-print a results file

runs pytest on ``tests/reliability``, ``tests/cluster_apache`` (failover on a three-node
Apache Kafka cluster, ours and the Java client side by side), the FastAPI guide's stop test
(with its naive control worker) and the Spark exactly-once sink's failure matrix (every
failure point at the first and a later batch, and Spark's own Kafka sink on a killed worker
for comparison) and a transactional producer across producer-epoch exhaustion (transactions
version 2 hands out a new producer id after 32,767 transactions) with that variable set, then
prints the table
(scenario, runs, records, lost, duplicated, reordered, max recovery time, memory growth,
verdict) and, with ``--markdown FILE``, writes it as a Markdown table with the date and the
machine, for ``RELIABILITY.md``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

__all__ = ["ENV_VAR", "ScenarioResult", "format_markdown", "format_table", "main", "record_result"]

#: Names the JSON-lines file results are appended to.
ENV_VAR = "KAFKA_ASYNC_SOAK_RESULTS"

#: Results recorded in this process (newest last).
RESULTS: list[ScenarioResult] = []


@dataclass
class ScenarioResult:
    """One scenario's measured outcome.

    ``verdict`` is ``"pass"``, ``"FAIL"``, or ``"broker gap"`` (the same scenario fails with
    a peer client too; ``evidence`` then says how).
    """

    scenario: str
    runs: int = 1
    records: int = 0
    lost: int = 0
    duplicated: int = 0
    reordered: int = 0
    max_recovery_s: float | None = None
    memory_growth_mb: float | None = None
    verdict: str = "pass"
    evidence: str = ""
    extra: dict[str, object] = field(default_factory=dict)


def record_result(
    scenario: str,
    *,
    runs: int = 1,
    records: int = 0,
    lost: int = 0,
    duplicated: int = 0,
    reordered: int = 0,
    max_recovery_s: float | None = None,
    memory_growth_mb: float | None = None,
    ok: bool = True,
    verdict: str | None = None,
    evidence: str = "",
    **extra: object,
) -> ScenarioResult:
    """Record one scenario's figures (kept in :data:`RESULTS`, appended to the results file)."""
    result = ScenarioResult(
        scenario=scenario,
        runs=runs,
        records=records,
        lost=lost,
        duplicated=duplicated,
        reordered=reordered,
        max_recovery_s=max_recovery_s,
        memory_growth_mb=memory_growth_mb,
        verdict=verdict or ("pass" if ok else "FAIL"),
        evidence=evidence,
        extra=dict(extra),
    )
    RESULTS.append(result)
    path = os.environ.get(ENV_VAR)
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(asdict(result), default=str) + "\n")
    return result


def load_results(path: str | Path) -> list[ScenarioResult]:
    """Results from a JSON-lines file written by :func:`record_result`."""
    out: list[ScenarioResult] = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            out.append(ScenarioResult(**json.loads(line)))
    return out


_COLUMNS = (
    "scenario",
    "runs",
    "records",
    "lost",
    "dup",
    "reord",
    "max recovery",
    "mem growth",
    "result",
)


def _row(r: ScenarioResult) -> list[str]:
    return [
        r.scenario,
        str(r.runs),
        str(r.records) if r.records else "-",
        str(r.lost),
        str(r.duplicated),
        str(r.reordered),
        f"{r.max_recovery_s:.2f} s" if r.max_recovery_s is not None else "-",
        f"{r.memory_growth_mb:.1f} MB" if r.memory_growth_mb is not None else "-",
        r.verdict,
    ]


def format_table(results: Iterable[ScenarioResult]) -> str:
    """A plain-text table, one row per result, then the evidence of broker gaps/failures."""
    rows = [list(_COLUMNS)] + [_row(r) for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_COLUMNS))]
    lines = []
    for n, row in enumerate(rows):
        cells = [
            cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(row)
        ]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    notes = [f"* {r.scenario}: {r.evidence}" for r in results if r.evidence]
    if notes:
        lines.append("")
        lines.extend(notes)
    return "\n".join(lines)


def machine_description() -> str:
    """CPU model, core count, memory and OS, for the report header."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f", {int(line.split()[1]) // 1024 // 1024} GiB RAM"
                break
    except (OSError, ValueError):
        pass
    return (
        f"{cpu}, {os.cpu_count()} cores{mem}, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}"
    )


def format_markdown(results: Sequence[ScenarioResult], *, title: str = "") -> str:
    """The table as Markdown, headed by the date and the machine."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = []
    if title:
        out.append(title)
        out.append("")
    out.append(f"Run {now} on {machine_description()}.")
    out.append("")
    out.append("| " + " | ".join(_COLUMNS) + " |")
    out.append("|" + "|".join("---" for _ in _COLUMNS) + "|")
    for r in results:
        out.append("| " + " | ".join(_row(r)) + " |")
    notes = [f"* **{r.scenario}**: {r.evidence}" for r in results if r.evidence]
    if notes:
        out.append("")
        out.extend(notes)
    return "\n".join(out) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the reliability tests and print the table; returns pytest's exit status."""
    parser = argparse.ArgumentParser(prog="python -m tests.harness.soak")
    parser.add_argument("--quick", action="store_true", help="only the quick tier")
    parser.add_argument("--print", dest="print_file", help="print an existing results file")
    parser.add_argument("--markdown", help="also write the table as Markdown to this file")
    parser.add_argument(
        "--tests",
        nargs="+",
        default=[
            "tests/reliability",
            "tests/cluster_apache",
            "tests/docs/test_guide_fastapi_shutdown.py",
            "tests/security/test_sasl_gssapi.py",
            "tests/security/test_sasl_oidc.py",
            "tests/spark/test_spark_exactly_once.py",
            "tests/producer/test_transactions_epoch_exhaustion.py",
        ],
        help="where the scenarios are (default: the reliability and three-node cluster "
        "suites, the FastAPI guide's stop test with its naive control, Kerberos renewals, "
        "OIDC token refreshes, the Spark exactly-once sink's failure matrix and a "
        "transactional producer across producer-epoch exhaustion)",
    )
    parser.add_argument("pytest_args", nargs="*", help="extra pytest arguments")
    args = parser.parse_args(argv)
    status = 0
    if args.print_file:
        results = load_results(args.print_file)
    else:
        fd, path = tempfile.mkstemp(prefix="soak-", suffix=".jsonl")
        os.close(fd)
        marker = "not slow" if args.quick else "slow or not slow"
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-m",
            marker,
            *args.tests,
            *args.pytest_args,
        ]
        status = subprocess.call(cmd, env={**os.environ, ENV_VAR: path})
        results = load_results(path)
        print(f"\nresults file: {path}")
    print()
    print(format_table(results))
    if args.markdown:
        Path(args.markdown).write_text(format_markdown(results), encoding="utf-8")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
