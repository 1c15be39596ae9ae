"""The ownership registry is dbstand's by a mark it writes, not by its columns: a user's
table shaped like it is refused (and what it names is never dropped), registries of
older versions are read only when every row is one dbstand writes (issue 17, item 7)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from dbstand.errors import OwnershipError
from dbstand.sql.dialects import dialect_for
from dbstand.sql.ownership import Ownership
from dbstand.targets.managed import ServerRecord
from dbstand.targets.prefix import REGISTRY_MARK

from .helpers import one_error_line, run_tagged

PREFIX = "dbsfault_"
REGISTRY = f"{PREFIX}owned"
SHAPE = "(name VARCHAR(128), workload VARCHAR(64), created_at VARCHAR(40))"


@pytest.fixture(params=["sqlite", "postgresql", "mysql"])
def sql(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Any, str, str]]:
    """(autocommit DB-API connection, kind, paramstyle); the prefix's tables are
    dropped after."""
    kind = request.param
    if kind == "sqlite":
        conn: Any = sqlite3.connect(tmp_path / "o.db", isolation_level=None)
        style = "qmark"
    elif kind == "postgresql":
        from dbstand.drivers import psycopg

        record: ServerRecord = request.getfixturevalue("pg")
        conn, style = psycopg.connect(record.target()), "format"
    else:
        from dbstand.drivers import pymysql

        record = request.getfixturevalue("mariadb")
        conn, style = pymysql.connect(record.target()), "format"
    try:
        yield conn, kind, style
    finally:
        cur = conn.cursor()
        for table in ("kv", "user_data", "owned"):
            cur.execute(f"DROP TABLE IF EXISTS {PREFIX}{table}")
        conn.close()


def _own(conn: Any, kind: str, style: str) -> Ownership:
    return Ownership(conn.cursor(), dialect_for(kind), style, PREFIX)


def test_empty_table_shaped_like_the_registry_is_refused(sql: tuple[Any, str, str]) -> None:
    conn, kind, style = sql
    conn.cursor().execute(f"CREATE TABLE {REGISTRY} {SHAPE}")
    own = _own(conn, kind, style)
    with pytest.raises(OwnershipError, match="not dbstand's registry"):
        own.check(f"{PREFIX}kv")
    with pytest.raises(OwnershipError, match="not dbstand's registry"):
        own.create(f"{PREFIX}kv", f"CREATE TABLE {PREFIX}kv (id INT)", "kv")
    assert own.exists(REGISTRY) and not own.exists(f"{PREFIX}kv")


def test_what_a_foreign_registry_names_is_never_dropped(sql: tuple[Any, str, str]) -> None:
    """A user's table shaped like the registry, naming another user table: before the
    mark, dbstand took the name as its own and would drop that table."""
    conn, kind, style = sql
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {REGISTRY} {SHAPE}")
    cur.execute(f"CREATE TABLE {PREFIX}user_data (x INT)")
    cur.execute(f"INSERT INTO {REGISTRY} VALUES ('{PREFIX}user_data', 'mine', 'yesterday')")
    own = _own(conn, kind, style)
    with pytest.raises(OwnershipError):
        own.drop(f"{PREFIX}user_data")
    assert own.exists(f"{PREFIX}user_data")


def test_registry_dbstand_creates_carries_the_mark(sql: tuple[Any, str, str]) -> None:
    conn, kind, style = sql
    own = _own(conn, kind, style)
    own.create(f"{PREFIX}kv", f"CREATE TABLE {PREFIX}kv (id INT)", "kv")
    assert _own(conn, kind, style).owns(f"{PREFIX}kv")  # a new instance recognises it
    assert REGISTRY_MARK in _mark(conn, kind)
    own.drop(f"{PREFIX}kv")
    assert not own.exists(REGISTRY)  # the registry goes with its last table


def test_older_unmarked_registry_with_dbstand_rows_is_read(sql: tuple[Any, str, str]) -> None:
    conn, kind, style = sql
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE {REGISTRY} {SHAPE}")
    cur.execute(f"CREATE TABLE {PREFIX}kv (id INT)")
    cur.execute(f"INSERT INTO {REGISTRY} VALUES ('{PREFIX}kv', 'kv', '2025-01-02T03:04:05Z')")
    own = _own(conn, kind, style)
    own.check(f"{PREFIX}kv")
    assert own.owns(f"{PREFIX}kv")
    own.drop(f"{PREFIX}kv")
    assert not own.exists(f"{PREFIX}kv") and not own.exists(REGISTRY)


def _mark(conn: Any, kind: str) -> str:
    cur = conn.cursor()
    if kind == "sqlite":
        cur.execute("SELECT sql FROM sqlite_master WHERE name = ?", (REGISTRY,))
    elif kind == "postgresql":
        cur.execute("SELECT obj_description(%s::regclass, 'pg_class')", (REGISTRY,))
    else:
        cur.execute("SELECT table_comment FROM information_schema.tables WHERE "
                    "table_schema = DATABASE() AND table_name = %s", (REGISTRY,))
    return str(cur.fetchone()[0])


def test_kv_run_refuses_a_foreign_registry(tmp_path: Path) -> None:
    """End to end: the run stops before measuring, and the user's table stays."""
    db = tmp_path / "user.db"
    with closing(sqlite3.connect(db)) as conn:
        conn.execute(f"CREATE TABLE dbstand_owned {SHAPE}")
        conn.commit()
    out = tmp_path / "r.jsonl"
    result, _ = run_tagged("run", "kv", "--target", f"sqlite:///{db}", "--op", "select",
                           "--revs", "100", "--rows", "100", "-o", str(out), cwd=tmp_path)
    assert result.code == 2
    assert "dbstand_owned exists but is not dbstand's registry" in one_error_line(result)
    assert not out.exists()
    with closing(sqlite3.connect(db)) as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert names == {"dbstand_owned"}


def test_tarantool_space_shaped_like_the_registry_is_refused(tarantool_srv: ServerRecord
                                                             ) -> None:
    import tarantool

    from dbstand.targets.tarantool.ownership import TarantoolOwnership

    t = tarantool_srv.target()
    conn = tarantool.Connection(t.host, t.port, user=t.user, password=t.password,
                                encoding="utf-8")
    try:
        conn.eval("local s = box.schema.space.create(..., {format = {"
                  "{name = 'name', type = 'string'}, {name = 'workload', type = 'string'}, "
                  "{name = 'created_at', type = 'string'}}}) "
                  "s:create_index('primary', {parts = {{1, 'string'}}})", REGISTRY)
        own = TarantoolOwnership(conn, PREFIX)
        with pytest.raises(OwnershipError, match="not dbstand's registry"):
            own.check(f"{PREFIX}kv")
        conn.eval("box.space[...]:drop()", REGISTRY)
        own.create_kv(f"{PREFIX}kv", {})
        assert own.owns(f"{PREFIX}kv") and not own.owns(REGISTRY)
        own.drop(f"{PREFIX}kv")
        assert conn.eval("return box.space[...] == nil", REGISTRY).data == [True]
    finally:
        conn.eval("for _, n in ipairs({...}) do if box.space[n] then box.space[n]:drop() end "
                  "end", f"{PREFIX}kv", REGISTRY)
        conn.close()


@pytest.fixture(scope="module")
def mongo_db() -> Iterator[Any]:
    """The `dbstand` database of a throwaway FerretDB (MongoDB wire), through pymongo."""
    import pymongo

    from dbstand.targets.mongodb.managed import ManagedFerretDB

    with ManagedFerretDB() as record:
        client: Any = pymongo.MongoClient(record.target().secret(),
                                          serverSelectionTimeoutMS=5000)
        try:
            yield client.dbstand
        finally:
            client.close()


def test_empty_mongo_collection_named_like_the_registry_is_refused(mongo_db: Any) -> None:
    """Issue 28 item 5: MongoDB's registry carries the mark too, so an empty user
    collection named `<prefix>owned` is someone else's, never written into."""
    from dbstand.workloads.docquery import data

    mongo_db.create_collection(REGISTRY)
    try:
        with pytest.raises(OwnershipError, match="is not dbstand's registry"):
            data.load_mongo(mongo_db, 10, prefix=PREFIX)
        assert mongo_db[REGISTRY].count_documents({}) == 0
        assert f"{PREFIX}posts" not in mongo_db.list_collection_names()
    finally:
        mongo_db.drop_collection(REGISTRY)


def test_mongo_registry_dbstand_creates_carries_the_mark(mongo_db: Any) -> None:
    from dbstand.targets.mongodb.ownership import MongoOwnership

    own = MongoOwnership(mongo_db, PREFIX)
    own.create(f"{PREFIX}posts", "docquery")
    try:
        mark = mongo_db[REGISTRY].find_one({"_id": REGISTRY})
        assert mark is not None and mark["workload"] == "dbstand-registry"
        own.check(f"{PREFIX}posts")  # its own registry is accepted
    finally:
        own.drop(f"{PREFIX}posts")
    assert REGISTRY not in mongo_db.list_collection_names()  # gone with its last entry
