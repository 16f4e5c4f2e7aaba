"""Build hook for the optional C accelerators.

All package metadata lives in pyproject.toml; this file only adds the extensions:

* ``kafka_async.records._speedups``: the record codec's per-record loops (twin:
  ``records/_pure.py``); ``kafka_async.records.SPEEDUPS`` tells whether it is in use;
* ``kafka_async.producer._fastpath``: the producer's per-record fast path (twin:
  ``producer/_fastpath_pure.py`` and ``Producer.enqueue``), which needs the first;
  ``kafka_async.producer.fastpath.FASTPATH`` tells whether it is in use.

Both are optional: when no C compiler is available the build still succeeds and kafka_async
uses its pure-Python loops. ``KAFKA_ASYNC_PURE_PYTHON=1`` in the environment leaves both out
altogether, which gives a pure-Python wheel (``py3-none-any``).
"""

import os

from setuptools import Extension, setup

PURE_PYTHON = os.environ.get("KAFKA_ASYNC_PURE_PYTHON", "") not in ("", "0")
RECORDS_HEADER = "kafka_async/records/_speedups.h"

setup(
    ext_modules=[]
    if PURE_PYTHON
    else [
        Extension(
            "kafka_async.records._speedups",
            sources=["kafka_async/records/_speedups.c"],
            depends=[RECORDS_HEADER],
            optional=True,
        ),
        Extension(
            "kafka_async.producer._fastpath",
            sources=["kafka_async/producer/_fastpath.c"],
            include_dirs=["kafka_async/records"],
            depends=[RECORDS_HEADER],
            optional=True,
        ),
    ]
)
