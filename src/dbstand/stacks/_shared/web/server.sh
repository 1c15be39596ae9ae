# Sourced (bash) by the start scripts of the stacks that run Apache or nginx, in any
# language (php, perl, static): the settings and steps they all share. The functions
# read the launcher's DBSTAND_* environment (docs/stack-manifest.md) and the
# variables set here.

WORK="${DBSTAND_WORK_DIR:?DBSTAND_WORK_DIR is not set}"
HOST="${DBSTAND_HOST:-127.0.0.1}"   # the address to listen on (a namespace's, or loopback)
STATIC="${DBSTAND_STATIC_DIR:?DBSTAND_STATIC_DIR is not set}"
PREFIX="${DBSTAND_PREFIX:-dbstand_}"
RUN_USER=www-data   # the workers' user when started as root
[[ "$PREFIX" =~ ^[A-Za-z0-9_]*$ ]] || { echo "start.sh: bad DBSTAND_PREFIX" >&2; exit 2; }

# worker_readable FILE...: succeeds when the server's worker user can read the files.
worker_readable() {
    [ "$(id -u)" != 0 ] && return 0
    runuser -u "$RUN_USER" -- sh -c 'for f; do [ -r "$f" ] || exit 1; done' sh "$@"
}

# readable_static: points STATIC at copies of the static files when the worker user
# cannot read DBSTAND_STATIC_DIR's.
readable_static() {
    if ! worker_readable "$STATIC/file.html" "$STATIC/big.txt"; then
        mkdir -p "$WORK/static"
        cp "$STATIC/file.html" "$STATIC/big.txt" "$WORK/static/"
        chmod -R a+rX "$WORK/static"
        STATIC="$WORK/static"
    fi
}

# apache_lines: sets USER_LINES (workers as RUN_USER when started as root) and
# ACCESS_LOG (DBSTAND_LOG_FILE when DBSTAND_LOGGING=1) for an Apache config.
apache_lines() {
    if [ "$(id -u)" = 0 ]; then
        USER_LINES="User $RUN_USER"$'\n'"Group $RUN_USER"
    else
        USER_LINES="# not root: the workers run as $(id -un)"
    fi
    if [ "${DBSTAND_LOGGING:-0}" = 1 ]; then
        ACCESS_LOG="CustomLog \"${DBSTAND_LOG_FILE:?DBSTAND_LOG_FILE is not set}\" combined"
    else
        ACCESS_LOG="# request logging off (DBSTAND_LOGGING=0)"
    fi
}

# nginx_lines: USER_LINE and ACCESS_LOG, the same for an nginx config.
nginx_lines() {
    if [ "$(id -u)" = 0 ]; then
        USER_LINE="user $RUN_USER $RUN_USER;"
    else
        USER_LINE="# not root: the workers run as $(id -un)"
    fi
    if [ "${DBSTAND_LOGGING:-0}" = 1 ]; then
        ACCESS_LOG="access_log ${DBSTAND_LOG_FILE:?DBSTAND_LOG_FILE is not set} combined;"
    else
        ACCESS_LOG="access_log off;"
    fi
}

# render TEMPLATE OUT: TEMPLATE with every @NAME@ replaced by the environment's
# TPL_NAME (exported by the caller for this command; @HOST@ is HOST unless given); a
# name without a value fails.
render() {
    TPL_HOST="${TPL_HOST:-$HOST}" perl -pe 's/\@([A-Z_]+)\@/exists $ENV{"TPL_$1"} ? $ENV{"TPL_$1"} : die "no value for \@$1\@\n"/ge' \
        "$1" > "$2"
}

# run_apache [NAME=VALUE...]: $STACK/httpd.conf.in rendered into $WORK/httpd.conf with
# @WORK@, @HOST@, @PORT@, @WORKERS@, @STATIC@, @USER_LINES@, @ACCESS_LOG@ and each NAME given,
# then Apache in the foreground (exec'ed, so SIGTERM to the process group stops it
# and its children).
run_apache() {
    apache_lines
    (
        export TPL_WORK="$WORK" TPL_PORT="${DBSTAND_PORT:?DBSTAND_PORT is not set}" \
            TPL_WORKERS="${DBSTAND_WORKERS:-2}" TPL_STATIC="$STATIC" \
            TPL_USER_LINES="$USER_LINES" TPL_ACCESS_LOG="$ACCESS_LOG"
        for pair in "$@"; do export "TPL_$pair"; done
        render "$STACK/httpd.conf.in" "$WORK/httpd.conf"
    )
    exec /usr/sbin/apache2 -d "$WORK" -f "$WORK/httpd.conf" -DFOREGROUND
}
