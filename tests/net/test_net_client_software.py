"""The client software name and version every connection sends in ApiVersions (KIP-511), which
brokers show in their client metrics and logs. The version was read from the installed
distribution under the name ``kafka-async``, which is not the distribution's name
(``kafka-async-client``), so every connection announced version ``0.0.0``."""

from __future__ import annotations

import re
from pathlib import Path

import kafka_async
from kafka_async.net.connection import CLIENT_SOFTWARE

ROOT = Path(__file__).resolve().parents[2]
#: What KIP-511 allows in the name and the version (the broker refuses other values).
_KIP_511 = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")


def test_connections_announce_the_package_version() -> None:
    name, version = CLIENT_SOFTWARE
    assert name == "kafka-async"
    assert version == kafka_async.__version__
    assert _KIP_511.fullmatch(name)
    assert _KIP_511.fullmatch(version)


def test_package_version_is_the_distribution_version() -> None:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    declared = re.search(r'(?m)^version = "([^"]+)"', text)
    assert declared is not None
    assert declared.group(1) == kafka_async.__version__
