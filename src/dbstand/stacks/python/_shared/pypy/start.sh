#!/bin/sh
# One gunicorn worker process under PyPy (one tree holds all the service's CPU), gthread
# with DBSTAND_WORKERS threads; the app (dbstand's parking service) reads its settings
# from the DBSTAND_* environment. Only dbstand's own package is put on PYTHONPATH (a
# link in the build dir), never the site-packages of the CPython that runs dbstand.
# PyPy's bytecode cache goes to the build dir, so nothing is written beside the sources;
# it is written whatever the caller's PYTHONDONTWRITEBYTECODE says, and the link is one
# per checkout (named by its path's checksum), so a module's path, and so its cached
# bytecode, is the same at every start: compiled once, not at each start.
set -eu
package="$(cd "$DBSTAND_STACK_DIR/../../.." && pwd)"
links="$DBSTAND_BUILD_DIR/pythonpath-$(printf %s "$package" | cksum | cut -d' ' -f1)"
mkdir -p "$links"
# two starts at once: the second one's ln finds the first one's link
[ -L "$links/dbstand" ] || ln -s "$package" "$links/dbstand" 2>/dev/null || [ -L "$links/dbstand" ]
export PYTHONPATH="$links"
export PYTHONPYCACHEPREFIX="$DBSTAND_BUILD_DIR/pycache"
unset PYTHONDONTWRITEBYTECODE
exec "$DBSTAND_BUILD_DIR/venv/bin/python" -m gunicorn \
    --bind "$DBSTAND_HOST:$DBSTAND_PORT" --workers 1 --worker-class gthread \
    --threads "$DBSTAND_WORKERS" --graceful-timeout 5 --timeout 120 --keep-alive 5 \
    --log-level warning --error-logfile - \
    'dbstand.workloads.parking.http:create_app()'
