"""psycopg 3's AsyncConnection: the same driver as the `psycopg` stack, on asyncio.

Kept as close to the synchronous stack as asyncio allows (autocommit, one cursor,
psycopg's default prepare_threshold), so that the pair isolates the cost and gain
of the asyncio path of one driver.
"""

from __future__ import annotations

from typing import Any

import psycopg

from dbstand.errors import CaseFailed
from dbstand.sql.dialects import POSTGRESQL
from dbstand.sql.paramstyle import to_paramstyle
from dbstand.stacks.base import AsyncKvClient, AsyncOp
from dbstand.targets.connect_errors import connect_error
from dbstand.targets.managed import password_for
from dbstand.targets.url import TargetURL

KV_OPS = ("select", "insert", "update", "upsert", "replace", "delete")


class PsycopgAsyncKv(AsyncKvClient):
    """One psycopg AsyncConnection in autocommit: each statement its own transaction."""

    stack = "psycopg-async"
    admin_stack = "psycopg"

    def __init__(self, target: TargetURL, prefix: str):
        super().__init__(target, prefix)
        self.table = f"{prefix}kv"
        self.conn: psycopg.AsyncConnection[Any] | None = None
        self.cur: psycopg.AsyncCursor[Any] | None = None

    async def connect(self) -> None:
        t = self.target
        try:
            self.conn = await psycopg.AsyncConnection.connect(
                host=t.host, port=t.port or 5432, user=t.user, dbname=t.database or t.user,
                password=t.password or password_for(t), autocommit=True, connect_timeout=10,
            )
        except Exception as exc:  # psycopg.OperationalError, OSError...
            raise connect_error(exc, t) from None
        self.cur = self.conn.cursor()

    async def close(self) -> None:
        if self.conn is not None:
            try:
                await self.conn.close()
            finally:
                self.conn = self.cur = None

    def operation(self, op: str) -> AsyncOp:
        if op not in KV_OPS:
            raise CaseFailed(f"unknown kv operation {op!r}")
        if self.cur is None:
            raise CaseFailed("psycopg-async: operation() before connect()")
        cur = self.cur
        sql = to_paramstyle(POSTGRESQL.statement(op, self.table), "format")
        execute = cur.execute
        if op == "select":
            fetchone = cur.fetchone

            async def select(params: Any) -> object:
                await execute(sql, params)
                return await fetchone()

            return select

        async def write(params: Any) -> object:
            return await execute(sql, params)

        return write

    def forms(self) -> dict[str, str]:
        return dict(POSTGRESQL.forms)

    def describe(self) -> str:
        threshold = self.conn.prepare_threshold if self.conn is not None else 5
        return (f"psycopg {psycopg.__version__} ({psycopg.pq.__impl__}) AsyncConnection, "
                f"autocommit; server-side prepare after {threshold} executions "
                "(prepare_threshold)")
