"""Run the unit tier on every CPython this machine has, one virtual environment per version.

``make test`` calls this before the full suite, which runs on the default interpreter
(``.venv``). It looks for interpreters named ``python3.N`` (N >= 10) on ``PATH`` and in
pyenv's versions folder (``$PYENV_ROOT`` or ``~/.pyenv``), takes the newest patch release
of each minor version, and runs ``pytest -m 'not integration and not slow'`` in
``.venv-py3N`` (an editable install with the ``dev`` extra, redone when pyproject.toml,
setup.py or the C accelerator change). It never downloads an interpreter: a version we
promise (a ``Programming Language :: Python :: 3.N`` classifier in pyproject.toml) that the
machine lacks is named in one line and skipped. The exit status is non-zero when any version
that ran failed.

Usage: ``python tools/pymatrix.py [--skip-current] [--skip 3.11] [--only 3.13] [-- pytest args]``
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UNIT_MARKERS = "not integration and not slow"
#: Files whose change means a matrix venv must be reinstalled.
INSTALL_INPUTS = (
    "pyproject.toml",
    "setup.py",
    "kafka_async/records/_speedups.c",
    "kafka_async/records/_speedups.h",
    "kafka_async/producer/_fastpath.c",
)
#: Deadline for one version's venv install and for one version's unit tier (seconds).
INSTALL_TIMEOUT = 1200.0
TIER_TIMEOUT = 1200.0

_CLASSIFIER = re.compile(r'"Programming Language :: Python :: 3\.(\d+)"')
_NAME = re.compile(r"^python3\.(\d+)$")


@dataclass(frozen=True)
class Interpreter:
    """A CPython found on this machine."""

    path: Path
    version: tuple[int, int, int]

    @property
    def minor(self) -> str:
        """``"3.N"``."""
        return f"{self.version[0]}.{self.version[1]}"

    @property
    def full(self) -> str:
        return ".".join(map(str, self.version))


def promised_versions(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """``["3.10", ...]``: the minor versions the package's classifiers name."""
    found = {int(m) for m in _CLASSIFIER.findall(pyproject.read_text())}
    return [f"3.{m}" for m in sorted(found)]


def _candidate_paths() -> Iterable[Path]:
    """Executables named python3.N on PATH and in pyenv's versions folder.

    pyenv's shims folder is skipped: a shim only works for the versions pyenv has selected,
    and the real interpreters behind it are found in the versions folder anyway.
    """
    pyenv_root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    dirs = [Path(p) for p in os.environ.get("PATH", "").split(os.pathsep) if p]
    dirs = [d for d in dirs if d.resolve() != (pyenv_root / "shims").resolve()]
    dirs += sorted((pyenv_root / "versions").glob("*/bin"))
    for d in dirs:
        try:
            entries = sorted(d.iterdir())
        except OSError:
            continue
        for entry in entries:
            if _NAME.match(entry.name) and os.access(entry, os.X_OK) and entry.is_file():
                yield entry


def _probe(path: Path) -> tuple[int, int, int] | None:
    """The interpreter's version when it is a working CPython, else None."""
    code = (
        "import sys; print(sys.implementation.name, *sys.version_info[:3]);"
        "import venv, ssl, ensurepip"
    )
    try:
        done = subprocess.run(
            [str(path), "-c", code], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    fields = done.stdout.split()
    if done.returncode != 0 or len(fields) != 4 or fields[0] != "cpython":
        return None
    return (int(fields[1]), int(fields[2]), int(fields[3]))


def find_interpreters(oldest: int = 10) -> dict[str, Interpreter]:
    """The newest working CPython of each minor version from ``3.<oldest>`` up found here."""
    best: dict[str, Interpreter] = {}
    seen: set[Path] = set()
    for path in _candidate_paths():
        real = path.resolve()
        if real in seen:
            continue
        seen.add(real)
        version = _probe(path)
        if version is None:
            continue
        found = Interpreter(path, version)
        if version[1] >= oldest and (
            found.minor not in best or version > best[found.minor].version
        ):
            best[found.minor] = found
    return best


def venv_dir(minor: str) -> Path:
    """``.venv-py3N`` in the source tree (gitignored)."""
    return ROOT / f".venv-py{minor.replace('.', '')}"


def _inputs_digest() -> str:
    h = hashlib.sha256()
    for name in INSTALL_INPUTS:
        h.update(name.encode() + b"\0" + (ROOT / name).read_bytes())
    return h.hexdigest()


def _run(argv: Sequence[str], *, timeout: float, log: Path) -> None:
    """Run an install step with its output appended to ``log``."""
    with log.open("a") as out:
        out.write(f"$ {' '.join(argv)}\n")
        out.flush()
        subprocess.run(
            list(argv), cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, check=True, timeout=timeout
        )


def ensure_venv(interp: Interpreter) -> Path:
    """``.venv-py3N`` with the package installed editable with ``dev``; its python."""
    venv = venv_dir(interp.minor)
    python = venv / "bin" / "python"
    stamp = venv / ".installed"
    log = venv / "install.log"
    digest = _inputs_digest()
    if stamp.is_file() and stamp.read_text().strip() == f"{interp.full} {digest}":
        return python
    if venv.exists():
        shutil.rmtree(venv)
    venv.mkdir()
    print(f"pymatrix: Python {interp.full}: installing .[dev] into {venv.name}", flush=True)
    _run([str(interp.path), "-m", "venv", str(venv)], timeout=120, log=log)
    _run([str(python), "-m", "pip", "install", "-q", "--upgrade", "pip"], timeout=300, log=log)
    _run(
        [str(python), "-m", "pip", "install", "-q", "-e", ".[dev]"],
        timeout=INSTALL_TIMEOUT,
        log=log,
    )
    stamp.write_text(f"{interp.full} {digest}\n")
    return python


@dataclass
class Outcome:
    minor: str
    line: str
    ok: bool


@dataclass
class Installed:
    """The result of :func:`install`: the venv's python, or why it could not be made."""

    interp: Interpreter
    python: Path | None
    error: str
    seconds: float


def install(interp: Interpreter) -> Installed:
    """Make (when needed) the venv of one interpreter; never raises for an install failure."""
    started = time.monotonic()
    try:
        python = ensure_venv(interp)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        log = venv_dir(interp.minor) / "install.log"
        return Installed(interp, None, f"{exc}; see {log}", time.monotonic() - started)
    return Installed(interp, python, "", time.monotonic() - started)


def install_all(interps: Sequence[Interpreter]) -> list[Installed]:
    """Make the venvs of several interpreters at the same time.

    An install mostly waits on downloads and unpacking, so the venvs are made concurrently
    (about the time of the slowest one instead of their sum); the unit tiers, which are
    CPU-bound, then run one after another.
    """
    if not interps:
        return []
    with ThreadPoolExecutor(max_workers=len(interps)) as pool:
        return list(pool.map(install, interps))


def run_tier(installed: Installed, pytest_args: Sequence[str]) -> Outcome:
    """Run the unit tier on one interpreter whose venv :func:`install` made."""
    interp = installed.interp
    python = installed.python
    if python is None:
        return Outcome(interp.minor, f"{interp.full}: install failed ({installed.error})", False)
    installed_at = time.monotonic()
    argv = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", UNIT_MARKERS]
    # The unit tier is CPU-bound and its tests are independent: one worker per core
    # (pytest-xdist, in the dev extra).
    argv += ["-n", str(min(os.cpu_count() or 1, 4))]
    print(f"pymatrix: Python {interp.full} ({interp.path}): {' '.join(argv[1:])}", flush=True)
    try:
        done = subprocess.run([*argv, *pytest_args], cwd=ROOT, timeout=TIER_TIMEOUT, check=False)
        code: int | str = done.returncode
    except subprocess.TimeoutExpired:
        code = f"timed out after {TIER_TIMEOUT:.0f} s"
    finished = time.monotonic()
    ok = code == 0
    line = (
        f"{interp.full}: unit tier {'passed' if ok else f'FAILED (pytest exit {code})'} "
        f"in {finished - installed_at:.0f} s (venv ready in {installed.seconds:.0f} s, "
        "made beside the others)"
    )
    return Outcome(interp.minor, line, ok)


def _minor_key(version: str) -> int:
    return int(version.split(".")[1])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        metavar="3.N",
        help="a version not to run here (the default one, whose full suite runs anyway)",
    )
    parser.add_argument(
        "--skip-current",
        action="store_true",
        help="skip the version running this script (make test runs the full suite on it)",
    )
    parser.add_argument("--only", action="append", default=[], metavar="3.N")
    parser.add_argument(
        "--ends",
        action="store_true",
        help="only the oldest and the newest promised version (CI: the versions between "
        "them add no coverage of their own to the unit tier; `make pymatrix-all` runs all)",
    )
    parser.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    args = parser.parse_args(argv)
    if args.skip_current:
        args.skip.append(f"{sys.version_info[0]}.{sys.version_info[1]}")

    promised = promised_versions()
    found = find_interpreters()
    wanted = sorted(set(promised) | set(found), key=lambda v: int(v.split(".")[1]))
    if args.only:
        wanted = [v for v in wanted if v in args.only]
    if args.ends and promised:
        ends = {min(promised, key=_minor_key), max(promised, key=_minor_key)}
        for minor in wanted:
            if minor not in ends and minor not in args.skip:
                print(f"pymatrix: Python {minor}: between the oldest and newest, not run (--ends)")
        wanted = [v for v in wanted if v in ends or v in args.skip]
    outcomes: list[Outcome] = []
    missing: list[str] = []
    to_run: list[Interpreter] = []
    for minor in wanted:
        if minor in args.skip:
            print(f"pymatrix: Python {minor}: skipped here (the full suite runs on it)")
            continue
        interp = found.get(minor)
        if interp is None:
            missing.append(minor)
            print(
                f"pymatrix: Python {minor}: NOT FOUND on this machine "
                "(no python" + minor + " on PATH or in pyenv); its unit tier did not run"
            )
            continue
        if minor not in promised:
            print(f"pymatrix: Python {minor}: found, not yet in the classifiers; running it")
        to_run.append(interp)
    for installed in install_all(to_run):
        outcomes.append(run_tier(installed, args.pytest_args))

    print("pymatrix summary:")
    for outcome in outcomes:
        print(f"  {outcome.line}")
    for minor in missing:
        print(f"  {minor}: not on this machine, not tested")
    return 0 if all(o.ok for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
