#!/bin/sh
# Install the pinned dependencies (package-lock.json) next to a copy of the server
# in DBSTAND_BUILD_DIR; npm's download cache stays in a temporary folder there.
set -eu
stack_dir=${DBSTAND_STACK_DIR:-$(cd "$(dirname "$0")" && pwd)}
build_dir=${DBSTAND_BUILD_DIR:?DBSTAND_BUILD_DIR is not set}
cp "$stack_dir/package.json" "$stack_dir/package-lock.json" "$stack_dir/server.js" "$build_dir/"
npm ci --prefix "$build_dir" --omit=dev --ignore-scripts --no-audit --no-fund \
    --cache "$build_dir/.npm-cache" --loglevel=warn
rm -rf "$build_dir/.npm-cache"
node -e "require('$build_dir/node_modules/mysql2/package.json')" >/dev/null
echo "built $build_dir (mysql2 $(node -p "require('$build_dir/node_modules/mysql2/package.json').version"))"
