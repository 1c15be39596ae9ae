"""mysql-connector-python, Oracle's driver: C extension when it loads, else pure Python.

Two protocols: `text` (the default cursor: statements sent as text) and `prepared`
(server-side prepared statements through the binary protocol, `cursor(prepared=True)`).
"""

from __future__ import annotations

import mysql.connector

from dbstand.drivers import mysql_connector as mysql_connector_driver
from dbstand.workloads.kv.client import Op
from dbstand.workloads.kv.dbapi import DbApiKvClient


def implementation() -> str:
    """Which implementation `connect()` picks here, and why it is not the C one."""
    if getattr(mysql.connector, "HAVE_CEXT", False):
        return "C extension"
    try:
        import _mysql_connector  # noqa: F401
    except ImportError as exc:
        reason = str(exc).split(":")[-1].strip() or type(exc).__name__
        return f"pure Python (C extension unavailable: {reason})"
    return "pure Python"


class MysqlConnectorKv(DbApiKvClient):
    stack = "mysql-connector-python"
    paramstyle = "format"
    driver = mysql_connector_driver
    protocol: str | None = "text"

    def operation(self, op: str) -> Op:
        if self.protocol != "prepared":
            return super().operation(op)
        # one prepared cursor per operation: prepared once, executed R times
        return self.cursor_operation(self.conn.cursor(prepared=True), op)

    def describe(self) -> str:
        kind = "server-side prepared statements" if self.protocol == "prepared" else \
            "text protocol"
        return f"mysql-connector-python {mysql.connector.__version__} " \
               f"({implementation()}, {kind})"
