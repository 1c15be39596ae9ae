"""sqlite3's batch paths: executemany in one transaction, multi-row VALUES."""

from __future__ import annotations

from typing import Any

from dbstand.drivers import sqlite3 as sqlite3_driver
from dbstand.workloads.batch.adapters.dbapi import DbApiBatchClient, values_api
from dbstand.workloads.batch.api import BatchApi
from dbstand.workloads.batch.sql import SQLITE

ALL = ("insert", "update", "delete")


class Sqlite3Batch(DbApiBatchClient):
    paramstyle = "qmark"
    apis = (
        BatchApi("executemany", ALL,
                 "cursor.executemany() inside one transaction (sqlite3's implicit BEGIN)"),
        values_api(SQLITE.update_values_form),
    )

    def _open(self) -> Any:
        # the module's default isolation: DML opens a transaction, commit() ends it
        return sqlite3_driver.connect(self.target, isolation_level="")
