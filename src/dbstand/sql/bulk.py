"""Bulk loading of the tables dbstand prepares (untimed data, at the database's speed).

One loader per SQL dialect (its `bulk_loader` in sql/dialects.py), each the fastest
path that database offers a client: PostgreSQL's
`COPY ... FROM STDIN` (psycopg 3, rows encoded by its C implementation), MariaDB's
`LOAD DATA LOCAL INFILE` (PyMySQL, from a temporary tab-separated file), SQLite's
`executemany` in one transaction (on the caller's connection: an in-memory database
exists only there). Tarantool and MongoDB-wire servers load through their own clients'
bulk calls (the kv adapter's server-side Lua chunks; docquery's `insert_many`).

What is loaded is the same table as a row-by-row INSERT would make: the caller creates
it (logged, with its indexes) through its ownership registry first; after the load the
loader gathers statistics (ANALYZE; not on SQLite, see sql/dialects.py) so plans do
not depend on how rows arrived. Every loader reports rows, seconds and its path; long
loads call `progress(done, total)`.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any

from dbstand.sql.dialects import dialect_for
from dbstand.targets.url import TargetURL

#: rows per chunk between progress calls (and per executemany on SQLite)
CHUNK = 100_000

Progress = Callable[[int, int | None], None]


@dataclass(frozen=True)
class Loaded:
    """What a load did: `rows` in `seconds` (statistics included) through `path`."""

    table: str
    rows: int
    seconds: float
    path: str

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else float("inf")

    def record(self) -> dict[str, Any]:
        return {"table": self.table, "rows": self.rows, "seconds": round(self.seconds, 3),
                "rows_per_s": round(self.rows_per_s), "path": self.path}

    def describe(self) -> str:
        return (f"{self.table}: {self.rows:,} rows in {self.seconds:.2f} s "
                f"({self.rows_per_s:,.0f} rows/s, {self.path})")


def analyze(cur: Any, kind: str, table: str) -> None:
    """Gather the table's statistics after a load, as the kind's dialect says."""
    statement = dialect_for(kind).analyze
    if statement:
        cur.execute(statement.format(t=table))
        if cur.description is not None:
            cur.fetchall()


def _chunks(rows: Iterable[Sequence[Any]]) -> Iterator[list[Sequence[Any]]]:
    it = iter(rows)
    while chunk := list(islice(it, CHUNK)):
        yield chunk


def _tsv(value: Any) -> str:
    """One field in the text format COPY and LOAD DATA share (\\N is NULL)."""
    if value is None:
        return "\\N"
    text = str(value)
    if any(c in text for c in "\\\t\n\r"):
        text = (text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
                .replace("\r", "\\r"))
    return text


def _text(chunk: list[Sequence[Any]], columns: int) -> str:
    """Rows as tab-separated text lines. The fast way (str of each value) is kept when
    nothing in it needs escaping: exactly one tab between fields and one newline per row,
    no backslash, carriage return or NULL; otherwise each field is escaped."""
    text = "\n".join(["\t".join(map(str, row)) for row in chunk]) + "\n"
    if (text.count("\t") == len(chunk) * (columns - 1) and text.count("\n") == len(chunk)
            and "\\" not in text and "\r" not in text
            and not any(None in row for row in chunk)):
        return text
    return "".join("\t".join(map(_tsv, row)) + "\n" for row in chunk)


def load_postgresql(target: TargetURL, table: str, columns: Sequence[str],
                    rows: Iterable[Sequence[Any]], *, connection: Any = None,
                    total: int | None = None,
                    progress: Progress | None = None) -> Loaded | None:
    """COPY FROM STDIN in one transaction on a connection of its own, then ANALYZE;
    None without psycopg 3 on this machine."""
    if not _has("psycopg"):
        return None
    from dbstand.drivers.psycopg import connect

    start = time.perf_counter()
    done = 0
    with connect(target, autocommit=True) as conn:
        with conn.transaction(), conn.cursor() as cur, \
                cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for chunk in _chunks(rows):
                for row in chunk:
                    copy.write_row(row)
                done += len(chunk)
                if progress:
                    progress(done, total)
        analyze(conn.cursor(), target.kind, table)
    return Loaded(table, done, time.perf_counter() - start, "COPY FROM STDIN (psycopg)")


def load_mysql(target: TargetURL, table: str, columns: Sequence[str],
               rows: Iterable[Sequence[Any]], *, connection: Any = None,
               total: int | None = None, progress: Progress | None = None) -> Loaded | None:
    """LOAD DATA LOCAL INFILE from a temporary file (PyMySQL), then ANALYZE TABLE; None
    (no row read) without PyMySQL or when the server refuses local files (local_infile
    off)."""
    if not _has("pymysql"):
        return None
    from dbstand.drivers.pymysql import connect

    start = time.perf_counter()
    done = 0
    conn = connect(target, autocommit=False, local_infile=True)
    path = ""
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT @@GLOBAL.local_infile")
            if not int(cur.fetchone()[0]):
                return None
            fd, path = tempfile.mkstemp(prefix="dbstand-load-", suffix=".tsv")
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
                for chunk in _chunks(rows):
                    out.write(_text(chunk, len(columns)))
                    done += len(chunk)
                    if progress:
                        progress(done, total)
            cur.execute(f"LOAD DATA LOCAL INFILE %s INTO TABLE {table} "
                        "CHARACTER SET utf8mb4 FIELDS TERMINATED BY '\\t' "
                        "ESCAPED BY '\\\\' LINES TERMINATED BY '\\n' "
                        f"({', '.join(columns)})", (path,))
            conn.commit()
            analyze(cur, target.kind, table)
    finally:
        conn.close()
        if path:
            with contextlib.suppress(OSError):
                os.unlink(path)
    return Loaded(table, done, time.perf_counter() - start, "LOAD DATA LOCAL INFILE (PyMySQL)")


def load_sqlite(target: TargetURL, table: str, columns: Sequence[str],
                rows: Iterable[Sequence[Any]], *, connection: Any = None,
                total: int | None = None, progress: Progress | None = None) -> Loaded | None:
    """executemany in one transaction on the caller's sqlite3 `connection` (an in-memory
    database exists only there), then ANALYZE; None without that connection."""
    if connection is None:
        return None
    conn = connection
    start = time.perf_counter()
    done = 0
    marks = ", ".join("?" * len(columns))
    sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})"
    cur = conn.cursor()
    cur.execute("BEGIN")
    try:
        for chunk in _chunks(rows):
            cur.executemany(sql, chunk)
            done += len(chunk)
            if progress:
                progress(done, total)
        cur.execute("COMMIT")
    except BaseException:
        cur.execute("ROLLBACK")
        raise
    analyze(cur, target.kind, table)
    return Loaded(table, done, time.perf_counter() - start, "executemany in one transaction")


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def load(target: TargetURL, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]],
         *, connection: Any = None, total: int | None = None,
         progress: Progress | None = None) -> Loaded | None:
    """Load `rows` into `table` by the bulk path of the target's dialect, or None when
    it has none or this machine lacks that path's driver (the caller then inserts its
    own way). An embedded kind (SQLite) loads on the caller's `connection`; the server
    kinds open their own and ignore it."""
    loader = dialect_for(target.kind).bulk() if target.dialect else None
    if loader is None:
        return None
    loaded: Loaded | None = loader(target, table, columns, rows, connection=connection,
                                   total=total, progress=progress)
    return loaded
