"""dbstand webtech stack: Tornado 6 on uvloop with aiomysql.

Tornado's own multi-process mode: bind the sockets, `fork_processes` into
DBSTAND_WORKERS children, then each child opens its pool and serves. Everything
comes from the DBSTAND_* environment.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket

import aiomysql
import uvloop
import webtech_common as wt
from tornado import httpserver, netutil, process, web

_pool: aiomysql.Pool | None = None
_cache = wt.PageCache()  # per process


async def _page() -> str:
    """The two SELECTs of the db test, rendered."""
    if _pool is None:
        raise web.HTTPError(500, "no database configured")
    async with _pool.acquire() as conn, conn.cursor() as cur:
        return await wt.page_from_async(cur)


class FileHandler(web.StaticFileHandler):
    """Tornado's static handler, with /file mapped to file.html."""

    def parse_url_path(self, url_path: str) -> str:
        return "file.html"


class HelloHandler(web.RequestHandler):
    def get(self) -> None:
        self.write(wt.HELLO)


class LoopHandler(web.RequestHandler):
    def get(self) -> None:
        # One write call per piece: the test measures many small writes.
        for _ in range(wt.LOOP_COUNT):
            self.write(wt.HELLO)


class BigHandler(web.RequestHandler):
    def get(self) -> None:
        self.set_header("Content-Type", "text/plain")
        self.write(wt.BIG)


class DbHandler(web.RequestHandler):
    async def get(self) -> None:
        self.write(await _page())


class CacheHandler(web.RequestHandler):
    async def get(self) -> None:
        """The db page from this process's memory while it is younger than 15 s."""
        page = _cache.fresh() or _cache.keep(await _page())
        for name, value in wt.cache_headers().items():
            self.set_header(name, value)
        self.write(page)


class JsonHandler(web.RequestHandler):
    def get(self) -> None:
        self.set_header("Content-Type", "application/json")
        self.write(wt.JSON_BODY)


class PlaintextHandler(web.RequestHandler):
    def get(self) -> None:
        self.set_header("Content-Type", "text/plain")
        self.write("Hello, World!")


def make_app() -> web.Application:
    settings: dict[str, object] = {}
    if os.environ.get("DBSTAND_LOGGING") == "1":
        access = logging.getLogger("tornado.access")
        access.setLevel(logging.INFO)
        access.propagate = False
        access.addHandler(logging.FileHandler(os.environ["DBSTAND_LOG_FILE"]))
    else:
        settings["log_function"] = lambda handler: None
    return web.Application([
        (r"/(file)", FileHandler, {"path": os.environ.get("DBSTAND_STATIC_DIR", ".")}),
        (r"/hello", HelloHandler),
        (r"/loop", LoopHandler),
        (r"/big", BigHandler),
        (r"/db", DbHandler),
        (r"/cache", CacheHandler),
        (r"/json", JsonHandler),
        (r"/plaintext", PlaintextHandler),
    ], **settings)


async def serve(sockets: list[socket.socket]) -> None:
    """One worker process: open the pool, serve the shared sockets forever."""
    global _pool
    if os.environ.get("DBSTAND_DB_KIND") == "mysql":
        _pool = await aiomysql.create_pool(
            **wt.mysql_options(), minsize=1, maxsize=wt.POOL_SIZE)
    server = httpserver.HTTPServer(make_app())
    server.add_sockets(sockets)
    await asyncio.Event().wait()


def main() -> None:
    workers = int(os.environ.get("DBSTAND_WORKERS") or os.cpu_count() or 1)
    sockets = netutil.bind_sockets(int(os.environ["DBSTAND_PORT"]),
                                   address=os.environ.get("DBSTAND_HOST", "127.0.0.1"))
    process.fork_processes(workers, max_restarts=0)  # the parent waits here
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    asyncio.run(serve(sockets))


if __name__ == "__main__":
    main()
