"""User mistakes on MySQL/MariaDB and Tarantool targets: one clear line, exit 2, no
traceback, no results file."""

from __future__ import annotations

from pathlib import Path

import pytest
import tarantool

from dbstand.targets.managed import ServerRecord, free_port


def assert_one_line_error(res, *needles: str) -> None:  # type: ignore[no-untyped-def]
    assert res.code == 2, (res.code, res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("dbstand: error: ") and "Traceback" not in res.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def run(cli, tmp_path: Path, url: str, stack: str, *extra: str):  # type: ignore[no-untyped-def]
    out = tmp_path / "r.jsonl"
    res = cli("run", "kv", "--target", url, "--stack", stack, "-o", str(out), *extra)
    assert not out.exists()
    return res


@pytest.mark.parametrize("stack", ["pymysql", "mysqlclient", "mysql-connector-python"])
def test_mysql_wrong_password(cli, mariadb: ServerRecord, tmp_path: Path, stack: str) -> None:
    url = f"mysql://dbstand:not-the-password@127.0.0.1:{mariadb.port}/dbstand"
    res = run(cli, tmp_path, url, stack)
    assert_one_line_error(res, "authentication failed", "wrong user or password")
    assert "not-the-password" not in res.stderr


@pytest.mark.parametrize("scheme,stack", [("mysql", "pymysql"), ("tarantool", "tarantool")])
def test_wrong_port_nothing_listens(cli, tmp_path: Path, scheme: str, stack: str) -> None:
    db = "/dbstand" if scheme == "mysql" else ""
    res = run(cli, tmp_path, f"{scheme}://u:secret-pw@127.0.0.1:{free_port()}{db}", stack)
    assert_one_line_error(res, "cannot connect", "unreachable")
    assert "secret-pw" not in res.stderr


def test_wrong_port_another_server(cli, mariadb: ServerRecord, tarantool_srv: ServerRecord,
                                   tmp_path: Path) -> None:
    res = run(cli, tmp_path, f"tarantool://u:pw1234@127.0.0.1:{mariadb.port}", "tarantool")
    assert_one_line_error(res, "a MySQL/MariaDB server answers", "not Tarantool")
    res = run(cli, tmp_path, f"mysql://u:pw1234@127.0.0.1:{tarantool_srv.port}/db",
              "pymysql")
    assert_one_line_error(res, "Tarantool 2", "not MySQL/MariaDB")


def test_mysql_url_without_database(cli, mariadb: ServerRecord, tmp_path: Path) -> None:
    res = run(cli, tmp_path, f"mysql://dbstand@127.0.0.1:{mariadb.port}", "pymysql")
    assert_one_line_error(res, "name a database")


def test_tarantool_wrong_password_and_unknown_user(cli, tarantool_srv: ServerRecord,
                                                   tmp_path: Path) -> None:
    for user in ("dbstand", "nosuchuser"):
        url = f"tarantool://{user}:not-the-password@127.0.0.1:{tarantool_srv.port}"
        res = run(cli, tmp_path, url, "tarantool")
        assert_one_line_error(res, "authentication failed")
        assert "not-the-password" not in res.stderr


def test_tarantool_user_without_grants(cli, tarantool_srv: ServerRecord,
                                       tmp_path: Path) -> None:
    target = tarantool_srv.target()
    conn = tarantool.Connection(target.host, target.port, user=target.user,
                                password=target.password)
    try:
        conn.eval("box.schema.user.create('nogrants', {password = 'pw-nogrants'})")
        res = run(cli, tmp_path, f"tarantool://nogrants:pw-nogrants@127.0.0.1:"
                                 f"{tarantool_srv.port}", "tarantool")
        assert_one_line_error(res, "tarantool user 'nogrants' lacks the grants", "denied")
    finally:
        conn.eval("box.schema.user.drop('nogrants')")
        conn.close()


@pytest.mark.parametrize("stack", ["pymysql", "mysql-connector-python", "pgbench",
                                   "sqlalchemy-core"])
def test_tarantool_url_to_a_sql_only_stack(cli, tmp_path: Path, stack: str) -> None:
    res = run(cli, tmp_path, "tarantool://u:p@127.0.0.1:3301", stack)
    assert_one_line_error(res, f"stack {stack!r} cannot talk to tarantool targets")


@pytest.mark.parametrize("args,needle", [
    (["--protocol", "grpc"], "--protocol asked for grpc"),
    (["--stack", "tarantool[http]"], "has no protocol 'http'"),
])
def test_bad_protocol(cli, tmp_path: Path, args: list[str], needle: str) -> None:
    out = tmp_path / "r.jsonl"
    base = ["run", "kv", "--target", "tarantool://u:p@127.0.0.1:3301", "-o", str(out)]
    if "--stack" not in args:
        base += ["--stack", "tarantool"]
    assert_one_line_error(cli(*base, *args), needle)
