"""kv on a real PostgreSQL started through dbstand's own managed server."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest

from kv_checks import assert_user_table_refused

FAST = ["--revs", "200", "--rows", "300", "--min-iterations", "3", "--max-iterations", "4",
        "--ci", "50"]


def cases(path: Path) -> list[dict]:
    return [r for r in map(json.loads, path.read_text().splitlines()) if r["type"] == "case"]


@pytest.mark.parametrize("stack", ["psycopg", "psycopg2", "pg8000"])
def test_every_stack_does_every_op(cli, pg_url: str, pg, tmp_path: Path, stack: str) -> None:
    out = tmp_path / "r.jsonl"
    res = cli("run", "kv", "--target", pg_url, "--stack", stack, "-o", str(out), *FAST)
    assert res.code == 0, res.stderr
    recs = cases(out)
    assert len(recs) == 6 and all(r["status"] == "ok" for r in recs)
    assert all(r["ops_per_s"] > 0 for r in recs)
    server = recs[0]["environment"]["server"]
    assert server["version"].startswith("PostgreSQL 15") or "PostgreSQL" in server["version"]
    assert "synchronous_commit" in server and "fsync" in server
    forms = {r["op"]: r["op_form"] for r in recs}
    assert "ON CONFLICT" in forms["upsert"]
    # the password never reaches output or results
    assert pg.password not in out.read_text()
    assert pg.password not in res.stdout + res.stderr


def test_user_table_survives_and_clash_is_refused(cli, pg_url: str, tmp_path: Path) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS customers")
        conn.execute("CREATE TABLE customers (id int primary key, name text)")
        conn.execute("INSERT INTO customers VALUES (1, 'ada'), (2, 'grace')")
    out = tmp_path / "r.jsonl"
    res = cli("run", "kv", "--target", pg_url, "--stack", "psycopg", "-o", str(out), *FAST)
    assert res.code == 0, res.stderr
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute("SELECT * FROM customers ORDER BY id").fetchall() == \
            [(1, "ada"), (2, "grace")]
        # a user's own table that happens to carry dbstand's name
        conn.execute("CREATE TABLE dbstand_kv (id int primary key, secret text)")
        conn.execute("INSERT INTO dbstand_kv VALUES (42, 'keep me')")
    assert_user_table_refused(cli, pg_url, "psycopg", tmp_path / "clash.jsonl", FAST)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute("SELECT * FROM dbstand_kv").fetchall() == [(42, "keep me")]
        conn.execute("DROP TABLE dbstand_kv")
        conn.execute("DROP TABLE customers")


def test_passwordless_url_of_a_server_up_server(cli, cli_process, tmp_path: Path) -> None:
    """`server up` prints a URL without password; dbstand finds the password itself.
    `up` runs as its own process: the server must outlive the command that started it."""
    up = cli_process("server", "up", "postgresql")
    try:
        assert up.code == 0, up.stderr
        url = next(w for w in up.stdout.split() if w.startswith("postgresql://"))
        assert ":" not in url.split("//", 1)[1].split("@", 1)[0]  # no password in it
        status = cli("server", "status")
        assert "postgresql" in status.stdout and "yes" in status.stdout
        again = cli("server", "up", "postgresql")
        assert again.code == 2 and "already running" in again.stderr
        out = tmp_path / "r.jsonl"
        res = cli("run", "kv", "--target", url, "--op", "select", "-o", str(out), *FAST)
        assert res.code == 0, res.stderr
    finally:
        down = cli("server", "down", "postgresql")
    assert down.code == 0, down.stderr
    assert cli("server", "status").stdout.strip() == "no managed servers"
    assert cli("server", "down", "postgresql").code == 2
