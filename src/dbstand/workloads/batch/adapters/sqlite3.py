"""sqlite3's batch paths: executemany in one transaction, multi-row VALUES."""

from __future__ import annotations

from typing import Any

from dbstand.workloads.batch.adapters.dbapi import DbApiBatchClient, values_api
from dbstand.workloads.batch.api import BatchApi
from dbstand.workloads.batch.sql import SQLITE
from dbstand.workloads.kv.adapters.sqlite3 import open_sqlite

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
        return open_sqlite(self.target, "")
