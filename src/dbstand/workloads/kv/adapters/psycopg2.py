"""psycopg2 (libpq; parameters interpolated client-side)."""

from __future__ import annotations

from typing import Any

import psycopg2

from dbstand.targets.managed import password_for
from dbstand.workloads.kv.dbapi import DbApiKvClient


class Psycopg2Kv(DbApiKvClient):
    stack = "psycopg2"
    paramstyle = "format"

    def _open(self) -> Any:
        t = self.target
        conn = psycopg2.connect(
            host=t.host, port=t.port or 5432, user=t.user, dbname=t.database or t.user,
            password=t.password or password_for(t), connect_timeout=10,
        )
        conn.autocommit = True
        return conn
