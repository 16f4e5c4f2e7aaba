"""The settings generator: each client's ``SCHEMA`` in, typed modules and tables out.

For every group of settings (the shared connection settings, producer, consumer, admin) it
reads ``SCHEMA``, ``IMPORTS`` and ``ALIASES`` from the package's ``settings.py`` and writes:

* ``<package>/settings_generated.py``: the ``Literal`` aliases, the ``TypedDict`` that types
  the client's ``**settings`` (one key per setting, its meaning as a comment) and the frozen
  dataclass of the config's fields (stored type and checked default per setting);
* the settings tables of docs/reference/settings.md, between the lines
  ``<!-- settings:<group> begin ... -->`` and ``<!-- settings:<group> end -->``;
* the settings list in the client's docstring, between ``.. settings:<group> begin ...``
  and ``.. settings:<group> end``.

``make generate`` runs it (with the protocol generator);
``tests/settings/test_settings_generated.py`` fails while any output is stale.

Run from the repository's root: ``python -m tools.generate_settings`` (writes) or ``--check``
(exit 1 if stale). Not part of the installed package.
"""

from __future__ import annotations

import importlib
import re
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

from kafka_async.settings.spec import Choice, Setting
from tools.generate_protocol import format_source

#: The repository's root (this file lives in ``tools/``) and the source tree's package.
ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIR = ROOT / "kafka_async"
README = ROOT / "docs" / "reference" / "settings.md"


@dataclass(frozen=True, slots=True)
class Group:
    """One client's settings and where their derived forms go."""

    #: Marker name ("producer": ``settings:producer``).
    key: str
    #: Package below kafka_async holding ``settings.py`` and ``settings_generated.py``
    #: (dotted: "consumer.share").
    package: str
    #: The TypedDict and the fields dataclass generated.
    typed_dict: str
    fields: str
    #: Whose keyword arguments they are, for the generated docstrings.
    owner: str
    #: The module whose docstring holds the generated list.
    docstring_module: str
    #: Producer, consumer and admin settings extend the shared ones and hold a ClientConfig.
    shared: bool = True
    #: What the generated docstrings call these settings ("the <title> settings").
    title: str = ""

    @property
    def name(self) -> str:
        return self.title or self.key

    @property
    def declarations(self) -> str:
        return f"kafka_async.{self.package}.settings"

    @property
    def directory(self) -> Path:
        return PACKAGE_DIR.joinpath(*self.package.split("."))

    @property
    def output(self) -> Path:
        return self.directory / "settings_generated.py"

    @property
    def up(self) -> str:
        """The relative import prefix of kafka_async from the generated module ("..")."""
        return "." * (self.package.count(".") + 2)


GROUPS = (
    Group(
        "client",
        "net",
        "ClientSettings",
        "ClientFields",
        "every client",
        "net/config.py",
        shared=False,
        title="connection and security",
    ),
    Group(
        "producer",
        "producer",
        "ProducerSettings",
        "ProducerFields",
        "Producer",
        "producer/producer.py",
    ),
    Group(
        "consumer",
        "consumer",
        "ConsumerSettings",
        "ConsumerFields",
        "Consumer",
        "consumer/consumer.py",
    ),
    Group(
        "admin",
        "admin",
        "AdminSettings",
        "AdminFields",
        "AdminClient",
        "admin/client.py",
        title="admin client",
    ),
    Group(
        "share",
        "consumer.share",
        "ShareConsumerSettings",
        "ShareConsumerFields",
        "ShareConsumer",
        "consumer/share/consumer.py",
        title="share consumer",
    ),
)


def _show(value: Any) -> str:
    """A default as the docs show it (Python syntax, double quotes)."""
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, tuple):
        return "(" + ", ".join(_show(v) for v in value) + ")"
    return repr(value)


def _default_text(setting: Setting) -> str:
    if setting.required is not None:
        return "required"
    return setting.default_doc or _show(setting.default)


def _comment(text: str, indent: str) -> list[str]:
    return [f"{indent}#: {line}" for line in textwrap.wrap(text, 100 - len(indent) - 3)]


def _imports(group: Group, mod: ModuleType, aliases: dict[str, str]) -> list[str]:
    """The generated module's imports: only what it uses (ruff would flag the rest)."""
    settings = mod.SCHEMA.settings
    types = " ".join(
        [*aliases.values(), *(f"{s.kind.annotation} {s.kind.stored}" for s in settings)]
    )
    typing = [name for name in ("Any", "Literal") if re.search(rf"\b{name}\b", types)]
    if not group.shared:
        typing.append("TypedDict")
    needs_field = any(s.secret or not s.literal_default for s in settings)
    out = [
        "from __future__ import annotations",
        "",
        "from dataclasses import dataclass, field"
        if needs_field
        else "from dataclasses import dataclass",
    ]
    if typing:
        out.append(f"from typing import {', '.join(typing)}")
    out += mod.IMPORTS
    if group.shared:
        out += [
            f"from {group.up}net.config import ClientConfig",
            f"from {group.up}net.settings_generated import ClientSettings",
        ]
    out.append("from .settings import SCHEMA as _SCHEMA")
    return out


def _field(setting: Setting) -> str:
    """A fields-class line: the stored type and the checked default."""
    if setting.required is not None:
        return f"    {setting.name}: {setting.kind.stored}"
    value = setting.kind(setting.name, setting.default)
    if not setting.literal_default:  # a fresh object per config
        default = f'field(default_factory=lambda: _SCHEMA.default("{setting.name}"))'
    elif setting.secret:
        default = f"field(default={value!r}, repr=False)"
    else:
        default = repr(value)
    return f"    {setting.name}: {setting.kind.stored} = {default}"


def render_module(group: Group, mod: ModuleType) -> str:
    """The text of ``<package>/settings_generated.py`` (before formatting)."""
    settings = mod.SCHEMA.settings
    source = "kafka_async/" + group.package.replace(".", "/") + "/settings.py"
    base = "ClientSettings" if group.shared else "TypedDict"
    aliases: dict[str, str] = dict(mod.ALIASES)
    for s in settings:
        if isinstance(s.kind, Choice):
            aliases[s.kind.alias] = s.kind.literal
    out = [
        f"# Generated from {source} by `make generate`",
        "# (tools/generate_settings.py): do not edit.",
        f'"""The {group.name} settings, typed: ``{group.typed_dict}`` (the keyword arguments of',
        f"{group.owner}) and ``{group.fields}`` (the fields of its config, checked values).",
        "",
        f"Both come from ``SCHEMA`` in ``{group.declarations}``, which says",
        "what each setting means; see :mod:`kafka_async.settings`.",
        '"""',
        "",
        *_imports(group, mod, aliases),
        "",
        *(f"{name} = {text}" for name, text in aliases.items()),
        "",
        "",
        f"class {group.typed_dict}({base}, total=False):",
        f'    """The keyword arguments of {group.owner}, typed for editors and mypy.',
        "",
        "    Values are checked again at run time (``ConfigError`` naming the setting).",
        '    """',
        "",
    ]
    for s in settings:
        if s.typed:
            shown = "required" if s.required else f"default: {_default_text(s)}"
            out += _comment(f"{s.doc} ({shown})", "    ")
            out.append(f"    {s.name}: {s.kind.annotation}")
    out += [
        "",
        "",
        "@dataclass(frozen=True, slots=True, kw_only=True)",
        f"class {group.fields}:",
        f'    """The {group.name} settings as the config holds them: each checked, defaults',
        '    filled in."""',
        "",
        *(["    client: ClientConfig"] if group.shared else []),
        *(_field(s) for s in settings),
        "",
        "    def __post_init__(self) -> None:",
        "        # Each field checked against its declaration (the config subclass adds the",
        "        # relations between fields).",
        "        _SCHEMA.validate(self)",
    ]
    return "\n".join(out) + "\n"


# -- tables ----------------------------------------------------------------------------------


def _java(setting: Setting) -> str:
    name = setting.java_name
    if not name:
        return ""
    if " (" in name:
        name, note = name.split(" (", 1)
        return f"`{name}` ({note}"
    return f"`{name}`"


def readme_table(group: Group, mod: ModuleType, indent: str = "") -> list[str]:
    """The README table of a group's settings (Markdown: ``indent`` is not used)."""
    rows = [
        "| Setting | Default | Meaning | Java / librdkafka |",
        "| --- | --- | --- | --- |",
    ]
    for s in mod.SCHEMA.settings:
        default = s.default_doc or f"`{_show(s.default)}`"
        if s.required is not None:
            default = "required"
        doc = s.doc.replace("|", "\\|")
        rows.append(f"| `{s.name}` | {default} | {doc} | {_java(s)} |")
    for name, value in getattr(mod, "SHARED_DEFAULTS", {}).items():
        rows.append(
            f"| `{name}` | `{_show(value)}` | as above, with the {group.owner}'s default | |"
        )
    return rows


def docstring_list(group: Group, mod: ModuleType, indent: str) -> list[str]:
    """The docstring list of a group's settings (one bullet each, wrapped at 100)."""
    lines: list[str] = [""]  # RST: blank lines around the list, apart from the markers
    width = 100 - len(indent)
    for s in mod.SCHEMA.settings:
        text = f"* ``{s.name}`` ({_default_text(s)}): {s.doc}."
        for i, line in enumerate(textwrap.wrap(text, width - 2)):
            lines.append(f"{indent}{'  ' if i else ''}{line}")
    for name, value in getattr(mod, "SHARED_DEFAULTS", {}).items():
        lines.append(f"{indent}* ``{name}`` defaults to {_show(value)} here.")
    return [*lines, ""]


class RegionError(Exception):
    """A file lacks the markers of a generated region."""


def replace_region(text: str, marker: str, render: Callable[[str], list[str]], path: Path) -> str:
    """``text`` with the lines between ``<marker> begin`` and ``<marker> end`` replaced by
    ``render(indent)`` (the indentation of the begin line)."""
    lines = text.split("\n")
    begin = next((i for i, ln in enumerate(lines) if f"{marker} begin" in ln), None)
    end = next((i for i, ln in enumerate(lines) if f"{marker} end" in ln), None)
    if begin is None or end is None or end < begin:
        raise RegionError(f"{path}: no '{marker} begin' ... '{marker} end' lines")
    indent = lines[begin][: len(lines[begin]) - len(lines[begin].lstrip())]
    return "\n".join([*lines[: begin + 1], *render(indent), *lines[end:]])


def load(group: Group) -> ModuleType:
    """The group's declarations module.

    Its package's ``__init__`` is not run when the package is not imported yet: that would
    import the config, which imports the generated module this run is about to write (so a
    new setting, or a first run, cannot trip over a missing name in it).
    """
    parts = group.package.split(".")
    for depth in range(1, len(parts) + 1):
        package = ".".join(["kafka_async", *parts[:depth]])
        if package not in sys.modules:
            bare = ModuleType(package)
            bare.__path__ = [str(PACKAGE_DIR.joinpath(*parts[:depth]))]
            sys.modules[package] = bare
    return importlib.import_module(group.declarations)


def render() -> dict[Path, str]:
    """Every output file, path -> text."""
    files: dict[Path, str] = {}
    # An installed package has no docs beside it (its tests still check the rest).
    readme = README.read_text() if README.exists() else None
    for group in GROUPS:
        mod = load(group)
        files[group.output] = format_source(render_module(group, mod), str(group.output))
        if readme is not None:
            readme = replace_region(
                readme,
                f"<!-- settings:{group.key}",
                partial(readme_table, group, mod),
                README,
            )
        path = PACKAGE_DIR / group.docstring_module
        source = files.get(path, path.read_text())
        files[path] = replace_region(
            source,
            f".. settings:{group.key}",
            partial(docstring_list, group, mod),
            path,
        )
    if readme is not None:
        files[README] = readme
    return files


def stale(files: dict[Path, str]) -> list[str]:
    """Outputs whose file differs from ``files``."""
    return [str(p) for p, text in files.items() if not p.exists() or p.read_text() != text]


def main(argv: list[str] | None = None) -> int:
    """Write the outputs, or with ``--check`` only report stale ones."""
    args = sys.argv[1:] if argv is None else argv
    files = render()
    problems = stale(files)
    if "--check" in args:
        for p in problems:
            print(f"stale: {p}", file=sys.stderr)
        return 1 if problems else 0
    for path, text in files.items():
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
