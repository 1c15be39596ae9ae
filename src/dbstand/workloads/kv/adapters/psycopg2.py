"""psycopg2 (libpq; parameters interpolated client-side)."""

from __future__ import annotations

from typing import Any

from dbstand.drivers import psycopg2 as psycopg2_driver
from dbstand.workloads.kv.dbapi import DbApiKvClient


class Psycopg2Kv(DbApiKvClient):
    stack = "psycopg2"
    paramstyle = "format"

    def _open(self) -> Any:
        return psycopg2_driver.connect(self.target)
