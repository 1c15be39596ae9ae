#!/bin/bash
# Starts Apache 2.4 (event MPM) in the foreground on 127.0.0.1:$DBSTAND_PORT,
# serving DBSTAND_STATIC_DIR's file.html at /file and big.txt at /big: no
# application code, the static limit row. The config is generated into
# DBSTAND_WORK_DIR; Apache is exec'ed, so SIGTERM to the process group stops it.
set -euo pipefail

STACK="${DBSTAND_STACK_DIR:-$(cd "$(dirname "$0")" && pwd)}"
WORK="${DBSTAND_WORK_DIR:?DBSTAND_WORK_DIR is not set}"
STATIC="${DBSTAND_STATIC_DIR:?DBSTAND_STATIC_DIR is not set}"
WORKERS="${DBSTAND_WORKERS:-2}"
RUN_USER=www-data

mkdir -p "$WORK/run" "$WORK/docroot"

if [ "$(id -u)" = 0 ]; then
    USER_LINES=$'User www-data\nGroup www-data'
    # The workers read the files as www-data: serve copies if it cannot read them.
    if ! runuser -u "$RUN_USER" -- test -r "$STATIC/file.html" -a -r "$STATIC/big.txt"; then
        mkdir -p "$WORK/static"
        cp "$STATIC/file.html" "$STATIC/big.txt" "$WORK/static/"
        chmod -R a+rX "$WORK/static"
        STATIC="$WORK/static"
    fi
else
    USER_LINES="# not root: the workers run as $(id -un)"
fi

if [ "${DBSTAND_LOGGING:-0}" = 1 ]; then
    ACCESS_LOG="CustomLog \"${DBSTAND_LOG_FILE:?DBSTAND_LOG_FILE is not set}\" combined"
else
    ACCESS_LOG="# request logging off (DBSTAND_LOGGING=0)"
fi

TPL_WORK="$WORK" TPL_PORT="${DBSTAND_PORT:?DBSTAND_PORT is not set}" \
TPL_WORKERS="$WORKERS" TPL_MAX_THREADS="$((WORKERS * 25))" TPL_STATIC="$STATIC" \
TPL_USER_LINES="$USER_LINES" TPL_ACCESS_LOG="$ACCESS_LOG" \
perl -pe 's/\@([A-Z_]+)\@/exists $ENV{"TPL_$1"} ? $ENV{"TPL_$1"} : die "no value for \@$1\@\n"/ge' \
    "$STACK/httpd.conf.in" > "$WORK/httpd.conf"

exec /usr/sbin/apache2 -d "$WORK" -f "$WORK/httpd.conf" -DFOREGROUND
