"""The file map of docs/internals/index.md lists every module of the package as it is now."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("file_map", ROOT / "tools" / "file_map.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("file_map", module)
    spec.loader.exec_module(module)
    return module


def test_the_file_map_is_current() -> None:
    """A module added, moved or removed must change the map (``python tools/file_map.py``)."""
    tool = _tool()
    page = tool.PAGE.read_text(encoding="utf-8")
    assert tool.rewrite(page, tool.render()) == page, (
        "docs/internals/index.md's file map is stale: run python tools/file_map.py"
    )


def test_every_module_has_a_line_and_a_summary() -> None:
    tool = _tool()
    listed = {rel for rel, _ in tool.rows()}
    modules = {
        p.relative_to(tool.PACKAGE).as_posix()
        for p in tool.PACKAGE.rglob("*.py")
        if "__pycache__" not in p.parts and "protocol/apis/" not in p.as_posix()
    }
    assert modules <= listed
    missing = [rel for rel, text in tool.rows() if text.startswith("(no ")]
    assert missing == [], f"modules without a docstring: {missing}"
