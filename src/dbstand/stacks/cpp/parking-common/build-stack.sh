#!/bin/sh
# build-stack.sh STACK_DIR SHARED_DIR...: Release build of a C++ parking stack with
# CMake into $DBSTAND_BUILD_DIR, and a hash of the shared folders it was built from
# (dbstand caches a build by a hash of the stack's own folder only: start-stack.sh
# compares this hash so that a change in a shared folder is never run stale).
set -eu
stack_dir=$1; shift
name=$(basename "$stack_dir")
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
cmake -S "$stack_dir" -B "$tree" -DCMAKE_BUILD_TYPE=Release
cmake --build "$tree" --parallel 2
cp "$tree/$name" "$DBSTAND_BUILD_DIR/$name"
cd "$stack_dir"
"$(dirname "$0")/sources-hash.sh" "$@" > "$DBSTAND_BUILD_DIR/shared-sources.sha256"
