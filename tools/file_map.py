"""Write the file map of docs/internals/index.md from the package's module docstrings.

The map lists every module of ``kafka_async`` (the generated ``protocol/apis/`` modules as
one line) with the first sentence of its docstring, between the marker lines
``<!-- file-map:begin -->`` and ``<!-- file-map:end -->``. ``tests/docs/test_file_map.py``
fails while the page differs from what this writes, so a module added, moved or removed
changes the map in the same commit.

Usage: ``python tools/file_map.py`` (rewrite the page) or ``--check`` (exit 1 when stale).
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "kafka_async"
PAGE = ROOT / "docs" / "internals" / "index.md"
BEGIN = "<!-- file-map:begin -->"
END = "<!-- file-map:end -->"
#: Folders shown as one line each (generated code), with what they hold.
FOLDED = {
    "protocol/apis": "Generated: one typed module per Kafka API (requests and responses, "
    "every version), written by `make generate` from `protocol/definitions/`.",
}
#: Longest summary kept in a table cell.
MAX_SUMMARY = 160


def summary(path: Path) -> str:
    """The first sentence (or first line) of a module's docstring, one line."""
    if path.suffix == ".c":
        return _c_summary(path)
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    first = " ".join(doc.strip().split("\n\n", 1)[0].split())
    if not first:
        return "(no docstring)"
    if len(first) > MAX_SUMMARY:
        cut = first.rfind(" ", 0, MAX_SUMMARY)
        first = first[: cut if cut > 0 else MAX_SUMMARY] + " ..."
    return first.replace("|", "\\|")


def _c_summary(path: Path) -> str:
    """The first comment paragraph of a C source file."""
    lines: list[str] = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if line.startswith(("/*", "*", "//")):
            text = line.lstrip("/*").rstrip("*/").strip()
            if not text and lines:
                break
            if text:
                lines.append(text)
        elif lines or line:
            break
    return " ".join(lines)[:MAX_SUMMARY] or "(no comment)"


def rows(package: Path = PACKAGE) -> list[tuple[str, str]]:
    """``(relative path, summary)`` for every module, folded folders once."""
    out: list[tuple[str, str]] = []
    seen_folded: set[str] = set()
    files = sorted(
        p for p in package.rglob("*") if p.suffix in (".py", ".c") and "__pycache__" not in p.parts
    )
    for path in files:
        rel = path.relative_to(package).as_posix()
        folder = next((f for f in FOLDED if rel.startswith(f + "/")), None)
        if folder is not None:
            if folder not in seen_folded:
                seen_folded.add(folder)
                out.append((folder + "/", FOLDED[folder]))
            continue
        out.append((rel, summary(path)))
    return out


def render(package: Path = PACKAGE) -> str:
    """The map as a Markdown table, with the marker lines."""
    lines = [BEGIN, "| file | what it holds |", "| --- | --- |"]
    lines += [f"| `{rel}` | {text} |" for rel, text in rows(package)]
    lines.append(END)
    return "\n".join(lines)


def rewrite(page_text: str, table: str) -> str:
    """``page_text`` with the region between the markers replaced by ``table``."""
    start = page_text.index(BEGIN)
    end = page_text.index(END) + len(END)
    return page_text[:start] + table + page_text[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the page is stale")
    args = parser.parse_args(argv)
    text = PAGE.read_text(encoding="utf-8")
    new = rewrite(text, render())
    if args.check:
        if new != text:
            print(f"{PAGE.relative_to(ROOT)}: the file map is stale; run python tools/file_map.py")
            return 1
        return 0
    if new != text:
        PAGE.write_text(new, encoding="utf-8")
        print(f"rewrote the file map of {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
