"""What a stack implements for the batch workload (specs/batch.md).

A `BatchClient` wraps one connection of the stack under test. It names its batch
APIs (`apis`, stable names users pass to `--api`), and binds each (api, op) to a
callable taking the case's input: the timed part, the batch call(s) plus COMMIT.
Everything else runs untimed through the same connection and dbstand's ownership
rules: (re)creating the table, pre-filling it server-side, verifying the result,
dropping it.

Drivers are imported when a client connects, never at import time, so the API
catalogue (`dbstand list apis`) works on a machine without them.
"""

from __future__ import annotations

import shutil
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, ClassVar

from dbstand.errors import CaseFailed
from dbstand.sql.dialects import dialect_for
from dbstand.sql.ownership import Ownership
from dbstand.sql.paramstyle import to_paramstyle
from dbstand.targets.url import TargetURL
from dbstand.workloads.batch.adapters.native import (
    mariadb_binary,
    mariadb_load_data,
    psql_binary,
    psql_copy,
    write_csv,
)
from dbstand.workloads.batch.sql import BatchSql, batch_sql

OPS = ("insert", "update", "delete")
TABLE_SUFFIX = "batch"
#: rows whose values are read back after every case
VERIFY_SAMPLE = 25

Op = Callable[[Any], object]

#: limit rows are api names under this prefix; they run through the first stack
#: of their target kind, which only prepares and verifies the table for them
LIMIT_PREFIX = "limit:"
SERVER_SIDE = f"{LIMIT_PREFIX}server-side"
PSQL_COPY = f"{LIMIT_PREFIX}psql-copy"
LOAD_DATA = f"{LIMIT_PREFIX}load-data"
NATIVE_TOOLS: dict[str, Callable[[TargetURL, str, str], None]] = {
    PSQL_COPY: psql_copy, LOAD_DATA: mariadb_load_data}


@dataclass(frozen=True)
class BatchApi:
    """One way a stack does a batch: its stable name, the ops it does, and how."""

    name: str
    ops: tuple[str, ...]
    description: str

    @property
    def is_limit(self) -> bool:
        return self.name.startswith(LIMIT_PREFIX)


#: the native loaders' limit rows (a database's `BatchSql.loader`): whether their
#: command-line client is installed here, and what they do
NATIVE_LOADERS: dict[str, tuple[Callable[[], Any], BatchApi]] = {
    "psql-copy": (psql_binary, BatchApi(PSQL_COPY, ("insert",), "psql \\copy FROM a CSV file "
                                        "(psql start and login included)")),
    "load-data": (mariadb_binary, BatchApi(LOAD_DATA, ("insert",),
                                           "LOAD DATA LOCAL INFILE through the mariadb client "
                                           "(client start and login included)")),
}


def limit_apis(kind: str) -> tuple[BatchApi, ...]:
    """The limit rows for a target kind: the server alone, and the native loader if
    its command-line client is installed here."""
    sql = batch_sql(dialect_for(kind).kind)
    out = [BatchApi(SERVER_SIDE, OPS, sql.server_side_form)]
    if sql.loader is not None:
        installed, api = NATIVE_LOADERS[sql.loader]
        if installed():
            out.append(api)
    return tuple(out)


@dataclass(frozen=True)
class BatchData:
    """The N rows of one case, built once and untimed (as the study built its args).

    Row i has key `str(i)`; insert writes value i, update sets i + 1 on pre-filled
    rows (value i), delete removes every pre-filled row.
    """

    op: str
    rows: int
    keys: list[str]
    values: list[int]            # the value each key has after the op (empty: delete)
    row_params: list[tuple[Any, ...]]  # per row, in the row statement's order

    @classmethod
    def build(cls, op: str, rows: int) -> BatchData:
        keys = [str(i) for i in range(rows)]
        if op == "insert":
            values = list(range(rows))
            params: list[tuple[Any, ...]] = list(zip(keys, values, strict=True))
        elif op == "update":
            values = [i + 1 for i in range(rows)]
            params = list(zip(values, keys, strict=True))
        elif op == "delete":
            values = []
            params = [(k,) for k in keys]
        else:
            raise CaseFailed(f"unknown batch operation {op!r}")
        return cls(op, rows, keys, values, params)

    def sample(self) -> list[int]:
        """Indexes checked after the case: first, last, and evenly spread between."""
        n = self.rows
        return sorted({0, n - 1, *(n * j // VERIFY_SAMPLE for j in range(VERIFY_SAMPLE))})


def pages(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


class BatchClient(ABC):
    """One connection of a stack, able to run its batch APIs on dbstand's table."""

    #: the stack's batch APIs, by stable name (limit rows are added per target kind)
    apis: ClassVar[tuple[BatchApi, ...]] = ()
    #: DB-API paramstyle of the cursor used for untimed SQL (see sql/paramstyle.py)
    paramstyle: ClassVar[str] = "format"

    def __init__(self, target: TargetURL, prefix: str, stack: str, page_size: int = 100):
        self.target = target
        self.prefix = prefix
        self.stack = stack
        self.page_size = page_size
        self.table = f"{prefix}{TABLE_SUFFIX}"
        self.sql: BatchSql = batch_sql(target.kind)
        self._tmp_dir: str | None = None

    def use_key_predicate(self, predicate: str) -> None:
        """Find rows by key through `predicate` (sql.KEY_PREDICATES) from now on."""
        self.sql = self.sql.with_key_predicate(predicate)

    # --- the catalogue -------------------------------------------------------------
    @classmethod
    def api_catalogue(cls, kind: str | None = None) -> tuple[BatchApi, ...]:
        """The stack's own APIs, then the limit rows available for `kind`."""
        return cls.apis + (limit_apis(kind) if kind else ())

    @classmethod
    def find_api(cls, name: str, kind: str) -> BatchApi | None:
        return next((a for a in cls.api_catalogue(kind) if a.name == name), None)

    @classmethod
    def key_predicate_problem(cls, api: str, op: str, predicate: str) -> str | None:
        """Why `api` cannot find rows through `predicate` for `op` (None: it can).

        Inserts find no rows and limit rows keep the correct form, so any predicate
        goes for them; an adapter whose statements have no key predicate to change
        says so here."""
        return None

    # --- connection ------------------------------------------------------------------
    @abstractmethod
    def connect(self) -> None:
        """Open the connection (the driver's default transactional mode); raise
        TargetError (one line) when it cannot."""

    def close(self) -> None:
        if self._tmp_dir is not None:
            shutil.rmtree(self._tmp_dir, ignore_errors=True)
            self._tmp_dir = None

    @abstractmethod
    def server_facts(self) -> dict[str, Any]: ...

    @abstractmethod
    def cursor(self) -> Any:
        """A DB-API-like cursor in `paramstyle` for untimed SQL and Ownership."""

    @abstractmethod
    def commit(self) -> None: ...

    @abstractmethod
    def rollback(self) -> None: ...

    # --- the timed part ----------------------------------------------------------------
    def prepare_input(self, api: str, data: BatchData) -> Any:
        """The input `api` takes, built untimed (the data itself unless overridden).

        Limit rows: the server-side statement, or a CSV file for a native tool.
        """
        if api == SERVER_SIDE:
            return self.sql.server_side(data.op, self.table, data.rows)
        if api in NATIVE_TOOLS:
            if self._tmp_dir is None:
                self._tmp_dir = tempfile.mkdtemp(prefix="dbstand-batch-")
            return write_csv(self._tmp_dir, data.row_params)
        return data

    def operation(self, api: str, op: str) -> Op:
        """The timed callable: the batch call(s) of `api` for `op`, then COMMIT."""
        if api == SERVER_SIDE:
            cur = self.cursor()

            def server_side(statement: str) -> None:
                cur.execute(statement)
                self.commit()

            return server_side
        if api in NATIVE_TOOLS:
            tool, target, table = NATIVE_TOOLS[api], self.target, self.table

            def native(csv_path: str) -> None:
                tool(target, table, csv_path)

            return native
        return self.bind(api, op)

    @abstractmethod
    def bind(self, api: str, op: str) -> Op:
        """The callable doing `op` through `api`, COMMIT included."""

    # --- untimed data management ---------------------------------------------------
    def ownership(self) -> Ownership:
        return Ownership(self.cursor(), dialect_for(self.target.kind), self.paramstyle,
                         self.prefix)

    def check_ownership(self) -> None:
        try:
            self.ownership().check(self.table)
        finally:
            self.rollback()

    def reset_table(self, op: str, rows: int, analyze: bool) -> None:
        """Drop and recreate the table; pre-fill it server-side for update/delete."""
        self.rollback()
        self.ownership().create(self.table, self.sql.create.format(t=self.table), "batch")
        cur = self.cursor()
        if op != "insert":
            cur.execute(self.sql.fill_statement(self.table, rows))
        self.commit()
        if op != "insert" and analyze:
            cur.execute(self.sql.analyze.format(t=self.table))
            if self.sql.analyze_returns_rows:
                cur.fetchall()
            self.commit()

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        cur = self.cursor()
        cur.execute(to_paramstyle(sql, self.paramstyle), tuple(params))
        rows = list(cur.fetchall())
        self.commit()
        return rows

    def count(self) -> int:
        return int(self.query(f"SELECT count(*) FROM {self.table}")[0][0])

    def verify(self, data: BatchData) -> None:
        """Row count, a sample of values, deleted rows gone: CaseFailed otherwise."""
        want = 0 if data.op == "delete" else data.rows
        got = self.count()
        if got != want:
            raise CaseFailed(f"{data.op}: the table has {got} rows, expected {want}")
        sample = data.sample()
        keys = [data.keys[i] for i in sample]
        marks = ", ".join(["?"] * len(keys))
        found = {str(k): v for k, v in self.query(
            f"SELECT f_key, f_value FROM {self.table} WHERE f_key IN ({marks})", keys)}
        if data.op == "delete":
            if found:
                raise CaseFailed(f"delete: {len(found)} of {len(keys)} sampled keys are "
                                 f"still there (e.g. {next(iter(found))!r})")
            return
        for i in sample:
            value = found.get(data.keys[i])
            if value is None or Decimal(str(value)) != data.values[i]:
                raise CaseFailed(f"{data.op}: key {data.keys[i]!r} has value {value!r}, "
                                 f"expected {data.values[i]}")

    def drop_table(self) -> None:
        self.rollback()
        self.ownership().drop(self.table)
        self.commit()

    def cleanup_after_failure(self, keep: bool) -> None:
        """Best effort after a failed case: end the transaction, drop our table."""
        try:
            self.rollback()
            if not keep and self.ownership().owns(self.table):
                self.drop_table()
        except Exception:  # the connection may be gone: nothing more to do
            return
