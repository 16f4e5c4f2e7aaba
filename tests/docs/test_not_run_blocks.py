"""The documentation's not-run Python blocks still type-check.

A block marked ``<!-- not-run: ... -->`` (it needs a TLS listener, a KDC, a cloud service) is
not executed by ``test_code_blocks.py``, so nothing would notice a misspelt setting or a
renamed class in it. One ``mypy --strict`` run over all of them does: the clients' settings
are typed (``ClientSettings``), so a wrong setting name or value type is an error here.
Fragments (blocks that do not import ``kafka_async``: a few lines inside a larger program)
are left out; errors are counted in the blocks only (the library has its own mypy run).
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import kafka_async
from tests.docs.test_code_blocks import markdown_files, parse_blocks


def test_not_run_python_blocks_type_check(tmp_path: Path) -> None:
    sources: dict[str, str] = {}
    for path in markdown_files():
        for block in parse_blocks(path):
            if block.lang != "python" or block.not_run is None or block.pytest_file:
                continue
            if "import kafka_async" not in block.text and "from kafka_async" not in block.text:
                continue
            name = "block_" + "".join(c if c.isalnum() else "_" for c in block.id) + ".py"
            (tmp_path / name).write_text(block.text)
            sources[name] = block.id
    assert sources, "no not-run python blocks found: the parser or the docs changed"
    root = Path(kafka_async.__file__).resolve().parents[1]
    env = dict(os.environ)
    site = {Path(sysconfig.get_paths()[key]).resolve() for key in ("purelib", "platlib")}
    if root not in site:
        env["MYPYPATH"] = str(root)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--ignore-missing-imports",
            "--cache-dir",
            str(tmp_path / ".mypy_cache"),
            "--no-color-output",
            "--no-error-summary",
            *sorted(sources),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
        check=False,
    )
    problems = [
        f"{sources.get(line.split(':', 1)[0], '?')}: {line}"
        for line in proc.stdout.splitlines()
        if ": error:" in line and line.startswith("block_")
    ]
    assert not problems, "\n".join(problems)
    assert not proc.stderr.strip(), proc.stderr
