"""`dbstand http`: a run whose answers are mostly errors is failed, not ok; an open loop
far below its asked rate is flagged; the results file is taken before the load and a
second run on the same file is refused up front; out-of-range values are one line
naming the option (issue 17, items 4, 5, 6, 11)."""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from .helpers import need_root_mount, one_error_line, orphans, run_tagged, start_cli, tmpfs


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # headers and body go in separate writes: with Nagle's algorithm each answer waited
    # for the client's delayed ACK (40 ms), 200 answers 8 s
    disable_nagle_algorithm = True
    counter: ClassVar[Iterator[int]] = itertools.count()
    served: ClassVar[list[int]] = []

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        n = next(self.counter)
        self.served.append(n)
        if self.path.startswith("/slow"):
            time.sleep(0.05)
        status = 500 if self.path.startswith("/mostly-500") and n % 10 else 200
        body = b"ok" if status == 200 else b"boom"
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def server() -> Iterator[tuple[str, list[int]]]:
    """A small HTTP server in this process: /mostly-500 answers 500 to 9 requests in 10,
    /slow takes 50 ms an answer, anything else is 200."""
    served: list[int] = []
    handler = type("Handler", (_Handler,), {"counter": itertools.count(), "served": served})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", served
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def test_mostly_errors_is_failed_not_ok(server: tuple[str, list[int]], tmp_path: Path) -> None:
    base, _ = server
    out = tmp_path / "r.jsonl"
    result, tag = run_tagged("http", f"{base}/mostly-500", "-n", "200", "-o", str(out))
    assert result.code == 1
    line = one_error_line(result)
    assert "of 200 requests failed" in line and "> 1.0% allowed by --max-error-rate" in line
    _, case, footer = (json.loads(x) for x in out.read_text().splitlines())
    assert case["status"] == "failed" and case["error_rate"] == pytest.approx(0.9, abs=0.01)
    assert footer["status"] == "complete-with-failures"
    assert orphans(tag) == []


def test_max_error_rate_states_the_threshold(server: tuple[str, list[int]],
                                             tmp_path: Path) -> None:
    base, _ = server
    out = tmp_path / "r.jsonl"
    result, _ = run_tagged("http", f"{base}/mostly-500", "-n", "100", "--max-error-rate",
                           "0.95", "-o", str(out))
    assert result.code == 0, result.stderr
    case = json.loads(out.read_text().splitlines()[1])
    assert case["status"] == "ok" and case["max_error_rate"] == 0.95


def test_open_loop_far_below_its_rate_is_flagged(server: tuple[str, list[int]],
                                                 tmp_path: Path) -> None:
    """One connection to a 50 ms server cannot do 1000 requests/s: said on stderr, and
    the record is flagged unstable with the share reached."""
    base, _ = server
    out = tmp_path / "r.jsonl"
    result, _ = run_tagged("http", f"{base}/slow", "--rate", "1000", "-d", "1", "-c", "1",
                           "-o", str(out))
    assert "warning: reached" in result.stderr and "of the asked 1,000/s" in result.stderr
    case = json.loads(out.read_text().splitlines()[1])
    assert case["unstable"] is True and case["rate_reached"] < 0.5
    assert "could not keep up" in case["note"]


def test_results_file_is_taken_before_the_load(server: tuple[str, list[int]],
                                               tmp_path: Path) -> None:
    """An output that cannot be written stops the run before a single request."""
    need_root_mount()
    base, served = server
    with tmpfs(tmp_path / "ro", "ro,size=64k") as folder:
        result, _ = run_tagged("http", f"{base}/", "-n", "50", "-o", str(folder / "r.jsonl"))
    assert result.code == 2
    assert "Read-only file system" in one_error_line(result)
    assert served == []


def test_export_path_checked_before_the_load(server: tuple[str, list[int]],
                                             tmp_path: Path) -> None:
    base, served = server
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result, _ = run_tagged("http", f"{base}/", "-n", "50", "-o", str(tmp_path / "r.jsonl"),
                           "--export", f"json={blocker / 'x.json'}")
    assert result.code == 2
    assert "--export" in one_error_line(result)
    assert served == [] and not (tmp_path / "r.jsonl").exists()


def test_second_run_on_the_same_output_is_refused_up_front(server: tuple[str, list[int]],
                                                           tmp_path: Path) -> None:
    base, _ = server
    out = tmp_path / "same.jsonl"
    first = start_cli("http", f"{base}/", "-d", "3", "-c", "1", "-o", str(out))
    try:
        deadline = time.monotonic() + 30
        while not out.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert out.exists(), "the first run did not create its results file"
        second, _ = run_tagged("http", f"{base}/", "-n", "10", "-o", str(out))
        assert second.code == 2
        assert "already exists" in one_error_line(second)
    finally:
        done = first.wait(60)
    assert done.code == 0, done.stderr
    _, case, footer = (json.loads(x) for x in out.read_text().splitlines())
    assert case["status"] == "ok" and footer["status"] == "complete"
    assert orphans(first.tag) == []


@pytest.mark.parametrize(("args", "expected"), [
    (["-c", "-1"], "-c/--concurrency: connections must be at least 1 (got -1)"),
    (["-n", "-5"], "-n/--requests: the number of requests must be at least 1 (got -5)"),
    (["--threads", "-1"], "--threads: threads must be at least 1 (got -1)"),
    (["-d", "nan"], "-d/--duration: the duration in seconds must be a finite number"),
    (["--rate", "inf"], "--rate: the rate in requests/s must be a finite number"),
    (["-s", "-1"], "-s/--timeout: the timeout in seconds must be more than 0 (got -1)"),
    (["-s", "0"], "-s/--timeout: the timeout in seconds must be more than 0 (got 0)"),
    (["-d", "1e12"], "-d/--duration: the duration in seconds must be at most 604800"),
    (["--max-error-rate", "2"], "--max-error-rate: the share of failed requests must be "
                                "at most 1"),
])
def test_out_of_range_values_name_the_option(args: list[str], expected: str,
                                             tmp_path: Path) -> None:
    result, _ = run_tagged("http", "http://127.0.0.1:9/", *args, "-o",
                           str(tmp_path / "never.jsonl"))
    assert result.code == 2
    line = one_error_line(result)
    assert expected in line and "convert" not in line and "unsigned" not in line
    assert not (tmp_path / "never.jsonl").exists()
