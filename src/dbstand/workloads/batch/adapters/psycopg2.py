"""psycopg2's batch paths: the four APIs the study compared (seed 002)."""

from __future__ import annotations

from typing import Any

from dbstand.drivers import psycopg2 as psycopg2_driver
from dbstand.sql.paramstyle import to_paramstyle
from dbstand.workloads.batch.adapters.dbapi import DbApiBatchClient
from dbstand.workloads.batch.api import BatchApi, BatchData

#: execute_values' templates; rows render as (value, key) for update, (key) for delete;
#: {match} and {key}: the key predicate (batch/sql.py)
_VALUES_SQL = {
    "insert": "INSERT INTO {t} (f_key, f_value) VALUES %s",
    "update": "UPDATE {t} AS t SET f_value = d.v FROM (VALUES %s) AS d (v, k) "
              "WHERE {match}",
    "delete": "DELETE FROM {t} WHERE {key} IN (%s)",
}
#: execute_values' row template of a delete under the cast predicate
_CAST_KEY_TEMPLATE = "({value})"
_STATEMENT = "dbstand_batch_stmt"
ALL = ("insert", "update", "delete")


class Psycopg2Batch(DbApiBatchClient):
    paramstyle = "format"
    apis = (
        BatchApi("executemany", ALL, "cursor.executemany(): one statement per row, each "
                                     "its own round trip"),
        BatchApi("execute_batch", ALL, "extras.execute_batch(): --page-size row statements "
                                       "joined into one round trip"),
        BatchApi("prepare+execute_batch", ALL,
                 "PREPARE once, extras.execute_batch() of EXECUTE statements, DEALLOCATE "
                 "(all timed)"),
        BatchApi("execute_values", ALL,
                 "extras.execute_values(): one multi-row statement per page: INSERT ... "
                 "VALUES, UPDATE ... FROM (VALUES ...), DELETE ... WHERE f_key IN (...)"),
    )

    def _open(self) -> Any:
        import psycopg2
        import psycopg2.extras

        self._extras = psycopg2.extras
        return psycopg2_driver.connect(self.target, autocommit=False)

    def api_execute_batch(self, op: str, data: BatchData) -> None:
        self._extras.execute_batch(self.cur, self.q(self.sql.row_statement(op, self.table)),
                                   data.row_params, page_size=self.page_size)

    def api_prepare_execute_batch(self, op: str, data: BatchData) -> None:
        statement = self.sql.row_statement(op, self.table)
        marks = statement.count("?")
        self.cur.execute(f"PREPARE {_STATEMENT} AS " + to_paramstyle(statement, "dollar"))
        self._extras.execute_batch(
            self.cur, f"EXECUTE {_STATEMENT} (" + ", ".join(["%s"] * marks) + ")",
            data.row_params, page_size=self.page_size)
        self.cur.execute(f"DEALLOCATE {_STATEMENT}")

    def api_execute_values(self, op: str, data: BatchData) -> None:
        sql = self.sql
        statement = _VALUES_SQL[op].format(t=self.table, match=sql.match("t.f_key", "d.k"),
                                           key=sql.key_column("f_key"))
        template = None
        if op == "delete" and sql.key_predicate != "index":
            # each key of the IN list compared as the predicate says
            template = _CAST_KEY_TEMPLATE.format(value=sql.key_value("%s"))
        self._extras.execute_values(self.cur, statement, data.row_params, template=template,
                                    page_size=self.page_size)
