"""dbstand webtech stack: Starlette on uvicorn (uvloop, httptools) with aiomysql.

Written as a Starlette user would: plain routes, a connection pool opened in the
lifespan of each worker process. Everything comes from the DBSTAND_* environment.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import aiomysql
import webtech_common as wt
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route

_pool: aiomysql.Pool | None = None
_cache = wt.PageCache()  # per process


@asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    """Open this worker's pool at start-up (when a database is given), close it at exit."""
    global _pool
    if os.environ.get("DBSTAND_DB_KIND") == "mysql":
        _pool = await aiomysql.create_pool(
            **wt.mysql_options(), minsize=1, maxsize=wt.POOL_SIZE)
    yield
    if _pool is not None:
        _pool.close()
        await _pool.wait_closed()


async def _page() -> str:
    """The two SELECTs of the db test, rendered."""
    if _pool is None:
        raise RuntimeError("no database configured")
    async with _pool.acquire() as conn, conn.cursor() as cur:
        return await wt.page_from_async(cur)


async def file(request: Request) -> Response:
    return FileResponse(wt.FILE, media_type="text/html")


async def hello(request: Request) -> Response:
    return HTMLResponse(wt.HELLO)


async def loop(request: Request) -> Response:
    async def pieces() -> AsyncIterator[str]:
        # One piece per write: the test measures many small writes.
        for _ in range(wt.LOOP_COUNT):
            yield wt.HELLO
    return StreamingResponse(pieces(), media_type="text/html")


async def big(request: Request) -> Response:
    return Response(wt.BIG, media_type="text/plain")


async def db(request: Request) -> Response:
    return HTMLResponse(await _page())


async def cache(request: Request) -> Response:
    """The db page from this process's memory while it is younger than 15 s."""
    page = _cache.fresh() or _cache.keep(await _page())
    return HTMLResponse(page, headers=wt.cache_headers())


async def json_page(request: Request) -> Response:
    return JSONResponse({"message": "Hello, World!"})


async def plaintext(request: Request) -> Response:
    return PlainTextResponse("Hello, World!")


app = Starlette(lifespan=lifespan, routes=[
    Route("/file", file), Route("/hello", hello), Route("/loop", loop),
    Route("/big", big), Route("/db", db), Route("/cache", cache),
    Route("/json", json_page), Route("/plaintext", plaintext),
])
