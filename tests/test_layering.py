"""The layer rules of DESIGN.md, checked on the import statements of every module."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "kafka_async"

# package -> packages (below kafka_async) it must never import
_UPPER = {"producer", "consumer", "admin", "testing", "cli", "spark", "schema_registry"}
FORBIDDEN: dict[str, set[str]] = {
    # spec.py is pure (the generator that reads the client packages is tools/generate_settings.py).
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
# The schema-registry serializers are an upper layer (like admin and spark): nothing below
# imports them, and they use only the errors (no client internals).
for _pkg in ("records", "net", "cluster", "producer", "consumer", "admin", "observability"):
    FORBIDDEN[_pkg] = FORBIDDEN[_pkg] | {"schema_registry"}
FORBIDDEN["schema_registry"] = {"protocol", "records", "net", "cluster"} | _UPPER - {
    "schema_registry"
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
EXTRA_WRAPPERS = {
    ("spark",),
    ("cli",),
    ("testing",),
    ("observability", "otel.py"),
    ("schema_registry",),
}


def test_core_never_imports_optional_extras() -> None:
    for path in _modules():
        rel = path.relative_to(ROOT).parts
        if rel[:1] in EXTRA_WRAPPERS or rel[:2] in EXTRA_WRAPPERS:
            continue
        text = path.read_text()
        for extra in ("pyspark", "rich", "opentelemetry", "httpx", "fastavro", "jsonschema"):
            assert f"import {extra}" not in text, f"{path} imports optional {extra}"
            assert f"from {extra}" not in text, f"{path} imports optional {extra}"


# -- private names stay in their module -------------------------------------------------------
# `from .x import _y`: a module's `_names` are its own; another module that needs one gets a
# public (or documented internal, non-underscore) name instead. Importing a private *module*
# (`from . import _speedups`, `from ._wire import ...`) is fine: the underscore marks the
# module as internal to its package, not a name inside it.
#: (importing module, imported-from module, name) -> why it is allowed for now.
PRIVATE_IMPORT_ALLOWED: dict[tuple[str, str, str], str] = {}


def _private_imports(path: Path, root: Path = ROOT) -> list[tuple[str, str, str, int]]:
    """(module, imported-from module, private name, line) of each private name ``path``
    imports from another module of the library (private submodules excepted)."""
    rel = path.relative_to(root).parts
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level == 0:
            parts = (node.module or "").split(".")
            if parts[0] != "kafka_async":
                continue
            target = parts[1:]
        else:
            base = list(rel[:-1])
            up = node.level - 1
            base = base[: len(base) - up] if up else base
            target = base + (node.module.split(".") if node.module else [])
        for alias in node.names:
            name = alias.name
            if not name.startswith("_") or (name.startswith("__") and name.endswith("__")):
                continue
            package = root.joinpath(*target)
            if (
                package.joinpath(f"{name}.py").exists()
                or package.joinpath(name).is_dir()
                or any(package.glob(f"{name}.*"))  # a C extension (_speedups.c / .so)
            ):
                continue
            found.append(("/".join(rel), "/".join(target), name, node.lineno))
    return found


def test_no_private_names_imported_across_modules() -> None:
    bad = [
        f"kafka_async/{mod}:{line} imports {name} from {src}"
        for path in _modules()
        for mod, src, name, line in _private_imports(path)
        if (mod, src, name) not in PRIVATE_IMPORT_ALLOWED
    ]
    assert not bad, "give the name a public (non-underscore) spelling:\n" + "\n".join(bad)


def test_private_import_allow_list_is_current() -> None:
    """An entry whose import is gone is removed, so the list only shrinks."""
    seen = {(m, s, n) for path in _modules() for m, s, n, _ in _private_imports(path)}
    stale = sorted(set(PRIVATE_IMPORT_ALLOWED) - seen)
    assert not stale, f"remove from PRIVATE_IMPORT_ALLOWED: {stale}"


def test_the_private_import_rule_catches_one(tmp_path: Path) -> None:
    """The scan above finds `from .x import _y` (and skips private submodules)."""
    pkg = tmp_path / "kafka_async"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "sub" / "_inner.py").write_text("")
    (pkg / "sub" / "a.py").write_text("def _y() -> None: ...\n")
    mod = pkg / "sub" / "b.py"
    mod.write_text("from .a import _y, ok\nfrom . import _inner\nfrom ..errors import __all__\n")
    assert _private_imports(mod, pkg) == [("sub/b.py", "sub/a", "_y", 1)]


def _c_sources() -> list[Path]:
    return sorted([*ROOT.rglob("*.c"), *ROOT.rglob("*.h")])


def _c_code(path: Path) -> str:
    """A C file without its comments."""
    return re.sub(r"/\*.*?\*/|//[^\n]*", "", path.read_text(), flags=re.S)


#: Names of the producer's and consumer's classes: code of a layer below them does not read
#: their fields by name (the producer's C fast path lives in producer/, not records/).
_UPPER_CLASS_WORDS = re.compile(
    r"\b(Producer\w*|Sender|ClusterClient|RecordAccumulator|Delivery|PartitionState|"
    r"Enqueuer|Consumer\w*|Fetcher)\b|\b(producer|consumer|sender)\b"
)


@pytest.mark.parametrize("path", _c_sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_c_extension_respects_layers(path: Path) -> None:
    """The C extensions follow the same rules: the modules they import (by name, in a
    string) are of their own layer or below, and a records extension names no producer or
    consumer class (outside comments): it reads no field of theirs."""
    rel = path.relative_to(ROOT).parts
    package = rel[0]
    code = _c_code(path)
    named = {m.split(".")[1] for m in re.findall(r'"(kafka_async\.\w+)', code)}
    bad = named & FORBIDDEN.get(package, set())
    assert not bad, f"kafka_async/{'/'.join(rel)} reaches into {sorted(bad)}"
    if package == "records":
        words = sorted({m.group(0) for m in _UPPER_CLASS_WORDS.finditer(code)})
        assert not words, f"kafka_async/{'/'.join(rel)} names {words} (a layer above records)"
