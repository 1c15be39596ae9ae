"""dbstand webtech stack: an RSGI application on Granian with aiomysql.

RSGI is Granian's own interface (the Rust server hands each request to Python
with direct str/bytes/file/stream responses, no ASGI message dicts). Granian
runs DBSTAND_WORKERS worker processes; each opens its pool in `__rsgi_init__`.
Everything comes from the DBSTAND_* environment.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from email.utils import formatdate
from typing import Any

import aiomysql

HELLO = "Hello, World"
LOOP_COUNT = 5462  # 5,462 x 12 bytes = 65,544 bytes, just past 64 KiB
BIG = b"0123456789abcdef" * 4096  # built once per worker at start-up
CACHE_TTL = 15.0
POOL_SIZE = 10
TABLE = os.environ.get("DBSTAND_PREFIX", "dbstand_") + "world"
ROW_SQL = f"SELECT id, randomnumber FROM {TABLE} WHERE id = %s"
COUNT_SQL = f"SELECT COUNT(*) FROM {TABLE}"
PAGE = ("<!DOCTYPE html><html><head><title>db</title></head><body>"
        "<p>world id={0} randomnumber={1}</p><p>count={2}</p></body></html>\n")
JSON_BODY = json.dumps({"message": "Hello, World!"}, separators=(",", ":"))
FILE = os.path.join(os.environ.get("DBSTAND_STATIC_DIR", "."), "file.html")
SERVER = ("server", "granian")
HTML = [("content-type", "text/html; charset=utf-8"), SERVER]
TEXT = [("content-type", "text/plain; charset=utf-8"), SERVER]
JSON = [("content-type", "application/json"), SERVER]


def _password() -> str:
    """Read the password from its file: it never travels in the environment."""
    with open(os.environ["DBSTAND_DB_PASSWORD_FILE"]) as fh:
        return fh.read().rstrip("\r\n")


class App:
    """The RSGI application: one instance per worker process."""

    def __init__(self) -> None:
        self.pool: aiomysql.Pool | None = None
        self.cache: tuple[float, str] = (0.0, "")  # (monotonic expiry, page)
        self.routes = {"/file": self.file, "/hello": self.hello, "/loop": self.loop,
                       "/big": self.big, "/db": self.db, "/cache": self.cached,
                       "/json": self.json, "/plaintext": self.plaintext}

    def __rsgi_init__(self, loop: asyncio.AbstractEventLoop) -> None:
        """Open this worker's pool before it serves (the loop is not running yet)."""
        if os.environ.get("DBSTAND_DB_KIND") == "mysql":
            self.pool = loop.run_until_complete(aiomysql.create_pool(
                host=os.environ["DBSTAND_DB_HOST"], port=int(os.environ["DBSTAND_DB_PORT"]),
                user=os.environ["DBSTAND_DB_USER"], password=_password(),
                db=os.environ["DBSTAND_DB_NAME"], autocommit=True, minsize=1,
                maxsize=POOL_SIZE))

    def __rsgi_del__(self, loop: asyncio.AbstractEventLoop) -> None:
        if self.pool is not None:
            self.pool.close()
            loop.run_until_complete(self.pool.wait_closed())

    async def __rsgi__(self, scope: Any, proto: Any) -> None:
        handler = self.routes.get(scope.path)
        if handler is None or scope.method != "GET":
            proto.response_str(404, TEXT, "Not Found")
            return
        await handler(proto)

    async def _page(self) -> str:
        """The two SELECTs of the db test, rendered."""
        if self.pool is None:
            raise RuntimeError("no database configured")
        async with self.pool.acquire() as conn, conn.cursor() as cur:
            await cur.execute(ROW_SQL, (random.randint(1, 10000),))
            row_id, number = await cur.fetchone()
            await cur.execute(COUNT_SQL)
            (count,) = await cur.fetchone()
        return PAGE.format(row_id, number, count)

    async def file(self, proto: Any) -> None:
        proto.response_file(200, [("content-type", "text/html"), SERVER], FILE)

    async def hello(self, proto: Any) -> None:
        proto.response_str(200, HTML, HELLO)

    async def loop(self, proto: Any) -> None:
        """One send per piece: the test measures many small writes (sent chunked)."""
        transport = proto.response_stream(200, HTML)
        for _ in range(LOOP_COUNT):
            await transport.send_str(HELLO)

    async def big(self, proto: Any) -> None:
        proto.response_bytes(200, TEXT, BIG)

    async def db(self, proto: Any) -> None:
        proto.response_str(200, HTML, await self._page())

    async def cached(self, proto: Any) -> None:
        """The db page from this process's memory while it is younger than 15 s."""
        now = time.monotonic()
        expiry, page = self.cache
        if now >= expiry:
            page = await self._page()
            self.cache = (now + CACHE_TTL, page)
        proto.response_str(200, [*HTML, ("cache-control", "max-age=15"),
                                 ("expires", formatdate(time.time() + CACHE_TTL, usegmt=True))],
                           page)

    async def json(self, proto: Any) -> None:
        proto.response_str(200, JSON, JSON_BODY)

    async def plaintext(self, proto: Any) -> None:
        proto.response_str(200, TEXT, "Hello, World!")


app = App()
