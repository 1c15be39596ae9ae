"""`dbstand http`: ab-like output, a results record, and one clear line (no
traceback, non-zero exit) for the user's mistakes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hdrh.histogram import HdrHistogram

from .conftest import TestServer, free_port


def test_ab_style_run_prints_summary_and_writes_record(cli, test_server: TestServer,
                                                        tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    p = cli("http", test_server.url(), "-n", "300", "-c", "4", "-k", "-o", str(out),
            cwd=tmp_path)
    assert p.code == 0, p.stderr
    for text in ("Complete requests:      300", "Failed requests:        0",
                 "Requests per second:", "Percentage of the requests served within a certain",
                 "100%", "(longest request)"):
        assert text in p.stdout
    header, case, footer = (json.loads(line) for line in out.read_text().splitlines())
    assert header["type"] == "run" and header["workload"] == "http"
    assert footer["type"] == "run_end" and footer["status"] == "complete"
    assert case["type"] == "case" and case["status"] == "ok" and case["workload"] == "http"
    assert case["mode"] == "closed" and case["params"]["connections"] == 4
    assert case["http"]["status_counts"] == {"200": 300}
    assert case["ops_per_s"] > 0 and case["latency_us"]["p50"] > 0
    assert HdrHistogram.decode(case["latency_hdr"].encode()).get_total_count() == 300
    assert case["environment"]["cpu_logical"] >= 1


def test_wrk_style_open_loop(cli, test_server: TestServer, tmp_path: Path) -> None:
    out = tmp_path / "open.jsonl"
    p = cli("http", test_server.url(), "-d", "1", "--rate", "100", "-c", "2", "-o", str(out),
            cwd=tmp_path)
    assert p.code == 0, p.stderr
    assert "open loop at 100 requests/s" in p.stdout and "Target rate" in p.stdout
    case = json.loads(out.read_text().splitlines()[1])
    assert case["mode"] == "open" and case["http"]["requests"] == 100


def test_all_failures_exit_non_zero_after_writing_the_record(cli, test_server: TestServer,
                                                             tmp_path: Path) -> None:
    out = tmp_path / "bad.jsonl"
    p = cli("http", test_server.url("/status/500"), "-n", "20", "-o", str(out), cwd=tmp_path)
    assert p.code != 0
    assert "Non-2xx responses:      20" in p.stdout
    assert p.stderr.strip().splitlines() == [
        "dbstand: error: no request succeeded (20 failed: 0 socket errors, 20 non-2xx)"]
    case = json.loads(out.read_text().splitlines()[1])
    assert case["status"] == "failed" and case["http"]["successes"] == 0


@pytest.mark.parametrize("case", ["malformed-url", "nothing-listening", "zero-connections",
                                  "bad-header", "time-and-duration"])
def test_user_mistakes_are_one_line_and_non_zero(cli, case: str, tmp_path: Path) -> None:
    port = free_port()
    args = {
        "malformed-url": ["localhost:8080/x", "-n", "5"],
        "nothing-listening": [f"http://127.0.0.1:{port}/", "-n", "5"],
        "zero-connections": [f"http://127.0.0.1:{port}/", "-c", "0", "-n", "5"],
        "bad-header": [f"http://127.0.0.1:{port}/", "-H", "no colon", "-n", "5"],
        "time-and-duration": [f"http://127.0.0.1:{port}/", "-t", "1", "-d", "1"],
    }[case]
    p = cli("http", *args, "-o", str(tmp_path / "never.jsonl"), cwd=tmp_path)
    assert p.code == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dbstand: error: "), p.stderr
    assert "Traceback" not in p.stderr + p.stdout
    assert not (tmp_path / "never.jsonl").exists()
    expected = {
        "malformed-url": "malformed URL",
        "nothing-listening": f"127.0.0.1:{port}: Connection refused",
        "zero-connections": "connections must be at least 1",
        "bad-header": "-H expects",
        "time-and-duration": "not both",
    }[case]
    assert expected in lines[0]
