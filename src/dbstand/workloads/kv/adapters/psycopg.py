"""psycopg 3 (C implementation when psycopg-binary is installed)."""

from __future__ import annotations

from typing import Any

import psycopg

from dbstand.targets.managed import password_for
from dbstand.workloads.kv.dbapi import DbApiKvClient


class PsycopgKv(DbApiKvClient):
    stack = "psycopg"
    paramstyle = "format"

    def _open(self) -> Any:
        t = self.target
        return psycopg.connect(
            host=t.host, port=t.port or 5432, user=t.user, dbname=t.database or t.user,
            password=t.password or password_for(t), autocommit=True, connect_timeout=10,
        )

    def server_facts(self) -> dict[str, Any]:
        facts = super().server_facts()
        facts["client"] = f"psycopg {psycopg.__version__} ({psycopg.pq.__impl__}), " \
                          f"prepare_threshold={self.conn.prepare_threshold}"
        return facts
