"""pg8000, a pure-Python PostgreSQL driver, through its DB-API interface."""

from __future__ import annotations

from dbstand.drivers import pg8000 as pg8000_driver
from dbstand.workloads.kv.dbapi import DbApiKvClient


class Pg8000Kv(DbApiKvClient):
    stack = "pg8000"
    paramstyle = "format"
    driver = pg8000_driver
