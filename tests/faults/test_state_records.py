"""State records that can be repaired (issue 28 item 4): a corrupt record is named
with what to do, `server down` clears it, the others still work, a run never fails
because of it; DBSTAND_HOME that is a file is one line; `server down` says what it
really did with a record's folder."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from tests.faults.helpers import one_error_line, run_tagged

from dbstand.targets.managed import ServerRecord

CORRUPT = {"garbage": "{not json", "empty": "",
           "wrong-types": json.dumps({"kind": "tarantool", "pid": "x", "port": [],
                                      "url": 1, "password": None, "base_dir": 2,
                                      "log_path": 3})}


def _record(home: Path, kind: str, text: str) -> Path:
    folder = home / "servers"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{kind}.json"
    path.write_text(text)
    return path


@pytest.mark.parametrize("text", CORRUPT.values(), ids=CORRUPT.keys())
def test_a_corrupt_record_is_named_and_down_clears_it(tmp_path: Path, text: str) -> None:
    env = {"DBSTAND_HOME": str(tmp_path)}
    path = _record(tmp_path, "tarantool", text)
    status, _ = run_tagged("server", "status", env=env)
    assert status.code == 0, status.stderr
    assert f"warning: the record of the managed tarantool server is corrupt: {path}" in \
        " ".join(status.stderr.split())
    up, _ = run_tagged("server", "up", "tarantool", env=env)
    assert up.code == 2
    assert "`dbstand server down tarantool` removes it" in one_error_line(up)
    down, _ = run_tagged("server", "down", "tarantool", env=env)
    assert down.code == 0, down.stderr
    assert "was corrupt: removed it" in " ".join(down.stdout.split())
    assert not path.exists()


def test_a_run_is_not_broken_by_a_corrupt_record(tmp_path: Path, mariadb: ServerRecord
                                                 ) -> None:
    _record(tmp_path, "mysql", "{not json")
    result, _ = run_tagged("run", "kv", "--target", mariadb.target().secret(), "--stack",
                           "pymysql", "--op", "select", "--revs", "200", "--rows", "300",
                           "--min-iterations", "2", "--max-iterations", "3",
                           "-o", str(tmp_path / "k.jsonl"), env={"DBSTAND_HOME": str(tmp_path)})
    assert result.code == 0, result.stderr


def test_a_state_folder_that_is_a_file_is_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.write_text("")
    result, _ = run_tagged("server", "up", "tarantool", env={"DBSTAND_HOME": str(home)})
    assert result.code == 2
    assert one_error_line(result).endswith(
        f"dbstand's state folder {home} is a file, not a folder (set DBSTAND_HOME to a "
        "folder)")


def test_down_says_the_truth_about_a_folder_it_did_not_make(tmp_path: Path) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    _record(tmp_path, "tarantool", json.dumps({
        "kind": "tarantool", "pid": gone.pid, "port": 1, "url": "tarantool://x@127.0.0.1:1",
        "password": "p", "base_dir": "/etc", "log_path": "/etc/x.log"}))
    result, _ = run_tagged("server", "down", "tarantool", env={"DBSTAND_HOME": str(tmp_path)})
    assert result.code == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert "its data folder /etc was left alone (not a folder dbstand made)" in text
    assert "was removed" not in text.replace("its record was removed", "")
    assert Path("/etc/passwd").exists()
