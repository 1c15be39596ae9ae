#!/bin/sh
# Usage: build.sh "MODULE, MODULE, ..." IMPLEMENTATION: what the service must import and
# the CPython stack whose parking implementation it runs, both checked here.
# Shared by the PyPy parking stacks (pypy-raw, pypy-sqlalchemy).
# A PyPy venv in the build dir: Debian's pypy3 (Python 3.9) with the stack's pinned
# requirements.txt. dbstand itself is not installed there (its wheel builds a Rust
# extension): start.sh puts dbstand's pure-Python package on PYTHONPATH instead.
set -eu
imports="$1"
implementation="$2"
# uv (DBSTAND_UV, dbstand's own pinned one) installs the same wheels as pip, faster
"$DBSTAND_UV" venv --quiet --python pypy3 "$DBSTAND_BUILD_DIR/venv"
"$DBSTAND_UV" pip install --quiet --compile-bytecode --no-deps \
    --python "$DBSTAND_BUILD_DIR/venv/bin/python" -r "$DBSTAND_STACK_DIR/requirements.txt"
# fail the build now, not at the first request, if the service cannot import here
# (dbstand's package alone on PYTHONPATH, through a link, as start.sh does)
check="$DBSTAND_BUILD_DIR/import-check"
mkdir -p "$check"
ln -s "$(cd "$DBSTAND_STACK_DIR/../../.." && pwd)" "$check/dbstand"
trap 'rm -rf "$check"' EXIT
PYTHONPATH="$check" PYTHONDONTWRITEBYTECODE=1 "$DBSTAND_BUILD_DIR/venv/bin/python" -c \
    "import $imports
from dbstand.workloads.parking.implementations import load_module
load_module('$implementation')"
