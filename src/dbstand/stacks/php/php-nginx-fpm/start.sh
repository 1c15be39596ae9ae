#!/bin/bash
# Starts a php-fpm pool and nginx in front of it, both in the foreground, on
# $DBSTAND_HOST:$DBSTAND_PORT. Everything is generated into DBSTAND_WORK_DIR: both
# configs, a copy of the PHP scripts (the stack folder may not be readable by
# www-data), big.php and config.php (the database settings, password included,
# readable by the worker user only). This script stays as the parent of both
# servers: a SIGTERM (to it or to the group) stops both, and if either server dies
# the other is stopped too.
set -euo pipefail

STACK="${DBSTAND_STACK_DIR:-$(cd "$(dirname "$0")" && pwd)}"
source "$STACK/../../_shared/web/server.sh"   # WORK, STATIC, PREFIX, RUN_USER and the steps
source "$STACK/../_shared/webtech/app.sh"

mkdir -p "$WORK/run" "$WORK/docroot" "$WORK/tmp"
php_app
readable_static
if [ "$(id -u)" = 0 ]; then
    POOL_USER_LINES="user = $RUN_USER
group = $RUN_USER
listen.owner = $RUN_USER
listen.group = $RUN_USER
listen.mode = 0660"
else
    POOL_USER_LINES="; not root: the workers run as $(id -un)"
fi
nginx_lines

export TPL_WORK="$WORK" TPL_PORT="${DBSTAND_PORT:?DBSTAND_PORT is not set}" \
    TPL_WORKERS="${DBSTAND_WORKERS:-2}" TPL_APP="$APP" TPL_STATIC="$STATIC" \
    TPL_USER_LINE="$USER_LINE" TPL_POOL_USER_LINES="$POOL_USER_LINES" TPL_ACCESS_LOG="$ACCESS_LOG"
render "$STACK/nginx.conf.in" "$WORK/nginx.conf"
render "$STACK/php-fpm.conf.in" "$WORK/php-fpm.conf"

pids=()
stop_all() {
    trap - TERM INT
    kill -TERM "${pids[@]}" 2>/dev/null || true
    wait || true
}
trap 'stop_all; exit 143' TERM
trap 'stop_all; exit 130' INT

# php-fpm always starts a session of its own (setsid), so a signal to our process
# group misses it: the trap above forwards SIGTERM, and the parent-death signal
# stops it even if this script is killed outright.
setpriv --pdeathsig TERM /usr/sbin/php-fpm8.2 --nodaemonize --fpm-config "$WORK/php-fpm.conf" &
pids+=($!)
/usr/sbin/nginx -p "$WORK" -c "$WORK/nginx.conf" -e "$WORK/nginx-error.log" -g 'daemon off;' &
pids+=($!)

# Whichever server ends first (a crash), take the other one down with it.
status=0
wait -n || status=$?
stop_all
exit "$status"
