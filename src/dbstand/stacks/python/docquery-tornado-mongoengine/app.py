"""dbstand docquery stack: Tornado 6 + MongoEngine, the object-document mapper.

Each stored document becomes a `Post` instance (field conversion and validation
included) before it is shown. MongoEngine sits on blocking pymongo, so the handler
is a plain `def get` that stalls the loop like the pymongo row: the difference
between the two is the mapper's cost. Everything comes from the DBSTAND_*
environment (docs/stack-manifest.md).
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import docquery_tornado as dq
import mongoengine


class Post(mongoengine.Document):
    """A post; its collection is named from DBSTAND_PREFIX."""

    title = mongoengine.StringField()
    created = mongoengine.DateTimeField()
    meta: ClassVar[dict[str, Any]] = {
        "collection": dq.POSTS,
        # dbstand owns the collection and its indexes: the mapper must not touch them
        "auto_create_index": False}

    def as_item(self) -> dict[str, Any]:
        """The post as the endpoint shows it."""
        return {"_id": str(self.pk), "title": self.title, "created": dq.shown_time(self.created)}


class PostsHandler(dq.PageHandler):
    def get(self) -> None:
        self.send_page([post.as_item() for post in Post.objects.limit(dq.PAGE)])


async def serve() -> None:
    client = mongoengine.connect(db=dq.database_name(), **dq.mongo_options())
    client.admin.command("ping")  # a target that cannot be reached fails the start
    await dq.serve_forever(PostsHandler)


if __name__ == "__main__":
    asyncio.run(serve())
