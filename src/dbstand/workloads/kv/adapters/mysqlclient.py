"""mysqlclient (MySQLdb): a C extension over libmariadb / libmysqlclient (text protocol,
parameters interpolated client-side)."""

from __future__ import annotations

from typing import Any

import MySQLdb

from dbstand.targets.mysql.managed import connect_args
from dbstand.workloads.kv.dbapi import DbApiKvClient


class MysqlclientKv(DbApiKvClient):
    stack = "mysqlclient"
    paramstyle = "format"

    def _open(self) -> Any:
        args = connect_args(self.target)
        return MySQLdb.connect(host=args["host"], port=args["port"], user=args["user"],
                               password=args["password"], database=args["database"],
                               autocommit=True, connect_timeout=10, charset="utf8mb4")

    def describe(self) -> str:
        version = ".".join(map(str, MySQLdb.version_info[:3]))
        library = MySQLdb._mysql.get_client_info()
        return f"mysqlclient {version} (C extension, client library {library})"
