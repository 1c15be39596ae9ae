"""HTTP load from several Dask workers at once, merged exactly.

Each worker runs dbstand's native engine on its share of the connections (and, in a
closed loop bounded by requests, the same share of the requests; in an open loop, the
same share of the rate, so each worker runs its own wrk2-style open loop and corrects
its own coordinated omission). All shares start at one moment broadcast a little in
the future, converted to each worker's clock with the offset the session measured, so
every worker measures the same window. The workers' HDR histograms are merged by
adding counts (`LoadResult.merge`), never by averaging percentiles; the merged rate is
over the common window, from the first start to the last end. Their time series merge
by interval index (same start, same interval width): counts added, histograms merged
exactly, percentiles computed again from the merged histogram.

A worker that dies, leaves, starts late, or cannot reach the URL fails the whole run
with its name: no figure is made from the workers that remained.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from dbstand.distributed.session import ClusterSession, WorkerFailed, WorkerInfo
from dbstand.distributed.shares import even, proportional
from dbstand.engine.histogram import LatencyHistogram
from dbstand.errors import UserError
from dbstand.loadgen.engine import DEFAULT_TIMEOUT_S, Headers
from dbstand.loadgen.result import LoadResult
from dbstand.loadgen.series import DEFAULT_INTERVAL_S

if TYPE_CHECKING:
    from rich.console import Console

START_LEAD_S = 1.0
"""How far ahead the common start is set: time for every worker to get its task."""
MAX_LATE_S = 0.25
"""A worker that starts later than this after the common start fails the run: its
window would not be the others' (clocks not synchronised, or the worker was busy)."""
MERGE_NOTE = ("latency merged exactly: the workers' HDR histograms added count by count "
              "(never an average of percentiles); rates over the common window")


@dataclass(frozen=True)
class HttpShare:
    """One worker's part of the load."""

    connections: int
    requests: int | None = None
    rate: float | None = None


def plan_shares(workers: int, connections: int, requests: int | None = None,
                rate: float | None = None) -> list[HttpShare]:
    """Connections dealt evenly; requests and rate in proportion to connections."""
    conns = even(connections, workers, "connections (-c)")
    if requests is not None and requests < connections:
        raise UserError(f"requests ({requests}) must be at least the connections "
                        f"({connections}) to share them over {workers} workers")
    reqs: Sequence[int | None] = (proportional(requests, conns) if requests is not None
                                  else [None] * workers)
    if rate is not None and rate <= 0:
        raise UserError(f"--rate must be positive (got {rate:g})")
    return [HttpShare(c, r, rate * c / connections if rate else None)
            for c, r in zip(conns, reqs, strict=True)]


def wait_until(start_wall: float) -> float:
    """Sleep until `start_wall` (this host's wall clock), spinning the last ms for
    precision; return how late we are (s, >= 0)."""
    while True:
        remaining = start_wall - time.time()
        if remaining <= 0:
            return max(0.0, -remaining)
        if remaining > 0.002:
            time.sleep(remaining - 0.001)


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run_share(url: str, share: HttpShare, duration: float | None, start_wall: float,
              settings: Mapping[str, Any]) -> dict[str, Any]:
    """Runs on a worker: wait for the common start, run this share, return the result
    as a dict (with its HDR histogram) and how late this worker started."""
    from dbstand.loadgen.engine import run_closed, run_open

    late = wait_until(start_wall)
    if late > MAX_LATE_S:
        raise RuntimeError(f"started {late * 1e3:.0f} ms after the common start (more than "
                           f"{MAX_LATE_S * 1e3:.0f} ms): clocks not synchronised, or the "
                           "worker was busy")
    settings = dict(settings)
    bound = settings.pop("max_failures", None)  # closed runs only (run_http)
    least = settings.pop("min_duration_s", None)
    if share.rate:
        assert duration is not None
        result = run_open(url, share.rate, duration, share.connections, **settings)
    else:
        result = run_closed(url, share.connections, requests=share.requests,
                            duration=duration, max_failures=bound, min_duration_s=least,
                            **settings)
    return {"result": result.to_dict(), "late_s": late}


def warm_up_share(url: str, requests: int, keepalive: bool) -> dict[str, Any]:
    """Runs on a worker: a few requests on one connection (untimed, uncounted), which
    also proves this worker reaches the URL."""
    from dbstand.loadgen.engine import run_closed

    return run_closed(url, 1, requests=requests, keepalive=keepalive, interval_s=0).to_dict()


@dataclass(frozen=True)
class WorkerLoad:
    """What one worker measured."""

    worker: WorkerInfo
    share: HttpShare
    result: LoadResult
    late_s: float

    def record(self) -> dict[str, Any]:
        r = self.result
        latency = r.latency()
        return {
            **self.worker.record(),
            "share": {"connections": self.share.connections, "requests": self.share.requests,
                      "rate": self.share.rate},
            "requests": r.requests, "successes": r.successes, "failed": r.failed,
            "non_2xx": r.non_2xx, "socket_errors": r.errors.total,
            "elapsed_s": round(r.elapsed_s, 6),
            "requests_per_s": round(r.requests_per_s, 1),
            "successes_per_s": round(r.successes_per_s, 1),
            "start_late_ms": round(self.late_s * 1e3, 3),
            "cpu_s": round(r.process_cpu_s, 3),
            "missed": r.missed, "late_sends": r.late_sends,
            "latency_us": latency.summary_us(),
            "latency_hdr": r.histogram if latency.count else None,
        }


@dataclass(frozen=True)
class ClusterLoad:
    """A run over the cluster: the merged result and every worker's own."""

    result: LoadResult
    workers: tuple[WorkerLoad, ...]
    cluster: dict[str, Any]

    def record(self) -> dict[str, Any]:
        r = self.result
        return {
            **self.cluster,
            "merge": MERGE_NOTE,
            "per_worker": [w.record() for w in self.workers],
            "total": {"requests": r.requests, "successes": r.successes, "failed": r.failed,
                      "window_s": round(r.elapsed_s, 6),
                      "requests_per_s": round(r.requests_per_s, 1),
                      "successes_per_s": round(r.successes_per_s, 1),
                      "latency_us": r.latency().summary_us()},
        }


def _unreachable(result: LoadResult) -> bool:
    """Every request of this worker failed on the socket: it never reached the URL."""
    return result.requests > 0 and result.responses == 0 and \
        result.errors.total == result.requests


def _check_reached(loads: Iterable[tuple[WorkerInfo, LoadResult]], url: str) -> None:
    for worker, result in loads:
        if _unreachable(result):
            e = result.errors
            raise WorkerFailed(f"{worker.describe()} could not reach {url}: "
                               f"{result.requests} requests, no answer ({e.connect} connect, "
                               f"{e.read} read, {e.write} write, {e.timeout} timeout errors)")


def merge_loads(loads: Sequence[WorkerLoad], cluster: dict[str, Any]) -> ClusterLoad:
    """Exact merge; the window runs from the first worker's start to the last one's end."""
    merged = LoadResult.merge(w.result for w in loads)
    first = min(w.late_s for w in loads)
    window = max(w.late_s + w.result.elapsed_s for w in loads) - first
    merged = replace(merged, elapsed_s=window)
    if merged.requests != sum(w.result.requests for w in loads):  # pragma: no cover
        raise AssertionError("merged requests differ from the sum of the workers'")
    return ClusterLoad(merged, tuple(loads), cluster)


def run_http(session: ClusterSession, url: str, *, connections: int,
             requests: int | None = None, duration: float | None = None,
             rate: float | None = None, keepalive: bool = True,
             timeout_s: float = DEFAULT_TIMEOUT_S, threads: int | None = None,
             method: str = "GET", headers: Headers | None = None,
             body: bytes | str = b"", interval_s: float = DEFAULT_INTERVAL_S,
             max_failures: int | None = None,
             min_duration_s: float | None = None) -> ClusterLoad:
    """Load `url` from every worker of `session` at once (see module doc). `threads`
    applies per worker; `rate` (open loop) is the total and needs `duration`;
    `interval_s` is each worker's time-series interval (the merge adds them up by
    interval index: the workers start together). `max_failures` (closed loop): each
    worker's run stops once its own failures pass it; they alone already fail the
    whole run, so no worker stops a run that could pass. `min_duration_s` (a run by
    `requests`): each worker goes on past its share until then."""
    if rate is not None and duration is None:
        raise UserError("an open loop (--rate) needs a duration")
    shares = plan_shares(len(session.workers), connections, requests, rate)
    by_worker = dict(zip(session.workers, shares, strict=True))
    settings = {"keepalive": keepalive, "timeout_s": timeout_s, "threads": threads,
                "method": method,
                "headers": list(headers.items() if isinstance(headers, Mapping) else
                                headers or []),
                "body": body.encode() if isinstance(body, str) else bytes(body),
                "interval_s": interval_s, "max_failures": max_failures,
                "min_duration_s": min_duration_s}
    session.check_alive()
    lead = max(START_LEAD_S, 4 * max(w.rtt_s for w in session.workers))
    start = time.time() + lead
    futures = session.submit_each(
        run_share, lambda w: (url, by_worker[w], duration, start + w.clock_offset_s, settings))
    # open loops and duration-bound runs end on time; a run bounded by requests alone
    # has no deadline (a dead worker is still caught by the scheduler's worker list)
    deadline = lead + duration + max(timeout_s, 1.0) + 30 if duration else None
    try:
        answers = session.gather(futures, "its share of the load", deadline)
    finally:
        session.client.cancel(list(futures.values()))
    loads = [WorkerLoad(w, by_worker[w], LoadResult.from_dict(a["result"]), float(a["late_s"]))
             for w, a in sorted(answers.items(), key=lambda kv: session.workers.index(kv[0]))]
    _check_reached(((w.worker, w.result) for w in loads), url)
    return merge_loads(loads, session.record())


def warm_up(session: ClusterSession, url: str, requests: int, keepalive: bool = True) -> None:
    """`requests` untimed requests from every worker; fails naming a worker that cannot
    reach `url`."""
    futures = session.submit_each(warm_up_share, lambda w: (url, requests, keepalive))
    try:
        answers = session.gather(futures, "its warm-up", deadline_s=120.0)
    finally:
        session.client.cancel(list(futures.values()))
    _check_reached(((w, LoadResult.from_dict(a)) for w, a in answers.items()), url)


def combine_runs(loads: Sequence[ClusterLoad]) -> dict[str, Any]:
    """Per-worker totals over several runs (a measurement's repeats): each worker's own
    throughput over its own windows and its latency merged exactly across runs."""
    if not loads:
        return {}
    per: dict[str, dict[str, Any]] = {}
    hists: dict[str, LatencyHistogram] = {}
    for load in loads:
        for w in load.workers:
            key = w.worker.address
            row = per.setdefault(key, {**w.worker.record(), "connections":
                                       w.share.connections, "rate": w.share.rate,
                                       "runs": 0, "requests": 0, "successes": 0,
                                       "elapsed_s": 0.0, "max_start_late_ms": 0.0})
            row["runs"] += 1
            row["requests"] += w.result.requests
            row["successes"] += w.result.successes
            row["elapsed_s"] += w.result.elapsed_s
            row["max_start_late_ms"] = max(row["max_start_late_ms"], round(w.late_s * 1e3, 3))
            hists.setdefault(key, LatencyHistogram()).merge(w.result.latency())
    rows = []
    for key, row in per.items():
        row["successes_per_s"] = round(row["successes"] / row["elapsed_s"], 1) \
            if row["elapsed_s"] else 0.0
        row["elapsed_s"] = round(row["elapsed_s"], 6)
        row["latency_us"] = hists[key].summary_us()
        rows.append(row)
    return {**loads[0].cluster, "merge": MERGE_NOTE, "per_worker": rows,
            "total": {"requests": sum(r["requests"] for r in rows),
                      "successes": sum(r["successes"] for r in rows)}}


def _ms(ns: float) -> str:
    return f"{ns / 1e6:.3f}"


def print_workers(load: ClusterLoad, console: Console) -> None:
    """A table of each worker's share and figures, and the merged row."""
    from rich.table import Table

    table = Table(title=f"Cluster {load.cluster.get('spec', '')}: "
                        f"{len(load.workers)} workers", title_justify="left")
    for name in ("worker", "host", "pid", "conns", "rate/s", "requests", "failed", "req/s",
                 "p50 ms", "p99 ms", "max ms", "start +ms"):
        table.add_column(name, justify="left" if name in ("worker", "host") else "right")

    def row(label: str, host: str, pid: str, r: LoadResult, rate: float | None,
            late: str) -> None:
        h = r.latency()
        p50, p99 = h.percentiles([50.0, 99.0]) if h.count else (0, 0)
        table.add_row(label, host, pid, str(r.connections),
                      f"{rate:,.0f}" if rate else "-", f"{r.requests:,}", f"{r.failed:,}",
                      f"{r.requests_per_s:,.1f}", _ms(p50), _ms(p99),
                      _ms(h.max() if h.count else 0), late)

    for w in load.workers:
        row(w.worker.name, w.worker.host, str(w.worker.pid), w.result, w.share.rate,
            f"{w.late_s * 1e3:.2f}")
    table.add_section()
    row("all (merged)", "", "", load.result, load.result.rate, "")
    console.print(table)
    console.print(MERGE_NOTE, style="dim")
