"""The kv client for any DB-API 2 driver; subclasses only open the connection."""

from __future__ import annotations

import time
from abc import abstractmethod
from collections.abc import Iterable, Sequence
from itertools import islice
from typing import Any

from dbstand.drivers import open_with
from dbstand.sql import bulk
from dbstand.sql.dialects import Dialect, dialect_for, server_facts
from dbstand.sql.ownership import Ownership
from dbstand.sql.paramstyle import to_paramstyle
from dbstand.targets.url import TargetURL
from dbstand.workloads.kv.client import ConnKvClient, Op

KV_SUFFIX = "kv"
KV_COLUMNS = ("id", "name")


class DbApiKvClient(ConnKvClient):
    """kv over a DB-API connection in autocommit mode: each operation is its own
    transaction, as an application doing single-key CRUD would run it."""

    paramstyle = "qmark"

    def __init__(self, target: TargetURL, prefix: str):
        super().__init__(target, prefix)
        self.dialect: Dialect = dialect_for(target.kind)
        self.cur: Any = None
        self.table = f"{prefix}{KV_SUFFIX}"

    # --- connection ------------------------------------------------------------
    @abstractmethod
    def _open(self) -> Any:
        """Open a DB-API connection in autocommit mode (each driver its own way)."""

    def connect(self) -> None:
        self.conn = open_with(self._open, self.target)
        self.cur = self.conn.cursor()
        self.ownership = Ownership(self.cur, self.dialect, self.paramstyle, self.prefix)

    def sql(self, text: str) -> str:
        return to_paramstyle(text, self.paramstyle)

    def server_facts(self) -> dict[str, Any]:
        return server_facts(self.target.kind, self.cur)

    def ping(self) -> None:
        """One trivial statement and its answer (the network axis's RTT check)."""
        self.cur.execute("SELECT 1")
        self.cur.fetchall()

    def forms(self) -> dict[str, str]:
        return dict(self.dialect.forms)

    # --- timed operations ------------------------------------------------------
    def operation(self, op: str) -> Op:
        return self.cursor_operation(self.cur, op)

    def cursor_operation(self, cur: Any, op: str) -> Op:
        """`op` as a callable on `cur` (a driver may pass a prepared cursor)."""
        sql = self.sql(self.dialect.statement(op, self.table))
        execute = cur.execute
        if op == "select":
            fetchone = cur.fetchone

            def select(params: Any) -> object:
                execute(sql, params)
                return fetchone()

            return select

        def write(params: Any) -> object:
            return execute(sql, params)

        return write

    # --- untimed data management ---------------------------------------------
    def check_ownership(self) -> None:
        self.ownership.check(self.table)

    def create_table(self) -> None:
        self.ownership.create(self.table, self.dialect.statement("create_kv", self.table), "kv")

    def drop_table(self) -> None:
        self.ownership.drop(self.table)

    def fill(self, rows: Iterable[tuple[int, str]],
             progress: bulk.Progress | None = None) -> bulk.Loaded:
        """The kind's bulk path (sql/bulk.py) when this machine has its driver, else
        multi-row INSERTs in one transaction through this client's own driver."""
        loaded = bulk.load(self.target, self.table, KV_COLUMNS, rows, connection=self.conn,
                           progress=progress)
        if loaded is None:
            loaded = self._insert_rows(rows, analyze=True)
        if self.dialect.after_fill:
            self.cur.execute(self.dialect.after_fill.format(t=self.table))
            self.cur.fetchall()
        return loaded

    def restore(self, rows: Iterable[tuple[int, str]]) -> None:
        """Put back the few rows an iteration deleted: on this connection, no statistics
        (between iterations, where a new connection and an ANALYZE would be noise)."""
        self._insert_rows(rows, analyze=False)

    def _insert_rows(self, rows: Iterable[tuple[int, str]], analyze: bool) -> bulk.Loaded:
        start = time.perf_counter()
        per_stmt = max(1, min(500, self.dialect.max_params // 2))
        it = iter(rows)
        done = 0
        self.cur.execute("BEGIN")
        try:
            while chunk := list(islice(it, per_stmt)):
                values = ", ".join(["(?, ?)"] * len(chunk))
                flat = [v for row in chunk for v in row]
                self.cur.execute(self.sql(f"INSERT INTO {self.table} (id, name) VALUES {values}"),
                                 flat)
                done += len(chunk)
            self.cur.execute("COMMIT")
        except BaseException:
            self.cur.execute("ROLLBACK")
            raise
        if analyze:
            bulk.analyze(self.cur, self.target.kind, self.table)
        return bulk.Loaded(self.table, done, time.perf_counter() - start,
                           f"multi-row INSERT ({self.stack})")

    def count(self, where: str = "", params: Sequence[Any] = ()) -> int:
        clause = f" WHERE {where}" if where else ""
        self.cur.execute(self.sql(f"SELECT count(*) FROM {self.table}{clause}"), tuple(params))
        return int(self.cur.fetchone()[0])

    def fetch(self, key: int) -> tuple[int, str] | None:
        self.cur.execute(self.sql(f"SELECT id, name FROM {self.table} WHERE id = ?"), (key,))
        row = self.cur.fetchone()
        return (int(row[0]), str(row[1])) if row is not None else None

    def delete_above(self, max_id: int) -> None:
        self.cur.execute(self.sql(f"DELETE FROM {self.table} WHERE id > ?"), (max_id,))
