#!/bin/sh
# One Tornado process in the foreground (the study's server was single-threaded).
set -eu
export PYTHONDONTWRITEBYTECODE=1
exec "$DBSTAND_PYTHON" "$DBSTAND_STACK_DIR/app.py"
