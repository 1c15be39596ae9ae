"""dbstand docquery stack: Tornado 6 + MongoEngine, the object-document mapper.

Each stored document becomes a `Post` instance (field conversion and validation
included) before it is shown. MongoEngine sits on blocking pymongo, so the handler
is a plain `def get` that stalls the loop like the pymongo row: the difference
between the two is the mapper's cost. Everything comes from the DBSTAND_*
environment (docs/stack-manifest.md).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from typing import Any, ClassVar

import mongoengine
from tornado import web

PAGE = 30
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


class Post(mongoengine.Document):
    """A post; its collection is named from DBSTAND_PREFIX."""

    title = mongoengine.StringField()
    created = mongoengine.DateTimeField()
    meta: ClassVar[dict[str, Any]] = {
        "collection": os.environ.get("DBSTAND_PREFIX", "dbstand_") + "posts",
        # dbstand owns the collection and its indexes: the mapper must not touch them
        "auto_create_index": False}

    def as_item(self) -> dict[str, Any]:
        """The post as the endpoint shows it."""
        return {"_id": str(self.pk), "title": self.title,
                "created": self.created.strftime(TIME_FORMAT) if self.created else None}


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
    def get(self) -> None:
        body = json.dumps([post.as_item() for post in Post.objects.limit(PAGE)])
        self.set_header("Content-Type", "application/json; charset=UTF-8")
        self.finish(body)


class HealthHandler(web.RequestHandler):
    def get(self) -> None:
        self.finish("ok")


async def serve() -> None:
    client = mongoengine.connect(
        db=os.environ.get("DBSTAND_DB_NAME") or "dbstand",
        host=os.environ.get("DBSTAND_DB_HOST", "127.0.0.1"),
        port=int(os.environ.get("DBSTAND_DB_PORT") or 27017),
        directConnection=True, serverSelectionTimeoutMS=10_000, **credentials())
    client.admin.command("ping")  # a target that cannot be reached fails the start
    app = web.Application([(r"/api/posts/query/", PostsHandler), (r"/health", HealthHandler)],
                          **request_logging())
    app.listen(int(os.environ["DBSTAND_PORT"]), address="127.0.0.1")
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(serve())
