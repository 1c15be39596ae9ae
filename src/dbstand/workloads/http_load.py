"""One load path for every workload served over HTTP: drive a running stack with the
native engine and probe what it costs.

A measurement follows the stop rule every dbstand figure follows (methodology.md, kv's
rule from `engine/stats.py`). Under the default load (`steady`) the stack first warms up
in steps of `warmup_step_s` until one step is no longer faster than the one before by
more than the target (at least `warmup_s`, at most `max_warmup_s`: a JIT runtime gets
its seconds); then runs of the same load (closed loop: C connections, each sending its
next request when the answer is in; or open loop at a fixed rate with
coordinated-omission-corrected latency), each lasting at least `min_run_s` and at least
`requests` answers (a seed's request count is the shape of a run, not its length), are
repeated until the 95% interval of the mean is within `target_ci_pct`, or a cap
(`max_repeats`, or `max_time_s` once `repeats` runs are done) marks the case
unstable. A closed run is timed (as wrk's `-d`), or with `by_count` a number of
requests sized from the warm-up's rate that ends when every one is answered (as ab's
`-n`): a timed run waits at its end for the requests in flight as long as twice its
slowest answer (at least half a second, at most the request timeout: the engine's
`Shared::end_grace`) and counts the rest as timeouts, so a server that queues C
connections behind one thread (a latency of C/rate, over 0.5 s at 100 connections
below 200 requests/s) is not failed for the last requests of a timed warm-up step or
run. The `seed` load reproduces a
seed literally: one warm-up request, `repeats` runs of exactly `requests` requests.

Every part runs where the placement table (`modes/pinning.py`) puts it: the generator
(this process), the stack's process tree and the database's. Around each run the CPU
of the stack's whole tree and of the database server's are read, so cost is per request
of exactly the measured window. The figure is the mean of the runs with its Student-t
95% interval; latency comes from the runs' HDR histograms merged exactly. Answers that
are not 2xx and socket errors are counted apart and never as successes; a warm-up step
or a run whose errors exceed `max_error_rate` fails the case (a step's, at once: runs
are sized from its rate of successes). A closed run stops as soon as it can no longer
pass (the engine's `max_failures`: `max_error_rate` of the requests it was sized for),
so a stalled database costs a few request timeouts, not one per planned request. Each
run's time series goes to the record's `series`, one list of intervals per run; the
warm-up is not in it.
"""

from __future__ import annotations

import contextlib
import math
import statistics
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from dbstand.engine.histogram import LatencyHistogram
from dbstand.engine.machine_speed import SpeedTrace
from dbstand.engine.stats import StopDecision, make_stop_rule, still_faster, summarize
from dbstand.errors import CaseFailed, UserError
from dbstand.loadgen.engine import DEFAULT_TIMEOUT_S, no_batch_wait, run_closed, run_open
from dbstand.loadgen.result import LoadResult
from dbstand.loadgen.series import DEFAULT_INTERVAL_S, series_record
from dbstand.loadgen.tls import TlsSettings
from dbstand.modes.pinning import DEFAULT_PLACEMENT, Placed, placed
from dbstand.probes.cpu import TreeCpu
from dbstand.profiles import session as profiles

if TYPE_CHECKING:
    from dbstand.distributed.session import ClusterSession
    from dbstand.engine.config import EngineConfig

DEFAULT_MAX_ERROR_RATE = 0.01
#: the default load: warm up until steady, runs of a minimum time, the stop rule
STEADY = "steady"
#: a seed's literal load (its request count and repetitions), to reproduce it
SEED = "seed"
LOADS = (STEADY, SEED)
#: a steady case's counted runs stop (unstable) after this many seconds: a table of
#: 26 cases stays within 15 minutes at worst
MAX_CASE_S = 25.0


@dataclass(frozen=True)
class LoadPlan:
    """How to load one URL (see the module doc for `steady` and `seed`)."""

    connections: int
    requests: int | None = None        # closed loop: a run's requests (steady: at least)
    duration_s: float | None = None    # a run's fixed length (open loop, `--duration`)
    rate: float | None = None          # open loop: requests/s in total
    keepalive: bool = True
    load: str = STEADY
    repeats: int = 5                   # seed: the runs; steady: runs before it may stop
    max_repeats: int = 30              # steady: the cap (unstable when reached)
    max_time_s: float = MAX_CASE_S     # steady: counted runs' seconds before the cap
    target_ci_pct: float = 3.0         # the 95% interval's half-width asked for
    stop_rule: str = "ci"              # engine/stats.py: "ci" or the kv study's "study"
    min_run_s: float = 1.0             # steady: a run lasts at least this long
    warmup_s: float = 2.0              # steady: warm-up at least this long ...
    max_warmup_s: float = 10.0         # ... and at most this long
    warmup_step_s: float = 1.0         # steady: the warm-up steps compared
    warmup_requests: int = 1           # seed: the warm-up is this many requests
    by_count: bool = False             # steady closed runs: a request count, not a time
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE
    #: a closed run stops once more of its requests failed (set per run: `_bounded`)
    max_failures: int | None = None
    #: a run by count stops after this many seconds (set per run: `_bounded`)
    time_cap_s: float | None = None
    #: a run by count goes on sending past its count until this many seconds have
    #: passed (set per run: `_run_plan`)
    min_duration_s: float | None = None
    interval_s: float = DEFAULT_INTERVAL_S  # time series' interval; 0: none
    pin: bool = True                   # place generator, stack and database (the table)
    placement: str = DEFAULT_PLACEMENT  # modes/pinning.py's table (or a candidate)
    tls: TlsSettings | None = None     # how https:// connections are set up
    timeout_s: float = DEFAULT_TIMEOUT_S  # a request fails past this (the engine's)

    @property
    def mode(self) -> str:
        return f"open:{self.rate:g}/s" if self.rate else f"clients:{self.connections}"

    @property
    def steady(self) -> bool:
        return self.load == STEADY


@dataclass(frozen=True)
class ServedOptions:
    """The load settings of a served workload's Options (webtech, docquery: each adds
    its own fields)."""

    #: steady (warm-up until steady, the stop rule) or seed (the study's literal load)
    load: str = STEADY
    open_duration_s: float = 5.0
    prefix: str = "dbstand_"
    max_error_rate: float = 0.01
    #: `--cluster`: each worker of this Dask cluster runs a share of the load
    cluster: str | None = None
    #: `--profile`: sample the measured trees (dbstand.profiles); a case param when set
    profile: bool = False


def check_load(load: str, repeats: int = 2, max_error_rate: float = 0.0) -> str:
    """The load settings every served workload's options share (`--load`, `--repeats`,
    `--max-error-rate`): `load` back, or one clear error."""
    if load not in LOADS:
        raise UserError(f"--load takes {' or '.join(LOADS)}, not {load!r}")
    if not 2 <= repeats <= 100:
        raise UserError("--repeats must be from 2 to 100 (a 95% interval needs two runs)")
    if not 0 <= max_error_rate < 1:
        raise UserError("--max-error-rate must be from 0 to 1")
    return load


def served_config(load: str, repeats: int, ci: float, max_repeats: int = 30,
                  max_time_s: float = MAX_CASE_S) -> EngineConfig:
    """The engine settings a served workload's CLI records and `plan_for` reads: the
    seed's load runs exactly `repeats` times, the steady one at least that many."""
    from dbstand.engine.config import EngineConfig

    check_load(load)
    low = max(2, repeats)
    return EngineConfig(revs=1, min_iterations=low, target_ci_pct=ci,
                        max_iterations=low if load == SEED else max(low, max_repeats),
                        max_time_s=max_time_s)


def plan_for(config: EngineConfig, load: str, **shape: Any) -> LoadPlan:
    """A case's plan: its shape (connections, requests, rate, keep-alive, ...) under the
    run's stop rule settings (`EngineConfig`, as kv's)."""
    return LoadPlan(load=check_load(load), repeats=config.min_iterations,
                    max_repeats=config.max_iterations, max_time_s=config.max_time_s,
                    target_ci_pct=config.target_ci_pct, stop_rule=config.stop_rule, **shape)


def open_loop_shape(best: float | None, duration_s: float) -> dict[str, Any]:
    """An open-loop case's load shape for `plan_for`: half the closed-loop maximum
    (`best`) measured for the same stack and test earlier in the run."""
    if not best:
        raise CaseFailed("no closed-loop figure to set the open-loop rate from")
    return {"rate": round(best / 2, 1), "duration_s": duration_s}


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
                        duration=plan.duration_s or (5.0 if plan.rate else plan.time_cap_s),
                        rate=plan.rate, keepalive=plan.keepalive, interval_s=plan.interval_s,
                        max_failures=plan.max_failures, min_duration_s=plan.min_duration_s)
        if shards is not None:
            shards.append(load)
        return load.result
    if plan.rate:
        return run_open(url, plan.rate, plan.duration_s or 5.0, plan.connections,
                        keepalive=plan.keepalive, interval_s=plan.interval_s, tls=plan.tls,
                        timeout_s=plan.timeout_s)
    return run_closed(url, plan.connections, requests=plan.requests,
                      duration=plan.duration_s or plan.time_cap_s, keepalive=plan.keepalive,
                      interval_s=plan.interval_s, tls=plan.tls, max_failures=plan.max_failures,
                      timeout_s=plan.timeout_s, min_duration_s=plan.min_duration_s)


def _warm_up(url: str, plan: LoadPlan, cluster: ClusterSession | None) -> dict[str, Any]:
    """Warm the stack up; returns what was done and the last step's rate (requests/s),
    which sizes the runs that follow."""
    if cluster is not None:  # every worker reaches the URL before anything is timed
        from dbstand.distributed.httpload import warm_up

        warm_up(cluster, url, max(1, plan.warmup_requests), plan.keepalive)
    if not plan.steady:
        if plan.warmup_requests and cluster is None:
            run_closed(url, 1, requests=plan.warmup_requests, keepalive=plan.keepalive,
                       interval_s=0, tls=plan.tls)
        return {"requests": plan.warmup_requests, "rate": None}
    timed = replace(plan, requests=None, duration_s=plan.warmup_step_s, interval_s=0)
    step = timed
    per_request: list[float] = []
    spent, requests = 0.0, 0
    began = time.perf_counter()
    while True:
        result = _one_run(url, step, cluster)
        _check_cap(result, step, during="in the warm-up: ")
        # by count, the steps after the first are as long at the last step's rate and
        # end answered: no request of theirs is left queued at the server when the
        # counted runs start
        step = _counted_step(plan, result.successes_per_s) or timed
        spent = time.perf_counter() - began
        requests += result.requests
        # a step of errors fails the case at once: its rate of successes is no rate of
        # the stack's, and a run sized from it (requests / rate) could last minutes
        _check_errors([result], plan, during="in the warm-up: ")
        per_request.append(1.0 / result.successes_per_s if result.successes_per_s > 0
                           else float("inf"))
        if spent >= plan.max_warmup_s:
            break
        if spent >= plan.warmup_s and not still_faster(per_request, plan.target_ci_pct):
            break
    last = result.successes_per_s
    return {"s": round(spent, 2), "steps": len(per_request), "requests": requests,
            "rates": [round(1.0 / t, 1) if t > 0 else 0.0 for t in per_request],
            "rate": last if last > 0 else None}


def _counted_step(plan: LoadPlan, rate: float) -> LoadPlan | None:
    """A `by_count` plan's warm-up step after the first: the requests of one step at
    `rate` (at least one per connection); None when not by count or with no rate."""
    if not plan.by_count or rate <= 0:
        return None
    requests = max(plan.connections, math.ceil(rate * plan.warmup_step_s))
    return _bounded(replace(plan, requests=requests, duration_s=None, interval_s=0), requests,
                    rate)


#: a timed run's bound of failures counts this many times the requests it was sized for
TIMED_HEADROOM = 2.0
#: a run by count is stopped (and its case failed) past this many times its expected
#: length: a stack that slows down tenfold within a case has no one rate to report
RUN_CAP_FACTOR = 10.0


def allowed_failures(max_error_rate: float, requests: int) -> int:
    """The most failed requests of `requests` that `_check_errors` lets pass (exact
    in the same float comparison it makes: failed / requests > max_error_rate)."""
    allowed = math.floor(max_error_rate * requests)
    while allowed + 1 <= requests and (allowed + 1) / requests <= max_error_rate:
        allowed += 1
    while allowed >= 0 and allowed / requests > max_error_rate:
        allowed -= 1
    return allowed


def _bounded(plan: LoadPlan, requests: float | None, rate: float | None = None) -> LoadPlan:
    """`plan` with its bounds for a closed run sized for `requests`. Of failures: past
    `max_error_rate` of them the run can no longer pass, and the engine stops it (a
    stalled database would otherwise hold each planned request for the engine's
    request timeout, 10 s). Of time, for a run by count at a known `rate` (the fastest
    seen): `RUN_CAP_FACTOR` times its expected length, and at least two request
    timeouts past it (`_check_cap`), so a stack that answers each request slowly, or
    fails each one only at its timeout, ends the case in seconds, not in the minutes
    its bound of failures would take at one connection. None sized (no rate known
    yet): no bound."""
    bound = allowed_failures(plan.max_error_rate, math.ceil(requests)) if requests else None
    cap = None
    if rate and plan.requests and not plan.duration_s:
        expected = plan.requests / rate
        cap = round(max(RUN_CAP_FACTOR * expected, expected + 2 * plan.timeout_s), 3)
    return replace(plan, max_failures=bound, time_cap_s=cap)


def _run_plan(plan: LoadPlan, seen: list[float]) -> LoadPlan:
    """One counted run's plan: the seed's literal count, or (steady) a closed run long
    enough for both `min_run_s` and `requests` at the rates `seen` so far (the warm-up's
    last step, the runs since). Timed: for their median, so one stalled step does not
    stretch every run. `by_count`: that many requests, every one answered, for the
    fastest of them, and more until `min_run_s` is up (a run faster than every rate
    seen, as a first run after a warm-up whose short steps carry each run's fixed
    cost, read 0.81 s of a least 1 s before): a run lasts at least `min_run_s`.
    Each closed run carries its bound of failures (`_bounded`): by count, of its
    requests; timed, of twice the requests its length holds at the fastest rate seen
    (a stack that turns faster than ever before sends more requests than that rate
    holds, and its bound must not fail a run `_check_errors` would pass)."""
    if plan.rate or plan.duration_s:  # open loop, `--duration`: their time bounds them
        return plan
    if not plan.steady:
        return _bounded(plan, plan.requests, max(seen) if seen else None)
    if plan.by_count and seen:
        requests = max(plan.requests or 0, plan.connections,
                       math.ceil(1.1 * plan.min_run_s * max(seen)))
        return _bounded(replace(plan, requests=requests, min_duration_s=plan.min_run_s),
                        requests, max(seen))
    warm_rate = statistics.median(seen) if seen else None
    need = plan.min_run_s
    if plan.requests and warm_rate:
        need = max(need, 1.1 * plan.requests / warm_rate)
    need = round(need, 3)
    return _bounded(replace(plan, requests=None, duration_s=need),
                    TIMED_HEADROOM * max(seen) * need if seen else None)


def _shares_a_cpu(placement: Placed) -> bool:
    """Whether the generator was put on a CPU the stack or the database also runs on."""
    mine = set(placement.client_cpus)
    return any(mine & set(cpus) for role, cpus in placement.cpus.items() if role != "client")


def measure(url: str, plan: LoadPlan, app_pid: int, db_pids: int | list[int] | None = None,
            alive: Any = None, cluster: ClusterSession | None = None,
            front_pid: int | None = None) -> dict[str, Any]:
    """Warm up, run the plan under its stop rule, and return the record's metrics.

    `alive`: a callable telling whether the stack still runs; a stack that died during
    the measurement fails the case rather than reporting the answers it gave before.
    `cluster`: an open `dbstand.distributed` session; each of its workers warms up and
    runs its share of the connections, and the metrics gain each worker's figures
    (the generator is then elsewhere: only the stack and the database are placed).
    `front_pid`: a TLS terminator in front of the stack (network/tls_front.py), placed
    as the table's `proxy` tier, its tree's CPU per request in the same windows as the
    stack's (`proxy_cpu_us_per_req`), then its cost per new connection (`handshake`).
    """
    pids = [db_pids] if isinstance(db_pids, int) else list(db_pids or [])
    parts: dict[str, list[int]] = {"stack": [app_pid], "database": pids}
    if front_pid is not None:
        parts["proxy"] = [front_pid]
    front = TreeCpu(front_pid) if front_pid is not None else None
    with placed(parts, plan.pin, placement=plan.placement,
                client=cluster is None) as placement, \
            (no_batch_wait() if _shares_a_cpu(placement) else contextlib.nullcontext()):
        warm = _warm_up(url, plan, cluster)
        profile = profiles.active()
        if profile is not None:  # the app's and the database's trees, for the counted runs
            profile.attach("app", app_pid)
            for pid in pids:
                profile.attach("database", pid)
        speed = SpeedTrace()
        runs, shards, decision, sent = _counted_runs(url, plan, warm.get("rate"), app_pid,
                                                     pids, alive, cluster, speed, front)
        if profile is not None:
            profile.stop()
        shakes = handshake_cost(url, plan, front) if front is not None else None
    metrics = metrics_of(runs[0], plan, runs[1], runs[2], decision, front)
    if shakes is not None:
        metrics["handshake"] = shakes
    metrics["warmup"] = warm
    trace = speed.record([r.successes_per_s for r in runs[0]], plan.target_ci_pct)
    if trace is not None:
        metrics["machine_speed"] = trace
    # every request sent in the window, the warm-up and the runs the stop rule left out
    # too: what a proxy on the path (network_axis.load_on_path) saw, per request
    metrics["requests_sent"] = int(warm.get("requests") or 0) + sent
    metrics["placement"] = placement.record()
    if cluster is not None:
        from dbstand.distributed.httpload import combine_runs

        metrics["cluster"] = combine_runs(shards)
    return metrics


def _counted_runs(url: str, plan: LoadPlan, warm_rate: float | None, app_pid: int,
                  pids: list[int], alive: Any, cluster: ClusterSession | None,
                  speed: SpeedTrace, front: TreeCpu | None = None,
                  ) -> tuple[tuple[list[LoadResult], TreeCpu, list[TreeCpu]], list[Any],
                             StopDecision, int]:
    """Runs under the stop rule: (the counted runs, the stack's and the databases' CPU),
    the cluster's shards, the decision, and the requests of every run (counted or not).
    `speed` gets a reading of the machine's own speed after each run; `front`: a TLS
    terminator's tree, read in the same windows."""
    app, dbs = TreeCpu(app_pid), [TreeCpu(pid) for pid in pids]
    trees = [*dbs, app, *([front] if front is not None else [])]
    seen = [warm_rate] if warm_rate else []
    if plan.steady:
        rule = make_stop_rule(plan.stop_rule, plan.target_ci_pct, plan.repeats,
                              plan.max_repeats)
    else:  # the seed's fixed repetitions; the interval still flags a wide case
        rule = make_stop_rule("ci", plan.target_ci_pct, plan.repeats, plan.repeats)
    runs: list[LoadResult] = []
    shards: list[Any] = []
    began = time.perf_counter()
    while True:
        for tree in trees:
            tree.begin()
        run = _run_plan(plan, seen)
        result = _one_run(url, run, cluster, shards)
        if result.successes_per_s > 0:
            seen.append(result.successes_per_s)
        for tree in trees:
            tree.end()
        speed.sample()  # the machine's own speed beside this run (engine/machine_speed.py)
        runs.append(result)
        if alive is not None and not alive():
            raise CaseFailed("the stack's server died during the measurement")
        _check_cap(result, run)
        _check_errors([result], plan)  # before a run with no answer reaches the statistics
        times = [1.0 / r.successes_per_s if r.successes_per_s > 0 else float("inf")
                 for r in runs]
        # the time cap never cuts a case below its least runs: a slow page's runs are
        # long (the seed's request count), and two of them cannot make an interval
        out_of_time = (plan.steady and len(runs) >= plan.repeats
                       and time.perf_counter() - began > plan.max_time_s)
        decision = rule.decide(times, out_of_time)
        if decision.stop:
            break
    lost = [t.lost for t in trees if t.lost]
    if lost:
        raise CaseFailed("a CPU probe lost its process: " + "; ".join(lost))
    counted = runs[-len(rule.counted(times)):]
    for tree in trees:  # CPU of the counted runs' windows only, as their requests
        tree.cpu_s = sum(tree.windows[-len(counted):])
    return (counted, app, dbs), shards, decision, sum(r.requests for r in runs)


#: each new-connection run of a TLS case's handshake cost lasts this long
HANDSHAKE_RUN_S = 1.0


def handshake_cost(url: str, plan: LoadPlan, front: TreeCpu) -> dict[str, Any]:
    """What a new TLS connection costs: closed runs of `plan.connections` clients with
    a new connection per request (as ab without -k), first with full handshakes
    (resumption off), then resumed ones; each gives handshakes per second, the set-up
    time (TCP connect and handshake, from the engine's histogram) and the terminator's
    CPU per request, which against the kept-alive figure (`proxy_cpu_us_per_req`) is
    the handshake's CPU (docs/tls.md)."""
    out: dict[str, Any] = {"run_s": HANDSHAKE_RUN_S, "connections": plan.connections}
    for kind, resume in (("full", False), ("resumed", True)):
        tls = replace(plan.tls or TlsSettings(insecure=True), resume=resume)
        tree = TreeCpu(front.pid)
        tree.begin()
        result = run_closed(url, plan.connections, duration=HANDSHAKE_RUN_S, keepalive=False,
                            interval_s=0, tls=tls)
        tree.end()
        _check_errors([result], plan)
        if tree.lost:
            raise CaseFailed(f"a CPU probe lost its process: {tree.lost}")
        setup = result.handshake_latency().summary_us() or {}
        out[kind] = {
            "handshakes": result.handshakes, "resumed": result.handshakes_resumed,
            "per_s": round(result.handshakes / result.elapsed_s, 1) if result.elapsed_s
            else 0.0,
            "setup_us": {k: setup[k] for k in ("p50", "p99", "mean") if k in setup},
            "proxy_cpu_us_per_req": round(tree.cpu_s / result.successes * 1e6, 2)
            if result.successes else None,
        }
    return out


def _check_cap(result: LoadResult, run: LoadPlan, during: str = "") -> None:
    """A run by count that its time cap (`_bounded`) ended short of its requests fails
    the case: what it measured is no steady rate of the stack's."""
    if run.time_cap_s is None or run.requests is None or result.failures_exceeded \
            or result.requests >= run.requests:
        return
    raise CaseFailed(f"{during}a run of {run.requests} requests was stopped at its time cap "
                     f"of {run.time_cap_s:g} s ({RUN_CAP_FACTOR:g} times its length at the "
                     f"fastest rate seen, at least two request timeouts): "
                     f"{result.successes} answered, {result.failed} failed, "
                     f"{_answers(result)}")


def _answers(result: LoadResult) -> str:
    """What a failed run got back, for its case's error line."""
    return f"status {dict(result.status_counts)}, socket errors {result.errors.total}"


def _check_errors(runs: list[LoadResult], plan: LoadPlan, during: str = "") -> None:
    """More failed requests than the plan allows fails the case: those runs' figures
    would count errors as service (and a run with no answer has no rate at all).
    `during` names the phase in the message (the warm-up's steps are judged too)."""
    requests = sum(r.requests for r in runs)
    failed = requests - sum(r.successes for r in runs)
    error_rate = failed / requests if requests else 1.0
    stopped = any(r.failures_exceeded for r in runs)
    if error_rate > plan.max_error_rate or stopped:
        last = runs[-1]
        # a run the engine stopped at its bound (`_bounded`) is short of its requests:
        # a timed one may show a rate under the limit, and still failed as sized
        share = (f"{error_rate:.1%} > {plan.max_error_rate:.1%}"
                 if error_rate > plan.max_error_rate else
                 f"over {plan.max_error_rate:.1%} of the requests the run was sized for")
        how = ", the run stopped there" if stopped else ""
        raise CaseFailed(f"{during}{failed} of {requests} requests failed ({share}){how}: "
                         f"{_answers(last)}")


def metrics_of(runs: list[LoadResult], plan: LoadPlan, app: TreeCpu,
               dbs: list[TreeCpu], decision: StopDecision | None = None,
               front: TreeCpu | None = None) -> dict[str, Any]:
    _check_errors(runs, plan)
    requests = sum(r.requests for r in runs)
    successes = sum(r.successes for r in runs)
    error_rate = (requests - successes) / requests if requests else 1.0
    rates = [r.successes_per_s for r in runs]
    times = [1.0 / x for x in rates if x > 0]  # per-request seconds: the CI is over means
    summary = summarize(times) if times else None
    latency = LatencyHistogram()
    for r in runs:
        latency.merge(r.latency())
    mean_rate = successes / sum(r.elapsed_s for r in runs) if runs else 0.0
    ci_pct = summary.ci95_pct if summary and len(times) > 1 else None
    wide = (ci_pct is None and len(runs) > 1) or (ci_pct or 0) > plan.target_ci_pct
    out: dict[str, Any] = {
        "ops_per_s": round(mean_rate, 1),
        "ops_per_s_runs": [round(x, 1) for x in rates],
        "ops_per_s_min": round(min(rates), 1) if rates else 0.0,
        "ops_per_s_max": round(max(rates), 1) if rates else 0.0,
        "ci95_pct": round(ci_pct, 2) if ci_pct is not None else None,
        "unstable": decision.unstable if decision is not None else wide,
        "stop_reason": decision.reason if decision is not None else None,
        "repeats": len(runs),
        "run_s": [round(r.elapsed_s, 3) for r in runs],
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
        "load": {"load": plan.load, "connections": plan.connections,
                 "requests": plan.requests, "duration_s": plan.duration_s, "rate": plan.rate,
                 "keepalive": plan.keepalive, "repeats": plan.repeats,
                 "max_repeats": plan.max_repeats if plan.steady else plan.repeats,
                 "target_ci_pct": plan.target_ci_pct, "stop_rule": plan.stop_rule,
                 "min_run_s": plan.min_run_s if plan.steady else None,
                 "by_count": plan.by_count if plan.steady and not plan.rate else None,
                 "warmup_requests": None if plan.steady else plan.warmup_requests},
    }
    if front is not None:
        out["proxy_cpu_us_per_req"] = (round(front.cpu_s / successes * 1e6, 2) if successes
                                       else None)
        out["handshakes"] = sum(r.handshakes for r in runs)
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
