#!/bin/bash
# Starts Apache 2.4 prefork + mod_cgid in the foreground on 127.0.0.1:$DBSTAND_PORT;
# every dynamic path is a Perl CGI program. Everything it needs is generated into
# DBSTAND_WORK_DIR: the Apache config, a copy of the programs and the Perl module
# (the stack folder may not be readable by www-data, and the programs must be
# executable), a cache folder the programs may write, and db.conf (the database
# settings, password included, readable by the worker user only). Apache is
# exec'ed, so SIGTERM to the process group stops it, its children and cgid.
set -euo pipefail

STACK="${DBSTAND_STACK_DIR:-$(cd "$(dirname "$0")" && pwd)}"
WORK="${DBSTAND_WORK_DIR:?DBSTAND_WORK_DIR is not set}"
STATIC="${DBSTAND_STATIC_DIR:?DBSTAND_STATIC_DIR is not set}"
PREFIX="${DBSTAND_PREFIX:-dbstand_}"
RUN_USER=www-data
[[ "$PREFIX" =~ ^[A-Za-z0-9_]*$ ]] || { echo "start.sh: bad DBSTAND_PREFIX" >&2; exit 2; }

# worker_readable FILE...: succeeds when the server's worker user can read the files.
worker_readable() {
    [ "$(id -u)" != 0 ] && return 0
    runuser -u "$RUN_USER" -- sh -c 'for f; do [ -r "$f" ] || exit 1; done' sh "$@"
}

mkdir -p "$WORK/run" "$WORK/docroot" "$WORK/cache" "$WORK/app"
rm -rf "$WORK/app/lib" "$WORK/app/cgi"
cp -R "$STACK/../perl-common/lib" "$WORK/app/lib"
cp -R "$STACK/cgi" "$WORK/app/cgi"
chmod -R a+rX "$WORK/app"
chmod 0755 "$WORK"/app/cgi/*.cgi
APP="$WORK/app"

if ! worker_readable "$STATIC/file.html" "$STATIC/big.txt"; then
    mkdir -p "$WORK/static"
    cp "$STATIC/file.html" "$STATIC/big.txt" "$WORK/static/"
    chmod -R a+rX "$WORK/static"
    STATIC="$WORK/static"
fi

# db.conf: key=value lines; the password is copied from its file, never argv.
umask 077
{
    printf 'host=%s\nport=%s\nname=%s\nuser=%s\ntable=%sworld\ncache_file=%s\npassword=' \
        "${DBSTAND_DB_HOST:-127.0.0.1}" "${DBSTAND_DB_PORT:-3306}" "${DBSTAND_DB_NAME:-}" \
        "${DBSTAND_DB_USER:-}" "$PREFIX" "$WORK/cache/page"
    [ -n "${DBSTAND_DB_PASSWORD_FILE:-}" ] && cat "$DBSTAND_DB_PASSWORD_FILE"
    printf '\n'
} > "$WORK/db.conf"
umask 022
if [ "$(id -u)" = 0 ]; then
    chgrp "$RUN_USER" "$WORK/db.conf"
    chmod 0640 "$WORK/db.conf"
    chown "$RUN_USER:$RUN_USER" "$WORK/cache"
    USER_LINES=$'User www-data\nGroup www-data'
else
    USER_LINES="# not root: the workers run as $(id -un)"
fi

if [ "${DBSTAND_LOGGING:-0}" = 1 ]; then
    ACCESS_LOG="CustomLog \"${DBSTAND_LOG_FILE:?DBSTAND_LOG_FILE is not set}\" combined"
else
    ACCESS_LOG="# request logging off (DBSTAND_LOGGING=0)"
fi

TPL_WORK="$WORK" TPL_PORT="${DBSTAND_PORT:?DBSTAND_PORT is not set}" \
TPL_WORKERS="${DBSTAND_WORKERS:-2}" TPL_APP="$APP" TPL_STATIC="$STATIC" \
TPL_USER_LINES="$USER_LINES" TPL_ACCESS_LOG="$ACCESS_LOG" \
perl -pe 's/\@([A-Z_]+)\@/exists $ENV{"TPL_$1"} ? $ENV{"TPL_$1"} : die "no value for \@$1\@\n"/ge' \
    "$STACK/httpd.conf.in" > "$WORK/httpd.conf"

exec /usr/sbin/apache2 -d "$WORK" -f "$WORK/httpd.conf" -DFOREGROUND
