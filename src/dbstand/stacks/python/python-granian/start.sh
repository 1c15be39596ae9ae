#!/bin/sh
# Granian in the foreground: DBSTAND_WORKERS worker processes serving the RSGI app.
# The access log, when on, goes to DBSTAND_LOG_FILE through a logging config
# written into the work dir.
set -eu
export PYTHONDONTWRITEBYTECODE=1
export PYTHONPATH="$DBSTAND_STACK_DIR/../_shared/webtech"   # webtech_common.py
set -- --interface rsgi --host "$DBSTAND_HOST" --port "$DBSTAND_PORT" \
    --workers "${DBSTAND_WORKERS:-$(nproc)}" --loop uvloop --http 1 \
    --working-dir "$DBSTAND_STACK_DIR" --workers-kill-timeout 5
if [ "${DBSTAND_LOGGING:-0}" = 1 ]; then
    cat > "$DBSTAND_WORK_DIR/logging.json" <<JSON
{"version": 1, "disable_existing_loggers": false,
 "formatters": {
  "generic": {"()": "logging.Formatter", "fmt": "[%(levelname)s] %(message)s"},
  "access": {"()": "logging.Formatter", "fmt": "%(message)s"}},
 "handlers": {
  "console": {"class": "logging.StreamHandler", "formatter": "generic", "stream": "ext://sys.stderr"},
  "access": {"class": "logging.FileHandler", "formatter": "access", "filename": "$DBSTAND_LOG_FILE"}},
 "loggers": {
  "_granian": {"handlers": ["console"], "level": "INFO", "propagate": false},
  "granian.access": {"handlers": ["access"], "level": "INFO", "propagate": false}}}
JSON
    set -- "$@" --access-log --log-config "$DBSTAND_WORK_DIR/logging.json"
fi
exec "$DBSTAND_PYTHON" -m granian "$@" app:app
