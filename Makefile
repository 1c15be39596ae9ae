# The two set-up commands: `make demo` and `make test` (see README.md).
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The native HTTP load engine is Rust, built by pip through maturin: cargo must be found.
export PATH := $(HOME)/.cargo/bin:$(PATH)
NATIVE := $(wildcard native/loadgen/Cargo.toml native/loadgen/Cargo.lock native/loadgen/src/*.rs)

.PHONY: demo test venv deps-debian lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip==25.3

# Reinstall when the project's metadata or the native engine's sources change.
$(STAMP): pyproject.toml $(NATIVE) | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[all,test]'
	touch $(STAMP)

venv: $(STAMP)

## make demo: create .venv, install dbstand, run the default suite, write the report
demo: venv
	$(BIN)/dbstand run --html report.html

## make test: install what the tests need (Debian packages too), run every test
test: deps-debian venv
	$(BIN)/ruff check src tests bench
	cd native/loadgen && cargo test --quiet
	$(BIN)/python -m pytest -q

deps-debian:
	bash scripts/install-debian-deps.sh

lint: venv
	$(BIN)/ruff check src tests bench

bench: venv
	$(BIN)/python bench/harness_overhead
	$(BIN)/python bench/http_engine

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache report.html
