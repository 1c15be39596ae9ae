"""pgbench's built-in scripts and their tables (pgbench's documentation, "Default
Transaction Script" and "-i"), written out as scripts dbstand runs like any other.

`--init --scale N` makes the four tables under their own names (the scripts need
them): N branches, 10·N tellers, 100 000·N accounts, all balances 0, an empty history.
Every transaction of tpcb-like adds the same delta to one account, teller and branch
and writes it to the history, so afterwards each balance table sums to the sum of the
history's deltas (`balance_check`).
"""

from __future__ import annotations

from dbstand.sql.dialects import Dialect

_DRAW = """\\set aid random(1, 100000 * :scale)
\\set bid random(1, 1 * :scale)
\\set tid random(1, 10 * :scale)
\\set delta random(-5000, 5000)
"""

BUILTINS: dict[str, str] = {
    "tpcb-like": _DRAW + """BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime)
  VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
""",
    "simple-update": _DRAW + """BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime)
  VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
""",
    "select-only": """\\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
""",
}

#: the tables, in the order they are filled; rows per unit of scale
TABLES: dict[str, int] = {"pgbench_branches": 1, "pgbench_tellers": 10,
                          "pgbench_accounts": 100_000, "pgbench_history": 0}
#: which balance column each table keeps (the history keeps the deltas)
BALANCES = {"pgbench_accounts": "abalance", "pgbench_tellers": "tbalance",
            "pgbench_branches": "bbalance", "pgbench_history": "delta"}
#: the tables each built-in's transactions change in step with the history
CHECKED = {"tpcb-like": ("pgbench_accounts", "pgbench_tellers", "pgbench_branches"),
           "simple-update": ("pgbench_accounts",)}


def ddl(table: str, dialect: Dialect) -> str:
    """CREATE TABLE for `table` in a SQL `dialect` (primary keys with the table: no
    database here loads faster without them at these sizes)."""
    cols = {
        "pgbench_branches": "bid INTEGER NOT NULL PRIMARY KEY, bbalance INTEGER, "
                            "filler CHAR(88)",
        "pgbench_tellers": "tid INTEGER NOT NULL PRIMARY KEY, bid INTEGER, "
                           "tbalance INTEGER, filler CHAR(84)",
        "pgbench_accounts": "aid INTEGER NOT NULL PRIMARY KEY, bid INTEGER, "
                            "abalance INTEGER, filler CHAR(84)",
        "pgbench_history": f"tid INTEGER, bid INTEGER, aid INTEGER, delta INTEGER, "
                           f"mtime {dialect.timestamp}, filler CHAR(22)",
    }[table]
    return f"CREATE TABLE {table} ({cols}){dialect.table_options}"


def fill_sql(table: str, scale: int, dialect: Dialect) -> str | None:
    """One INSERT ... SELECT generating `table`'s rows inside the server (what pgbench's
    `-I G` does): nothing crosses the wire, so the load runs at the database's own
    speed. None for the history, which starts empty."""
    per_branch = TABLES[table]
    if not per_branch:
        return None
    col = {"pgbench_branches": "bid, bbalance", "pgbench_tellers": "tid, bid, tbalance",
           "pgbench_accounts": "aid, bid, abalance"}[table]
    i = dialect.series_name
    values = f"{i}, 0" if table == "pgbench_branches" else \
        f"{i}, ({i} - 1) {dialect.int_div} {per_branch} + 1, 0"
    return dialect.insert_series.format(t=table, columns=col, values=values,
                                        n=per_branch * scale)
