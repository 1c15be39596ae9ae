"""Connecting: a MySQL port that accepts but never speaks is one quick clear line in
every workload (kv, batch, parking, and the parking service's own ORM connections), and
a missing MySQL database is never reported as a wrong password (issue 17, item 1)."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

import pytest

from dbstand.errors import TargetError
from dbstand.targets.managed import ServerRecord
from dbstand.targets.url import parse_target_url

from .helpers import one_error_line, orphans, run_tagged

FAST = {"DBSTAND_CONNECT_TIMEOUT": "2"}


@pytest.mark.parametrize("workload", ["kv", "batch", "parking"])
def test_silent_mysql_port_is_one_quick_line(workload: str, silent_port: int,
                                             tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    args = ["run", workload, "--target", f"mysql://u:pw@127.0.0.1:{silent_port}/db",
            "-o", str(out)]
    if workload == "parking":
        args += ["--stack", "python-raw"]
    started = time.monotonic()
    result, tag = run_tagged(*args, env=FAST, cwd=tmp_path, timeout=120)
    elapsed = time.monotonic() - started
    assert result.code == 2, result.stderr
    line = one_error_line(result)
    assert "accepted the connection but sent no MySQL greeting within 2 s" in line
    assert "pw" not in line.replace("pw@", "")  # the password stays redacted
    assert elapsed < 60, f"took {elapsed:.0f} s"
    assert not out.exists()
    assert orphans(tag) == []


@pytest.mark.parametrize(("stack", "builder"), [
    ("python-sqlalchemy", "engine_url"),
    ("python-peewee", "database"),
])
def test_parking_orm_connections_do_not_hang_on_a_silent_port(
        stack: str, builder: str, silent_port: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The parking service's ORMs build their own PyMySQL connections (through
    drivers/mysql_args.py's connect_args, which reads the greeting first and gives
    PyMySQL its read limit): the service fails at start in one line instead of
    hanging its first request."""
    from dbstand.workloads.parking.implementations import load_module

    monkeypatch.setenv("DBSTAND_CONNECT_TIMEOUT", "2")
    build = getattr(load_module(stack), builder)
    target = parse_target_url(f"mysql://u:pw@127.0.0.1:{silent_port}/db")
    started = time.monotonic()
    with pytest.raises(TargetError, match="sent no MySQL greeting within 2 s"):
        build(target)
    assert time.monotonic() - started < 10


def test_missing_mysql_database_is_not_a_wrong_password(mariadb: ServerRecord) -> None:
    """1049 (a user with global grants) and 1044 (a user without) both say the database,
    never "wrong user or password"."""
    import pymysql

    from dbstand.drivers import open_with
    from dbstand.drivers import pymysql as driver
    from dbstand.targets.mysql.managed import admin_options

    root = pymysql.connect(**admin_options(mariadb), autocommit=True)
    try:
        with root.cursor() as cur:
            cur.execute("CREATE OR REPLACE USER 'wide'@'127.0.0.1' IDENTIFIED BY 'widepw'")
            cur.execute("GRANT ALL PRIVILEGES ON *.* TO 'wide'@'127.0.0.1'")
        wide = parse_target_url(f"mysql://wide:widepw@127.0.0.1:{mariadb.port}/no_such_db")
        with pytest.raises(TargetError) as unknown:
            open_with(lambda: driver.connect(wide), wide)
        assert "database 'no_such_db' does not exist" in str(unknown.value)
        narrow = mariadb.target().with_password(mariadb.password)
        narrow = parse_target_url(narrow.secret().rsplit("/", 1)[0] + "/no_such_db")
        with pytest.raises(TargetError) as denied:
            open_with(lambda: driver.connect(narrow), narrow)
        text = str(denied.value)
        assert "may not use database 'no_such_db'" in text and "password was accepted" in text
        assert "wrong user or password" not in text + str(unknown.value)
        bad = parse_target_url(f"mysql://wide:nope@127.0.0.1:{mariadb.port}/dbstand")
        with pytest.raises(TargetError, match="wrong user or password"):
            open_with(lambda: driver.connect(bad), bad)
    finally:
        with contextlib.suppress(Exception), root.cursor() as cur:
            cur.execute("DROP USER IF EXISTS 'wide'@'127.0.0.1'")
        root.close()
