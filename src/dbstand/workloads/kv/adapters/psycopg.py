"""psycopg 3 (C implementation when psycopg-binary is installed)."""

from __future__ import annotations

from typing import Any

import psycopg

from dbstand.drivers import psycopg as psycopg_driver
from dbstand.workloads.kv.dbapi import DbApiKvClient


class PsycopgKv(DbApiKvClient):
    stack = "psycopg"
    paramstyle = "format"
    driver = psycopg_driver

    def server_facts(self) -> dict[str, Any]:
        facts = super().server_facts()
        facts["client"] = f"psycopg {psycopg.__version__} ({psycopg.pq.__impl__}), " \
                          f"prepare_threshold={self.conn.prepare_threshold}"
        return facts
