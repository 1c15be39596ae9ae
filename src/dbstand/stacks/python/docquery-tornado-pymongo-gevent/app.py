"""dbstand docquery stack: Tornado 6 + blocking pymongo made cooperative by gevent.

How the two are combined. `monkey.patch_all()` runs before anything else is
imported, so sockets, threads and `selectors.DefaultSelector` are gevent's: the
asyncio loop under Tornado then waits for I/O inside gevent's hub. Each request
hands its blocking pymongo query to a greenlet of its own and awaits an asyncio
future; while the loop waits, the hub runs the greenlets, whose socket waits are
cooperative, so queries of concurrent requests overlap. A finished greenlet passes
its result back with `call_soon_threadsafe`, which writes to the loop's self-pipe
and wakes it.

The study's PyMongo + gevent row most likely only patched and kept calling pymongo
inline in the handler: that serialises like plain pymongo (the study saw "almost
no gain"); `DOCQUERY_GEVENT_INLINE=1` gives that variant for comparison.
Everything else comes from the DBSTAND_* environment (docs/stack-manifest.md).
"""

from gevent import monkey

monkey.patch_all()

# ruff: noqa: E402  (every import after the patch: it must see gevent's modules)
import asyncio
import json
import logging
import os
import sys
from collections.abc import Callable
from datetime import datetime
from typing import Any

import gevent
import pymongo
from tornado import web

PAGE = 30
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
INLINE = os.environ.get("DOCQUERY_GEVENT_INLINE") == "1"


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


def in_greenlet(work: Callable[[], Any]) -> asyncio.Future:
    """Run blocking `work` in a new greenlet; a future of the loop gets its outcome."""
    loop = asyncio.get_running_loop()
    future = loop.create_future()

    def settle(outcome: Callable[[Any], None], value: Any) -> None:
        if not future.cancelled():
            outcome(value)

    def run() -> None:
        try:
            result = work()
        except BaseException as exc:  # handed to the awaiting handler, not lost
            loop.call_soon_threadsafe(settle, future.set_exception, exc)
        else:
            loop.call_soon_threadsafe(settle, future.set_result, result)

    gevent.spawn(run)
    return future


class PostsHandler(web.RequestHandler):
    def initialize(self, posts: Any) -> None:
        self.posts = posts

    def page(self) -> str:
        return json.dumps([item(doc) for doc in self.posts.find(limit=PAGE)])

    async def get(self) -> None:
        body = self.page() if INLINE else await in_greenlet(self.page)
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
    await in_greenlet(lambda: db.command("ping"))  # an unreachable target fails the start
    posts = db[os.environ.get("DBSTAND_PREFIX", "dbstand_") + "posts"]
    app = web.Application([(r"/api/posts/query/", PostsHandler, {"posts": posts}),
                           (r"/health", HealthHandler)], **request_logging())
    app.listen(int(os.environ["DBSTAND_PORT"]), address="127.0.0.1")
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(serve())
