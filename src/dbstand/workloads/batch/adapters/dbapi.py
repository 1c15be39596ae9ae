"""Batch clients over a DB-API 2 connection: the APIs every such driver has.

The connection stays in the driver's default transactional mode, as an
application's batch job would use it: the first statement opens the transaction
(implicitly), the COMMIT at the end is timed with the rest.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable
from typing import Any

from dbstand.drivers import open_with
from dbstand.sql.dialects import server_facts
from dbstand.sql.paramstyle import to_paramstyle
from dbstand.workloads.batch.api import BatchApi, BatchClient, BatchData, Op, pages

ApiMethod = Callable[[str, BatchData], None]

EXECUTEMANY = "executemany"
VALUES = "values"
EXECUTE_LOOP = "execute_loop"


def values_api(form_update: str) -> BatchApi:
    return BatchApi(VALUES, ("insert", "update", "delete"),
                    "multi-row statements of --page-size rows: INSERT ... VALUES (..), (..); "
                    f"{form_update}; DELETE ... WHERE f_key IN (..)")


EXECUTE_LOOP_API = BatchApi(EXECUTE_LOOP, ("insert", "update", "delete"),
                            "cursor.execute() once per row, in one transaction")


class DbApiBatchClient(BatchClient):
    """Opening, untimed SQL and the generic APIs; drivers add their own fast paths as
    methods named `api_<name>` (name with + and - as _) taking (op, data)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.conn: Any = None
        self.cur: Any = None

    @abstractmethod
    def _open(self) -> Any:
        """Open a DB-API connection in the driver's default (transactional) mode."""

    def connect(self) -> None:
        self.conn = open_with(self._open, self.target)
        self.cur = self.conn.cursor()

    def close(self) -> None:
        try:
            if self.conn is not None:
                self.conn.close()
        finally:
            self.conn = None
            super().close()

    def server_facts(self) -> dict[str, Any]:
        facts = server_facts(self.target.kind, self.cur)
        self.commit()
        return facts

    def cursor(self) -> Any:
        return self.cur

    def commit(self) -> None:
        self.conn.commit()

    def rollback(self) -> None:
        self.conn.rollback()

    def q(self, sql: str) -> str:
        """dbstand's `?` SQL in this driver's paramstyle."""
        return to_paramstyle(sql, self.paramstyle)

    # --- binding ---------------------------------------------------------------------
    def bind(self, api: str, op: str) -> Op:
        method: ApiMethod = getattr(self, "api_" + api.replace("+", "_").replace("-", "_"))
        commit = self.conn.commit

        def run(data: BatchData) -> None:
            method(op, data)
            commit()

        return run

    # --- the APIs every DB-API driver has -------------------------------------------
    def api_executemany(self, op: str, data: BatchData) -> None:
        self.cur.executemany(self.q(self.sql.row_statement(op, self.table)), data.row_params)

    def api_execute_loop(self, op: str, data: BatchData) -> None:
        sql = self.q(self.sql.row_statement(op, self.table))
        execute = self.cur.execute
        for params in data.row_params:
            execute(sql, params)

    def api_values(self, op: str, data: BatchData) -> None:
        execute, table, size = self.cur.execute, self.table, self.page_size
        for page in pages(data.row_params, size):
            sql = self.q(self.sql.values_statement(op, table, len(page)))
            execute(sql, [v for row in page for v in row])
