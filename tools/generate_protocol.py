"""The protocol generator: definitions in, typed message modules out.

``kafka_async/protocol/definitions/<api>.def`` is the one source of truth for a Kafka API:
one line per field with its wire facts and its meaning. This module parses those files and
writes, per API, ``kafka_async/protocol/apis/<api>.py`` (a slotted, typed class per struct,
the :class:`~kafka_async.protocol.schema.StructDef` schema the codecs compile from, and the
typed :class:`~kafka_async.protocol.schema.Api` constant) plus the registry
``kafka_async/protocol/apis/__init__.py``. ``make generate`` runs it;
``tests/protocol/test_protocol_generated.py`` fails when a generated file is stale, and
``tests/protocol/test_protocol_crosscheck.py`` checks the definitions against Kafka's JSON.

The format (DESIGN.md, "Adding a Kafka API", has a worked example)::

    // What the API does (any number of comment lines before the header).
    api Produce: key 0, versions 0-11, flexible 9+

    request  // what a request carries
      acks: int16  // acknowledgements to wait for
      topic_data: []TopicProduceData  // the batches, grouped by topic
        name: string  // topic name
        partition_data: []PartitionProduceData  // the batches of this topic
          index: int32  // partition index
          records: records, nullable v0+  // the record batches

    response  // what a response carries
      ...

A field line is ``name: type`` and then, separated by commas, any of: ``vN+`` / ``vN-M`` /
``vN`` (the versions the field exists in; ``v0+`` when left out), ``nullable vN+``,
``tag N``, ``tagged vN+`` (defaults to the field's versions), ``default V`` (an integer,
``true``/``false``, ``null``, a float or a double-quoted string) and ``ignorable`` (dropped
instead of refused when a version does not have it); then ``// meaning``, which every field
must have. Types: ``int8 int16 uint16 int32 uint32 int64 float64 bool uuid string bytes
records``, ``[]`` of any of them, or a struct name: ``Name`` or ``[]Name`` with its fields
indented two spaces below (a struct already defined in the same file may be named again
without fields). ``class PyName`` after a struct type gives the struct's generated class
another name than Kafka's (the wire name stays Kafka's, so the cross-check still compares
it): Kafka's request and response live in separate files and may each have a different
struct of one name (DescribeQuorum's ``TopicData``), while a module here has one class per
name; the struct is named again as ``TopicData, class PyName``. The header may end with
``, spec 4.1`` to cross-check the API against Kafka 4.1's JSON
(``../shared/kafka-protocol-4.1``) instead of the 4.0 snapshot, or ``, spec 4.4`` against the
JSON inside the kafka-clients 4.4.0 jar (the test plugin's broker cache or ``~/.m2``).

Run from the repository's root: ``python -m tools.generate_protocol`` (writes) or ``--check``
(exit 1 if stale). Not part of the installed package: the wheel carries the generated modules,
not their generator.
"""

from __future__ import annotations

import itertools
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

#: The source tree's protocol package (this file lives in ``tools/`` beside it).
PROTOCOL_DIR = Path(__file__).resolve().parents[1] / "kafka_async" / "protocol"
DEFINITIONS_DIR = PROTOCOL_DIR / "definitions"
APIS_DIR = PROTOCOL_DIR / "apis"

#: wire type -> (schema constant, Python annotation)
PRIMITIVES: dict[str, tuple[str, str]] = {
    "int8": ("INT8", "int"),
    "int16": ("INT16", "int"),
    "uint16": ("UINT16", "int"),
    "int32": ("INT32", "int"),
    "uint32": ("UINT32", "int"),
    "int64": ("INT64", "int"),
    "float64": ("FLOAT64", "float"),
    "bool": ("BOOL", "bool"),
    "uuid": ("UUID", "uuid.UUID"),
    "string": ("STRING", "str"),
    "bytes": ("BYTES", "bytes"),
    "records": ("RECORDS", "bytes | bytearray | memoryview"),
}
#: The value a field of each wire type holds when the definition gives no default.
ZEROS: dict[str, str] = {
    "int8": "0",
    "int16": "0",
    "uint16": "0",
    "int32": "0",
    "uint32": "0",
    "int64": "0",
    "float64": "0.0",
    "bool": "False",
    "uuid": "ZERO_UUID",
    "string": '""',
    "bytes": 'b""',
    "records": "None",
}
SPECS = ("4.0", "4.1", "4.4")


class DefinitionError(ValueError):
    """A definition file that does not parse or does not make sense."""


# --------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class VersionRange:
    """Kafka's version notation without the ``v``: ``"3+"``, ``"0-4"``, ``"7"``, ``"none"``."""

    text: str

    @property
    def empty(self) -> bool:
        return self.text == "none"


@dataclass(slots=True)
class FieldDef:
    """One field line of a definition."""

    name: str
    wire_type: str  # primitive name or struct name, without "[]"
    is_array: bool
    versions: str
    nullable: str
    tag: int | None
    tagged: str | None
    default: str | None  # Python source of the default, or None for the type's zero
    ignorable: bool
    meaning: str
    line: int
    class_name: str | None = None  # ``class PyName``: the struct's generated class name
    struct: StructDef | None = None

    @property
    def is_struct(self) -> bool:
        return self.struct is not None


@dataclass(slots=True)
class StructDef:
    """A struct: the request, the response or a nested struct.

    ``name`` is Kafka's (wire) name, ``cls`` the generated class's: the same unless the
    definition renames the struct with ``class PyName``.
    """

    name: str
    meaning: str
    fields: list[FieldDef] = field(default_factory=list)
    cls: str = ""

    def __post_init__(self) -> None:
        if not self.cls:
            self.cls = self.name


@dataclass(slots=True)
class ApiDef:
    """One definition file: the API's header, request and response."""

    name: str
    key: int
    versions: str
    flexible: str
    spec: str
    doc: list[str]
    request: StructDef
    response: StructDef
    source: Path

    @property
    def module(self) -> str:
        """The generated module's name (``source`` without ``.def``)."""
        return self.source.stem

    @property
    def constant(self) -> str:
        """``Produce`` -> ``PRODUCE``, ``DescribeUserScramCredentials`` -> ``DESCRIBE_...``."""
        return snake(self.name).upper()

    def structs_bottom_up(self) -> list[StructDef]:
        """Every distinct struct, each after the structs its fields use (post-order)."""
        out: list[StructDef] = []
        seen: set[str] = set()

        def walk(sd: StructDef) -> None:
            if sd.cls in seen:
                return
            seen.add(sd.cls)
            for fd in sd.fields:
                if fd.struct is not None:
                    walk(fd.struct)
            out.append(sd)

        walk(self.request)
        walk(self.response)
        return out

    def structs(self) -> list[StructDef]:
        """Every distinct struct, request first, in definition order (pre-order)."""
        out: list[StructDef] = []
        seen: set[str] = set()

        def walk(sd: StructDef) -> None:
            if sd.cls in seen:
                return
            seen.add(sd.cls)
            out.append(sd)
            for fd in sd.fields:
                if fd.struct is not None:
                    walk(fd.struct)

        walk(self.request)
        walk(self.response)
        return out


def snake(name: str) -> str:
    """``ThrottleTimeMs`` -> ``throttle_time_ms`` (acronyms kept together)."""
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s)
    return s.lower()


# --------------------------------------------------------------------------------------------
# The parser
# --------------------------------------------------------------------------------------------

_HEADER = re.compile(r"^api ([A-Z][A-Za-z0-9]*): (.*)$")
_SECTION = re.compile(r"^(request|response)\s*(?://\s*(.*))?$")
_FIELD = re.compile(
    r"^(?P<indent> *)(?P<name>[a-z][a-z0-9_]*): (?P<type>(?:\[\])?[A-Za-z][A-Za-z0-9]*)"
    r"(?P<attrs>(?:, [^/]*?)*)\s*(?://\s*(?P<meaning>.*))?$"
)
_VERSIONS = re.compile(r"^v(\d+)(\+|-\d+)?$")


def _versions(token: str, where: str) -> str:
    m = _VERSIONS.match(token)
    if not m:
        raise DefinitionError(f"{where}: {token!r} is not a version range (v3+, v0-4, v7)")
    lo, rest = m.group(1), m.group(2) or ""
    if rest.startswith("-") and int(rest[1:]) < int(lo):
        raise DefinitionError(f"{where}: empty version range {token!r}")
    return lo + rest


def _default(token: str, where: str) -> str:
    if token == "null":
        return "None"
    if token in ("true", "false"):
        return token.capitalize()
    if re.fullmatch(r"-?(0x[0-9a-fA-F]+|\d+)", token):
        return str(int(token, 0))
    if re.fullmatch(r"-?\d+\.\d*", token):
        return repr(float(token))
    if re.fullmatch(r'"[^"\\]*"', token):
        return token
    raise DefinitionError(f"{where}: cannot read the default {token!r}")


def parse(text: str, source: Path) -> ApiDef:
    """Parse one definition file; raises :class:`DefinitionError` naming the line."""
    doc: list[str] = []
    header: tuple[str, int, str, str, str] | None = None
    sections: dict[str, StructDef] = {}
    # stack of (indent of the fields, struct) for the struct being filled
    stack: list[tuple[int, StructDef]] = []
    known: dict[str, StructDef] = {}
    last: FieldDef | None = None
    for lineno, raw in enumerate(text.splitlines(), 1):
        where = f"{source.name}:{lineno}"
        line = raw.rstrip()
        if "\t" in line:
            raise DefinitionError(f"{where}: tabs are not allowed; indent with two spaces")
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("//"):
            if header is None:
                doc.append(stripped[2:].strip())
            continue
        if header is None:
            m = _HEADER.match(line)
            if not m:
                raise DefinitionError(f"{where}: expected 'api Name: key N, versions ...'")
            header = _parse_header(m.group(1), m.group(2), where)
            continue
        m = _SECTION.match(line)
        if m:
            kind = m.group(1)
            if kind in sections:
                raise DefinitionError(f"{where}: a second {kind} section")
            name = header[0] + kind.capitalize()
            about = (m.group(2) or "").strip() or f"The {header[0]} {kind} (key {header[1]})"
            sd = StructDef(name, about)
            sections[kind] = sd
            known[name] = sd
            stack = [(2, sd)]
            last = None
            continue
        if not stack:
            raise DefinitionError(f"{where}: a field outside a request or response section")
        m = _FIELD.match(line)
        if not m:
            raise DefinitionError(f"{where}: cannot read the field line {stripped!r}")
        indent = len(m.group("indent"))
        if indent % 2:
            raise DefinitionError(f"{where}: indent by two spaces per level")
        if last is not None and last.struct is not None and indent == stack[-1][0] + 2:
            # The first field of the struct the previous line opened.
            if last.struct.fields:
                raise DefinitionError(
                    f"{where}: struct {last.struct.name} is already defined in this file"
                )
            stack.append((indent, last.struct))
        while stack and indent < stack[-1][0]:
            stack.pop()
        if not stack or indent != stack[-1][0]:
            raise DefinitionError(f"{where}: unexpected indentation")
        fd = _parse_field(m, where, lineno)
        owner = stack[-1][1]
        if any(other.name == fd.name for other in owner.fields):
            raise DefinitionError(f"{where}: duplicate field {fd.name} in {owner.name}")
        owner.fields.append(fd)
        if fd.wire_type not in PRIMITIVES:
            cls = fd.class_name or fd.wire_type
            existing = known.get(cls)
            if existing is None:
                existing = known[cls] = StructDef(fd.wire_type, fd.meaning, cls=cls)
            elif existing.name != fd.wire_type:
                raise DefinitionError(
                    f"{where}: class {cls} is already the struct {existing.name}, "
                    f"not {fd.wire_type}"
                )
            fd.struct = existing
        elif fd.class_name is not None:
            raise DefinitionError(f"{where}: 'class' names a struct's class; {typ_of(fd)} is not")
        last = fd
    if header is None:
        raise DefinitionError(f"{source.name}: no 'api' header")
    for kind in ("request", "response"):
        if kind not in sections:
            raise DefinitionError(f"{source.name}: no {kind} section")
    for sd in known.values():
        if not sd.fields and sd not in sections.values():
            raise DefinitionError(f"{source.name}: struct {sd.cls} has no fields")
    name, key, versions, flexible, spec = header
    return ApiDef(
        name=name,
        key=key,
        versions=versions,
        flexible=flexible,
        spec=spec,
        doc=doc,
        request=sections["request"],
        response=sections["response"],
        source=source,
    )


def _parse_header(name: str, rest: str, where: str) -> tuple[str, int, str, str, str]:
    key: int | None = None
    versions = flexible = None
    spec = "4.0"
    for part in (p.strip() for p in rest.split(",")):
        word, _, value = part.partition(" ")
        value = value.strip()
        if word == "key" and value.isdigit():
            key = int(value)
        elif word == "versions":
            versions = _versions("v" + value, where)
        elif word == "flexible":
            flexible = "none" if value == "none" else _versions("v" + value, where)
        elif word == "spec" and value in SPECS:
            spec = value
        else:
            raise DefinitionError(f"{where}: cannot read {part!r} in the api header")
    if key is None or versions is None or flexible is None:
        raise DefinitionError(f"{where}: the api header needs key, versions and flexible")
    if versions.endswith("+"):
        raise DefinitionError(f"{where}: the api's versions need a highest version")
    return name, key, versions, flexible, spec


def _parse_field(m: re.Match[str], where: str, lineno: int) -> FieldDef:
    typ = m.group("type")
    is_array = typ.startswith("[]")
    base = typ[2:] if is_array else typ
    if base not in PRIMITIVES and not base[0].isupper():
        raise DefinitionError(f"{where}: unknown type {typ!r}")
    meaning = (m.group("meaning") or "").strip()
    if not meaning:
        raise DefinitionError(f"{where}: field {m.group('name')} needs a '// meaning'")
    versions, nullable = "0+", "none"
    tag: int | None = None
    tagged: str | None = None
    default: str | None = None
    ignorable = False
    class_name: str | None = None
    attrs = [a.strip() for a in m.group("attrs").split(",") if a.strip()]
    for attr in attrs:
        word, _, value = attr.partition(" ")
        value = value.strip()
        if _VERSIONS.match(attr):
            versions = _versions(attr, where)
        elif word == "nullable":
            nullable = _versions(value, where)
        elif word == "tag" and value.isdigit():
            tag = int(value)
        elif word == "tagged":
            tagged = _versions(value, where)
        elif word == "default" and value:
            default = _default(value, where)
        elif attr == "ignorable":
            ignorable = True
        elif word == "class" and re.fullmatch(r"[A-Z][A-Za-z0-9]*", value):
            class_name = value
        else:
            raise DefinitionError(f"{where}: cannot read the attribute {attr!r}")
    if tagged is not None and tag is None:
        raise DefinitionError(f"{where}: 'tagged' without 'tag'")
    if (
        nullable != "none"
        and not is_array
        and base in ("int8", "int16", "uint16", "int32", "uint32", "int64")
    ):
        raise DefinitionError(f"{where}: an integer field cannot be nullable")
    return FieldDef(
        name=m.group("name"),
        wire_type=base,
        is_array=is_array,
        versions=versions,
        nullable=nullable,
        tag=tag,
        tagged=tagged,
        default=default,
        ignorable=ignorable,
        meaning=meaning,
        line=lineno,
        class_name=class_name,
    )


def typ_of(fd: FieldDef) -> str:
    """The field's type as the definition spells it (``[]int32``, ``TopicData``)."""
    return ("[]" if fd.is_array else "") + fd.wire_type


def load_definitions(directory: Path = DEFINITIONS_DIR) -> list[ApiDef]:
    """Every definition in ``directory``, in API key order; keys and names must be unique."""
    apis = [parse(p.read_text(), p) for p in sorted(directory.glob("*.def"))]
    apis.sort(key=lambda a: a.key)
    for prev, cur in itertools.pairwise(apis):
        if prev.key == cur.key:
            raise DefinitionError(f"{prev.source.name} and {cur.source.name} share key {cur.key}")
    names = [a.name for a in apis]
    if len(set(names)) != len(names):
        raise DefinitionError("two definition files define the same API name")
    for api in apis:
        if api.module != snake(api.name):
            raise DefinitionError(f"{api.source.name}: name the file {snake(api.name)}.def")
    return apis


# --------------------------------------------------------------------------------------------
# The emitter
# --------------------------------------------------------------------------------------------

_BANNER = (
    "# Generated from kafka_async/protocol/definitions/{src}\n"
    "# by `make generate` (tools/generate_protocol.py): do not edit."
)


def _annotation(fd: FieldDef) -> str:
    base = fd.struct.cls if fd.struct is not None else PRIMITIVES[fd.wire_type][1]
    typ = f"list[{base}]" if fd.is_array else base
    if fd.nullable != "none":
        typ += " | None"
    return typ


def _init_default(fd: FieldDef) -> str:
    """Source of the ``__init__`` default; ``MISSING`` means a fresh value made in the body."""
    if fd.default is not None:
        return fd.default
    if fd.is_array:
        return "MISSING"
    if fd.struct is not None:
        return "None" if fd.nullable != "none" else "MISSING"
    return ZEROS[fd.wire_type]


def _fresh(fd: FieldDef) -> str:
    if fd.is_array:
        return "[]"
    assert fd.struct is not None
    return f"{fd.struct.cls}()"


def _schema_type(fd: FieldDef) -> str:
    base = _const(fd.struct.cls) if fd.struct is not None else PRIMITIVES[fd.wire_type][0]
    return f"array({base})" if fd.is_array else base


def _const(struct_name: str) -> str:
    return "_" + snake(struct_name).upper()


def _field_source(fd: FieldDef) -> str:
    args = [repr(fd.name), _schema_type(fd)]
    if fd.versions != "0+":
        args.append(repr(fd.versions))
    if fd.nullable != "none":
        args.append(f"nullable={fd.nullable!r}")
    if fd.default is not None:
        args.append(f"default={fd.default}")
    if fd.ignorable:
        args.append("ignorable=True")
    if fd.tag is not None:
        args.append(f"tag={fd.tag}")
    if fd.tagged is not None:
        args.append(f"tagged={fd.tagged!r}")
    return f"Field({', '.join(args)})"


def _doc(text: str, indent: str) -> list[str]:
    """A docstring: the meaning, capitalised and ended with a full stop, wrapped at 100."""
    text = text.replace("\\", "\\\\").replace('"""', "'''").strip()
    if not text:
        return []
    text = text[0].upper() + text[1:]
    if not text.endswith((".", "?", "!")):
        text += "."
    if len(indent) + len(text) + 6 <= 100:
        return [f'{indent}"""{text}"""']
    lines = textwrap.wrap(text, 100 - len(indent))
    return [f'{indent}"""{lines[0]}', *(indent + line for line in lines[1:]), f'{indent}"""']


def emit_module(api: ApiDef) -> str:
    """The source of ``apis/<module>.py`` (before formatting)."""
    structs = api.structs()
    all_fields = [fd for sd in structs for fd in sd.fields]
    uses_uuid = any(fd.wire_type == "uuid" for fd in all_fields)
    zero_uuid = any(fd.wire_type == "uuid" and fd.default is None for fd in all_fields)
    uses_missing = any(_init_default(fd) == "MISSING" for fd in all_fields)
    uses_array = any(fd.is_array for fd in all_fields)
    prims = sorted({PRIMITIVES[fd.wire_type][0] for fd in all_fields if fd.struct is None})
    names = [*prims, "Api", "Field", "Message", "StructDef"]
    if uses_missing:
        names.append("MISSING")
    if uses_array:
        names.append("array")
    out = [_BANNER.format(src=api.source.name)]
    summary = " ".join(api.doc).strip() or f"{api.name} (key {api.key})."
    out.extend(textwrap.wrap('"""' + summary, 100))
    out.append("")
    out.append(
        f"Versions {api.versions}, flexible {api.flexible}; checked against Kafka {api.spec}'s"
    )
    out.append("JSON message specs by tests/protocol/test_protocol_crosscheck.py.")
    out.append('"""')
    out.append("")
    out.append("from __future__ import annotations")
    out.append("")
    if uses_uuid:
        out.append("import uuid")
        out.append("")
    if zero_uuid:
        out.append("from ..codec import ZERO_UUID")
    out.append(f"from ..schema import {', '.join(sorted(names, key=_import_key))}")
    out.append("")
    for sd in structs:
        out.append("")
        out.append(f"class {sd.cls}(Message):")
        out.extend(_doc(sd.meaning or f"{sd.cls}", "    "))
        out.append("")
        slots = ", ".join(repr(fd.name) for fd in sd.fields)
        out.append(f"    __slots__ = ({slots}{',' if len(sd.fields) == 1 else ''})")
        out.append("")
        for fd in sd.fields:
            out.append(f"    {fd.name}: {_annotation(fd)}")
            out.extend(_doc(fd.meaning, "    "))
        out.append("")
        if sd.fields:
            params = ", ".join(
                f"{fd.name}: {_annotation(fd)} = {_init_default(fd)}" for fd in sd.fields
            )
            out.append(f"    def __init__(self, *, {params}) -> None:")
            for fd in sd.fields:
                if _init_default(fd) == "MISSING":
                    fresh = f"{_fresh(fd)} if {fd.name} is MISSING else {fd.name}"
                    out.append(f"        self.{fd.name} = {fresh}")
                else:
                    out.append(f"        self.{fd.name} = {fd.name}")
        else:
            out.append("    def __init__(self) -> None:")
            out.append("        pass")
    out.append("")
    out.append("")
    out.append("# The schema the codecs are compiled from (nested structs first).")
    for sd in api.structs_bottom_up():
        fields = ", ".join(_field_source(fd) for fd in sd.fields)
        out.append(f"{_const(sd.cls)} = StructDef({sd.name!r}, [{fields}], {sd.cls})")
    out.append("")
    req, resp = api.request.name, api.response.name
    out.append(
        f"{api.constant}: Api[{req}, {resp}] = Api({api.key}, {api.name!r}, {api.versions!r}, "
        f"{api.flexible!r}, {_const(req)}, {_const(resp)}, {req}, {resp})"
    )
    out.append(f'"""{api.name} (key {api.key}), versions {api.versions}."""')
    out.append("")
    return "\n".join(out)


def _import_key(name: str) -> tuple[int, str]:
    # ruff's isort order: CONSTANTS, then Classes, then functions.
    if name.isupper():
        return (0, name)
    if name[0].isupper():
        return (1, name)
    return (2, name)


def emit_registry(apis: list[ApiDef]) -> str:
    """The source of ``apis/__init__.py``.

    The registry is lazy: a constant's module is imported on first use, so a client loads
    the few APIs it speaks, not every generated module (``ALL_APIS`` and ``BY_KEY`` import
    them all). mypy sees plain imports under ``TYPE_CHECKING``.
    """
    out = [_BANNER.format(src="*.def")]
    out.append('"""Every Kafka API the client speaks, one generated module each.')
    out.append("")
    out.append("Import the constants (``PRODUCE``, ``FETCH``, ...) from here and the message")
    out.append("classes from the module of their API (``from kafka_async.protocol.apis.produce")
    out.append("import ProduceRequest``), or look an API up by its key in ``BY_KEY``. ``ALL_APIS``")
    out.append("lists them in key order. The module of an API is imported when its constant is")
    out.append("first used, so importing a client loads only the APIs it speaks.")
    out.append('"""')
    out.append("")
    out.append("from __future__ import annotations")
    out.append("")
    out.append("import importlib")
    out.append("from typing import TYPE_CHECKING, Any")
    out.append("")
    out.append("if TYPE_CHECKING:")
    out.append("    from ..schema import AnyApi")
    for api in sorted(apis, key=lambda a: a.module):
        out.append(f"    from .{api.module} import {api.constant}")
    out.append("")
    out.append("    #: Every API, in key order (importing every module).")
    out.append("    ALL_APIS: tuple[AnyApi, ...]")
    out.append("    #: Every API by its key (importing every module).")
    out.append("    BY_KEY: dict[int, AnyApi]")
    out.append("")
    out.append("#: The constant of each API -> the module defining it, in key order.")
    out.append("_MODULES: dict[str, str] = {")
    for api in apis:
        out.append(f"    {api.constant!r}: {api.module!r},")
    out.append("}")
    out.append("")
    out.append("")
    # Defined for the run time only: mypy, seeing a module __getattr__, would accept any
    # name imported from here, a misspelt constant too.
    out.append("if not TYPE_CHECKING:")
    out.append("")
    out.append("    def __getattr__(name: str) -> Any:")
    out.append("        # PEP 562: runs once per name; the value is then a plain module global.")
    out.append("        module = _MODULES.get(name)")
    out.append("        if module is not None:")
    out.append("            value = getattr(importlib.import_module(f'.{module}', __name__), name)")
    out.append("        elif name == 'ALL_APIS':")
    out.append("            value = tuple(__getattr__(constant) for constant in _MODULES)")
    out.append("        elif name == 'BY_KEY':")
    out.append("            value = {api.key: api for api in __getattr__('ALL_APIS')}")
    out.append("        else:")
    out.append("            raise AttributeError(f'module {__name__!r} has no attribute {name!r}')")
    out.append("        globals()[name] = value")
    out.append("        return value")
    out.append("")
    out.append("    def __dir__() -> list[str]:")
    out.append("        return sorted([*globals(), *__all__])")
    out.append("")
    out.append("")
    names = sorted(["ALL_APIS", "BY_KEY", *(a.constant for a in apis)])
    out.append("__all__ = [")
    for name in names:
        out.append(f"    {name!r},")
    out.append("]")
    out.append("")
    return "\n".join(out).replace("'", '"')


def _ruff() -> str:
    beside = Path(sys.executable).parent / "ruff"
    if beside.exists():
        return str(beside)
    found = shutil.which("ruff")
    if found is None:
        raise RuntimeError("the generator formats its output with ruff; install the dev extras")
    return found


#: pyproject.toml's ruff settings, given explicitly: formatting from stdin must not depend on
#: the folder ruff is started in (tools/dist_check.py runs the staleness tests from a copy).
_RUFF_SETTINGS = ("--line-length", "100", "--target-version", "py310")


def format_source(source: str, filename: str) -> str:
    """Format generated source as ``make lint`` expects (ruff's isort and formatter)."""
    ruff = _ruff()
    isort = ("check", *_RUFF_SETTINGS, "--select", "I", "--fix", "--quiet")
    fixed = subprocess.run(
        [ruff, *isort, "--stdin-filename", filename, "-"],
        input=source,
        capture_output=True,
        text=True,
        check=False,
    )
    text = fixed.stdout if fixed.returncode in (0, 1) and fixed.stdout else source
    done = subprocess.run(
        [ruff, "format", *_RUFF_SETTINGS, "--stdin-filename", filename, "-"],
        input=text,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def render(directory: Path = DEFINITIONS_DIR, out_dir: Path = APIS_DIR) -> dict[Path, str]:
    """Every generated file, path -> formatted text."""
    apis = load_definitions(directory)
    files: dict[Path, str] = {}
    for api in apis:
        path = out_dir / f"{api.module}.py"
        files[path] = format_source(emit_module(api), str(path))
    init = out_dir / "__init__.py"
    files[init] = format_source(emit_registry(apis), str(init))
    return files


def stale(files: dict[Path, str], out_dir: Path = APIS_DIR) -> list[str]:
    """Generated files that differ from ``files``, and stray modules in ``out_dir``."""
    problems = [
        str(path) for path, text in files.items() if not path.exists() or path.read_text() != text
    ]
    problems += [
        f"{path} (no definition)" for path in sorted(out_dir.glob("*.py")) if path not in files
    ]
    return problems


def main(argv: list[str] | None = None) -> int:
    """Write the generated modules, or with ``--check`` only report stale ones."""
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
            print(f"wrote {path.relative_to(PROTOCOL_DIR.parents[1])}")
    for path in sorted(APIS_DIR.glob("*.py")):
        if path not in files:
            path.unlink()
            print(f"removed {path.relative_to(PROTOCOL_DIR.parents[1])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
