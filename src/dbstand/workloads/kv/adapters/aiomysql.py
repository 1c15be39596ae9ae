"""aiomysql: PyMySQL's protocol code driven by asyncio (MySQL and MariaDB).

aiomysql reuses PyMySQL for packets and escaping and replaces only the socket I/O,
so next to the `pymysql` stack it isolates the asyncio path. It has no server-side
prepared statements: parameters are escaped and interpolated client-side.
"""

from __future__ import annotations

import importlib.metadata

import aiomysql

from dbstand.drivers import aiomysql as aiomysql_driver
from dbstand.sql.dialects import MYSQL
from dbstand.targets.connect_errors import connect_error
from dbstand.workloads.kv.async_dbapi import AsyncCursorKvClient


class AiomysqlKv(AsyncCursorKvClient):
    """One aiomysql connection in autocommit mode: each statement its own transaction."""

    stack = "aiomysql"
    admin_stack = "pymysql"

    dialect = MYSQL

    async def connect(self) -> None:
        t = self.target
        try:
            self.conn = await aiomysql_driver.connect(t)
            self.cur = await self.conn.cursor()
        except Exception as exc:  # pymysql.err.*, OSError, TimeoutError...
            raise connect_error(exc, t) from None

    async def close(self) -> None:
        if self.conn is not None:
            try:
                await self.conn.ensure_closed()  # says COM_QUIT: no "aborted connection"
            finally:
                self.conn = self.cur = None

    def describe(self) -> str:
        # the distribution's version: pymysql.__version__ mimics mysqlclient's
        return (f"aiomysql {aiomysql.__version__} over PyMySQL "
                f"{importlib.metadata.version('PyMySQL')}: autocommit, "
                "parameters interpolated client-side (no server-side prepare)")
