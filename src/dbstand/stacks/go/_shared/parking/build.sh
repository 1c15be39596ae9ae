#!/bin/sh
# Builds a Go parking stack's server into the build dir (go-parking-sql,
# go-parking-gorm): the stack's own files (its data access and rules) with what the two
# share (this folder: the wire protocol, pricing and the server around them, the same
# package main), copied side by side into the build dir and compiled there.
# -mod=mod lets the go command fetch the pinned modules of go.mod/go.sum on a fresh
# machine into the default module cache.
set -eu
here="$DBSTAND_STACK_DIR"
shared="$(cd "$(dirname "$0")" && pwd)"
src="$DBSTAND_BUILD_DIR/src"
mkdir -p "$src"
cp "$here"/*.go "$here/go.mod" "$here/go.sum" "$shared"/*.go "$src/"
cd "$src"
export GOFLAGS="-mod=mod -buildvcs=false"
exec go build -o "$DBSTAND_BUILD_DIR/server" .
