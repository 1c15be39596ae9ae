#!/bin/bash
# Starts Apache 2.4 prefork + mod_cgid in the foreground on $DBSTAND_HOST:$DBSTAND_PORT;
# every dynamic path is a Perl CGI program. Everything it needs is generated into
# DBSTAND_WORK_DIR: the Apache config, a copy of the programs and the Perl module
# (the stack folder may not be readable by www-data, and the programs must be
# executable), a cache folder the programs may write, and db.conf (the database
# settings, password included, readable by the worker user only). Apache is
# exec'ed, so SIGTERM to the process group stops it, its children and cgid.
set -euo pipefail

STACK="${DBSTAND_STACK_DIR:-$(cd "$(dirname "$0")" && pwd)}"
source "$STACK/../../_shared/web/server.sh"   # WORK, STATIC, PREFIX, RUN_USER and the steps
source "$STACK/../_shared/webtech/db-conf.sh"

mkdir -p "$WORK/run" "$WORK/docroot" "$WORK/app"
rm -rf "$WORK/app/lib" "$WORK/app/cgi"
cp -R "$STACK/../_shared/webtech/lib" "$WORK/app/lib"
cp -R "$STACK/cgi" "$WORK/app/cgi"
chmod -R a+rX "$WORK/app"
chmod 0755 "$WORK"/app/cgi/*.cgi
APP="$WORK/app"

readable_static

write_db_conf
run_apache APP="$APP"
