"""batch: user mistakes are one line on stderr, exit 2, and no results file."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from test_bad_input import assert_one_line_error


@pytest.mark.parametrize("args,needles", [
    (["--stack", "sqlite3", "--api", "copy"],
     ["stack 'sqlite3' has no batch api 'copy'", "it has: executemany, values"]),
    (["--stack", "sqlite3", "--api", "executemany,execute_values"],
     ["no chosen stack has the batch api 'execute_values'"]),
    (["--rows", "0"], ["--rows must be at least 1"]),
    (["--rows", "100,-5"], ["--rows must be at least 1 (got -5)"]),
    (["--rows", "ten"], ["--rows: 'ten' is not a whole number"]),
    (["--op", "upsert"], ["unknown batch operation 'upsert'", "insert, update, delete"]),
    (["--stack", "pg8000"], ["stack 'pg8000' does not implement the batch workload"]),
    (["--stack", "psycopg"], ["stack 'psycopg' cannot talk to sqlite"]),
    (["--page-size", "0"], ["--page-size must be between 1 and"]),
    (["--large-repeats", "2"], ["--large-repeats must be at least 3"]),
    (["--stack", "nosuchdriver"], ["unknown stack 'nosuchdriver'"]),
    (["--prefix", "Bad"], ["--prefix"]),
])
def test_bad_batch_arguments(cli, tmp_path: Path, args: list[str], needles: list[str]) -> None:
    out = tmp_path / "r.jsonl"
    res = cli("run", "batch", "--target", f"sqlite:///{tmp_path}/b.db", *args, "-o", str(out),
              cwd=tmp_path)
    assert_one_line_error(res, *needles)
    assert not out.exists()


def test_api_that_does_not_do_the_op(cli, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    res = cli("run", "batch", "--target", f"sqlite:///{tmp_path}/b.db", "--stack",
              "sqlalchemy-orm", "--api", "bulk_insert", "--op", "delete", "-o", str(out))
    assert_one_line_error(res, "api bulk_insert does not do delete")
    assert not out.exists()


def test_unreachable_postgresql(cli, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    with socket.socket() as sock:  # bound, never listening: refused, and nobody takes it
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        res = cli("run", "batch", "--target", f"postgresql://u:pw@127.0.0.1:{port}/db",
                  "--stack", "asyncpg", "-o", str(out))
    assert_one_line_error(res, "cannot connect", "unreachable")
    assert "pw@" not in res.stderr
    assert not out.exists()


def test_list_apis(cli) -> None:
    res = cli("list", "apis")
    assert res.code == 0, res.stderr
    for name in ("execute_values", "prepare+execute_batch", "copy_records_to_table",
                 "unnest", "execute_loop", "bulk_update", "limit:server-side"):
        assert name in res.stdout
    assert_one_line_error(cli("list", "apis", "--stack", "pg8000"),
                          "does not implement the batch workload")
