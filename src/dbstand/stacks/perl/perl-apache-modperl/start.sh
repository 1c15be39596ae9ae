#!/bin/bash
# Starts Apache 2.4 prefork + mod_perl 2 in the foreground on $DBSTAND_HOST:$DBSTAND_PORT.
# Everything it needs is generated into DBSTAND_WORK_DIR: the Apache config, a copy
# of the Perl modules (the stack folder may not be readable by www-data), a cache
# folder the workers may write, and db.conf (the database settings, password
# included, readable by the worker user only). Apache is exec'ed, so SIGTERM to the
# process group stops it and its children.
set -euo pipefail

STACK="${DBSTAND_STACK_DIR:-$(cd "$(dirname "$0")" && pwd)}"
source "$STACK/../../_shared/web/server.sh"   # WORK, STATIC, PREFIX, RUN_USER and the steps
source "$STACK/../_shared/webtech/db-conf.sh"

mkdir -p "$WORK/run" "$WORK/docroot" "$WORK/app"
rm -rf "$WORK/app/lib"
cp -R "$STACK/../_shared/webtech/lib" "$WORK/app/lib"
cp -R "$STACK/lib/." "$WORK/app/lib/"
chmod -R a+rX "$WORK/app"
APP="$WORK/app"

readable_static

write_db_conf
run_apache APP="$APP"
