"""docker-compose.yml runs the release the test suite runs (the reference broker)."""

from __future__ import annotations

import re
from pathlib import Path

from kafka_async.testing.apache import DEFAULT_VERSION

ROOT = Path(__file__).resolve().parents[2]


def test_compose_image_is_the_reference_release() -> None:
    text = (ROOT / "docker-compose.yml").read_text()
    images = re.findall(r"image:\s*apache/kafka:(\S+)", text)
    assert images == [DEFAULT_VERSION]
    assert f"Apache Kafka {DEFAULT_VERSION}" in text.splitlines()[0]


def test_user_docs_name_the_reference_release() -> None:
    for name in ("README.md", "docs/getting-started.md"):
        text = (ROOT / name).read_text()
        assert f"Apache Kafka {DEFAULT_VERSION}" in text, name
