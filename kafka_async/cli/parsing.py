"""Pure helpers that turn command-line strings into values (all raise ``UsageError``)."""

from __future__ import annotations

import base64
import json
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "RECORD_FIELDS",
    "StartPosition",
    "UsageError",
    "compile_template",
    "parse_header",
    "parse_kv",
    "parse_partitions",
    "parse_rate",
    "parse_start",
    "record_json",
    "split_key",
]


class UsageError(ValueError):
    """A command-line argument is malformed; the command exits with status 2."""


def parse_kv(text: str, what: str = "config") -> tuple[str, str]:
    """``"name=value"`` -> ``("name", "value")``; the value may contain ``=``."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise UsageError(f"{what} must look like NAME=VALUE, got {text!r}")
    return name, value


def parse_header(text: str) -> tuple[str, bytes]:
    """``"k=v"`` -> ``("k", b"v")`` for record headers."""
    name, value = parse_kv(text, "header")
    return name, value.encode()


def parse_partitions(text: str) -> list[int]:
    """``"0,2,5"`` or ``"0-3"`` -> partition indexes."""
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        lo, sep, hi = part.partition("-")
        try:
            if sep:
                a, b = int(lo), int(hi)
                if a > b:
                    raise ValueError
                out.extend(range(a, b + 1))
            else:
                out.append(int(part))
        except ValueError:
            raise UsageError(f"bad partition list {text!r}; use e.g. 0,1,2 or 0-3") from None
    if not out or any(p < 0 for p in out):
        raise UsageError(f"bad partition list {text!r}")
    return sorted(set(out))


def parse_rate(text: str) -> float:
    """Records per second, as ``"500"`` or ``"500/s"``; must be positive."""
    value = text[:-2] if text.endswith("/s") else text
    try:
        rate = float(value)
    except ValueError:
        raise UsageError(f"bad rate {text!r}; use records per second, e.g. 1000") from None
    if rate <= 0:
        raise UsageError(f"rate must be positive, got {text!r}")
    return rate


@dataclass(frozen=True)
class StartPosition:
    """Where a consumer starts: ``kind`` is beginning, end, stored, offset, relative or
    timestamp; ``value`` is the offset, the distance from the end, or the time in ms."""

    kind: str
    value: int = 0


def parse_start(text: str) -> StartPosition:
    """``beginning``, ``end``, ``stored``, ``OFFSET``, ``-N`` (N before the end) or
    ``@TIMESTAMP_MS``."""
    t = text.strip().lower()
    if t in ("beginning", "earliest", "start"):
        return StartPosition("beginning")
    if t in ("end", "latest"):
        return StartPosition("end")
    if t in ("stored", "committed"):
        return StartPosition("stored")
    if t.startswith("@"):
        try:
            ts = int(t[1:])
        except ValueError:
            raise UsageError(f"bad timestamp in --from {text!r}; use @MILLISECONDS") from None
        if ts < 0:
            raise UsageError(f"timestamp must not be negative: {text!r}")
        return StartPosition("timestamp", ts)
    try:
        n = int(t)
    except ValueError:
        raise UsageError(
            f"bad --from {text!r}; use beginning, end, stored, an offset, -N or @TIMESTAMP_MS"
        ) from None
    if n < 0:
        return StartPosition("relative", -n)
    return StartPosition("offset", n)


def split_key(line: bytes, separator: bytes | None) -> tuple[bytes | None, bytes]:
    """Split an input line into key and value at the first separator (no separator in the
    line: no key)."""
    if separator is None:
        return None, line
    key, sep, value = line.partition(separator)
    if not sep:
        return None, line
    return key, value


#: Names a ``--format`` template may use.
RECORD_FIELDS = (
    "topic",
    "partition",
    "offset",
    "timestamp",
    "timestamp_type",
    "key",
    "value",
    "headers",
    "key_size",
    "value_size",
)


def compile_template(template: str) -> str:
    """Check a ``--format`` template and turn ``\\n``/``\\t`` escapes into characters."""
    text = template.replace("\\n", "\n").replace("\\t", "\t")
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise UsageError(f"bad --format template: {exc}") from None
    for _, name, _, _ in parsed:
        if name is None:
            continue
        base = re.split(r"[.\[]", name, maxsplit=1)[0]
        if base not in RECORD_FIELDS:
            raise UsageError(
                f"unknown field {{{name}}} in --format; known: {', '.join(RECORD_FIELDS)}"
            )
    return text


def _text_or_b64(data: bytes | None) -> tuple[str | None, bool]:
    if data is None:
        return None, False
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        return base64.b64encode(data).decode("ascii"), True


def record_json(
    *,
    topic: str,
    partition: int,
    offset: int,
    timestamp: int,
    timestamp_type: int,
    key: bytes | None,
    value: bytes | None,
    headers: Sequence[tuple[str, bytes]],
) -> str:
    """One JSON line with every field of a record. Keys, values and header values are UTF-8
    text when they decode, else base64 (then ``key_encoding``/``value_encoding`` say so)."""
    key_text, key_b64 = _text_or_b64(key)
    value_text, value_b64 = _text_or_b64(value)
    obj: dict[str, Any] = {
        "topic": topic,
        "partition": partition,
        "offset": offset,
        "timestamp": timestamp,
        "timestamp_type": timestamp_type,
        "key": key_text,
        "value": value_text,
        "headers": [[k, _text_or_b64(v)[0]] for k, v in headers],
    }
    if key_b64:
        obj["key_encoding"] = "base64"
    if value_b64:
        obj["value_encoding"] = "base64"
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
