"""Print a draft definition file for a Kafka API from Kafka's JSON message specs.

Usage: ``python tools/protocol_draft.py ShareFetch --spec 4.1 > \\
kafka_async/protocol/definitions/share_fetch.def``. The draft carries every wire fact
(names, types, versions, nullable versions, tags, defaults, ignorable) but no meanings:
each field line ends with an empty ``//``, which the generator refuses, so a person writes
every meaning before ``make generate`` accepts the file. Kafka's "about" texts are never
copied. Then ``make generate`` and ``pytest tests/protocol`` (the cross-check compares the
definition with the same JSON). DESIGN.md, "Adding a Kafka API", walks through it.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SPEC_DIRS = {
    "4.0": ROOT.parent / "shared" / "kafka-protocol" / "message",
    "4.1": ROOT.parent / "shared" / "kafka-protocol-4.1" / "message",
}
PRIMITIVES = {
    "int8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "float64",
    "bool",
    "uuid",
    "string",
    "bytes",
    "records",
}


def load_spec(spec_dir: Path, name: str) -> dict[str, Any]:
    """One JSON spec, without its ``//`` comment lines."""
    text = (spec_dir / f"{name}.json").read_text()
    text = re.sub(r"^\s*//.*$", "", text, flags=re.MULTILINE)
    return dict(json.loads(text))


def snake(name: str) -> str:
    """``ThrottleTimeMs`` -> ``throttle_time_ms`` (acronyms kept together)."""
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s)
    return s.lower()


def _default(typ: str, value: Any) -> str | None:
    """The definition's ``default`` token, or None when it is the type's own zero."""
    if value == "null":
        return "null"
    if typ in ("bool",):
        text = str(value).lower()
        return None if text == "false" else text
    if typ in ("int8", "int16", "uint16", "int32", "uint32", "int64"):
        number = int(value, 0) if isinstance(value, str) else int(value)
        return None if number == 0 else str(number)
    if typ == "float64":
        return None if float(value) == 0.0 else repr(float(value))
    if typ == "string":
        return None if value == "" else json.dumps(value)
    return None


def _facts(fields: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The wire facts of ``fields`` (nested too), without the prose."""
    return [
        {k: (_facts(v) if k == "fields" else v) for k, v in f.items() if k != "about"}
        for f in fields
    ]


class Drafter:
    """Writes the field lines of a request and a response, defining each struct at its
    first use; a struct of the same name used again (Kafka's common structs, or the same
    struct in the request and the response) is named without fields. A different struct
    under a name already taken (Kafka's request and response files each have their own
    ``TopicData``, say) gets ``class <Message><Name>``, its own generated class."""

    def __init__(self) -> None:
        self.common: dict[str, dict[str, Any]] = {}
        self.defined: dict[str, list[dict[str, Any]]] = {}
        self.lines: list[str] = []
        #: The message being drafted (``DescribeQuorumResponse``): the prefix of a rename.
        self.message = ""

    def fields(self, fields: list[dict[str, Any]], depth: int) -> None:
        for fld in fields:
            self.field(fld, depth)

    def field(self, fld: dict[str, Any], depth: int) -> None:
        typ: str = fld["type"]
        base = typ.removeprefix("[]")
        attrs: list[str] = []
        if fld["versions"] != "0+":
            attrs.append("v" + fld["versions"])
        if fld.get("nullableVersions"):
            attrs.append("nullable v" + fld["nullableVersions"])
        if "tag" in fld:
            attrs.append(f"tag {fld['tag']}")
            tagged = fld.get("taggedVersions", fld["versions"])
            if tagged != fld["versions"]:
                attrs.append("tagged v" + tagged)
        if "default" in fld:
            token = (
                ("null" if fld["default"] == "null" else None)
                if typ.startswith("[]") or base not in PRIMITIVES
                else _default(base, fld["default"])
            )
            if token is not None:
                attrs.append("default " + token)
        if fld.get("ignorable"):
            attrs.append("ignorable")
        head = "  " * depth + f"{snake(fld['name'])}: {typ}"
        if base in PRIMITIVES:
            self.lines.append(head + "".join(", " + a for a in attrs) + "  //")
            return
        sub = fld.get("fields") or self.common.get(base, {}).get("fields")
        if sub is None:
            raise SystemExit(f"struct {base} has no fields in the spec")
        cls = base
        if base in self.defined and _facts(sub) != self.defined[base]:
            cls = self.message + base
            attrs.append(f"class {cls}")
        self.lines.append(head + "".join(", " + a for a in attrs) + "  //")
        if cls in self.defined:
            if _facts(sub) != self.defined[cls]:
                raise SystemExit(f"two different structs would both be class {cls}")
            return
        self.defined[cls] = _facts(sub)
        self.fields(sub, depth + 1)


def draft(name: str, spec_version: str) -> str:
    """The draft text of API ``name`` (``Produce``, ``ShareFetch``...)."""
    spec_dir = SPEC_DIRS[spec_version]
    req = load_spec(spec_dir, f"{name}Request")
    resp = load_spec(spec_dir, f"{name}Response")
    header = (
        f"api {name}: key {req['apiKey']}, versions {req['validVersions']}, "
        f"flexible {req['flexibleVersions']}"
    )
    if spec_version != "4.0":
        header += f", spec {spec_version}"
    out = [f"// {name}: (what the API does)", header, ""]
    drafter = Drafter()
    for kind, spec in (("request", req), ("response", resp)):
        drafter.common = {cs["name"]: cs for cs in spec.get("commonStructs", [])}
        drafter.lines = []
        drafter.message = spec["name"]
        drafter.fields(spec["fields"], 1)
        out.append(kind)
        out.extend(drafter.lines)
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    """Print the draft of each API named on the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("apis", nargs="+", help="API names, e.g. ShareFetch")
    parser.add_argument("--spec", choices=sorted(SPEC_DIRS), default="4.0")
    args = parser.parse_args(argv)
    for name in args.apis:
        sys.stdout.write(draft(name, args.spec))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
