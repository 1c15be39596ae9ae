#!/bin/sh
# Builds the server into the build dir: this stack's own files (its data access and
# rules) with the wire protocol and pricing the two Go stacks share (../go-parking-common,
# the same package main), copied side by side into the build dir and compiled there.
# -mod=mod lets the go command fetch the pinned modules of go.mod/go.sum on a fresh
# machine into the default module cache.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
src="$DBSTAND_BUILD_DIR/src"
mkdir -p "$src"
cp "$here"/*.go "$here/go.mod" "$here/go.sum" "$here/../go-parking-common"/*.go "$src/"
cd "$src"
export GOFLAGS="-mod=mod -buildvcs=false"
exec go build -o "$DBSTAND_BUILD_DIR/server" .
