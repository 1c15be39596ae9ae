"""dbstand webtech stack: Flask on gunicorn (gthread workers) with PyMySQL.

Written as a Flask user would: one module, plain routes, one database connection
per worker thread. Everything comes from the DBSTAND_* environment.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections.abc import Iterator
from email.utils import formatdate

import pymysql
from flask import Flask, Response, send_from_directory

HELLO = "Hello, World"
LOOP_COUNT = 5462  # 5,462 x 12 bytes = 65,544 bytes, just past 64 KiB
BIG = b"0123456789abcdef" * 4096  # built once per worker at start-up
CACHE_TTL = 15.0
TABLE = os.environ.get("DBSTAND_PREFIX", "dbstand_") + "world"
ROW_SQL = f"SELECT id, randomnumber FROM {TABLE} WHERE id = %s"
COUNT_SQL = f"SELECT COUNT(*) FROM {TABLE}"
PAGE = ("<!DOCTYPE html><html><head><title>db</title></head><body>"
        "<p>world id={0} randomnumber={1}</p><p>count={2}</p></body></html>\n")

app = Flask(__name__)
_local = threading.local()
_cache: tuple[float, str] = (0.0, "")  # (monotonic expiry, page): per process


def _password() -> str:
    """Read the password from its file: it never travels in the environment."""
    with open(os.environ["DBSTAND_DB_PASSWORD_FILE"]) as fh:
        return fh.read().rstrip("\r\n")


def _connection() -> pymysql.connections.Connection:
    """This thread's connection, opened on first use (gthread runs several threads)."""
    conn = getattr(_local, "conn", None)
    if conn is None:
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


@app.get("/file")
def file() -> Response:
    return send_from_directory(os.environ["DBSTAND_STATIC_DIR"], "file.html")


@app.get("/hello")
def hello() -> str:
    return HELLO


@app.get("/loop")
def loop() -> Response:
    def pieces() -> Iterator[str]:
        # One piece per write: the test measures many small writes.
        for _ in range(LOOP_COUNT):
            yield HELLO
    return Response(pieces(), mimetype="text/html")


@app.get("/big")
def big() -> Response:
    return Response(BIG, mimetype="text/plain")


@app.get("/db")
def db() -> str:
    return _page()


@app.get("/cache")
def cache() -> Response:
    """The db page from this process's memory while it is younger than 15 s."""
    global _cache
    now = time.monotonic()
    expiry, page = _cache
    if now >= expiry:
        page = _page()
        _cache = (now + CACHE_TTL, page)
    return Response(page, mimetype="text/html", headers={
        "Cache-Control": "max-age=15",
        "Expires": formatdate(time.time() + CACHE_TTL, usegmt=True)})


@app.get("/json")
def json_page() -> Response:
    return Response(json.dumps({"message": "Hello, World!"}, separators=(",", ":")),
                    mimetype="application/json")


@app.get("/plaintext")
def plaintext() -> Response:
    return Response("Hello, World!", mimetype="text/plain")
