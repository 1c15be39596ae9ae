"""dbstand webtech stack: Falcon (WSGI) on waitress with PyMySQL.

waitress is a pure-Python, multi-threaded server that installs from a wheel
(bjoern and meinheld have no wheels and would need a C build). It runs one
process; to use DBSTAND_WORKERS cores the parent binds the socket once and forks
that many children, each running waitress with 4 threads on the shared socket.
Everything comes from the DBSTAND_* environment.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import random
import signal
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from email.utils import formatdate
from typing import Any

import falcon
import pymysql
import waitress

HELLO = b"Hello, World"
LOOP_COUNT = 5462  # 5,462 x 12 bytes = 65,544 bytes, just past 64 KiB
BIG = b"0123456789abcdef" * 4096  # built once at start-up
CACHE_TTL = 15.0
THREADS = 4
TABLE = os.environ.get("DBSTAND_PREFIX", "dbstand_") + "world"
ROW_SQL = f"SELECT id, randomnumber FROM {TABLE} WHERE id = %s"
COUNT_SQL = f"SELECT COUNT(*) FROM {TABLE}"
PAGE = ("<!DOCTYPE html><html><head><title>db</title></head><body>"
        "<p>world id={0} randomnumber={1}</p><p>count={2}</p></body></html>\n")
JSON_BODY = json.dumps({"message": "Hello, World!"}, separators=(",", ":")).encode()

_local = threading.local()
_cache: tuple[float, str] = (0.0, "")  # (monotonic expiry, page): per process


def _password() -> str:
    """Read the password from its file: it never travels in the environment."""
    with open(os.environ["DBSTAND_DB_PASSWORD_FILE"]) as fh:
        return fh.read().rstrip("\r\n")


def _connection() -> pymysql.connections.Connection:
    """This thread's connection, opened on first use (waitress runs several threads)."""
    conn = getattr(_local, "conn", None)
    if conn is None:
        if os.environ.get("DBSTAND_DB_KIND") != "mysql":
            raise falcon.HTTPInternalServerError(description="no database configured")
        conn = pymysql.connect(host=os.environ["DBSTAND_DB_HOST"],
                               port=int(os.environ["DBSTAND_DB_PORT"]),
                               user=os.environ["DBSTAND_DB_USER"], password=_password(),
                               database=os.environ["DBSTAND_DB_NAME"], autocommit=True)
        _local.conn = conn
    return conn


def _page() -> str:
    """The two SELECTs of the db test, rendered."""
    with _connection().cursor() as cur:
        cur.execute(ROW_SQL, (random.randint(1, 10000),))
        row_id, number = cur.fetchone()
        cur.execute(COUNT_SQL)
        (count,) = cur.fetchone()
    return PAGE.format(row_id, number, count)


class Hello:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.content_type = falcon.MEDIA_HTML
        resp.data = HELLO


class Loop:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        def pieces() -> Iterator[bytes]:
            # One piece per write: the test measures many small writes.
            for _ in range(LOOP_COUNT):
                yield HELLO
        resp.content_type = falcon.MEDIA_HTML
        resp.stream = pieces()


class Big:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.content_type = falcon.MEDIA_TEXT
        resp.data = BIG


class Db:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.content_type = falcon.MEDIA_HTML
        resp.text = _page()


class Cache:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        """The db page from this process's memory while it is younger than 15 s."""
        global _cache
        now = time.monotonic()
        expiry, page = _cache
        if now >= expiry:
            page = _page()
            _cache = (now + CACHE_TTL, page)
        resp.content_type = falcon.MEDIA_HTML
        resp.cache_control = ["max-age=15"]
        resp.set_header("Expires", formatdate(time.time() + CACHE_TTL, usegmt=True))
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
    workers = int(os.environ.get("DBSTAND_WORKERS") or os.cpu_count() or 1)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((os.environ.get("DBSTAND_HOST", "127.0.0.1"), int(os.environ["DBSTAND_PORT"])))
    sock.listen(1024)
    sock.setblocking(False)
    app: Callable[..., Any] = make_app()
    if os.environ.get("DBSTAND_LOGGING") == "1":
        app = with_access_log(app, os.environ["DBSTAND_LOG_FILE"])
    children: list[int] = []
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:  # a worker: serve until SIGTERM, never return into this loop
            code = 0
            try:
                waitress.serve(app, sockets=[sock], threads=THREADS)
            except Exception:
                traceback.print_exc()
                code = 1
            os._exit(code)
        children.append(pid)

    def stop(signum: int, frame: object) -> None:
        for child in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    status = 0
    while children:
        pid, code = os.wait()
        children.remove(pid)
        if code != 0 and status == 0:  # a worker failed: take the others down too
            status = 1
            stop(signal.SIGTERM, None)
    sys.exit(status)


if __name__ == "__main__":
    main()
