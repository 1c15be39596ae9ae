#!/bin/sh
# uvicorn in the foreground: DBSTAND_WORKERS worker processes under its supervisor.
# The access log, when on, goes to DBSTAND_LOG_FILE through a logging config
# written into the work dir.
set -eu
export PYTHONDONTWRITEBYTECODE=1
export PYTHONPATH="$DBSTAND_STACK_DIR/../_shared/webtech"   # webtech_common.py
set -- --host "$DBSTAND_HOST" --port "$DBSTAND_PORT" --workers "${DBSTAND_WORKERS:-$(nproc)}" \
    --loop uvloop --http httptools --app-dir "$DBSTAND_STACK_DIR" --timeout-graceful-shutdown 5
if [ "${DBSTAND_LOGGING:-0}" = 1 ]; then
    cat > "$DBSTAND_WORK_DIR/logging.json" <<JSON
{"version": 1, "disable_existing_loggers": false,
 "formatters": {
  "default": {"()": "uvicorn.logging.DefaultFormatter", "fmt": "%(levelprefix)s %(message)s", "use_colors": false},
  "access": {"()": "uvicorn.logging.AccessFormatter", "use_colors": false,
             "fmt": "%(asctime)s %(client_addr)s \"%(request_line)s\" %(status_code)s"}},
 "handlers": {
  "default": {"class": "logging.StreamHandler", "formatter": "default", "stream": "ext://sys.stderr"},
  "access": {"class": "logging.FileHandler", "formatter": "access", "filename": "$DBSTAND_LOG_FILE"}},
 "loggers": {
  "uvicorn": {"handlers": ["default"], "level": "INFO", "propagate": false},
  "uvicorn.access": {"handlers": ["access"], "level": "INFO", "propagate": false}}}
JSON
    set -- "$@" --log-config "$DBSTAND_WORK_DIR/logging.json"
else
    set -- "$@" --no-access-log
fi
exec "$DBSTAND_PYTHON" -m uvicorn "$@" app:app
