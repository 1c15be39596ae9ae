#!/bin/bash
# Starts Apache 2.4 prefork + mod_php in the foreground on $DBSTAND_HOST:$DBSTAND_PORT.
# Everything it needs is generated into DBSTAND_WORK_DIR: the Apache config, a copy of
# the PHP scripts (the stack folder may not be readable by www-data), big.php and
# config.php (the database settings, password included, readable by the worker user
# only). Apache is exec'ed, so SIGTERM to the process group stops it and its children.
set -euo pipefail

STACK="${DBSTAND_STACK_DIR:-$(cd "$(dirname "$0")" && pwd)}"
source "$STACK/../../_shared/web/server.sh"   # WORK, STATIC, PREFIX, RUN_USER and the steps
source "$STACK/../_shared/webtech/app.sh"

mkdir -p "$WORK/run" "$WORK/docroot"
php_app
readable_static
run_apache APP="$APP"
