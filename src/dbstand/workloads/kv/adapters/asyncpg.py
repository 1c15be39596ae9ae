"""asyncpg: PostgreSQL's asyncio driver speaking the binary protocol itself.

asyncpg has no unprepared path for parameterised statements: every `fetchrow` or
`execute` with arguments goes through a named server-side prepared statement kept
in its per-connection statement cache, so what is measured is "prepared", stated
in `describe()`.
"""

from __future__ import annotations

from typing import Any

import asyncpg

from dbstand.drivers import asyncpg as asyncpg_driver
from dbstand.errors import CaseFailed
from dbstand.sql.dialects import POSTGRESQL
from dbstand.sql.paramstyle import to_paramstyle
from dbstand.targets.connect_errors import connect_error
from dbstand.targets.url import TargetURL
from dbstand.workloads.kv.client import AsyncKvClient, AsyncOp

KV_OPS = ("select", "insert", "update", "upsert", "replace", "delete")
#: asyncpg's default, passed explicitly so that results can state it
STATEMENT_CACHE_SIZE = 100


class AsyncpgKv(AsyncKvClient):
    """One asyncpg connection; each statement is its own transaction (no BEGIN)."""

    stack = "asyncpg"
    admin_stack = "psycopg"

    def __init__(self, target: TargetURL, prefix: str):
        super().__init__(target, prefix)
        self.table = f"{prefix}kv"
        self.conn: Any = None

    async def connect(self) -> None:
        t = self.target
        try:
            self.conn = await asyncpg_driver.connect(
                t, statement_cache_size=STATEMENT_CACHE_SIZE)
        except Exception as exc:  # asyncpg, OSError, TimeoutError...
            raise connect_error(exc, t) from None

    async def close(self) -> None:
        if self.conn is not None:
            try:
                await self.conn.close(timeout=10)
            finally:
                self.conn = None

    def operation(self, op: str) -> AsyncOp:
        if op not in KV_OPS:
            raise CaseFailed(f"unknown kv operation {op!r}")
        if self.conn is None:
            raise CaseFailed("asyncpg: operation() before connect()")
        sql = to_paramstyle(POSTGRESQL.statement(op, self.table), "dollar")
        if op == "select":
            fetchrow = self.conn.fetchrow

            async def select(params: Any) -> object:
                return await fetchrow(sql, *params)

            return select
        execute = self.conn.execute

        async def write(params: Any) -> object:
            return await execute(sql, *params)

        return write

    def forms(self) -> dict[str, str]:
        return dict(POSTGRESQL.forms)

    def describe(self) -> str:
        return (f"asyncpg {asyncpg.__version__}: statements prepared automatically "
                f"(named server-side statements, cache of {STATEMENT_CACHE_SIZE}), autocommit")
