"""Two runs with the same prefix on the same database: the second refuses in one line
before measuring; another prefix runs beside it; a killed run leaves no lock behind
(issue 17, item 6)."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from dbstand.targets.managed import ServerRecord
from dbstand.targets.run_lock import RunLocked, advisory_key
from dbstand.targets.sqlite.lock import sqlite_lock_path
from dbstand.targets.url import TargetURL, parse_target_url
from dbstand.workloads.run_lock import run_lock

from .helpers import one_error_line, orphans, run_tagged, start_cli

KV = ["run", "kv", "--op", "select", "--revs", "200", "--rows", "200", "--min-iterations",
      "2", "--max-iterations", "3", "--no-probes"]
#: runs until interrupted (up to 3 minutes): the test stops it with Ctrl-C, however slow
#: the runs beside it are on a loaded machine
LONG = ["run", "kv", "--op", "select", "--revs", "2000", "--rows", "2000",
        "--min-iterations", "600", "--max-iterations", "600", "--max-time", "600", "--ci",
        "0.0001", "--pause", "0.3", "--no-probes"]


def _wait_for(predicate, timeout: float, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_second_run_on_the_same_sqlite_prefix_refuses(tmp_path: Path) -> None:
    db = tmp_path / "kv.db"
    url = f"sqlite:///{db}"
    lock = sqlite_lock_path(parse_target_url(url), "dbstand_")
    first = start_cli(*LONG, "--target", url, "-o", str(tmp_path / "first.jsonl"),
                      cwd=tmp_path)
    try:
        _wait_for(lock.exists, 60, "the first run's lock")
        second, _ = run_tagged(*KV, "--target", url, "-o", str(tmp_path / "second.jsonl"),
                               cwd=tmp_path)
        assert second.code == 2
        line = one_error_line(second)
        assert "another dbstand run is using prefix 'dbstand_'" in line
        assert str(lock) in line
        assert not (tmp_path / "second.jsonl").exists()
        other, _ = run_tagged(*KV, "--target", url, "--prefix", "other_", "-o",
                              str(tmp_path / "other.jsonl"), cwd=tmp_path)
        assert other.code == 0, other.stderr  # another prefix is another set of tables
    finally:
        first.proc.send_signal(signal.SIGINT)
        done = first.wait(120)
    assert done.code == 130
    assert not lock.exists()
    assert orphans(first.tag) == []


def test_a_killed_run_leaves_no_lock(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'kv.db'}"
    target = parse_target_url(url)
    first = start_cli(*LONG, "--target", url, "-o", str(tmp_path / "r.jsonl"), cwd=tmp_path)
    _wait_for(sqlite_lock_path(target, "dbstand_").exists, 60, "the run's lock")
    first.proc.kill()
    first.wait(30)
    with run_lock(target, "dbstand_"):  # free at once: the kernel dropped the flock
        pass


@pytest.mark.parametrize("server", ["pg", "mariadb", "tarantool_srv"])
def test_a_held_lock_refuses_a_run_on_a_server(server: str, request: pytest.FixtureRequest,
                                               tmp_path: Path) -> None:
    record: ServerRecord = request.getfixturevalue(server)
    target: TargetURL = record.target()
    with run_lock(target, "dbslock_"):
        with pytest.raises(RunLocked), run_lock(target, "dbslock_"):
            pass  # another session of this very process is refused as well
        result, _ = run_tagged(*KV, "--target", target.secret(), "--prefix", "dbslock_",
                               "-o", str(tmp_path / "r.jsonl"), cwd=tmp_path)
        assert result.code == 2
        line = one_error_line(result)
        assert "another dbstand run is using prefix 'dbslock_'" in line
        assert record.password not in line
        assert not (tmp_path / "r.jsonl").exists()
    with run_lock(target, "dbslock_"):  # released with its holder
        pass


def test_a_killed_run_frees_a_postgresql_lock(pg: ServerRecord, tmp_path: Path) -> None:
    """The advisory lock belongs to the dead run's session: the server frees it."""
    target = pg.target()
    first = start_cli(*LONG, "--target", target.secret(), "--stack", "psycopg",
                      "--prefix", "dbskill_", "-o", str(tmp_path / "r.jsonl"), cwd=tmp_path)

    from dbstand.drivers import psycopg

    # Looked up in pg_locks, not taken: a probe that took the lock now and then could
    # hold it at the moment the run tries it, and the run would refuse and end.
    key = advisory_key(target, "dbskill_") & 0xFFFF_FFFF_FFFF_FFFF  # the oids' unsigned halves

    def locked() -> bool:
        with psycopg.connect(target) as conn:
            row = conn.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"
                " AND database = (SELECT oid FROM pg_database WHERE datname ="
                " current_database()) AND classid = %s AND objid = %s AND objsubid = 1",
                (key >> 32, key & 0xFFFF_FFFF)).fetchone()
        return row is not None and row[0] > 0

    try:
        _wait_for(locked, 120, "the run's advisory lock")
        with pytest.raises(RunLocked), run_lock(target, "dbskill_"):
            pass  # the lock seen is the one a run takes
        first.proc.kill()
        first.wait(30)
        _wait_for(lambda: not locked(), 30, "the server to free the dead run's lock")
        with run_lock(target, "dbskill_"):
            pass
        assert orphans(first.tag) == []
    finally:
        if first.proc.poll() is None:
            first.proc.kill()
            first.wait(30)
        with psycopg.connect(target) as conn:  # what the killed run left
            conn.execute("DROP TABLE IF EXISTS dbskill_kv, dbskill_owned")
