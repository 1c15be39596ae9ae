#!/bin/sh
# Release build with CMake into $DBSTAND_BUILD_DIR (../parking-common/build-stack.sh).
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../parking-common/build-stack.sh" "$here" ../parking-common ../cpp-parking-soci-orm
