"""Benchmarks: `make bench` runs them all (`python -m benchmarks`); each module runs alone too."""
