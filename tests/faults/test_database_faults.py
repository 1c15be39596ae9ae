"""The database fails under a run: killed (SIGKILL) or stopped (SIGSTOP) for longer
than the read limit. Each ends in a clear record per case, exit code 1, a complete
results file, and no process left behind (issue 17: no hang, no false ok)."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

from .helpers import orphans, start_cli

#: a case that lasts minutes unless its database fails (the tests make it fail), so the
#: fault always lands inside it however loaded the machine is
SLOW_KV = ["--revs", "2000", "--rows", "2000", "--min-iterations", "600", "--max-iterations",
           "600", "--max-time", "600", "--ci", "0.0001", "--pause", "0.2"]


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _wait_for_header(out: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not (out.exists() and out.stat().st_size > 0):
        assert time.monotonic() < deadline, "the run never started measuring"
        time.sleep(0.05)
    time.sleep(1.0)  # well inside the first case's measurement


def _check_honest(records: list[dict[str, Any]], password: str, cases: int) -> list[str]:
    header, *body, footer = records
    assert header["type"] == "run" and footer["type"] == "run_end"
    assert footer["status"] == "complete-with-failures" and footer["failed"] == cases
    assert [r["status"] for r in body] == ["failed"] * cases
    errors = [r["error"] for r in body]
    for error in errors:
        assert error and "\n" not in error and "Traceback" not in error
        assert password not in error
    return errors


def test_database_killed_mid_run(tmp_path: Path) -> None:
    from dbstand.targets.postgresql.managed import ManagedPostgres

    out = tmp_path / "r.jsonl"
    with ManagedPostgres() as record:
        run = start_cli("run", "kv", "--target", record.target().secret(), "--stack",
                        "psycopg", "--op", "select,insert,update", *SLOW_KV, "-o", str(out),
                        cwd=tmp_path)
        try:
            _wait_for_header(out)
            os.kill(record.pid, signal.SIGKILL)
            result = run.wait(180)
        finally:
            if run.proc.poll() is None:
                run.proc.kill()
                run.wait(30)
    assert result.code == 1, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    first, *later = _check_honest(_records(out), record.password, 3)
    assert "closed" in first.lower() or "terminat" in first.lower() or "lost" in first.lower()
    for error in later:
        assert "cannot connect" in error and "server unreachable" in error
    assert orphans(run.tag) == []


def test_database_stopped_longer_than_the_read_limit(tmp_path: Path) -> None:
    """MariaDB frozen by SIGSTOP: the case in progress fails when its read limit (3 s
    here, DBSTAND_READ_TIMEOUT) passes, the next ones when no greeting comes within
    the connect limit; the run ends instead of hanging."""
    from dbstand.targets.mysql.managed import ManagedMariaDB

    out = tmp_path / "r.jsonl"
    env = {"DBSTAND_READ_TIMEOUT": "3", "DBSTAND_CONNECT_TIMEOUT": "2"}
    with ManagedMariaDB() as record:
        run = start_cli("run", "kv", "--target", record.target().secret(), "--stack",
                        "pymysql", "--op", "select,insert", *SLOW_KV, "-o", str(out),
                        cwd=tmp_path, env=env)
        try:
            _wait_for_header(out)
            os.kill(record.pid, signal.SIGSTOP)
            started = time.monotonic()
            result = run.wait(180)
            elapsed = time.monotonic() - started
        finally:
            os.kill(record.pid, signal.SIGCONT)
            if run.proc.poll() is None:
                run.proc.kill()
                run.wait(30)
    assert result.code == 1, result.stderr
    assert elapsed < 60, f"the run took {elapsed:.0f} s after the database froze"
    stalled, refused = _check_honest(_records(out), record.password, 2)
    assert "did not answer within 3 s; DBSTAND_READ_TIMEOUT sets that limit" in stalled
    assert "sent no MySQL greeting within 2 s" in refused
    assert orphans(run.tag) == []
