"""PyMySQL, the pure-Python MySQL/MariaDB driver (text protocol, client-side
parameter interpolation)."""

from __future__ import annotations

import pymysql

from dbstand.drivers import pymysql as pymysql_driver
from dbstand.workloads.kv.dbapi import DbApiKvClient


class PyMySqlKv(DbApiKvClient):
    stack = "pymysql"
    paramstyle = "format"
    driver = pymysql_driver

    def describe(self) -> str:
        return f"PyMySQL {pymysql.__version__} (pure Python, text protocol)"
