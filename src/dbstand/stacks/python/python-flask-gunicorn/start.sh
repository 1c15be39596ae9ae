#!/bin/sh
# gunicorn in the foreground: DBSTAND_WORKERS processes of 4 threads (gthread keeps
# connections alive; the sync worker closes each one). Nothing is written outside
# the work dir: no control socket, heartbeat files in the work dir.
set -eu
export PYTHONDONTWRITEBYTECODE=1
export PYTHONPATH="$DBSTAND_STACK_DIR/../_shared/webtech"   # webtech_common.py
set -- --bind "$DBSTAND_HOST:$DBSTAND_PORT" --workers "${DBSTAND_WORKERS:-$(nproc)}" \
    --worker-class gthread --threads 4 --keep-alive 5 --graceful-timeout 5 \
    --worker-tmp-dir "$DBSTAND_WORK_DIR" --no-control-socket \
    --pythonpath "$DBSTAND_STACK_DIR"
if [ "${DBSTAND_LOGGING:-0}" = 1 ]; then
    set -- "$@" --access-logfile "$DBSTAND_LOG_FILE"
fi
exec "$DBSTAND_PYTHON" -m gunicorn "$@" app:app
