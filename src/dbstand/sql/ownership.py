"""Objects dbstand owns, and the refusal to touch any other.

dbstand keeps a registry table (`<prefix>owned`) in the target listing the tables it
created. It drops or refills a table only if the registry names it; a table with a
dbstand-like name that the registry does not list belongs to someone else and is
refused, never overwritten.
"""

from __future__ import annotations

import contextlib
import re
import time
from typing import Any

from dbstand.errors import OwnershipError, UserError
from dbstand.sql.dialects import Dialect
from dbstand.sql.paramstyle import to_paramstyle

PREFIX_RE = re.compile(r"^[a-z][a-z0-9_]{0,30}_$")
DEFAULT_PREFIX = "dbstand_"


def check_prefix(prefix: str) -> str:
    if not PREFIX_RE.match(prefix):
        raise UserError(f"--prefix {prefix!r} must be lowercase letters, digits and _, "
                        "start with a letter and end with _ (e.g. dbstand_)")
    return prefix


class Ownership:
    """Creates and drops the tables of one prefix through a DB-API cursor."""

    def __init__(self, cursor: Any, dialect: Dialect, paramstyle: str,
                 prefix: str = DEFAULT_PREFIX):
        self.cur = cursor
        self.dialect = dialect
        self.style = paramstyle
        self.prefix = check_prefix(prefix)
        self.registry = f"{prefix}owned"

    def _sql(self, sql: str) -> str:
        return to_paramstyle(sql, self.style)

    def exists(self, table: str) -> bool:
        self.cur.execute(self._sql(self.dialect.table_exists), (table,))
        return self.cur.fetchone() is not None

    def _ensure_registry(self) -> None:
        if self.exists(self.registry):
            try:
                self.cur.execute(f"SELECT name, workload, created_at FROM {self.registry} "
                                 "WHERE 1 = 0")
                self.cur.fetchall()
            except Exception:
                self._rollback()
                raise OwnershipError(
                    f"table {self.registry} exists but is not dbstand's registry: "
                    "refusing to touch it (use another --prefix)") from None
            return
        self.cur.execute(f"CREATE TABLE {self.registry} (name VARCHAR(128) PRIMARY KEY, "
                         "workload VARCHAR(64) NOT NULL, created_at VARCHAR(40) NOT NULL)")

    def _rollback(self) -> None:
        with contextlib.suppress(Exception):  # best effort after a failed probe
            self.cur.connection.rollback()

    def owns(self, table: str) -> bool:
        if not self.exists(self.registry):
            return False
        self.cur.execute(self._sql(f"SELECT 1 FROM {self.registry} WHERE name = ?"), (table,))
        return self.cur.fetchone() is not None

    def table_name(self, suffix: str) -> str:
        return f"{self.prefix}{suffix}"

    def check(self, table: str) -> None:
        """Refuse early (before any run starts) if `table` is someone else's."""
        if self.exists(self.registry):
            self._ensure_registry()
        if self.exists(table) and not self.owns(table):
            raise OwnershipError(
                f"table {table} exists and was not created by dbstand: refusing to "
                "touch it (rename it, or give dbstand another --prefix)")

    def create(self, table: str, ddl: str, workload: str) -> None:
        """(Re)create `table` with `ddl`, refusing if someone else's table has its name."""
        if not table.startswith(self.prefix):
            raise OwnershipError(f"refusing to create {table}: not under prefix {self.prefix}")
        self._ensure_registry()
        self.check(table)
        if self.exists(table):
            self.cur.execute(f"DROP TABLE {table}")
        self.cur.execute(self._sql(f"DELETE FROM {self.registry} WHERE name = ?"), (table,))
        self.cur.execute(ddl)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.cur.execute(self._sql(f"INSERT INTO {self.registry} (name, workload, created_at) "
                                   "VALUES (?, ?, ?)"), (table, workload, stamp))

    def drop(self, table: str) -> None:
        """Drop a table dbstand owns; drop the registry too once it is empty."""
        if not self.owns(table):
            raise OwnershipError(f"refusing to drop {table}: dbstand did not create it")
        self.cur.execute(f"DROP TABLE {table}")
        self.cur.execute(self._sql(f"DELETE FROM {self.registry} WHERE name = ?"), (table,))
        self.cur.execute(f"SELECT count(*) FROM {self.registry}")
        if self.cur.fetchone()[0] == 0:
            self.cur.execute(f"DROP TABLE {self.registry}")
