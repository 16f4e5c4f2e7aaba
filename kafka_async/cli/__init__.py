"""The ``kafka-async`` command line (``kafka_async.cli.main:main``).

Install the ``cli`` extra for rich tables and progress bars; without it the output is plain
text. See ``kafka-async --help``.
"""

from __future__ import annotations

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); return the exit code."""
    from .main import main as _main

    return _main(argv)
