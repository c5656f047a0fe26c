# Brook: `make run` starts a server with defaults, `make test` runs everything CI runs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
SPARK_STAMP := $(VENV)/.installed-spark
BUILD_STAMP := $(VENV)/.built
# The compiled core is built from these (setup.py lists the modules; mypyc reads the types of
# every module they import, so any source change rebuilds it).
SOURCES := $(shell find brook -name '*.py' -o -name '*.c' -o -name '*.h')
# The pure-Python build's tree for `make test-pure`: the sources without their extensions.
PURE := .pure
# What the pure build runs in CI: one file per layer that a compiled module could break, and the
# differential tests of what has a compiled or C twin (sets and sorted sets, long doubles).
PURE_SMOKE := tests/test_core.py tests/test_dispatch.py tests/commands/test_strings.py tests/commands/test_lists.py \
	tests/commands/test_streams.py tests/commands/test_stream_groups.py tests/test_blocking.py tests/persistence/test_aof.py \
	tests/protocol/test_protocol.py tests/commands/test_server_commands.py tests/commands/test_scan.py tests/types/test_keytable.py \
	tests/commands/test_set_differential.py tests/types/test_member_set.py tests/types/test_long_double.py

.PHONY: run test test-pure test-redis-suite lint bench docs install build redis clean example envs

## The dependencies, and Brook installed in place (BROOK_PURE: the compiled core is built once,
## by $(BUILD_STAMP), not by every pip install).
$(STAMP): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	BROOK_PURE=1 $(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

## The compiled core (setup.py), in place beside the sources; without a C compiler Brook stays
## pure Python. Rebuilt whenever a source changes: Python imports the extension, not the .py.
$(BUILD_STAMP): $(STAMP) setup.py $(SOURCES)
	$(BIN)/python setup.py --quiet build_ext --inplace
	find brook -name '*.so' -exec touch {} +
	touch $(BUILD_STAMP)

build: $(BUILD_STAMP)

## The Spark connector's extra (pyspark, pyarrow): only the tests and the example need it.
$(SPARK_STAMP): $(STAMP)
	BROOK_PURE=1 $(BIN)/pip install --quiet -e '.[dev,spark]'
	touch $(SPARK_STAMP)

install: $(BUILD_STAMP)

## Start Brook on 127.0.0.1:6379 with brook.conf: data in ./data, append-only file on
## (pass more flags with ARGS="--port 7000 ...").
run: $(BUILD_STAMP)
	mkdir -p data
	$(BIN)/brook-server brook.conf $(ARGS)

## One virtualenv per job framework in .bench-envs/ (bench/envs.py), each with the framework's
## newest release: the framework tests and bench.frameworks make them on first use; this makes
## (or checks) all eight and prints their versions. Delete .bench-envs/ for newer releases.
envs:
	$(PYTHON) -m bench.envs

## redis-server/redis-cli/redis-benchmark, for the parity tests and the benchmark.
redis:
	@scripts/ensure-redis.sh

lint: $(STAMP)
	$(BIN)/ruff check brook tests bench examples setup.py

## Lint, check docs/commands.md is current, run every test (against real Redis too) on the
## compiled build, then the smoke subset on the pure-Python build.
test: $(SPARK_STAMP) $(BUILD_STAMP) redis lint
	BROOK_EXPECT_BUILD=compiled $(BIN)/python -m pytest -q
	$(MAKE) test-redis-suite
	$(MAKE) test-pure

## Redis's own Tcl test suite (Debian's redis source package, fetched through apt into
## .redis-suite/) in external mode against Brook; every test's outcome checked against
## tests/redis_suite/expected-7.0.15.txt (a new failure, or a listed one that passes, fails).
test-redis-suite: $(BUILD_STAMP) redis
	$(BIN)/python -m tests.redis_suite

## The smoke subset on the pure-Python build (the sources copied without their extensions).
## Run from the pure tree itself: `python -m pytest` puts the working directory first on
## sys.path, so run from here it would import the compiled tree (conftest checks which it got).
test-pure: $(STAMP) redis
	rm -rf $(PURE) && mkdir -p $(PURE) && cp -r brook tests bench pyproject.toml $(PURE)/
	find $(PURE) -name '*.so' -delete
	cd $(PURE) && PYTHONPATH=$(CURDIR)/$(PURE) BROOK_EXPECT_BUILD=pure $(CURDIR)/$(BIN)/python -m pytest -q -p no:cacheprovider $(PURE_SMOKE)

## Brook and redis-server side by side under redis-benchmark; prints the ratio table.
bench: $(BUILD_STAMP) redis
	$(BIN)/python -m bench.run $(ARGS)

## The Spark pipeline example: clicks -> Brook -> Structured Streaming -> Brook + Parquet.
example: $(SPARK_STAMP)
	$(BIN)/python examples/clickstream.py $(ARGS)

## Regenerate docs/commands.md from the command declarations.
docs: $(STAMP)
	$(BIN)/python -m brook.docs > docs/commands.md

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache build $(PURE) .redis-suite .bench-envs
	find brook -name '*.so' -delete
