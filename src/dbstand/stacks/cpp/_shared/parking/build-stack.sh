#!/bin/sh
# build-stack.sh: Release build of the C++ parking stack in $DBSTAND_STACK_DIR with
# CMake (its CMakeLists.txt includes this folder's parking.cmake) into
# $DBSTAND_BUILD_DIR. The launcher caches the build by a hash of the stack's folder
# and of every folder its manifest lists in `shared`, so a change here rebuilds it.
set -eu
name=$(basename "$DBSTAND_STACK_DIR")
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
cmake -S "$DBSTAND_STACK_DIR" -B "$tree" -DCMAKE_BUILD_TYPE=Release
cmake --build "$tree" --parallel 2
cp "$tree/$name" "$DBSTAND_BUILD_DIR/$name"
