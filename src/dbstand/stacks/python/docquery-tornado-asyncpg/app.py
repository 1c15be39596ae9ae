"""dbstand docquery stack: Tornado 6 + asyncpg, asynchronous, on PostgreSQL.

The relational analog of the Motor row: `async def get` awaits the query on a pool
of 10 connections, so the loop serves other requests meanwhile. `ORDER BY id` makes
the page the same 30 documents the MongoDB-wire stacks return in natural order (see
dbstand/workloads/docquery/data.py). asyncpg prepares the statement once per
connection and caches it. Everything comes from the DBSTAND_* environment
(docs/stack-manifest.md).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from typing import Any

import asyncpg
from tornado import web

PAGE = 30
POOL_SIZE = 10
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
QUERY = (f"SELECT id, title, created FROM {os.environ.get('DBSTAND_PREFIX', 'dbstand_')}posts "
         f"ORDER BY id LIMIT {PAGE}")


def item(row: Any) -> dict[str, Any]:
    """A row as the endpoint shows it."""
    row_id, title, created = row
    return {"_id": row_id, "title": title,
            "created": created.strftime(TIME_FORMAT) if created is not None else None}


def password() -> str | None:
    """The password, only ever from its file."""
    path = os.environ.get("DBSTAND_DB_PASSWORD_FILE")
    if not path:
        return None
    with open(path) as fh:
        return fh.read().rstrip("\r\n") or None


def request_logging() -> dict[str, Any]:
    """Tornado's access log to DBSTAND_LOG_FILE when logging is on; no log call at all
    when it is off (the logging-off row must not pay for a discarded record)."""
    if os.environ.get("DBSTAND_LOGGING") != "1":
        return {"log_function": lambda handler: None}
    path = os.environ.get("DBSTAND_LOG_FILE")
    handler = logging.FileHandler(path) if path else logging.StreamHandler(sys.stdout)
    access = logging.getLogger("tornado.access")
    access.addHandler(handler)
    access.setLevel(logging.INFO)
    access.propagate = False
    return {}


class PostsHandler(web.RequestHandler):
    def initialize(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def get(self) -> None:
        rows = await self.pool.fetch(QUERY)
        self.set_header("Content-Type", "application/json; charset=UTF-8")
        self.finish(json.dumps([item(row) for row in rows]))


class HealthHandler(web.RequestHandler):
    def get(self) -> None:
        self.finish("ok")


async def serve() -> None:
    pool = await asyncpg.create_pool(
        host=os.environ.get("DBSTAND_DB_HOST", "127.0.0.1"),
        port=int(os.environ.get("DBSTAND_DB_PORT") or 5432),
        database=os.environ.get("DBSTAND_DB_NAME") or "dbstand",
        user=os.environ.get("DBSTAND_DB_USER") or None, password=password(),
        min_size=POOL_SIZE, max_size=POOL_SIZE, timeout=10,
        server_settings={"application_name": "dbstand-docquery"})
    app = web.Application([(r"/api/posts/query/", PostsHandler, {"pool": pool}),
                           (r"/health", HealthHandler)], **request_logging())
    app.listen(int(os.environ["DBSTAND_PORT"]), address="127.0.0.1")
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(serve())
