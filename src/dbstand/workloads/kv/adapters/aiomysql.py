"""aiomysql: PyMySQL's protocol code driven by asyncio (MySQL and MariaDB).

aiomysql reuses PyMySQL for packets and escaping and replaces only the socket I/O,
so next to the `pymysql` stack it isolates the asyncio path. It has no server-side
prepared statements: parameters are escaped and interpolated client-side.
"""

from __future__ import annotations

import importlib.metadata
from typing import Any

import aiomysql

from dbstand.drivers import aiomysql as aiomysql_driver
from dbstand.sql.dialects import MYSQL
from dbstand.workloads.kv.async_dbapi import AsyncCursorKvClient


class AiomysqlKv(AsyncCursorKvClient):
    """One aiomysql connection in autocommit mode: each statement its own transaction."""

    stack = "aiomysql"
    admin_stack = "pymysql"

    dialect = MYSQL

    async def _open(self) -> tuple[Any, Any]:
        conn = await aiomysql_driver.connect(self.target)  # pymysql.err.* on failure
        return conn, await conn.cursor()

    async def _quit(self, conn: Any) -> None:
        await conn.ensure_closed()  # says COM_QUIT: no "aborted connection"

    def describe(self) -> str:
        # the distribution's version: pymysql.__version__ mimics mysqlclient's
        return (f"aiomysql {aiomysql.__version__} over PyMySQL "
                f"{importlib.metadata.version('PyMySQL')}: autocommit, "
                "parameters interpolated client-side (no server-side prepare)")
