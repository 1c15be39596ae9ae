"""dbstand docquery stack: Tornado 6 + SQLAlchemy's asyncio ORM on PostgreSQL.

The mapper row of the relational side: each row becomes a `Post` instance in an
`AsyncSession` (identity map, unit of work) before it is shown, over asyncpg with a
pool of 10. `ORDER BY id` makes the page the same 30 documents the MongoDB-wire
stacks return in natural order (see dbstand/workloads/docquery/data.py).
Everything comes from the DBSTAND_* environment (docs/stack-manifest.md).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from datetime import datetime
from typing import Any

from sqlalchemy import URL, String, select, text
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from tornado import web

PAGE = 30
POOL_SIZE = 10
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


class Base(DeclarativeBase):
    pass


class Post(Base):
    """A post; its table is named from DBSTAND_PREFIX."""

    __tablename__ = os.environ.get("DBSTAND_PREFIX", "dbstand_") + "posts"

    id: Mapped[str] = mapped_column(String(24), primary_key=True)
    title: Mapped[str | None]
    created: Mapped[datetime | None]

    def as_item(self) -> dict[str, Any]:
        """The post as the endpoint shows it."""
        return {"_id": self.id, "title": self.title,
                "created": self.created.strftime(TIME_FORMAT) if self.created else None}


QUERY = select(Post).order_by(Post.id).limit(PAGE)


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
    def initialize(self, sessions: async_sessionmaker) -> None:
        self.sessions = sessions

    async def get(self) -> None:
        async with self.sessions() as session:
            posts = (await session.scalars(QUERY)).all()
        self.set_header("Content-Type", "application/json; charset=UTF-8")
        self.finish(json.dumps([post.as_item() for post in posts]))


class HealthHandler(web.RequestHandler):
    def get(self) -> None:
        self.finish("ok")


def make_engine() -> AsyncEngine:
    url = URL.create(
        "postgresql+asyncpg", username=os.environ.get("DBSTAND_DB_USER") or None,
        password=password(), host=os.environ.get("DBSTAND_DB_HOST", "127.0.0.1"),
        port=int(os.environ.get("DBSTAND_DB_PORT") or 5432),
        database=os.environ.get("DBSTAND_DB_NAME") or "dbstand")
    return create_async_engine(
        url, pool_size=POOL_SIZE, max_overflow=0,
        connect_args={"timeout": 10,
                      "server_settings": {"application_name": "dbstand-docquery"}})


async def serve() -> None:
    engine = make_engine()
    async with engine.connect() as conn:  # an unreachable target fails the start
        await conn.execute(text("SELECT 1"))
    sessions = async_sessionmaker(engine, expire_on_commit=False)
    app = web.Application([(r"/api/posts/query/", PostsHandler, {"sessions": sessions}),
                           (r"/health", HealthHandler)], **request_logging())
    app.listen(int(os.environ["DBSTAND_PORT"]), address="127.0.0.1")
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(serve())
