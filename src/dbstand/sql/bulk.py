"""Bulk loading of the tables dbstand prepares (untimed data, at the database's speed).

One loader per SQL dialect (its `bulk_loader` in sql/dialects.py), each the fastest
path that database offers a client: PostgreSQL's `COPY ... FROM STDIN` in one
transaction (psycopg 3; FREEZE into an empty table), MariaDB's `INSERT ... SELECT`
over its series for keyed rows and `LOAD DATA LOCAL INFILE` (PyMySQL, from a
temporary tab-separated file) for any others, SQLite's
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
import re
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice, repeat
from typing import Any

from dbstand.sql.dialects import Dialect, dialect_for
from dbstand.targets.url import TargetURL

#: rows per chunk between progress calls (and per executemany on SQLite)
CHUNK = 100_000
#: keys per INSERT ... SELECT when MariaDB generates keyed rows (progress between):
#: InnoDB builds an empty table's index in bulk at the end of the first statement
#: only; each later one cost more per row (2,000,000 kv rows on a 2-vCPU VM, server
#: CPU: 2.1-2.5 s in one statement, 2.8-3.3 s in two, 3.3-5.7 s in eight), so a load
#: of up to this many rows (a few seconds) is one statement, a longer one reports
#: progress every part
SERIES_PART = 5_000_000
#: PostgreSQL's maintenance_work_mem while it builds a loaded table's keys
KEY_BUILD_MEMORY = "256MB"

Progress = Callable[[int, int | None], None]

_PLAIN_TEXT = re.compile(r"[A-Za-z0-9_ .:-]*")


@dataclass(frozen=True)
class KeyedRows:
    """The rows of keys 1..`count` when each is a pure function of its key: per column
    the key itself (None) or a fixed text followed by the key ("tuple_" makes
    "tuple_17" of key 17). MariaDB builds them itself over its series (the dialect's
    `insert_series`: no row crosses the wire), COPY reads them as text made column-wise
    (`text`), any other path iterates them as tuples: the same values."""

    count: int
    texts: tuple[str | None, ...]

    def __post_init__(self) -> None:
        bad = [t for t in self.texts if t is not None and not _PLAIN_TEXT.fullmatch(t)]
        if self.count < 0 or bad:  # a plain text needs no quoting in any dialect
            raise ValueError(f"keyed rows need count >= 0 and plain texts, not {bad}")

    def row(self, key: int) -> tuple[Any, ...]:
        return tuple(key if t is None else f"{t}{key}" for t in self.texts)

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        keys = range(1, self.count + 1)
        return zip(*(keys if t is None else map(t.__add__, map(str, keys))
                     for t in self.texts), strict=True)

    def text(self, lo: int, hi: int) -> str:
        """Rows lo..hi as the tab-separated lines COPY and LOAD DATA read (plain texts
        need no escaping), built column-wise: about twice as fast as joining tuples."""
        keys = list(map(str, range(lo, hi + 1)))
        fields: list[Any] = []
        for t in self.texts:
            if fields:
                fields.append(repeat("\t"))
            fields += [keys] if t is None else [repeat(t), keys]
        return "".join(map("".join, zip(*fields, repeat("\n"))))

    def values(self, dialect: Dialect) -> str:
        """The columns as SQL over the dialect's series column."""
        key = dialect.series_name
        return ", ".join(key if t is None else dialect.concat.format(f"'{t}'", key)
                         for t in self.texts)


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


def _text_chunks(rows: Iterable[Sequence[Any]], columns: int) -> Iterator[tuple[int, str]]:
    """(row count, tab-separated text) per CHUNK rows: keyed rows made as text directly."""
    if isinstance(rows, KeyedRows):
        for lo in range(1, rows.count + 1, CHUNK):
            hi = min(lo + CHUNK - 1, rows.count)
            yield hi - lo + 1, rows.text(lo, hi)
        return
    for chunk in _chunks(rows):
        yield len(chunk), _text(chunk, columns)


def _take_empty(cur: Any, table: str) -> bool:
    """Inside the caller's transaction: lock `table` and, when it is empty and no other
    table's key references it, TRUNCATE it (a new file in this transaction: COPY may
    then FREEZE its rows, and with wal_level=minimal neither the rows nor the keys
    built after them are written to the WAL; the table stays logged for every change
    after the commit). False for a table that holds rows or is referenced: it is loaded
    as it is."""
    cur.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
    cur.execute(f"SELECT EXISTS (SELECT 1 FROM {table}) OR EXISTS (SELECT 1 FROM "
                "pg_constraint WHERE confrelid = %s::regclass)", (table,))
    if cur.fetchone()[0]:
        return False
    cur.execute(f"TRUNCATE {table}")
    return True


@contextlib.contextmanager
def _keys_after_load(cur: Any, table: str) -> Iterator[None]:
    """PostgreSQL builds an index over loaded rows (one sort) faster than it maintains
    it row by row: an empty table's key constraints and indexes are dropped for the
    load and made again after it, under the same names with the same definitions, in
    the caller's transaction (a failed load rolls the drop back with the rows)."""
    cur.execute("SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint "
                "WHERE conrelid = %s::regclass AND contype IN ('p', 'u') ORDER BY oid",
                (table,))
    keys = cur.fetchall()
    cur.execute("SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid) "
                "FROM pg_index i WHERE i.indrelid = %s::regclass AND NOT EXISTS "
                "(SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid) "
                "ORDER BY i.indexrelid", (table,))
    indexes = cur.fetchall()
    for name, _ in keys:
        cur.execute(f'ALTER TABLE {table} DROP CONSTRAINT "{name}"')
    for name, _ in indexes:
        cur.execute(f"DROP INDEX {name}")
    yield
    # built in memory (the default 64 MB sorts a 2,000,000-row key on disk)
    cur.execute(f"SET LOCAL maintenance_work_mem = '{KEY_BUILD_MEMORY}'")
    for name, definition in keys:
        cur.execute(f'ALTER TABLE {table} ADD CONSTRAINT "{name}" {definition}')
    for _, definition in indexes:
        cur.execute(definition)


def load_postgresql(target: TargetURL, table: str, columns: Sequence[str],
                    rows: Iterable[Sequence[Any]], *, connection: Any = None,
                    total: int | None = None,
                    progress: Progress | None = None) -> Loaded | None:
    """COPY FROM STDIN in one transaction on a connection of its own (a failed load
    leaves the table as it was), then ANALYZE; None without psycopg 3 on this machine.
    An empty table is truncated first and its keys made after the load (_take_empty,
    _keys_after_load): COPY FREEZE then writes its rows frozen and all-visible, as a
    VACUUM FREEZE would leave them (autovacuum does that to any table loaded once;
    done here, it cannot start during a measurement). COPY beats a server-side
    INSERT ... SELECT over generate_series: it writes whole pages per call (2,000,000
    kv rows on a 2-vCPU VM, wal_level=minimal: 1.0 s against 2.2 s, one connection
    each), and the text is made by this client beside the server's work
    (KeyedRows.text)."""
    if not _has("psycopg"):
        return None
    from dbstand.drivers.psycopg import connect

    start = time.perf_counter()
    total = len(rows) if isinstance(rows, KeyedRows) else total
    done = 0
    with connect(target, autocommit=True) as conn, conn.cursor() as cur:
        with conn.transaction():
            fresh = _take_empty(cur, table)
            with _keys_after_load(cur, table) if fresh else contextlib.nullcontext(), \
                    cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN"
                             f"{' (FREEZE)' if fresh else ''}") as copy:
                for count, text in _text_chunks(rows, len(columns)):
                    copy.write(text)
                    done += count
                    if progress:
                        progress(done, total)
        analyze(cur, target.kind, table)
    path = ("COPY FREEZE FROM STDIN in one transaction, keys built after (psycopg)" if fresh
            else "COPY FROM STDIN in one transaction (psycopg)")
    return Loaded(table, done, time.perf_counter() - start, path)


def load_mysql(target: TargetURL, table: str, columns: Sequence[str],
               rows: Iterable[Sequence[Any]], *, connection: Any = None,
               total: int | None = None, progress: Progress | None = None) -> Loaded | None:
    """Keyed rows generated by MariaDB itself (_generate_in_bulk), any other rows by
    LOAD DATA LOCAL INFILE from a temporary file (PyMySQL), in one transaction; then
    ANALYZE TABLE. None (no row read) without PyMySQL or when the server refuses local
    files (local_infile off)."""
    if not _has("pymysql"):
        return None
    from dbstand.drivers.pymysql import connect

    start = time.perf_counter()
    done = 0
    conn = connect(target, autocommit=False, local_infile=True)
    path = ""
    try:
        with conn.cursor() as cur:
            if isinstance(rows, KeyedRows) and _has_sequences(cur):
                with _bulk_insert_path(cur, table):
                    done = _generate_in_bulk(cur, table, columns, rows, progress)
                    conn.commit()
                analyze(cur, target.kind, table)
                return Loaded(table, done, time.perf_counter() - start,
                              "INSERT ... SELECT FROM seq_1_to_N in one transaction")
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


def _generate_in_bulk(cur: Any, table: str, columns: Sequence[str], keyed: KeyedRows,
                      progress: Progress | None) -> int:
    """MariaDB: keyed rows generated by the server in the caller's transaction, one
    INSERT ... SELECT over seq_lo_to_hi per SERIES_PART keys, progress between. Into
    an empty table (_bulk_insert_path) InnoDB takes its bulk insert path."""
    dialect = dialect_for("mysql")
    values, cols = keyed.values(dialect), ", ".join(columns)
    done = 0
    for lo in range(1, keyed.count + 1, SERIES_PART):
        hi = min(lo + SERIES_PART - 1, keyed.count)
        cur.execute(dialect.insert_series.format(t=table, columns=cols, values=values,
                                                 lo=lo, hi=hi))
        done += hi - lo + 1
        if progress:
            progress(done, keyed.count)
    return done


_AUTO_RECALC = re.compile(r"stats_auto_recalc=(\w+)", re.IGNORECASE)
#: ER_TABLEACCESS_DENIED_ERROR: the account may not ALTER the table
_NO_ALTER = 1142


@contextlib.contextmanager
def _bulk_insert_path(cur: Any, table: str) -> Iterator[None]:
    """MariaDB: around a load into `table` in one transaction (the caller commits it
    inside). Into an empty table with unique and foreign key checks off (this session
    only, and only there: keyed rows are distinct by construction), InnoDB 10.6+ takes
    its bulk insert path: one undo record for the table instead of one per row, index
    pages built from sorted runs. The table's automatic statistics are off for the
    load and put back after it (the table's own option, kept as it was: a statement
    on the table's options only, no rebuild; the caller gathers statistics after):
    with them on, MariaDB 10.11's statistics thread spent as much CPU as the load
    itself (perf: a timer task acquiring and releasing the table's metadata lock
    over and over), a second core taken for the whole load on a 2-vCPU VM.
    ALTER TABLE commits implicitly: it runs before the load's transaction and after
    its commit; a failed load is rolled back before the option is put back. An
    account that may not ALTER the table loads it with the option as it is.

    This is MariaDB's own floor for kv's rows (10.11, a 2-vCPU VM, issue 29.2): the
    bare INSERT ... SELECT of 2,000,000 rows into an empty table, statement and
    settings alone, took 2.6-4.0 s (500k-780k rows/s), as many seconds of server CPU
    as of wall time, 99% of it on the statement's one thread (perf -e cpu-clock):
    about half per row (the SQL layer's fill_record and CONCAT about 12%, ha_write_row
    into InnoDB's sort buffers about 30%), the other half at the statement's end
    (select_insert::send_eof: the sorted runs merged, the index pages built). The
    server's build settings do not move it: innodb_sort_buffer_size 64M instead of
    1M (the rows sorted in 64 MB runs, not 1 MB ones) took 2.8-3.3 s, a 1G redo log
    instead of 96M 2.8-4.0 s, both 2.6-2.9 s, beside 2.6-3.0 s as configured, in the
    same minutes; CONCAT('tuple_', CAST(seq AS CHAR)) was no faster (3.2-4.1 s), and
    without the bulk insert path (unique checks on) it took 4.6-6.9 s. The bulk
    insert locks the table, so a second connection's rows wait for its commit (no
    parallel load), and LOAD DATA of the same rows took about twice its server CPU
    (bench/data_load: 7.7 s against 4.0 s)."""
    cur.execute(f"SELECT EXISTS (SELECT 1 FROM {table})")
    if cur.fetchone()[0]:
        yield
        return
    cur.execute("SELECT create_options FROM information_schema.tables "
                "WHERE table_schema = DATABASE() AND table_name = %s", (table,))
    import pymysql

    found = _AUTO_RECALC.search(str((cur.fetchone() or ("",))[0] or ""))
    restore = found.group(1) if found else "DEFAULT"
    if restore != "0":
        try:
            cur.execute(f"ALTER TABLE {table} STATS_AUTO_RECALC = 0")
        except pymysql.err.MySQLError as exc:
            if exc.args[0] != _NO_ALTER:
                raise
            restore = "0"  # an account without ALTER: loaded as the table is, slower
    cur.execute("SET SESSION unique_checks = 0, foreign_key_checks = 0")
    loaded = False
    try:
        yield
        loaded = True
    finally:
        # after a failure, the load's own error is the one to see
        with contextlib.nullcontext() if loaded else contextlib.suppress(pymysql.err.Error):
            if not loaded:
                cur.execute("ROLLBACK")  # before the ALTER below would commit the rows
            cur.execute("SET SESSION unique_checks = 1, foreign_key_checks = 1")
            if restore != "0":
                cur.execute(f"ALTER TABLE {table} STATS_AUTO_RECALC = {restore}")


def _has_sequences(cur: Any) -> bool:
    """Whether the server has MariaDB's Sequence engine (seq_1_to_N tables); MySQL has
    none, and the file path serves it."""
    import pymysql

    try:
        cur.execute("SELECT count(*) FROM seq_1_to_2")
    except pymysql.err.ProgrammingError:  # no such table
        return False
    return int(cur.fetchone()[0]) == 2


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
