"""dbstand docquery stack: Tornado 6 + asyncpg, asynchronous, on PostgreSQL.

The relational analog of the Motor row: `async def get` awaits the query on a pool
of 10 connections, so the loop serves other requests meanwhile. `ORDER BY id` makes
the page the same 30 documents the MongoDB-wire stacks return in natural order (see
dbstand/workloads/docquery/data.py). asyncpg prepares the statement once per
connection and caches it. Everything comes from the DBSTAND_* environment
(docs/stack-manifest.md).
"""

from __future__ import annotations

import asyncio

import asyncpg
import docquery_tornado as dq

POOL_SIZE = 10


class PostsHandler(dq.PageHandler):
    def initialize(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def get(self) -> None:
        self.send_page([dq.row_item(row) for row in await self.pool.fetch(dq.SQL_PAGE)])


async def serve() -> None:
    pool = await asyncpg.create_pool(
        database=dq.database_name(), **dq.postgres_options(), min_size=POOL_SIZE,
        max_size=POOL_SIZE, timeout=10,
        server_settings={"application_name": "dbstand-docquery"})
    await dq.serve_forever(PostsHandler, {"pool": pool})


if __name__ == "__main__":
    asyncio.run(serve())
