"""Small ones (issue 28 item 9): options named as the command has them, an unknown
workload or one a stack does not implement refused up front, `--workers 0` refused,
and a read-only state folder that a run only reads from is no error."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.faults.helpers import need_root_mount, one_error_line, run_tagged, tmpfs

from dbstand.targets.managed import ServerRecord

KV_FAST = ["--op", "select", "--revs", "200", "--rows", "300", "--min-iterations", "2",
           "--max-iterations", "3"]


@pytest.mark.parametrize("workload", ["docquery", "webtech"])
def test_repeats_names_its_own_option(tmp_path: Path, workload: str) -> None:
    result, _ = run_tagged("run", workload, "--repeats", "1", cwd=tmp_path)
    assert result.code == 2
    assert one_error_line(result).endswith(
        "--repeats must be from 2 to 100 (a 95% interval needs two runs)")


def test_webtech_workers_zero_is_refused(tmp_path: Path) -> None:
    result, _ = run_tagged("run", "webtech", "--workers", "0", cwd=tmp_path)
    assert result.code == 2
    assert one_error_line(result).endswith("--workers must be from 1 to 1024 (got 0)")


def test_stack_list_of_an_unknown_workload_is_refused() -> None:
    result, _ = run_tagged("stack", "list", "--workload", "nosuch")
    assert result.code == 2
    assert "no stack implements workload 'nosuch' (known: " in one_error_line(result)


def test_stack_start_with_a_workload_it_does_not_implement_is_refused() -> None:
    result, _ = run_tagged("stack", "start", "static-nginx", "--workload", "parking",
                           timeout=60)
    assert result.code == 2
    assert one_error_line(result).endswith(
        "stack 'static-nginx' implements webtech, not parking")


def test_read_only_state_folder_is_not_a_connection_error(tmp_path: Path,
                                                          mariadb: ServerRecord) -> None:
    """A run only reads the state folder (to find the password of a `server up` server
    for a URL without one): a read-only one is no reason to fail, and never the reason
    given for a connection that failed."""
    need_root_mount()
    url = mariadb.target()
    with tmpfs(tmp_path / "home", "ro,size=64k") as home:
        ok, _ = run_tagged("run", "kv", "--target", url.secret(), "--stack", "pymysql",
                           *KV_FAST, "-o", str(tmp_path / "k.jsonl"),
                           env={"DBSTAND_HOME": str(home)})
        assert ok.code == 0, ok.stderr
        bare, _ = run_tagged("run", "kv", "--target", url.with_password(None).secret(),
                             "--stack", "pymysql", *KV_FAST, "-o", str(tmp_path / "b.jsonl"),
                             env={"DBSTAND_HOME": str(home / "sub")})
    assert bare.code == 2
    line = one_error_line(bare)
    assert "Read-only file system" not in line and "wrong user or password" in line, line
