"""The package's version, in a module of its own so that any part of the package can read it
without importing the package's top level (and without reading installed metadata, which
costs tens of milliseconds at import). ``pyproject.toml`` carries the same number;
``tools/dist_smoke.py`` checks the built wheel's metadata against it."""

__version__ = "0.1.0"
