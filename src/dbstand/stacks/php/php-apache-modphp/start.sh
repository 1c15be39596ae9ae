#!/bin/bash
# Starts Apache 2.4 prefork + mod_php in the foreground on 127.0.0.1:$DBSTAND_PORT.
# Everything it needs is generated into DBSTAND_WORK_DIR: the Apache config, a copy of
# the PHP scripts (the stack folder may not be readable by www-data), big.php and
# config.php (the database settings, password included, readable by the worker user
# only). Apache is exec'ed, so SIGTERM to the process group stops it and its children.
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

mkdir -p "$WORK/run" "$WORK/docroot"
rm -rf "$WORK/app"
cp -R "$STACK/../php-common/app" "$WORK/app"
chmod -R a+rX "$WORK/app"
APP="$WORK/app"

# /big: 65,536 bytes made once here, compiled once into opcache's shared memory.
perl -e 'print "<?php\n// Written by start.sh: 0123456789abcdef x 4096 as one literal.\n",
               "header(\x27Content-Type: text/plain\x27);\n",
               "header(\x27Content-Length: 65536\x27);\n",
               "echo \x27", "0123456789abcdef" x 4096, "\x27;\n"' > "$APP/big.php"

if ! worker_readable "$STATIC/file.html" "$STATIC/big.txt"; then
    mkdir -p "$WORK/static"
    cp "$STATIC/file.html" "$STATIC/big.txt" "$WORK/static/"
    chmod -R a+rX "$WORK/static"
    STATIC="$WORK/static"
fi

# config.php: a PHP array literal; the password is read from its file, never argv.
umask 077
perl -e '
    sub lit { my $v = shift; $v =~ s/([\\\x27])/\\$1/g; "\x27$v\x27" }
    my $pw = "";
    if (my $file = $ENV{DBSTAND_DB_PASSWORD_FILE}) {
        open my $fh, "<", $file or die "cannot read $file: $!\n";
        local $/; $pw = <$fh>; $pw = "" unless defined $pw;
    }
    my @kv = (host => $ENV{DBSTAND_DB_HOST} // "127.0.0.1", port => $ENV{DBSTAND_DB_PORT} // "3306",
              name => $ENV{DBSTAND_DB_NAME} // "", user => $ENV{DBSTAND_DB_USER} // "",
              password => $pw, table => ($ENV{DBSTAND_PREFIX} // "dbstand_") . "world");
    print "<?php\nreturn [\n";
    while (my ($k, $v) = splice @kv, 0, 2) { print "    ", lit($k), " => ", lit($v), ",\n" }
    print "];\n";' > "$APP/config.php"
umask 022
if [ "$(id -u)" = 0 ]; then
    chgrp "$RUN_USER" "$APP/config.php"
    chmod 0640 "$APP/config.php"
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
