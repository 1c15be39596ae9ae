"""Managed FerretDB (MongoDB wire): real servers on loopback, driven through pymongo.

The first test run on a machine builds FerretDB with the Go toolchain (about 1.5
CPU-minutes); later runs reuse the build in the cache folder.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymongo
import pytest

import managed_server_checks as checks
from dbstand.errors import OwnershipError, ServerError
from dbstand.targets import gobuild
from dbstand.targets.managed import ServerRecord, pid_running
from dbstand.targets.mongodb import managed as target
from dbstand.targets.mongodb.ownership import MongoOwnership
from dbstand.workloads.docquery import data


def leftovers() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("dbstand-mongodb-*")}


def connect(record: ServerRecord) -> Any:
    return pymongo.MongoClient(record.target().secret(), serverSelectionTimeoutMS=5000)


@pytest.fixture(scope="module")
def server() -> Iterator[ServerRecord]:
    yield from checks.serve(target.ManagedFerretDB(), leftovers)


@pytest.fixture
def client(server: ServerRecord) -> Iterator[Any]:
    conn = connect(server)
    yield conn
    conn.close()


def test_record_names_the_stand_in(server: ServerRecord) -> None:
    assert server.kind == "mongodb"
    assert server.url == f"mongodb://127.0.0.1:{server.port}/dbstand"
    assert pid_running(server.pid)
    assert server.settings["server"] == "FerretDB 1.24.0, SQLite backend"
    assert server.settings["ferretdb_version"] == "1.24.0"
    assert server.settings["mongodb_version"] == "7.0.42"
    assert server.settings["listen"] == f"127.0.0.1:{server.port}"


def test_listens_on_loopback_only(server: ServerRecord) -> None:
    checks.listens_on_loopback_only(server)


def test_crud_and_facts_through_pymongo(client: Any) -> None:
    coll = client.dbstand.dbstand_crudtest
    coll.insert_many([{"_id": i, "name": f"doc_{i}"} for i in range(1, 101)])
    coll.update_one({"_id": 7}, {"$set": {"name": "changed"}})
    coll.delete_one({"_id": 9})
    assert coll.count_documents({}) == 99
    assert coll.find_one({"_id": 7})["name"] == "changed"
    client.dbstand.drop_collection("dbstand_crudtest")
    facts = target.server_facts(client)
    assert facts["server"] == "FerretDB" and facts["version"] == "7.0.42"


def test_posts_load_once_and_match_the_expected_page(client: Any) -> None:
    db = client.dbstand
    first = data.load_mongo(db, 200, seed=5, prefix="dbstand_dqt_", batch=64)
    assert not first.reused and first.documents == 200 and first.rate > 0
    again = data.load_mongo(db, 200, seed=5, prefix="dbstand_dqt_")
    assert again.reused
    other_seed = data.load_mongo(db, 200, seed=6, prefix="dbstand_dqt_")
    assert not other_seed.reused
    page = [{"_id": str(d["_id"]), "title": d["title"],
             "created": d["created"].strftime(data.CREATED_FORMAT)}
            for d in db.dbstand_dqt_posts.find(limit=data.PAGE)]
    assert page == data.expected_page(200, seed=6)
    data.drop_mongo(db, prefix="dbstand_dqt_")
    assert not [n for n in db.list_collection_names() if n.startswith("dbstand_dqt_")]


def test_foreign_collection_is_refused(client: Any) -> None:
    db = client.dbstand
    db.dbstand_dqf_posts.insert_one({"mine": False})
    try:
        with pytest.raises(OwnershipError, match="not created by dbstand"):
            data.load_mongo(db, 10, prefix="dbstand_dqf_")
        assert db.dbstand_dqf_posts.count_documents({}) == 1
        with pytest.raises(OwnershipError):
            MongoOwnership(db, "dbstand_dqf_").drop("dbstand_dqf_posts")
    finally:
        db.drop_collection("dbstand_dqf_posts")


def test_postgresql_backend_takes_the_password_from_a_file(pg: ServerRecord) -> None:
    server = target.ManagedFerretDB(settings={"backend": "postgresql",
                                              "postgresql_url": pg.target().secret()})
    with server as record:
        assert record.settings["server"] == "FerretDB 1.24.0, PostgreSQL backend"
        # natural order must stay heap order: no synchronized scans for FerretDB's sessions
        assert record.settings["postgresql_url"].endswith("?synchronize_seqscans=off")
        cmdline = Path(f"/proc/{record.pid}/cmdline").read_bytes()
        assert pg.password.encode() not in cmdline
        assert all(pg.password not in str(v) for v in record.settings.values())
        conn = connect(record)
        try:
            conn.dbstand.dbstand_pgtest.insert_one({"_id": 1, "x": "y"})
            assert conn.dbstand.dbstand_pgtest.find_one({"_id": 1})["x"] == "y"
            conn.dbstand.drop_collection("dbstand_pgtest")
        finally:
            conn.close()
    assert not pid_running(record.pid)


def test_wrong_postgresql_password_is_one_clear_line(pg: ServerRecord) -> None:
    url = pg.target().with_password("wrong-" + pg.password).secret()
    server = target.ManagedFerretDB(settings={"backend": "postgresql", "postgresql_url": url})
    checks.failed_start_is_one_clear_line(server, "password authentication failed", leftovers)


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ServerError, match="backend 'mysql'"):
        target.ManagedFerretDB(settings={"backend": "mysql"}).start()
    with pytest.raises(ServerError, match="needs the setting postgresql_url"):
        target.ManagedFerretDB(settings={"backend": "postgresql"}).start()
    with pytest.raises(ServerError, match="unknown FerretDB setting"):
        target.ManagedFerretDB(settings={"fsync": "off"}).start()


def test_missing_go_is_one_clear_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DBSTAND_CACHE", str(tmp_path))  # no cached build here
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("DBSTAND_GO", raising=False)
    monkeypatch.delenv("DBSTAND_FERRETDB_BIN", raising=False)
    monkeypatch.setattr(gobuild, "GO_FALLBACKS", ())
    with pytest.raises(ServerError, match="needs the Go toolchain") as info:
        target.ferretdb_binary()
    assert "\n" not in str(info.value)


def test_stop_removes_process_and_dir() -> None:
    checks.stop_removes_process_and_dir(target.ManagedFerretDB())


def test_explicit_port_in_use_is_refused() -> None:
    checks.explicit_port_in_use_is_refused(target.ManagedFerretDB)


def test_server_outlives_the_process_that_started_it() -> None:
    checks.outlives_its_starter(target.ManagedFerretDB, connect,
                                lambda conn: conn.admin.command("ping"), timeout_s=300)
