"""One load path for every workload served over HTTP: drive a running stack with the
native engine and probe what it costs.

A measurement is `repeats` runs of the same load (closed loop: C connections, each
sending its next request when the answer is in; or open loop at a fixed rate with
coordinated-omission-corrected latency). Around each run the CPU of the stack's
whole process tree and of the database server's are read, so cost is per request of
exactly the measured window. The figure is the mean of the runs with its Student-t
95% interval; latency comes from the runs' HDR histograms merged exactly. Answers
that are not 2xx and socket errors are counted apart and never as successes; a run
whose errors exceed `max_error_rate` fails the case. Each run's time series (counts
and latency per interval, `plan.interval_s`) goes to the record's `series`, one list
of intervals per run; the warm-up is a separate run and is not in it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dbstand.engine.histogram import LatencyHistogram
from dbstand.engine.stats import summarize
from dbstand.errors import CaseFailed, UserError
from dbstand.loadgen.engine import run_closed, run_open
from dbstand.loadgen.result import LoadResult
from dbstand.loadgen.series import DEFAULT_INTERVAL_S, series_record
from dbstand.probes.cpu import TreeCpu

if TYPE_CHECKING:
    from dbstand.distributed.session import ClusterSession

DEFAULT_MAX_ERROR_RATE = 0.01


@dataclass(frozen=True)
class LoadPlan:
    """How to load one URL."""

    connections: int
    requests: int | None = None        # closed loop: requests per run
    duration_s: float | None = None    # closed loop bound, or the open loop's length
    rate: float | None = None          # open loop: requests/s in total
    keepalive: bool = True
    repeats: int = 3
    warmup_requests: int = 1
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE
    target_ci_pct: float = 5.0         # wider than this: flagged unstable
    interval_s: float = DEFAULT_INTERVAL_S  # time series' interval; 0: none

    @property
    def mode(self) -> str:
        return f"open:{self.rate:g}/s" if self.rate else f"clients:{self.connections}"


def open_loop_plan(best: float | None, params: dict[str, Any]) -> LoadPlan:
    """An open-loop case's load: half the closed-loop maximum (`best`) measured for the
    same stack and test earlier in the run."""
    if not best:
        raise CaseFailed("no closed-loop figure to set the open-loop rate from")
    return LoadPlan(connections=params["clients"], rate=round(best / 2, 1),
                    duration_s=params["duration_s"], keepalive=params.get("keepalive", True),
                    repeats=params["repeats"], max_error_rate=params["max_error_rate"])


def check_load(repeats: int, max_error_rate: float) -> None:
    """The load settings every served workload's options share."""
    if not 2 <= repeats <= 100:
        raise UserError("--repeats must be from 2 to 100 (a 95% interval needs two runs)")
    if not 0 <= max_error_rate < 1:
        raise UserError("--max-error-rate must be from 0 to 1")


class LoadCluster:
    """A served workload's `--cluster`: the session opened at its preflight (each worker
    then runs a share of every load) and closed with the workload."""

    def __init__(self, spec: str | None):
        self.spec = spec
        self.session: ClusterSession | None = None

    def open(self) -> None:
        if self.spec and self.session is None:
            from dbstand.distributed.session import open_cluster
            from dbstand.distributed.spec import parse_cluster

            self.session = open_cluster(parse_cluster(self.spec))

    def close(self) -> None:
        if self.session is not None:
            session, self.session = self.session, None
            session.close()


def _one_run(url: str, plan: LoadPlan, cluster: ClusterSession | None = None,
             shards: list[Any] | None = None) -> LoadResult:
    if cluster is not None:  # each worker its share of the connections (and rate)
        from dbstand.distributed.httpload import run_http

        load = run_http(cluster, url, connections=plan.connections, requests=plan.requests,
                        duration=plan.duration_s or (5.0 if plan.rate else None),
                        rate=plan.rate, keepalive=plan.keepalive, interval_s=plan.interval_s)
        if shards is not None:
            shards.append(load)
        return load.result
    if plan.rate:
        return run_open(url, plan.rate, plan.duration_s or 5.0, plan.connections,
                        keepalive=plan.keepalive, interval_s=plan.interval_s)
    return run_closed(url, plan.connections, requests=plan.requests, duration=plan.duration_s,
                      keepalive=plan.keepalive, interval_s=plan.interval_s)


def measure(url: str, plan: LoadPlan, app_pid: int, db_pids: int | list[int] | None = None,
            alive: Any = None, cluster: ClusterSession | None = None) -> dict[str, Any]:
    """Warm up, run the plan, and return the record's metrics (see module doc).

    `alive`: a callable telling whether the stack still runs; a stack that died during
    the measurement fails the case rather than reporting the answers it gave before.
    `cluster`: an open `dbstand.distributed` session; each of its workers warms up and
    runs its share of the connections, and the metrics gain each worker's figures.
    """
    if plan.warmup_requests and cluster is not None:
        from dbstand.distributed.httpload import warm_up

        warm_up(cluster, url, plan.warmup_requests, plan.keepalive)
    elif plan.warmup_requests:
        run_closed(url, 1, requests=plan.warmup_requests, keepalive=plan.keepalive,
                   interval_s=0)
    pids = [db_pids] if isinstance(db_pids, int) else list(db_pids or [])
    app, dbs = TreeCpu(app_pid), [TreeCpu(pid) for pid in pids]
    runs: list[LoadResult] = []
    shards: list[Any] = []
    for _ in range(plan.repeats):
        for tree in (*dbs, app):
            tree.begin()
        result = _one_run(url, plan, cluster, shards)
        for tree in (app, *dbs):
            tree.end()
        runs.append(result)
        if alive is not None and not alive():
            raise CaseFailed("the stack's server died during the measurement")
    lost = [t.lost for t in (app, *dbs) if t.lost]
    if lost:
        raise CaseFailed("a CPU probe lost its process: " + "; ".join(lost))
    metrics = metrics_of(runs, plan, app, dbs)
    if cluster is not None:
        from dbstand.distributed.httpload import combine_runs

        metrics["cluster"] = combine_runs(shards)
    return metrics


def metrics_of(runs: list[LoadResult], plan: LoadPlan, app: TreeCpu,
               dbs: list[TreeCpu]) -> dict[str, Any]:
    requests = sum(r.requests for r in runs)
    successes = sum(r.successes for r in runs)
    failed = requests - successes
    error_rate = failed / requests if requests else 1.0
    if error_rate > plan.max_error_rate:
        first = runs[-1]
        raise CaseFailed(f"{failed} of {requests} requests failed ({error_rate:.1%} > "
                         f"{plan.max_error_rate:.1%}): status {dict(first.status_counts)}, "
                         f"socket errors {first.errors.total}")
    rates = [r.successes_per_s for r in runs]
    times = [1.0 / x for x in rates if x > 0]  # per-request seconds: the CI is over means
    summary = summarize(times) if times else None
    latency = LatencyHistogram()
    for r in runs:
        latency.merge(r.latency())
    mean_rate = successes / sum(r.elapsed_s for r in runs) if runs else 0.0
    ci_pct = summary.ci95_pct if summary and len(times) > 1 else None
    out: dict[str, Any] = {
        "ops_per_s": round(mean_rate, 1),
        "ops_per_s_runs": [round(x, 1) for x in rates],
        "ops_per_s_min": round(min(rates), 1) if rates else 0.0,
        "ops_per_s_max": round(max(rates), 1) if rates else 0.0,
        "ci95_pct": round(ci_pct, 2) if ci_pct is not None else None,
        "unstable": (ci_pct is None and plan.repeats > 1) or (ci_pct or 0) > plan.target_ci_pct,
        "repeats": len(runs),
        "requests": requests,
        "successes": successes,
        "errors": {"non_2xx": sum(r.non_2xx for r in runs),
                   **{k: sum(getattr(r.errors, k) for r in runs)
                      for k in ("connect", "read", "write", "timeout", "parse")}},
        "error_rate": round(error_rate, 5),
        "bytes_per_request": round(sum(r.bytes for r in runs) / requests, 1) if requests
        else 0,
        "latency_us": latency.summary_us(),
        "latency_hdr": latency.encode() if latency.count else None,
        "latency_corrected": bool(plan.rate),
        "app_cpu_us_per_req": round(app.cpu_s / successes * 1e6, 2) if successes else None,
        "app_peak_rss_mb": round(app.peak_rss / 2**20, 1),
        "db_cpu_us_per_req": round(sum(d.cpu_s for d in dbs) / successes * 1e6, 2)
        if dbs and successes else None,
        "generator_cpu_s": round(sum(r.process_cpu_s for r in runs), 3),
        "load": {"connections": plan.connections, "requests": plan.requests,
                 "duration_s": plan.duration_s, "rate": plan.rate, "keepalive": plan.keepalive,
                 "repeats": plan.repeats, "warmup_requests": plan.warmup_requests},
    }
    series = series_record([r.series for r in runs])
    if series is not None:
        out["series"] = series
    if plan.rate:
        reached = mean_rate / plan.rate
        out["rate_reached"] = round(reached, 3)
        if reached < 0.9:
            out["unstable"] = True
            out["note"] = f"reached {reached:.0%} of the asked rate"
    return out
