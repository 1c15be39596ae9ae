#!/bin/bash
# Starts nginx in the foreground on $DBSTAND_HOST:$DBSTAND_PORT, serving
# DBSTAND_STATIC_DIR's file.html at /file and big.txt at /big: no application code,
# the static limit row. The config is generated into DBSTAND_WORK_DIR; nginx is
# exec'ed, so SIGTERM to the process group stops it and its workers.
set -euo pipefail

STACK="${DBSTAND_STACK_DIR:-$(cd "$(dirname "$0")" && pwd)}"
source "$STACK/../../_shared/web/server.sh"   # WORK, STATIC, RUN_USER and the steps

mkdir -p "$WORK/run" "$WORK/docroot" "$WORK/tmp"

readable_static
nginx_lines

TPL_WORK="$WORK" TPL_PORT="${DBSTAND_PORT:?DBSTAND_PORT is not set}" \
TPL_WORKERS="${DBSTAND_WORKERS:-2}" TPL_STATIC="$STATIC" \
TPL_USER_LINE="$USER_LINE" TPL_ACCESS_LOG="$ACCESS_LOG" \
render "$STACK/nginx.conf.in" "$WORK/nginx.conf"

exec /usr/sbin/nginx -p "$WORK" -c "$WORK/nginx.conf" -e "$WORK/nginx-error.log" -g 'daemon off;'
