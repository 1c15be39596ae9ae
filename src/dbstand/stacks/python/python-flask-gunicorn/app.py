"""dbstand webtech stack: Flask on gunicorn (gthread workers) with PyMySQL.

Written as a Flask user would: one module, plain routes, one database connection
per worker thread. Everything comes from the DBSTAND_* environment.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator

import pymysql
import webtech_common as wt
from flask import Flask, Response, send_from_directory

app = Flask(__name__)
_local = threading.local()
_cache = wt.PageCache()  # per process


def _connection() -> pymysql.connections.Connection:
    """This thread's connection, opened on first use (gthread runs several threads)."""
    conn = getattr(_local, "conn", None)
    if conn is None:
        conn = pymysql.connect(**wt.mysql_options("database"))
        _local.conn = conn
    return conn


def _page() -> str:
    """The two SELECTs of the db test, rendered."""
    with _connection().cursor() as cur:
        return wt.page_from(cur)


@app.get("/file")
def file() -> Response:
    return send_from_directory(os.environ["DBSTAND_STATIC_DIR"], "file.html")


@app.get("/hello")
def hello() -> str:
    return wt.HELLO


@app.get("/loop")
def loop() -> Response:
    def pieces() -> Iterator[str]:
        # One piece per write: the test measures many small writes.
        for _ in range(wt.LOOP_COUNT):
            yield wt.HELLO
    return Response(pieces(), mimetype="text/html")


@app.get("/big")
def big() -> Response:
    return Response(wt.BIG, mimetype="text/plain")


@app.get("/db")
def db() -> str:
    return _page()


@app.get("/cache")
def cache() -> Response:
    """The db page from this process's memory while it is younger than 15 s."""
    page = _cache.fresh() or _cache.keep(_page())
    return Response(page, mimetype="text/html", headers=wt.cache_headers())


@app.get("/json")
def json_page() -> Response:
    return Response(json.dumps({"message": "Hello, World!"}, separators=(",", ":")),
                    mimetype="application/json")


@app.get("/plaintext")
def plaintext() -> Response:
    return Response("Hello, World!", mimetype="text/plain")
