"""SQL dialects: how each SQL database spells kv's statements and metadata queries.

Statements use `?` placeholders (see paramstyle.py). Upsert and replace use each
database's native form, named in `forms` so results can state which was measured.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Dialect:
    kind: str
    create_kv: str
    upsert: str
    replace: str
    table_exists: str
    forms: dict[str, str] = field(default_factory=dict)
    #: the native upsert and replace clauses, for code that builds them (SQLAlchemy):
    #: "on_conflict" (INSERT ... ON CONFLICT DO UPDATE), "on_duplicate_key",
    #: "or_replace" (INSERT OR REPLACE), "replace_into" (REPLACE INTO)
    upsert_clause: str = "on_conflict"
    replace_clause: str = "on_conflict"
    after_fill: str | None = None  # e.g. move a sequence past the explicit ids
    max_params: int = 999
    #: statistics gathered after a table is loaded (None: none to gather)
    analyze: str | None = "ANALYZE {t}"
    #: the query giving the ownership registry's mark ("?" is the table name)
    mark_query: str | None = None
    #: the statements creating the registry with its mark ({t} table, {columns}, {mark})
    create_registry: tuple[str, ...] = ("CREATE TABLE {t} ({columns})",)
    #: "module:function(cursor) -> dict": version and settings that matter
    facts: str | None = None
    #: "module:function" of its bulk loader (sql/bulk.py), None: the caller inserts
    bulk_loader: str | None = None
    #: the column type of a point in time, and what ends a CREATE TABLE (its engine)
    timestamp: str = "TIMESTAMP"
    table_options: str = ""
    #: integer division between two integer expressions
    int_div: str = "/"
    #: an INSERT ... SELECT of `{values}` over the integers {lo}..{hi}, named
    #: `series_name`, into {t} ({columns}): rows generated inside the server, nothing
    #: crosses the wire
    insert_series: str = ("WITH RECURSIVE s(i) AS (SELECT {lo} UNION ALL SELECT i + 1 "
                          "FROM s WHERE i < {hi}) INSERT INTO {t} ({columns}) "
                          "SELECT {values} FROM s")
    series_name: str = "i"
    #: two SQL expressions joined as text
    concat: str = "{0} || {1}"
    #: the SQL type of each column type an entity schema names (workloads/parking):
    #: id (generated primary key), ref (a reference to one), money (exact decimal),
    #: ts (a time to the second), int
    column_types: dict[str, str] = field(default_factory=dict)
    #: the character set an entity schema's CREATE TABLE names ("": the default's fine)
    table_charset: str = ""
    #: exact decimals travel as text (SQLite has no decimal type)
    decimal_as_text: bool = False
    #: kv's row statements ({t}: the table), spelled alike in every SQL database; its
    #: upsert and replace are each database's own (above)
    select: str = "SELECT id, name FROM {t} WHERE id = ?"
    insert: str = "INSERT INTO {t} (name) VALUES (?)"
    update: str = "UPDATE {t} SET name = ? WHERE id = ?"
    delete: str = "DELETE FROM {t} WHERE id = ?"

    def server_facts(self, cursor: Any) -> dict[str, Any]:
        """Version and settings that matter, through a DB-API cursor of the target."""
        if self.facts is None:
            return {}
        read: Callable[[Any], dict[str, Any]] = _load(self.facts)
        return read(cursor)

    def bulk(self) -> Callable[..., Any] | None:
        """Its bulk loader (sql/bulk.py's signature), None when it has none."""
        return None if self.bulk_loader is None else _load(self.bulk_loader)

    def statement(self, op: str, table: str) -> str:
        """kv's statement `op` (a field of that name: select ... create_kv) for `table`."""
        template: str = getattr(self, op)
        return template.format(t=table)


def _load(path: str) -> Any:
    """The attribute a "module:attr" path names (imported only when used)."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


SQLITE = Dialect(
    kind="sqlite",
    create_kv="CREATE TABLE {t} (id INTEGER PRIMARY KEY, name TEXT NOT NULL)",
    upsert=("INSERT INTO {t} (id, name) VALUES (?, ?) "
            "ON CONFLICT (id) DO UPDATE SET name = excluded.name"),
    replace="INSERT OR REPLACE INTO {t} (id, name) VALUES (?, ?)",
    table_exists="SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
    forms={"upsert": "INSERT ... ON CONFLICT (id) DO UPDATE",
           "replace": "INSERT OR REPLACE"},
    replace_clause="or_replace",
    # SQLite's ANALYZE writes sqlite_stat1, a table dbstand does not own, into the
    # user's file, and a rowid lookup uses no statistics: none gathered
    analyze=None,
    mark_query="SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?",
    # SQLite keeps a comment inside the parentheses
    create_registry=("CREATE TABLE {t} (/* {mark} */ {columns})",),
    facts="dbstand.sql.dialects:sqlite_facts",
    bulk_loader="dbstand.sql.bulk:load_sqlite",
    column_types={"id": "INTEGER PRIMARY KEY", "ref": "INTEGER", "money": "TEXT",
                  "ts": "TEXT", "int": "INTEGER"},
    decimal_as_text=True,
)

POSTGRESQL = Dialect(
    kind="postgresql",
    create_kv=("CREATE TABLE {t} (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, "
               "name TEXT NOT NULL)"),
    upsert=("INSERT INTO {t} (id, name) VALUES (?, ?) "
            "ON CONFLICT (id) DO UPDATE SET name = excluded.name"),
    replace=("INSERT INTO {t} (id, name) VALUES (?, ?) "
             "ON CONFLICT (id) DO UPDATE SET id = excluded.id, name = excluded.name"),
    table_exists=("SELECT 1 FROM information_schema.tables "
                  "WHERE table_schema = current_schema() AND table_name = ?"),
    forms={"upsert": "INSERT ... ON CONFLICT (id) DO UPDATE SET name",
           "replace": "INSERT ... ON CONFLICT (id) DO UPDATE SET every column"},
    after_fill="SELECT setval(pg_get_serial_sequence('{t}', 'id'), (SELECT max(id) FROM {t}))",
    max_params=30000,
    mark_query=("SELECT obj_description(c.oid, 'pg_class') FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = current_schema() AND c.relname = ?"),
    create_registry=("CREATE TABLE {t} ({columns})", "COMMENT ON TABLE {t} IS '{mark}'"),
    facts="dbstand.targets.postgresql.managed:server_facts",
    bulk_loader="dbstand.sql.bulk:load_postgresql",
    column_types={"id": "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
                  "ref": "BIGINT", "money": "NUMERIC(16,6)", "ts": "TIMESTAMP(0)",
                  "int": "INTEGER"},
    insert_series=("INSERT INTO {t} ({columns}) SELECT {values} "
                   "FROM generate_series({lo}, {hi}) i"),
)

MYSQL = Dialect(
    kind="mysql",
    create_kv=("CREATE TABLE {t} (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, "
               "name VARCHAR(64) NOT NULL) ENGINE=InnoDB"),
    upsert=("INSERT INTO {t} (id, name) VALUES (?, ?) "
            "ON DUPLICATE KEY UPDATE name = VALUES(name)"),
    replace="REPLACE INTO {t} (id, name) VALUES (?, ?)",
    table_exists=("SELECT 1 FROM information_schema.tables "
                  "WHERE table_schema = DATABASE() AND table_name = ?"),
    forms={"upsert": "INSERT ... ON DUPLICATE KEY UPDATE", "replace": "REPLACE INTO"},
    upsert_clause="on_duplicate_key", replace_clause="replace_into",
    max_params=30000,
    analyze="ANALYZE TABLE {t}",
    mark_query=("SELECT table_comment FROM information_schema.tables "
                "WHERE table_schema = DATABASE() AND table_name = ?"),
    create_registry=("CREATE TABLE {t} ({columns}) COMMENT = '{mark}'",),
    facts="dbstand.targets.mysql.managed:server_facts",
    bulk_loader="dbstand.sql.bulk:load_mysql",
    timestamp="DATETIME", table_options=" ENGINE=InnoDB", int_div="DIV",
    # MariaDB's Sequence engine
    insert_series="INSERT INTO {t} ({columns}) SELECT {values} FROM seq_{lo}_to_{hi}",
    series_name="seq", concat="CONCAT({0}, {1})",
    column_types={"id": "BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY", "ref": "BIGINT",
                  "money": "DECIMAL(16,6)", "ts": "DATETIME", "int": "INT"},
    table_charset=" DEFAULT CHARSET=utf8mb4",
)

DIALECTS = {d.kind: d for d in (SQLITE, POSTGRESQL, MYSQL)}


def dialect_for(kind: str) -> Dialect:
    """The SQL dialect of a target kind (its descriptor's `dialect`)."""
    from dbstand.targets.kinds import get_kind

    return DIALECTS[get_kind(kind).dialect or kind]


def server_facts(kind: str, cursor: Any) -> dict[str, Any]:
    """Version and settings that matter, through a DB-API cursor of the target."""
    return dialect_for(kind).server_facts(cursor)


def sqlite_facts(cursor: Any) -> dict[str, Any]:
    import sqlite3

    facts: dict[str, Any] = {"version": sqlite3.sqlite_version}
    for pragma in ("journal_mode", "synchronous", "cache_size", "page_size"):
        cursor.execute(f"PRAGMA {pragma}")
        facts[pragma] = cursor.fetchone()[0]
    return facts
