"""Workload `docquery`: one endpoint that reads a page of 30 documents, behind a
single-threaded Tornado server, with a blocking driver, an async driver and an ODM
(specs/docquery.md, seed 003), on MongoDB-wire servers and on PostgreSQL.

A case is (stack, target, test, connection mode). The study's tests: test 1 is
10,000 requests at concurrency 100, test 2 is 100 requests at concurrency 10, each
with a new connection per request as ApacheBench sends them. Those counts shape a
run (its connections and its least number of requests); by default (`steady`,
http_load.py) each case warms up until steady and repeats runs of at least a second
until the 95% interval is within 3%, each run a number of requests that ends when
every one is answered (ab's `-n`, not a timed run); `--load seed` runs them literally
(3 runs of exactly that many requests). dbstand repeats them on kept-alive
connections and, with --open-loop, at half the closed-loop maximum with
coordinated-omission-corrected latency. Cases come grouped by (stack, target): the
stack starts once, its answer is verified (30 documents, the same for every stack
on the same data), then measured; CPU is read over the stack's process tree and the
database server's (FerretDB, and PostgreSQL behind it when that is its backend).
"""

from __future__ import annotations

import contextlib
from typing import Any

from dbstand.engine.config import EngineConfig
from dbstand.errors import CaseFailed, UserError
from dbstand.probes.locate import server_pid
from dbstand.profiles import launch_env
from dbstand.stacks.build import ensure_built
from dbstand.stacks.launcher import StackHandle, running_stack
from dbstand.stacks.manifest import get_manifest
from dbstand.targets.url import TargetURL
from dbstand.workloads.base import Case, CaseOutcome, Progress, Workload, check_choice, check_known
from dbstand.workloads.docquery.options import DocqueryOptions
from dbstand.workloads.docquery.verify import PATH, served
from dbstand.workloads.http_load import (
    STEADY,
    LoadCluster,
    LoadPlan,
    measure,
    open_loop_shape,
    plan_for,
)
from dbstand.workloads.network_axis import load_on_path
from dbstand.workloads.served import ServedWorkload, failures

WORKLOAD = "docquery"
#: the study's two ApacheBench runs: name -> (requests, concurrency)
TESTS = {"test1": (10_000, 100), "test2": (100, 10)}
CONNECTIONS = ("new", "keepalive")
OPEN = "open"


class DocqueryCase(Case):
    def label(self) -> str:
        return f"docquery {self.stack} on {self.params['server']} {self.op} [{self.mode}]"


def build_cases(targets: list[tuple[TargetURL, str]], stacks: list[str], tests: list[str],
                connections: list[str], open_loop: bool,
                options: DocqueryOptions) -> list[Case]:
    """(stack x target it can read) x tests x connection modes; `targets` pairs a URL
    with the server's name as results show it ("FerretDB 1.24.0, SQLite backend")."""
    options.check()
    check_known(tests, TESTS, "docquery test")
    check_choice(connections, CONNECTIONS, "--connections")
    params = options.params()
    cases: list[Case] = []
    for stack in dict.fromkeys(stacks):
        manifest = get_manifest(stack, WORKLOAD)
        mine = [(url, name) for url, name in targets if url.kind in manifest.databases]
        if not mine:
            raise UserError(f"stack {stack!r} reads {', '.join(manifest.databases)}: no "
                            "such target in this run")
        for url, name in mine:
            for test in tests:
                requests, clients = TESTS[test]
                for mode in connections:
                    cases.append(DocqueryCase(WORKLOAD, stack, url, mode, test, {
                        **params, "server": name, "requests": requests, "clients": clients,
                        "keepalive": mode == "keepalive"}))
            if open_loop:
                requests, clients = TESTS[tests[0]]
                cases.append(DocqueryCase(WORKLOAD, stack, url, OPEN, tests[0], {
                    **params, "server": name, "requests": requests, "clients": clients,
                    "keepalive": True, "duration_s": options.open_duration_s}))
    return cases


class DocqueryWorkload(Workload):
    name = WORKLOAD
    description = "sync vs async driver vs ODM behind one Tornado endpoint (seed 003)"
    operations = tuple(TESTS)

    def __init__(self, options: DocqueryOptions | None = None):
        self.options = options or DocqueryOptions()
        self.cluster = LoadCluster(self.options.cluster)
        self._running: tuple[tuple[str, str], StackHandle] | None = None
        self._stack_exit: contextlib.ExitStack | None = None
        self._failed: dict[tuple[str, str], str] = {}
        self._best: dict[tuple[str, str], float] = {}
        self._db_pids: dict[str, list[int]] = {}
        #: (database, size, seed, prefix) whose set this run has loaded or checked
        self._prepared: set[tuple[str, int, int, str]] = set()
        #: ... or failed to: why, for every later case on that set (`_prepare`)
        self._unprepared: dict[tuple[str, int, int, str], str] = {}

    def preflight(self, cases: list[Case]) -> None:
        for stack in dict.fromkeys(c.stack for c in cases):
            ensure_built(get_manifest(stack, WORKLOAD))
        self.cluster.open()

    def use_targets(self, db_pids: dict[str, list[int]]) -> None:
        """The database server processes behind each target URL (redacted), whose CPU
        counts as the database's (FerretDB and its PostgreSQL backend)."""
        self._db_pids = db_pids

    def _stack(self, case: Case) -> StackHandle:
        key = _key(case)
        if self._running is not None and self._running[0] == key:
            return self._running[1]
        self._stop_stack()
        p = case.params
        spec = served(p["size"], p["seed"])
        self._prepare(spec, case)
        stack_exit = contextlib.ExitStack()
        handle = stack_exit.enter_context(running_stack(
            get_manifest(case.stack, WORKLOAD), target=case.target, prefix=p["prefix"],
            workers=1, extra_env=launch_env(bool(p.get("profile")))))
        self._stack_exit, self._running = stack_exit, (key, handle)
        problem = failures(spec.verify(handle, case.target, p["prefix"]))
        if problem:
            self._failed[key] = f"verification failed: {problem}"
            self._stop_stack()
            raise CaseFailed(self._failed[key])
        return handle

    def _prepare(self, spec: ServedWorkload, case: Case) -> None:
        """Load the set, or check the one there, once per database in a run: the check
        counts every document (a full scan on FerretDB, data.py), and nothing but this
        run writes the collection it owns while the run lasts. A set that failed to
        load or check fails every later case on it at once, with the same reason: a
        stalled FerretDB would otherwise cost each of them the read limit again."""
        p = case.params
        target = case.target.direct()  # loaded directly, not delayed
        key = (target.redacted(), p["size"], p["seed"], p["prefix"])
        if key in self._unprepared:
            raise CaseFailed(f"the posts set failed to load or check earlier in this run: "
                             f"{self._unprepared[key]}")
        if key not in self._prepared:
            try:
                spec.prepare(target, p["prefix"])
            except Exception as exc:  # remembered, then recorded as the run records it
                self._unprepared[key] = _reason(exc)
                raise
            self._prepared.add(key)

    def _stop_stack(self) -> None:
        if self._stack_exit is not None:
            stack_exit, self._stack_exit, self._running = self._stack_exit, None, None
            stack_exit.close()

    def run_case(self, case: Case, config: EngineConfig, progress: Progress) -> CaseOutcome:
        key = _key(case)
        if key in self._failed:
            raise CaseFailed(self._failed[key])
        handle = self._stack(case)
        p = case.params
        shape: dict[str, Any] = {"connections": p["clients"],
                                 "max_error_rate": p["max_error_rate"]}
        if case.mode == OPEN:
            shape.update(open_loop_shape(self._best.get(key), p["duration_s"]))
        else:  # the study's shape: a new connection per request unless keep-alive asked;
            # runs of a request count, every one answered, as ab's (http_load.py: a
            # blocking stack queues 100 connections for longer than a timed run's end)
            shape.update(requests=p["requests"], keepalive=p["keepalive"], by_count=True)
        plan = plan_for(config, p.get("load", STEADY), **shape)
        progress(0, plan.max_repeats)
        pids = self._db_pids.get(case.target.direct().redacted())
        if pids is None:
            pid, _ = server_pid(case.target)
            pids = [pid] if pid else []
        # on a --db-rtt path, the Tornado -> database hop goes through the proxy
        metrics = load_on_path(case, handle.base_url + PATH, lambda load_url: measure(
            load_url, plan, handle.pid, pids, alive=handle.alive,
            cluster=self.cluster.session), self._stop_stack)
        progress(metrics["repeats"], metrics["repeats"])
        if case.mode != OPEN:
            self._best[key] = max(self._best.get(key, 0.0), metrics["ops_per_s"])
        manifest = handle.manifest
        metrics.update({"test": case.op, "server": p["server"], "clients": p["clients"],
                        "keepalive": p["keepalive"], "stack_labels": manifest.labels,
                        "stack_description": manifest.description,
                        "ab": ab_table(metrics, plan)})
        return CaseOutcome(metrics=metrics, server={"server": p["server"],
                                                    "app_server": "tornado"},
                           packages={"pip": " ".join(manifest.pip)})

    def package_versions(self, case: Case) -> dict[str, str]:
        return {"pip": " ".join(get_manifest(case.stack, WORKLOAD).pip)}

    def close(self) -> None:
        try:
            self._stop_stack()
        finally:
            self.cluster.close()


def _reason(exc: Exception) -> str:
    """One line for why a set failed to load: dbstand's own errors say it themselves,
    a driver's is named (as the run's record of it names it)."""
    own = isinstance(exc, (CaseFailed, UserError))
    text = " ".join(str(exc).split())
    return text if own else f"{type(exc).__name__}: {text}"


def _key(case: Case) -> tuple[str, str]:
    """A case's stack and database (its --db-rtt path too): what a running stack, a
    failure and a closed-loop maximum belong to."""
    where = case.target.direct().redacted()
    label = case.params.get("db_rtt")
    return case.stack, where if label is None else f"{where} ({label})"


def ab_table(metrics: dict[str, Any], plan: LoadPlan) -> dict[str, Any]:
    """ApacheBench's summary of the runs: total time, requests/s, time per request
    (mean, and across all concurrent requests), and its percentile table (ms)."""
    from dbstand.engine.histogram import LatencyHistogram

    rate = metrics["ops_per_s"] or 0.0
    out: dict[str, Any] = {
        "requests_per_s": rate,
        # the time ab would take for the study's request count at this rate
        "total_time_s": round(plan.requests / rate, 3) if rate and plan.requests else None,
        "time_per_request_ms": round(plan.connections / rate * 1e3, 3) if rate else None,
        "time_per_request_all_ms": round(1e3 / rate, 3) if rate else None,
    }
    if metrics.get("latency_hdr"):
        hist = LatencyHistogram.decode(metrics["latency_hdr"])
        out["percentiles_ms"] = {str(p): round(hist.percentile(p) / 1e6, 2)
                                 for p in (50, 66, 75, 80, 90, 95, 98, 99, 100)}
    return out
