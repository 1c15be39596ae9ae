"""Every load ends (issue 28 item 2): against a server that accepts and never
answers, `-d` bounds the whole run (what is in flight at the end counts as
unanswered after a short grace, not waited for until its timeout), and Ctrl-C or
SIGTERM end the run at once, whatever `-s`."""

from __future__ import annotations

import json
import signal
import socket
import time
from pathlib import Path

import pytest
from tests.faults.helpers import one_error_line, orphans, run_tagged, start_cli

GRACE_S = 0.5  # the engine's END_GRACE


@pytest.mark.parametrize("io", ["io_uring", "epoll"])
def test_duration_bounds_the_run_against_a_silent_server(silent_port: int, tmp_path: Path,
                                                         io: str) -> None:
    out = tmp_path / "r.jsonl"
    started = time.monotonic()
    run = start_cli("http", f"http://127.0.0.1:{silent_port}/", "-d", "1", "-c", "4",
                    "-s", "60", "-o", str(out),
                    env={"DBSTAND_LOADGEN_IO": "epoll"} if io == "epoll" else None)
    result = run.wait(30)
    took = time.monotonic() - started
    assert result.code == 1, result.stderr  # every request failed: a failed case
    assert took < 1 + GRACE_S + 4, f"-d 1 took {took:.1f} s"
    case = [json.loads(x) for x in out.read_text().splitlines()][1]
    assert case["status"] == "failed"
    assert case["http"]["requests"] == 4 and case["http"]["errors"]["timeout"] == 4, case
    assert orphans(run.tag) == []


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_ends_a_load_at_once(silent_port: int, tmp_path: Path,
                                      sig: signal.Signals) -> None:
    out = tmp_path / "r.jsonl"
    run = start_cli("http", f"http://127.0.0.1:{silent_port}/", "-n", "100", "-c", "2",
                    "-s", "600", "-o", str(out))
    time.sleep(2.0)  # the load is under way: two requests wait for answers
    assert run.proc.poll() is None
    sent = time.monotonic()
    run.proc.send_signal(sig)
    result = run.wait(30)
    took = time.monotonic() - sent
    assert result.code == 130, result.stderr
    assert took < 2.0, f"the run took {took:.1f} s to end after {sig.name}"
    assert "Traceback" not in result.stderr
    _, case, footer = (json.loads(x) for x in out.read_text().splitlines())
    assert footer["status"] == "interrupted"
    # what was measured is kept: the two requests given up count as unanswered
    assert case["interrupted"] is True and case["status"] == "failed"
    assert case["error"].startswith("interrupted after ")
    assert case["http"]["requests"] == 2 and case["http"]["errors"]["timeout"] == 2, case
    assert orphans(run.tag) == []


def test_verify_parking_on_a_silent_service_ends_by_its_timeout(silent_port: int) -> None:
    started = time.monotonic()
    result, tag = run_tagged("verify", "parking", "--url", f"http://127.0.0.1:{silent_port}/",
                             "--timeout", "1", timeout=60)
    took = time.monotonic() - started
    assert result.code == 1, result.stderr
    assert "does not conform" in " ".join(result.stdout.split())
    assert took < 20, f"took {took:.1f} s (5 scenarios of at most 1 s each)"
    assert orphans(tag) == []


def test_a_refused_cluster_scheduler_fails_fast(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    started = time.monotonic()
    result, _ = run_tagged("http", "http://127.0.0.1:9/", "-n", "1", "--cluster",
                           f"tcp://127.0.0.1:{port}", "-o", str(tmp_path / "r.jsonl"),
                           timeout=60)
    assert result.code == 2
    assert one_error_line(result).endswith(
        f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}: connection refused (no "
        "scheduler listens there)")
    assert time.monotonic() - started < 10
    assert not (tmp_path / "r.jsonl").exists()
