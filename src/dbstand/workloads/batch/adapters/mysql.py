"""PyMySQL's and mysqlclient's batch paths (MySQL/MariaDB).

Both drivers interpolate parameters client-side. Their `executemany` rewrites an
`INSERT ... VALUES (%s, %s)` into multi-row INSERTs (up to about 1 MB each) but
runs any other statement once per row; `values` builds multi-row statements
itself, `execute_loop` is the one-statement-per-row baseline.
"""

from __future__ import annotations

from typing import Any

from dbstand.targets.managed import password_for
from dbstand.workloads.batch.adapters.dbapi import EXECUTE_LOOP_API, DbApiBatchClient, values_api
from dbstand.workloads.batch.api import BatchApi
from dbstand.workloads.batch.sql import MYSQL

ALL = ("insert", "update", "delete")

MYSQL_APIS = (
    BatchApi("executemany", ALL,
             "cursor.executemany(): INSERT rewritten by the driver into multi-row INSERTs; "
             "UPDATE and DELETE sent once per row"),
    values_api(MYSQL.update_values_form),
    EXECUTE_LOOP_API,
)


class PyMySqlBatch(DbApiBatchClient):
    paramstyle = "format"
    apis = MYSQL_APIS

    def _open(self) -> Any:
        import pymysql

        t = self.target
        return pymysql.connect(
            host=t.host, port=t.port or 3306, user=t.user, database=t.database,
            password=t.password or password_for(t) or "", connect_timeout=10,
            charset="utf8mb4",
        )


class MysqlclientBatch(DbApiBatchClient):
    paramstyle = "format"
    apis = MYSQL_APIS

    def _open(self) -> Any:
        import MySQLdb

        t = self.target
        return MySQLdb.connect(
            host=t.host or "127.0.0.1", port=t.port or 3306, user=t.user or "",
            database=t.database or "", password=t.password or password_for(t) or "",
            connect_timeout=10, charset="utf8mb4",
        )
