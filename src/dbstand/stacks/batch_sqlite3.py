"""sqlite3's batch paths: executemany in one transaction, multi-row VALUES."""

from __future__ import annotations

from typing import Any

from dbstand.stacks.batch_base import BatchApi
from dbstand.stacks.batch_dbapi import DbApiBatchClient, values_api
from dbstand.stacks.batch_sql import SQLITE
from dbstand.stacks.sqlite3_stack import PRAGMAS

ALL = ("insert", "update", "delete")


class Sqlite3Batch(DbApiBatchClient):
    paramstyle = "qmark"
    apis = (
        BatchApi("executemany", ALL,
                 "cursor.executemany() inside one transaction (sqlite3's implicit BEGIN)"),
        values_api(SQLITE.update_values_form),
    )

    def _open(self) -> Any:
        import sqlite3

        from dbstand.errors import TargetError

        if self.target.is_memory:
            path = ":memory:"
        else:
            from pathlib import Path

            path = self.target.database or ""
            parent = Path(path).expanduser().resolve().parent
            if not parent.is_dir():
                raise TargetError(f"cannot use {self.target}: directory {parent} does not exist")
        # the module's default isolation: DML opens a transaction, commit() ends it
        conn = sqlite3.connect(path, check_same_thread=False)
        conn.execute("PRAGMA busy_timeout = 5000")
        for name, value in self.target.query:
            if name not in PRAGMAS or not value.replace("_", "").isalnum():
                raise TargetError(f"{self.target}: unsupported option {name}={value!r} "
                                  f"(known: {', '.join(PRAGMAS)})")
            conn.execute(f"PRAGMA {name} = {value}")
        return conn
