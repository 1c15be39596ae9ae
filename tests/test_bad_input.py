"""User mistakes: one clear line on stderr, exit 2, no traceback, no results file."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbstand.targets.managed import free_port


def assert_one_line_error(res, *needles: str) -> None:
    assert res.code == 2, (res.code, res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("dbstand: error: ")
    assert "Traceback" not in res.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


@pytest.mark.parametrize("args,needle", [
    (["run", "kv", "--stack", "nosuchdriver"], "unknown stack 'nosuchdriver'"),
    (["run", "kv", "--revs", "0"], "--revs must be at least 1"),
    (["run", "kv", "--target", "oracle://x/y"], "unknown scheme"),
    (["run", "kv", "--target", "postgresql://u@:5/db"], "malformed target URL"),
    (["run", "kv", "--op", "truncate"], "unknown kv operation 'truncate'"),
    (["run", "kv", "--mode", "asyncio:25"], "can run none of the modes asyncio:25"),
    (["run", "kv", "--mode", "threads:0"], "worker counts must be between"),
    (["run", "kv", "--target", "sqlite://", "--stack", "psycopg"], "cannot talk to sqlite"),
    (["run", "kv", "--op", "delete", "--rows", "10", "--revs", "20"], "cannot exceed --rows"),
    (["run", "kv", "--distribution", "pareto"], "unknown key distribution"),
    (["run", "kv", "--prefix", "Bad-Prefix"], "--prefix"),
    (["run", "kv", "--target", "sqlite:///x.db?synchronous=normal;drop"], "unsupported option"),
    (["run", "kv", "--pin-cpus", "apart"], "--pin-cpus takes"),
    (["run", "webtech", "--load", "literal"], "--load takes steady or seed"),
    (["run", "docquery", "--load", "literal"], "--load takes steady or seed"),
    (["run", "parking", "--load", "literal"], "--load takes steady or seed"),
])
def test_bad_arguments(cli, tmp_path: Path, args: list[str], needle: str) -> None:
    out = tmp_path / "r.jsonl"
    res = cli(*args, "-o", str(out), cwd=tmp_path)
    assert_one_line_error(res, needle)
    assert not out.exists()


def test_unknown_workload(cli, tmp_path: Path) -> None:
    res = cli("run", "nosuchworkload", cwd=tmp_path)
    assert_one_line_error(res, "unknown workload 'nosuchworkload'", "kv", "batch")
    assert not (tmp_path / "results").exists()


def test_unknown_option_is_one_line(cli) -> None:
    assert_one_line_error(cli("run", "kv", "--revz", "5"), "No such option", "--help")


def test_unknown_workload_in_report_list(cli) -> None:
    res = cli("list", "workloads")
    assert res.code == 0 and "kv" in res.stdout


def test_unreachable_server(cli, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    port = free_port()  # nothing listens there
    res = cli("run", "kv", "--target", f"postgresql://u:pw@127.0.0.1:{port}/db",
              "--stack", "pg8000", "-o", str(out))
    assert_one_line_error(res, "cannot connect", "unreachable")
    assert "pw@" not in res.stderr
    assert not out.exists()


@pytest.mark.parametrize("stack", ["psycopg", "psycopg2", "pg8000"])
def test_wrong_password(cli, pg, tmp_path: Path, stack: str) -> None:
    out = tmp_path / "r.jsonl"
    url = f"postgresql://postgres:not-the-password@127.0.0.1:{pg.port}/dbstand"
    res = cli("run", "kv", "--target", url, "--stack", stack, "-o", str(out))
    assert_one_line_error(res, "authentication failed")
    assert "not-the-password" not in res.stderr
    assert not out.exists()


def test_missing_database(cli, pg, tmp_path: Path) -> None:
    url = pg.target().with_password(pg.password)
    text = url.secret().replace("/dbstand", "/nosuchdb")
    res = cli("run", "kv", "--target", text, "--stack", "psycopg", "-o",
              str(tmp_path / "r.jsonl"))
    assert_one_line_error(res, "nosuchdb")


def test_driver_not_installed(cli_process, tmp_path: Path) -> None:
    """A stack whose driver cannot be imported (import blocked for this process)."""
    out = tmp_path / "r.jsonl"
    res = cli_process("run", "kv", "--target", "postgresql://u@127.0.0.1/db", "--stack", "pg8000",
              "-o", str(out), python_prelude="import sys; sys.modules['pg8000'] = None")
    assert_one_line_error(res, "stack 'pg8000' needs pg8000", "not installed")
    assert not out.exists()


def test_existing_results_file_is_not_overwritten(cli, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    out.write_text("precious\n")
    res = cli("run", "kv", "--op", "select", "--revs", "100", "--rows", "100", "-o", str(out))
    assert_one_line_error(res, "already exists")
    assert out.read_text() == "precious\n"


def test_port_in_use_for_managed_server(cli) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        res = cli("server", "up", "postgresql", "--port", str(port))
    assert_one_line_error(res, f"port {port}", "in use")


def test_report_of_a_non_results_file(cli, tmp_path: Path) -> None:
    bogus = tmp_path / "x.jsonl"
    bogus.write_text('{"hello": 1}\n')
    assert_one_line_error(cli("report", str(bogus)), "not a dbstand results record")
    assert_one_line_error(cli("report", str(tmp_path / "missing.jsonl")), "no such results file")
