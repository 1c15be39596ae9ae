"""sql/bulk.py on real servers: every value arrives as it was sent (tabs, newlines,
backslashes, NULL, non-ASCII), the rows are counted, statistics are gathered after."""

from __future__ import annotations

import sqlite3
from typing import Any

from dbstand.drivers.psycopg import connect as pg_connect
from dbstand.drivers.pymysql import connect as my_connect
from dbstand.sql import bulk
from dbstand.targets.managed import ServerRecord
from dbstand.targets.url import parse_target_url

TABLE = "dbstand_bulk_test"
ODD = ["tab\there", "line\nbreak", "back\\slash", "cr\rlf", None, "ünïcödé ✓", r"\N", ""]
ROWS = [(i, ODD[i % len(ODD)] if i < 40 else f"tuple_{i}") for i in range(1, 2_001)]


def loaded_back(cur: Any) -> list[tuple[int, str | None]]:
    cur.execute(f"SELECT id, name FROM {TABLE} ORDER BY id")
    return [(int(a), b) for a, b in cur.fetchall()]


def test_postgresql_copy(pg: ServerRecord) -> None:
    target = pg.target()
    with pg_connect(target) as conn:
        conn.execute(f"DROP TABLE IF EXISTS {TABLE}")
        conn.execute(f"CREATE TABLE {TABLE} (id bigint PRIMARY KEY, name text)")
    try:
        loaded = bulk.load(target, TABLE, ("id", "name"), iter(ROWS), total=len(ROWS))
        assert loaded is not None and loaded.rows == len(ROWS)
        assert loaded.path.startswith("COPY") and loaded.rows_per_s > 0
        with pg_connect(target) as conn, conn.cursor() as cur:
            assert loaded_back(cur) == ROWS
            cur.execute("SELECT last_analyze FROM pg_stat_user_tables WHERE relname = %s",
                        (TABLE,))
            assert cur.fetchone()[0] is not None
    finally:
        with pg_connect(target) as conn:
            conn.execute(f"DROP TABLE IF EXISTS {TABLE}")


def test_mariadb_load_data(mariadb: ServerRecord) -> None:
    target = mariadb.target()
    conn = my_connect(target)
    try:
        with conn.cursor() as cur:
            cur.execute(f"DROP TABLE IF EXISTS {TABLE}")
            cur.execute(f"CREATE TABLE {TABLE} (id bigint PRIMARY KEY, name text) "
                        "CHARACTER SET utf8mb4")
        progress: list[int] = []
        loaded = bulk.load(target, TABLE, ("id", "name"), ROWS,
                           progress=lambda done, _total: progress.append(done))
        assert loaded is not None and loaded.rows == len(ROWS)
        assert loaded.path.startswith("LOAD DATA") and progress[-1] == len(ROWS)
        with conn.cursor() as cur:
            assert loaded_back(cur) == ROWS
    finally:
        with conn.cursor() as cur:
            cur.execute(f"DROP TABLE IF EXISTS {TABLE}")
        conn.close()


def test_sqlite_executemany_on_the_callers_connection() -> None:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.execute(f"CREATE TABLE {TABLE} (id INTEGER PRIMARY KEY, name TEXT)")
    loaded = bulk.load(parse_target_url("sqlite://"), TABLE, ("id", "name"), ROWS,
                       connection=conn)
    assert loaded is not None and loaded.rows == len(ROWS)
    assert loaded_back(conn.cursor()) == ROWS
    # no ANALYZE on SQLite: it would leave sqlite_stat1, a table dbstand does not own
    names = {n for (n,) in conn.execute("SELECT name FROM sqlite_master")}
    assert names == {TABLE}
    # without the caller's connection there is nothing to load into
    assert bulk.load(parse_target_url("sqlite://"), TABLE, ("id", "name"), ROWS) is None
