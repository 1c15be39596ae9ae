"""Workload `webtech`: the study's six small pages (and TechEmpower's json and
plaintext) on server stacks in any language.

A case is (stack, test, clients) on one database. Cases come grouped by stack: the
stack is built and started once, verified by every rule of its tests (a stack that
fails is recorded as failed with the reasons, and none of its cases is measured),
measured for each test and client count, and stopped before the next stack starts.
The study's load shapes each run: 1 client sending requests one after another, and 4
keep-alive clients; by default (`steady`, http_load.py) each case warms up until its
throughput is steady, then repeats runs of at least a second and at least the
study's 1,000 requests per client until the 95% interval of the mean is within 3%
(or a cap flags it unstable). `--load seed` runs the study literally: one warm-up
request, 3 runs of exactly 1,000 requests per client. Generator, stack and database
run where the placement table puts them (modes/pinning.py). `open` cases load at
half the closed-loop maximum measured for the same stack and test in this run, with
coordinated-omission-corrected latency.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

from dbstand.engine.config import EngineConfig
from dbstand.errors import CaseFailed, UserError
from dbstand.modes.pinning import cpus_for
from dbstand.probes.locate import server_pid
from dbstand.profiles import launch_env
from dbstand.stacks.build import ensure_built
from dbstand.stacks.launcher import StackHandle, running_stack
from dbstand.stacks.manifest import Manifest, get_manifest
from dbstand.targets.url import TargetURL
from dbstand.workloads.base import Case, CaseOutcome, Progress, Workload, check_known
from dbstand.workloads.http_load import STEADY, LoadCluster, measure, open_loop_shape, plan_for
from dbstand.workloads.network_axis import load_on_path
from dbstand.workloads.served import failures
from dbstand.workloads.webtech.options import WebtechOptions
from dbstand.workloads.webtech.rules import STUDY_TESTS, TESTS
from dbstand.workloads.webtech.verify import SERVED

WORKLOAD = "webtech"
DEFAULT_CLIENTS = (1, 4)
OPEN = "open"
MAX_DEFAULT_WORKERS = 256


class WebtechCase(Case):
    def label(self) -> str:
        return f"webtech {self.stack} /{self.op} [{self.mode}]"


def check_request(stacks: list[str], tests: list[str], clients: list[int],
                  options: WebtechOptions) -> None:
    """Every axis value known and in range, and at least one case: before a database
    is started for the run."""
    options.check()
    check_known(tests, TESTS, "webtech test")
    for n in clients:
        if not 1 <= n <= 10_000:
            raise UserError(f"--clients must be from 1 to 10,000 (got {n})")
    if not any(t in get_manifest(s, WORKLOAD).tests for s in stacks for t in tests):
        raise UserError("no case: none of the stacks implements the tests asked for")


def build_cases(target: TargetURL, stacks: list[str], tests: list[str],
                clients: list[int], open_loop: bool, options: WebtechOptions) -> list[Case]:
    """stacks x clients x tests (each stack only the tests it implements), on the
    database the db and cache tests read."""
    check_request(stacks, tests, clients, options)
    cases: list[Case] = []
    params = options.params()
    for stack in dict.fromkeys(stacks):
        manifest = get_manifest(stack, WORKLOAD)
        mine = [t for t in tests if t in manifest.tests]
        for n in dict.fromkeys(clients):
            cases += [WebtechCase(WORKLOAD, stack, target, f"clients:{n}", test,
                                  {**params, "clients": n}) for test in mine]
        if open_loop:
            cases += [WebtechCase(WORKLOAD, stack, target, OPEN, test,
                                  {**params, "clients": max(clients),
                                   "duration_s": options.open_duration_s}) for test in mine]
    return cases


class WebtechWorkload(Workload):
    name = WORKLOAD
    description = "server technologies on the same small pages (the 2002 study, seed 001)"
    operations = TESTS

    def __init__(self, options: WebtechOptions | None = None):
        self.options = options or WebtechOptions()
        self.cluster = LoadCluster(self.options.cluster)
        #: the database the db and cache tests read (the cases' target)
        self.target: TargetURL | None = None
        self._exit = contextlib.ExitStack()
        self._running: tuple[str, StackHandle] | None = None
        self._stack_exit: contextlib.ExitStack | None = None
        self._failed: dict[str, str] = {}
        self._best: dict[tuple[str, str], float] = {}
        self._db_pid: int | None = None
        self._clients: set[tuple[str, int]] = set()

    # --- preflight: everything a user can get wrong, before any results file --------
    def preflight(self, cases: list[Case]) -> None:
        self._clients = {(c.stack, int(c.params["clients"])) for c in cases}
        targets = {c.target.secret(): c.target for c in cases}
        if len(targets) != 1:
            raise UserError("a webtech run reads one database (its cases name "
                            f"{len(targets)})")
        self._use_target(next(iter(targets.values())), self.options.prefix)
        for stack in dict.fromkeys(c.stack for c in cases):
            manifest = get_manifest(stack, WORKLOAD)
            try:
                ensure_built(manifest)
            except UserError as exc:  # not installable here: recorded, the others run
                self._failed[stack] = f"unavailable: {exc}"
        self.cluster.open()

    def _use_target(self, target: TargetURL, prefix: str) -> None:
        """The database the stacks read (a managed server the CLI started, or given)."""
        self.target = target
        SERVED.prepare(target, prefix)
        self._db_pid, _ = server_pid(target)

    # --- one case -------------------------------------------------------------------
    def _stack(self, case: Case) -> StackHandle:
        # a case on a --db-rtt path reaches the database through its own proxy: the
        # stack is started for it (and stopped before the next case's)
        routed = case.target.route is not None
        if self._running is not None and self._running[0] == case.stack and not routed:
            return self._running[1]
        self._stop_stack()
        manifest = get_manifest(case.stack, WORKLOAD)
        prefix = case.params["prefix"]
        needs_db = bool({"db", "cache"} & set(manifest.tests))
        if needs_db and self.target is None:
            raise CaseFailed("no database target for the db and cache tests")
        target = case.target if routed else self.target
        stack_exit = contextlib.ExitStack()
        handle = stack_exit.enter_context(running_stack(
            manifest, target=target if needs_db else None, prefix=prefix,
            workers=case.params["workers"] or self._default_workers(case.stack),
            static_dir=SERVED.static_dir, extra_env=launch_env(self.options.profile)))
        self._stack_exit = stack_exit
        self._running = None if routed else (case.stack, handle)
        checks = SERVED.verify(handle, target, prefix)
        problem = failures(checks)
        if problem:
            self._failed[case.stack] = f"verification failed: {problem}"
            self._stop_stack()
            raise CaseFailed(self._failed[case.stack])
        return handle

    def _default_workers(self, stack: str) -> int:
        """The CPUs the placement table gives a stack, raised to the most clients any
        case of the stack asks for: a prefork server (Apache, Starman) holds one process
        per kept-alive connection, and fewer would leave clients waiting for a keep-alive
        timeout. The limit row's static servers follow the same rule."""
        clients = max((n for s, n in self._clients if s == stack), default=1)
        cpus = len(cpus_for("stack") or []) or os.cpu_count() or 1
        return min(max(cpus, clients), MAX_DEFAULT_WORKERS)

    def _stop_stack(self) -> None:
        if self._stack_exit is not None:
            stack_exit, self._stack_exit, self._running = self._stack_exit, None, None
            stack_exit.close()

    def run_case(self, case: Case, config: EngineConfig, progress: Progress) -> CaseOutcome:
        if case.stack in self._failed:
            raise CaseFailed(self._failed[case.stack])
        handle = self._stack(case)
        manifest = handle.manifest
        p = case.params
        url = f"{handle.base_url}/{case.op}"
        key = (case.stack, case.op)
        shape: dict[str, Any] = {"keepalive": p["keepalive"],
                                 "max_error_rate": p["max_error_rate"]}
        if case.mode == OPEN:
            shape.update(connections=p["clients"],
                         **open_loop_shape(self._best.get(key), p["duration_s"]))
        else:
            n = p["clients"]
            shape.update(connections=n, requests=None if p["duration_s"] else p["requests"] * n,
                         duration_s=p["duration_s"])
        plan = plan_for(config, p.get("load", STEADY), **shape)
        progress(0, plan.max_repeats)
        uses_db = case.op in ("db", "cache")
        metrics = load_on_path(case, url, lambda load_url: measure(
            load_url, plan, handle.pid, self._db_pid if uses_db else None,
            alive=handle.alive, cluster=self.cluster.session), self._stop_stack)
        progress(metrics["repeats"], metrics["repeats"])
        if case.mode != OPEN:
            self._best[key] = max(self._best.get(key, 0.0), metrics["ops_per_s"])
        metrics.update({"test": case.op, "clients": p["clients"],
                        "study_test": case.op in STUDY_TESTS, "stack_labels": manifest.labels,
                        "stack_description": manifest.description})
        return CaseOutcome(metrics=metrics, server=self._server_facts(manifest),
                           packages=self.package_versions(case))

    def _server_facts(self, manifest: Manifest) -> dict[str, Any]:
        facts: dict[str, Any] = {"app_server": manifest.web_server, "stack": manifest.name}
        if self.target is not None:
            facts["database"] = self.target.redacted()
        return facts

    def package_versions(self, case: Case) -> dict[str, str]:
        manifest = get_manifest(case.stack, WORKLOAD)
        return {"debian": " ".join(manifest.debian), "pip": " ".join(manifest.pip)}

    def close(self) -> None:
        try:
            self._stop_stack()
        finally:
            self._exit.close()
            self.cluster.close()
