"""Workload `parking`: the ORM study's OLTP service over HTTP (specs/parking.md, seed 000).

One case is (stack, logging, users) on one target. The service is started for the
case; the conformance suite runs first (one exclusive pass: a stack that fails it is
recorded as failed and never measured). Then the engine measures batches: one
iteration is `passes` suite passes per virtual user (revs = passes x users), each
user a thread with its own keep-alive connection; `make_args` re-seeds the places
between batches, untimed (every pass takes 4 of park 1333's places for good).
Around each counted batch: CPU of the app server's process tree, of the database
server's, of this client; statements by kind; log bytes and lines.
"""

from __future__ import annotations

import dataclasses
import os
import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

from dbstand.engine import Benchmark, CaseMeasurement, EngineConfig, run_benchmark
from dbstand.engine.executor import Executor, SyncExecutor
from dbstand.engine.histogram import LatencyHistogram
from dbstand.errors import CaseFailed, UserError
from dbstand.modes.executors import ThreadExecutor
from dbstand.probes.cpu import TreeCpu
from dbstand.probes.locate import server_pid
from dbstand.probes.statements import StatementCounter, open_counter
from dbstand.targets.managed import record_for
from dbstand.targets.url import TargetURL
from dbstand.workloads.base import Case, CaseOutcome, Progress, Workload
from dbstand.workloads.parking.suite import (
    CALLS_PER_PASS,
    PROFILE,
    ParkingClient,
    run_pass,
    totals_mismatch,
)
from dbstand.workloads.parking.suite.checks import SuiteFailure

WORKLOAD = "parking"
OP = "pass"
LOGGING = ("on", "off")
DEFAULT_PASSES = 20          # the study: batches of 20 passes
DEFAULT_BATCHES = 5          # ... 5 batches, 100 passes per configuration
#: the study's table 2 (SQLAlchemy and YB.ORM builds), statements per pass
STUDY_STATEMENTS = {"select": "78-106", "select_for_update": "88-89", "update": "42-45",
                    "insert": "27", "delete": "0"}


#: packages recorded with a case, beside the drivers the service may use


def parking_stacks() -> tuple[str, ...]:
    """The service implementations: every server stack whose manifest implements it."""
    from dbstand.workloads.parking.app import parking_stacks as from_manifests

    return from_manifests()


class ParkingCase(Case):
    def label(self) -> str:
        return (f"parking {self.stack} logging {self.params['logging']} "
                f"users {self.params['users']}")


@dataclass(frozen=True)
class ParkingOptions:
    passes: int = DEFAULT_PASSES
    batches: int = DEFAULT_BATCHES
    prefix: str = "dbstand_"

    def check(self) -> None:
        if self.passes < 1:
            raise UserError("--passes must be at least 1")
        if self.batches < 2:
            raise UserError("--batches must be at least 2 (a spread needs two)")


def build_cases(targets: list[TargetURL], stacks: list[str], logging: list[str],
                users: list[int], options: ParkingOptions) -> list[Case]:
    """targets x stacks x logging x users, or one UserError for a bad axis value."""
    options.check()
    known = parking_stacks()
    for stack in stacks:
        if stack not in known:
            raise UserError(f"unknown parking stack {stack!r} (known: {', '.join(known)})")
    for value in logging:
        if value not in LOGGING:
            raise UserError(f"--logging takes on and/or off, not {value!r}")
    for n in users:
        if n < 1:
            raise UserError(f"--users must be at least 1 (got {n})")
    for target in targets:
        if target.kind not in ("sqlite", "postgresql", "mysql"):
            raise UserError(f"the parking service runs on SQLite, PostgreSQL or MariaDB/MySQL,"
                            f" not {target.kind}")
        if target.is_memory:
            raise UserError("the parking service runs in its own process: give a SQLite "
                            "file (sqlite:///path.db), not an in-memory database")
    params = dataclasses.asdict(options)
    return [ParkingCase(WORKLOAD, stack, target, "sync" if n == 1 else f"threads:{n}", OP,
                        {**params, "logging": log, "users": n})
            for target in targets for stack in dict.fromkeys(stacks)
            for log in dict.fromkeys(logging) for n in dict.fromkeys(users)]


def _check_reachable(target: TargetURL, prefix: str) -> None:
    """Connect once with dbstand's own driver: a clear TargetError before any result."""
    if target.kind == "sqlite":
        return
    from dbstand.workloads.kv.admin import admin_client

    admin_client(target, prefix).close()


class ServiceProbes:
    """CPU of the app server, the database server and this client, statements by kind
    and log growth, summed over the counted batches (the engine's Probe protocol)."""

    def __init__(self, service: Any, target: TargetURL, prefix: str):
        self.service = service
        self.db_pid, self.db_pid_source = server_pid(target)
        self.app = TreeCpu(service.pid)
        self.db = TreeCpu(self.db_pid) if self.db_pid else None
        self.client = TreeCpu(os.getpid(), exclude=[p for p in (service.pid, self.db_pid) if p])
        self.statements: StatementCounter | None = None
        self.statements_source = ("unavailable: SQLite runs inside the app server, where "
                                  "dbstand cannot count its statements")
        self.server_facts: dict[str, Any] = {}
        if target.kind != "sqlite":
            try:
                self.statements = open_counter(target, prefix,
                                               managed=record_for(target) is not None)
                self.statements_source = self.statements.source
                self.server_facts = self.statements.client.server_facts()  # type: ignore[attr-defined]
            except LookupError as exc:
                self.statements_source = f"unavailable: {exc}"
        self.log_bytes = self.log_lines = 0
        self._log0 = (0, 0)
        self.windows = 0

    def begin(self) -> None:
        if self.statements is not None:
            self.statements.begin()
        self._log0 = self.service.log_size()
        for tree in (self.db, self.app, self.client):
            if tree is not None:
                tree.begin()

    def end(self) -> None:
        for tree in (self.client, self.app, self.db):
            if tree is not None:
                tree.end()
        size, lines = self.service.log_size()
        self.log_bytes += size - self._log0[0]
        self.log_lines += lines - self._log0[1]
        if self.statements is not None:
            self.statements.end()
        self.windows += 1

    def result(self, passes: int) -> dict[str, Any]:
        """Per-pass figures for the record (passes: counted passes in all windows)."""
        def ms(tree: TreeCpu | None) -> float | None:
            return None if tree is None else round(tree.cpu_s / passes * 1e3, 3)

        out: dict[str, Any] = {
            "app_cpu_ms_per_pass": ms(self.app), "db_cpu_ms_per_pass": ms(self.db),
            "client_cpu_ms_per_pass": ms(self.client),
            "log_bytes_per_pass": round(self.log_bytes / passes, 1),
            "log_lines_per_pass": round(self.log_lines / passes, 2),
            "statements_per_pass": None, "statements_source": self.statements_source,
            "db_pid_source": self.db_pid_source if self.db is not None else
            ("SQLite runs inside the app server: its CPU is app CPU"
             if self.db_pid is None and "embedded" in self.db_pid_source
             else self.db_pid_source),
        }
        if self.statements is not None:
            out["statements_per_pass"] = self.statements.per_op(passes)
            out["statements_total"] = self.statements.total()
            if self.statements.note:
                out["statements_note"] = self.statements.note
        return out

    def close(self) -> None:
        if self.statements is not None:
            self.statements.close()


class PassBenchmark:
    """Iteration = `passes` suite passes per user; re-seed before each, untimed."""

    def __init__(self, service: Any, users: int, passes: int, warmup: int):
        self.service, self.users, self.passes, self.warmup = service, users, passes, warmup
        self.clients = [ParkingClient(service.base_url) for _ in range(users)]
        self.functions: dict[str, LatencyHistogram] = {f: LatencyHistogram() for f in PROFILE}
        self.before: dict[str, Any] = {}

    def _op(self, client: ParkingClient, rng: random.Random, _arg: object) -> None:
        try:
            run_pass(client, rng, exclusive=self.users == 1)
        except SuiteFailure as exc:
            raise CaseFailed(f"a measured pass failed the suite: {exc}") from None

    def executor(self) -> Executor:
        ops = [partial(self._op, c, random.Random()) for c in self.clients]
        if self.users == 1:
            return SyncExecutor(ops[0], [c.close for c in self.clients])
        return ThreadExecutor(ops, [c.close for c in self.clients])

    def make_args(self, i: int) -> list[None]:
        if i >= 0:  # i < 0: the engine's calibration, which never calls the op
            self.service.reseed()
            self.before = self.service.totals()
            for client in self.clients:
                client.take_latencies()
        return [None] * (self.passes * self.users)

    def after_iteration(self, i: int, args: Any) -> None:
        wrong = totals_mismatch(self.before, self.service.totals(), len(args))
        if wrong:  # a lost update on places or balances, or a stray write
            raise CaseFailed("totals after a batch are not what its passes imply: " + ", ".join(
                f"{k} expected {exp} got {got}" for k, (exp, got) in wrong.items()))
        for client in self.clients:
            taken = client.take_latencies()
            if i >= self.warmup:  # warm-up batches are not counted
                for function, values in taken.items():
                    self.functions.setdefault(function, LatencyHistogram()).record_many(values)

    def benchmark(self) -> Benchmark:
        return Benchmark("parking pass", lambda _arg: None, self.make_args,
                         self.after_iteration)

    def function_latencies(self) -> dict[str, dict[str, Any]]:
        out = {}
        for function, hist in self.functions.items():
            summary = hist.summary_us()
            if summary is not None:
                out[function] = {"calls": hist.count, **{f"{k}_us": v
                                                         for k, v in summary.items()},
                                 "hdr": hist.encode()}
        return out


def conformance(base_url: str) -> dict[str, Any]:
    """One exclusive pass, every scenario run: CaseFailed names the failures."""
    client = ParkingClient(base_url)
    try:
        report = run_pass(client, exclusive=True, keep_going=True)
    except SuiteFailure as exc:  # the call profile of a complete pass
        raise CaseFailed(f"conformance suite failed: {exc}") from None
    finally:
        client.close()
    if not report.ok:
        raise CaseFailed("conformance suite failed, not measured: " +
                         "; ".join(str(f) for f in report.failures))
    return {"passed": True, "calls": sum(report.calls.values()),
            "scenarios": [s.name for s in report.scenarios]}


@contextmanager
def _service(case: Case) -> Iterator[Any]:
    from dbstand.workloads.parking.app import running_service

    with running_service(case.stack, case.target, logging=case.params["logging"] == "on",
                         threads=case.params["users"],
                         prefix=case.params.get("prefix", "dbstand_")) as service:
        yield service


def case_config(config: EngineConfig, case: Case) -> EngineConfig:
    """Fixed batches like the study (the CI still decides the unstable flag)."""
    batches = case.params["batches"]
    return dataclasses.replace(config, revs=case.params["passes"] * case.params["users"],
                               min_iterations=batches, max_iterations=batches,
                               max_time_s=1e9, latency="all")


def parking_metrics(m: CaseMeasurement, case: Case) -> dict[str, Any]:
    mean = m.summary.mean
    return {"passes_per_s": round(m.revs / mean, 3), "calls_per_s": round(
        m.revs * CALLS_PER_PASS / mean, 1), "ms_per_pass": round(mean / m.revs * 1e3, 3)}


def _ensure_built(stack: str) -> None:
    from dbstand.stacks.build import ensure_built
    from dbstand.stacks.manifest import get_manifest

    ensure_built(get_manifest(stack))


class ParkingWorkload(Workload):
    name = WORKLOAD
    description = "ORM overhead on an OLTP HTTP service (the parking suite, 68 calls a pass)"
    operations = (OP,)

    def preflight(self, cases: list[Case]) -> None:
        known = parking_stacks()
        seen: set[str] = set()
        for case in cases:
            if case.stack not in known:
                raise UserError(f"unknown parking stack {case.stack!r} "
                                f"(known: {', '.join(known)})")
            ParkingOptions(case.params["passes"], case.params["batches"]).check()
            _ensure_built(case.stack)  # installed and built, before any result
            key = case.target.secret()
            if key not in seen:
                seen.add(key)
                _check_reachable(case.target, case.params.get("prefix", "dbstand_"))

    def run_case(self, case: Case, config: EngineConfig, progress: Progress) -> CaseOutcome:
        cfg = case_config(config, case)
        users, passes = case.params["users"], case.params["passes"]
        with _service(case) as service:
            verdict = conformance(service.base_url)
            bench = PassBenchmark(service, users, passes, cfg.warmup)
            probes = ServiceProbes(service, case.target, case.params.get("prefix", "dbstand_"))
            try:
                measurement = run_benchmark(bench.benchmark(), cfg, progress,
                                            executor=bench.executor(), probe=probes)
            finally:
                probes.close()
                for client in bench.clients:
                    client.close()
            counted = probes.windows * cfg.revs
            metrics: dict[str, Any] = {
                "measurement": measurement, "passes": passes, "batches": case.params["batches"],
                "users": users, "logging": case.params["logging"],
                "calls_per_pass": CALLS_PER_PASS, "conformance": verdict,
                "functions": bench.function_latencies(),
                "study_statements_per_pass": STUDY_STATEMENTS,
                "reseed": "places re-seeded before every batch (untimed)",
                "consistency": "after every batch the service's totals (places, rows, "
                               "balances, receipts, consumes, transfers) equal what its "
                               "passes imply (no lost update)",
                "case_engine": cfg.as_dict(),
                **parking_metrics(measurement, case), **probes.result(counted),
            }
            server = {"kind": case.target.kind, **probes.server_facts,
                      "app_server": case.stack}
        return CaseOutcome(metrics=metrics, server=server, packages=_versions(case.stack))

    def package_versions(self, case: Case) -> dict[str, str]:
        return _versions(case.stack)


def _versions(stack: str) -> dict[str, str]:
    """Versions of the Python packages a stack run by dbstand's interpreter imports."""
    import importlib.metadata

    from dbstand.stacks.manifest import get_manifest

    out = {}
    for module in get_manifest(stack).modules:
        try:
            out[module] = importlib.metadata.version(module)
        except importlib.metadata.PackageNotFoundError:
            out[module] = "missing"
    return out
