"""Issue 22, defect 6: ``dir(kafka_async)`` (and so REPL completion) did not list the lazily
imported clients (``Producer``, ``Consumer``...) until they had been touched."""

from __future__ import annotations

import subprocess
import sys


def test_dir_lists_the_lazy_exports_before_they_are_imported() -> None:
    # A fresh interpreter: in this one another test may already have touched the clients.
    code = (
        "import sys, kafka_async as k\n"
        "names = dir(k)\n"
        "print('kafka_async.producer' in sys.modules)\n"
        "print(','.join(names))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout.splitlines()
    imported, names = out[0], set(out[1].split(","))
    assert imported == "False"  # dir() itself stays cheap: nothing lazy was imported
    import kafka_async

    assert set(kafka_async.__all__) <= names
    assert {"Producer", "Consumer", "AdminClient", "ShareConsumer", "__version__"} <= names
    assert "errors" in names


def test_dir_is_sorted_and_includes_module_globals() -> None:
    import kafka_async

    names = dir(kafka_async)
    assert names == sorted(names)
    assert "__name__" in names
    assert "__getattr__" in names
