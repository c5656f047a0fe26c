# Brook: `make run` starts a server with defaults, `make test` runs everything CI runs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
SPARK_STAMP := $(VENV)/.installed-spark

.PHONY: run test lint bench docs install redis clean example

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

## The Spark connector's extra (pyspark, pyarrow): only the tests and the example need it.
$(SPARK_STAMP): $(STAMP)
	$(BIN)/pip install --quiet -e '.[dev,spark]'
	touch $(SPARK_STAMP)

install: $(STAMP)

## Start Brook on 127.0.0.1:6379 with brook.conf: data in ./data, append-only file on
## (pass more flags with ARGS="--port 7000 ...").
run: $(STAMP)
	mkdir -p data
	$(BIN)/brook-server brook.conf $(ARGS)

## redis-server/redis-cli/redis-benchmark, for the parity tests and the benchmark.
redis:
	@scripts/ensure-redis.sh

lint: $(STAMP)
	$(BIN)/ruff check brook tests bench examples

## Lint, check docs/commands.md is current, run every test (against real Redis too).
test: $(SPARK_STAMP) redis lint
	$(BIN)/python -m pytest -q

## Brook and redis-server side by side under redis-benchmark; prints the ratio table.
bench: $(STAMP) redis
	$(BIN)/python -m bench.run $(ARGS)

## The Spark pipeline example: clicks -> Brook -> Structured Streaming -> Brook + Parquet.
example: $(SPARK_STAMP)
	$(BIN)/python examples/clickstream.py $(ARGS)

## Regenerate docs/commands.md from the command declarations.
docs: $(STAMP)
	$(BIN)/python -m brook.docs > docs/commands.md

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
