"""Python's built-in sqlite3 driver."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from dbstand.errors import TargetError
from dbstand.targets.url import TargetURL
from dbstand.workloads.kv.dbapi import DbApiKvClient

#: URL options applied as PRAGMAs, e.g. sqlite:///app.db?synchronous=normal
PRAGMAS = ("journal_mode", "synchronous", "cache_size", "temp_store", "mmap_size")


def open_sqlite(target: TargetURL, isolation_level: str | None) -> sqlite3.Connection:
    """Open a target's SQLite database, applying its URL options as PRAGMAs.

    `isolation_level=None` is autocommit; "" or "DEFERRED" is the module's implicit
    transactions (DML opens one, commit() ends it).
    """
    if target.is_memory:
        path = ":memory:"
    else:
        path = target.database or ""
        parent = Path(path).expanduser().resolve().parent
        if not parent.is_dir():
            raise TargetError(f"cannot use {target}: directory {parent} does not exist")
    conn = sqlite3.connect(path, isolation_level=isolation_level, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout = 5000")
    for name, value in target.query:
        if name not in PRAGMAS or not value.replace("_", "").isalnum():
            raise TargetError(f"{target}: unsupported option {name}={value!r} "
                              f"(known: {', '.join(PRAGMAS)})")
        conn.execute(f"PRAGMA {name} = {value}")
    return conn


class Sqlite3Kv(DbApiKvClient):
    stack = "sqlite3"
    paramstyle = "qmark"

    def _open(self) -> Any:
        # autocommit: each operation its own transaction; dbstand batches with BEGIN/COMMIT
        return open_sqlite(self.target, None)
