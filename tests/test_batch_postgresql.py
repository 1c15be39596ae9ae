"""batch on a real PostgreSQL (dbstand's managed server): every driver's every api,
the limit rows, the study's psycopg2 command, and other people's tables left alone."""

from __future__ import annotations

import shutil
from pathlib import Path

import psycopg
import pytest

from batch_fixtures import FAST, by_key, case_records
from dbstand.workloads.batch.adapters.sqlalchemy import SqlAlchemyCoreBatch, SqlAlchemyOrmBatch
from dbstand.workloads.batch.workload import client_class
from dbstand.workloads.catalog import get_stack

ROWS = ["--rows", "200,400", "--large-rows", "400"]


@pytest.mark.parametrize("stack", ["psycopg", "asyncpg"])
def test_every_api_every_op(cli, pg_url: str, pg, tmp_path: Path, stack: str) -> None:
    out = tmp_path / "r.jsonl"
    res = cli("run", "batch", "--target", pg_url, "--stack", stack, "-o", str(out),
              *ROWS, *FAST)
    assert res.code == 0, res.stderr
    recs = case_records(out)
    failed = [(r["api"], r["op"], r["rows"], r.get("error")) for r in recs
              if r["status"] != "ok"]
    assert not failed
    apis = [a.name for a in client_class(get_stack(stack)).apis]
    got = by_key(recs)
    for api in apis:
        for op in ("insert", "update", "delete"):
            for rows in (200, 400):
                assert got[(stack, api, op, rows)]["rows_per_s"] > 0
    limits = {(api, op) for (s, api, op, _), r in got.items() if s == "limit"}
    assert ("limit:server-side", "delete") in limits
    if shutil.which("psql"):
        assert ("limit:psql-copy", "insert") in limits
    assert recs[0]["environment"]["server"]["version"].startswith("PostgreSQL")
    assert pg.password not in out.read_text() + res.stdout + res.stderr


def test_the_study_command(cli, pg_url: str, tmp_path: Path) -> None:
    """The README's command with small counts: psycopg2's four APIs, three tables."""
    out = tmp_path / "r.jsonl"
    apis = ["executemany", "execute_batch", "prepare+execute_batch", "execute_values"]
    res = cli("run", "batch", "--target", pg_url, "--stack", "psycopg2", "--api",
              ",".join(apis), "--rows", "100,200,300", "--large-rows", "300", "-o", str(out),
              *FAST)
    assert res.code == 0, res.stderr
    recs = case_records(out)
    assert all(r["status"] == "ok" for r in recs), [r.get("error") for r in recs]
    got = by_key(recs)
    for op in ("insert", "update", "delete"):
        assert f"batch {op} on postgresql://postgres:***@" in res.stdout
        assert f"{op} ranking at 300 rows, fastest first:" in res.stdout
        for api in apis:
            for rows in (100, 200, 300):
                assert got[("psycopg2", api, op, rows)]["rows_per_s"] > 0
        assert ("limit", "limit:server-side", op, 300) in got
    assert got[("psycopg2", "execute_values", "delete", 300)]["repetition"] == "fixed:3"
    if shutil.which("psql"):
        assert ("limit", "limit:psql-copy", "insert", 300) in got
    assert "prepare+execute_batch" in res.stdout and "server-side" in res.stdout


@pytest.mark.parametrize("stack", ["sqlalchemy-core+psycopg2", "sqlalchemy-orm"])
def test_sqlalchemy(cli, pg_url: str, tmp_path: Path, stack: str) -> None:
    out = tmp_path / "r.jsonl"
    res = cli("run", "batch", "--target", pg_url, "--stack", stack, "--no-limit",
              "--rows", "150,300", "-o", str(out), *FAST)
    assert res.code == 0, res.stderr
    recs = case_records(out)
    assert recs and all(r["status"] == "ok" for r in recs), [r.get("error") for r in recs]
    cls = SqlAlchemyCoreBatch if "core" in stack else SqlAlchemyOrmBatch
    assert {r["api"] for r in recs} == {a.name for a in cls.apis}
    assert "SQLAlchemy" in recs[0]["environment"]["server"]["client"]


def test_user_tables_survive(cli, pg_url: str, tmp_path: Path) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS customers")
        conn.execute("CREATE TABLE customers (id int primary key, name text)")
        conn.execute("INSERT INTO customers VALUES (1, 'ada')")
    out = tmp_path / "r.jsonl"
    res = cli("run", "batch", "--target", pg_url, "--stack", "psycopg", "--api", "copy",
              "--rows", "50", "-o", str(out), *FAST)
    assert res.code == 0, res.stderr
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute("SELECT * FROM customers").fetchall() == [(1, "ada")]
        tables = {r[0] for r in conn.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = 'public'").fetchall()}
        assert "dbstand_batch" not in tables
        if "dbstand_owned" in tables:  # other workloads' tables may still be registered
            owned = {r[0] for r in conn.execute("SELECT name FROM dbstand_owned").fetchall()}
            assert "dbstand_batch" not in owned
        conn.execute("CREATE TABLE dbstand_batch (f_key text, secret text)")
        conn.execute("INSERT INTO dbstand_batch VALUES ('1', 'keep me')")
    clash = tmp_path / "clash.jsonl"
    res = cli("run", "batch", "--target", pg_url, "--stack", "asyncpg", "--rows", "50",
              "-o", str(clash))
    assert res.code == 2 and "dbstand_batch exists and was not created by dbstand" in res.stderr
    assert not clash.exists()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute("SELECT * FROM dbstand_batch").fetchall() == [("1", "keep me")]
        conn.execute("DROP TABLE dbstand_batch")
        conn.execute("DROP TABLE customers")
