"""Build hook for the optional C accelerator of the records layer.

All package metadata lives in pyproject.toml; this file only adds the extension. It is
optional: when no C compiler is available the build still succeeds and kafka_async uses its
pure-Python record loops (``kafka_async.records.SPEEDUPS`` tells which one is active).
``KAFKA_ASYNC_PURE_PYTHON=1`` in the environment leaves the extension out altogether, which
gives a pure-Python wheel (``py3-none-any``).
"""

import os

from setuptools import Extension, setup

PURE_PYTHON = os.environ.get("KAFKA_ASYNC_PURE_PYTHON", "") not in ("", "0")

setup(
    ext_modules=[]
    if PURE_PYTHON
    else [
        Extension(
            "kafka_async.records._speedups",
            sources=["kafka_async/records/_speedups.c"],
            optional=True,
        )
    ]
)
