"""`dbstand run script`: pgbench's script language through the drivers, pgbench itself
as the limit row, pgbench's tables under dbstand's ownership."""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path

import psycopg
import pytest

from dbstand.errors import UserError
from dbstand.targets.managed import ServerRecord
from dbstand.targets.postgresql.pgbench import (
    connection_args,
    find_pgbench,
    parse_statements,
    run_pgbench,
)
from dbstand.workloads.script.expr import ExprError, parse_expr
from dbstand.workloads.script.parse import parse_script

FAST = ["--revs", "200", "--min-iterations", "2", "--max-iterations", "3", "--ci", "50",
        "--max-time", "5"]


def cases(path: Path) -> list[dict]:
    return [r for r in map(json.loads, path.read_text().splitlines()) if r["type"] == "case"]


def test_expressions_follow_pgbench() -> None:
    rng = random.Random(7)
    for text, want in [("1 + 2 * 3", 7), ("(1 + 2) * 3", 9), ("-7 / 2", -3), ("-7 % 3", -1),
                       ("5 - 2 - 1", 2), ("1 << 3 | 1", 9), ("2 * :x", 10),
                       ("case when :x > 9 then 1 when :x = 5 then 2 else 3 end", 2),
                       ("not 1 = 2 and true", True), ("abs(-3) + least(4, 2, 8)", 5),
                       ("greatest(1, 2.5)", 2.5), ("mod(-7, 3)", -1), ("null isnull", True)]:
        assert parse_expr(text)({"x": 5}, rng) == want, text
    for name, args in [("random", "1, 10"), ("random_gaussian", "1, 10, 2.5"),
                       ("random_exponential", "1, 10, 3.0"),
                       ("random_zipfian", "1, 10, 1.5")]:
        draw = parse_expr(f"{name}({args})")
        values = [draw({}, rng) for _ in range(2000)]
        assert min(values) >= 1 and max(values) <= 10, name
        if name in ("random_exponential", "random_zipfian"):  # skewed to the low end
            assert values.count(1) > values.count(10) * 2, name
    with pytest.raises(ExprError):
        parse_expr("random(1, 2")
    with pytest.raises(ExprError):
        parse_expr("random_zipfian(1, 10, 0.5)")({}, rng)


def test_script_mistakes_name_file_and_line() -> None:
    bad = {"\\set x random(1,\nSELECT 1;": "s.sql:1:",
           "SELECT 1;\n\\if 1\nSELECT 2;\n": "s.sql:2: \\if without \\endif",
           "SELECT 1;\n\\else\n": "s.sql:2: \\else without \\if",
           "SELECT 1;\n\\shell ls\n": "s.sql:2: \\shell is not supported",
           "SELECT 1;\nSELECT 2\n": "s.sql:2: SQL command without a closing ';'",
           "\\sleep 1 hours\nSELECT 1;": "s.sql:1: \\sleep unit"}
    for text, message in bad.items():
        with pytest.raises(UserError, match=message.replace("\\", "\\\\")
                           .replace("(", "\\(")):
            parse_script(text, "s.sql")
    script = parse_script("SELECT ':a', '::b' || :x::text -- :y\n  FROM t WHERE c = :c;\n",
                          "q.sql")
    (c,) = script.statements
    assert c.params == ("x", "c")
    assert c.sql(["$1", "$2"], False) == ("SELECT ':a', '::b' || $1::text \n  FROM t "
                                          "WHERE c = $2")


def test_bad_scripts_are_one_line(cli_in_process, tmp_path: Path) -> None:
    script = tmp_path / "bad.sql"
    script.write_text("\\set n 1\n\\set x random(1, :n\nSELECT 1;\n")
    res = cli_in_process("run", "script", "-f", str(script), "-o", str(tmp_path / "r.jsonl"))
    assert res.code == 2
    assert f"{script}:2:" in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "r.jsonl").exists()
    res = cli_in_process("run", "script", "-f", str(tmp_path / "none.sql"))
    assert res.code == 2 and "no such file" in res.stderr


def test_statement_the_target_cannot_run_names_the_line(cli_in_process, tmp_path: Path
                                                         ) -> None:
    script = tmp_path / "s.sql"
    script.write_text("\\set id random(1, 5)\nSELECT :id;\nSELECT * FROM no_such_table;\n")
    out = tmp_path / "r.jsonl"
    res = cli_in_process("run", "script", "-f", str(script), "-o", str(out), *FAST)
    assert res.code != 0
    (rec,) = cases(out)
    assert rec["status"] == "failed"
    assert f"{script}:3: no such table: no_such_table" in rec["error"]


def test_sqlite_weighted_mix_with_if(cli_in_process, tmp_path: Path) -> None:
    a, b = tmp_path / "a.sql", tmp_path / "b.sql"
    a.write_text("\\set n random(1, :top)\n\\if :n <= 2\nSELECT 1;\n\\elif :n = 3\nSELECT 2;\n"
                 "\\else\nSELECT 3;\nSELECT 4;\n\\endif\n")
    b.write_text("\\sleep 1 us\nBEGIN;\nSELECT :client_id + 1;\nEND;\n")
    out = tmp_path / "r.jsonl"
    res = cli_in_process("run", "script", "-f", f"{a}@3", "-f", f"{b}@1",
                         "--target", f"sqlite:///{tmp_path / 'x.db'}", "--mode",
                         "sync,threads:2,processes:2", "-D", "top=4", "-o", str(out), *FAST)
    assert res.code == 0, res.stderr
    recs = cases(out)
    assert [r["mode"] for r in recs] == ["sync", "threads:2", "processes:2"]
    assert recs[2]["status"] == "ok" and recs[2]["statements"] == []  # kept in the workers
    for rec in recs[:2]:
        rows = {(Path(r["script"]).name, r["line"]): r for r in rec["statements"]}
        tx_a = rows[("a.sql", 3)]["script_transactions"]
        tx_b = rows[("b.sql", 3)]["script_transactions"]
        assert 2 * tx_b < tx_a < 4 * tx_b  # weights 3:1
        # every transaction of a.sql took exactly one arm; the last arm ran both lines
        arms = [rows[("a.sql", n)]["count"] for n in (3, 5, 7)]
        assert sum(arms) == tx_a and rows[("a.sql", 8)]["count"] == arms[2]
        assert all(rows[("b.sql", n)]["count"] == tx_b for n in (2, 3, 4))


def _pg_conn(pg: ServerRecord) -> psycopg.Connection:
    t = pg.target()
    return psycopg.connect(host=t.host, port=t.port, user=t.user, dbname=t.database,
                           password=pg.password, autocommit=True)


def test_tpcb_like_through_drivers_and_pgbench(cli, pg: ServerRecord, pg_url: str,
                                               tmp_path: Path) -> None:
    """The Done-when command at scale 1: psycopg and psycopg2 (sync), psycopg and
    asyncpg (asyncio:4), pgbench -M prepared and simple; the balances afterwards."""
    out = tmp_path / "r.jsonl"
    res = cli("run", "script", "-f", "tpcb-like", "--init", "--scale", "1", "--keep",
              "--target", pg_url, "--stack", "psycopg,psycopg2,psycopg-async,asyncpg,pgbench",
              "--mode", "sync,asyncio:4", "-o", str(out), *FAST)
    assert res.code == 0, res.stderr
    recs = cases(out)
    assert {(r["stack"], r["mode"], r["params"].get("protocol")) for r in recs} == {
        ("psycopg", "sync", None), ("psycopg2", "sync", None),
        ("psycopg-async", "asyncio:4", None), ("asyncpg", "asyncio:4", None),
        ("pgbench", "sync", "prepared"), ("pgbench", "sync", "simple")}
    for r in recs:
        assert r["status"] == "ok", r.get("error")
        assert r["ops_per_s"] > 0 and r["balance_check"]["consistent"]
        assert r["probes"]["server_cpu_us_per_op"] > 0
        sql = [s for s in r["statements"] if s["kind"] == "sql"]
        assert len(sql) == 7 and all(s["mean_ms"] > 0 for s in sql)
        if r["stack"] != "pgbench":
            assert all(s["count"] == s["script_transactions"] for s in r["statements"])
    with _pg_conn(pg) as conn:
        sums = conn.execute(
            "SELECT (SELECT sum(abalance) FROM pgbench_accounts), (SELECT sum(tbalance) "
            "FROM pgbench_tellers), (SELECT sum(bbalance) FROM pgbench_branches), "
            "(SELECT sum(delta) FROM pgbench_history), (SELECT count(*) FROM "
            "pgbench_history), (SELECT count(*) FROM pgbench_accounts)").fetchone()
        assert sums[0] == sums[1] == sums[2] == sums[3]
        assert sums[5] == 100_000
        done = sum(r["iterations"] + r["warmup_iterations"] for r in recs) * 200
        assert sums[4] >= done  # every transaction wrote its history row
        owned = {n for (n,) in conn.execute("SELECT name FROM dbstand_owned")}
        assert {"pgbench_accounts", "pgbench_history"} <= owned
    assert pg.password not in out.read_text() + res.stdout + res.stderr
    # a second --init replaces dbstand's own tables; without --keep they are dropped
    res = cli("run", "script", "-f", "select-only", "--init", "--target", pg_url,
              "--stack", "psycopg", "-o", str(tmp_path / "r2.jsonl"), *FAST)
    assert res.code == 0, res.stderr
    with _pg_conn(pg) as conn:
        left = conn.execute("SELECT count(*) FROM pg_tables WHERE tablename LIKE "
                            "'pgbench%'").fetchone()
        assert left == (0,)
        # someone else's pgbench_branches: --init refuses it, in one line
        conn.execute("CREATE TABLE pgbench_branches (bid int)")
        try:
            res = cli("run", "script", "-f", "tpcb-like", "--init", "--target", pg_url,
                      "--stack", "psycopg", "-o", str(tmp_path / "r3.jsonl"))
            assert res.code == 2 and "pgbench_branches exists and was not created by " \
                "dbstand" in res.stderr
            assert conn.execute("SELECT count(*) FROM pgbench_branches").fetchone() == (0,)
        finally:
            conn.execute("DROP TABLE pgbench_branches")


def test_custom_mix_counts_match_pgbench(cli, pg: ServerRecord, pg_url: str,
                                         tmp_path: Path) -> None:
    """A weighted two-file mix with an \\if chain: per statement, the counts per
    transaction of its script are the same through dbstand as through pgbench run with
    -t the same number of transactions (pgbench's per-statement counts from
    pg_stat_statements, its per-script transactions from its -r report)."""
    a, b = tmp_path / "a.sql", tmp_path / "b.sql"
    # each statement a different number of columns: pg_stat_statements tells them apart
    a.write_text("\\set n 2 * 3 + 1\n\\if :n > 10\nSELECT 1;\n"
                 "\\elif :n % 2 = 1\nSELECT 1, 2;\nSELECT 1, 2, 3;\n"
                 "\\else\nSELECT 1, 2, 3, 4;\n\\endif\n")
    b.write_text("\\set x random(1, 100)\nSELECT :x::int, 2, 3, 4, 5;\n")
    out = tmp_path / "r.jsonl"
    res = cli("run", "script", "-f", f"{a}@2", "-f", f"{b}@1", "--target", pg_url,
              "--stack", "psycopg", "-o", str(out), "--no-probes", *FAST)
    assert res.code == 0, res.stderr
    (rec,) = cases(out)
    ours = {(Path(r["script"]).name, r["line"]): r for r in rec["statements"]}
    total = ours[("a.sql", 1)]["script_transactions"] + ours[("b.sql", 1)][
        "script_transactions"]
    per_tx = {k: r["count"] / r["script_transactions"] for k, r in ours.items()
              if r["kind"] == "sql"}
    assert per_tx == {("a.sql", 3): 0.0, ("a.sql", 5): 1.0, ("a.sql", 6): 1.0,
                      ("a.sql", 8): 0.0, ("b.sql", 2): 1.0}

    target = pg.target()
    with _pg_conn(pg) as conn, tempfile.TemporaryDirectory() as folder:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        conn.execute("SELECT pg_stat_statements_reset()")
        connect, env = connection_args(target, Path(folder))
        summary, stdout = run_pgbench(
            [str(find_pgbench()), "-n", *connect, "-r", "-t", str(total),
             "-f", f"{a}@2", "-f", f"{b}@1", target.database or "postgres"], env)
        calls = {query.count(",") + 1: n for query, n in conn.execute(
            "SELECT query, calls FROM pg_stat_statements WHERE query LIKE 'SELECT $%'")}
    transactions, _ = parse_statements(stdout)
    assert summary["processed"] == total == sum(transactions.values())
    theirs = {("a.sql", 3): calls.get(1, 0) / transactions[0],
              ("a.sql", 5): calls.get(2, 0) / transactions[0],
              ("a.sql", 6): calls.get(3, 0) / transactions[0],
              ("a.sql", 8): calls.get(4, 0) / transactions[0],
              ("b.sql", 2): calls.get(5, 0) / transactions[1]}
    assert theirs == per_tx


def test_tpcb_like_on_mariadb(cli, mariadb_url: str, tmp_path: Path) -> None:
    """The same built-in on MariaDB (no END there: the driver's commit), sync and
    asyncio, tables generated by MariaDB's sequence engine, balances checked."""
    out = tmp_path / "r.jsonl"
    res = cli("run", "script", "-f", "tpcb-like", "--init", "--target", mariadb_url,
              "--stack", "pymysql,aiomysql", "--mode", "sync,asyncio:2", "-o", str(out),
              "--revs", "100", "--min-iterations", "2", "--max-iterations", "2", "--ci",
              "50")
    assert res.code == 0, res.stderr + res.stdout
    recs = cases(out)
    assert {(r["stack"], r["mode"]) for r in recs} == {("pymysql", "sync"),
                                                     ("aiomysql", "asyncio:2")}
    for r in recs:
        assert r["status"] == "ok", r.get("error")
        assert r["balance_check"]["consistent"]
        end = [s for s in r["statements"] if s["command"] == "END"]
        assert end[0]["count"] == end[0]["script_transactions"] > 0
