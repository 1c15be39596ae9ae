"""dbstand webtech stack: aiohttp's own server on uvloop with aiomysql.

aiohttp serves one process; to use DBSTAND_WORKERS cores the parent binds the socket
once and forks that many children, each running `web.run_app` on the shared socket
(the kernel hands each new connection to one of them). Everything comes from the
DBSTAND_* environment.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import AsyncIterator

import aiomysql
import uvloop
import webtech_common as wt
from aiohttp import web

HELLO = b"Hello, World"

POOL = web.AppKey("pool", aiomysql.Pool)
_cache = wt.PageCache()  # per process


async def _pool_ctx(app: web.Application) -> AsyncIterator[None]:
    """This process's connection pool, for the life of the app."""
    pool = await aiomysql.create_pool(
        **wt.mysql_options(), minsize=1, maxsize=wt.POOL_SIZE)
    app[POOL] = pool
    yield
    pool.close()
    await pool.wait_closed()


async def _page(app: web.Application) -> str:
    """The two SELECTs of the db test, rendered."""
    if POOL not in app:
        raise web.HTTPInternalServerError(text="no database configured")
    async with app[POOL].acquire() as conn, conn.cursor() as cur:
        return await wt.page_from_async(cur)


async def file(request: web.Request) -> web.StreamResponse:
    return web.FileResponse(wt.FILE)


async def hello(request: web.Request) -> web.Response:
    return web.Response(body=HELLO, content_type="text/html")


async def loop(request: web.Request) -> web.StreamResponse:
    """One write per piece: the test measures many small writes (sent chunked)."""
    response = web.StreamResponse(headers={"Content-Type": "text/html"})
    await response.prepare(request)
    try:
        for _ in range(wt.LOOP_COUNT):
            await response.write(HELLO)
        await response.write_eof()
    except ConnectionResetError:  # the client left mid-answer (a load tool stopping)
        pass
    return response


async def big(request: web.Request) -> web.Response:
    return web.Response(body=wt.BIG, content_type="text/plain")


async def db(request: web.Request) -> web.Response:
    return web.Response(text=await _page(request.app), content_type="text/html")


async def cache(request: web.Request) -> web.Response:
    """The db page from this process's memory while it is younger than 15 s."""
    page = _cache.fresh() or _cache.keep(await _page(request.app))
    return web.Response(text=page, content_type="text/html", headers=wt.cache_headers())


async def json_page(request: web.Request) -> web.Response:
    return web.Response(text=wt.JSON_BODY, content_type="application/json")


async def plaintext(request: web.Request) -> web.Response:
    return web.Response(text="Hello, World!", content_type="text/plain")


def make_app() -> web.Application:
    app = web.Application()
    if os.environ.get("DBSTAND_DB_KIND") == "mysql":
        app.cleanup_ctx.append(_pool_ctx)
    app.router.add_get("/file", file)
    app.router.add_get("/hello", hello)
    app.router.add_get("/loop", loop)
    app.router.add_get("/big", big)
    app.router.add_get("/db", db)
    app.router.add_get("/cache", cache)
    app.router.add_get("/json", json_page)
    app.router.add_get("/plaintext", plaintext)
    return app


def serve(sock: socket.socket) -> None:
    """Run one worker on the shared socket until SIGTERM."""
    access_log = None
    if os.environ.get("DBSTAND_LOGGING") == "1":
        access_log = logging.getLogger("aiohttp.access")
        access_log.setLevel(logging.INFO)
        access_log.addHandler(logging.FileHandler(os.environ["DBSTAND_LOG_FILE"]))
    web.run_app(make_app(), sock=sock, access_log=access_log, print=None,
                shutdown_timeout=5.0, loop=uvloop.new_event_loop())


def main() -> None:
    """Bind once, fork the workers, and stop them all if one dies or on SIGTERM."""
    sock = wt.listening_socket()
    wt.prefork(lambda: serve(sock))


if __name__ == "__main__":
    main()
