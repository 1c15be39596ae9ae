"""Objects dbstand owns, and the refusal to touch any other.

dbstand keeps a registry table (`<prefix>owned`) in the target listing the tables it
created. It drops or refills a table only if the registry names it; a table with a
dbstand-like name that the registry does not list belongs to someone else and is
refused, never overwritten.

The registry is recognised by a mark dbstand writes when it creates it, never by its
columns alone (anyone may have a table `dbstand_owned(name, workload, created_at)`):
a table comment on PostgreSQL and MariaDB/MySQL, a comment inside the CREATE TABLE
text on SQLite (which keeps that text in sqlite_master). Registries written by
dbstand versions before the mark are still read, but only when they hold rows and
every row is one dbstand writes (a table under the prefix, a workload name, a UTC
time stamp `YYYY-MM-DDTHH:MM:SSZ`); an empty unmarked table, or one with any other
row, is someone else's and refused.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

from dbstand.errors import OwnershipError
from dbstand.sql.dialects import Dialect
from dbstand.sql.paramstyle import to_paramstyle
from dbstand.targets.prefix import (
    DEFAULT_PREFIX,
    REGISTRY_MARK,
    check_prefix,
    legacy_rows_ok,
    not_our_registry,
)


class Ownership:
    """Creates and drops the tables of one prefix through a DB-API cursor."""

    def __init__(self, cursor: Any, dialect: Dialect, paramstyle: str,
                 prefix: str = DEFAULT_PREFIX):
        self.cur = cursor
        self.dialect = dialect
        self.style = paramstyle
        self.prefix = check_prefix(prefix)
        self.registry = f"{prefix}owned"
        self._verified = False  # the registry was seen to be dbstand's

    def _sql(self, sql: str) -> str:
        return to_paramstyle(sql, self.style)

    def exists(self, table: str) -> bool:
        self.cur.execute(self._sql(self.dialect.table_exists), (table,))
        return self.cur.fetchone() is not None

    def _marked(self) -> bool:
        query = self.dialect.mark_query
        if query is None:
            return False
        self.cur.execute(self._sql(query), (self.registry,))
        row = self.cur.fetchone()
        return bool(row and row[0] and REGISTRY_MARK in str(row[0]))

    def _registry_is_ours(self) -> bool:
        """The registry exists and is dbstand's: marked, or an older dbstand's (see the
        module doc). Checked once per instance; a foreign table raises OwnershipError."""
        if self._verified:
            return True
        if not self.exists(self.registry):
            return False
        if not self._marked():
            try:
                self.cur.execute(f"SELECT name, workload, created_at FROM {self.registry}")
                rows = [tuple(r) for r in self.cur.fetchall()]
            except Exception:
                self._rollback()
                rows = []
            if not legacy_rows_ok(rows, self.prefix):
                raise not_our_registry("table", self.registry)
        self._verified = True
        return True

    def _ensure_registry(self) -> None:
        if self._registry_is_ours():
            return
        columns = ("name VARCHAR(128) PRIMARY KEY, workload VARCHAR(64) NOT NULL, "
                   "created_at VARCHAR(40) NOT NULL")
        for statement in self.dialect.create_registry:
            self.cur.execute(statement.format(t=self.registry, columns=columns,
                                              mark=REGISTRY_MARK))
        self._verified = True

    def _rollback(self) -> None:
        with contextlib.suppress(Exception):  # best effort after a failed probe
            self.cur.connection.rollback()

    def owns(self, table: str) -> bool:
        if table == self.registry or not self._registry_is_ours():
            return False
        self.cur.execute(self._sql(f"SELECT 1 FROM {self.registry} WHERE name = ?"), (table,))
        return self.cur.fetchone() is not None

    def table_name(self, suffix: str) -> str:
        return f"{self.prefix}{suffix}"

    def check(self, table: str) -> None:
        """Refuse early (before any run starts) if `table` is someone else's."""
        self._registry_is_ours()  # a foreign registry is refused here
        if self.exists(table) and not self.owns(table):
            raise OwnershipError(
                f"table {table} exists and was not created by dbstand: refusing to "
                "touch it (rename it, or give dbstand another --prefix)")

    def create(self, table: str, ddl: str, workload: str, verbatim: bool = False) -> None:
        """(Re)create `table` with `ddl`, refusing if someone else's table has its name.
        `verbatim`: a name a workload needs as it is, outside the prefix (pgbench's
        tables for its scripts); registered and refused the same way."""
        if (not verbatim and not table.startswith(self.prefix)) or table == self.registry:
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
            self._verified = False
