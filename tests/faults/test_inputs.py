"""Inputs that used to end in a traceback, a hang or a leaked secret: huge --revs and
--rows, in-memory SQLite with threads, a URL whose password breaks parsing; and the
password handed to a server stack's processes (issue 17, items 8, 10, 11)."""

from __future__ import annotations

import os
from pathlib import Path

import psutil
import pytest

from dbstand.errors import TargetError
from dbstand.targets.managed import ServerRecord
from dbstand.targets.url import parse_target_url

from .helpers import one_error_line, run_tagged


@pytest.mark.parametrize(("args", "expected"), [
    (["--revs", "100000000000", "--op", "select"], "--revs must be at most 10,000,000"),
    (["--rows", "1000000000", "--op", "select"], "--rows must be at most 100,000,000"),
    (["--mode", "threads:2", "--op", "select"], "an in-memory SQLite database belongs to the "
                                                "one connection that opened it"),
])
def test_kv_sizes_and_modes_are_one_line(args: list[str], expected: str,
                                         tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    result, _ = run_tagged("run", "kv", *args, "-o", str(out), cwd=tmp_path, timeout=60)
    assert result.code == 2
    assert expected in one_error_line(result)
    assert not out.exists()


@pytest.mark.parametrize("url", [
    "postgresql://postgres:ab/cdSECRET@127.0.0.1:5432/db",
    "postgresql://postgres:ab/cd...@",
    "postgresql://postgres:s3#SECRET@host/db",
    "postgresql://postgres:s3?SECRET@host/db",
    "mysql://root:p[SECRET@host/db",
    "postgresql://postgres:12/SECRET@host/db",
    "postgresql://postgres:abSECRET@host:port/db",
])
def test_no_part_of_a_password_is_shown_when_a_url_fails(url: str) -> None:
    with pytest.raises(TargetError) as caught:
        parse_target_url(url)
    text = str(caught.value)
    password = url.split("://", 1)[1].split(":", 1)[1].rpartition("@")[0]
    for piece in {password, *password.replace("#", "/").replace("?", "/").split("/")} - {""}:
        assert piece not in text.replace("***", ""), text
    assert "SECRET" not in text


def test_url_password_is_not_echoed_by_the_cli(tmp_path: Path) -> None:
    result, _ = run_tagged("run", "kv", "--target", "postgresql://postgres:ab/cdSECRET@x/db",
                           "-o", str(tmp_path / "r.jsonl"), cwd=tmp_path)
    assert result.code == 2
    line = one_error_line(result)
    assert "SECRET" not in line and "ab" not in line.split("malformed target URL")[1]
    assert "percent-encoded" in line


def test_stack_processes_get_the_password_by_a_0600_file(pg: ServerRecord,
                                                         tmp_path: Path) -> None:
    """The parking service on PostgreSQL: no process of its tree has the password in its
    environment or command line; the file it reads it from is the owner's alone."""
    from dbstand.workloads.parking.app import running_service

    target = pg.target()
    assert target.password
    with running_service("python-raw", target, prefix="dbspw_") as service:
        root = psutil.Process(service.pid)
        tree = [root, *root.children(recursive=True)]
        secret_files = []
        for proc in tree:
            environ = Path(f"/proc/{proc.pid}/environ").read_bytes()
            cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes()
            assert target.password.encode() not in environ + cmdline, proc.cmdline()
            for entry in environ.split(b"\0"):
                if entry.startswith(b"DBSTAND_DB_PASSWORD_FILE="):
                    secret_files.append(Path(entry.split(b"=", 1)[1].decode()))
        assert secret_files
        for path in set(secret_files):
            assert path.read_text() == target.password
            assert os.stat(path).st_mode & 0o777 == 0o600
    from contextlib import closing

    from dbstand.workloads.parking import db, schema

    with closing(db.connect(target)) as conn:
        schema.drop_schema(conn, "dbspw_")
