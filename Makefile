# The one test command: `make test` (README.md names it; .ci/run calls it).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PY_DIRS := $(wildcard kafka_async tests examples tools benchmarks setup.py)

.PHONY: test lint typecheck unit bench soak demo clean venv

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(STAMP): pyproject.toml setup.py kafka_async/records/_speedups.c | $(BIN)/python
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check $(PY_DIRS)
	$(BIN)/ruff format --check $(PY_DIRS)

typecheck: $(STAMP)
	$(BIN)/mypy --strict kafka_async tests examples benchmarks

test: lint typecheck
	$(BIN)/python -m pytest -q -p no:cacheprovider

unit: $(STAMP)
	$(BIN)/python -m pytest -q -m 'not integration and not slow'

bench: $(STAMP)
	$(BIN)/python -m benchmarks

soak: $(STAMP)
	$(BIN)/python -m kafka_async.testing.soak

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache build *.egg-info

demo: $(STAMP)
	$(BIN)/python examples/demo.py
