"""`dbstand serve parking`: foreground service, clean stop, one-line user errors."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import psutil

from process_helpers import default_sigint


def test_serve_answers_and_stops_on_signal(tmp_path: Path) -> None:
    code = "from dbstand.cli.app import main\nmain()"
    proc = subprocess.Popen([sys.executable, "-c", code, "serve", "parking", "--stack",
                             "python-raw", "--target", f"sqlite:///{tmp_path / 's.db'}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "200"},
                            preexec_fn=default_sigint)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert url, line + (proc.stderr.read() if proc.stderr else "")
        children = psutil.Process(proc.pid).children(recursive=True)
        with urllib.request.urlopen(url.group(0) + "get_user_account?user_id=7") as resp:
            assert json.loads(resp.read())["balance"] == "0.00"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]


def test_serve_user_errors(cli, tmp_path: Path) -> None:
    target = f"sqlite:///{tmp_path / 's.db'}"
    result = cli("serve", "parking", "--stack", "python-nope", "--target", target)
    assert result.code == 2 and "unknown parking stack" in result.stderr
    result = cli("serve", "parking", "--stack", "python-raw", "--target", "nonsense")
    assert result.code == 2 and "malformed target URL" in result.stderr
    result = cli("serve", "parking", "--stack", "python-raw", "--target",
                 "postgresql://u@127.0.0.1:1/db")
    assert result.code == 2 and "cannot connect" in result.stderr
    assert "Traceback" not in result.stderr
