"""dbstand docquery stack: Tornado 6 + pymongo, the blocking driver.

The handler is a plain `def get`: the query runs on Tornado's only thread, so while
pymongo waits for the server no other request is served. That stall is the point of
this row (the study's "PyMongo" rows). Everything comes from the DBSTAND_*
environment (docs/stack-manifest.md).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from datetime import datetime
from typing import Any

import pymongo
from tornado import web

PAGE = 30
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


def item(doc: dict[str, Any]) -> dict[str, Any]:
    """A stored document as the endpoint shows it."""
    created = doc.get("created")
    return {"_id": str(doc["_id"]), "title": doc.get("title"),
            "created": created.strftime(TIME_FORMAT) if isinstance(created, datetime) else None}


def credentials() -> dict[str, str]:
    """User and password when the target has them; the password only ever from its file."""
    user = os.environ.get("DBSTAND_DB_USER", "")
    path = os.environ.get("DBSTAND_DB_PASSWORD_FILE", "")
    if not user or not path:
        return {}
    with open(path) as fh:
        return {"username": user, "password": fh.read().rstrip("\r\n")}


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
    def initialize(self, posts: Any) -> None:
        self.posts = posts

    def get(self) -> None:
        body = json.dumps([item(doc) for doc in self.posts.find(limit=PAGE)])
        self.set_header("Content-Type", "application/json; charset=UTF-8")
        self.finish(body)


class HealthHandler(web.RequestHandler):
    def get(self) -> None:
        self.finish("ok")


async def serve() -> None:
    client: pymongo.MongoClient = pymongo.MongoClient(
        host=os.environ.get("DBSTAND_DB_HOST", "127.0.0.1"),
        port=int(os.environ.get("DBSTAND_DB_PORT") or 27017),
        directConnection=True, serverSelectionTimeoutMS=10_000, **credentials())
    db = client[os.environ.get("DBSTAND_DB_NAME") or "dbstand"]
    db.command("ping")  # a target that cannot be reached fails the start, not a request
    posts = db[os.environ.get("DBSTAND_PREFIX", "dbstand_") + "posts"]
    app = web.Application([(r"/api/posts/query/", PostsHandler, {"posts": posts}),
                           (r"/health", HealthHandler)], **request_logging())
    app.listen(int(os.environ["DBSTAND_PORT"]), address="127.0.0.1")
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(serve())
