"""The kv client shared by asyncio drivers with a DB-API-like cursor (psycopg-async,
aiomysql): the same statements as the synchronous DB-API stacks, awaited."""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, ClassVar

from dbstand.errors import CaseFailed
from dbstand.sql.dialects import Dialect
from dbstand.sql.paramstyle import to_paramstyle
from dbstand.targets.connect_errors import connect_error
from dbstand.targets.url import TargetURL
from dbstand.workloads.kv.client import AsyncKvClient, AsyncOp

KV_OPS = ("select", "insert", "update", "upsert", "replace", "delete")


class AsyncCursorKvClient(AsyncKvClient):
    """Subclasses say how their driver opens a connection and its cursor (`_open`) and
    how it says goodbye (`_quit`); connecting, its one-line error and closing are here."""

    dialect: ClassVar[Dialect]
    paramstyle: ClassVar[str] = "format"

    def __init__(self, target: TargetURL, prefix: str):
        super().__init__(target, prefix)
        self.table = f"{prefix}kv"
        self.conn: Any = None
        self.cur: Any = None

    @abstractmethod
    async def _open(self) -> tuple[Any, Any]:
        """A connection to `self.target` in autocommit, and its cursor."""

    @abstractmethod
    async def _quit(self, conn: Any) -> None:
        """Close `conn` the way the server expects of a client that leaves."""

    async def connect(self) -> None:
        try:
            self.conn, self.cur = await self._open()
        except Exception as exc:  # the driver's own errors, OSError, TimeoutError...
            raise connect_error(exc, self.target) from None

    async def close(self) -> None:
        if self.conn is not None:
            try:
                await self._quit(self.conn)
            finally:
                self.conn = self.cur = None

    def operation(self, op: str) -> AsyncOp:
        if op not in KV_OPS:
            raise CaseFailed(f"unknown kv operation {op!r}")
        if self.cur is None:
            raise CaseFailed(f"{self.stack}: operation() before connect()")
        cur = self.cur
        sql = to_paramstyle(self.dialect.statement(op, self.table), self.paramstyle)
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
        return dict(self.dialect.forms)
