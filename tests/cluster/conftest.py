"""Make the in-memory fakes of tests/net importable here (tests/ has no packages)."""

from __future__ import annotations

import sys
from pathlib import Path

_NET = str(Path(__file__).resolve().parents[1] / "net")
if _NET not in sys.path:
    sys.path.insert(0, _NET)
