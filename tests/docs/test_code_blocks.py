"""Every code block of README.md and docs/**/*.md runs, against the run's real broker.

The rule (CONTRIBUTING.md, "The documentation"):

* a ```python block is a complete program: it runs alone in a subprocess (this interpreter,
  a fresh temporary directory as cwd, a 90 s deadline) with every ``localhost:9092`` replaced
  by the run's bootstrap address and ``KAFKA_BOOTSTRAP_SERVERS`` set to it, and exits 0;
* in a ```bash / ```console / ```shell block, each line starting with ``kafka-async ``
  (other than ``kafka-async broker``) runs the same way and exits 0, or ``N`` when the line
  ends with ``# exits N``; a ```bash block with other commands needs a not-run comment;
* ``<!-- not-run: reason -->`` on the line before a fence: the block is reported as a skip
  with its reason;
* ``<!-- requires-api: ListGroups v5, ... -->`` on the line before a fence: the block runs
  only where the run's broker advertises each API (at the version given, v0 when none) in
  ApiVersions, and is reported as a skip naming what the broker lacks elsewhere (an older
  release of the version matrix);
* ``<!-- pytest-file -->`` on the line before a ```python fence: the block is a test file,
  run by pytest with the kafka_async plugin (``-p kafka_async.testing.plugin``: the plugin is
  opt-in, as for users) against the run's broker, and must pass (the child run gets the
  broker through ``KAFKA_BOOTSTRAP_SERVERS``, which the plugin's ``kafka_broker`` uses as an
  external broker).

Each block is one test, named after its file and the line of its opening fence
(``README.md:L29``), so a failure points at the block.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
PLACEHOLDER = "localhost:9092"
PROGRAM_DEADLINE = 90.0
PYTEST_DEADLINE = 180.0
#: Blocks run side by side (2 cores here; most of a block's time is waiting on the broker).
CONCURRENCY = 4
README_MAX_LINES = 260
README_FIRST_SCREEN = 60

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})\s*(?P<lang>[\w+-]*)")
_NOT_RUN = re.compile(r"^\s*<!--\s*not-run:\s*(?P<reason>.*?)\s*-->\s*$")
_PYTEST_FILE = re.compile(r"^\s*<!--\s*pytest-file\s*-->\s*$")
_REQUIRES = re.compile(r"^\s*<!--\s*requires-api:\s*(?P<apis>.*?)\s*-->\s*$")
_API = re.compile(r"^(?P<name>[A-Za-z]+)(?:\s+v(?P<version>\d+))?$")
_EXITS = re.compile(r"#\s*exits\s+(?P<code>\d+)\s*$")
_SHELL_LANGS = {"bash", "sh", "shell", "console"}


@dataclass(frozen=True)
class Block:
    """One fenced code block of a Markdown file."""

    path: Path
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    not_run: str | None  # the reason, when the block carries a not-run comment
    pytest_file: bool
    #: (API name, minimum version) the block needs the broker to advertise (requires-api).
    requires: tuple[tuple[str, int], ...] = ()

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT).as_posix()}:L{self.line}"


def markdown_files() -> list[Path]:
    """README.md and every page of docs/, in a stable order."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def parse_blocks(path: Path) -> list[Block]:
    """The fenced blocks of one Markdown file (indented fences in lists included)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        indent, fence, lang = m["indent"], m["fence"], m["lang"].lower()
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines):
            stripped = lines[i].strip()
            if stripped.startswith(fence) and stripped.strip(fence[0]) == "":
                break
            line = lines[i]
            body.append(line[len(indent) :] if line.startswith(indent) else line.lstrip())
            i += 1
        i += 1  # past the closing fence
        before = lines[start - 1] if start > 0 else ""
        not_run = _NOT_RUN.match(before)
        requires = _REQUIRES.match(before)
        blocks.append(
            Block(
                path=path,
                line=start + 1,
                lang=lang,
                text="\n".join(body) + "\n",
                not_run=not_run["reason"] if not_run else None,
                pytest_file=_PYTEST_FILE.match(before) is not None,
                requires=_parse_requires(requires["apis"]) if requires else (),
            )
        )
    return blocks


def _parse_requires(text: str) -> tuple[tuple[str, int], ...]:
    """``"ListGroups v5, DescribeFeatures"`` -> ``(("ListGroups", 5), ("DescribeFeatures", 0))``."""
    out = []
    for part in text.split(","):
        m = _API.match(part.strip())
        if m is None:
            raise ValueError(f"requires-api: cannot read {part.strip()!r} (e.g. 'ListGroups v5')")
        out.append((m["name"], int(m["version"] or 0)))
    return tuple(out)


def runnable_blocks() -> list[Block]:
    """Every python and shell block of the documentation."""
    return [
        b
        for path in markdown_files()
        for b in parse_blocks(path)
        if b.lang in ("python", "py") or b.lang in _SHELL_LANGS
    ]


def cli_lines(block: Block) -> list[tuple[str, int]]:
    """The ``kafka-async`` command lines of a shell block, each with its expected exit code."""
    out: list[tuple[str, int]] = []
    for raw in block.text.splitlines():
        line = raw.strip()
        if line.startswith("$ "):
            line = line[2:]
        if not line.startswith("kafka-async ") or line.startswith("kafka-async broker"):
            continue
        m = _EXITS.search(line)
        out.append((line, int(m["code"]) if m else 0))
    return out


def other_commands(block: Block) -> list[str]:
    """Lines of a ```bash block that are neither ``kafka-async`` commands nor comments."""
    rest = []
    for raw in block.text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", "kafka-async ")):
            continue
        rest.append(line)
    return rest


def _env(bootstrap: str) -> dict[str, str]:
    env = dict(os.environ)
    env["KAFKA_BOOTSTRAP_SERVERS"] = bootstrap
    # The `kafka-async` command of this interpreter's environment comes first.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.pop("PYTEST_ADDOPTS", None)
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


@dataclass
class Step:
    """One command of a block and how it ended (``timed_out``: killed at its deadline)."""

    what: str
    expected: int
    returncode: int
    stdout: str
    stderr: str
    timed_out: float | None = None

    def failure(self) -> str | None:
        if self.timed_out is not None:
            return f"{self.what} did not end within {self.timed_out:.0f} s" + self._output()
        if self.returncode != self.expected:
            return f"{self.what} exited {self.returncode} (expected {self.expected})" + (
                self._output()
            )
        return None

    def _output(self) -> str:
        return f"\n--- stdout ---\n{self.stdout[-4000:]}\n--- stderr ---\n{self.stderr[-6000:]}"


def _text(data: str | bytes | None) -> str:
    if isinstance(data, bytes):
        return data.decode(errors="replace")
    return data or ""


def _run(
    argv: list[str], cwd: Path, env: dict[str, str], deadline: float, what: str, expected: int = 0
) -> Step:
    try:
        done = subprocess.run(
            argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=deadline, check=False
        )
    except subprocess.TimeoutExpired as exc:
        return Step(what, expected, -1, _text(exc.stdout), _text(exc.stderr), deadline)
    return Step(what, expected, done.returncode, done.stdout, done.stderr)


def execute(block: Block, bootstrap: str, tmp: Path) -> list[Step]:
    """Run one block's program, test file or command lines against ``bootstrap``."""
    env = _env(bootstrap)
    text = block.text.replace(PLACEHOLDER, bootstrap)
    if block.lang in _SHELL_LANGS:
        steps = []
        for line, expected in cli_lines(block):
            cmd = line.replace(PLACEHOLDER, bootstrap)
            step = _run(["bash", "-c", cmd], tmp, env, PROGRAM_DEADLINE, f"`{line}`", expected)
            steps.append(step)
            if step.failure():
                break
        return steps
    if block.pytest_file:
        (tmp / "test_block.py").write_text(text, encoding="utf-8")
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        argv += ["-p", "kafka_async.testing.plugin", "test_block.py"]
        return [_run(argv, tmp, env, PYTEST_DEADLINE, f"pytest on {block.id}")]
    (tmp / "program.py").write_text(text, encoding="utf-8")
    return [_run([sys.executable, "program.py"], tmp, env, PROGRAM_DEADLINE, block.id)]


BLOCKS = runnable_blocks()


def _to_run(block: Block) -> bool:
    if block.not_run is not None:
        return False
    return not (block.lang in _SHELL_LANGS and not cli_lines(block))


@pytest.fixture(scope="module")
def api_gaps(request: pytest.FixtureRequest) -> dict[str, str]:
    """Block id -> what the run's broker lacks of the block's ``requires-api`` (blocks it
    has everything for are absent), from the broker's ApiVersions answer."""
    from kafka_async.testing.capabilities import describe_gap

    service = request.getfixturevalue("kafka_service")
    gaps: dict[str, str] = {}
    for block in BLOCKS:
        for api, version in block.requires:
            gap = describe_gap(service.bootstrap_servers, api, version, service.apis())
            if gap is not None:
                gaps[block.id] = f"{service.kind} {service.version}: {gap}"
                break
    return gaps


@pytest.fixture(scope="module")
def outcomes(
    request: pytest.FixtureRequest,
    kafka_broker: str,
    tmp_path_factory: pytest.TempPathFactory,
    api_gaps: dict[str, str],
) -> dict[str, list[Step]]:
    """Every selected block's steps, run CONCURRENCY at a time (each in a directory of its own).

    Each block uses topics and groups of its own, so they may run side by side; the tests
    below then report one block each.
    """
    selected: list[Block] = []
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        block = callspec.params.get("block") if callspec is not None else None
        if isinstance(block, Block):
            selected.append(block)
    todo = [b for b in selected if _to_run(b) and b.id not in api_gaps]
    results: dict[str, list[Step]] = {}
    with ThreadPoolExecutor(max_workers=CONCURRENCY) as pool:
        futures = {
            pool.submit(execute, b, kafka_broker, tmp_path_factory.mktemp("block")): b for b in todo
        }
        for future, block in futures.items():
            results[block.id] = future.result()
    return results


@pytest.mark.integration
@pytest.mark.timeout(900)  # the first test's set-up runs every selected block
@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_code_block(
    block: Block, outcomes: dict[str, list[Step]], api_gaps: dict[str, str]
) -> None:
    if block.not_run is not None:
        pytest.skip(f"not-run: {block.not_run}")
    if block.id in api_gaps:
        pytest.skip(api_gaps[block.id])
    if block.lang in _SHELL_LANGS and block.lang != "console":
        others = other_commands(block)
        assert not others, (
            f"{block.id}: a ```{block.lang} block with commands other than kafka-async "
            f"needs <!-- not-run: reason --> on the line before its fence: {others}"
        )
    if not _to_run(block):
        pytest.skip("no kafka-async command in this block")
    steps = outcomes[block.id]
    assert steps, f"{block.id}: nothing ran"
    for step in steps:
        failure = step.failure()
        assert failure is None, f"{block.id}: {failure}"


def test_every_runnable_block_is_found() -> None:
    """The parser sees README's blocks: the rule cannot pass by finding nothing."""
    readme = [b for b in BLOCKS if b.path == README]
    assert sum(b.lang == "python" and b.not_run is None for b in readme) >= 3
    assert any(b.lang in _SHELL_LANGS and cli_lines(b) for b in readme)


def test_readme_is_a_users_page() -> None:
    """README.md stays short, and its first Python block is on the first screen."""
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"
    first = next(b for b in parse_blocks(README) if b.lang == "python")
    assert first.line <= README_FIRST_SCREEN, f"first python block at line {first.line}"
    assert first.not_run is None, "the first python block must run"


def test_parser_reads_markers_and_indented_fences(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "text\n<!-- not-run: a fragment -->\n```python\nx = 1\n```\n"
        "- item\n\n    ```console\n    kafka-async topics list\n"
        "    kafka-async consume t -n 1 --timeout 1  # exits 1\n    ```\n"
        "<!-- pytest-file -->\n```python\ndef test_x() -> None:\n    pass\n```\n",
        encoding="utf-8",
    )
    a, b, c = parse_blocks(page)
    assert (a.line, a.lang, a.not_run, a.text) == (3, "python", "a fragment", "x = 1\n")
    assert b.lang == "console"
    assert cli_lines(b) == [
        ("kafka-async topics list", 0),
        ("kafka-async consume t -n 1 --timeout 1  # exits 1", 1),
    ]
    assert c.pytest_file
    assert c.not_run is None


def test_parser_reads_required_apis(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- requires-api: ListGroups v5, ListPartitionReassignments -->\n"
        "```bash\nkafka-async share-groups list\n```\n",
        encoding="utf-8",
    )
    (block,) = parse_blocks(page)
    assert block.requires == (("ListGroups", 5), ("ListPartitionReassignments", 0))
    assert block.not_run is None
    page.write_text("<!-- requires-api: ListGroups 5 -->\n```bash\nx\n```\n", encoding="utf-8")
    with pytest.raises(ValueError, match="ListGroups 5"):
        parse_blocks(page)


_MD_LINK = re.compile(r"\[[^\]]*\]\((?P<target>[^)\s]+)\)")


@pytest.mark.parametrize(
    "name", ["README.md", "CONTRIBUTING.md", "DESIGN.md", "BENCHMARKS.md", "RELIABILITY.md"]
)
def test_repository_page_links_lead_somewhere(name: str) -> None:
    """The pages at the root (read on GitHub, not in the site) link to files that exist."""
    text = (ROOT / name).read_text(encoding="utf-8")
    missing = []
    for m in _MD_LINK.finditer(text):
        target = m["target"].split("#", 1)[0]
        if not target or re.match(r"^[a-z]+:", target):
            continue
        if not (ROOT / target).exists():
            missing.append(m["target"])
    assert missing == [], f"{name} links to missing files: {missing}"
