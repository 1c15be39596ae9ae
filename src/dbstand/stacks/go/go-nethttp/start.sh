#!/bin/sh
# Runs the built server in the foreground; GOMAXPROCS follows DBSTAND_WORKERS.
set -eu
exec "$DBSTAND_BUILD_DIR/server"
