"""PyMySQL's and mysqlclient's batch paths (MySQL/MariaDB).

Both drivers interpolate parameters client-side. Their `executemany` rewrites an
`INSERT ... VALUES (%s, %s)` into multi-row INSERTs (up to about 1 MB each) but
runs any other statement once per row; `values` builds multi-row statements
itself, `execute_loop` is the one-statement-per-row baseline.
"""

from __future__ import annotations

from typing import Any

from dbstand.drivers import mysqlclient as mysqlclient_driver
from dbstand.drivers import pymysql as pymysql_driver
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


def _mysql_key_problem(api: str, op: str, predicate: str) -> str | None:
    if api == "values" and op == "update" and predicate != "index":
        return ("values update on MySQL is INSERT ... ON DUPLICATE KEY UPDATE: it finds "
                "rows by the key itself, with no predicate to change")
    return None


class _MysqlBatch(DbApiBatchClient):
    """What the MySQL drivers' batch clients share: their APIs and the key problem."""

    paramstyle = "format"
    apis = MYSQL_APIS

    @classmethod
    def key_predicate_problem(cls, api: str, op: str, predicate: str) -> str | None:
        return _mysql_key_problem(api, op, predicate)


class PyMySqlBatch(_MysqlBatch):
    def _open(self) -> Any:
        return pymysql_driver.connect(self.target, autocommit=False)


class MysqlclientBatch(_MysqlBatch):
    def _open(self) -> Any:
        return mysqlclient_driver.connect(self.target, autocommit=False)
