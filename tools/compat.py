"""The version matrix: the broker tests against every Apache Kafka release we claim (issue 25).

For each release (and mode) of :data:`MATRIX` this runs the Apache tier's selection of tests
(``-m 'integration and not slow' --kafka-broker=apache``, as ``make test`` does) with
``KAFKA_ASYNC_APACHE_VERSION`` and ``KAFKA_ASYNC_APACHE_MODE`` set, without the tests that
start an embedded Tansu broker of their own (``--no-embedded-broker-tests``), reads pytest's
JUnit XML, prints a table (release, mode, passed, skipped, failed) and writes it, dated, to
``docs/compatibility.md`` with the skip reasons and the first failures of each release.
Rows of releases not run this time are kept as they were (with their own date).

    python tools/compat.py                                  # the whole matrix (hours)
    python tools/compat.py --releases 2.8.2 3.9.1 -- tests/producer/test_producer_integration.py

A full run takes hours on two cores; ``--releases`` and test paths after ``--`` run a part
(the table then names the paths it ran). ``make compat ARGS="..."`` passes ``ARGS`` here.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "compatibility.md"
README = ROOT / "README.md"
#: (release, mode) in the order they run: the oldest first.
MATRIX: list[tuple[str, str]] = [
    ("2.8.2", "zookeeper"),
    ("3.6.2", "zookeeper"),
    ("3.9.1", "kraft"),
    ("4.0.2", "kraft"),
    ("4.1.1", "kraft"),
    ("4.2.2", "kraft"),
    ("4.3.1", "kraft"),
    ("4.4.0", "kraft"),
]
_DATA = re.compile(r"<!-- compat-data (.*?) -->", re.S)
#: The README's supported-broker paragraph, between these markers, is :func:`summary`'s.
_SUMMARY = re.compile(r"(<!-- compat-summary: [^\n]*? -->\n)(.*?)(<!-- /compat-summary -->)", re.S)


@dataclass
class Row:
    """The outcome of one release's run."""

    release: str
    mode: str
    date: str
    passed: int = 0
    skipped: int = 0
    failed: int = 0
    errors: int = 0
    seconds: float = 0.0
    #: Test paths run, or empty for the whole selection.
    paths: list[str] = field(default_factory=list)
    #: Skip reason -> how many tests it skipped.
    skip_reasons: dict[str, int] = field(default_factory=dict)
    #: "test id: first line of the failure", the first few.
    failures: list[str] = field(default_factory=list)
    #: Set when pytest itself did not run (no report).
    note: str = ""


def parse_junit(path: Path, row: Row) -> None:
    """Count passed/skipped/failed/errors of a JUnit XML report into ``row``."""
    reasons: Counter[str] = Counter()
    for case in ET.parse(path).getroot().iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        skipped = case.find("skipped")
        failure = case.find("failure")
        error = case.find("error")
        if failure is not None or error is not None:
            bad = failure if failure is not None else error
            assert bad is not None
            if failure is not None:
                row.failed += 1
            else:
                row.errors += 1
            message = (bad.get("message") or bad.text or "").strip().splitlines()
            if len(row.failures) < 10:
                row.failures.append(f"{name}: {message[0][:200] if message else '?'}")
        elif skipped is not None:
            row.skipped += 1
            reason = (skipped.get("message") or "").strip()
            reasons[re.sub(r"\s+", " ", reason)[:160]] += 1
        else:
            row.passed += 1
    row.skip_reasons = dict(reasons.most_common(12))


def run_release(
    release: str, mode: str, paths: list[str], workers: int, timeout: float, python: str
) -> Row:
    """Run the broker tests against one release; the result as a :class:`Row`."""
    row = Row(release, mode, datetime.date.today().isoformat(), paths=list(paths))
    report = Path(tempfile.mkdtemp(prefix="compat-")) / f"junit-{release}.xml"
    argv = [
        python,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--kafka-broker=apache",
        "-m",
        "integration and not slow",
        # Tests that start an embedded Tansu broker of their own test Tansu, not this release.
        "--no-embedded-broker-tests",
        f"--junitxml={report}",
        "-o",
        "junit_logging=no",
    ]
    if workers > 1:
        argv += ["-n", str(workers), "--dist", "loadfile"]
    argv += paths
    env = {
        **os.environ,
        "KAFKA_ASYNC_APACHE_VERSION": release,
        "KAFKA_ASYNC_APACHE_MODE": mode,
    }
    print(f"== Apache Kafka {release} ({mode}): {' '.join(argv[1:])}", flush=True)
    start = time.monotonic()
    try:
        subprocess.run(argv, cwd=ROOT, env=env, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        row.note = f"did not finish within {timeout:.0f} s"
    row.seconds = round(time.monotonic() - start, 1)
    if report.exists():
        parse_junit(report, row)
    elif not row.note:
        row.note = "pytest wrote no report (it could not start: see its output)"
    shutil.rmtree(report.parent, ignore_errors=True)
    return row


def load_rows(doc: Path = DOC) -> dict[tuple[str, str], Row]:
    """The rows kept in ``doc`` (its data comment), by (release, mode)."""
    if not doc.exists():
        return {}
    match = _DATA.search(doc.read_text())
    if not match:
        return {}
    return {(r["release"], r["mode"]): Row(**r) for r in json.loads(match.group(1))}


def _version_key(row: Row) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", row.release)[:3])


def table(rows: list[Row]) -> str:
    """The Markdown table of ``rows``."""
    lines = [
        "| Release | Mode | Passed | Skipped | Failed | Run on | Tests run |",
        "| --- | --- | ---: | ---: | ---: | --- | --- |",
    ]
    for r in rows:
        what = f"{len(r.paths)} test paths (listed below)" if r.paths else "all broker tests"
        if r.note:
            what += f" ({r.note})"
        lines.append(
            f"| {r.release} | {r.mode} | {r.passed} | {r.skipped} | {r.failed + r.errors} "
            f"| {r.date} | {what} |"
        )
    return "\n".join(lines)


def render(rows: list[Row]) -> str:
    """The whole of ``docs/compatibility.md``."""
    rows = sorted(rows, key=_version_key)
    out = [
        "# Broker compatibility",
        "",
        "Which Apache Kafka releases kafka-async has been run against, and how the broker tests",
        "went on each. The table is written by `make compat` (`tools/compat.py`), which runs the",
        "Apache tier's tests (`-m 'integration and not slow'`) against each release fetched from",
        "Maven Central: ZooKeeper mode for 2.8 and 3.6, KRaft from 3.9 on. A feature a release",
        "lacks is skipped by what the broker advertises in ApiVersions, and the skip says what",
        "was missing. Each row is dated: a row is only as current as its date, and a row that",
        "ran only some test files names them. Tests that start an embedded Tansu broker of",
        "their own are left out (`--no-embedded-broker-tests`): whatever the release, they",
        "test Tansu. README.md's supported-broker paragraph is written from this table.",
        "",
        "CI (`make test`) runs the whole suite on the reference release (4.4.0, the newest) and",
        "the core broker tests (producer, consumer, admin, transactions, consumer groups) on",
        "2.8.2 in ZooKeeper mode, the oldest release here; the rest of the matrix runs here only.",
        "",
        table(rows),
        "",
    ]
    missing = [f"{v} ({m})" for v, m in MATRIX if not any(r.release == v for r in rows)]
    if missing:
        out += [f"Not run yet: {', '.join(missing)}.", ""]
    for r in rows:
        if not (r.skip_reasons or r.failures or r.paths):
            continue
        out += [f"## {r.release} ({r.mode}), {r.date}", ""]
        if r.paths:
            out += [f"Ran only (in {r.seconds:.0f} s): " + ", ".join(f"`{p}`" for p in r.paths), ""]
        if r.failures:
            out += ["Failures (the first ten):", ""]
            out += [f"- `{f.split(': ', 1)[0]}`: {_md(f.split(': ', 1)[-1])}" for f in r.failures]
            out.append("")
        if r.skip_reasons:
            out += ["Skip reasons (the most frequent):", ""]
            out += [
                f"- {n} x {_md(reason) or '(no reason given)'}"
                for reason, n in r.skip_reasons.items()
            ]
            out.append("")
    data = json.dumps([asdict(r) for r in rows], indent=1, sort_keys=True)
    out += [f"<!-- compat-data {data} -->", ""]
    return "\n".join(out)


def _minor(release: str) -> str:
    return ".".join(release.split(".")[:2])


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def summary(rows: list[Row]) -> str:
    """The README's paragraph on supported brokers, from the whole-tier rows of ``rows``
    (rows that ran only some test files do not count)."""
    ran = sorted((r for r in rows if not r.paths), key=_version_key)
    if not ran:
        return "`make compat` has not run the broker tests on any release yet.\n"
    by_mode: dict[str, list[str]] = {}
    for r in ran:
        by_mode.setdefault(r.mode, []).append(r.release)
    modes = _join(
        [
            f"{_join(v)} in {'ZooKeeper' if m == 'zookeeper' else 'KRaft'} mode"
            for m, v in by_mode.items()
        ]
    )
    dates = sorted({r.date for r in ran})
    when = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}"
    bad = [r for r in ran if r.failed + r.errors or not r.passed]
    if bad:
        outcome = (
            "tests failed on "
            + _join([f"{r.release} ({r.failed + r.errors})" for r in bad])
            + "; the table says which and why"
        )
    else:
        outcome = "no test failed"
    return (
        f"Apache Kafka {_minor(ran[0].release)} to {_minor(ran[-1].release)}. `make compat` "
        f"ran the broker tests against {modes} ({when}): {outcome}. On a release that lacks "
        "a feature (KIP-848 consumer groups, share groups, transactions version 2, ...), the "
        "tests of that feature are skipped by what the broker advertises. "
        "[Broker compatibility](docs/compatibility.md) has each release's counts and skip "
        "reasons.\n"
    )


def write_summary(rows: list[Row], readme: Path = README) -> bool:
    """Put :func:`summary` between the README's compat-summary markers; False if the README
    has no markers."""
    text = readme.read_text()
    if not _SUMMARY.search(text):
        return False
    para = summary(rows)
    readme.write_text(_SUMMARY.sub(lambda m: m.group(1) + para + m.group(3), text, count=1))
    return True


def readme_summary(readme: Path = README) -> str | None:
    """The paragraph now between the README's compat-summary markers, or None."""
    match = _SUMMARY.search(readme.read_text())
    return match.group(2) if match else None


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--releases",
        nargs="+",
        metavar="RELEASE[:MODE]",
        help="run only these releases (e.g. 2.8.2 3.6.2:zookeeper 3.9.1:kraft)",
    )
    parser.add_argument("--workers", type=int, default=2, help="pytest-xdist workers (default 2)")
    parser.add_argument(
        "--timeout", type=float, default=4 * 3600, help="seconds per release (default 4 h)"
    )
    parser.add_argument("--no-write", action="store_true", help="print only; leave the docs")
    parser.add_argument("paths", nargs="*", help="test paths (default: every broker test)")
    args = parser.parse_args(argv)
    matrix = MATRIX
    if args.releases:
        modes = dict(MATRIX)
        matrix = []
        for item in args.releases:
            release, _, mode = item.partition(":")
            matrix.append((release, mode or modes.get(release, "kraft")))
    rows = load_rows()
    for release, mode in matrix:
        row = run_release(release, mode, args.paths, args.workers, args.timeout, sys.executable)
        rows[(release, mode)] = row
        print(table([row]), flush=True)
        if not args.no_write:
            DOC.write_text(render(list(rows.values())))
            write_summary(list(rows.values()))
    print(table(sorted(rows.values(), key=_version_key)))
    if not args.no_write:
        print(f"wrote {DOC.relative_to(ROOT)} and the supported-broker paragraph of README.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
