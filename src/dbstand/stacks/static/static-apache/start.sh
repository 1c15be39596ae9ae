#!/bin/bash
# Starts Apache 2.4 (event MPM) in the foreground on $DBSTAND_HOST:$DBSTAND_PORT,
# serving DBSTAND_STATIC_DIR's file.html at /file and big.txt at /big: no
# application code, the static limit row. The config is generated into
# DBSTAND_WORK_DIR; Apache is exec'ed, so SIGTERM to the process group stops it.
set -euo pipefail

STACK="${DBSTAND_STACK_DIR:-$(cd "$(dirname "$0")" && pwd)}"
WORKERS="${DBSTAND_WORKERS:-2}"
source "$STACK/../../_shared/web/server.sh"   # WORK, STATIC, RUN_USER and the steps

mkdir -p "$WORK/run" "$WORK/docroot"

readable_static
run_apache MAX_THREADS="$((WORKERS * 25))"
