"""What a Kafka release's jars hold: which classes, which constants.

Tools and settings moved between releases (``kafka.tools.ConsoleConsumer`` in 2.8-3.x,
``org.apache.kafka.tools.consumer.ConsoleConsumer`` from 3.9 on); a test or harness that
launches a Java class asks the release's jars which one it has instead of naming versions.
"""

from __future__ import annotations

import functools
import zipfile
from pathlib import Path

__all__ = ["class_mentions", "first_class_present", "jars_with_class"]


@functools.cache
def _entries(jar: Path) -> frozenset[str]:
    with zipfile.ZipFile(jar) as z:
        return frozenset(z.namelist())


def jars_with_class(libs: Path, name: str) -> list[str]:
    """The jars in ``libs`` (a release's jars folder) that hold class ``name``."""
    entry = name.replace(".", "/") + ".class"
    return [jar.name for jar in sorted(libs.glob("*.jar")) if entry in _entries(jar)]


def class_mentions(libs: Path, name: str, text: str) -> bool:
    """True when class ``name`` in the jars of ``libs`` holds the string ``text`` (a
    constant, such as the key of a setting the release defines)."""
    entry = name.replace(".", "/") + ".class"
    for jar in sorted(libs.glob("*.jar")):
        if entry in _entries(jar):
            with zipfile.ZipFile(jar) as z:
                if text.encode() in z.read(entry):
                    return True
    return False


def first_class_present(libs: Path, *names: str) -> str | None:
    """The first of ``names`` some jar in ``libs`` holds, or None."""
    return next((n for n in names if jars_with_class(libs, n)), None)
