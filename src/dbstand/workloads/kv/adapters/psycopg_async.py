"""psycopg 3's AsyncConnection: the same driver as the `psycopg` stack, on asyncio.

Kept as close to the synchronous stack as asyncio allows (autocommit, one cursor,
psycopg's default prepare_threshold), so that the pair isolates the cost and gain
of the asyncio path of one driver.
"""

from __future__ import annotations

from typing import Any

import psycopg

from dbstand.drivers import psycopg as psycopg_driver
from dbstand.sql.dialects import POSTGRESQL
from dbstand.workloads.kv.async_dbapi import AsyncCursorKvClient


class PsycopgAsyncKv(AsyncCursorKvClient):
    """One psycopg AsyncConnection in autocommit: each statement its own transaction."""

    stack = "psycopg-async"
    admin_stack = "psycopg"

    dialect = POSTGRESQL

    async def _open(self) -> tuple[Any, Any]:
        conn = await psycopg_driver.connect_async(self.target)  # psycopg.OperationalError
        return conn, conn.cursor()

    async def _quit(self, conn: Any) -> None:
        await conn.close()

    def describe(self) -> str:
        threshold = self.conn.prepare_threshold if self.conn is not None else 5
        return (f"psycopg {psycopg.__version__} ({psycopg.pq.__impl__}) AsyncConnection, "
                f"autocommit; server-side prepare after {threshold} executions "
                "(prepare_threshold)")
