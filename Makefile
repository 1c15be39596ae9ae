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
# Each phase of `make test` prints its wall time (scripts/phase.sh), the whole its total.
PHASE := bash $(CURDIR)/scripts/phase.sh
STARTED := $(shell date +%s)
# pytest-xdist workers: the tests wait on servers much of the time, so a third worker
# fills the two cores; timing-sensitive tests are marked `exclusive` and run alone, after.
# A fourth does not pay: whole warm runs on 2026-11-27, one after the other, took 541 s
# on 3 workers and 603 s on 4 (the others' waits for exclusive tests: 270 s against 558 s).
TEST_WORKERS ?= 3

.PHONY: demo demo-check test test-setup checks cargo-test venv deps-debian profilers lint \
	bench test-profile clean

# uv installs into the venv (pinned once, in pyproject.toml's dependencies): the same
# wheels as pip, in a sixth of pip's time (64 s against 11 s for '.[all,test]' here)
UV_PIN := $(shell grep -o '"uv==[^"]*"' pyproject.toml | tr -d '"')
INSTALL := $(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check $(UV_PIN)

# The demo installs dbstand with every driver that comes as a wheel or pure Python (the
# `demo` extra: the README's quick start needs them), plus the Rust engine (cargo).
# Drivers that build against system libraries (mysqlclient) are not in it: `make test`
# installs them after the Debian packages they need.
$(DEMO_STAMP): pyproject.toml $(NATIVE) | $(BIN)/python
	$(PHASE) demo-venv $(INSTALL) -e '.[demo]'
	touch $(DEMO_STAMP)

# Reinstall when the project's metadata or the native engine's sources change.
$(STAMP): pyproject.toml $(NATIVE) | $(BIN)/python
	$(PHASE) venv $(INSTALL) -e '.[all,test]'
	touch $(STAMP) $(DEMO_STAMP)

venv: $(STAMP)

## make demo: create .venv, install dbstand, run the default suite, write the report
demo: $(DEMO_STAMP)
	$(BIN)/dbstand run --html report.html

## make demo-check: `make demo` in a fresh clone with the system's build libraries hidden
demo-check:
	$(PHASE) demo-check bash scripts/demo-check.sh

## make test: install what the tests need (Debian packages too), run every test
# Jobs, each one's output printed whole when it ends: the engine's cargo test from the
# start; after the Debian packages, the profilers' build (inferno, minutes on a new
# machine) beside the venv; then ruff and mypy. A new machine's apt and pip downloads and
# the engine's single-threaded LTO link leave a core free for the builds beside them.
# pytest starts once all are done, twice: every test but the `exclusive` ones on the
# workers (the order of tests/conftest.py's file profile; `make demo` in a fresh clone,
# tests/test_demo_check.py, is one of them: it reuses the venv's cargo build of the
# engine's dependencies), then those alone in one process, so no worker waits for them
# (the lock of tests/conftest.py keeps a plain `pytest -n N` right; here it never waits).
# The phases' lines are printed again at the end (PHASE_LOG), pass or fail.
# pytest ends with its 25 slowest phases of a test (setup, call, teardown: a fixture's
# servers start in a setup) and its slowest files (tests/conftest.py). It runs with
# bytecode written (__pycache__, ignored by git) whatever the caller's environment says:
# with PYTHONDONTWRITEBYTECODE set, each of the suite's fresh interpreters (a `dbstand`
# command, a parking service, a cluster's worker) compiled dbstand's modules again.
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest -q
test: export PHASE_LOG := $(CURDIR)/.make-test-phases
test:
	@: > $(PHASE_LOG)
	$(MAKE) --no-print-directory --jobs 4 --output-sync=target cargo-test profilers test-setup
	@$(PHASE) pytest $(PYTEST) --numprocesses $(TEST_WORKERS) --dist loadfile \
	    --no-loadscope-reorder -m "not exclusive" --durations 25; shared=$$?; \
	  $(PHASE) pytest-exclusive $(PYTEST) -m exclusive --durations 10; alone=$$?; \
	  echo "phases of this make test:"; cat $(PHASE_LOG); \
	  echo "phase total (make test): $$(( $$(date +%s) - $(STARTED) )) s"; \
	  exit $$(( shared > alone ? shared : alone ))

# the venv's mysqlclient builds against libmariadb-dev: the Debian packages come first
test-setup: deps-debian
	$(MAKE) --no-print-directory venv
	$(MAKE) --no-print-directory lint

## make checks: ruff, mypy and the Rust engine's own tests
checks: lint cargo-test

# (cargo without make's jobserver flags: it takes its own jobs, as when run alone; cargo
# locks target/debug for this build, target/release for the venv's: it runs beside it)
cargo-test:
	cd native/loadgen && env -u MAKEFLAGS -u MFLAGS $(PHASE) cargo-test cargo test --quiet

deps-debian:
	$(PHASE) debian-packages bash scripts/install-debian-deps.sh

# perf and inferno for --profile (test_profiles); after the Debian packages: its apt-get
# must not run beside theirs
profilers: deps-debian
	$(PHASE) profilers bash scripts/install-profilers.sh

lint: venv
	$(PHASE) ruff $(BIN)/ruff check src tests bench
	$(PHASE) mypy $(BIN)/mypy

bench: venv deps-debian
	$(BIN)/python bench/harness_overhead
	$(BIN)/python bench/http_engine
	$(BIN)/python bench/cli_startup
	PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/python bench/default_suite --runs 3
	PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/python bench/data_load

## make test-profile: keep the last whole run's seconds per test file in the repository
# (tests/file-seconds.json): a fresh clone has no pytest cache, and its workers take the
# files longest first by this profile (tests/conftest.py)
test-profile:
	python3 -m json.tool --sort-keys .pytest_cache/v/dbstand/file-seconds > tests/file-seconds.json

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache report.html
