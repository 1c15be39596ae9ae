"""dbstand docquery stack: Tornado 6 + psycopg 3, blocking, on PostgreSQL.

The relational analog of the pymongo row: one connection, a plain `def get`, so the
loop stalls during each query. `ORDER BY id` makes the page the same 30 documents
the MongoDB-wire stacks return in natural order (the loader inserts ids in
increasing order; see dbstand/workloads/docquery/data.py); the primary key index
serves it. Everything comes from the DBSTAND_* environment (docs/stack-manifest.md).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from typing import Any

import psycopg
from tornado import web

PAGE = 30
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
QUERY = (f"SELECT id, title, created FROM {os.environ.get('DBSTAND_PREFIX', 'dbstand_')}posts "
         f"ORDER BY id LIMIT {PAGE}")


def item(row: tuple[Any, ...]) -> dict[str, Any]:
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
    def initialize(self, conn: psycopg.Connection) -> None:
        self.conn = conn

    def get(self) -> None:
        rows = self.conn.execute(QUERY).fetchall()
        self.set_header("Content-Type", "application/json; charset=UTF-8")
        self.finish(json.dumps([item(row) for row in rows]))


class HealthHandler(web.RequestHandler):
    def get(self) -> None:
        self.finish("ok")


async def serve() -> None:
    conn = psycopg.connect(
        host=os.environ.get("DBSTAND_DB_HOST", "127.0.0.1"),
        port=int(os.environ.get("DBSTAND_DB_PORT") or 5432),
        dbname=os.environ.get("DBSTAND_DB_NAME") or "dbstand",
        user=os.environ.get("DBSTAND_DB_USER") or None, password=password(),
        autocommit=True, connect_timeout=10, application_name="dbstand-docquery")
    app = web.Application([(r"/api/posts/query/", PostsHandler, {"conn": conn}),
                           (r"/health", HealthHandler)], **request_logging())
    app.listen(int(os.environ["DBSTAND_PORT"]), address="127.0.0.1")
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(serve())
