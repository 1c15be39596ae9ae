"""Python's built-in sqlite3 driver."""

from __future__ import annotations

from dbstand.drivers import sqlite3 as sqlite3_driver
from dbstand.workloads.kv.dbapi import DbApiKvClient


class Sqlite3Kv(DbApiKvClient):
    stack = "sqlite3"
    paramstyle = "qmark"
    # autocommit: each operation its own transaction; dbstand batches with BEGIN/COMMIT
    driver = sqlite3_driver
