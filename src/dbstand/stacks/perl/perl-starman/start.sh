#!/bin/bash
# Starts Starman (a preforking PSGI server) in the foreground on
# $DBSTAND_HOST:$DBSTAND_PORT (127.0.0.1 unless given) with DBSTAND_WORKERS workers. It runs as the launcher's
# user, so it reads the stack folder in place; db.conf (the database settings,
# password included, mode 0600) and the /cache file go into DBSTAND_WORK_DIR.
# Starman is exec'ed, so SIGTERM to the process group stops it and its workers.
set -euo pipefail

STACK="${DBSTAND_STACK_DIR:-$(cd "$(dirname "$0")" && pwd)}"
WORK="${DBSTAND_WORK_DIR:?DBSTAND_WORK_DIR is not set}"
PREFIX="${DBSTAND_PREFIX:-dbstand_}"
[[ "$PREFIX" =~ ^[A-Za-z0-9_]*$ ]] || { echo "start.sh: bad DBSTAND_PREFIX" >&2; exit 2; }
: "${DBSTAND_STATIC_DIR:?DBSTAND_STATIC_DIR is not set}"

source "$STACK/../_shared/webtech/db-conf.sh"
write_db_conf
export DBSTAND_DB_CONFIG="$WORK/db.conf"

# --env deployment: no development middleware (its access log goes to stderr);
# app.psgi adds its own access log when DBSTAND_LOGGING=1. Workers are never
# recycled (Starman's default is every 1,000 requests).
exec starman --listen "${DBSTAND_HOST:-127.0.0.1}:${DBSTAND_PORT:?DBSTAND_PORT is not set}" \
    --workers "${DBSTAND_WORKERS:-2}" --preload-app --env deployment \
    --max-requests 1000000000 --pid "$WORK/starman.pid" \
    -I "$STACK/../_shared/webtech/lib" "$STACK/app.psgi"
