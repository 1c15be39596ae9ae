"""dbstand docquery stack: Tornado 6 + pymongo, the blocking driver.

The handler is a plain `def get`: the query runs on Tornado's only thread, so while
pymongo waits for the server no other request is served. That stall is the point of
this row (the study's "PyMongo" rows). Everything comes from the DBSTAND_*
environment (docs/stack-manifest.md).
"""

from __future__ import annotations

import asyncio
from typing import Any

import docquery_tornado as dq
import pymongo


class PostsHandler(dq.PageHandler):
    def initialize(self, posts: Any) -> None:
        self.posts = posts

    def get(self) -> None:
        self.send_page([dq.document_item(doc) for doc in self.posts.find(limit=dq.PAGE)])


async def serve() -> None:
    client: pymongo.MongoClient = pymongo.MongoClient(**dq.mongo_options())
    db = client[dq.database_name()]
    db.command("ping")  # a target that cannot be reached fails the start, not a request
    await dq.serve_forever(PostsHandler, {"posts": db[dq.POSTS]})


if __name__ == "__main__":
    asyncio.run(serve())
