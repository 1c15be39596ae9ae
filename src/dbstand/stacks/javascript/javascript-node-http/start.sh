#!/bin/sh
# Run the cluster primary in the foreground (exec: it owns the process tree); its
# workers are its children and die with it.
set -eu
cd "${DBSTAND_WORK_DIR:?DBSTAND_WORK_DIR is not set}"
exec node "${DBSTAND_BUILD_DIR:?DBSTAND_BUILD_DIR is not set}/server.js"
