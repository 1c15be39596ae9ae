#!/bin/sh
# Tornado's fork_processes parent in the foreground; DBSTAND_WORKERS children serve.
set -eu
export PYTHONDONTWRITEBYTECODE=1
export PYTHONPATH="$DBSTAND_STACK_DIR/../_shared/webtech"   # webtech_common.py
exec "$DBSTAND_PYTHON" "$DBSTAND_STACK_DIR/app.py"
