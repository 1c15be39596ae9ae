#!/bin/sh
# Start the Web Forms application in the foreground: a copy of the built
# application in the work dir (plus the static file.html, served by System.Web's
# StaticFileHandler), ASP.NET's compiled pages under the work dir's tmp, and the
# host in the process that owns the socket (exec: no shell stays in the tree).
set -eu
work=${DBSTAND_WORK_DIR:?DBSTAND_WORK_DIR is not set}
app=$work/app
mkdir -p "$app" "$work/tmp"
cp -R "$DBSTAND_BUILD_DIR/app/." "$app/"
cp "$DBSTAND_STATIC_DIR/file.html" "$app/file.html"

driver=
for candidate in /usr/lib/*/odbc/libmaodbc.so /usr/lib/odbc/libmaodbc.so; do
    if [ -f "$candidate" ]; then driver=$candidate; break; fi
done
if [ -z "$driver" ]; then
    echo "start.sh: MariaDB's ODBC driver libmaodbc.so not found (Debian package odbc-mariadb)" >&2
fi
export DBSTAND_ODBC_DRIVER="$driver"
# Mono puts ASP.NET's generated assemblies under the temp dir: keep them in the work dir.
export TMPDIR="$work/tmp"
cd "$work"
exec mono --server "$app/bin/DbstandHost.exe" "$app"
