"""Results files: appended per case, a crash keeps finished cases, a torn line is flagged."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from dbstand.errors import UserError
from dbstand.results.store import ResultsWriter, read_results
from process_helpers import default_sigint
from waiting import wait_until


def test_torn_last_line_is_reported_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    w = ResultsWriter(path)
    w.append({"schema": "dbstand.result/1", "type": "run", "run_id": "x", "workload": "kv"})
    w.append({"schema": "dbstand.result/1", "type": "case", "op": "select", "status": "ok"})
    w.close()
    with open(path, "a") as fh:
        fh.write('{"schema": "dbstand.result/1", "type": "ca')
    res = read_results(path)
    assert len(res.cases) == 1 and not res.complete
    assert res.warnings and "torn" in res.warnings[0]


def test_writer_refuses_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text("x")
    with pytest.raises(UserError):
        ResultsWriter(path).open()


def test_interrupted_run_keeps_finished_cases(tmp_path: Path) -> None:
    """SIGINT in the middle of a run: finished cases stay, the end record says so."""
    out = tmp_path / "r.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "dbstand", "run", "kv", "--revs", "2000", "--rows", "2000",
         "--min-iterations", "30", "--max-iterations", "30", "--ci", "0.0001", "--pause", "0.05",
         "-o", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=default_sigint)
    try:
        wait_until(lambda: out.exists() and any('"type":"case"' in line
                                                for line in out.read_text().splitlines()),
                   120, "the first finished case in the results file", interval=0.1)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    assert recs[-1]["type"] == "run_end" and recs[-1]["status"] == "interrupted"
    finished = [r for r in recs if r["type"] == "case"]
    assert 1 <= len(finished) < 6 and all(r["status"] == "ok" for r in finished)
    assert "interrupted" in read_results(out).status
    assert os.path.getsize(out) > 0
