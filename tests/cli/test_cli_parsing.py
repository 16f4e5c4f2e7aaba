"""The command line's pure parts: argument parsing, value parsers, output formatting."""

from __future__ import annotations

import io
import json
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_async.cli.main import build_parser, describe_error, main
from kafka_async.cli.output import Output
from kafka_async.cli.parsing import (
    StartPosition,
    UsageError,
    compile_template,
    parse_header,
    parse_kv,
    parse_partitions,
    parse_rate,
    parse_start,
    record_json,
    split_key,
)

if sys.version_info >= (3, 11):
    from builtins import BaseExceptionGroup, ExceptionGroup
else:  # pragma: no cover - the backport anyio depends on
    from exceptiongroup import BaseExceptionGroup, ExceptionGroup

from kafka_async.errors import (
    KafkaConnectionError,
    NoBrokersAvailableError,
    UnknownTopicOrPartitionError,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("beginning", StartPosition("beginning")),
        ("earliest", StartPosition("beginning")),
        ("END", StartPosition("end")),
        ("stored", StartPosition("stored")),
        ("42", StartPosition("offset", 42)),
        ("-10", StartPosition("relative", 10)),
        ("@1700000000000", StartPosition("timestamp", 1700000000000)),
    ],
)
def test_parse_start(text: str, expected: StartPosition) -> None:
    assert parse_start(text) == expected


@pytest.mark.parametrize("text", ["", "soon", "@", "@-5", "@abc", "1.5"])
def test_parse_start_rejects(text: str) -> None:
    with pytest.raises(UsageError):
        parse_start(text)


def test_parse_partitions() -> None:
    assert parse_partitions("2,0,1") == [0, 1, 2]
    assert parse_partitions("0-3,7") == [0, 1, 2, 3, 7]
    assert parse_partitions("1,1") == [1]
    for bad in ("", "a", "3-1", "-1", ","):
        with pytest.raises(UsageError):
            parse_partitions(bad)


def test_parse_kv_and_headers() -> None:
    assert parse_kv("retention.ms=100") == ("retention.ms", "100")
    assert parse_kv("a=b=c") == ("a", "b=c")
    assert parse_kv("empty=") == ("empty", "")
    assert parse_header("trace=abc") == ("trace", b"abc")
    for bad in ("novalue", "=x"):
        with pytest.raises(UsageError):
            parse_kv(bad)


def test_parse_rate() -> None:
    assert parse_rate("100") == 100.0
    assert parse_rate("2.5/s") == 2.5
    for bad in ("0", "-1", "fast", "10/m"):
        with pytest.raises(UsageError):
            parse_rate(bad)


def test_split_key() -> None:
    assert split_key(b"k:v:w", b":") == (b"k", b"v:w")
    assert split_key(b"no-separator", b":") == (None, b"no-separator")
    assert split_key(b"k:v", None) == (None, b"k:v")
    assert split_key(b":v", b":") == (b"", b"v")


def test_compile_template() -> None:
    assert compile_template("{offset}\\t{value}") == "{offset}\t{value}"
    assert compile_template("{key!r:>5}") == "{key!r:>5}"
    with pytest.raises(UsageError, match="unknown field"):
        compile_template("{nope}")
    with pytest.raises(UsageError):
        compile_template("{unclosed")


def test_record_json_text_and_binary() -> None:
    line = record_json(
        topic="t",
        partition=1,
        offset=5,
        timestamp=10,
        timestamp_type=0,
        key=b"k",
        value=b"\xff\x00",
        headers=[("h", b"x"), ("h", b"y")],
    )
    obj = json.loads(line)
    assert obj["key"] == "k"
    assert obj["value"] == "/wA="
    assert obj["value_encoding"] == "base64"
    assert "key_encoding" not in obj
    assert obj["headers"] == [["h", "x"], ["h", "y"]]
    assert (obj["topic"], obj["partition"], obj["offset"], obj["timestamp"]) == ("t", 1, 5, 10)
    null = json.loads(
        record_json(
            topic="t",
            partition=0,
            offset=0,
            timestamp=0,
            timestamp_type=0,
            key=None,
            value=None,
            headers=[],
        )
    )
    assert null["key"] is None
    assert null["value"] is None


def test_plain_table_is_aligned() -> None:
    buf = io.StringIO()
    out = Output(buf, io.StringIO(), use_rich=False)
    out.table(["A", "LONGER"], [(1, "x"), ("wide-cell", None)])
    assert buf.getvalue().splitlines() == [
        "A          LONGER",
        "1          x",
        "wide-cell",
    ]


def test_rich_table_on_a_forced_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("rich")
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    buf = io.StringIO()
    out = Output(buf, io.StringIO(), use_rich=True)
    out.table(["NAME"], [("orders",)])
    text = buf.getvalue()
    assert "orders" in text
    assert "\x1b[" in text  # coloured


def test_no_colour_when_not_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    err = io.StringIO()
    out = Output(io.StringIO(), err, use_rich=True)
    out.error("boom")
    assert err.getvalue() == "kafka-async: error: boom\n"


def test_describe_error_is_one_line() -> None:
    boot = "127.0.0.1:1"
    assert describe_error(NoBrokersAvailableError("x\ny"), boot) == (
        "cannot reach the broker at 127.0.0.1:1: x y"
    )
    assert describe_error(KafkaConnectionError("reset"), boot).startswith("cannot reach")
    msg = describe_error(UnknownTopicOrPartitionError("topic 'x' does not exist"), boot)
    assert msg == "topic 'x' does not exist"
    assert describe_error(FileNotFoundError(2, "No such file", "in.txt"), boot) == (
        "No such file: in.txt"
    )


COMMANDS = [
    [],
    ["broker"],
    ["topics"],
    ["topics", "list"],
    ["topics", "describe"],
    ["topics", "create"],
    ["topics", "delete"],
    ["topics", "alter"],
    ["produce"],
    ["consume"],
    ["groups"],
    ["groups", "list"],
    ["groups", "describe"],
    ["groups", "delete"],
    ["groups", "reset-offsets"],
    ["offsets"],
    ["bench"],
    ["bench", "produce"],
    ["bench", "consume"],
]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a) or "top")
def test_help_everywhere(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args([*argv, "--help"])
    assert info.value.code == 0
    assert "usage: kafka-async" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["nope"],
        ["topics"],
        ["topics", "create"],
        ["produce"],
        ["produce", "t", "--compression", "brotli"],
        ["consume", "t", "--json", "--format", "{value}"],
        ["groups", "reset-offsets", "g"],
        ["offsets", "t", "--bogus"],
    ],
)
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "kafka-async" in err
    assert "Traceback" not in err


def test_bad_values_found_after_parsing_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    # Checked before any connection is attempted, so no broker is needed.
    assert main(["-b", "127.0.0.1:1", "consume", "t", "--from", "later"]) == 2
    assert "bad --from" in capsys.readouterr().err
    assert main(["-b", "127.0.0.1:1", "topics", "create", "bad name!"]) == 2
    assert main(["-b", "127.0.0.1:1", "consume", "t", "--format", "{nope}"]) == 2


def test_bootstrap_option_before_or_after_the_command() -> None:
    parser = build_parser()
    before = parser.parse_args(["-b", "h:1", "topics", "list"])
    after = parser.parse_args(["topics", "list", "-b", "h:2"])
    neither = parser.parse_args(["topics", "list"])
    assert before.bootstrap_servers == "h:1"
    assert after.bootstrap_servers == "h:2"
    assert neither.bootstrap_servers is None


def test_bootstrap_defaults_to_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from kafka_async.cli.main import bootstrap_of

    args = build_parser().parse_args(["topics", "list"])
    monkeypatch.delenv("KAFKA_BOOTSTRAP_SERVERS", raising=False)
    assert bootstrap_of(args) == "localhost:9092"
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", "env:9")
    assert bootstrap_of(args) == "env:9"


def test_plain_output_without_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    # An import of a module mapped to None raises ImportError: rich "not installed".
    monkeypatch.setitem(sys.modules, "rich", None)
    monkeypatch.setenv("FORCE_COLOR", "1")
    buf, err = io.StringIO(), io.StringIO()
    out = Output(buf, err)
    assert out.rich is False
    out.table(["NAME"], [("orders",)])
    with out.progress("work", 10) as bar:
        bar.advance(10)
    out.error("boom")
    assert buf.getvalue() == "NAME\norders\n"
    assert err.getvalue() == "kafka-async: error: boom\n"
    assert bar.completed == 10


# -- properties ----------------------------------------------------------------------------


def _decode_field(obj: dict[str, object], name: str) -> bytes | None:
    import base64

    value = obj[name]
    if value is None:
        return None
    assert isinstance(value, str)
    if obj.get(f"{name}_encoding") == "base64":
        return base64.b64decode(value)
    return value.encode("utf-8")


@given(key=st.none() | st.binary(max_size=40), value=st.none() | st.binary(max_size=200))
def test_record_json_is_lossless(key: bytes | None, value: bytes | None) -> None:
    obj = json.loads(
        record_json(
            topic="t",
            partition=0,
            offset=1,
            timestamp=2,
            timestamp_type=0,
            key=key,
            value=value,
            headers=[],
        )
    )
    assert _decode_field(obj, "key") == key
    assert _decode_field(obj, "value") == value


@given(
    key=st.binary(max_size=20).filter(lambda b: b"\t" not in b),
    value=st.binary(max_size=50),
)
def test_split_key_inverts_joining(key: bytes, value: bytes) -> None:
    assert split_key(key + b"\t" + value, b"\t") == (key, value)


def test_runtime_errors_inside_task_groups_are_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import kafka_async.cli.commands as commands

    async def failing(args: object, out: object) -> int:
        raise ExceptionGroup("wrapped", [UnknownTopicOrPartitionError("topic 'x' does not exist")])

    monkeypatch.setattr(commands, "cmd_offsets", failing)
    assert main(["offsets", "x"]) == 1
    err = capsys.readouterr().err
    assert err == "kafka-async: error: topic 'x' does not exist\n"


def test_interrupt_inside_a_task_group_exits_130(monkeypatch: pytest.MonkeyPatch) -> None:
    import kafka_async.cli.commands as commands

    async def interrupted(args: object, out: object) -> int:
        raise BaseExceptionGroup("wrapped", [KeyboardInterrupt()])

    monkeypatch.setattr(commands, "cmd_offsets", interrupted)
    assert main(["offsets", "x"]) == 130
