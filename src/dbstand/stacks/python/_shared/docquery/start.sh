#!/bin/sh
# Usage: start.sh (every Tornado docquery stack's start): one Tornado process in the
# foreground (the study's server was single-threaded) running the stack's app.py, with
# the shared module docquery_tornado.py (this folder) on PYTHONPATH.
set -eu
export PYTHONDONTWRITEBYTECODE=1
export PYTHONPATH="$(cd "$(dirname "$0")" && pwd)"
exec "$DBSTAND_PYTHON" "$DBSTAND_STACK_DIR/app.py"
