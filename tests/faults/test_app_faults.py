"""The application server fails under a run: killed mid-measurement, or answering
wrongly through a proxy that corrupts its answers. Also: a CPU probe that loses its
process fails the case, and a parking run drops its tables at the end (issue 17, items
4 and 11)."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import closing, suppress
from pathlib import Path

import psutil
import pytest

from dbstand.targets.url import parse_target_url
from waiting import wait_until

from .helpers import orphans, run_tagged, start_cli


def _cpu(pid: int) -> float:
    """User + system seconds a process has used (0 once it is gone)."""
    try:
        times = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return 0.0
    return times.user + times.system

PARKING = ["run", "parking", "--stack", "python-raw", "--warmup", "1"]


def _tables(db: Path) -> set[str]:
    with closing(sqlite3.connect(db)) as conn:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def _gunicorns(tag: str) -> list[int]:
    return [int(line.split(":", 1)[0]) for line in orphans(tag) if "gunicorn" in line]


def test_app_server_killed_mid_run(tmp_path: Path) -> None:
    db, out = tmp_path / "p.db", tmp_path / "r.jsonl"
    run = start_cli(*PARKING, "--passes", "3", "--batches", "40", "--target",
                    f"sqlite:///{db}", "-o", str(out), cwd=tmp_path)
    try:
        deadline = time.monotonic() + 120
        while not _gunicorns(run.tag):
            assert time.monotonic() < deadline, "the service never started"
            assert run.proc.poll() is None, run.wait(5).stderr
            time.sleep(0.1)
        # conformance passed and batches running: the service has done real work
        wait_until(lambda: sum(_cpu(pid) for pid in _gunicorns(run.tag)) >= 0.8, 120,
                   "the service to serve the suite and the first batches")
        for pid in _gunicorns(run.tag):
            os.kill(pid, signal.SIGKILL)
        result = run.wait(180)
    finally:
        if run.proc.poll() is None:
            run.proc.kill()
            run.wait(30)
    assert result.code == 1, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    _, case, footer = (json.loads(line) for line in out.read_text().splitlines())
    assert case["status"] == "failed" and "\n" not in case["error"]
    # the suite client's words (call_failure) for a dead service's connections
    assert any(words in case["error"] for words in (
        "the connection was lost before the answer ended", "could not connect")), case["error"]
    assert footer["status"] == "complete-with-failures"
    assert orphans(run.tag) == []
    assert not any(t.startswith("dbstand_") for t in _tables(db))  # dropped at the end


def test_parking_run_drops_its_tables_at_the_end(tmp_path: Path) -> None:
    db = tmp_path / "p.db"
    result, tag = run_tagged(*PARKING, "--passes", "1", "--batches", "2", "--load", "seed",
                             "--target",
                             f"sqlite:///{db}", "-o", str(tmp_path / "r.jsonl"),
                             cwd=tmp_path, timeout=300)
    assert result.code == 0, result.stderr
    assert not any(t.startswith("dbstand_") for t in _tables(db))
    assert orphans(tag) == []


def test_a_probe_that_loses_its_process_fails_the_case(tmp_path: Path) -> None:
    """Before, the lost process was noted and the case stayed ok with CPU figures that
    left it out."""
    from dbstand.errors import CaseFailed
    from dbstand.workloads.parking.app import running_service
    from dbstand.workloads.parking.workload import ServiceProbes

    target = parse_target_url(f"sqlite:///{tmp_path / 'p.db'}")
    with running_service("python-raw", target) as service:
        tree = [service.pid, *(c.pid for c in psutil.Process(service.pid).children(True))]
        probes = ServiceProbes(service, target, "dbstand_")
        probes.begin()
        for pid in tree:
            os.kill(pid, signal.SIGKILL)
        psutil.wait_procs([psutil.Process(p) for p in tree if psutil.pid_exists(p)], 10)
        probes.end()
        with pytest.raises(CaseFailed, match=r"app server: process \d+ could not be read"):
            probes.result(10)
        probes.close()
    assert not any(psutil.pid_exists(p) and psutil.Process(p).status() != "zombie"
                   for p in tree)


class CorruptingProxy:
    """A TCP proxy that rewrites the upstream's answers: `old` becomes `new` (same
    length, so Content-Length still holds) in every chunk it forwards."""

    def __init__(self, upstream_port: int, old: bytes, new: bytes):
        assert len(old) == len(new)
        self.upstream, self.old, self.new = upstream_port, old, new
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.corrupted = 0
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._socks: list[socket.socket] = []

    def _pipe(self, src: socket.socket, dst: socket.socket, corrupt: bool) -> None:
        try:
            while data := src.recv(65536):
                if corrupt and self.old in data:
                    data = data.replace(self.old, self.new)
                    self.corrupted += 1
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def _serve(self) -> None:
        self.server.settimeout(0.2)
        while not self._stop.is_set():
            try:
                client, _ = self.server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.upstream))
            self._socks += [client, upstream]
            for args in ((client, upstream, False), (upstream, client, True)):
                thread = threading.Thread(target=self._pipe, args=args, daemon=True)
                thread.start()
                self._threads.append(thread)

    def __enter__(self) -> CorruptingProxy:
        thread = threading.Thread(target=self._serve, daemon=True)
        thread.start()
        self._threads.append(thread)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self.server.close()
        for s in self._socks:
            s.close()
        for thread in self._threads:
            thread.join(5)


@pytest.fixture
def parking_service(tmp_path: Path) -> Iterator[int]:
    from dbstand.workloads.parking.app import running_service

    target = parse_target_url(f"sqlite:///{tmp_path / 'p.db'}")
    with running_service("python-raw", target) as service:
        yield int(service.base_url.rsplit(":", 1)[1])


def test_wrong_answers_through_a_proxy_fail_verification(parking_service: int) -> None:
    """Answers whose JSON says `sUccess` for `success`: the conformance suite says the
    service does not conform (exit 1), so it would never be measured."""
    with CorruptingProxy(parking_service, b'"success"', b'"sUccess"') as proxy:
        result, tag = run_tagged("verify", "parking", "--url",
                                 f"http://127.0.0.1:{proxy.port}", timeout=120)
        assert proxy.corrupted > 0
    assert result.code == 1, result.stdout + result.stderr
    assert "does not conform" in result.stdout
    assert "Traceback" not in result.stderr + result.stdout
    assert orphans(tag) == []


def test_broken_http_through_a_proxy_is_a_failed_case(parking_service: int,
                                                      tmp_path: Path) -> None:
    """Status lines the proxy garbles count as errors, never as successes."""
    out = tmp_path / "r.jsonl"
    with CorruptingProxy(parking_service, b"HTTP/1.1 200", b"HTTP/1.1 2x0") as proxy:
        result, tag = run_tagged("http", f"http://127.0.0.1:{proxy.port}"
                                 "/get_user_account?user_id=0", "-n", "50", "-o", str(out))
    assert result.code == 1, result.stderr
    _, case, footer = (json.loads(line) for line in out.read_text().splitlines())
    assert case["status"] == "failed" and case["http"]["successes"] == 0
    assert footer["status"] == "complete-with-failures"
    assert orphans(tag) == []
