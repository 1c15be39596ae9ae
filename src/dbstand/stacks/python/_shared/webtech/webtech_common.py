"""What every Python webtech stack shares (stacks/python/_shared/webtech, on the
stacks' PYTHONPATH through their start.sh): the answers of docs/stack-manifest.md's
webtech table, the database settings from the DBSTAND_* environment and the /cache
page's store. Each stack keeps its own framework code: routing, how it writes, pools.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import socket
import sys
import time
import traceback
from collections.abc import Callable
from email.utils import formatdate
from typing import Any

HELLO = "Hello, World"
LOOP_COUNT = 5462  # 5,462 x 12 bytes = 65,544 bytes, just past 64 KiB
BIG = b"0123456789abcdef" * 4096  # built once per process at start-up
CACHE_TTL = 15.0
POOL_SIZE = 10
TABLE = os.environ.get("DBSTAND_PREFIX", "dbstand_") + "world"
ROW_SQL = f"SELECT id, randomnumber FROM {TABLE} WHERE id = %s"
COUNT_SQL = f"SELECT COUNT(*) FROM {TABLE}"
PAGE = ("<!DOCTYPE html><html><head><title>db</title></head><body>"
        "<p>world id={0} randomnumber={1}</p><p>count={2}</p></body></html>\n")
JSON_BODY = json.dumps({"message": "Hello, World!"}, separators=(",", ":"))
FILE = os.path.join(os.environ.get("DBSTAND_STATIC_DIR", "."), "file.html")


def password() -> str:
    """Read the password from its file: it never travels in the environment."""
    with open(os.environ["DBSTAND_DB_PASSWORD_FILE"]) as fh:
        return fh.read().rstrip("\r\n")


def mysql_options(database_key: str = "db") -> dict[str, Any]:
    """The target's connection arguments (autocommit) for aiomysql, or for PyMySQL
    with `database_key="database"` (its name for the database)."""
    return {"host": os.environ["DBSTAND_DB_HOST"], "port": int(os.environ["DBSTAND_DB_PORT"]),
            "user": os.environ["DBSTAND_DB_USER"], "password": password(),
            database_key: os.environ["DBSTAND_DB_NAME"], "autocommit": True}


def cache_headers() -> dict[str, str]:
    """The /cache page's freshness: 15 s from now."""
    return {"Cache-Control": "max-age=15",
            "Expires": formatdate(time.time() + CACHE_TTL, usegmt=True)}


class PageCache:
    """The /cache page: the db page kept in this process's memory for CACHE_TTL seconds.

    `fresh()` is the page while it is young enough, else None: the caller queries
    (sync or async, its own way) and hands the new page to `keep()`. No lock: in an
    event loop nothing runs between the two calls; in threads two may query at once
    near expiry, which costs a query, never a wrong page.
    """

    def __init__(self) -> None:
        self._expiry = 0.0
        self._page = ""

    def fresh(self) -> str | None:
        return self._page if time.monotonic() < self._expiry else None

    def keep(self, page: str) -> str:
        self._expiry, self._page = time.monotonic() + CACHE_TTL, page
        return page


def page_from(cursor: Any) -> str:
    """The two SELECTs of the db test on a DB-API cursor, rendered."""
    cursor.execute(ROW_SQL, (random.randint(1, 10000),))
    row_id, number = cursor.fetchone()
    cursor.execute(COUNT_SQL)
    (count,) = cursor.fetchone()
    return PAGE.format(row_id, number, count)


async def page_from_async(cursor: Any) -> str:
    """The same on an aiomysql cursor."""
    await cursor.execute(ROW_SQL, (random.randint(1, 10000),))
    row_id, number = await cursor.fetchone()
    await cursor.execute(COUNT_SQL)
    (count,) = await cursor.fetchone()
    return PAGE.format(row_id, number, count)


def listening_socket() -> socket.socket:
    """DBSTAND_HOST:DBSTAND_PORT bound once, for workers forked after it."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((os.environ.get("DBSTAND_HOST", "127.0.0.1"), int(os.environ["DBSTAND_PORT"])))
    sock.listen(1024)
    sock.setblocking(False)
    return sock


def prefork(serve: Callable[[], None]) -> None:
    """Fork DBSTAND_WORKERS workers that each run `serve` until SIGTERM; stop them all
    if one dies or on SIGTERM/SIGINT, and exit 1 if one failed."""
    workers = int(os.environ.get("DBSTAND_WORKERS") or os.cpu_count() or 1)
    children: list[int] = []
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:  # a worker: serve until SIGTERM, never return into this loop
            code = 0
            try:
                serve()
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
