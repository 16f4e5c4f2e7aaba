"""Build hook for the optional C accelerator of the records layer.

All package metadata lives in pyproject.toml; this file only adds the extension. It is
optional: when no C compiler is available the build still succeeds and kafka_async uses its
pure-Python record loops (``kafka_async.records.SPEEDUPS`` tells which one is active).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "kafka_async.records._speedups",
            sources=["kafka_async/records/_speedups.c"],
            optional=True,
        )
    ]
)
