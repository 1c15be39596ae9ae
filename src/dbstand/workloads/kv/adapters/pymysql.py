"""PyMySQL, the pure-Python MySQL/MariaDB driver (text protocol, client-side
parameter interpolation)."""

from __future__ import annotations

from typing import Any

import pymysql

from dbstand.targets.mysql.managed import connect_args
from dbstand.workloads.kv.dbapi import DbApiKvClient


class PyMySqlKv(DbApiKvClient):
    stack = "pymysql"
    paramstyle = "format"

    def _open(self) -> Any:
        return pymysql.connect(**connect_args(self.target), autocommit=True,
                               connect_timeout=10, charset="utf8mb4")

    def describe(self) -> str:
        return f"PyMySQL {pymysql.__version__} (pure Python, text protocol)"
