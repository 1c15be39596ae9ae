"""sqlite3, Python's built-in driver: a file (or memory) database, URL options as PRAGMAs."""

from __future__ import annotations

import sqlite3

from dbstand.errors import TargetError
from dbstand.targets.sqlite.path import path_of
from dbstand.targets.url import TargetURL

#: PRAGMAs a sqlite:// URL may set (`sqlite:///x.db?journal_mode=wal`)
PRAGMAS = ("journal_mode", "synchronous", "cache_size", "temp_store", "mmap_size")


def connect(target: TargetURL, *, isolation_level: str | None = None,
            busy_timeout_ms: int = 5000) -> sqlite3.Connection:
    """`isolation_level=None` is autocommit; "" or "DEFERRED" is the module's implicit
    transactions (DML opens one, commit() ends it)."""
    conn = sqlite3.connect(path_of(target), isolation_level=isolation_level,  # type: ignore[arg-type]
                           check_same_thread=False, timeout=busy_timeout_ms / 1000)
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    for name, value in target.query:
        if name not in PRAGMAS or not value.replace("_", "").isalnum():
            raise TargetError(f"{target}: unsupported option {name}={value!r} "
                              f"(known: {', '.join(PRAGMAS)})")
        conn.execute(f"PRAGMA {name} = {value}")
    return conn
