"""Managed MariaDB: real servers on loopback, driven through PyMySQL (no mocks)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest

import managed_server_checks as checks
from dbstand.errors import ServerError
from dbstand.targets.managed import ServerRecord, pid_running
from dbstand.targets.mysql import managed as target


def leftovers() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("dbstand-mysql-*")}


def connect(record: ServerRecord, **overrides: Any) -> Any:
    url = record.target()
    args = {"host": url.host, "port": url.port, "user": url.user, "password": url.password,
            "database": url.database, "connect_timeout": 5, **overrides}
    return pymysql.connect(**args)


@pytest.fixture(scope="module")
def server() -> Iterator[ServerRecord]:
    yield from checks.serve(target.ManagedMariaDB(), leftovers)


def test_record_describes_the_server(server: ServerRecord) -> None:
    assert server.kind == "mysql"
    assert server.url == f"mysql://dbstand@127.0.0.1:{server.port}/dbstand"
    assert server.password and server.password not in server.url
    assert pid_running(server.pid)
    assert server.settings["bind-address"] == "127.0.0.1"
    assert server.settings["port"] == str(server.port)
    # a password must never end up in the recorded settings
    assert all(server.password not in str(v) for v in server.settings.values())


def test_crud_through_pymysql(server: ServerRecord) -> None:
    conn = connect(server)
    try:
        cur = conn.cursor()
        cur.execute("SELECT DATABASE(), CURRENT_USER()")
        assert cur.fetchone() == ("dbstand", "dbstand@127.0.0.1")
        cur.execute("CREATE TABLE dbstand_kv (id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY,"
                    " name VARCHAR(64) NOT NULL)")
        cur.executemany("INSERT INTO dbstand_kv (name) VALUES (%s)",
                        [(f"tuple_{i}",) for i in range(1, 101)])
        cur.execute("UPDATE dbstand_kv SET name = %s WHERE id = %s", ("changed", 7))
        cur.execute("INSERT INTO dbstand_kv (id, name) VALUES (%s, %s) "
                    "ON DUPLICATE KEY UPDATE name = VALUES(name)", (8, "upserted"))
        cur.execute("DELETE FROM dbstand_kv WHERE id = %s", (9,))
        conn.commit()
        cur.execute("SELECT COUNT(*), MAX(id) FROM dbstand_kv")
        assert cur.fetchone() == (99, 100)
        cur.execute("SELECT id, name FROM dbstand_kv WHERE id IN (6, 7, 8) ORDER BY id")
        assert cur.fetchall() == ((6, "tuple_6"), (7, "changed"), (8, "upserted"))
        cur.execute("DROP TABLE dbstand_kv")
    finally:
        conn.close()


def test_server_facts(server: ServerRecord) -> None:
    conn = connect(server)
    try:
        facts = target.server_facts(conn.cursor())
    finally:
        conn.close()
    assert "MariaDB" in facts["version"]
    assert facts["max_connections"] == 200
    assert facts["innodb_flush_log_at_trx_commit"] == 1
    assert facts["performance_schema"] == "OFF"
    assert isinstance(facts["innodb_buffer_pool_size"], int)
    assert "sync_binlog" in facts


def test_wrong_password_is_refused(server: ServerRecord) -> None:
    with pytest.raises(pymysql.err.OperationalError) as info:
        connect(server, password="wrong-" + server.password)
    assert info.value.args[0] == 1045  # access denied


def test_root_only_through_the_socket(server: ServerRecord) -> None:
    admin = target.admin_options(server)
    assert Path(admin["unix_socket"]).parent == Path(server.base_dir)
    conn = pymysql.connect(**admin)
    try:
        cur = conn.cursor()
        cur.execute("SELECT CURRENT_USER()")
        assert cur.fetchone() == ("root@localhost",)
        cur.execute("SELECT user, host FROM mysql.user WHERE user = 'root'")
        assert cur.fetchall() == (("root", "localhost"),)
    finally:
        conn.close()
    # the same credentials over TCP are refused: root@localhost never matches TCP
    with pytest.raises(pymysql.err.OperationalError) as info:
        pymysql.connect(host="127.0.0.1", port=server.port, user="root",
                        password=admin["password"], connect_timeout=5)
    assert info.value.args[0] == 1045
    # and the dbstand user sees only its own database
    conn = connect(server)
    try:
        with pytest.raises(pymysql.err.MySQLError) as denied:
            conn.cursor().execute("SELECT COUNT(*) FROM mysql.user")
        assert denied.value.args[0] == 1142  # SELECT command denied
    finally:
        conn.close()


def test_listens_on_loopback_only(server: ServerRecord) -> None:
    checks.listens_on_loopback_only(server)


def test_second_server_beside_the_first(server: ServerRecord) -> None:
    other_server = target.ManagedMariaDB(settings={"innodb_flush_log_at_trx_commit": 2})
    with checks.beside(server, other_server, connect, leftovers) as (_, first, second):
        second.cursor().execute("CREATE TABLE only_here (id INT PRIMARY KEY)")
        cur = first.cursor()
        cur.execute("SHOW TABLES LIKE 'only_here'")
        assert cur.fetchall() == ()
        facts = target.server_facts(second.cursor())
        assert facts["innodb_flush_log_at_trx_commit"] == 2
        assert target.server_facts(cur)["innodb_flush_log_at_trx_commit"] == 1


def test_stop_removes_process_and_dir() -> None:
    checks.stop_removes_process_and_dir(target.ManagedMariaDB())


def test_explicit_port_in_use_is_refused() -> None:
    checks.explicit_port_in_use_is_refused(target.ManagedMariaDB)


def test_failed_start_is_one_clear_line() -> None:
    server = target.ManagedMariaDB(settings={"no_such_option": 1})
    checks.failed_start_is_one_clear_line(server, "unknown variable 'no_such_option=1'",
                                          leftovers)


def test_reserved_setting_is_refused() -> None:
    with pytest.raises(ServerError, match="bind_address"):
        target.ManagedMariaDB(settings={"bind_address": "0.0.0.0"}).start()


def test_server_outlives_the_process_that_started_it() -> None:
    """`dbstand server up`: the server keeps running; a later process stops it."""

    def ping(conn: Any) -> None:
        cur = conn.cursor()
        cur.execute("SELECT 1")
        assert cur.fetchone() == (1,)

    checks.outlives_its_starter(target.ManagedMariaDB, connect, ping, timeout_s=120)
