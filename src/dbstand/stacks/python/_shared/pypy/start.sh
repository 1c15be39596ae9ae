#!/bin/sh
# One gunicorn worker process under PyPy (one tree holds all the service's CPU), gthread
# with DBSTAND_WORKERS threads; the app (dbstand's parking service) reads its settings
# from the DBSTAND_* environment. Only dbstand's own package is put on PYTHONPATH (a
# link in the work dir), never the site-packages of the CPython that runs dbstand.
# PyPy's bytecode cache goes to the build dir, so nothing is written beside the sources.
set -eu
package="$(cd "$DBSTAND_STACK_DIR/../../.." && pwd)"
mkdir -p "$DBSTAND_WORK_DIR/pythonpath"
ln -s "$package" "$DBSTAND_WORK_DIR/pythonpath/dbstand"
export PYTHONPATH="$DBSTAND_WORK_DIR/pythonpath"
export PYTHONPYCACHEPREFIX="$DBSTAND_BUILD_DIR/pycache"
exec "$DBSTAND_BUILD_DIR/venv/bin/python" -m gunicorn \
    --bind "$DBSTAND_HOST:$DBSTAND_PORT" --workers 1 --worker-class gthread \
    --threads "$DBSTAND_WORKERS" --graceful-timeout 5 --timeout 120 --keep-alive 5 \
    --log-level warning --error-logfile - \
    'dbstand.workloads.parking.http:create_app()'
