"""The HTTP transport (spec "Transport") as a WSGI app, and its gunicorn entry point.

`GET /<function>?<query>` (or POST with a form body) answers JSON with `status` and
`ts`; an unknown function or a malformed service_descr is HTTP 500 with a JSON error
body. The app server is gunicorn, run by app.running_service in its own process so
that its CPU can be measured: one worker process (`--workers 1`, so one process
tree holds all the Python CPU), the gthread worker with `--threads T` (T=1 by
default: requests are served one at a time, like the study's single-threaded
server). gthread rather than the plain sync worker because the sync worker closes
every connection after one request, while the methodology measures keep-alive by
default; with T=1 the two serve requests identically otherwise. Waitress was the
alternative; gunicorn's prefork master/worker split is what Python services deploy.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any
from urllib.parse import parse_qsl

from dbstand.workloads.parking import functions, logs
from dbstand.workloads.parking.functions import Service
from dbstand.workloads.parking.protocol import BadRequest, server_ts

log = logging.getLogger("dbstand.workloads.parking.http")

#: a comma-separated list of deliberate faults (functions.BROKEN), for testing the suite
BROKEN_ENV = "DBSTAND_PARKING_BROKEN"
StartResponse = Callable[[str, list[tuple[str, str]]], Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]

_REASONS = {200: "200 OK", 405: "405 Method Not Allowed", 500: "500 Internal Server Error"}


def _params(environ: dict[str, Any]) -> dict[str, str]:
    """Query string, plus the form body of a POST (last value of a repeated name wins)."""
    pairs = parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True)
    if environ.get("REQUEST_METHOD") == "POST":
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length > 0 else b""
        pairs += parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)
    return dict(pairs)


def make_app(service: Service, broken: frozenset[str] = frozenset()) -> WsgiApp:
    """The WSGI app serving `service`."""

    def app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        method = environ.get("REQUEST_METHOD", "GET")
        path = environ.get("PATH_INFO", "")
        if log.isEnabledFor(logging.INFO):
            log.info("request %s %s?%s", method, path, environ.get("QUERY_STRING", ""))
        code = 200
        if method not in ("GET", "POST"):
            code, answer = 405, {"status": "error", "error": f"method {method} not allowed"}
        else:
            try:
                answer = functions.handle(path.lstrip("/"), _params(environ), service,
                                          broken)
            except BadRequest as exc:
                code, answer = 500, {"status": "error", "error": str(exc)}
        answer["ts"] = server_ts()
        body = json.dumps(answer).encode()
        if log.isEnabledFor(logging.INFO):
            log.info("answer %d %s", code, body.decode())
        start_response(_REASONS[code], [("Content-Type", "application/json"),
                                        ("Content-Length", str(len(body)))])
        return [body]

    return app


def create_app() -> WsgiApp:
    """gunicorn's entry point, configured by the launcher's DBSTAND_* environment
    (docs/stack-manifest.md): the implementation in DBSTAND_PARKING_IMPL, the target in
    DBSTAND_DB_URL with its password read from DBSTAND_DB_PASSWORD_FILE (never from
    the environment), the request log in DBSTAND_LOG_FILE when DBSTAND_LOGGING=1."""
    from dbstand.targets.kinds import get_kind
    from dbstand.targets.url import parse_target_url
    from dbstand.workloads.parking.implementations import load_service

    env = os.environ
    target = parse_target_url(env["DBSTAND_DB_URL"].replace(":***@", "@"))
    if get_kind(target.kind).embedded:
        target = replace(target, database=env.get("DBSTAND_DB_NAME") or target.database)
    secret = env.get("DBSTAND_DB_PASSWORD_FILE")
    if secret:
        with open(secret, encoding="utf-8") as fh:
            target = target.with_password(fh.read() or None)
    log_path = env.get("DBSTAND_LOG_FILE") if env.get("DBSTAND_LOGGING") == "1" else None
    logs.configure(log_path)
    service = load_service(env["DBSTAND_PARKING_IMPL"], target, env["DBSTAND_PREFIX"],
                           log_sql=bool(log_path), threads=int(env.get("DBSTAND_WORKERS", 1)))
    atexit.register(service.close)
    broken = env.get(BROKEN_ENV, "")
    return make_app(service, frozenset(b for b in broken.split(",") if b))
