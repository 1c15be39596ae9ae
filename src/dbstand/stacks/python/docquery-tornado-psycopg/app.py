"""dbstand docquery stack: Tornado 6 + psycopg 3, blocking, on PostgreSQL.

The relational analog of the pymongo row: one connection, a plain `def get`, so the
loop stalls during each query. `ORDER BY id` makes the page the same 30 documents
the MongoDB-wire stacks return in natural order (the loader inserts ids in
increasing order; see dbstand/workloads/docquery/data.py); the primary key index
serves it. Everything comes from the DBSTAND_* environment (docs/stack-manifest.md).
"""

from __future__ import annotations

import asyncio

import docquery_tornado as dq
import psycopg


class PostsHandler(dq.PageHandler):
    def initialize(self, conn: psycopg.Connection) -> None:
        self.conn = conn

    def get(self) -> None:
        self.send_page([dq.row_item(row) for row in self.conn.execute(dq.SQL_PAGE).fetchall()])


async def serve() -> None:
    conn = psycopg.connect(dbname=dq.database_name(), **dq.postgres_options(), autocommit=True,
                           connect_timeout=10, application_name="dbstand-docquery")
    await dq.serve_forever(PostsHandler, {"conn": conn})


if __name__ == "__main__":
    asyncio.run(serve())
