#!/bin/sh
# Builds the server into the build dir. -mod=mod lets the go command fetch the
# pinned modules of go.mod/go.sum into the default module cache on a fresh machine.
set -eu
cd "$(dirname "$0")"
export GOFLAGS="-mod=mod -buildvcs=false"
exec go build -o "$DBSTAND_BUILD_DIR/server" .
