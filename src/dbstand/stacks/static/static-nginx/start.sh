#!/bin/bash
# Starts nginx in the foreground on 127.0.0.1:$DBSTAND_PORT, serving
# DBSTAND_STATIC_DIR's file.html at /file and big.txt at /big: no application code,
# the static limit row. The config is generated into DBSTAND_WORK_DIR; nginx is
# exec'ed, so SIGTERM to the process group stops it and its workers.
set -euo pipefail

STACK="${DBSTAND_STACK_DIR:-$(cd "$(dirname "$0")" && pwd)}"
WORK="${DBSTAND_WORK_DIR:?DBSTAND_WORK_DIR is not set}"
STATIC="${DBSTAND_STATIC_DIR:?DBSTAND_STATIC_DIR is not set}"
RUN_USER=www-data

mkdir -p "$WORK/run" "$WORK/docroot" "$WORK/tmp"

if [ "$(id -u)" = 0 ]; then
    USER_LINE="user $RUN_USER $RUN_USER;"
    # The workers read the files as www-data: serve copies if it cannot read them.
    if ! runuser -u "$RUN_USER" -- test -r "$STATIC/file.html" -a -r "$STATIC/big.txt"; then
        mkdir -p "$WORK/static"
        cp "$STATIC/file.html" "$STATIC/big.txt" "$WORK/static/"
        chmod -R a+rX "$WORK/static"
        STATIC="$WORK/static"
    fi
else
    USER_LINE="# not root: the workers run as $(id -un)"
fi

if [ "${DBSTAND_LOGGING:-0}" = 1 ]; then
    ACCESS_LOG="access_log ${DBSTAND_LOG_FILE:?DBSTAND_LOG_FILE is not set} combined;"
else
    ACCESS_LOG="access_log off;"
fi

TPL_WORK="$WORK" TPL_PORT="${DBSTAND_PORT:?DBSTAND_PORT is not set}" \
TPL_WORKERS="${DBSTAND_WORKERS:-2}" TPL_STATIC="$STATIC" \
TPL_USER_LINE="$USER_LINE" TPL_ACCESS_LOG="$ACCESS_LOG" \
perl -pe 's/\@([A-Z_]+)\@/exists $ENV{"TPL_$1"} ? $ENV{"TPL_$1"} : die "no value for \@$1\@\n"/ge' \
    "$STACK/nginx.conf.in" > "$WORK/nginx.conf"

exec /usr/sbin/nginx -p "$WORK" -c "$WORK/nginx.conf" -e "$WORK/nginx-error.log" -g 'daemon off;'
