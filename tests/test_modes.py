"""Modes on a real PostgreSQL: threads and processes, merged histograms, dying workers."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from dbstand.errors import UserError
from dbstand.modes.spec import expand_modes, parse_mode
from dbstand.targets.url import parse_target_url
from process_helpers import default_sigint
from waiting import wait_until

FAST = ["--rows", "400", "--min-iterations", "3", "--max-iterations", "4", "--ci", "50"]


def cases(path: Path) -> list[dict]:
    return [r for r in map(json.loads, path.read_text().splitlines()) if r["type"] == "case"]


def test_mode_names() -> None:
    names = [m.name for m in expand_modes(["sync", "asyncio:1", "5", "threads:16",
                                           "processes:2xAsyncio:25", "asyncio:25+shared"])]
    assert names == ["sync", "asyncio:1", "asyncio:5", "threads:16", "processes:2xasyncio:25",
                     "asyncio:25+shared"]
    spec = parse_mode("processes:2xasyncio:25")
    assert (spec.concurrency, spec.connections, spec.is_async) == (50, 50, True)
    assert parse_mode("asyncio:25+shared").connections == 1
    for bad in ("threads:0", "bogus", "sync+shared", "processes:2xthreads:4"):
        with pytest.raises(UserError):
            parse_mode(bad)
    with pytest.raises(UserError):
        expand_modes(["sync", "5"])


@pytest.mark.parametrize("mode", ["threads:3", "processes:2"])
def test_merged_histogram_counts_every_operation(cli, pg_url: str, tmp_path: Path,
                                                 mode: str) -> None:
    out = tmp_path / "r.jsonl"
    res = cli("run", "kv", "--target", pg_url, "--stack", "psycopg", "--mode", mode,
              "--op", "select,insert,delete", "--revs", "300", "--latency", "all",
              "-o", str(out), *FAST)
    assert res.code == 0, res.stderr
    for c in cases(out):
        assert c["status"] == "ok", c.get("error")
        assert c["mode"] == mode
        assert c["mode_detail"]["concurrency"] == int(mode.split(":")[1])
        assert "connections opened before" in c["mode_detail"]["timed"]
        # every operation of every counted iteration is in the merged histogram, once
        assert c["latency_samples"] == 300 * c["iterations"]


def test_sweep_reports_an_optimum(cli, pg_url: str, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    res = cli("run", "kv", "--target", pg_url, "--stack", "psycopg2", "--mode",
              "threads:1,2,4", "--op", "select", "--revs", "400", "-o", str(out), *FAST)
    assert res.code == 0, res.stderr
    assert [c["mode"] for c in cases(out)] == ["threads:1", "threads:2", "threads:4"]
    assert "sweep psycopg2 select threads:N" in res.stdout
    assert "optimum threads:" in res.stdout or "plateau threads:" in res.stdout


def test_mixed_matrix_runs_each_stack_in_its_modes(cli, pg_url: str, tmp_path: Path) -> None:
    """The kv study's matrix: sync and asyncio stacks with sync and asyncio modes."""
    out = tmp_path / "r.jsonl"
    res = cli("run", "kv", "--target", pg_url, "--stack", "psycopg,asyncpg", "--mode",
              "sync,threads:2,asyncio:4", "--op", "select", "--revs", "200", "-o", str(out),
              *FAST)
    assert res.code == 0, res.stderr
    ran = [(c["stack"], c["mode"]) for c in cases(out)]
    assert ran == [("psycopg", "sync"), ("psycopg", "threads:2"), ("asyncpg", "asyncio:4")]
    assert "asyncpg × sync skipped" in res.stdout
    assert all(c["status"] == "ok" for c in cases(out))


def test_sync_stack_refuses_asyncio_mode(cli, pg_url: str, tmp_path: Path) -> None:
    res = cli("run", "kv", "--target", pg_url, "--stack", "psycopg", "--mode", "asyncio:5",
              "-o", str(tmp_path / "r.jsonl"))
    assert res.code == 2 and "can run none of the modes asyncio:5" in res.stderr
    res = cli("run", "kv", "--target", f"sqlite:///{tmp_path / 'k.db'}", "--mode", "threads:50",
              "--revs", "10", "--rows", "10", "-o", str(tmp_path / "r.jsonl"))
    assert res.code == 2 and "at least the concurrency" in res.stderr


def _start_long_run(pg_url: str, out: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "dbstand", "run", "kv", "--target", pg_url, "--stack",
         "psycopg", "--mode", "processes:2", "--op", "select", "--revs", "2000",
         "--rows", "2000", "--min-iterations", "30", "--max-iterations", "30",
         "--ci", "0.0001", "--pause", "0.05", "-o", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=default_sigint)


def _workers(proc: subprocess.Popen, want: int, timeout_s: float = 60) -> list[psutil.Process]:
    def found() -> list[psutil.Process]:
        kids = [p for p in psutil.Process(proc.pid).children(recursive=True)
                if "multiprocessing" in " ".join(p.cmdline())
                and "resource_tracker" not in " ".join(p.cmdline())]
        return kids if len(kids) >= want else []

    return wait_until(found, timeout_s, f"{want} worker processes", interval=0.1)


def _wait_measuring(workers: list[psutil.Process], pg_url: str, timeout_s: float = 60) -> None:
    """Each worker has built its executor (it holds its own connection to the server),
    so the run is past its start-up: the parent starts the iterations as soon as every
    worker reports ready, which a worker does right after connecting."""
    port = parse_target_url(pg_url).port

    def connected(worker: psutil.Process) -> bool:
        return any(c.raddr and c.raddr.port == port and c.status == psutil.CONN_ESTABLISHED
                   for c in worker.net_connections(kind="tcp"))

    wait_until(lambda: all(connected(w) for w in workers), timeout_s,
               "every worker's connection to PostgreSQL")


def test_dying_worker_fails_the_case_clearly(pg_url: str, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    proc = _start_long_run(pg_url, out)
    try:
        workers = _workers(proc, 2)
        _wait_measuring(workers, pg_url)
        workers[0].kill()
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, err
    first = cases(out)[0]
    assert first["status"] == "failed"
    assert "worker process" in first["error"] and "died" in first["error"]


def test_no_orphans_after_sigint(pg_url: str, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    proc = _start_long_run(pg_url, out)
    try:
        workers = _workers(proc, 2)
        _wait_measuring(workers, pg_url)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    _gone, alive = psutil.wait_procs(workers, timeout=10)
    assert not alive, f"orphan workers: {[p.pid for p in alive]}"
    assert json.loads(out.read_text().splitlines()[-1])["status"] == "interrupted"


def test_every_mode_on_tarantool(cli, tarantool_url: str, tmp_path: Path) -> None:
    """The kv study's modes on a real Tarantool: the synchronous connector in sync,
    threads and processes; asynctnt in asyncio (own and shared connection), processes
    x coroutines, and on uvloop."""
    out = tmp_path / "r.jsonl"
    res = cli("run", "kv", "--target", tarantool_url, "--stack", "tarantool,asynctnt",
              "--protocol", "binary", "--mode",
              "sync,threads:2,processes:2,asyncio:4,asyncio:4+shared,processes:2xasyncio:2",
              "--op", "select,update", "--revs", "200", "--latency", "all", "-o", str(out),
              *FAST)
    assert res.code == 0, res.stderr
    ran = {(c["stack"], c["mode"], c["op"]): c for c in cases(out)}
    expected_modes = {"tarantool": ["sync", "threads:2", "processes:2"],
                      "asynctnt": ["asyncio:4", "asyncio:4+shared", "processes:2xasyncio:2"]}
    assert {(s, m) for s, m, _ in ran} == {(s, m) for s, ms in expected_modes.items()
                                           for m in ms}
    for c in ran.values():
        assert c["status"] == "ok", c.get("error")
        assert c["latency_samples"] == 200 * c["iterations"]
    shared = ran[("asynctnt", "asyncio:4+shared", "select")]["mode_detail"]
    assert shared["connections"] == 1 and shared["concurrency"] == 4
    uv = tmp_path / "uv.jsonl"
    res = cli("run", "kv", "--target", tarantool_url, "--stack", "asynctnt", "--protocol",
              "binary", "--mode", "asyncio:4", "--loop", "uvloop", "--op", "select",
              "--revs", "200", "-o", str(uv), *FAST)
    assert res.code == 0, res.stderr
    (record,) = cases(uv)
    assert record["status"] == "ok" and record["params"]["loop"] == "uvloop"
