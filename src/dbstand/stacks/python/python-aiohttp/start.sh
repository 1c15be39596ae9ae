#!/bin/sh
# The prefork parent of app.py in the foreground; it forks DBSTAND_WORKERS workers.
set -eu
export PYTHONDONTWRITEBYTECODE=1
export PYTHONPATH="$DBSTAND_STACK_DIR/../_shared/webtech"   # webtech_common.py
exec "$DBSTAND_PYTHON" "$DBSTAND_STACK_DIR/app.py"
