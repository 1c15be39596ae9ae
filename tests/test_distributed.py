"""Load from a Dask cluster (dbstand.distributed) on loopback: a LocalCluster of two
worker processes against a real HTTP server (tests/loadgen/http_test_server.py) and a
SQLite file. Per-worker histograms must merge into exactly the histogram of all
samples, totals must be the sum of the workers', and a worker that dies fails the
case, named."""

from __future__ import annotations

import json
import os
import random
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dbstand.distributed.httpload import (
    HttpShare,
    WorkerLoad,
    merge_loads,
    plan_shares,
    run_http,
)
from dbstand.distributed.session import (
    ClusterSession,
    WorkerFailed,
    cluster_session,
)
from dbstand.distributed.spec import parse_cluster
from dbstand.engine.histogram import LatencyHistogram
from dbstand.errors import UserError
from dbstand.loadgen.result import ErrorCounts, LoadResult

SERVER = Path(__file__).parent / "loadgen" / "http_test_server.py"
pytestmark = pytest.mark.timeout(180)


class Server:
    """The Python test server in its own process (it counts what it answers)."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, str(SERVER)], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], 15)
        line = self.proc.stdout.readline() if ready else ""
        if not line.startswith("PORT "):
            self.stop()
            pytest.fail(f"test server did not start: {line!r}")
        self.port = int(line.split()[1])

    def url(self, path: str = "/hello") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def requests(self) -> int:
        import urllib.request

        with urllib.request.urlopen(self.url("/__stats"), timeout=5) as resp:
            return int(json.loads(resp.read())["requests"])

    def reset(self) -> None:
        import urllib.request

        urllib.request.urlopen(self.url("/__reset"), timeout=5).close()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    srv = Server()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def session() -> Iterator[ClusterSession]:
    """One LocalCluster of two workers for the tests that leave it whole."""
    with cluster_session("local:2") as s:
        yield s


def buckets(hist: LatencyHistogram) -> dict[int, int]:
    """Count per HDR bucket (the bucket's highest equivalent value)."""
    h = hist.hist
    return {item.value_iterated_to: item.count_at_value_iterated_to
            for item in h.get_recorded_iterator()}


def _worker_samples(seed: int, n: int) -> tuple[list[int], str]:
    """Runs on a worker: latencies drawn at random (ns, 20 µs .. 50 ms, heavy tail), the
    worker's own histogram of them, encoded as a worker sends it."""
    rng = random.Random(seed)
    samples = [int(20_000 * rng.paretovariate(1.2)) for _ in range(n)]
    samples = [min(s, 50_000_000) for s in samples]
    hist = LatencyHistogram()
    hist.record_many(samples)
    return samples, hist.encode()


def _load(hist: str, n: int) -> LoadResult:
    return LoadResult(requests=n, successes=n, status_counts={200: n}, errors=ErrorCounts(),
                      check_failed=0, bytes=0, body_bytes=0, histogram=hist,
                      connections=1, elapsed_s=1.0)


# --- the cluster's own pieces --------------------------------------------------------
def test_cluster_values_and_shares() -> None:
    assert parse_cluster("local:2").label == "local:2"
    remote = parse_cluster("tcp://10.0.0.5?workers=4")
    assert (remote.address, remote.workers, remote.uses_tls) == ("tcp://10.0.0.5:8786", 4,
                                                                 False)
    for bad in ("local:0", "local:x", "http://h:1", "tcp://h:1?ca=/nonexistent",
                "tcp://h:1?bogus=1"):
        with pytest.raises(UserError):
            parse_cluster(bad)
    assert plan_shares(2, 5, requests=1000, rate=500.0) == [
        HttpShare(3, 600, 300.0), HttpShare(2, 400, 200.0)]
    with pytest.raises(UserError, match="cannot be shared by 2"):
        plan_shares(2, 1)


def test_session_workers_listen_on_loopback(session: ClusterSession) -> None:
    assert len(session.workers) == 2
    assert len({w.pid for w in session.workers}) == 2
    assert all(w.address.startswith("tcp://127.0.0.1:") for w in session.workers)
    import psutil

    me = psutil.Process()
    listening = [c.laddr.ip for p in (me, *me.children(recursive=True))
                 for c in p.net_connections(kind="inet") if c.status == psutil.CONN_LISTEN]
    assert listening and all(ip == "127.0.0.1" for ip in listening), listening


# --- exact merge ---------------------------------------------------------------------
def test_the_workers_present_are_asked_of_the_scheduler_not_a_cache(
        session: ClusterSession) -> None:
    """The client's cached identity is replaced by every update that asks for fewer
    workers (its own periodic one asks for none): `present` must not read it, or a
    worker looks gone (a make test failed "worker 0 left the cluster"). Here another
    thread keeps asking for none, as that update does."""
    stop = threading.Event()

    def ask_for_none() -> None:
        while not stop.is_set():
            session.client.scheduler_info(n_workers=0)

    asker = threading.Thread(target=ask_for_none, daemon=True)
    asker.start()
    try:
        seen = [len(session.present()) for _ in range(300)]
    finally:
        stop.set()
        asker.join(timeout=10)
    assert seen == [2] * 300, sorted(set(seen))
    session.check_alive()


def test_merged_histogram_is_the_histogram_of_all_samples(session: ClusterSession) -> None:
    """Each worker records its own samples; the merge of what they send equals one
    histogram into which every sample was recorded, bucket by bucket."""
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        futures = session.submit_each(_worker_samples,
                                      lambda w: (session.workers.index(w) + 1, 20_000))
        answers = session.gather(futures, "sampling")
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    everything = LatencyHistogram()
    for samples, _ in answers.values():
        everything.record_many(samples)
    loads = [WorkerLoad(w, HttpShare(1), _load(enc, len(s)), 0.0)
             for w, (s, enc) in answers.items()]
    merged = merge_loads(loads, session.record()).result
    assert merged.requests == 40_000 == sum(w.result.requests for w in loads)
    assert buckets(merged.latency()) == buckets(everything)
    grid = [0, 1, 10, 25, 50, 75, 90, 99, 99.9, 99.99, 100]
    assert merged.latency().percentiles(grid) == everything.percentiles(grid)
    assert merged.latency().max() == everything.max()
    # averaging the workers' percentiles would be wrong, and differs here
    parts = [w.result.latency().percentile(99.9) for w in loads]
    assert sum(parts) / len(parts) != everything.percentile(99.9)


def test_http_load_is_shared_and_merged(session: ClusterSession, server: Server) -> None:
    server.reset()
    load = run_http(session, server.url(), connections=4, requests=2000)
    assert [w.share.connections for w in load.workers] == [2, 2]
    assert [w.result.requests for w in load.workers] == [1000, 1000]
    assert load.result.requests == 2000 == server.requests()
    assert load.result.successes == sum(w.result.successes for w in load.workers)
    merged = buckets(load.result.latency())
    summed: dict[int, int] = {}
    for w in load.workers:
        for value, count in buckets(w.result.latency()).items():
            summed[value] = summed.get(value, 0) + count
    assert merged == summed
    record = load.record()
    assert [(r["host"], r["pid"]) for r in record["per_worker"]] == \
        [(w.host, w.pid) for w in session.workers]
    assert all(r["requests_per_s"] > 0 and r["share"]["connections"] == 2
               for r in record["per_worker"])
    assert record["total"]["requests"] == 2000


def test_a_share_past_the_run_s_failures_stops(session: ClusterSession,
                                               server: Server) -> None:
    """Every answer a 500: each worker's share of 200,000 requests stops past the run's
    bound of failures, and the merged result says the run was stopped there."""
    server.reset()
    load = run_http(session, server.url("/status/500"), connections=4, requests=200_000,
                    max_failures=20)
    assert load.result.failures_exceeded
    assert all(w.result.failures_exceeded for w in load.workers)
    assert load.result.successes == 0 and load.result.requests < 1_000
    assert server.requests() < 1_000


def test_a_run_by_count_lasts_its_least_duration_on_every_worker(
        session: ClusterSession, server: Server) -> None:
    load = run_http(session, server.url(), connections=4, requests=8, min_duration_s=0.5)
    for w in load.workers:  # each worker sends past its share of 4 until 0.5 s
        assert w.result.elapsed_s >= 0.5 and w.result.requests > 4, w.result
        assert w.result.successes == w.result.requests
    assert load.result.requests == sum(w.result.requests for w in load.workers)


def test_open_loop_splits_the_rate(session: ClusterSession, server: Server) -> None:
    load = run_http(session, server.url(), connections=4, duration=1.5, rate=400.0)
    assert load.result.mode == "open" and load.result.rate == pytest.approx(400.0)
    for w in load.workers:
        assert w.result.mode == "open" and w.result.rate == pytest.approx(200.0)
        assert 240 <= w.result.requests <= 330  # 200/s for 1.5 s, each its own open loop
    assert load.result.requests == sum(w.result.requests for w in load.workers)


def test_unreachable_target_fails_naming_the_worker(session: ClusterSession) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(WorkerFailed, match=r"worker \S+ \(.*pid \d+"):
        run_http(session, f"http://127.0.0.1:{port}/", connections=2, requests=10)


# --- the commands --------------------------------------------------------------------
def test_dbstand_http_cluster(cli: Any, server: Server, tmp_path: Path) -> None:
    res = cli("http", server.url(), "-c", "4", "-n", "2000", "--cluster", "local:2",
              "-o", str(tmp_path / "h.jsonl"))
    assert res.code == 0, res.stderr
    assert "all (merged)" in res.stdout and "Complete requests:      2000" in res.stdout
    case = [json.loads(x) for x in (tmp_path / "h.jsonl").read_text().splitlines()][1]
    workers = case["cluster"]["per_worker"]
    assert len(workers) == 2 and len({w["pid"] for w in workers}) == 2
    assert sum(w["requests"] for w in workers) == case["http"]["requests"] == 2000
    assert case["latency_samples"] == 2000
    assert case["params"]["cluster"] == "local:2"


def _kv_args(db: Path, out: Path, *extra: str) -> list[str]:
    return ["run", "kv", "--target", f"sqlite:///{db}", "--stack", "sqlite3", "--op",
            "select", "--mode", "threads:2", "--rows", "500", "--revs", "1000",
            "--latency", "all", "--min-iterations", "3", "--max-iterations", "3",
            "--cluster", "local:2", "-o", str(out), *extra]


def test_dbstand_run_kv_cluster(cli: Any, tmp_path: Path) -> None:
    out = tmp_path / "kv.jsonl"
    res = cli(*_kv_args(tmp_path / "kv.db", out))
    assert res.code == 0, res.stdout + res.stderr
    assert "all (merged)" in res.stdout
    case = next(r for r in map(json.loads, out.read_text().splitlines())
                if r["type"] == "case")
    assert case["status"] == "ok", case.get("error")
    cluster = case["cluster"]
    workers = cluster["per_worker"]
    assert [w["share"] for w in workers] == ["threads:1", "threads:1"]
    assert len({w["pid"] for w in workers}) == 2
    # every measured operation timed (--latency all): 3 iterations x 1000 ops
    assert sum(w["ops"] for w in workers) == cluster["total"]["ops"] == 3000
    assert sum(w["latency_samples"] for w in workers) == case["latency_samples"] == 3000
    assert all(w["ops_per_s"] > 0 for w in workers)
    assert all(w["source_addresses"] is None for w in workers)  # SQLite: no network


# --- a worker that dies --------------------------------------------------------------
def test_killed_worker_fails_the_http_run(server: Server) -> None:
    with cluster_session("local:2") as s:
        victim = s.workers[1]
        killer = threading.Timer(1.5, os.kill, (victim.pid, signal.SIGKILL))
        killer.start()
        started = time.monotonic()
        try:
            with pytest.raises(WorkerFailed) as failed:
                run_http(s, server.url(), connections=2, duration=6.0, rate=100.0)
        finally:
            killer.cancel()
        assert f"pid {victim.pid}" in str(failed.value)
        assert time.monotonic() - started < 6.0  # at once, not at the end of the run


def test_killed_worker_fails_the_kv_case(tmp_path: Path) -> None:
    """The case is recorded as failed, naming the worker, with no figure from the other;
    the next case runs on the workers the cluster has then."""
    from rich.console import Console

    from dbstand.engine.config import EngineConfig
    from dbstand.targets.url import parse_target_url
    from dbstand.workloads.execution import RunRequest, execute
    from dbstand.workloads.kv.cli import kv_cases
    from dbstand.workloads.kv.options import KvOptions
    from dbstand.workloads.kv.workload import KvWorkload
    from dbstand.workloads.protocols import with_probes

    target = parse_target_url(f"sqlite:///{tmp_path / 'kv.db'}")
    options = KvOptions(rows=500, cluster="local:2")
    one = kv_cases([target], ["sqlite3"], ["select"], ["threads:2"], 5000, options)
    cases = with_probes(one + one, False)
    workload = KvWorkload(options)
    # never stable enough to stop early: each case runs its 4 s of iterations
    config = EngineConfig(revs=5000, min_iterations=3, max_iterations=1000, max_time_s=4,
                          target_ci_pct=1e-6)
    victim: list[int] = []

    def kill_when_running() -> None:
        deadline = time.monotonic() + 60
        while workload.cluster.session is None or not workload.cluster.session.workers:
            if time.monotonic() > deadline:
                return
            time.sleep(0.05)
        time.sleep(2.0)  # into the first case's measured iterations
        victim.append(workload.cluster.session.workers[0].pid)
        os.kill(victim[0], signal.SIGKILL)

    killer = threading.Thread(target=kill_when_running, daemon=True)
    killer.start()
    with open(os.devnull, "w") as quiet:
        results = execute(RunRequest(workload, cases, config, tmp_path / "r.jsonl",
                                     ["test"]), Console(file=quiet))
    killer.join(timeout=10)
    first, second = results.cases
    assert first["status"] == "failed"
    assert victim and f"pid {victim[0]}" in first["error"], first["error"]
    assert "ops_per_s" not in first and "cluster" not in first
    assert second["status"] == "ok", second.get("error")
    pids = [w["pid"] for w in second["cluster"]["per_worker"]]
    assert len(set(pids)) == 2 and victim[0] not in pids


def test_a_killed_worker_the_scheduler_still_lists_is_replaced_between_cases() -> None:
    """Right after a SIGKILL the scheduler may still list the worker (it learns of the
    loss from the closed connection or a missed heartbeat); `refresh` asks each worker
    who it is, so the next case gets the nanny's new worker, never the dead one."""
    with cluster_session("local:2") as s:
        victim = s.workers[0]
        os.kill(victim.pid, signal.SIGKILL)
        s.refresh()
        assert len(s.workers) == 2
        assert victim.pid not in {w.pid for w in s.workers}
        for worker in s.workers:
            os.kill(worker.pid, 0)  # alive: raises if not
