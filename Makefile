# The one test command: `make test` (README.md names it; .ci/run calls it).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PY_DIRS := $(wildcard kafka_async tests examples tools benchmarks setup.py)

.PHONY: test lint typecheck unit bench soak chaos demo clean venv generate

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(STAMP): pyproject.toml setup.py kafka_async/records/_speedups.c kafka_async/records/_speedups.h kafka_async/producer/_fastpath.c | $(BIN)/python
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check $(PY_DIRS)
	$(BIN)/ruff format --check $(PY_DIRS)

typecheck: $(STAMP)
	$(BIN)/mypy --strict kafka_async tests examples benchmarks

# The tests that show the embedded fallback broker (Tansu, `[broker]` extra without Java) does
# what a newcomer does with it: produce, consume in a group and commit (the examples and the
# demo), the CLI, the plugin. `make tansu` runs every broker test on Tansu (outside CI).
TANSU_TESTS := tests/producer/test_producer_integration.py tests/cli/test_cli_e2e.py tests/examples \
	tests/testing/test_testing_plugin.py

# The oldest release we claim (ZooKeeper mode, as many MSK and on-premises clusters still run):
# the core broker tests run on it in CI too; `make compat` runs the whole matrix (tools/compat.py).
# A feature the release lacks is skipped by what it advertises in ApiVersions.
OLD_RELEASE := 2.8.2
OLD_RELEASE_TESTS := tests/producer/test_producer_integration.py tests/consumer/test_consumer_integration.py \
	tests/admin/test_admin_integration.py tests/producer/test_producer_transactions.py \
	tests/consumer/test_consumer_groups.py tests/consumer/test_consumer_group_protocol.py \
	tests/cli/test_cli_broker_kind.py

# The broker tests against Apache Kafka (the reference broker, fetched from Maven Central on
# first use), then the embedded-fallback tier against Tansu. Each tier prints its duration.
# Broker tests mostly wait (on rebalances, timeouts, a killed broker's return), so each tier
# runs on two pytest-xdist workers, each with its own broker; a test file stays on one worker
# (--dist loadfile), so a module's fixtures (three-node clusters, peers) are made once.
BROKER_XDIST := -n 2 --dist loadfile
# The unit tier runs on the oldest and newest CPython (pymatrix, a prerequisite below); the
# interpreter of .venv, between them, runs the broker tiers.
test: lint typecheck docs
	@date +%s > .tier-start
	$(BIN)/python -m pytest -q -p no:cacheprovider --durations=25 --kafka-broker=apache \
		$(BROKER_XDIST) -m 'integration and not slow'
	@echo "tier apache: $$(( $$(date +%s) - $$(cat .tier-start) )) s"; date +%s > .tier-start
	KAFKA_ASYNC_APACHE_VERSION=$(OLD_RELEASE) KAFKA_ASYNC_APACHE_MODE=zookeeper \
		$(BIN)/python -m pytest -q -p no:cacheprovider --durations=10 --kafka-broker=apache \
		$(BROKER_XDIST) -m 'integration and not slow' $(OLD_RELEASE_TESTS)
	@echo "tier apache $(OLD_RELEASE): $$(( $$(date +%s) - $$(cat .tier-start) )) s"; date +%s > .tier-start
	$(BIN)/python -m pytest -q -p no:cacheprovider --durations=10 --kafka-broker=tansu -m integration \
		$(BROKER_XDIST) --kafka-broker-tests-only $(TANSU_TESTS)
	@echo "tier tansu: $$(( $$(date +%s) - $$(cat .tier-start) )) s"; rm -f .tier-start

# The documentation site into site/ (mkdocs-material, API pages from the docstrings; strict:
# a broken link or a bad docstring reference fails it). `make test` builds it first, and
# tests/docs runs every code block of the docs against the broker and opens the site in Chromium.
.PHONY: docs
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict --quiet

# Every test that uses the run's broker, against Tansu (what CI ran before it kept a subset).
.PHONY: tansu
tansu: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider --durations=10 --kafka-broker=tansu -m integration \
		$(BROKER_XDIST) --kafka-broker-tests-only

unit: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 -m 'not integration and not slow'

# Regenerate kafka_async/protocol/apis/ from kafka_async/protocol/definitions/*.def
# (tests/protocol/test_protocol_generated.py fails while they differ), and the typed
# settings, docs/reference/settings.md tables and docstring lists from each package's settings.py
# (tests/settings/test_settings_generated.py).
generate: $(STAMP)
	$(BIN)/python -m tools.generate_protocol
	$(BIN)/python -m tools.generate_settings
	$(BIN)/python -m tools.generate_errors

# make bench BROKER=apache: the broker suites on Apache Kafka (with the Java client's tools).
bench: $(STAMP)
	BENCH_BROKER=$(or $(BROKER),tansu) $(BIN)/python -m benchmarks

soak: $(STAMP)
	$(BIN)/python -m tests.harness.soak

# make chaos: network faults (partitions, loss, dead and slow links, kill/stop) on a 3-node
# cluster in network namespaces (root; issue 29). ARGS="--faults 30 --seed 7" to vary.
chaos: $(STAMP)
	$(BIN)/python -m tests.harness.chaos $(ARGS)

# make compat: the broker tests against every Apache Kafka release we claim, 2.8.2 (ZooKeeper)
# to 4.4.0 (issue 25; hours, outside CI); writes docs/compatibility.md. A part of it:
# make compat ARGS="--releases 2.8.2 3.9.1 -- tests/producer/test_producer_integration.py"
.PHONY: compat
compat: $(STAMP)
	$(BIN)/python tools/compat.py $(ARGS)

clean:
	rm -rf $(VENV) .venv-py3* .mypy_cache .ruff_cache .pytest_cache build dist *.egg-info

demo: $(STAMP)
	$(BIN)/python examples/demo.py

# The unit tier on the oldest and newest CPython we promise (tools/pymatrix.py --ends, venvs
# in .venv-py3N); `make test` runs it before the broker tiers, which run on .venv's Python.
.PHONY: pymatrix dist
test: pymatrix
pymatrix: $(STAMP)
	$(BIN)/python tools/pymatrix.py --skip-current --ends

# The unit tier on every CPython found (3.10 to 3.13, .venv's own too), not only the ends.
.PHONY: pymatrix-all
pymatrix-all: $(STAMP)
	$(BIN)/python tools/pymatrix.py

# Build the sdist and a wheel per CPython, install each in a fresh venv outside the tree and
# test it there, with and without the C accelerator (tools/dist_check.py; not part of test).
dist:
	$(PYTHON) tools/dist_check.py
