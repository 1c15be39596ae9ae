#!/bin/sh
# start-stack.sh: runs the C++ parking stack's built server in the foreground
# (everything comes from the DBSTAND_* environment).
set -eu
exec "$DBSTAND_BUILD_DIR/$(basename "$DBSTAND_STACK_DIR")"
