"""No server lost (issue 28 item 3): the state folder is checked before anything
starts; what a SIGKILLed dbstand left (a throwaway server, a stack's work folder with
its password file) is claimed before it can outlive dbstand, and the next command
clears it, but never what a live (concurrent) dbstand holds."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.faults.helpers import (
    need_root_mount,
    one_error_line,
    orphans,
    run_tagged,
    start_cli,
    tmpfs,
)

#: a dbstand process that starts a throwaway Tarantool and then dies by SIGKILL (or,
#: with "live", waits to be killed by the test)
KILLED_AFTER_START = """
import os, signal, sys, time
from dbstand.targets.tarantool.managed import ManagedTarantool
server = ManagedTarantool()
record = server.start()
print(record.pid, record.base_dir, flush=True)
if sys.argv[1] == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
time.sleep(600)
"""


def _start_owner(mode: str, home: Path, tag: str) -> tuple[subprocess.Popen[str], int, Path]:
    proc = subprocess.Popen([sys.executable, "-c", KILLED_AFTER_START, mode],
                            stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "DBSTAND_HOME": str(home),
                                 "DBSTAND_FAULT_TAG": tag})
    assert proc.stdout is not None
    pid, folder = proc.stdout.readline().split()
    return proc, int(pid), Path(folder)


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def test_a_read_only_state_folder_starts_nothing(tmp_path: Path) -> None:
    need_root_mount()
    before = set(Path(tempfile.gettempdir()).glob("dbstand-postgresql-*"))
    with tmpfs(tmp_path / "home", "ro,size=64k") as home:
        result, tag = run_tagged("server", "up", "postgresql", env={"DBSTAND_HOME": str(home)})
    assert result.code == 2
    assert "cannot write dbstand's state folder" in one_error_line(result)
    assert "Read-only file system" in result.stderr
    assert orphans(tag) == []
    assert set(Path(tempfile.gettempdir()).glob("dbstand-postgresql-*")) == before


def test_the_next_command_clears_a_killed_runs_server(tmp_path: Path) -> None:
    home = tmp_path / "home"
    proc, pid, folder = _start_owner("kill", home, "owner-killed")
    proc.wait(30)
    assert proc.returncode == -signal.SIGKILL
    assert _running(pid) and folder.is_dir()  # left behind, with no record
    claims = list((home / "claims").glob("*.json"))
    assert len(claims) == 1 and json.loads(claims[0].read_text())["folder"] == str(folder)
    result, _ = run_tagged("server", "status", env={"DBSTAND_HOME": str(home)})
    assert result.code == 0, result.stderr
    assert (f"cleared what an earlier dbstand (pid {proc.pid}, gone) left of its tarantool "
            f"server") in result.stderr
    assert not _running(pid)
    assert not folder.exists()
    assert not list((home / "claims").glob("*.json"))


def test_a_live_runs_server_is_never_cleared(tmp_path: Path) -> None:
    home = tmp_path / "home"
    proc, pid, folder = _start_owner("live", home, "owner-live")
    try:
        result, _ = run_tagged("server", "status", env={"DBSTAND_HOME": str(home)})
        assert result.code == 0, result.stderr
        assert "cleared" not in result.stderr
        assert _running(pid) and folder.is_dir()
    finally:
        proc.kill()
        proc.wait()
        run_tagged("server", "status", env={"DBSTAND_HOME": str(home)})
    assert not _running(pid) and not folder.exists()


def test_a_killed_serve_leaves_no_stack_behind(tmp_path: Path) -> None:
    """SIGKILL of `serve parking`: its stack (in a session of its own) and its work
    folder with the password file are cleared by the next command."""
    home = tmp_path / "home"
    env = {"DBSTAND_HOME": str(home)}
    serve = start_cli("serve", "parking", "--stack", "python-raw", "--target",
                      f"sqlite:///{tmp_path / 'p.db'}", env=env)
    assert serve.proc.stdout is not None
    deadline = time.monotonic() + 120
    while "app server pid" not in serve.proc.stdout.readline():
        assert time.monotonic() < deadline and serve.proc.poll() is None
    claim = json.loads(next((home / "claims").glob("*.json")).read_text())
    work = Path(claim["folder"])
    assert work.is_dir() and claim["sessions"]
    serve.proc.kill()
    serve.proc.wait()
    time.sleep(0.5)
    left = orphans(serve.tag)
    result, _ = run_tagged("server", "status", env=env)
    assert result.code == 0, result.stderr
    assert "left of its stack python-raw" in result.stderr
    assert orphans(serve.tag) == [], f"before the sweep: {left}"
    assert not work.exists()
