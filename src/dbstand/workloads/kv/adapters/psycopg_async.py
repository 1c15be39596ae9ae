"""psycopg 3's AsyncConnection: the same driver as the `psycopg` stack, on asyncio.

Kept as close to the synchronous stack as asyncio allows (autocommit, one cursor,
psycopg's default prepare_threshold), so that the pair isolates the cost and gain
of the asyncio path of one driver.
"""

from __future__ import annotations

import psycopg

from dbstand.drivers import psycopg as psycopg_driver
from dbstand.sql.dialects import POSTGRESQL
from dbstand.targets.connect_errors import connect_error
from dbstand.workloads.kv.async_dbapi import AsyncCursorKvClient


class PsycopgAsyncKv(AsyncCursorKvClient):
    """One psycopg AsyncConnection in autocommit: each statement its own transaction."""

    stack = "psycopg-async"
    admin_stack = "psycopg"

    dialect = POSTGRESQL

    async def connect(self) -> None:
        t = self.target
        try:
            self.conn = await psycopg_driver.connect_async(t)
        except Exception as exc:  # psycopg.OperationalError, OSError...
            raise connect_error(exc, t) from None
        self.cur = self.conn.cursor()

    async def close(self) -> None:
        if self.conn is not None:
            try:
                await self.conn.close()
            finally:
                self.conn = self.cur = None

    def describe(self) -> str:
        threshold = self.conn.prepare_threshold if self.conn is not None else 5
        return (f"psycopg {psycopg.__version__} ({psycopg.pq.__impl__}) AsyncConnection, "
                f"autocommit; server-side prepare after {threshold} executions "
                "(prepare_threshold)")
