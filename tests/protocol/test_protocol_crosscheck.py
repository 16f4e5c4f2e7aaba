"""Every API definition agrees with Kafka's own JSON message specs.

Reads ``<Name>Request.json`` and ``...Response.json`` from ``../shared/kafka-protocol/message``
(Kafka 4.0.0-SNAPSHOT) or, for a definition whose header says ``spec 4.1``, from
``../shared/kafka-protocol-4.1/message`` (the 4.1.1 release) or, for ``spec 4.4``, from the
kafka-clients 4.4.0 jar (unpacked by :func:`_jar_specs`), and walks both trees side by
side: field order and names (CamelCase -> snake_case), types
(arrays and nested structs, including struct names), versions, nullable versions, tags and
tagged versions, defaults, the ignorable flag, and the API's key, valid and flexible
versions. Any difference fails with the path of the field that differs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from kafka_async.protocol.apis import ALL_APIS, BY_KEY
from kafka_async.protocol.schema import AnyApi, Array, Field, Primitive, StructDef, Versions
from kafka_async.testing.plugin import skip_or_fail
from tools import generate_protocol as generate

SHARED = Path(__file__).resolve().parents[2].parent / "shared"


def _jar_specs(version: str) -> Path:
    """Kafka's message specs inside the kafka-clients jar of ``version`` (the plugin's broker
    cache, else ``~/.m2``, else fetched as the plugin fetches a broker), unpacked once under
    the cache; a missing path when there is no jar (the test then skips, or fails in CI)."""
    import zipfile

    from kafka_async.testing.apache import cache_root, ensure_distribution

    target = cache_root() / f"kafka-protocol-{version}" / "message"
    if target.is_dir():
        return target
    jar_name = f"kafka-clients-{version}.jar"
    jars = [
        cache_root() / "apache-kafka" / version / "libs" / jar_name,
        Path.home() / ".m2/repository/org/apache/kafka/kafka-clients" / version / jar_name,
    ]
    if not any(jar.is_file() for jar in jars):
        try:
            ensure_distribution(version)
        except Exception as exc:  # no Java, no registry: the caller skips with the path
            print(f"kafka-clients {version} not fetched: {exc}")
    for jar in jars:
        if jar.is_file():
            with zipfile.ZipFile(jar) as z:
                names = [n for n in z.namelist() if n.startswith("common/message/")]
                tmp = target.with_name(f"message.{os.getpid()}")
                for n in names:
                    if n.endswith(".json"):
                        (tmp / Path(n).name).parent.mkdir(parents=True, exist_ok=True)
                        (tmp / Path(n).name).write_bytes(z.read(n))
                if target.exists():  # another worker unpacked it meanwhile
                    shutil.rmtree(tmp)
                else:
                    os.replace(tmp, target)
            break
    return target


SPEC_DIRS = {
    "4.0": SHARED / "kafka-protocol" / "message",
    "4.1": SHARED / "kafka-protocol-4.1" / "message",
}
#: Specs read from a release's kafka-clients jar (fetched on first use, not at import).
JAR_SPECS = {"4.4": "4.4.0"}
SPEC_DIR = SPEC_DIRS["4.0"]
#: The spec each API is checked against (its definition's header).
SPEC_OF = {d.key: d.spec for d in generate.load_definitions()}


@pytest.fixture(autouse=True)
def _needs_the_specs() -> None:
    if not SPEC_DIR.is_dir():
        skip_or_fail(f"Kafka's message specs (../shared beside the checkout) not at {SPEC_DIR}")


_INTS = {"int8", "int16", "uint16", "int32", "uint32", "int64"}
_ZEROS: dict[str, Any] = {
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
    "records": None,
}


def load_spec(name: str, spec_dir: Path = SPEC_DIR) -> dict[str, Any]:
    text = (spec_dir / f"{name}.json").read_text()
    # The specs carry // comments, which JSON does not allow.
    text = re.sub(r"^\s*//.*$", "", text, flags=re.MULTILINE)
    return dict(json.loads(text))


def snake(name: str) -> str:
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s)
    return s.lower()


def versions(spec: str | None) -> Versions:
    return Versions.parse(spec)


def json_default(typ: str, fld: dict[str, Any]) -> Any:
    """The value Kafka's generator gives a field that is not set."""
    value = fld.get("default")
    if value == "null":
        return None
    if typ.startswith("[]"):
        return []
    if value is None:
        if typ == "uuid":
            return ...  # checked separately (all-zero UUID)
        return _ZEROS.get(typ, ...)
    if typ in _INTS:
        return int(value, 0) if isinstance(value, str) else int(value)
    if typ == "bool":
        return value if isinstance(value, bool) else value == "true"
    if typ == "float64":
        return float(value)
    return value


class Checker:
    def __init__(self, spec: dict[str, Any]) -> None:
        self.common = {cs["name"]: cs for cs in spec.get("commonStructs", [])}
        self.errors: list[str] = []

    def fail(self, path: str, what: str, ours: Any, kafka: Any) -> None:
        self.errors.append(f"{path}: {what} differs: ours={ours!r} kafka={kafka!r}")

    def struct(self, path: str, ours: StructDef, kafka_fields: list[dict[str, Any]]) -> None:
        our_names = [fld.name for fld in ours.fields]
        kafka_names = [snake(fld["name"]) for fld in kafka_fields]
        if our_names != kafka_names:
            self.fail(path, "field list (names and order)", our_names, kafka_names)
            return
        for fld, kfld in zip(ours.fields, kafka_fields, strict=True):
            self.field(f"{path}.{fld.name}", fld, kfld)

    def field(self, path: str, fld: Field, kfld: dict[str, Any]) -> None:
        kv = versions(kfld["versions"])
        if fld.versions != kv:
            self.fail(path, "versions", str(fld.versions), kfld["versions"])
        knull = versions(kfld.get("nullableVersions"))
        if fld.nullable != knull:
            self.fail(path, "nullableVersions", str(fld.nullable), kfld.get("nullableVersions"))
        if fld.tag != kfld.get("tag"):
            self.fail(path, "tag", fld.tag, kfld.get("tag"))
        if "tag" in kfld:
            ktagged = versions(kfld.get("taggedVersions", kfld["versions"]))
            if fld.tagged != ktagged:
                self.fail(path, "taggedVersions", str(fld.tagged), str(ktagged))
        if fld.ignorable != bool(kfld.get("ignorable", False)):
            self.fail(path, "ignorable", fld.ignorable, kfld.get("ignorable", False))
        self.type(path, fld, kfld)

    def type(self, path: str, fld: Field, kfld: dict[str, Any]) -> None:
        ktype: str = kfld["type"]
        ours = fld.type
        is_array = ktype.startswith("[]")
        base = ktype[2:] if is_array else ktype
        if is_array:
            if not isinstance(ours, Array):
                self.fail(path, "type", ours, ktype)
                return
            elem = ours.elem
        else:
            if isinstance(ours, Array):
                self.fail(path, "type", ours, ktype)
                return
            elem = ours
        if base in _ZEROS or base == "uuid":
            if not isinstance(elem, Primitive) or elem.name != base:
                self.fail(path, "type", ours, ktype)
                return
            self.default(path, fld, ktype, kfld)
            return
        if not isinstance(elem, StructDef):
            self.fail(path, "type", ours, ktype)
            return
        if elem.name != base:
            self.fail(path, "struct name", elem.name, base)
        if "fields" in kfld:
            sub = kfld["fields"]
        elif base in self.common:
            sub = self.common[base]["fields"]
        else:
            self.fail(path, "struct definition", elem.name, f"{base} (not found in spec)")
            return
        if "default" in kfld:
            self.default(path, fld, ktype, kfld)
        self.struct(path, elem, sub)

    def default(self, path: str, fld: Field, ktype: str, kfld: dict[str, Any]) -> None:
        expected = json_default(ktype, kfld)
        actual = fld.make_default()
        if expected is ...:
            if ktype == "uuid" and (actual is None or actual.int != 0):
                self.fail(path, "default", actual, "zero UUID")
            return
        if isinstance(actual, memoryview):
            actual = bytes(actual)
        if actual != expected or type(actual) is not type(expected):
            self.fail(path, "default", actual, kfld.get("default", "(type zero)"))


#: Definitions a version ahead of their spec file where Kafka's own JSON says the new version
#: is the previous one on the wire: (the spec's validVersions, ours). Produce v12 "is the same
#: as version 11 (KIP-890)" (ProduceRequest.json of 4.1 and 4.4), and in a transaction means
#: transactions version 2; the later specs (3-13) drop v0-2 and add topic ids (v13).
_SAME_AS_PREVIOUS = {"Produce": ("0-11", "0-12")}


@pytest.mark.parametrize("api", ALL_APIS, ids=lambda a: a.name)
def test_api_matches_kafka_spec(api: AnyApi) -> None:
    which = SPEC_OF[api.key]
    spec_dir = SPEC_DIRS[which] if which in SPEC_DIRS else _jar_specs(JAR_SPECS[which])
    if not spec_dir.is_dir():
        skip_or_fail(f"Kafka's message specs (../shared beside the checkout) not at {spec_dir}")
    req = load_spec(f"{api.name}Request", spec_dir)
    resp = load_spec(f"{api.name}Response", spec_dir)
    problems: list[str] = []
    for kind, spec, ours in (("request", req, api.request), ("response", resp, api.response)):
        if spec["apiKey"] != api.key:
            problems.append(f"{kind}: api key ours={api.key} kafka={spec['apiKey']}")
        if versions(spec["validVersions"]) != api.versions and _SAME_AS_PREVIOUS.get(api.name) != (
            spec["validVersions"],
            str(api.versions),
        ):
            problems.append(
                f"{kind}: validVersions ours={api.versions} kafka={spec['validVersions']}"
            )
        if versions(spec["flexibleVersions"]) != api.flexible:
            problems.append(
                f"{kind}: flexibleVersions ours={api.flexible} kafka={spec['flexibleVersions']}"
            )
        if ours.name != spec["name"]:
            problems.append(f"{kind}: struct name ours={ours.name} kafka={spec['name']}")
        checker = Checker(spec)
        checker.struct(ours.name, ours, spec["fields"])
        problems.extend(checker.errors)
    assert not problems, "\n".join(problems)


def test_by_key_is_complete() -> None:
    assert set(BY_KEY) == {api.key for api in ALL_APIS}
    for key, api in BY_KEY.items():
        assert api.key == key


def test_checker_catches_a_mismatch() -> None:
    """The checker itself must notice a wrong field, or the tests above prove nothing."""
    from kafka_async.protocol.schema import INT32, f, struct

    spec = load_spec("ProduceRequest")
    bad = struct(
        "ProduceRequest",
        [
            f("transactional_id", INT32, "3+"),  # wrong type, nullable versions lost
            f("acks", INT32),  # wrong width
        ],
    )
    checker = Checker(spec)
    checker.struct("ProduceRequest", bad, spec["fields"])
    assert checker.errors  # field list differs (timeout_ms, topic_data missing)
    checker = Checker(spec)
    checker.struct("ProduceRequest", bad, spec["fields"][:2])
    joined = "\n".join(checker.errors)
    assert "transactional_id: nullableVersions" in joined
    assert "transactional_id: type" in joined
    assert "acks: type" in joined
