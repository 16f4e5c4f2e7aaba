"""Print a draft of our schema-DSL definitions from Kafka's JSON message specs.

Usage: ``python tools/protocol_draft.py Produce Fetch > draft.py``. The output is a starting
point that a person reviews; the committed definitions live in
``kafka_async/protocol/apis/`` and are checked against the JSON by
``tests/protocol/test_protocol_crosscheck.py``. Descriptions ("about") are never emitted.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

SPEC_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "kafka-protocol" / "message"

PRIMITIVES = {
    "int8": "INT8",
    "int16": "INT16",
    "uint16": "UINT16",
    "int32": "INT32",
    "uint32": "UINT32",
    "int64": "INT64",
    "float64": "FLOAT64",
    "bool": "BOOL",
    "uuid": "UUID",
    "string": "STRING",
    "bytes": "BYTES",
    "records": "RECORDS",
}


def load_spec(name: str) -> dict[str, Any]:
    """Load one JSON spec, dropping its ``//`` comment lines."""
    text = (SPEC_DIR / f"{name}.json").read_text()
    text = re.sub(r"^\s*//.*$", "", text, flags=re.M)
    return dict(json.loads(text))


def snake(name: str) -> str:
    """``ThrottleTimeMs`` -> ``throttle_time_ms`` (acronyms kept together)."""
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s)
    return s.lower()


def upper(name: str) -> str:
    return snake(name).upper()


def parse_default(typ: str, value: Any) -> Any:
    if value == "null":
        return None
    if typ in ("int8", "int16", "uint16", "int32", "uint32", "int64"):
        return int(value, 0) if isinstance(value, str) else int(value)
    if typ == "bool":
        return value if isinstance(value, bool) else value == "true"
    if typ == "float64":
        return float(value)
    return value


ZEROS: dict[str, Any] = {
    "int8": 0,
    "int16": 0,
    "uint16": 0,
    "int32": 0,
    "uint32": 0,
    "int64": 0,
    "float64": 0.0,
    "bool": False,
    "string": "",
    "bytes": b"",
}


class Drafter:
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.common: dict[str, dict[str, Any]] = {}
        self.emitted: dict[str, str] = {}
        self.pre: list[str] = []

    def struct_expr(self, sname: str, fields: list[dict[str, Any]], indent: int) -> str:
        body = self.fields_expr(fields, indent + 4)
        return f'struct("{sname}", {body})'

    def named(self, sname: str) -> str:
        if sname in self.emitted:
            return self.emitted[sname]
        var = f"_{self.prefix}_{upper(sname)}"
        cs = self.common[sname]
        self.emitted[sname] = var
        self.pre.append(f"{var} = {self.struct_expr(sname, cs['fields'], 0)}\n")
        return var

    def type_expr(self, fld: dict[str, Any], indent: int) -> str:
        t = fld["type"]
        is_array = t.startswith("[]")
        base = t[2:] if is_array else t
        if base in PRIMITIVES:
            e = PRIMITIVES[base]
        elif "fields" in fld:
            if base in self.common:
                e = self.named(base)
            else:
                e = self.struct_expr(base, fld["fields"], indent)
        else:
            e = self.named(base)
        return f"array({e})" if is_array else e

    def fields_expr(self, fields: list[dict[str, Any]], indent: int) -> str:
        parts = [self.field_expr(fl, indent) for fl in fields]
        return "[" + ", ".join(parts) + "]"

    def field_expr(self, fl: dict[str, Any], indent: int) -> str:
        args = [f'"{snake(fl["name"])}"', self.type_expr(fl, indent)]
        versions = fl["versions"]
        if versions != "0+":
            args.append(f'"{versions}"')
        nv = fl.get("nullableVersions")
        if nv:
            args.append(f'nullable="{nv}"')
        if "default" in fl:
            base = fl["type"]
            d = parse_default(base, fl["default"])
            if d is None or base.startswith("[]") or base not in ZEROS or d != ZEROS[base]:
                args.append(f"default={d!r}")
        if fl.get("ignorable"):
            args.append("ignorable=True")
        if "tag" in fl:
            args.append(f"tag={fl['tag']}")
            tv = fl.get("taggedVersions", versions)
            if tv != versions:
                args.append(f'tagged="{tv}"')
        return "f(" + ", ".join(args) + ")"


def _prefixed(text: str, prefix: str) -> str:
    return text.replace("_REQ_", f"_{prefix}_REQ_").replace("_RESP_", f"_{prefix}_RESP_")


def draft(api: str) -> str:
    req = load_spec(f"{api}Request")
    resp = load_spec(f"{api}Response")
    out: list[str] = []
    parts = []
    for kind, spec in (("request", req), ("response", resp)):
        d = Drafter("REQ" if kind == "request" else "RESP")
        for cs in spec.get("commonStructs", []):
            d.common[cs["name"]] = cs
        body = d.fields_expr(spec["fields"], 4)
        out.extend(d.pre)
        parts.append(f"{kind}={body}")
    prefix = upper(api)
    out = [_prefixed(line, prefix) for line in out]
    parts = [_prefixed(p, prefix) for p in parts]
    out.append(
        f'{upper(api)} = Api({req["apiKey"]}, "{api}", "{req["validVersions"]}", '
        f'"{req["flexibleVersions"]}", {", ".join(parts)})\n'
    )
    if req["validVersions"] != resp["validVersions"]:
        out.append(f"# WARNING: response validVersions {resp['validVersions']}\n")
    if req["flexibleVersions"] != resp["flexibleVersions"]:
        out.append(f"# WARNING: response flexibleVersions {resp['flexibleVersions']}\n")
    return "\n".join(out)


if __name__ == "__main__":
    for name in sys.argv[1:]:
        print(draft(name))
        print()
