"""Network faults from the proxy of a --db-rtt path (Toxiproxy's own toxics, added
through its API mid-case): a connection reset, a stall longer than the read limit,
a connection cut slowly (data stops, the close comes 1.5 s later). For kv, batch,
parking and webtech's db test, each ends in one clear line in a failed case record,
a complete results file (nothing lost), exit code 1, and no process left behind (the
proxy included)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from dbstand.network.route import PROXY_NAME
from dbstand.network.toxiproxy import REQUEST, ToxiproxyAPI

from .helpers import TAG_ENV, Tagged, orphans, start_cli

#: long cases: the fault always lands inside the first (and only) case
LONG = ["--min-iterations", "600", "--max-iterations", "600", "--max-time", "600",
        "--ci", "0.0001", "--pause", "0.1"]
WORKLOADS = {
    "kv": ["run", "kv", "--stack", "{driver}", "--op", "select", "--revs", "500",
           "--rows", "500", "--interval", "0", *LONG],
    "batch": ["run", "batch", "--stack", "{driver}", "--api", "executemany", "--op",
              "insert", "--rows", "200", "--no-limit", *LONG],
    "parking": ["run", "parking", "--stack", "python-raw", "--logging", "off", "--users",
                "1", "--passes", "2", "--batches", "600"],
    # runs of at least 500 requests, not 5,000: a timed run the fault lands in ends at
    # its planned length (at one connection, failures that take the slow cut's 1.5 s
    # each never reach its bound), and 5,000 requests at a loaded machine's rate through
    # the proxy last a minute; 20 runs of at least a second each still hold the fault
    "webtech": ["run", "webtech", "--stack", "go-nethttp", "--test", "db", "--clients", "1",
                "--requests", "500", "--repeats", "20"],
}
#: (toxic type, attributes, what the case's error line says)
FAULTS = {
    "reset": ("reset_peer", {"timeout": 0}, ("reset", "closed", "lost", "terminat", "eof")),
    "stall": ("timeout", {"timeout": 0}, ("did not answer within 3 s",)),
    "slow-cut": ("timeout", {"timeout": 1500}, ("closed", "lost", "eof", "terminat",
                                                "did not answer within 3 s")),
}
#: turns of the proxy after its RTT measurement (about 1,000) and some of the case's own
INSIDE_THE_CASE = 1500


def _proxy_api(run: Tagged, timeout: float = 120) -> ToxiproxyAPI:
    """The API of the Toxiproxy the tagged run started (its `-port` argument)."""
    needle = f"{TAG_ENV}={run.tag}".encode()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if run.proc.poll() is not None:
            result = run.wait(10)
            raise AssertionError(f"the run ended first: {result.stdout}{result.stderr}")
        for entry in Path("/proc").iterdir():
            try:
                if not entry.name.isdigit() or needle not in \
                        (entry / "environ").read_bytes().split(b"\0"):
                    continue
                argv = (entry / "cmdline").read_bytes().decode().split("\0")
            except OSError:
                continue
            if argv and argv[0].endswith("toxiproxy") and "-port" in argv:
                return ToxiproxyAPI(int(argv[argv.index("-port") + 1]))
        time.sleep(0.1)
    raise AssertionError("the run started no Toxiproxy")


def _wait_inside_the_case(api: ToxiproxyAPI, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if api.turns(PROXY_NAME) >= INSIDE_THE_CASE:
                return
        except Exception:  # the proxy's toxics are not there yet
            pass
        time.sleep(0.1)
    raise AssertionError("the case never got going through the proxy")


#: every workload meets every fault: webtech's db test too, whose stalled database
#: connection holds each request until the load engine's request timeout; its run
#: stops once its failures can no longer pass (http_load.py `_bounded`)
PAIRS = [(w, f) for w in WORKLOADS for f in FAULTS]


@pytest.mark.parametrize("workload, fault", PAIRS)
def test_network_fault_fails_the_case_cleanly(workload: str, fault: str, mariadb_url: str,
                                              mariadb: Any, tmp_path: Path) -> None:
    """On MariaDB: PyMySQL has a client-side read limit (libpq has none, so a stalled
    PostgreSQL connection would wait for the kernel)."""
    out = tmp_path / "r.jsonl"
    args = [a.replace("{driver}", "pymysql") for a in WORKLOADS[workload]]
    # each test its own tables: a reset between MariaDB's CREATE TABLE (committed at
    # once) and its registry row leaves a table dbstand will not claim afterwards
    args += ["--prefix", f"dbs_net_{workload}_{fault.replace('-', '_')}_"]
    env = {"DBSTAND_READ_TIMEOUT": "3", "DBSTAND_CONNECT_TIMEOUT": "2"}
    run = start_cli(*args, "--target", mariadb_url, "--db-rtt", "0ms", "-o", str(out),
                    cwd=tmp_path, env=env)
    kind, attributes, reasons = FAULTS[fault]
    try:
        api = _proxy_api(run)
        _wait_inside_the_case(api)
        api.add_toxic(PROXY_NAME, f"fault_{fault}", kind, REQUEST, attributes)
        started = time.monotonic()
        result = run.wait(240)
        elapsed = time.monotonic() - started
    finally:
        if run.proc.poll() is None:
            run.proc.kill()
            run.wait(30)
    assert result.code == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert elapsed < 90, f"the run took {elapsed:.0f} s after the fault: {result.stdout}"
    header, *body, footer = [json.loads(line) for line in out.read_text().splitlines()]
    assert header["type"] == "run" and footer["type"] == "run_end"
    assert footer["status"] == "complete-with-failures" and footer["failed"] == 1
    assert [r["status"] for r in body] == ["failed"]
    error = body[0]["error"]
    assert error and "\n" not in error and mariadb.password not in error
    if workload == "parking":
        # the service answers each call whose database is gone with its own status
        # (not_available, bad_transaction): the suite's check names the first wrong one
        reasons = ("a measured pass failed the suite",)
    elif workload == "webtech":
        # the stack answers 500 (or not at all) once its database connection is gone
        reasons = ("error rate", "errors", "timeout", "read")
    assert any(reason in error.lower() for reason in reasons), error
    case_line = [ln for ln in result.stdout.splitlines() if "case failed" in ln]
    assert len(case_line) == 1, result.stdout
    assert orphans(run.tag) == []
