"""mysqlclient (MySQLdb): a C extension over libmariadb / libmysqlclient (text protocol,
parameters interpolated client-side)."""

from __future__ import annotations

import MySQLdb

from dbstand.drivers import mysqlclient as mysqlclient_driver
from dbstand.workloads.kv.dbapi import DbApiKvClient


class MysqlclientKv(DbApiKvClient):
    stack = "mysqlclient"
    paramstyle = "format"
    driver = mysqlclient_driver

    def describe(self) -> str:
        version = ".".join(map(str, MySQLdb.version_info[:3]))
        library = MySQLdb._mysql.get_client_info()
        return f"mysqlclient {version} (C extension, client library {library})"
