#!/bin/sh
# Runs the server in the foreground (../parking-common/start-stack.sh).
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../parking-common/start-stack.sh" "$here" ../parking-common
