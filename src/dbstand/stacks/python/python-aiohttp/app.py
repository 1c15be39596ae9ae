"""dbstand webtech stack: aiohttp's own server on uvloop with aiomysql.

aiohttp serves one process; to use DBSTAND_WORKERS cores the parent binds the socket
once and forks that many children, each running `web.run_app` on the shared socket
(the kernel hands each new connection to one of them). Everything comes from the
DBSTAND_* environment.
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
import time
import traceback
from collections.abc import AsyncIterator
from email.utils import formatdate

import aiomysql
import uvloop
from aiohttp import web

HELLO = b"Hello, World"
LOOP_COUNT = 5462  # 5,462 x 12 bytes = 65,544 bytes, just past 64 KiB
BIG = b"0123456789abcdef" * 4096  # built once at start-up
CACHE_TTL = 15.0
POOL_SIZE = 10
TABLE = os.environ.get("DBSTAND_PREFIX", "dbstand_") + "world"
ROW_SQL = f"SELECT id, randomnumber FROM {TABLE} WHERE id = %s"
COUNT_SQL = f"SELECT COUNT(*) FROM {TABLE}"
PAGE = ("<!DOCTYPE html><html><head><title>db</title></head><body>"
        "<p>world id={0} randomnumber={1}</p><p>count={2}</p></body></html>\n")
JSON_BODY = json.dumps({"message": "Hello, World!"}, separators=(",", ":"))
FILE = os.path.join(os.environ.get("DBSTAND_STATIC_DIR", "."), "file.html")

POOL = web.AppKey("pool", aiomysql.Pool)
_cache: tuple[float, str] = (0.0, "")  # (monotonic expiry, page): per process


def _password() -> str:
    """Read the password from its file: it never travels in the environment."""
    with open(os.environ["DBSTAND_DB_PASSWORD_FILE"]) as fh:
        return fh.read().rstrip("\r\n")


async def _pool_ctx(app: web.Application) -> AsyncIterator[None]:
    """This process's connection pool, for the life of the app."""
    pool = await aiomysql.create_pool(
        host=os.environ["DBSTAND_DB_HOST"], port=int(os.environ["DBSTAND_DB_PORT"]),
        user=os.environ["DBSTAND_DB_USER"], password=_password(),
        db=os.environ["DBSTAND_DB_NAME"], autocommit=True, minsize=1, maxsize=POOL_SIZE)
    app[POOL] = pool
    yield
    pool.close()
    await pool.wait_closed()


async def _page(app: web.Application) -> str:
    """The two SELECTs of the db test, rendered."""
    if POOL not in app:
        raise web.HTTPInternalServerError(text="no database configured")
    async with app[POOL].acquire() as conn, conn.cursor() as cur:
        await cur.execute(ROW_SQL, (random.randint(1, 10000),))
        row_id, number = await cur.fetchone()
        await cur.execute(COUNT_SQL)
        (count,) = await cur.fetchone()
    return PAGE.format(row_id, number, count)


async def file(request: web.Request) -> web.StreamResponse:
    return web.FileResponse(FILE)


async def hello(request: web.Request) -> web.Response:
    return web.Response(body=HELLO, content_type="text/html")


async def loop(request: web.Request) -> web.StreamResponse:
    """One write per piece: the test measures many small writes (sent chunked)."""
    response = web.StreamResponse(headers={"Content-Type": "text/html"})
    await response.prepare(request)
    try:
        for _ in range(LOOP_COUNT):
            await response.write(HELLO)
        await response.write_eof()
    except ConnectionResetError:  # the client left mid-answer (a load tool stopping)
        pass
    return response


async def big(request: web.Request) -> web.Response:
    return web.Response(body=BIG, content_type="text/plain")


async def db(request: web.Request) -> web.Response:
    return web.Response(text=await _page(request.app), content_type="text/html")


async def cache(request: web.Request) -> web.Response:
    """The db page from this process's memory while it is younger than 15 s."""
    global _cache
    now = time.monotonic()
    expiry, page = _cache
    if now >= expiry:
        page = await _page(request.app)
        _cache = (now + CACHE_TTL, page)
    return web.Response(text=page, content_type="text/html", headers={
        "Cache-Control": "max-age=15",
        "Expires": formatdate(time.time() + CACHE_TTL, usegmt=True)})


async def json_page(request: web.Request) -> web.Response:
    return web.Response(text=JSON_BODY, content_type="application/json")


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
    workers = int(os.environ.get("DBSTAND_WORKERS") or os.cpu_count() or 1)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((os.environ.get("DBSTAND_HOST", "127.0.0.1"), int(os.environ["DBSTAND_PORT"])))
    sock.listen(1024)
    sock.setblocking(False)
    children: list[int] = []
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:  # a worker: serve until SIGTERM, never return into this loop
            code = 0
            try:
                serve(sock)
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
