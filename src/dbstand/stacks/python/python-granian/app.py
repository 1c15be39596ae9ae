"""dbstand webtech stack: an RSGI application on Granian with aiomysql.

RSGI is Granian's own interface (the Rust server hands each request to Python
with direct str/bytes/file/stream responses, no ASGI message dicts). Granian
runs DBSTAND_WORKERS worker processes; each opens its pool in `__rsgi_init__`.
Everything comes from the DBSTAND_* environment.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import aiomysql
import webtech_common as wt

SERVER = ("server", "granian")
HTML = [("content-type", "text/html; charset=utf-8"), SERVER]
TEXT = [("content-type", "text/plain; charset=utf-8"), SERVER]
JSON = [("content-type", "application/json"), SERVER]


class App:
    """The RSGI application: one instance per worker process."""

    def __init__(self) -> None:
        self.pool: aiomysql.Pool | None = None
        self.cache = wt.PageCache()
        self.routes = {"/file": self.file, "/hello": self.hello, "/loop": self.loop,
                       "/big": self.big, "/db": self.db, "/cache": self.cached,
                       "/json": self.json, "/plaintext": self.plaintext}

    def __rsgi_init__(self, loop: asyncio.AbstractEventLoop) -> None:
        """Open this worker's pool before it serves (the loop is not running yet)."""
        if os.environ.get("DBSTAND_DB_KIND") == "mysql":
            self.pool = loop.run_until_complete(aiomysql.create_pool(
                **wt.mysql_options(), minsize=1,
                maxsize=wt.POOL_SIZE))

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
            return await wt.page_from_async(cur)

    async def file(self, proto: Any) -> None:
        proto.response_file(200, [("content-type", "text/html"), SERVER], wt.FILE)

    async def hello(self, proto: Any) -> None:
        proto.response_str(200, HTML, wt.HELLO)

    async def loop(self, proto: Any) -> None:
        """One send per piece: the test measures many small writes (sent chunked)."""
        transport = proto.response_stream(200, HTML)
        for _ in range(wt.LOOP_COUNT):
            await transport.send_str(wt.HELLO)

    async def big(self, proto: Any) -> None:
        proto.response_bytes(200, TEXT, wt.BIG)

    async def db(self, proto: Any) -> None:
        proto.response_str(200, HTML, await self._page())

    async def cached(self, proto: Any) -> None:
        """The db page from this process's memory while it is younger than 15 s."""
        page = self.cache.fresh() or self.cache.keep(await self._page())
        proto.response_str(200, [*HTML, *wt.cache_headers().items()], page)

    async def json(self, proto: Any) -> None:
        proto.response_str(200, JSON, wt.JSON_BODY)

    async def plaintext(self, proto: Any) -> None:
        proto.response_str(200, TEXT, "Hello, World!")


app = App()
