"""kv on a real MariaDB started by dbstand itself: pymysql, mysqlclient,
mysql-connector-python (text and prepared)."""

from __future__ import annotations

import json
from pathlib import Path

import pymysql

from dbstand.targets.managed import ServerRecord
from kv_checks import assert_user_table_refused

FAST = ["--revs", "200", "--rows", "300", "--min-iterations", "3", "--max-iterations", "4",
        "--ci", "50"]


def cases(path: Path) -> list[dict]:
    return [r for r in map(json.loads, path.read_text().splitlines()) if r["type"] == "case"]


def test_every_mysql_stack_does_every_op(cli, mariadb: ServerRecord, mariadb_url: str,
                                         tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    res = cli("run", "kv", "--target", mariadb_url, "--stack",
              "pymysql,mysqlclient,mysql-connector-python[prepared]", "-o", str(out), *FAST)
    assert res.code == 0, res.stderr
    recs = cases(out)
    assert len(recs) == 18 and all(r["status"] == "ok" for r in recs), \
        [r.get("error") for r in recs]
    assert all(r["ops_per_s"] > 0 for r in recs)
    server = recs[0]["environment"]["server"]
    assert "MariaDB" in server["version"] and "innodb_flush_log_at_trx_commit" in server
    forms = {r["op"]: r["op_form"] for r in recs}
    assert forms["upsert"] == "INSERT ... ON DUPLICATE KEY UPDATE"
    assert forms["replace"] == "REPLACE INTO"
    connector = [r for r in recs if r["stack"] == "mysql-connector-python"]
    assert {r["params"]["protocol"] for r in connector} == {"prepared"}
    assert "server-side prepared" in connector[0]["client"]
    # probes: the server counted one statement of the op's kind per operation
    for r in recs:
        p = r["probes"]
        assert p["server_pid_found"] and p["server_pid"] == mariadb.pid
        kinds = p["statements_per_op"]
        kind = {"select": "select", "insert": "insert", "update": "update",
                "upsert": "insert", "replace": "other", "delete": "delete"}[r["op"]]
        assert kinds[kind] == 1.0, (r["stack"], r["op"], kinds)
        assert sum(kinds.values()) == 1.0, (r["stack"], r["op"], kinds)
        assert 0 < p["server_cpu_s"] < p["window_s"] * p["cores"]
        assert 0 < p["client_cpu_s"] < p["window_s"] * p["cores"]
    # prepared statements: prepared once, not once per operation (the connector still
    # sends a COM_STMT_RESET before each execution: a round trip the probe shows)
    prepared = next(r for r in connector if r["op"] == "select")
    assert prepared["probes"]["commands_per_op"].get("stmt_prepare", 0) < 0.05
    assert prepared["probes"]["commands_per_op"].get("stmt_reset") == 1.0
    assert mariadb.password not in out.read_text()
    assert mariadb.password not in res.stdout + res.stderr
    assert "mysql-connector-python[prepared]" in res.stdout


def test_text_protocol_and_table_label(cli, mariadb_url: str, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    res = cli("run", "kv", "--target", mariadb_url, "--stack", "mysql-connector-python",
              "--protocol", "text", "--op", "select", "-o", str(out), *FAST)
    assert res.code == 0, res.stderr
    (rec,) = cases(out)
    assert rec["params"]["protocol"] == "text" and "text protocol" in rec["client"]
    assert "mysql-connector-python[text]" in res.stdout


def test_user_table_is_refused_and_survives(cli, mariadb: ServerRecord, mariadb_url: str,
                                            tmp_path: Path) -> None:
    url = mariadb.target()
    conn = pymysql.connect(host=url.host, port=url.port, user=url.user,
                           password=url.password, database=url.database, autocommit=True)
    try:
        cur = conn.cursor()
        cur.execute("CREATE TABLE dbstand_kv (id INT PRIMARY KEY, secret TEXT)")
        cur.execute("INSERT INTO dbstand_kv VALUES (42, 'keep me')")
        assert_user_table_refused(cli, mariadb_url, "pymysql", tmp_path / "r.jsonl", FAST)
        cur.execute("SELECT * FROM dbstand_kv")
        assert cur.fetchall() == ((42, "keep me"),)
    finally:
        conn.cursor().execute("DROP TABLE IF EXISTS dbstand_kv")
        conn.close()


def test_passwordless_url_of_a_server_up_mariadb(cli, cli_process, tmp_path: Path) -> None:
    """`server up mysql` prints a URL without password; dbstand finds the password.
    `up` runs as its own process: the server must outlive the command that started it."""
    up = cli_process("server", "up", "mysql")
    try:
        assert up.code == 0, up.stderr
        url = next(w for w in up.stdout.split() if w.startswith("mysql://"))
        assert ":" not in url.split("//", 1)[1].split("@", 1)[0]
        out = tmp_path / "r.jsonl"
        res = cli("run", "kv", "--target", url, "--op", "select", "-o", str(out), *FAST)
        assert res.code == 0, res.stderr
        (rec,) = cases(out)
        assert rec["stack"] == "pymysql"  # the default stack of mysql targets
        assert rec["probes"]["server_pid_source"] == "managed server record"
    finally:
        down = cli("server", "down", "mysql")
    assert down.code == 0, down.stderr
