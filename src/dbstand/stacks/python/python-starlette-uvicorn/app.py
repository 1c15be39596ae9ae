"""dbstand webtech stack: Starlette on uvicorn (uvloop, httptools) with aiomysql.

Written as a Starlette user would: plain routes, a connection pool opened in the
lifespan of each worker process. Everything comes from the DBSTAND_* environment.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from email.utils import formatdate

import aiomysql
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
FILE = os.path.join(os.environ.get("DBSTAND_STATIC_DIR", "."), "file.html")

_pool: aiomysql.Pool | None = None
_cache: tuple[float, str] = (0.0, "")  # (monotonic expiry, page): per process


def _password() -> str:
    """Read the password from its file: it never travels in the environment."""
    with open(os.environ["DBSTAND_DB_PASSWORD_FILE"]) as fh:
        return fh.read().rstrip("\r\n")


@asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    """Open this worker's pool at start-up (when a database is given), close it at exit."""
    global _pool
    if os.environ.get("DBSTAND_DB_KIND") == "mysql":
        _pool = await aiomysql.create_pool(
            host=os.environ["DBSTAND_DB_HOST"], port=int(os.environ["DBSTAND_DB_PORT"]),
            user=os.environ["DBSTAND_DB_USER"], password=_password(),
            db=os.environ["DBSTAND_DB_NAME"], autocommit=True, minsize=1, maxsize=POOL_SIZE)
    yield
    if _pool is not None:
        _pool.close()
        await _pool.wait_closed()


async def _page() -> str:
    """The two SELECTs of the db test, rendered."""
    if _pool is None:
        raise RuntimeError("no database configured")
    async with _pool.acquire() as conn, conn.cursor() as cur:
        await cur.execute(ROW_SQL, (random.randint(1, 10000),))
        row_id, number = await cur.fetchone()
        await cur.execute(COUNT_SQL)
        (count,) = await cur.fetchone()
    return PAGE.format(row_id, number, count)


async def file(request: Request) -> Response:
    return FileResponse(FILE, media_type="text/html")


async def hello(request: Request) -> Response:
    return HTMLResponse(HELLO)


async def loop(request: Request) -> Response:
    async def pieces() -> AsyncIterator[str]:
        # One piece per write: the test measures many small writes.
        for _ in range(LOOP_COUNT):
            yield HELLO
    return StreamingResponse(pieces(), media_type="text/html")


async def big(request: Request) -> Response:
    return Response(BIG, media_type="text/plain")


async def db(request: Request) -> Response:
    return HTMLResponse(await _page())


async def cache(request: Request) -> Response:
    """The db page from this process's memory while it is younger than 15 s."""
    global _cache
    now = time.monotonic()
    expiry, page = _cache
    if now >= expiry:
        page = await _page()
        _cache = (now + CACHE_TTL, page)
    return HTMLResponse(page, headers={
        "Cache-Control": "max-age=15",
        "Expires": formatdate(time.time() + CACHE_TTL, usegmt=True)})


async def json_page(request: Request) -> Response:
    return JSONResponse({"message": "Hello, World!"})


async def plaintext(request: Request) -> Response:
    return PlainTextResponse("Hello, World!")


app = Starlette(lifespan=lifespan, routes=[
    Route("/file", file), Route("/hello", hello), Route("/loop", loop),
    Route("/big", big), Route("/db", db), Route("/cache", cache),
    Route("/json", json_page), Route("/plaintext", plaintext),
])
