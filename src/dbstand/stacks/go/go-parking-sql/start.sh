#!/bin/sh
# Runs the built server in the foreground (the launcher stops it with SIGTERM).
set -eu
exec "$DBSTAND_BUILD_DIR/server"
