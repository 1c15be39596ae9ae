"""What every Tornado docquery stack shares (stacks/python/_shared/docquery, on the
stacks' PYTHONPATH through start.sh): the page's shape, the settings read from the
DBSTAND_* environment (docs/stack-manifest.md), the access log, the health route and
the server's start. Each stack keeps its own driver code: how it connects, and how
its handler reads the 30 documents (blocking, awaited, mapped).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from datetime import datetime
from typing import Any

from tornado import web

PAGE = 30
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
#: the collection or table dbstand's loader fills
POSTS = os.environ.get("DBSTAND_PREFIX", "dbstand_") + "posts"
#: the ordered page of the relational stacks: the same 30 documents the MongoDB-wire
#: stacks return in natural order (the loader inserts ids in increasing order; see
#: dbstand/workloads/docquery/data.py)
SQL_PAGE = f"SELECT id, title, created FROM {POSTS} ORDER BY id LIMIT {PAGE}"


def shown_time(created: Any) -> str | None:
    return created.strftime(TIME_FORMAT) if isinstance(created, datetime) else None


def document_item(doc: dict[str, Any]) -> dict[str, Any]:
    """A stored document as the endpoint shows it."""
    return {"_id": str(doc["_id"]), "title": doc.get("title"),
            "created": shown_time(doc.get("created"))}


def row_item(row: Any) -> dict[str, Any]:
    """A row (id, title, created) as the endpoint shows it."""
    row_id, title, created = row
    return {"_id": row_id, "title": title, "created": shown_time(created)}


def password() -> str | None:
    """The password, only ever from its file."""
    path = os.environ.get("DBSTAND_DB_PASSWORD_FILE")
    if not path:
        return None
    with open(path) as fh:
        return fh.read().rstrip("\r\n") or None


def database_name() -> str:
    return os.environ.get("DBSTAND_DB_NAME") or "dbstand"


def mongo_options() -> dict[str, Any]:
    """A MongoDB client's keyword arguments: address, a 10 s server selection, and user
    and password when the target has them."""
    options: dict[str, Any] = {
        "host": os.environ.get("DBSTAND_DB_HOST", "127.0.0.1"),
        "port": int(os.environ.get("DBSTAND_DB_PORT") or 27017),
        "directConnection": True, "serverSelectionTimeoutMS": 10_000}
    user, secret = os.environ.get("DBSTAND_DB_USER", ""), password()
    if user and secret is not None:
        options.update(username=user, password=secret)
    return options


def postgres_options() -> dict[str, Any]:
    """Host, port, user and password of a PostgreSQL target (the driver names the
    database argument itself)."""
    return {"host": os.environ.get("DBSTAND_DB_HOST", "127.0.0.1"),
            "port": int(os.environ.get("DBSTAND_DB_PORT") or 5432),
            "user": os.environ.get("DBSTAND_DB_USER") or None, "password": password()}


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


class PageHandler(web.RequestHandler):
    """Base of a stack's /api/posts/query/ handler."""

    def send_page(self, items: list[dict[str, Any]]) -> None:
        self.set_header("Content-Type", "application/json; charset=UTF-8")
        self.finish(json.dumps(items))


class HealthHandler(web.RequestHandler):
    def get(self) -> None:
        self.finish("ok")


async def serve_forever(handler: type[PageHandler], arguments: dict[str, Any] | None = None
                        ) -> None:
    """Listen on DBSTAND_HOST:DBSTAND_PORT (127.0.0.1 unless given) with the page and
    health routes until stopped."""
    page: tuple[Any, ...] = (r"/api/posts/query/", handler)
    if arguments is not None:
        page = (*page, arguments)
    app = web.Application([page, (r"/health", HealthHandler)], **request_logging())
    app.listen(int(os.environ["DBSTAND_PORT"]),
               address=os.environ.get("DBSTAND_HOST", "127.0.0.1"))
    await asyncio.Event().wait()


class AwaitedPostsHandler(PageHandler):
    """The page from an asyncio collection (Motor's, pymongo's AsyncMongoClient's):
    `async def get` awaits the query, so the loop serves other requests meanwhile."""

    def initialize(self, posts: Any) -> None:
        self.posts = posts

    async def get(self) -> None:
        docs = await self.posts.find(limit=PAGE).to_list(PAGE)
        self.send_page([document_item(doc) for doc in docs])


async def serve_awaited(client: Any) -> None:
    """Serve the page from an asyncio MongoDB client's collection: a target that
    cannot be reached fails the start."""
    db = client[database_name()]
    await db.command("ping")
    await serve_forever(AwaitedPostsHandler, {"posts": db[POSTS]})
