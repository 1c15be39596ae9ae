"""asyncpg's batch paths: executemany, copy_records_to_table, unnest arrays.

asyncpg is asynchronous: each timed call runs its coroutine to completion on the
client's own event loop (one connection, nothing else on the loop), inside one
explicit transaction, so BEGIN and COMMIT are timed as with the DB-API drivers.
Untimed SQL goes through `_Cursor`, a small DB-API-like face over the same
connection, so dbstand's ownership rules apply unchanged.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from dbstand.drivers import asyncpg as asyncpg_driver
from dbstand.errors import TargetError
from dbstand.sql.paramstyle import to_paramstyle
from dbstand.targets.connect_errors import connect_error
from dbstand.targets.postgresql.managed import server_facts as pg_facts
from dbstand.workloads.batch.adapters.psycopg import UNNEST_API, unnest_params
from dbstand.workloads.batch.api import BatchApi, BatchClient, BatchData, Op
from dbstand.workloads.batch.sql import (
    PG_COPY_COLUMNS,
    PG_CREATE_TMP,
    PG_TMP_TABLE,
    pg_copy_join,
    pg_unnest,
)

ALL = ("insert", "update", "delete")


class _Cursor:
    """Enough of a DB-API cursor over asyncpg for untimed SQL (`$n` placeholders)."""

    def __init__(self, client: AsyncpgBatch):
        self.client = client
        self.rows: list[tuple[Any, ...]] = []
        self.connection = self  # Ownership calls cursor.connection.rollback()

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        records = self.client.wait(self.client.conn.fetch(sql, *params))
        self.rows = [tuple(r) for r in records]

    def fetchone(self) -> tuple[Any, ...] | None:
        return self.rows.pop(0) if self.rows else None

    def fetchall(self) -> list[tuple[Any, ...]]:
        rows, self.rows = self.rows, []
        return rows

    def rollback(self) -> None:
        """asyncpg runs untimed SQL in autocommit: nothing to roll back."""


class AsyncpgBatch(BatchClient):
    paramstyle = "dollar"
    apis = (
        BatchApi("executemany", ALL,
                 "await conn.executemany(): the row statement prepared once, the rows "
                 "sent without waiting for each answer"),
        BatchApi("copy_records_to_table", ALL,
                 "binary COPY of the records; update/delete: COPY into a temporary table, "
                 "then one UPDATE ... FROM / DELETE ... USING join (all timed)"),
        UNNEST_API,
    )

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.conn: Any = None
        self._cursor = _Cursor(self)

    def wait(self, coro: Awaitable[Any]) -> Any:
        assert self.loop is not None
        return self.loop.run_until_complete(coro)

    def connect(self) -> None:
        import asyncpg

        self._asyncpg = asyncpg
        self.loop = asyncio.new_event_loop()
        try:
            self.conn = self.wait(asyncpg_driver.connect(self.target))
        except TargetError:
            raise
        except Exception as exc:
            self.close()
            raise connect_error(exc, self.target) from None

    def close(self) -> None:
        try:
            if self.conn is not None:
                self.wait(self.conn.close(timeout=10))
        finally:
            self.conn = None
            if self.loop is not None:
                self.loop.close()
                self.loop = None
            super().close()

    def server_facts(self) -> dict[str, Any]:
        facts = pg_facts(self._cursor)
        facts["client"] = f"asyncpg {self._asyncpg.__version__}"
        return facts

    def cursor(self) -> Any:
        return self._cursor

    def commit(self) -> None:
        """Untimed SQL runs in autocommit; timed calls commit their own transaction."""

    def rollback(self) -> None:
        """Nothing is left open between calls."""

    # --- the timed part ----------------------------------------------------------------
    def bind(self, api: str, op: str) -> Op:
        method: Callable[[Any, str, BatchData], Awaitable[None]] = {
            "executemany": self._executemany, "copy_records_to_table": self._copy,
            "unnest": self._unnest}[api]
        wait = self.wait

        async def in_transaction(data: BatchData) -> None:
            conn = self.conn
            async with conn.transaction():
                await method(conn, op, data)

        def run(data: BatchData) -> None:
            wait(in_transaction(data))

        return run

    async def _executemany(self, conn: Any, op: str, data: BatchData) -> None:
        sql = to_paramstyle(self.sql.row_statement(op, self.table), "dollar")
        await conn.executemany(sql, data.row_params)

    async def _copy(self, conn: Any, op: str, data: BatchData) -> None:
        if op == "insert":
            await conn.copy_records_to_table(self.table, records=data.row_params,
                                             columns=["f_key", "f_value"])
            return
        await conn.execute(PG_CREATE_TMP)
        await conn.copy_records_to_table(PG_TMP_TABLE, records=data.row_params,
                                         columns=PG_COPY_COLUMNS[op])
        await conn.execute(pg_copy_join(self.sql, op, self.table))

    async def _unnest(self, conn: Any, op: str, data: BatchData) -> None:
        sql = to_paramstyle(pg_unnest(self.sql, op, self.table), "dollar")
        await conn.execute(sql, *unnest_params(data))
