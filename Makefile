# The two set-up commands: `make demo` and `make test` (see README.md).
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.demo
# The native HTTP load engine is Rust, built by pip through maturin: cargo must be found.
export PATH := $(HOME)/.cargo/bin:$(PATH)
NATIVE := $(wildcard native/loadgen/Cargo.toml native/loadgen/Cargo.lock native/loadgen/src/*.rs)

.PHONY: demo demo-check test checks venv deps-debian lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip==25.3

# The demo installs dbstand with every driver that comes as a wheel or pure Python (the
# `demo` extra: the README's quick start needs them), plus the Rust engine (cargo).
# Drivers that build against system libraries (mysqlclient) are not in it: `make test`
# installs them after the Debian packages they need.
$(DEMO_STAMP): pyproject.toml $(NATIVE) | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[demo]'
	touch $(DEMO_STAMP)

# Reinstall when the project's metadata or the native engine's sources change.
$(STAMP): pyproject.toml $(NATIVE) | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[all,test]'
	touch $(STAMP) $(DEMO_STAMP)

venv: $(STAMP)

## make demo: create .venv, install dbstand, run the default suite, write the report
demo: $(DEMO_STAMP)
	$(BIN)/dbstand run --html report.html

## make demo-check: `make demo` in a fresh clone with the system's build libraries hidden
demo-check:
	bash scripts/demo-check.sh

## make test: install what the tests need (Debian packages too), run every test
# The fresh-clone demo check runs beside ruff, mypy and cargo test (two jobs, each job's
# output printed whole when it ends): the demo's pip install and its engine's LTO build
# use about one core, the static checks the other; pytest starts once both are done.
test: deps-debian venv
	$(MAKE) --no-print-directory --jobs 2 --output-sync=target demo-check checks
	$(BIN)/python -m pytest -q --numprocesses 2 --dist loadfile --no-loadscope-reorder

## make checks: ruff, mypy and the Rust engine's own tests
# (cargo without make's jobserver flags: it takes its own jobs, as when run alone)
checks: lint
	cd native/loadgen && env -u MAKEFLAGS -u MFLAGS cargo test --quiet

deps-debian:
	bash scripts/install-debian-deps.sh
	bash scripts/install-profilers.sh

lint: venv
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy

bench: venv deps-debian
	$(BIN)/python bench/harness_overhead
	$(BIN)/python bench/http_engine
	$(BIN)/python bench/cli_startup
	PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/python bench/default_suite --runs 3
	PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/python bench/data_load

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache report.html
