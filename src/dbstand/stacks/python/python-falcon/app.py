"""dbstand webtech stack: Falcon (WSGI) on waitress with PyMySQL.

waitress is a pure-Python, multi-threaded server that installs from a wheel
(bjoern and meinheld have no wheels and would need a C build). It runs one
process; to use DBSTAND_WORKERS cores the parent binds the socket once and forks
that many children, each running waitress with 4 threads on the shared socket.
Everything comes from the DBSTAND_* environment.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import falcon
import pymysql
import waitress
import webtech_common as wt

HELLO = b"Hello, World"
THREADS = 4
JSON_BODY = json.dumps({"message": "Hello, World!"}, separators=(",", ":")).encode()

_local = threading.local()
_cache = wt.PageCache()  # per process


def _connection() -> pymysql.connections.Connection:
    """This thread's connection, opened on first use (waitress runs several threads)."""
    conn = getattr(_local, "conn", None)
    if conn is None:
        if os.environ.get("DBSTAND_DB_KIND") != "mysql":
            raise falcon.HTTPInternalServerError(description="no database configured")
        conn = pymysql.connect(**wt.mysql_options("database"))
        _local.conn = conn
    return conn


def _page() -> str:
    """The two SELECTs of the db test, rendered."""
    with _connection().cursor() as cur:
        return wt.page_from(cur)


class Hello:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.content_type = falcon.MEDIA_HTML
        resp.data = HELLO


class Loop:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        def pieces() -> Iterator[bytes]:
            # One piece per write: the test measures many small writes.
            for _ in range(wt.LOOP_COUNT):
                yield HELLO
        resp.content_type = falcon.MEDIA_HTML
        resp.stream = pieces()


class Big:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.content_type = falcon.MEDIA_TEXT
        resp.data = wt.BIG


class Db:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.content_type = falcon.MEDIA_HTML
        resp.text = _page()


class Cache:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """The db page from this process's memory while it is younger than 15 s."""
        page = _cache.fresh() or _cache.keep(_page())
        resp.content_type = falcon.MEDIA_HTML
        resp.set_headers(wt.cache_headers())
        resp.text = page


class Json:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.content_type = falcon.MEDIA_JSON
        resp.data = JSON_BODY


class Plaintext:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.content_type = falcon.MEDIA_TEXT
        resp.data = b"Hello, World!"


def make_app() -> falcon.App:
    app = falcon.App()
    # Falcon's static handler: /file itself answers with the fallback file.html.
    app.add_static_route("/file", os.environ.get("DBSTAND_STATIC_DIR", "."),
                         fallback_filename="file.html")
    app.add_route("/hello", Hello())
    app.add_route("/loop", Loop())
    app.add_route("/big", Big())
    app.add_route("/db", Db())
    app.add_route("/cache", Cache())
    app.add_route("/json", Json())
    app.add_route("/plaintext", Plaintext())
    return app


def with_access_log(app: Callable[..., Iterable[bytes]], path: str) -> Callable[..., Any]:
    """A WSGI wrapper writing one line per request: waitress keeps no access log."""
    log = logging.getLogger("access")
    log.setLevel(logging.INFO)
    log.propagate = False  # waitress sends the root logger to stderr
    log.addHandler(logging.FileHandler(path))

    def logged(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        def start(status: str, headers: list[tuple[str, str]], *exc: Any) -> Any:
            log.info('%s - - [%s] "%s %s %s" %s', environ.get("REMOTE_ADDR", "-"),
                     time.strftime("%d/%b/%Y:%H:%M:%S %z"), environ["REQUEST_METHOD"],
                     environ.get("PATH_INFO", ""), environ["SERVER_PROTOCOL"], status[:3])
            return start_response(status, headers, *exc)
        return app(environ, start)
    return logged


def main() -> None:
    """Bind once, fork the workers, and stop them all if one dies or on SIGTERM."""
    sock = wt.listening_socket()
    app: Callable[..., Any] = make_app()
    if os.environ.get("DBSTAND_LOGGING") == "1":
        app = with_access_log(app, os.environ["DBSTAND_LOG_FILE"])
    wt.prefork(lambda: waitress.serve(app, sockets=[sock], threads=THREADS))


if __name__ == "__main__":
    main()
