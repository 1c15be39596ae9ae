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
import os
from collections.abc import Callable
from typing import Any

import docquery_tornado as dq
import gevent
import pymongo

INLINE = os.environ.get("DOCQUERY_GEVENT_INLINE") == "1"


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


class PostsHandler(dq.PageHandler):
    def initialize(self, posts: Any) -> None:
        self.posts = posts

    def page(self) -> list[dict[str, Any]]:
        return [dq.document_item(doc) for doc in self.posts.find(limit=dq.PAGE)]

    async def get(self) -> None:
        self.send_page(self.page() if INLINE else await in_greenlet(self.page))


async def serve() -> None:
    client: pymongo.MongoClient = pymongo.MongoClient(**dq.mongo_options())
    db = client[dq.database_name()]
    await in_greenlet(lambda: db.command("ping"))  # an unreachable target fails the start
    await dq.serve_forever(PostsHandler, {"posts": db[dq.POSTS]})


if __name__ == "__main__":
    asyncio.run(serve())
