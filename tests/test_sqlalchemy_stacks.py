"""SQLAlchemy Core and ORM over SQLite, PostgreSQL and MariaDB: one command to see an
ORM's overhead over its own driver, with the statements it really sends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dbstand.errors import UserError
from dbstand.workloads.catalog import get_stack

FAST = ["--revs", "200", "--rows", "300", "--min-iterations", "3", "--max-iterations", "4",
        "--ci", "50"]


def cases(path: Path) -> list[dict]:
    return [r for r in map(json.loads, path.read_text().splitlines()) if r["type"] == "case"]


def test_stack_names_pick_a_driver() -> None:
    orm = get_stack("sqlalchemy-orm+psycopg2")
    assert orm.driver == "psycopg2" and orm.targets == ("postgresql",)
    assert "psycopg2-binary" in orm.packages and "SQLAlchemy" in orm.packages
    assert get_stack("sqlalchemy-core").for_target("mysql").name == "sqlalchemy-core+pymysql"
    assert get_stack("sqlalchemy-core").for_target("sqlite").driver == "sqlite3"
    assert get_stack("tarantool[sql]").protocol == "sql"
    with pytest.raises(UserError, match="cannot sit on driver 'asyncpg'"):
        get_stack("sqlalchemy-orm+asyncpg")
    with pytest.raises(UserError, match="unknown stack"):
        get_stack("nosuch+psycopg")


def test_core_and_orm_on_sqlite(cli, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    res = cli("run", "kv", "--stack", "sqlite3,sqlalchemy-core,sqlalchemy-orm", "-o", str(out),
              *FAST)
    assert res.code == 0, res.stderr
    recs = cases(out)
    assert len(recs) == 18 and all(r["status"] == "ok" for r in recs), \
        [r.get("error") for r in recs]
    stmts = {(r["stack"], r["op"]): r["probes"]["statements_per_op"] for r in recs}
    for op in ("select", "insert", "update", "upsert", "replace", "delete"):
        # Core sends what the bare driver sends: one statement per operation
        assert sum(stmts[("sqlalchemy-core", op)].values()) == 1.0, op
        assert sum(stmts[("sqlite3", op)].values()) == 1.0, op
    orm = {op: stmts[("sqlalchemy-orm", op)] for op in
           ("select", "insert", "update", "upsert", "replace", "delete")}
    # the ORM loads before it writes: get + UPDATE, get + DELETE, merge = get + UPDATE
    assert orm["select"]["select"] == 1.0 and orm["insert"]["insert"] == 1.0
    assert orm["update"]["select"] == 1.0 and orm["update"]["update"] == 1.0
    assert orm["delete"]["select"] == 1.0 and orm["delete"]["delete"] == 1.0
    assert orm["replace"]["select"] == 1.0 and orm["replace"]["update"] == 1.0
    assert orm["upsert"]["insert"] == 1.0  # insert().on_conflict_do_update through Session
    for r in recs:
        if r["stack"].startswith("sqlalchemy"):
            assert r["driver"] == "sqlite3" and "sqlite+pysqlite" in r["client"]
            assert r["environment"]["packages"]["SQLAlchemy"] != "missing"
        assert r["probes"]["server_pid_found"] is False  # embedded: no server process
        assert r["probes"]["client_cpu_us_per_op"] > 0
    assert "sqlalchemy-orm+sqlite3" in res.stdout and "Session.merge()" in res.stdout


def test_orm_over_each_postgresql_driver(cli, pg_url: str, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    res = cli("run", "kv", "--target", pg_url, "--stack",
              "sqlalchemy-orm,sqlalchemy-orm+psycopg2,sqlalchemy-core+pg8000",
              "--op", "select,update", "-o", str(out), *FAST)
    assert res.code == 0, res.stderr
    recs = cases(out)
    assert all(r["status"] == "ok" for r in recs), [r.get("error") for r in recs]
    drivers = {r["stack"]: r["driver"] for r in recs}
    assert drivers == {"sqlalchemy-orm": "psycopg", "sqlalchemy-orm+psycopg2": "psycopg2",
                       "sqlalchemy-core+pg8000": "pg8000"}
    packages = {r["stack"]: r["environment"]["packages"] for r in recs}
    assert "psycopg2-binary" in packages["sqlalchemy-orm+psycopg2"]
    for r in recs:
        kinds = r["probes"]["statements_per_op"]
        if r["stack"].startswith("sqlalchemy-orm") and r["op"] == "update":
            assert kinds["select"] == 1.0 and kinds["update"] == 1.0, kinds
        assert r["probes"]["server_cpu_us_per_op"] > 0


def test_orm_on_mariadb_counts_its_commits(cli, mariadb_url: str, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    res = cli("run", "kv", "--target", mariadb_url, "--stack", "sqlalchemy-core,sqlalchemy-orm",
              "--op", "select,insert,upsert", "-o", str(out), *FAST)
    assert res.code == 0, res.stderr
    recs = {(r["stack"], r["op"]): r for r in cases(out)}
    assert all(r["status"] == "ok" for r in recs.values())
    assert recs[("sqlalchemy-orm", "insert")]["driver"] == "pymysql"
    core = recs[("sqlalchemy-core", "insert")]["probes"]["statements_per_op"]
    assert core["insert"] == 1.0 and sum(core.values()) == 1.0
    # Session.commit() calls the driver's commit(): PyMySQL sends COMMIT even in
    # autocommit, and the server counts it
    orm = recs[("sqlalchemy-orm", "insert")]["probes"]["statements_per_op"]
    assert orm["insert"] == 1.0 and orm["other"] == 1.0
    assert recs[("sqlalchemy-orm", "upsert")]["op_form"].endswith("on_duplicate_key_update)")


def test_tarantool_url_to_sql_only_stacks(cli, tmp_path: Path) -> None:
    for stack in ("sqlalchemy-orm", "sqlalchemy-core+pymysql"):
        res = cli("run", "kv", "--target", "tarantool://u:p@127.0.0.1:3301", "--stack", stack,
                  "-o", str(tmp_path / "r.jsonl"))
        assert res.code == 2 and "cannot talk to tarantool targets" in res.stderr
        assert len(res.stderr.strip().splitlines()) == 1
