"""pg8000, a pure-Python PostgreSQL driver, through its DB-API interface."""

from __future__ import annotations

from typing import Any

import pg8000.dbapi

from dbstand.targets.managed import password_for
from dbstand.workloads.kv.dbapi import DbApiKvClient


class Pg8000Kv(DbApiKvClient):
    stack = "pg8000"
    paramstyle = "format"

    def _open(self) -> Any:
        t = self.target
        conn = pg8000.dbapi.connect(
            host=t.host, port=t.port or 5432, user=t.user or "postgres",
            database=t.database, password=t.password or password_for(t), timeout=10,
        )
        conn.autocommit = True
        return conn
