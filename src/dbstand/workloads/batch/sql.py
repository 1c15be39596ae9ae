"""The batch workload's SQL, per database kind (specs/batch.md, "Data").

Statements use `?` placeholders (converted per driver by sql/paramstyle.py). Row
statements take their parameters in the order of `BatchData.row_params`:
insert `(key, value)`, update `(value, key)` (the study's order), delete `(key,)`;
the multi-row forms take the same tuples flattened, page by page.

The server-side statements (pre-fill and the limit rows) make the same rows on the
server itself, keys `str(i)` for i in 0..N-1, so no client data crosses the wire.

Key predicates (`--key-predicate`): `index` (the default) compares the text key with
the text parameter, which the primary key's index serves. `cast` reproduces the
study's pitfall on purpose: its script bound integer keys to the text key column,
and openGauss then compared the two through a cast, scanning the table for every
UPDATE and DELETE. Here both sides are cast to a number, `CAST(f_key AS numeric) =
CAST(CAST(? AS text) AS numeric)`, which no index on f_key can serve (the inner text
cast keeps drivers that type parameters from the statement, asyncpg, sending text).
Only the statements that find rows by key change; inserts and the limit rows keep
the correct form.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

COLUMNS = "(f_key, f_value)"
#: how update and delete find their rows by key (see the module docstring)
KEY_PREDICATES = ("index", "cast")
DEFAULT_KEY_PREDICATE = "index"


@dataclass(frozen=True)
class BatchSql:
    """How one database kind spells the batch table and its statements."""

    kind: str
    create: str             # {t}: the table
    update_values: str      # {t}, {rows}: one page of (value, key) groups
    fill: str               # {t}, {last}, {numbers}: rows 0..last, value i, server-side
    limit_update: str       # {t}, {last}: value i+1 for every key, by key, server-side
    limit_delete: str       # {t}, {last}: every key, by key, server-side
    analyze: str            # {t}
    limit_insert: str = ""  # {t}, {last}: the insert limit row (default: `fill`)
    analyze_returns_rows: bool = False
    #: how the multi-row update is spelled, for the record
    update_values_form: str = ""
    #: the numeric type keys are cast to under the `cast` key predicate
    key_number: str = "numeric"
    #: the text type a parameter is cast to first (drivers that type parameters)
    key_text: str = "text"
    #: `index` or `cast` (KEY_PREDICATES): how rows are found by key
    key_predicate: str = DEFAULT_KEY_PREDICATE
    #: the table's key and the joined rows' key in `update_values` ({t}: the table)
    values_key: tuple[str, str] = ("t.f_key", "d.k")
    #: the server-side limit row's form, for the record
    server_side_form: str = ""
    #: the native loader's limit row (api.py NATIVE_LOADERS), if the database has one
    loader: str | None = None

    def with_key_predicate(self, predicate: str) -> BatchSql:
        """The same SQL finding rows by key through `predicate`."""
        if predicate not in KEY_PREDICATES:
            raise ValueError(f"unknown key predicate {predicate!r}")
        return replace(self, key_predicate=predicate)

    def key_column(self, column: str) -> str:
        """The key column as the predicate compares it."""
        if self.key_predicate == "cast":
            return f"CAST({column} AS {self.key_number})"
        return column

    def key_value(self, value: str) -> str:
        """A key value (a placeholder or a column of joined rows) as compared."""
        if self.key_predicate == "cast":
            return f"CAST(CAST({value} AS {self.key_text}) AS {self.key_number})"
        return value

    def match(self, column: str, value: str) -> str:
        """`column = value` under the key predicate."""
        return f"{self.key_column(column)} = {self.key_value(value)}"

    def key_in(self, column: str, count: int, mark: str = "?") -> str:
        """`column IN (mark, ...)` for `count` keys under the key predicate."""
        values = ", ".join([self.key_value(mark)] * count)
        return f"{self.key_column(column)} IN ({values})"

    @property
    def key_form(self) -> str:
        """How rows are found by key, for the record."""
        return self.match("f_key", "?")

    # --- one statement per row ---------------------------------------------------
    def insert_row(self, table: str) -> str:
        return f"INSERT INTO {table} {COLUMNS} VALUES (?, ?)"

    def update_row(self, table: str) -> str:
        return f"UPDATE {table} SET f_value = ? WHERE {self.match('f_key', '?')}"

    def delete_row(self, table: str) -> str:
        return f"DELETE FROM {table} WHERE {self.match('f_key', '?')}"

    def row_statement(self, op: str, table: str) -> str:
        return {"insert": self.insert_row, "update": self.update_row,
                "delete": self.delete_row}[op](table)

    # --- one statement per page of rows -------------------------------------------
    def values_statement(self, op: str, table: str, rows: int) -> str:
        """A multi-row statement for `rows` rows (cached: pages repeat)."""
        return _values_statement(self, op, table, rows)

    def server_side(self, op: str, table: str, rows: int) -> str:
        """The limit row's single statement doing `op` on all `rows` keys."""
        template = {"insert": self.limit_insert, "update": self.limit_update,
                    "delete": self.limit_delete}[op]
        return template.format(t=table, last=rows - 1)

    def fill_statement(self, table: str, rows: int) -> str:
        """The untimed pre-fill of update and delete cases."""
        return self.fill.format(t=table, last=rows - 1, numbers=digits_table(rows - 1))


    def __post_init__(self) -> None:
        if not self.limit_insert:
            object.__setattr__(self, "limit_insert", self.fill)


def digits_table(last: int) -> str:
    """A derived table `g(n)` of 0..last from cross-joined digits: plain SQL that any
    MySQL or MariaDB runs (no SEQUENCE engine, no recursion limit)."""
    digits = "(" + " UNION ALL ".join(f"SELECT {d} AS d" for d in range(10)) + ")"
    width = len(str(max(last, 0)))
    number = " + ".join(f"{10 ** i} * d{i}.d" for i in range(width))
    joined = " CROSS JOIN ".join(f"{digits} AS d{i}" for i in range(width))
    return f"(SELECT {number} AS n FROM {joined}) AS g WHERE g.n <= {last}"


@lru_cache(maxsize=64)
def _values_statement(sql: BatchSql, op: str, table: str, rows: int) -> str:
    if op == "insert":
        return f"INSERT INTO {table} {COLUMNS} VALUES " + ", ".join(["(?, ?)"] * rows)
    if op == "update":
        column, value = sql.values_key
        return sql.update_values.format(t=table, rows=", ".join(["(?, ?)"] * rows),
                                        match=sql.match(column.format(t=table), value))
    if op == "delete":
        return f"DELETE FROM {table} WHERE {sql.key_in('f_key', rows)}"
    raise ValueError(f"unknown batch operation {op!r}")


POSTGRESQL = BatchSql(
    kind="postgresql",
    create="CREATE TABLE {t} (f_key text PRIMARY KEY, f_value numeric)",
    update_values=("UPDATE {t} AS t SET f_value = d.v FROM (VALUES {rows}) AS d (v, k) "
                   "WHERE {match}"),
    fill=("INSERT INTO {t} (f_key, f_value) "
          "SELECT g::text, g FROM generate_series(0, {last}) AS g"),
    limit_update=("UPDATE {t} AS t SET f_value = g + 1 FROM generate_series(0, {last}) AS g "
                  "WHERE t.f_key = g::text"),
    limit_delete=("DELETE FROM {t} AS t USING generate_series(0, {last}) AS g "
                  "WHERE t.f_key = g::text"),
    analyze="ANALYZE {t}",
    update_values_form="UPDATE ... FROM (VALUES ...) AS d WHERE t.f_key = d.k",
    server_side_form=("one statement over generate_series(0, N-1): INSERT ... SELECT, "
                      "UPDATE ... FROM, DELETE ... USING, joined on the key"),
    loader="psql-copy",
)

MYSQL = BatchSql(
    kind="mysql",
    # a primary key needs a bounded type in MySQL/MariaDB: VARCHAR, not TEXT
    create=("CREATE TABLE {t} (f_key VARCHAR(32) NOT NULL PRIMARY KEY, "
            "f_value DECIMAL(30, 0)) ENGINE=InnoDB"),
    # MySQL's usual multi-row update by key: every key exists, so each row updates
    update_values=("INSERT INTO {t} (f_value, f_key) VALUES {rows} "
                   "ON DUPLICATE KEY UPDATE f_value = VALUES(f_value)"),
    # the pre-fill in plain SQL, so that update/delete work on MySQL too
    fill="INSERT INTO {t} (f_key, f_value) SELECT CAST(g.n AS CHAR), g.n FROM {numbers}",
    # the limit rows: MariaDB's SEQUENCE engine, seq_0_to_N a virtual table of 0..N
    limit_insert=("INSERT INTO {t} (f_key, f_value) "
                  "SELECT CAST(seq AS CHAR), seq FROM seq_0_to_{last}"),
    limit_update=("UPDATE {t} AS t JOIN seq_0_to_{last} AS s ON t.f_key = CAST(s.seq AS CHAR) "
                  "SET t.f_value = s.seq + 1"),
    limit_delete=("DELETE t FROM {t} AS t JOIN seq_0_to_{last} AS s "
                  "ON t.f_key = CAST(s.seq AS CHAR)"),
    analyze="ANALYZE TABLE {t}",
    analyze_returns_rows=True,
    update_values_form="INSERT ... VALUES ... ON DUPLICATE KEY UPDATE",
    key_number="DECIMAL(30, 0)",
    key_text="CHAR",
    server_side_form=("one statement over MariaDB's seq_0_to_N sequence table: INSERT ... "
                      "SELECT, UPDATE ... JOIN, DELETE ... JOIN on the key"),
    loader="load-data",
)

_SQLITE_SEQ = "WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < {last}) "

SQLITE = BatchSql(
    kind="sqlite",
    create="CREATE TABLE {t} (f_key TEXT PRIMARY KEY, f_value NUMERIC)",
    # VALUES columns are named column1, column2 in SQLite; UPDATE FROM needs 3.33+
    update_values=("UPDATE {t} SET f_value = d.column1 FROM (VALUES {rows}) AS d "
                   "WHERE {match}"),
    values_key=("{t}.f_key", "d.column2"),
    fill=_SQLITE_SEQ + "INSERT INTO {t} (f_key, f_value) SELECT CAST(i AS TEXT), i FROM s",
    limit_update=_SQLITE_SEQ + ("UPDATE {t} SET f_value = s.i + 1 FROM s "
                                "WHERE {t}.f_key = CAST(s.i AS TEXT)"),
    limit_delete=_SQLITE_SEQ + "DELETE FROM {t} WHERE f_key IN (SELECT CAST(i AS TEXT) FROM s)",
    analyze="ANALYZE {t}",
    update_values_form="UPDATE ... FROM (VALUES ...) AS d WHERE f_key = d.column2",
    key_number="INTEGER",
    server_side_form=("one statement over a recursive CTE 0..N-1: INSERT ... SELECT, "
                      "UPDATE ... FROM, DELETE ... WHERE f_key IN"),
)

BATCH_SQL = {s.kind: s for s in (POSTGRESQL, MYSQL, SQLITE)}


def batch_sql(kind: str) -> BatchSql:
    return BATCH_SQL[kind]


# --- PostgreSQL forms of the array and COPY APIs (psycopg, asyncpg) -----------------

#: one statement for all rows, the rows passed as arrays
PG_UNNEST = {
    "insert": "INSERT INTO {t} (f_key, f_value) SELECT * FROM unnest(?::text[], ?::numeric[])",
    "update": "UPDATE {t} AS t SET f_value = d.v FROM unnest(?::text[], ?::numeric[]) "
              "AS d (k, v) WHERE {match}",
    "delete": "DELETE FROM {t} WHERE {key} = ANY({keys})",
}

#: update/delete through COPY: the rows are copied into a temporary table (private to
#: the session, dropped at COMMIT, so it can clash with no one's table), then joined
PG_TMP_TABLE = "dbstand_batch_rows"
PG_CREATE_TMP = (f"CREATE TEMPORARY TABLE {PG_TMP_TABLE} (f_value numeric, f_key text) "
                 "ON COMMIT DROP")
PG_COPY_JOIN = {
    "update": f"UPDATE {{t}} AS t SET f_value = d.f_value FROM {PG_TMP_TABLE} AS d "
              "WHERE {match}",
    "delete": f"DELETE FROM {{t}} AS t USING {PG_TMP_TABLE} AS d WHERE {{match}}",
}
PG_COPY_COLUMNS = {"update": ["f_value", "f_key"], "delete": ["f_key"]}


def pg_unnest(sql: BatchSql, op: str, table: str) -> str:
    """The unnest form of `op` under the SQL's key predicate (`?` placeholders)."""
    keys = "?::text[]" if sql.key_predicate == "index" else \
        f"CAST(?::text[] AS {sql.key_number}[])"
    return PG_UNNEST[op].format(t=table, match=sql.match("t.f_key", "d.k"),
                                key=sql.key_column("f_key"), keys=keys)


def pg_copy_join(sql: BatchSql, op: str, table: str) -> str:
    """The join after COPY into the temporary table, under the key predicate."""
    return PG_COPY_JOIN[op].format(t=table, match=sql.match("t.f_key", "d.f_key"))
