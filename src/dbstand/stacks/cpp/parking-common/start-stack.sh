#!/bin/sh
# start-stack.sh STACK_DIR SHARED_DIR...: runs the built server in the foreground
# (everything comes from the DBSTAND_* environment), unless a shared folder changed
# since the build: then the stale build is removed, so that the next start rebuilds.
set -eu
stack_dir=$1; shift
name=$(basename "$stack_dir")
built=$(cat "$DBSTAND_BUILD_DIR/shared-sources.sha256" 2>/dev/null || true)
now=$(cd "$stack_dir" && "$(dirname "$0")/sources-hash.sh" "$@")
if [ "$built" != "$now" ]; then
  echo "$name: $* changed since this build: removing the stale build" \
       "$DBSTAND_BUILD_DIR; start again to rebuild" >&2
  rm -rf "$DBSTAND_BUILD_DIR"
  exit 1
fi
exec "$DBSTAND_BUILD_DIR/$name"
