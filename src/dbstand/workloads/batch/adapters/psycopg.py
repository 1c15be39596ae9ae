"""psycopg 3's batch paths: pipelined executemany, COPY, multi-row VALUES, unnest."""

from __future__ import annotations

from typing import Any

from dbstand.drivers import psycopg as psycopg_driver
from dbstand.workloads.batch.adapters.dbapi import DbApiBatchClient, values_api
from dbstand.workloads.batch.api import BatchApi, BatchData
from dbstand.workloads.batch.sql import (
    PG_COPY_COLUMNS,
    PG_CREATE_TMP,
    PG_TMP_TABLE,
    POSTGRESQL,
    pg_copy_join,
    pg_unnest,
)

ALL = ("insert", "update", "delete")

UNNEST_API = BatchApi(
    "unnest", ALL, "one statement for all rows, passed as arrays: INSERT ... SELECT unnest(), "
                   "UPDATE ... FROM unnest(), DELETE ... WHERE f_key = ANY(array)")


def unnest_params(data: BatchData) -> tuple[Any, ...]:
    return (data.keys,) if data.op == "delete" else (data.keys, data.values)


class PsycopgBatch(DbApiBatchClient):
    paramstyle = "format"
    apis = (
        BatchApi("executemany", ALL,
                 "cursor.executemany(): one statement per row, sent in pipeline mode "
                 "(libpq 14+): no wait for each answer"),
        BatchApi("copy", ALL,
                 "COPY FROM STDIN with write_row(); update/delete: COPY into a temporary "
                 "table, then one UPDATE ... FROM / DELETE ... USING join (all timed)"),
        values_api(POSTGRESQL.update_values_form),
        UNNEST_API,
    )

    def _open(self) -> Any:
        import psycopg

        self._psycopg = psycopg
        return psycopg_driver.connect(self.target, autocommit=False)

    def server_facts(self) -> dict[str, Any]:
        facts = super().server_facts()
        psycopg = self._psycopg
        facts["client"] = (f"psycopg {psycopg.__version__} ({psycopg.pq.__impl__}), libpq "
                           f"{psycopg.pq.version()}, pipeline mode "
                           f"{'on' if psycopg.Pipeline.is_supported() else 'unavailable'}")
        return facts

    def api_copy(self, op: str, data: BatchData) -> None:
        cur = self.cur
        if op == "insert":
            into = f"{self.table} (f_key, f_value)"
        else:
            cur.execute(PG_CREATE_TMP)
            into = f"{PG_TMP_TABLE} ({', '.join(PG_COPY_COLUMNS[op])})"
        with cur.copy(f"COPY {into} FROM STDIN") as copy:
            write_row = copy.write_row
            for row in data.row_params:
                write_row(row)
        if op != "insert":
            cur.execute(pg_copy_join(self.sql, op, self.table))

    def api_unnest(self, op: str, data: BatchData) -> None:
        self.cur.execute(self.q(pg_unnest(self.sql, op, self.table)), unnest_params(data))
