"""The generated protocol modules match their definitions, and the types catch mistakes.

``kafka_async/protocol/apis/*.py`` are written by ``make generate`` from
``kafka_async/protocol/definitions/*.def``; a definition edited without regenerating (or a
generated file edited by hand) fails here. The last tests run mypy on small programs to show
that a misspelt field or a wrong type in a request body is a type error, not a run-time one.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from kafka_async.protocol.apis import ALL_APIS, BY_KEY
from kafka_async.protocol.apis.metadata import MetadataRequest, MetadataRequestTopic
from tools import generate_protocol as generate

ROOT = Path(__file__).resolve().parents[2]


def test_generated_modules_are_up_to_date() -> None:
    problems = generate.stale(generate.render())
    assert not problems, "run `make generate`; stale: " + ", ".join(problems)


def test_every_definition_is_registered() -> None:
    defs = generate.load_definitions()
    assert [d.key for d in defs] == [api.key for api in ALL_APIS]
    for d in defs:
        api = BY_KEY[d.key]
        assert api.name == d.name
        assert str(api.versions) == d.versions
        assert api.request_cls.__name__ == f"{d.name}Request"
        assert api.response_cls.__name__ == f"{d.name}Response"


def test_stale_check_notices_an_edited_definition(tmp_path: Path) -> None:
    """The staleness test above can fail: a changed meaning changes the generated text."""
    defs = tmp_path / "definitions"
    defs.mkdir()
    src = (generate.DEFINITIONS_DIR / "heartbeat.def").read_text()
    (defs / "heartbeat.def").write_text(src.replace("consumer group id", "the group"))
    files = generate.render(defs, generate.APIS_DIR)
    heartbeat = generate.APIS_DIR / "heartbeat.py"
    assert str(heartbeat) in generate.stale(files)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("api X: key 1, versions 0-1, flexible none\nrequest\n  a: int32\nresponse\n", "meaning"),
        ("api X: key 1, versions 0+, flexible none\nrequest\nresponse\n", "highest version"),
        (
            "api X: key 1, versions 0-1, flexible none\nrequest\n  a: int33  // m\nresponse\n",
            "type",
        ),
        ("api X: key 1, versions 0-1, flexible none\nrequest\n  a: int32, v2-1  // m\n", "empty"),
        (
            "api X: key 1, versions 0-1, flexible none\nrequest\n  a: T  // m\nresponse\n",
            "no fields",
        ),
        (
            "api X: key 1, versions 0-1, flexible none\nrequest\n  a: int32  // m\n"
            "  a: int32  // m\nresponse\n",
            "duplicate",
        ),
        ("api X: key 1, versions 0-1, flexible none\nrequest\n   a: int32  // m\n", "indent"),
        (
            "api X: key 1, versions 0-1, flexible none\nrequest\n  a: int32, nullable v0+  // m\n",
            "nullable",
        ),
        (
            "api X: key 1, versions 0-1, flexible none\nrequest\n  a: int32, class A  // m\n",
            "names a struct",
        ),
        (
            "api X: key 1, versions 0-1, flexible none\nrequest\n  a: S, class A  // m\n"
            "    x: int32  // m\n  b: T, class A  // m\nresponse\n",
            "already the struct S",
        ),
    ],
)
def test_bad_definitions_are_refused_with_the_line(text: str, message: str) -> None:
    with pytest.raises(generate.DefinitionError, match=message):
        generate.parse(text, Path("x.def"))


def test_generated_classes_are_slotted_and_typed() -> None:
    req = MetadataRequest(topics=[MetadataRequestTopic(name="a")])
    with pytest.raises(AttributeError):
        req.topicz = []  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="topicz"):
        MetadataRequest(topicz=[])  # type: ignore[call-arg]
    # Lists are never shared between instances.
    assert MetadataRequest().topics is not MetadataRequest().topics


def test_misspelt_or_mistyped_fields_are_type_errors(tmp_path: Path) -> None:
    """One mypy run over a correct function and four broken copies: only the copies fail,
    each with the error it should give."""
    good = """
        async def good(conn: BrokerConnection) -> list[str | None]:
            body = MetadataRequest(topics=[MetadataRequestTopic(name="orders")])
            resp = await conn.request(METADATA, body)
            return [t.name for t in resp.topics]
    """
    broken = {
        "misspelt": ('name="orders"', 'nmae="orders"', 'Unexpected keyword argument "nmae"'),
        "wrong_type": ('name="orders"', "name=7", 'incompatible type "int"; expected "str | None"'),
        "dict_body": ("(METADATA, body)", '(METADATA, {"topics": []})', "Cannot infer"),
        "response_typo": ("t.name for", "t.nme for", 'has no attribute "nme"'),
    }
    program = [
        "from kafka_async.net.connection import BrokerConnection",
        "from kafka_async.protocol.apis import METADATA",
        "from kafka_async.protocol.apis.metadata import MetadataRequest, MetadataRequestTopic",
        textwrap.dedent(good),
    ]
    for name, (old, new, _) in broken.items():
        assert old in good
        program.append(textwrap.dedent(good).replace("def good", f"def {name}").replace(old, new))
    path = tmp_path / "program.py"
    path.write_text("\n".join(program))
    mypy = shutil.which("mypy", path=str(Path(sys.executable).parent))
    if mypy is None:
        pytest.skip("mypy is not installed")
    out = subprocess.run(
        [mypy, "--strict", "--no-incremental", "--cache-dir", str(tmp_path / "c"), str(path)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    ).stdout
    lines = path.read_text().splitlines()
    errors: dict[str, list[str]] = {}
    for line in out.splitlines():
        parts = line.split(":", 3)
        if len(parts) == 4 and parts[2].strip() == "error":
            lineno = int(parts[1])
            func = next(
                ln.split("def ")[1].split("(")[0]
                for ln in reversed(lines[:lineno])
                if ln.startswith("async def ")
            )
            errors.setdefault(func, []).append(parts[3])
    assert "good" not in errors, out
    for name, (_, _, expected) in broken.items():
        assert any(expected in e for e in errors.get(name, [])), (name, out)


def test_a_renamed_struct_keeps_kafkas_name_on_the_wire() -> None:
    """``class PyName`` gives two different structs that Kafka names alike (one in the
    request, one in the response) a class each; the schema keeps Kafka's name, which the
    cross-check compares."""
    text = (
        "api X: key 1, versions 0, flexible 0+\n"
        "request\n"
        "  topics: []TopicData  // m\n"
        "    name: string  // m\n"
        "response\n"
        "  topics: []TopicData, class OutTopic  // m\n"
        "    name: string  // m\n"
        "    error_code: int16  // m\n"
        "  more: []TopicData, class OutTopic  // m\n"
    )
    api = generate.parse(text, Path("x.def"))
    structs = {sd.cls: sd.name for sd in api.structs()}
    assert structs == {
        "XRequest": "XRequest",
        "TopicData": "TopicData",
        "XResponse": "XResponse",
        "OutTopic": "TopicData",
    }
    source = generate.emit_module(api)
    assert "class OutTopic(Message):" in source
    assert "_OUT_TOPIC = StructDef('TopicData'" in source
    namespace: dict[str, Any] = {}
    code = source.replace("from ..", "from kafka_async.protocol.")
    exec(compile(code, "x.py", "exec"), namespace)
    out = namespace["XResponse"]()
    out.topics.append(namespace["OutTopic"](name="t", error_code=3))
    assert namespace["_OUT_TOPIC"].name == "TopicData"
    assert namespace["_OUT_TOPIC"].cls is namespace["OutTopic"]

    from kafka_async.protocol.apis import DESCRIBE_QUORUM
    from kafka_async.protocol.apis.describe_quorum import PartitionData, QuorumPartitionData

    assert QuorumPartitionData._schema.name == "PartitionData"
    assert PartitionData._schema.name == "PartitionData"
    assert QuorumPartitionData._schema is not PartitionData._schema
    assert DESCRIBE_QUORUM.response.name == "DescribeQuorumResponse"
