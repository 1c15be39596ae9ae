"""One line, not a traceback (issue 28 item 6): `serve docquery` against a database
that refuses or never answers says so in one line, within the connect limit; Ctrl-C
of a `--cluster local:2` run ends it at once, without the workers' tracebacks."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from tests.faults.helpers import TAG_ENV, one_error_line, orphans, run_tagged


def _refusing_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(("stack", "scheme"), [
    ("docquery-tornado-pymongo", "mongodb://127.0.0.1:{port}/dbstand"),
    ("docquery-tornado-psycopg", "postgresql://dq:secretpw@127.0.0.1:{port}/dbstand"),
], ids=["pymongo", "psycopg"])
@pytest.mark.parametrize("server", ["refusing", "silent"])
def test_serve_docquery_on_a_dead_database_is_one_line(stack: str, scheme: str, server: str,
                                                       request: pytest.FixtureRequest) -> None:
    port = _refusing_port() if server == "refusing" else request.getfixturevalue("silent_port")
    started = time.monotonic()
    result, tag = run_tagged("serve", "docquery", "--stack", stack, "--target",
                             scheme.format(port=port), env={"DBSTAND_CONNECT_TIMEOUT": "2"},
                             timeout=60)
    took = time.monotonic() - started
    assert result.code == 2
    line = one_error_line(result)
    assert line.startswith("dbstand: error: cannot connect to ") and "secretpw" not in line
    assert took < 20, f"took {took:.1f} s"
    assert orphans(tag) == []


def test_ctrl_c_of_a_cluster_run_is_one_line_and_quick(tmp_path: Path) -> None:
    """Ctrl-C at a terminal reaches the whole process group: dbstand and the local
    cluster's worker processes. dbstand alone acts on it: no worker tracebacks, the
    run ends at once (it took 30 s with 4 tracebacks, or went on to the end when the
    KeyboardInterrupt was raised inside Dask's GC callback and lost)."""
    out = tmp_path / "r.jsonl"
    tag = uuid.uuid4().hex
    proc = subprocess.Popen(
        [sys.executable, "-c", "from dbstand.cli.app import main\nmain()", "run", "kv",
         "--target", f"sqlite:///{tmp_path / 'kv.db'}", "--mode", "threads:2", "--op",
         "select", "--rows", "500", "--revs", "300", "--min-iterations", "500",
         "--max-iterations", "600", "--ci", "0.001", "--cluster", "local:2", "-o", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        env={**os.environ, "COLUMNS": "200", TAG_ENV: tag})
    try:
        deadline = time.monotonic() + 120
        while not out.exists():  # the results file is made once the cluster is up
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        time.sleep(3)  # measuring on the workers now
        sent = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C
        _, err = proc.communicate(timeout=60)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert took < 10, f"took {took:.1f} s to end"
    time.sleep(1)
    assert orphans(tag) == []
