"""sqlite3's batch paths: executemany in one transaction, multi-row VALUES."""

from __future__ import annotations

from typing import Any

from dbstand.stacks.batch_base import BatchApi
from dbstand.stacks.batch_dbapi import DbApiBatchClient, values_api
from dbstand.stacks.batch_sql import SQLITE
from dbstand.stacks.sqlite3_stack import open_sqlite

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
