"""webtech's `--tls off,on` (docs/tls.md): the same cases behind one managed nginx
terminating TLS, its CPU apart, the handshake's cost, the TLS table; the terminator
stopped with the run, on SIGTERM too."""

from __future__ import annotations

import contextlib
import json
import re
import signal
import time
from pathlib import Path
from typing import Any

import psutil
from tests.faults.helpers import one_error_line, orphans, run_tagged, start_cli

from dbstand.report.model import case_key

FRONT_FOLDER = "dbstand-tls-front-"


def cases(path: Path) -> list[dict[str, Any]]:
    return [r for r in map(json.loads, path.read_text().splitlines()) if r["type"] == "case"]


def test_tls_axis_on_a_static_stack(mariadb_url: str, tmp_path: Path) -> None:
    out = tmp_path / "w.jsonl"
    result, tag = run_tagged("run", "webtech", "--stack", "static-nginx", "--test", "file",
                             "--clients", "2", "--load", "seed", "--requests", "50",
                             "--repeats", "2",
                             "--target", mariadb_url, "--prefix", "dbs_tls_",
                             "--tls", "off,on", "-o", str(out))
    assert result.code == 0, result.stdout + result.stderr
    recs = {r["params"]["tls"]: r for r in cases(out)}
    assert set(recs) == {"off", "on"}
    assert all(r["status"] == "ok" for r in recs.values()), recs
    off, on = recs["off"], recs["on"]
    # the same case but for TLS: compare matches each with its own
    assert case_key(off) != case_key(on)
    assert case_key({**on, "params": {**on["params"], "tls": "off"}}) == case_key(off)
    assert "proxy_cpu_us_per_req" not in off and "handshake" not in off
    assert on["proxy_cpu_us_per_req"] > 0 and on["app_cpu_us_per_req"] > 0
    assert on["environment"]["server"]["tls_front"].startswith("nginx")
    if on["placement"]["enabled"]:
        assert on["placement"]["cpus"]["proxy"] == on["placement"]["cpus"]["stack"]
    # kept alive: a handshake per connection of each counted run, not per request
    assert 2 <= on["handshakes"] < on["requests"] / 10
    full, resumed = on["handshake"]["full"], on["handshake"]["resumed"]
    assert full["handshakes"] > 10 and full["resumed"] == 0
    assert resumed["resumed"] > resumed["handshakes"] / 2 > 0  # only the first ones full
    assert full["per_s"] > 0 and full["setup_us"]["p50"] > 0
    # a new connection per request costs the terminator more than a kept-alive request
    assert full["proxy_cpu_us_per_req"] > on["proxy_cpu_us_per_req"]
    text = " ".join(result.stdout.split())
    assert "the cost of TLS per stack" in text and "file (TLS)" in text
    assert orphans(tag) == []


def _front_of(pid: int) -> tuple[psutil.Process, Path] | None:
    """The TLS terminator (nginx, which empties its environment, so no tag finds it)
    started by the dbstand process `pid`, and its folder. nginx rewrites its command line
    ("nginx: master process nginx -p FOLDER ..."): a read in the middle of that finds
    no folder, and the next poll reads it again."""
    with contextlib.suppress(psutil.Error):
        for child in psutil.Process(pid).children():
            with contextlib.suppress(psutil.Error):
                found = re.search(rf"-p (\S*{FRONT_FOLDER}\S*)", " ".join(child.cmdline()))
                if found:
                    return child, Path(found.group(1))
    return None


def test_sigterm_stops_the_terminator(mariadb_url: str, tmp_path: Path) -> None:
    run = start_cli("run", "webtech", "--stack", "static-nginx", "--test", "file",
                    "--clients", "1", "--duration", "30", "--repeats", "2", "--target",
                    mariadb_url, "--prefix", "dbs_tls_", "--tls", "on",
                    "-o", str(tmp_path / "w.jsonl"))
    deadline = time.monotonic() + 60
    while (found := _front_of(run.proc.pid)) is None:
        assert run.proc.poll() is None, run.proc.stderr.read() if run.proc.stderr else ""
        assert time.monotonic() < deadline, "the TLS terminator never started"
        time.sleep(0.2)
    front, folder = found
    assert folder.name.startswith(FRONT_FOLDER) and (folder / "cert.pem").exists()
    workers = front.children()
    time.sleep(1.0)  # the load is under way through it
    run.proc.send_signal(signal.SIGTERM)
    result = run.wait(60)
    assert result.code == 130, result.stderr
    assert "Traceback" not in result.stderr
    assert not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE
                   for p in (front, *workers))
    assert not folder.exists()  # its folder (certificate and key) removed
    assert orphans(run.tag) == []


def test_bad_tls_values_are_one_line(tmp_path: Path) -> None:
    result, _ = run_tagged("run", "webtech", "--stack", "static-nginx", "--test", "file",
                           "--tls", "maybe", "-o", str(tmp_path / "a.jsonl"))
    assert result.code == 2 and "maybe" in one_error_line(result)
    result, _ = run_tagged("run", "webtech", "--stack", "static-nginx", "--test", "file",
                           "--tls", "on", "--app-rtt", "1ms", "-o", str(tmp_path / "b.jsonl"))
    assert result.code == 2 and "--app-rtt" in one_error_line(result)
    assert not (tmp_path / "a.jsonl").exists() and not (tmp_path / "b.jsonl").exists()
