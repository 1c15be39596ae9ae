"""dbstand docquery stack: Tornado 6 + SQLAlchemy's asyncio ORM on PostgreSQL.

The mapper row of the relational side: each row becomes a `Post` instance in an
`AsyncSession` (identity map, unit of work) before it is shown, over asyncpg with a
pool of 10. `ORDER BY id` makes the page the same 30 documents the MongoDB-wire
stacks return in natural order (see dbstand/workloads/docquery/data.py).
Everything comes from the DBSTAND_* environment (docs/stack-manifest.md).
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

import docquery_tornado as dq
from sqlalchemy import URL, String, select, text
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

POOL_SIZE = 10


class Base(DeclarativeBase):
    pass


class Post(Base):
    """A post; its table is named from DBSTAND_PREFIX."""

    __tablename__ = dq.POSTS

    id: Mapped[str] = mapped_column(String(24), primary_key=True)
    title: Mapped[str | None]
    created: Mapped[datetime | None]

    def as_item(self) -> dict[str, Any]:
        """The post as the endpoint shows it."""
        return {"_id": self.id, "title": self.title, "created": dq.shown_time(self.created)}


QUERY = select(Post).order_by(Post.id).limit(dq.PAGE)


class PostsHandler(dq.PageHandler):
    def initialize(self, sessions: async_sessionmaker) -> None:
        self.sessions = sessions

    async def get(self) -> None:
        async with self.sessions() as session:
            posts = (await session.scalars(QUERY)).all()
        self.send_page([post.as_item() for post in posts])


def make_engine() -> AsyncEngine:
    pg = dq.postgres_options()
    url = URL.create("postgresql+asyncpg", username=pg["user"], password=pg["password"],
                     host=pg["host"], port=pg["port"], database=dq.database_name())
    return create_async_engine(
        url, pool_size=POOL_SIZE, max_overflow=0,
        connect_args={"timeout": 10,
                      "server_settings": {"application_name": "dbstand-docquery"}})


async def serve() -> None:
    engine = make_engine()
    async with engine.connect() as conn:  # an unreachable target fails the start
        await conn.execute(text("SELECT 1"))
    await dq.serve_forever(PostsHandler,
                        {"sessions": async_sessionmaker(engine, expire_on_commit=False)})


if __name__ == "__main__":
    asyncio.run(serve())
