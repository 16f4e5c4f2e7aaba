"""The layer rules of DESIGN.md, checked on the import statements of every module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "kafka_async"

# package -> packages (below kafka_async) it must never import
_UPPER = {"producer", "consumer", "admin", "testing", "cli", "spark"}
FORBIDDEN: dict[str, set[str]] = {
    # spec.py is pure; generate.py loads the client packages' declarations by name (importlib).
    "settings": {"records", "net", "cluster"} | _UPPER,
    "protocol": {"records", "net", "cluster"} | _UPPER,
    "records": {"net", "cluster", "producer", "consumer", "admin", "testing", "cli", "spark"},
    "net": {"cluster", "producer", "consumer", "admin", "testing", "cli", "spark"},
    "cluster": {"producer", "consumer", "admin", "testing", "cli", "spark"},
    "producer": {"consumer", "admin", "testing", "cli", "spark"},
    "consumer": {"producer", "admin", "testing", "cli", "spark"},
    "admin": {"testing", "cli", "spark"},
    "observability": {"producer", "consumer", "admin", "testing", "cli", "spark"},
}
TOP_LEVEL_PURE = {"errors.py", "structs.py"}


def _imported_packages(path: Path) -> set[str]:
    """First component below kafka_async of every import in a module (absolute or relative)."""
    tree = ast.parse(path.read_text())
    rel = path.relative_to(ROOT).parts
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "kafka_async" and len(parts) > 1:
                    found.add(parts[1])
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                parts = (node.module or "").split(".")
                if parts[0] == "kafka_async" and len(parts) > 1:
                    found.add(parts[1])
            else:
                base = list(rel[:-1])
                up = node.level - 1
                if up > len(base):
                    continue
                base = base[: len(base) - up] if up else base
                target = base + (node.module.split(".") if node.module else [])
                if target:
                    found.add(target[0])
                elif node.names:
                    found.update(a.name for a in node.names)
    return found


def _modules() -> list[Path]:
    return sorted(ROOT.rglob("*.py"))


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_module_respects_layers(path: Path) -> None:
    rel = path.relative_to(ROOT).parts
    imported = _imported_packages(path)
    if len(rel) == 1:
        if rel[0] in TOP_LEVEL_PURE:
            assert not imported - {"errors", "structs"}, f"{rel[0]} imports {imported}"
        return
    package = rel[0]
    bad = imported & FORBIDDEN.get(package, set())
    assert not bad, f"kafka_async/{'/'.join(rel)} imports {sorted(bad)} (see DESIGN.md layers)"


# Modules that exist to wrap an optional extra, and may import it.
EXTRA_WRAPPERS = {("spark",), ("cli",), ("testing",), ("observability", "otel.py")}


def test_core_never_imports_optional_extras() -> None:
    for path in _modules():
        rel = path.relative_to(ROOT).parts
        if rel[:1] in EXTRA_WRAPPERS or rel[:2] in EXTRA_WRAPPERS:
            continue
        text = path.read_text()
        for extra in ("pyspark", "rich", "opentelemetry"):
            assert f"import {extra}" not in text, f"{path} imports optional {extra}"
            assert f"from {extra}" not in text, f"{path} imports optional {extra}"
