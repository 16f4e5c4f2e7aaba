"""``python -m kafka_async.cli``."""

from __future__ import annotations

from .main import run

run()
