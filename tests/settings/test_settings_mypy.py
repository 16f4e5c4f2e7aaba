"""mypy --strict sees the typed settings: misspelt names and wrong value types are errors,
correct calls are clean, and ``Consumer`` infers its key/value types from the deserializers.

One mypy run checks a snippet of many calls; each line states what mypy must say about it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import kafka_async

# (code, expectation): "ok" (no error on that line), "error: <text>" (an error whose message
# contains <text>) or, for a reveal_type line, the revealed type.
CONSUMER = "kafka_async.consumer.consumer.Consumer"
CASES: list[tuple[str, str]] = [
    # Misspelt setting names.
    ('Producer(bootstrap_server="h:9092")', 'error: "bootstrap_server"'),
    ('Consumer("t", group="g")', 'error: "group"'),
    ("AdminClient(default_api_timeout=1000)", 'error: "default_api_timeout"'),
    ("AdminClient(linger_ms=5)", 'error: "linger_ms"'),
    # Wrong value types.
    ('Producer(linger_ms="5")', 'error: "linger_ms"'),
    ("Producer(acks=2)", 'error: "acks"'),
    ('Producer(compression_type="brotli")', 'error: "compression_type"'),
    ('Producer(security_protocol="TLS")', 'error: "security_protocol"'),
    ('Producer(sasl_mechanism="SCRAM-SHA-1")', 'error: "sasl_mechanism"'),
    ('Consumer("t", auto_offset_reset="first")', "error: No overload variant"),
    ('Consumer("t", isolation_level="committed")', "error: No overload variant"),
    ("Consumer(group_id=5)", "error: No overload variant"),
    ('Consumer(partition_assignment_strategy=["ranger"])', "error: 'ranger'"),
    ('AdminClient(default_api_timeout_ms="60s")', 'error: "default_api_timeout_ms"'),
    ("Consumer(key_deserializer=5)", "error: No overload variant"),
    ("Consumer(value_deserializer=lambda b: b, key_deserializer=len)", 'error: "key_deserializer"'),
    ("Producer(max_batch_size=None)", 'error: "max_batch_size"'),
    ('Consumer("t", group_protocol="new")', "error: No overload variant"),
    ('Producer(ssl_password=b"pw")', 'error: "ssl_password"'),
    ('ShareConsumer("t", group="g")', "error: No overload variant"),
    ('ShareConsumer("t", group_id="g", share_acknowledgement_mode="auto")', "error: No overload"),
    # Correct calls.
    ('ShareConsumer("t", group_id="g", share_acknowledgement_mode="explicit")', "ok"),
    ('Producer(enable_idempotence=None, metadata_wait_ms=None, compression_type="none")', "ok"),
    ('Consumer("t", group_protocol="consumer", group_remote_assignor="uniform")', "ok"),
    ('Producer("h:9092", acks="all", compression_type="zstd", linger_ms=5)', "ok"),
    ('Producer(bootstrap_servers=["h1:9092", "h2:9092"], acks=1, partitioner="round_robin")', "ok"),
    ('Producer(key_serializer=str.encode, value_serializer=lambda v: b"x", hooks=None)', "ok"),
    (
        'Consumer("a", "b", group_id="g", auto_offset_reset="earliest", '
        'isolation_level="read_committed", partition_assignment_strategy=["range", "sticky"])',
        "ok",
    ),
    ('AdminClient("h:9092", default_api_timeout_ms=1000, security_protocol="SASL_SSL")', "ok"),
    ("Producer(**p_settings)", "ok"),
    ("Consumer(**c_settings)", "ok"),
    ('bad: ProducerSettings = {"linger": 5}', 'error: "linger"'),
    # Key/value types.
    ('reveal_type(Consumer("t", bootstrap_servers="h:9092"))', f"{CONSUMER}[bytes, bytes]"),
    ("reveal_type(Consumer(**c_settings))", f"{CONSUMER}[bytes, bytes]"),
    ('reveal_type(Consumer("t", key_deserializer=to_str))', f"{CONSUMER}[str, bytes]"),
    ('reveal_type(Consumer("t", value_deserializer=to_int))', f"{CONSUMER}[bytes, int]"),
    (
        'reveal_type(Consumer("t", key_deserializer=to_str, value_deserializer=to_int))',
        f"{CONSUMER}[str, int]",
    ),
    (
        "reveal_type(Consumer(value_deserializer=lambda b: (b or b'').decode()))",
        f"{CONSUMER}[bytes, str]",
    ),
]

PRELUDE = """\
from kafka_async import (
    AdminClient,
    Consumer,
    ConsumerSettings,
    Producer,
    ProducerSettings,
    ShareConsumer,
)


def to_str(data: bytes | None) -> str:
    return (data or b"").decode()


def to_int(data: bytes | None) -> int:
    return len(data or b"")


p_settings: ProducerSettings = {"bootstrap_servers": "h:9092", "acks": "all", "linger_ms": 1}
c_settings: ConsumerSettings = {"bootstrap_servers": "h:9092", "group_id": "g"}
"""

_LINE = re.compile(r"^:(\d+): (error|note): (.*)$")


def test_mypy_checks_settings_and_infers_consumer_types(tmp_path: Path) -> None:
    lines = PRELUDE.splitlines()
    first = len(lines) + 1
    lines += [code for code, _ in CASES]
    snippet = tmp_path / "settings_snippet.py"
    snippet.write_text("\n".join(lines) + "\n")
    root = Path(kafka_async.__file__).resolve().parents[1]
    env = dict(os.environ)
    # From a source tree (an editable install) mypy finds kafka_async through MYPYPATH; an
    # installed wheel it finds in site-packages (py.typed), and there it refuses MYPYPATH.
    site = {Path(sysconfig.get_paths()[key]).resolve() for key in ("purelib", "platlib")}
    if root not in site:
        env["MYPYPATH"] = str(root)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--python-version=3.10",
            "--cache-dir",
            str(tmp_path / "mypy_cache"),
            "--no-color-output",
            "--no-error-summary",
            "--hide-error-context",
            "--show-absolute-path",
            str(snippet),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
        check=False,
    )
    assert not proc.stderr.strip(), proc.stderr
    errors: dict[int, list[str]] = {}
    revealed: dict[int, str] = {}
    for out_line in proc.stdout.splitlines():
        if not out_line.startswith(str(snippet)):
            continue  # notes about other files ("defined here") are not ours
        match = _LINE.match(out_line[len(str(snippet)) :])
        assert match, out_line
        lineno, kind, text = int(match[1]), match[2], match[3]
        if kind == "error":
            errors.setdefault(lineno, []).append(text)
        elif text.startswith("Revealed type is "):
            revealed[lineno] = text.removeprefix("Revealed type is ").strip('"')
    assert all(n >= first for n in errors), ("errors in the prelude", errors)
    problems = []
    for offset, (code, expected) in enumerate(CASES):
        lineno = first + offset
        got = errors.get(lineno, [])
        if expected.startswith("error: "):
            want = expected.removeprefix("error: ")
            if not any(want in message for message in got):
                problems.append(f"no error mentioning {want} for {code}: {got}")
        elif expected == "ok":
            if got:
                problems.append(f"unexpected error for {code}: {got}")
        else:
            shown = revealed.get(lineno, "").replace("builtins.", "")
            if got or shown != expected:
                problems.append(f"{code}: revealed {shown!r}, want {expected!r}; errors {got}")
    assert not problems, "\n".join(problems) + "\n\nmypy output:\n" + proc.stdout
