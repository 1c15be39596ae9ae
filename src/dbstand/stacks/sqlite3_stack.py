"""Python's built-in sqlite3 driver."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from dbstand.errors import TargetError
from dbstand.stacks.dbapi import DbApiKvClient

#: URL options applied as PRAGMAs, e.g. sqlite:///app.db?synchronous=normal
PRAGMAS = ("journal_mode", "synchronous", "cache_size", "temp_store", "mmap_size")


class Sqlite3Kv(DbApiKvClient):
    stack = "sqlite3"
    paramstyle = "qmark"

    def _open(self) -> Any:
        if self.target.is_memory:
            path = ":memory:"
        else:
            path = self.target.database or ""
            parent = Path(path).expanduser().resolve().parent
            if not parent.is_dir():
                raise TargetError(f"cannot use {self.target}: directory {parent} does not exist")
        # isolation_level=None: autocommit, explicit BEGIN/COMMIT where dbstand batches.
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA busy_timeout = 5000")
        for name, value in self.target.query:
            if name not in PRAGMAS or not value.replace("_", "").isalnum():
                raise TargetError(f"{self.target}: unsupported option {name}={value!r} "
                                  f"(known: {', '.join(PRAGMAS)})")
            conn.execute(f"PRAGMA {name} = {value}")
        return conn
